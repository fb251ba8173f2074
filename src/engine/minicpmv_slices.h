// MiniCPM-V's dummy multimodal item in vLLM's profile run (minicpmv.py, MiniCPMVProcessingInfo and
// MiniCPMVDummyInputsBuilder, with the release's image processor's slicing).
#pragma once

#include <cstdint>

#include "engine/encoder_profile.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// The item vLLM profiles a MiniCPM-V / MiniCPM-o model with: the dummy image's slices, or, for the
// releases that take video (2.6, 4.0, 4.5) when video is not limited to 0, the dummy video of up
// to 16 one-slice frames when it counts more tokens. `patches` counts every slice padded to the
// longest (minicpmv.py get_vision_hidden_states), `attention_span` one slice.
EncoderItem minicpmv_profiled_item(const ModelSpec& model, const VllmFlags& flags, std::int64_t max_model_len,
                                   const VllmVersion& version);

// Whether the release takes video (minicpmv.py get_supported_mm_limits: versions 2.6, 4.0, 4.5).
bool minicpmv_takes_video(const VisionConfig& vision);

}  // namespace headroom::engine
