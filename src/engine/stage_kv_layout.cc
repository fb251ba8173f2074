// Stage 6a of predict(): the KV cache's layout and block count on each rank
// (v1/worker/gpu_model_runner.py get_kv_cache_spec, then v1/core/kv_cache_utils.py
// get_kv_cache_configs: the layers' specs grouped into one block layout, as many blocks as the
// available memory holds, the minimum over all workers).
#include <algorithm>

#include "engine/kv_layers.h"
#include "engine/predict_stages.h"

namespace headroom::engine {

bool has_kind(const ModelSpec& m, LayerKind kind) {
  return std::find(m.layer_kinds.begin(), m.layer_kinds.end(), kind) != m.layer_kinds.end();
}

namespace {

// Hybrid KV manager by era; chunked local attention (Llama 4) joined it later. A v0.19
// Llama-4-Scout log shows the four groups' block count.
bool uses_hybrid_manager(const ModelSpec& model, const EraRules& era) {
  return era.hybrid_kv_manager &&
         (!has_kind(model, LayerKind::chunked_attention) || era.hybrid_kv_manager_with_chunked_attention);
}

// Tokens in flight per request for sliding / chunked layers (kv_cache_interface.py): one batch, or
// max_concurrent_batches batches by era.
std::int64_t in_flight_tokens(const ResolvedConfig& config) {
  const ResolvedSettings& s = config.settings;
  const int pp = s.pipeline_parallel_size;
  const int concurrent_batches = config.era.in_flight_per_concurrent_batch ? (pp == 1 ? 2 : pp) : 1;
  return static_cast<std::int64_t>(s.max_num_batched_tokens) * concurrent_batches;
}

KvLayerInputs layer_inputs(const ResolvedConfig& config, const StageWeights& stage, bool hybrid_manager) {
  const ResolvedSettings& s = config.settings;
  KvLayerInputs kin;
  kin.tensor_parallel_size = s.tensor_parallel_size;
  kin.block_size = s.block_size;
  kin.kv_element_bytes = config.kv_element_bytes;
  kin.model_dtype_bytes = config.model_dtype_bytes;
  kin.hybrid_manager = hybrid_manager;
  // Cross-attention layers hold the encoder's tokens: max_num_encoder_input_tokens, which
  // defaults to max_num_batched_tokens (config/scheduler.py).
  kin.max_encoder_tokens = s.max_num_batched_tokens;
  kin.first_layer = stage.first_layer;
  kin.end_layer = stage.end_layer;
  kin.kv_cache_dtype = s.kv_cache_dtype;
  kin.fp4_indexer_cache = config.fp4_indexer_cache;
  // Mamba cache mode "align" (prefix caching on, v0.28+): two state pages per request.
  kin.mamba_pages_per_request = config.era.hybrid_prefix_caching_align && s.enable_prefix_caching ? 2 : 1;
  return kin;
}

RankKvCache rank_kv_cache(const ModelSpec& model, const ResolvedConfig& config, const StageWeights& stage,
                          bool hybrid_manager, Bytes kv_available, std::vector<std::string>* notes) {
  const KvLayerInputs kin = layer_inputs(config, stage, hybrid_manager);
  auto layers = build_kv_layers(model, kin);
  if (notes)
    for (auto& n : layers.notes) notes->push_back(n);
  RankKvCache r;
  r.layers = stage.end_layer - stage.first_layer;
  r.block_size = layers.attention_block_size;
  if (config.era.kv_check_sums_own_specs && has_kind(model, LayerKind::sliding_attention)) {
    KvLayerInputs own = kin;
    own.hybrid_manager = true;  // each layer's own spec, before unification
    r.check_specs = build_kv_layers(model, own).specs;
  }
  r.config = layers.layer_tuples ? group_layer_tuples(layers.specs, config.era.v4_dense_packing)
                                 : group_kv_cache_specs(layers.specs);
  r.config.per_group_rounding = config.era.per_group_capacity;
  r.num_blocks = num_blocks_for(r.config, kv_available);
  return r;
}

// The report's summary of the binding rank's layout. The first attention group describes it (a
// hybrid's first group may be a state group).
KvCacheLayout describe_layout(const ModelSpec& model, const ResolvedSettings& s, const RankKvCache& rank) {
  const KvCacheConfig& kv = rank.config;
  KvCacheLayout out;
  out.block_size = rank.block_size;
  out.page_bytes = kv.page_bytes;
  out.group_size = kv.group_size;
  out.num_groups = static_cast<int>(kv.groups.size());
  int attn_layers = 0;
  for (const auto& g : kv.groups)
    if (g.spec.type != KvSpecType::mamba) attn_layers += static_cast<int>(g.layers.size());
  const KvCacheGroup* first = kv.groups.empty() ? nullptr : &kv.groups[0];
  for (const auto& g : kv.groups)
    if (g.spec.type != KvSpecType::mamba) {
      first = &g;
      break;
    }
  if (!first) return out;
  const int block_size = rank.block_size;
  LayerKvSpec one = first->spec;
  one.block_size = 1;
  out.bytes_per_token = one.type == KvSpecType::mamba ? 0 : one.page_bytes() * attn_layers;
  // One block holds a page of every layer (sparse MLA latent + indexer, DeepSeek-V4 tuples).
  if (kv.uniform_type) out.bytes_per_token = kv.uniform_page_sum / std::max(1, block_size);
  if (kv.layer_tuples) out.bytes_per_token = kv.page_bytes / std::max(1, block_size);
  out.description = std::to_string(attn_layers) + " attention layers";
  if (kv.layer_tuples) out.description = std::to_string(attn_layers) + " caches of " + std::to_string(rank.layers) + " layers";
  if (model.mla) out.description += ", MLA latent " + std::to_string(first->spec.head_size);
  else out.description += ", " + std::to_string(first->spec.num_kv_heads) + " KV heads × " + std::to_string(first->spec.head_size);
  out.description += ", " + (s.kv_cache_dtype == "auto" ? s.dtype : s.kv_cache_dtype);
  if (out.num_groups > 1) out.description += ", " + std::to_string(out.num_groups) + " groups";
  return out;
}

}  // namespace

Result<KvLayout> kv_cache_layout(const ModelSpec& model, const VllmFlags& flags, const ResolvedConfig& config,
                                 const LoadedWeights& weights, const Profile& profile) {
  KvLayout out;
  const bool hybrid_manager = uses_hybrid_manager(model, config.era);
  out.in_flight_tokens = in_flight_tokens(config);
  for (std::size_t st = 0; st < weights.ranks.size(); ++st)
    out.ranks.push_back(rank_kv_cache(model, config, weights.ranks[st].layout, hybrid_manager,
                                      profile.ranks[st].kv_available, st == 0 ? &out.notes : nullptr));
  // The engine takes the minimum number of blocks over all workers (kv_cache_utils.py).
  for (std::size_t i = 1; i < out.ranks.size(); ++i)
    if (out.ranks[i].num_blocks < out.ranks[out.binding].num_blocks) out.binding = i;
  const RankKvCache& w = out.ranks[out.binding];
  out.num_gpu_blocks = w.num_blocks;
  out.block_bytes = w.config.uniform_type ? w.config.uniform_page_sum : w.config.page_bytes * std::max(1, w.config.group_size);
  out.kv_available = profile.ranks[out.binding].kv_available;
  // An override replaces the profiled block count; from v0.21 (#41069) the checks and auto-fit see
  // the memory those blocks take instead of the profiled figure.
  if (flags.num_gpu_blocks_override) {
    out.num_gpu_blocks = *flags.num_gpu_blocks_override;
    out.kv_available = static_cast<Bytes>(*flags.num_gpu_blocks_override) * out.block_bytes;
  }
  if (!w.config.error.empty()) return make_error(ErrorCode::unsupported, w.config.error);
  out.summary = describe_layout(model, config.settings, w);
  return out;
}

}  // namespace headroom::engine
