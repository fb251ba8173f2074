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

// Gemma 4 as a multimodal prefix-LM (ModelSpec::mm_prefix_lm, from #40534: taken as first in
// v0.20): vLLM forces --disable-chunked-mm-input, so one item must fit in max_num_batched_tokens.
bool gemma4_prefix_lm(const ModelSpec& model, const VllmVersion& version);

// What #43051 (v0.22) raises an unset max_num_batched_tokens to for a prefix-LM model: the largest
// item's tokens over every modality the model supports (--limit-mm-per-prompt's counts are not
// consulted there; its video num_frames is).
std::int64_t gemma4_prefix_lm_batched_tokens(const ModelSpec& model, const VllmFlags& flags, const VllmVersion& version);

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
