// Qwen2-VL's and Qwen2.5-VL's dummy video, following vLLM's qwen2_vl.py (Qwen2.5-VL inherits its
// processing info and dummy-input builder) as stored at about v0.11.0 and in 2026 code:
// - get_mm_max_tokens_per_item sizes one image and one video with mm_counts of 1 per active
//   modality (multimodal/budget.py: dict.fromkeys(active_modalities, 1)), whatever
//   --limit-mm-per-prompt's counts, which only switch a modality on (> 0; unset is 999); so the
//   video it budgets has max_model_len less the image's tokens (get_num_frames_with_most_features),
//   while the profile run's dummy (_get_mm_dummy_batch: {video: 1}) has all of max_model_len.
// - The video's frames are the largest image's size (get_image_size_with_most_features; the token
//   arithmetic uses the image processor's max_pixels) and number
//   get_num_frames_with_most_features(max_model_len): _get_max_video_frames adds frames while the
//   video's tokens stay within max_model_len, capped at _MAX_FRAMES_PER_VIDEO = 14; frames are
//   padded to temporal_patch_size. With T tokens per image that is min(max(2 floor(L / T), 1), 14)
//   frames and ceil(frames / 2) x T tokens (temporal patch 2): more than the image from L >= 2T,
//   and then the modality vLLM profiles (get_modality_with_max_tokens).
// - #25553 (merged 2025-09-24, taken as v0.11.0) builds the run's dummy at max_model_len as well;
//   before it the run's video came from max_num_batched_tokens (1-2 frames at the defaults), and
//   headroom keeps the image there.
// - The Omni thinkers build the same video: Qwen2.5-Omni's and Qwen3-Omni's processing info
//   derive from Qwen2_5_VLProcessingInfo and share Qwen2_5OmniThinkerDummyInputsBuilder, which
//   takes get_num_frames_with_most_features and the largest image's size from it
//   (qwen2_5_omni_thinker.py, qwen3_omni_moe_thinker.py, stored at about v0.11 and in 2026 code,
//   where get_mm_max_tokens_per_item returns Qwen2.5-VL's image and video tokens beside the audio's
//   750 from Qwen2AudioProcessingInfo: a 30 s clip never outranks an image).
// - The encoder takes all frames in one visual() call; attention runs within each temporal slice
//   (cu_seqlens repeat h x w per grid_t; Qwen2.5-VL's full-attention blocks too, its other blocks
//   in 64-patch windows).
#include "engine/qwen2_vl_video.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace headroom::engine {

namespace {

constexpr std::int64_t k_max_frames_per_video = 14;  // qwen2_vl.py _MAX_FRAMES_PER_VIDEO ("For profile run")

// Architectures whose dummy video is Qwen2-VL's (above).
bool builds_qwen2_vl_video(const std::string& a) {
  return a == "Qwen2VLForConditionalGeneration" || a == "Qwen2_5_VLForConditionalGeneration" ||
         a.find("Qwen2_5Omni") != std::string::npos || a.find("Qwen3OmniMoe") != std::string::npos;
}

std::int64_t grid_t_of(std::int64_t frames, std::int64_t temporal) {
  const std::int64_t padded = frames + (temporal - frames % temporal) % temporal;
  return std::max<std::int64_t>(1, padded / temporal);
}

}  // namespace

std::optional<EncoderItem> qwen2_vl_profiled_video(const ModelSpec& model, const VllmFlags& flags, const VllmVersion& version,
                                                   std::int64_t max_model_len, const EncoderItem& largest_image) {
  const std::string& a = model.architecture;
  if (!model.vision || !builds_qwen2_vl_video(a)) return std::nullopt;
  if (!version.is_v1_engine() || version < VllmVersion{0, 11}) return std::nullopt;
  const std::int64_t image_tokens = largest_image.tokens, image_patches = largest_image.patches;
  if (image_tokens <= 0 || image_patches <= 0 || max_model_len <= 0) return std::nullopt;
  const std::int64_t temporal = model.vision->temporal_patch_size > 0 ? model.vision->temporal_patch_size : 2;
  // _get_max_video_frames: n frames fit while grid_t(n) x T <= room, so the last n with
  // ceil(n / temporal) <= room / T. The budget's room is max_model_len less one image where images
  // are on (budget.py passes mm_counts {image: 1, video: 1}); the run's dummy ({video: 1}) has all of it.
  const auto frames_within = [&](std::int64_t room) {
    const std::int64_t slices = std::max<std::int64_t>(1, room / image_tokens);
    return std::min(k_max_frames_per_video, std::max<std::int64_t>(1, slices * temporal));
  };
  const std::int64_t frames = frames_within(max_model_len);
  const std::int64_t budget_room = max_model_len - (mm_limit(flags, "image") > 0 ? image_tokens : 0);
  const std::int64_t grid_t = grid_t_of(frames_within(budget_room), temporal);
  // --limit-mm-per-prompt's video num_frames (v0.11+ VideoDummyOptions) can only shrink the video
  // that runs; vLLM's budget keeps the estimate (processing/dummy_inputs.py _get_dummy_videos).
  std::int64_t run_frames = frames;
  auto size = flags.mm_dummy_sizes.find("video");
  if (size != flags.mm_dummy_sizes.end() && size->second.num_frames > 0) run_frames = std::min(frames, std::int64_t{size->second.num_frames});
  const std::int64_t run_grid_t = grid_t_of(run_frames, temporal);
  EncoderItem item;
  item.modality = "video";
  item.patches = run_grid_t * image_patches;
  item.tokens = run_grid_t * image_tokens;
  item.budget_tokens = grid_t * image_tokens;
  item.attention_span = image_patches;  // one temporal slice
  const auto side = static_cast<std::int64_t>(std::lround(std::sqrt(static_cast<double>(image_patches)))) *
                    (model.vision->patch_size > 0 ? model.vision->patch_size : 14);
  item.source = std::to_string(run_frames) + " frames of " + std::to_string(side) + "x" + std::to_string(side) +
                " pixels (qwen2_vl.py's dummy video from v0.11: the most frames whose tokens fit max_model_len, at most 14, at the "
                "largest image's size" +
                (run_frames < frames ? std::string("; --limit-mm-per-prompt's num_frames") : std::string()) +
                (size != flags.mm_dummy_sizes.end() && (size->second.width > 0 || size->second.height > 0)
                     ? std::string("; its video width and height are not applied")
                     : std::string()) +
                ")";
  return item;
}

}  // namespace headroom::engine
