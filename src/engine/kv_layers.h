// Builds the per-layer KV cache specs of one pipeline stage from a ModelSpec, the way the model
// runner's get_kv_cache_spec does (attention layers, MLA, sliding window, chunked local attention,
// Mamba / linear-attention state with the hybrid block-size alignment).
#pragma once

#include <string>
#include <vector>

#include "headroom/kv_cache_spec.h"
#include "headroom/model.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

struct KvLayerInputs {
  int tensor_parallel_size = 1;
  int block_size = 16;
  double kv_element_bytes = 2;
  double model_dtype_bytes = 2;
  bool hybrid_manager = true;   // false: sliding / chunked layers are stored like full attention
  std::int64_t max_encoder_tokens = 0;  // cross-attention need per request (max_num_encoder_input_tokens)
  int first_layer = 0;
  int end_layer = 0;
};

struct KvLayers {
  std::vector<LayerKvSpec> specs;
  int attention_block_size = 16;  // after hybrid alignment
  std::vector<std::string> notes;
};

KvLayers build_kv_layers(const ModelSpec& model, const KvLayerInputs& in);

// Bytes of one Mamba / linear-attention state per request on one rank (Σ conv + ssm tensors).
Bytes mamba_state_bytes(const ModelSpec& model, LayerKind kind, int tp, double model_dtype_bytes);

}  // namespace headroom::engine
