// GLM-4.1V / 4.5V / 4.6V's dummy multimodal batch in vLLM's profile run (glm4_1v.py with
// transformers' Glm4v image and video processors), for the releases whose code headroom follows.
#pragma once

#include <optional>

#include "engine/encoder_profile.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// Whether headroom follows this release's glm4_1v.py: from the two-frame dummy video (#30285,
// December 2025, taken as v0.14) to before the frame search of #48729 (July 2026, in v0.26.0).
// Before, a one-frame dummy video could fail the processor; after, the frame count is chosen
// differently. Outside this span the pass stays unsized.
bool glm4v_sized(const VllmVersion& version);

// The item vLLM profiles with, and, where the image and the video count the same tokens (vLLM's
// tie-break between modalities changed over these releases), the other modality's item.
struct Glm4vProfiledItems {
  EncoderItem item;
  std::optional<EncoderItem> tied;
};
Glm4vProfiledItems glm4v_profiled_items(const ModelSpec& model, const VllmFlags& flags, std::int64_t max_model_len,
                                        const VllmVersion& version);

}  // namespace headroom::engine
