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
  std::string kv_cache_dtype = "auto";  // resolved: fp8_ds_mla, nvfp4, *_per_token_head set the layout
  int mamba_pages_per_request = 1;      // 2 in mamba cache mode "align" (prefix caching on, v0.28+)
  bool layer_tuples = false;            // set by build_kv_layers for DeepSeek-V4's packed layout
  bool fp4_indexer_cache = false;       // DeepSeek-V4: --attention-config use_fp4_indexer_cache (MXFP4 rows)
};

struct KvLayers {
  std::vector<LayerKvSpec> specs;
  bool layer_tuples = false;      // DeepSeek-V4: group with group_layer_tuples
  int attention_block_size = 16;  // after hybrid alignment
  std::vector<std::string> notes;
};

KvLayers build_kv_layers(const ModelSpec& model, const KvLayerInputs& in);

// The KV layout a kv_cache_dtype string selects for one spec (kv_cache_interface.py KVQuantMode).
KvQuant kv_quant_for(const std::string& kv_cache_dtype);

// DeepSeek-V4 compressed MLA (kv_specs_2026.cc): per layer a sliding-window MLA cache, plus a
// compressed MLA cache (ratio 4 or 128) and, for ratio 4, an indexer cache.
KvLayers build_deepseek_v4_layers(const ModelSpec& model, const KvLayerInputs& in);

// DeepSeek Sparse Attention indexer cache of one MLA layer (DeepSeek-V3.2, GLM-5): index_head_dim
// fp8 values plus one fp32 scale per 128 of them, one vector per token.
LayerKvSpec indexer_spec(const ModelSpec& model, int block_size);

// Whether layer `i` keeps its own indexer cache (GLM-5.2 "shared" indexer layers do not).
bool has_indexer_cache(const ModelSpec& model, int i);

// Bytes of one Mamba / linear-attention state per request on one rank (Σ conv + ssm tensors).
Bytes mamba_state_bytes(const ModelSpec& model, LayerKind kind, int tp, double model_dtype_bytes);

}  // namespace headroom::engine
