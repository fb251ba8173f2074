// Gemma 4's dummy multimodal batch in vLLM's profile run (gemma4_mm.py), and how much of it its
// encoder runs at once, era by era.
#pragma once

#include <cstdint>

#include "engine/encoder_profile.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// The item vLLM profiles a Gemma 4 model with: a 32-frame video unless video is limited to 0,
// else an image. `patches` counts the whole item (every frame), `attention_span` one frame or
// image, which the encoder runs as one sequence.
EncoderItem gemma4_profiled_item(const ModelSpec& model, const VllmFlags& flags, const VllmVersion& version);

// Frames or images the encoder runs in one forward on the dummy batch of `items` items: one
// before v0.22 (a loop over them), else as many as gemma4_mm.py's chunk budget allows on a
// device of `device_total` bytes with `device_free` free (0: unknown, taken as one).
std::int64_t gemma4_units_per_forward(const EncoderItem& item, int items, const VllmVersion& version, Bytes device_total,
                                      Bytes device_free);

// The vision embedder's position one-hot for `units` frames or images (transformers'
// Gemma4VisionPatchEmbedder before #46176): int64 plus its cast to the table's dtype.
Bytes gemma4_position_one_hot_bytes(const EncoderItem& item, std::int64_t units, double dtype_bytes);

// Whether the transformers release vLLM runs with builds that one-hot: those of vLLM before v0.22.
bool gemma4_one_hot_in_estimate(const VllmVersion& version);

}  // namespace headroom::engine
