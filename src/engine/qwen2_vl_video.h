// Qwen2-VL's, Qwen2.5-VL's and the Qwen Omni thinkers' dummy video in vLLM's profile run from v0.11,
// which outranks the largest image once max_model_len holds two images' worth of tokens.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/encoder_profile.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// The video item vLLM sizes for Qwen2-VL / Qwen2.5-VL / Qwen2.5-Omni / Qwen3-Omni at `version` and
// `max_model_len`, given the largest image (get_image_size_with_most_features: `largest_image`'s
// patches and tokens); nullopt for other models and before v0.11. Its budget_tokens are what vLLM compares with the image's to
// pick the modality it profiles; patches and tokens are the video the run encodes (fewer frames
// where --limit-mm-per-prompt's video num_frames says so).
std::optional<EncoderItem> qwen2_vl_profiled_video(const ModelSpec& model, const VllmFlags& flags, const VllmVersion& version,
                                                   std::int64_t max_model_len, const EncoderItem& largest_image);

}  // namespace headroom::engine
