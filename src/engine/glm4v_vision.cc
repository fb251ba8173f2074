#include "engine/glm4v_vision.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/qwen_resize.h"

namespace headroom::engine {

namespace {

// glm4_1v.py: _MAX_FRAMES_PER_VIDEO, and the pixel budget _get_vision_info defaults to
// (28 × 28 × 2 × 30000), which the video side keeps hard-coded.
constexpr std::int64_t k_max_frames = 600;
constexpr double k_vllm_video_pixels = 28.0 * 28 * 2 * 30000;
// The image processor's size.longest_edge where preprocessor_config.json is not read: 9,633,792
// (28 × 28 × 2 × 6144) in the GLM-4.6V, GLM-4.6V-Flash, GLM-OCR and AutoGLM-Phone releases; the
// video processor's default longest_edge is k_vllm_video_pixels (GLM-4.1V's and GLM-4.6V's
// video_preprocessor_config.json; GLM-4.6V-Flash's writes 100,352,000, read where the file is).
constexpr double k_image_pixels = 28.0 * 28 * 2 * 6144;
constexpr double k_min_pixels = 112.0 * 112;

struct Geometry {
  double patch = 14, merge = 2, temporal = 2;
  double factor() const { return patch * merge; }
};

// transformers glm4v smart_resize for `frames` frames: the volume compares the frames rounded to
// the temporal patch (Python's round), the scale uses the frames as given.
ResizedSides glm_resize(const Geometry& g, double frames, double side, double max_pixels) {
  const double rounded = std::nearbyint(frames / g.temporal) * g.temporal;
  return qwen_smart_resize(side, side, g.factor(), k_min_pixels, max_pixels, frames, rounded);
}

std::int64_t patches_of(const Geometry& g, double grid_t, const ResizedSides& r) {
  return static_cast<std::int64_t>(grid_t) * static_cast<std::int64_t>(r.height / g.patch) *
         static_cast<std::int64_t>(r.width / g.patch);
}

// vLLM's own count (Glm4vProcessingInfo._get_vision_info): frames padded to the temporal patch,
// the resize at max(frames, temporal).
std::int64_t vllm_tokens(const Geometry& g, double side, std::int64_t frames, double max_pixels) {
  const double f = static_cast<double>(frames);
  const ResizedSides r = glm_resize(g, std::max(f, g.temporal), side, max_pixels);
  const double grid_t = std::max(1.0, std::floor((f + std::fmod(f, g.temporal)) / g.temporal));
  return patches_of(g, grid_t, r) / static_cast<std::int64_t>(g.merge * g.merge);
}

// _get_max_video_frames: the frames before the first count above max_tokens (or of 0), capped at
// 600 by get_num_frames_with_most_features; at least one, and the dummy builder makes it two.
std::int64_t dummy_frames(const Geometry& g, double side, std::int64_t max_tokens) {
  std::int64_t n = 0;
  while (n < k_max_frames) {
    const std::int64_t next = vllm_tokens(g, side, n + 1, k_vllm_video_pixels);
    if (next > max_tokens || next == 0) break;
    ++n;
  }
  return std::max<std::int64_t>(n, 2);
}

// From #48729 (merged July 2026, taken as v0.26.0): the search is bounded and takes the maximum of
// the token curve, which is not monotonic in the frame count (each count shares one pixel budget),
// under the model's own video processor budget: the first frame count from 2 to 600 whose tokens
// are the most within max_tokens. The pull request's startup measurements are this rule's output
// at the releases' budgets (GLM-4.1V-9B-Thinking 11 frames, GLM-4.6V-Flash 21; its table also lists
// GLM-OCR, whose video budget headroom does not know).
std::int64_t dummy_frames_searched(const Geometry& g, double side, std::int64_t max_tokens, double video_pixels) {
  std::int64_t best_frames = 2, best_tokens = -1;
  for (std::int64_t f = 2; f <= k_max_frames; ++f) {
    const std::int64_t t = vllm_tokens(g, side, f, video_pixels);
    if (t <= max_tokens && t > best_tokens) {
      best_tokens = t;
      best_frames = f;
    }
  }
  return best_frames;
}

// What the processors make of the dummy: the image processor resizes at two frames into
// size.longest_edge (grid_t 1); the video processor resizes the whole clip at its frame count into
// its longest_edge and pads the frames to the temporal patch afterwards.
EncoderItem processed(const Geometry& g, double side, std::int64_t frames, double max_pixels, const std::string& modality) {
  EncoderItem item;
  item.modality = modality;
  const double f = modality == "image" ? g.temporal : static_cast<double>(frames);
  const ResizedSides r = glm_resize(g, f, side, max_pixels);
  const double grid_t = modality == "image" ? 1.0 : std::ceil(f / g.temporal);
  item.patches = patches_of(g, grid_t, r);
  item.tokens = item.patches / static_cast<std::int64_t>(g.merge * g.merge);
  item.attention_span = item.patches / static_cast<std::int64_t>(grid_t);  // cu_seqlens: one sequence per frame pair
  const auto px = [](double v) { return std::to_string(static_cast<std::int64_t>(v)); };
  item.source = modality == "image" ? px(side) + "x" + px(side) + " pixels (glm4_1v.py get_image_size_with_most_features)"
                                    : std::to_string(frames) + " frames of " + px(side) + "² resized to " + px(r.width) +
                                          "² (glm4_1v.py's frame search, at most " + std::to_string(k_max_frames) + " frames)";
  return item;
}

}  // namespace

bool glm4v_sized(const VllmVersion& version) { return version.is_v1_engine() && !(version < VllmVersion{0, 14}); }

// The dummy image (get_image_size_with_most_features): before #34483 (February 2026, taken as
// v0.16) the square _get_vision_info gives at 16 frames under 47,040,000 pixels (1708²), whose
// budget estimate (get_max_image_tokens) still counts 16 frames under 9,633,792 (5,832); from it,
// the square at one frame under the image processor's longest_edge (2184² at 9,633,792) and its
// own tokens. vLLM sizes each modality with one item of each ({image: 1, video: 1}: the video's
// room is max_model_len less one image's estimate) and profiles the larger count, the embeddings
// from v0.13; the profiled video is rebuilt alone at max_model_len.
Glm4vProfiledItems glm4v_profiled_items(const ModelSpec& model, const VllmFlags& flags, std::int64_t max_model_len,
                                        const VllmVersion& version) {
  const VisionConfig& v = *model.vision;
  Geometry g;
  if (v.patch_size > 0) g.patch = v.patch_size;
  if (v.spatial_merge_size > 0) g.merge = v.spatial_merge_size;
  if (v.temporal_patch_size > 0) g.temporal = v.temporal_patch_size;
  const double image_pixels = v.max_pixels > 0 ? static_cast<double>(v.max_pixels) : k_image_pixels;
  const bool per_image = !(version < VllmVersion{0, 16});
  const double side = per_image ? glm_resize(g, g.temporal, 9999999.0, image_pixels).height
                                : glm_resize(g, 16, 9999999.0, k_vllm_video_pixels).height;
  const EncoderItem image = processed(g, side, 1, image_pixels, "image");
  if (mm_limit(flags, "video") == 0) return {image, std::nullopt};
  const std::int64_t image_estimate = per_image ? image.tokens : vllm_tokens(g, side, 16, k_image_pixels);
  const std::int64_t room = max_model_len - (mm_limit(flags, "image") > 0 ? image_estimate : 0);
  // Before #48729 the frame search keeps vLLM's hard-coded budget and the processor resizes into its
  // own (GLM-4.6V-Flash: 100,352,000); from it the search takes the processor's budget too.
  const double video_pixels = v.video_max_pixels > 0 ? static_cast<double>(v.video_max_pixels) : k_vllm_video_pixels;
  const bool searched = !(version < VllmVersion{0, 26});
  const auto frames_within = [&](std::int64_t tokens) {
    return searched ? dummy_frames_searched(g, side, tokens, video_pixels) : dummy_frames(g, side, tokens);
  };
  const EncoderItem budget_video = processed(g, side, frames_within(room), video_pixels, "video");
  const EncoderItem video = processed(g, side, frames_within(max_model_len), video_pixels, "video");
  if (mm_limit(flags, "image") == 0 || budget_video.tokens > image.tokens) {
    EncoderItem profiled = video;
    if (budget_video.tokens != video.tokens) profiled.budget_tokens = budget_video.tokens;
    return {profiled, std::nullopt};
  }
  if (budget_video.tokens < image.tokens) return {image, std::nullopt};
  return {image, video};
}

}  // namespace headroom::engine
