#include "engine/vllm_eras.h"

#include <algorithm>

namespace headroom::engine {

namespace {

// First releases of each change. Merge dates on main and tag dates place them
// (../shared/spec/vllm-v026-v033.md §2, §5); where a PR merged days before a tag the earlier
// release is taken, as the spec's era table does.
const VllmVersion k_mrv2_env{0, 12};             // #25266 (GPU Model Runner V2, opt-in)
const VllmVersion k_mrv2_dense{0, 25};           // #44443, 2026-07-02
const VllmVersion k_mrv2_all{0, 29};             // MRv2 default for every model
const VllmVersion k_mrv2_graph_estimate{0, 29};  // #53306 "[Model Runner V2] Reserve CUDA graph memory"
const VllmVersion k_per_group_capacity{0, 26};   // #48317, 2026-07-21
const VllmVersion k_non_kv_free_memory{0, 26};   // #49208, 2026-07-20
const VllmVersion k_hybrid_align{0, 28};         // #50991, 2026-08-04
const VllmVersion k_v4_dense_packing{0, 26};     // #48993, 2026-07-22 (v0.26.0 tagged 2026-07-25)

// Earlier eras (memory model §3 era table).
const VllmVersion k_v0_removed{0, 11};
const VllmVersion k_v1_oracle_end{0, 10, 2};     // #23614, #24022 (V1 below compute capability 8.0)
const VllmVersion k_v1_fp8_kv_fa3{0, 8, 2};      // #15191, merged 2025-03-20
const VllmVersion k_float32_as_bf16{0, 9, 1};           // #18751
const VllmVersion k_free_memory_check{0, 9, 1};         // gpu_worker.py init_device
const VllmVersion k_v0_baseline_charged{0, 6, 4};       // V0 v0.6.4 only
const VllmVersion k_v0_baseline_charged_end{0, 6, 5};
const VllmVersion k_mla_block_size_free{0, 12};
const VllmVersion k_hybrid_manager{0, 10};
const VllmVersion k_hybrid_manager_chunked{0, 13};      // #29627
const VllmVersion k_in_flight_batches{0, 22};
const VllmVersion k_tokens_by_concurrency{0, 21};
const VllmVersion k_mamba_block_check{0, 18};
const VllmVersion k_online_fp8_streaming{0, 13};        // #29196 (vllm_eras.h OnlineFp8LoadPeak)
const VllmVersion k_online_fp8_meta_maybe{0, 15};       // #31914 merged between the v0.15 and v0.18 cuts
const VllmVersion k_online_fp8_meta{0, 18};

bool has_state_layers(const ModelSpec& m) {
  return std::any_of(m.layer_kinds.begin(), m.layer_kinds.end(), [](LayerKind k) {
    return k == LayerKind::mamba || k == LayerKind::linear_attention || k == LayerKind::kda_attention;
  });
}

}  // namespace

bool is_dense_for_mrv2(const ModelSpec& model) { return !model.moe && !has_state_layers(model); }

bool is_sm100_family(const GpuSpec& gpu) { return gpu.compute_capability.starts_with("10."); }

EraRules era_rules(const VllmVersion& version, const ModelSpec& model) {
  EraRules r;
  const VllmVersion described = VllmVersion::newest_described();
  if (version > described && (version.major != described.major || version.minor != described.minor)) {
    r.rules = described;
    r.modelled_with = "v" + std::to_string(version.major) + "." + std::to_string(version.minor) + " modelled with v" +
                      std::to_string(described.major) + "." + std::to_string(described.minor) + " rules";
  } else {
    r.rules = version;
  }
  const VllmVersion& v = r.rules;
  const bool v1 = v.is_v1_engine();
  r.v1_engine = v1;
  r.v0_engine_removed = v >= k_v0_removed;
  r.v1_oracle_fallbacks = v1 && v < k_v1_oracle_end;
  r.v1_fp8_kv_with_fa3 = v >= k_v1_fp8_kv_fa3;
  r.float32_downcast_dtype = v >= k_float32_as_bf16 ? "bfloat16" : "float16";
  r.startup_free_memory_check = v1 && v >= k_free_memory_check;
  r.non_kv_includes_device_baseline =
      v1 ? v < k_free_memory_check : (v >= k_v0_baseline_charged && v < k_v0_baseline_charged_end);
  r.mla_forces_block_size = v1 && v < k_mla_block_size_free;
  r.hybrid_kv_manager = v1 && v >= k_hybrid_manager;
  r.hybrid_kv_manager_with_chunked_attention = r.hybrid_kv_manager && v >= k_hybrid_manager_chunked;
  r.kv_check_sums_own_specs = v1 && v < k_hybrid_manager;
  r.in_flight_per_concurrent_batch = v >= k_in_flight_batches;
  r.kv_tokens_report = !v1                            ? KvTokensReport::blocks_times_block_size
                       : v >= k_tokens_by_concurrency ? KvTokensReport::concurrency_times_len
                       : v >= k_hybrid_manager        ? KvTokensReport::blocks_per_group
                                                      : KvTokensReport::blocks_times_block_size;
  r.online_fp8_load_peak = v >= k_online_fp8_meta         ? OnlineFp8LoadPeak::fp8_model
                           : v >= k_online_fp8_meta_maybe  ? OnlineFp8LoadPeak::unsure
                           : v >= k_online_fp8_streaming   ? OnlineFp8LoadPeak::both_copies
                                                           : OnlineFp8LoadPeak::whole_16bit_model;
  r.graphs_estimated_by_default = v.estimates_cuda_graphs_by_default();
  r.mamba_block_per_decode_sequence = v1 && v >= k_mamba_block_check;
  r.model_runner_v2 = v >= k_mrv2_all || (v >= k_mrv2_dense && is_dense_for_mrv2(model));
  r.graph_estimate_is_zero = r.model_runner_v2 && v < k_mrv2_graph_estimate;
  r.per_group_capacity = v >= k_per_group_capacity;
  r.v4_dense_packing = v >= k_v4_dense_packing;
  r.non_kv_from_free_memory = v >= k_non_kv_free_memory;
  r.hybrid_prefix_caching_align = v >= k_hybrid_align && has_state_layers(model);
  return r;
}

void apply_model_runner_choice(EraRules& r, std::optional<bool> use_v2_model_runner) {
  if (!use_v2_model_runner || !r.v1_engine || r.rules < k_mrv2_env) return;
  r.model_runner_v2 = *use_v2_model_runner;
  r.graph_estimate_is_zero = r.model_runner_v2 && r.rules < k_mrv2_graph_estimate;
}

std::string sparse_mla_kv_cache_dtype(const ModelSpec& model, const std::string& requested,
                                      std::vector<std::string>& notes) {
  if (!model.mla) return requested;
  const bool v4 = !model.mla->compress_ratios.empty();
  const bool dsa = model.mla->index_head_dim > 0;
  if (!v4 && !dsa) return requested;
  if (requested == "auto" || requested.starts_with("fp8")) {
    if (requested != "fp8_ds_mla")
      notes.push_back(std::string(v4 ? "DeepSeek-V4" : "sparse MLA (DeepSeek Sparse Attention)") +
                      " stores its KV cache as fp8_ds_mla (" + (v4 ? "584" : "656") + " bytes per token)" +
                      (requested == "auto" ? " by default; --kv-cache-dtype bfloat16 keeps 16-bit values" : ""));
    return "fp8_ds_mla";
  }
  if (requested == "bfloat16" && !v4) return "auto";
  return requested;
}

}  // namespace headroom::engine
