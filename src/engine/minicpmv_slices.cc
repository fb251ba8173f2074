#include "engine/minicpmv_slices.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace headroom::engine {

namespace {

// minicpmv.py: _MAX_FRAMES_PER_VIDEO, the most frames of the dummy video.
constexpr std::int64_t k_max_frames_per_video = 16;

struct Slicing {
  std::int64_t side = 448;     // the slice side (config image_size; the processor's scale_resolution)
  std::int64_t patch = 14;     // vision_config.patch_size
  std::int64_t slices = 9;     // max_slice_num: vLLM reads the singular key, absent from the releases
  std::int64_t queries = 64;   // query_num: the resampler's embeddings per slice
};

Slicing slicing_of(const VisionConfig& v) {
  Slicing s;
  if (v.slice_size > 0) s.side = v.slice_size;
  if (v.patch_size > 0) s.patch = v.patch_size;
  if (v.max_slices > 0) s.slices = v.max_slices;
  if (v.resampler_queries > 0) s.queries = v.resampler_queries;
  return s;
}

// The image processor's ensure_divide: a length rounded to whole patches, at least one.
std::int64_t ensure_divide(double length, std::int64_t patch) {
  return std::max<std::int64_t>(static_cast<std::int64_t>(std::llround(length / static_cast<double>(patch))) * patch, patch);
}

// The dummy image (get_image_size_with_most_features) is side wide and side × slices tall. The
// processor's get_sliced_grid gives it one column of `slices` rows (its log-ratio error is 0 there)
// and slice_image makes the source image (find_best_resize: height int(side / sqrt(1 / slices)),
// width int(height / slices), each rounded to whole patches) and `slices` side × side crops. The
// tower sees every slice padded to the longest; the resampler hands on query_num per slice. Before
// v0.13 vLLM budgets the placeholder: the image id (3 tokens), <image>, the queries and </image>
// per slice, and a newline between grid rows.
EncoderItem image_item(const Slicing& s, const VllmVersion& version) {
  EncoderItem item;
  item.modality = "image";
  const std::int64_t crop = (s.side / s.patch) * (s.side / s.patch);
  std::int64_t source = crop, grid = 0;
  if (s.slices > 1) {
    const auto height = static_cast<std::int64_t>(static_cast<double>(s.side) * std::sqrt(static_cast<double>(s.slices)));
    const auto width = static_cast<std::int64_t>(static_cast<double>(height) / static_cast<double>(s.slices));
    source = (ensure_divide(static_cast<double>(width), s.patch) / s.patch) * (ensure_divide(static_cast<double>(height), s.patch) / s.patch);
    grid = s.slices;
  }
  const std::int64_t slices = grid + 1;
  item.attention_span = std::max(source, crop);
  item.patches = slices * item.attention_span;
  item.tokens = slices * s.queries;
  if (version < VllmVersion{0, 13}) item.budget_tokens = 3 + slices * (s.queries + 2) + std::max<std::int64_t>(0, grid - 1);
  item.source = std::to_string(s.side) + "x" + std::to_string(s.side * s.slices) + " pixels in " + std::to_string(slices) +
                " slices (the source image and " + std::to_string(grid) + " crops of " + std::to_string(s.side) + "²)";
  return item;
}

// The dummy video: get_num_frames_with_most_features' frames, side × side each, one slice (the
// video's max_slice_nums is 1), query_num embeddings per frame; placeholders of query_num + 2.
EncoderItem video_item(const Slicing& s, std::int64_t frames, const VllmVersion& version) {
  EncoderItem item;
  item.modality = "video";
  item.attention_span = (s.side / s.patch) * (s.side / s.patch);
  item.patches = frames * item.attention_span;
  item.tokens = frames * s.queries;
  if (version < VllmVersion{0, 13}) item.budget_tokens = frames * (s.queries + 2);
  item.source = std::to_string(frames) + " frames of " + std::to_string(s.side) + "² (minicpmv.py's cap of " +
                std::to_string(k_max_frames_per_video) + " frames per video)";
  return item;
}

}  // namespace

bool minicpmv_takes_video(const VisionConfig& vision) { return vision.family_version >= 2.55; }

// vLLM sizes each modality with one item of it (mm_counts {image: 1, video: 1}): the video's frames
// are what max_model_len leaves after one image, over query_num per frame, at most 16
// (get_num_frames_with_most_features), and the modality with more tokens is profiled.
EncoderItem minicpmv_profiled_item(const ModelSpec& model, const VllmFlags& flags, std::int64_t max_model_len,
                                   const VllmVersion& version) {
  const Slicing s = slicing_of(*model.vision);
  const EncoderItem image = image_item(s, version);
  if (!minicpmv_takes_video(*model.vision) || mm_limit(flags, "video") == 0) return image;
  const std::int64_t image_room = mm_limit(flags, "image") > 0 ? image.tokens : 0;
  const std::int64_t frames = std::clamp<std::int64_t>((max_model_len - image_room) / s.queries, 1, k_max_frames_per_video);
  const EncoderItem video = video_item(s, frames, version);
  const auto counted = [](const EncoderItem& i) { return std::max(i.tokens, i.budget_tokens); };
  return mm_limit(flags, "image") == 0 || counted(video) > counted(image) ? video : image;
}

}  // namespace headroom::engine
