// KV cache specs, grouping and sizing as vLLM's V1 engine does it (vllm/v1/kv_cache_interface.py,
// vllm/v1/core/kv_cache_utils.py): page sizes per layer, layer groups, number of blocks, blocks one
// request needs, the "enough memory" check and the largest max_model_len that fits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/units.h"

namespace headroom {

enum class KvSpecType { full_attention, sliding_window, chunked_local, mla, mamba, cross_attention };
std::string_view to_string(KvSpecType type);

// How the KV bytes of a token are laid out beyond plain elements (vllm/v1/kv_cache_interface.py,
// KVQuantMode and MLAAttentionSpec.cache_dtype_str).
enum class KvQuant {
  none,            // element_bytes per value
  per_token_head,  // int8/fp8_per_token_head: + 2 fp32 scales per token and head
  nvfp4,           // per head d/2 + d/16 bytes (fp4 data + fp8 block scales), for K and for V
};

struct LayerKvSpec {
  KvSpecType type = KvSpecType::full_attention;
  int block_size = 16;
  int num_kv_heads = 1;      // per rank (MLA: 1)
  int head_size = 0;         // K head size (MLA: kv_lora_rank + qk_rope_head_dim)
  int head_size_v = 0;       // V head size; 0 = same as head_size
  double element_bytes = 2;  // bytes per KV element (fp8: 1)
  int sliding_window = 0;    // tokens (sliding_window)
  int attention_chunk_size = 0;  // tokens (chunked_local)
  Bytes mamba_state_bytes = 0;   // Σ state tensor bytes (mamba)
  Bytes page_size_padded = 0;    // overrides the computed page when set (mamba alignment)
  std::int64_t max_encoder_tokens = 0;  // cross_attention: encoder tokens one request holds
  KvQuant quant = KvQuant::none;
  bool latent = false;           // one vector per token, no K/V doubling (MLA, indexer, V4 SWA)
  int compress_ratio = 1;        // DeepSeek-V4: tokens per stored entry (block_size / ratio stored)
  int state_content_bytes = 0;   // packed bytes per stored token (fp8_ds_mla: 656 V3.2, 584 V4); 0 = from heads
  int alignment = 0;             // page rounded up to a multiple of this (DeepSeek-V4); 0 = none
  int mamba_pages_per_request = 1;  // mamba: 1 (cache mode none), 2 (align, v0.28+)

  // Bytes of one block of this layer.
  Bytes page_bytes() const;
  // Bytes one request needs at most (vLLM's max_memory_usage_bytes).
  Bytes max_memory_usage_bytes(std::int64_t max_model_len, std::int64_t in_flight_tokens,
                               std::int64_t max_encoder_tokens = 0) const;
  // Same spec except the layer count: used to bucket layers.
  bool same_as(const LayerKvSpec& other) const;
};

struct KvCacheGroup {
  LayerKvSpec spec;
  std::vector<int> layers;  // layer indices (padded groups hold fewer than group_size)
  Bytes page_sum = 0;       // layer tuples: Σ the pages of the group's layers
};

struct KvCacheConfig {
  std::vector<KvCacheGroup> groups;
  int group_size = 0;     // layer slots per group: one tensor of page × num_blocks per slot
  Bytes page_bytes = 0;   // common page size after unification (layer tuples: one packed block)
  bool uniform_type = false;  // same type, different shapes: one group, page = Σ layer pages
  Bytes uniform_page_sum = 0;
  int padding_layers = 0;     // "Add N padding layers" slots
  bool layer_tuples = false;  // DeepSeek-V4: groups of layer tuples drawing blocks from one packed pool
  Bytes tuple_check_bytes = 0;  // layer tuples: bytes the memory check charges per page a request needs
  bool per_group_rounding = false;  // #48317 (v0.26+): each group's need is rounded up to pages on its own
  std::string error;          // set when vLLM would refuse the layout (pages that cannot be aligned)
  bool empty() const { return groups.empty(); }
};

// Groups per-layer specs the way get_kv_cache_groups does (one group when all layers are alike,
// round-robin groups of hybrid models, UniformType for same-type different-shape layers).
// Block sizes of smaller-page layers are scaled up so every group has the same page size.
KvCacheConfig group_kv_cache_specs(std::vector<LayerKvSpec> layers);

// DeepSeek-V4's packed layout (vllm/v1/core/kv_cache_utils.py group_and_unify_kv_cache_specs,
// _get_kv_cache_groups_uniform_groups, _get_kv_cache_config_packed): the MLA specs form one group,
// the sliding-window specs one group per (block size, window), split into sub-groups of layer
// tuples. All groups share one pool of blocks. With `dense_packing` (#48993, v0.26) a block is the
// widest group's pages end to end; before, one slot per page size and position across groups, with
// sliding-window pages padded up to an MLA page size.
KvCacheConfig group_layer_tuples(const std::vector<LayerKvSpec>& layers, bool dense_packing = true);

// floor(floor(available / page) / group_size), ≥ 0. A model without KV layers gets the single
// null block vLLM allocates.
std::int64_t num_blocks_for(const KvCacheConfig& config, Bytes available);

// Pages one request of max_model_len needs in one group (every layer of a group needs as many).
std::int64_t group_pages_per_request(const KvCacheGroup& group, std::int64_t max_model_len, std::int64_t in_flight_tokens);

// Blocks one request of max_model_len needs across all groups (ceil(Σ_g need_g / page)).
std::int64_t blocks_per_request(const KvCacheConfig& config, std::int64_t max_model_len,
                                std::int64_t in_flight_tokens);

// Bytes of KV memory one max_model_len request needs (vLLM's _check_enough_kv_cache_memory).
Bytes kv_bytes_needed(const KvCacheConfig& config, std::int64_t max_model_len, std::int64_t in_flight_tokens);

// The largest max_model_len in [1, upper] whose need fits in `available` (binary search as
// estimate_max_model_len does); 0 when even one token does not fit.
std::int64_t estimate_max_model_len(const KvCacheConfig& config, Bytes available, std::int64_t upper,
                                    std::int64_t in_flight_tokens);

// num_blocks / blocks_per_request (vLLM's get_max_concurrency_for_kv_cache_config).
double max_concurrency(const KvCacheConfig& config, std::int64_t num_blocks, std::int64_t max_model_len,
                       std::int64_t in_flight_tokens);

}  // namespace headroom
