// Qwen3-VL's dummy video in vLLM's profile run before v0.13, when the budget counted each video
// embedding as 12.5 tokens and the video therefore outranked the largest image.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/encoder_profile.h"
#include "headroom/model.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// The video item vLLM profiles Qwen3-VL with at `version` and `max_model_len`, or nullopt when it
// profiles the image instead (v0.13 on, or a model outside the Qwen3-VL family). `largest_image_side`
// is the side of get_image_size_with_most_features (4096 at the release's 16,777,216 pixels).
std::optional<EncoderItem> qwen3_vl_profiled_video(const ModelSpec& model, const VllmVersion& version,
                                                   std::int64_t max_model_len, std::int64_t largest_image_side);

}  // namespace headroom::engine
