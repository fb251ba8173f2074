// Qwen3-VL's dummy video from its introduction (v0.11) to v0.13, following vLLM's qwen3_vl.py of
// that period and transformers' Qwen3-VL video processor:
// - Qwen3VLProcessingInfo.get_max_video_tokens multiplies the video's soft tokens by 12.5 ("one
//   video token is converted to <{timestamp} seconds> (on average 9.5 tokens) + vision_start +
//   video + vision_end"), so one video counts 153,600 tokens against the largest image's 16,384
//   and is the modality vLLM profiles ("Encoder cache will be initialized with a budget of
//   153600 tokens, and profiled with 1 video items", vLLM 0.11.0 with Qwen3-VL-30B-A3B).
// - The frames come from get_num_frames_with_most_features(max_model_len): frames are added while
//   the video's tokens stay within max_model_len, capped at _MAX_FRAMES_PER_VIDEO (24576); each
//   frame is resized by the video processor's smart_resize under size.longest_edge = 25,165,824
//   pixels over all frames (video_preprocessor_config.json of the Qwen3-VL releases).
// - vLLM PR #30475 (December 2025, first in v0.13) budgets embeddings only, without the factor;
//   the v0.13.0 log of the same model profiles "1 image item" of 16,384 tokens.
#include "engine/qwen3_vl_video.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/bounded_memo.h"
#include "engine/qwen_resize.h"

namespace headroom::engine {

namespace {

constexpr std::int64_t k_max_frames_per_video = 24576;   // qwen3_vl.py _MAX_FRAMES_PER_VIDEO
constexpr std::int64_t k_video_max_pixels = 25'165'824;  // video size.longest_edge
constexpr std::int64_t k_video_min_pixels = 4096;        // video size.shortest_edge
constexpr double k_formatted_tokens_per_embedding = 12.5;

struct Resized {
  std::int64_t side = 0;    // the resized frame's side (square frames only here)
  std::int64_t tokens = 0;  // merged tokens of the whole video
  std::int64_t patches = 0;
};

// transformers qwen3_vl video_processing smart_resize for `frames` square frames of `side`
// pixels, then vLLM's _get_vision_info: frames padded to a multiple of the temporal patch,
// patch × patch pixels per patch, merge² patches per token.
Resized resize_video(std::int64_t frames, std::int64_t side, std::int64_t patch, std::int64_t merge, std::int64_t temporal) {
  const double factor = static_cast<double>(patch * merge);
  const double t_bar = std::nearbyint(static_cast<double>(frames) / static_cast<double>(temporal)) * static_cast<double>(temporal);
  const ResizedSides sides = qwen_smart_resize(static_cast<double>(side), static_cast<double>(side), factor, k_video_min_pixels,
                                               k_video_max_pixels, static_cast<double>(frames), t_bar);
  const auto bar = static_cast<std::int64_t>(sides.height);
  Resized r;
  r.side = bar;
  const std::int64_t grid_t = std::max<std::int64_t>(1, (frames + frames % temporal) / temporal);
  r.patches = grid_t * (bar / patch) * (bar / patch);
  r.tokens = r.patches / (merge * merge);
  return r;
}

// The most tokens any frame count from 3 to the cap gives: a max_model_len at or above it lets
// vLLM's search run to the cap. Memoised per geometry (24,576 resizes each).
std::int64_t most_tokens_past_two_frames(std::int64_t side, std::int64_t patch, std::int64_t merge, std::int64_t temporal) {
  static BoundedMemo<std::int64_t> memo(64);
  const std::string key = std::to_string(side) + "/" + std::to_string(patch) + "/" + std::to_string(merge) + "/" +
                          std::to_string(temporal);
  return memo.get(key, [&] {
    std::int64_t most = 0;
    for (std::int64_t f = 3; f <= k_max_frames_per_video; ++f)
      most = std::max(most, resize_video(f, side, patch, merge, temporal).tokens);
    return most;
  });
}

// _get_max_video_frames(max_model_len, start_num_frames=2), capped at _MAX_FRAMES_PER_VIDEO: frames
// are added until one more would exceed max_model_len; once the cap is reached the rest of vLLM's
// search cannot change the answer.
std::int64_t frames_with_most_features(std::int64_t max_model_len, std::int64_t side, std::int64_t patch, std::int64_t merge,
                                       std::int64_t temporal) {
  if (max_model_len >= most_tokens_past_two_frames(side, patch, merge, temporal)) return k_max_frames_per_video;
  std::int64_t frames = 2;
  while (frames < k_max_frames_per_video && resize_video(frames + 1, side, patch, merge, temporal).tokens <= max_model_len)
    ++frames;
  return frames;
}

}  // namespace

std::optional<EncoderItem> qwen3_vl_profiled_video(const ModelSpec& model, const VllmVersion& version,
                                                   std::int64_t max_model_len, std::int64_t largest_image_side) {
  if (!model.vision || !version.is_v1_engine() || version < VllmVersion{0, 11} || !(version < VllmVersion{0, 13}))
    return std::nullopt;
  const auto& v = *model.vision;
  const bool qwen3_vl = model.architecture.find("Qwen3VL") != std::string::npos || v.model_type == "qwen3_vl" ||
                        v.model_type == "qwen3_vl_moe";
  if (!qwen3_vl || largest_image_side <= 0) return std::nullopt;
  const std::int64_t patch = v.patch_size > 0 ? v.patch_size : 16, merge = v.spatial_merge_size > 0 ? v.spatial_merge_size : 2;
  const std::int64_t temporal = v.temporal_patch_size > 0 ? v.temporal_patch_size : 2;
  const std::int64_t frames = frames_with_most_features(max_model_len, largest_image_side, patch, merge, temporal);
  const Resized r = resize_video(frames, largest_image_side, patch, merge, temporal);
  EncoderItem item;
  item.modality = "video";
  item.patches = r.patches;
  item.tokens = r.tokens;
  // Qwen3_VisionTransformer.forward: cu_seqlens repeat h × w once per temporal slice.
  item.attention_span = (r.side / patch) * (r.side / patch);
  item.budget_tokens = static_cast<std::int64_t>(static_cast<double>(r.tokens) * k_formatted_tokens_per_embedding);
  item.source = std::to_string(frames) + " frames of " + std::to_string(r.side) + "x" + std::to_string(r.side) +
                " pixels (qwen3_vl.py before v0.13: the most frames within max_model_len, the video processor's "
                "25,165,824-pixel budget)";
  return item;
}

}  // namespace headroom::engine
