// The accounting rules of each vLLM era, keyed to the first release that has each change: the V0
// and V1 engines and 2025's changes (memory model §3), and those from v0.25 on (see
// ../shared/spec/vllm-v026-v033.md §2 and docs/accuracy.md "Eras from v0.26"). Versions past the
// newest one whose code was read are modelled with that one's rules, and say so. The prediction's
// stages look differences between versions up here instead of comparing versions inline.
#pragma once

#include <optional>

#include <string>
#include <vector>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// How vLLM's _report_kv_cache_config (v1/core/kv_cache_utils.py; V0's worker) turns blocks into
// the "GPU KV cache size: N tokens" it logs.
enum class KvTokensReport {
  blocks_times_block_size,  // V0 and V1 v0.8-v0.9: num_blocks × block_size
  blocks_per_group,         // v0.10-v0.20: num_blocks / groups × block_size (one group: num_blocks × block_size)
  concurrency_times_len,    // v0.21+: max concurrency × max_model_len
};

// Up to v0.12 the whole model is loaded in its 16-bit dtype and quantized after (vLLM's fp8 docs:
// "we load the model at original precision before quantizing down to 8-bits, so you need enough
// memory to load the whole model"). #29196 (v0.13) quantized each layer once loaded but kept the
// 16-bit tensors referenced through the loading loop, so the fp8 copies came on top (#32773: "vllm
// 0.13.0 and 0.14.0 are affected", Qwen3-30B-A3B no longer starts on one 80 GB GPU). #31914
// creates the weights on the meta device and materialises them layer by layer: the peak is the
// fp8 model. It merged after 2026-01-21 (#32773 still saw main fail that day) and before
// 2026-03-23 (#37851 documents it), so v0.15-v0.17 may have either; from v0.18 it is in.
enum class OnlineFp8LoadPeak {
  whole_16bit_model,  // up to v0.12: the 16-bit model
  both_copies,        // v0.13-v0.14: the 16-bit model and the fp8 copies of its linear layers
  unsure,             // v0.15-v0.17: the fp8 model, or both copies where the build predates #31914
  fp8_model,          // v0.18+: the fp8 model (one layer's 16-bit weights at a time)
};

struct EraRules {
  VllmVersion rules;          // the version whose rules apply (≤ VllmVersion::newest_described())
  std::string modelled_with;  // "v0.33 modelled with v0.31 rules", or "" when the version is described

  // --- The V0 and V1 engines and the changes of 2025 (memory model §3, §8.2) ---
  bool v1_engine = false;          // v0.8+: the V1 engine (VllmVersion::is_v1_engine)
  bool v0_engine_removed = false;  // v0.11: V0 is gone, so VLLM_USE_V1=0 (envs.py) selects nothing
  // v0.8.0-v0.10.1: the V1 oracle (engine/arg_utils.py _is_v1_supported_oracle, #13726) sends a run
  // to V0 for what V1 lacks (and with VLLM_USE_V1=1 refuses it): a CUDA GPU below compute capability
  // 8.0 ("Need at least Ampere for now"; v0.10.2 runs V1 there, #23614, #24022), and an fp8 KV cache
  // that FlashAttention cannot read ("No Fp8 KV cache so far"; v0.10.2 asks the platform instead,
  // not modelled).
  bool v1_oracle_fallbacks = false;
  // v0.8.2+ (#15191): the oracle keeps V1 for an fp8 KV cache that FlashAttention 3 reads (Hopper,
  // no VLLM_ATTENTION_BACKEND other than FLASH_ATTN_VLLM_V1); before, any fp8 KV cache went to V0.
  bool v1_fp8_kv_with_fa3 = false;
  // config/model.py _resolve_auto_dtype: a float32 checkpoint runs as bfloat16 from v0.9.1 (#18751),
  // as float16 before.
  std::string float32_downcast_dtype = "float16";
  // V1 v0.9.1+: gpu_worker.py init_device refuses to start when the free memory at its snapshot is
  // below the requested budget.
  bool startup_free_memory_check = false;
  // V1 v0.8-v0.9.0 and V0 v0.6.4: determine_available_memory charged every non-torch byte on the
  // device, the CUDA context and other processes included, to the non-KV memory.
  bool non_kv_includes_device_baseline = false;
  // V1 v0.8-v0.11: the MLA backends force their block size, 64 (FlashMLA) or 128 (CUTLASS MLA on
  // Blackwell) — platforms/cuda.py.
  bool mla_forces_block_size = false;
  // V1 v0.10+: the hybrid KV cache manager (one group per layer type).
  bool hybrid_kv_manager = false;
  // Chunked local attention (Llama 4) kept the hybrid manager off (#21761,
  // VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=False in envs.py up to v0.12.0) until #29627
  // turned the default on (True in the v0.16.0 docs; the merge, late November 2025, is taken at v0.13).
  bool hybrid_kv_manager_with_chunked_attention = false;
  // V1 v0.8-v0.9: the "max seq len" check sums each layer's own spec before sliding-window layers
  // are unified into full attention (startup_checks.h pre_hybrid_kv_need).
  bool kv_check_sums_own_specs = false;
  // v0.22+: sliding / chunked layers hold max_concurrent_batches × max_num_batched_tokens tokens in
  // flight per request (2 batches with async scheduling, on by default, at PP = 1; PP batches
  // otherwise); v0.21 and before, one batch (kv_cache_interface.py; memory model §3.1, §9).
  bool in_flight_per_concurrent_batch = false;
  KvTokensReport kv_tokens_report = KvTokensReport::blocks_times_block_size;
  // Online --quantization fp8 of a 16-bit checkpoint (model_executor/layers/quantization/fp8.py,
  // Fp8OnlineLinearMethod / Fp8OnlineMoEMethod): what the GPU holds at the peak of loading.
  OnlineFp8LoadPeak online_fp8_load_peak = OnlineFp8LoadPeak::whole_16bit_model;
  // v0.21+ (#38284): CUDA graph memory is estimated by the profile and subtracted before the KV
  // cache by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS).
  bool graphs_estimated_by_default = false;
  // V1 v0.18+: hybrid Mamba models need one state block per decode sequence for FULL decode
  // graphs (config/compilation.py resolve_cudagraph_mode_and_sizes).
  bool mamba_block_per_decode_sequence = false;

  // --- From v0.25 ---
  // The model runs on model runner v2 (dense models from v0.25, #44443; every model from v0.29).
  bool model_runner_v2 = false;
  // MRv2 reserved no CUDA graph memory before v0.29 (profile_cudagraph_memory returned 0;
  // #49224); v0.29 added the estimate (#53306).
  bool graph_estimate_is_zero = false;
  // #48317 (v0.26): concurrency rounds each group's need up to pages on its own.
  bool per_group_capacity = false;
  // #48993 (v0.26): DeepSeek-V4's packed KV block overlays the groups' layouts (the widest group
  // sets the block size) instead of one slot per page size, and drops the sliding-window padding.
  bool v4_dense_packing = false;
  // #50991 (v0.28): prefix caching on for hybrid models, Mamba cache mode "align", two state
  // pages per request.
  bool hybrid_prefix_caching_align = false;
  // #49208 (v0.26): non-KV = device free-memory drop + transient torch peak (other tenants' growth
  // during startup lands in non-KV).
  bool non_kv_from_free_memory = false;
};

// The rules of `version` for this model on this GPU.
EraRules era_rules(const VllmVersion& version, const ModelSpec& model);

// VLLM_USE_V2_MODEL_RUNNER (envs.py, with model runner v2 from #25266; taken as first in v0.12):
// 1 runs model runner v2, 0 keeps the V1 runner (v1/worker/gpu_model_runner.py), whatever the
// release's default for the model. Unset, or before v0.12, the era's default stands.
void apply_model_runner_choice(EraRules& rules, std::optional<bool> use_v2_model_runner);

// Whether vLLM counts the GPU as data-center Blackwell (SM100 family: B200, B300, GB200, GB300):
// compute capability 10.x (config/vllm.py _set_cudagraph_sizes, #49390).
bool is_sm100_family(const GpuSpec& gpu);

// Whether the model is dense for MRv2's rollout (no MoE, no Mamba / linear-attention state).
bool is_dense_for_mrv2(const ModelSpec& model);

// kv_cache_dtype after the sparse-MLA defaults: DeepSeek-V3.2 and GLM-5 (a DSA indexer) store
// "auto" and fp8 requests as fp8_ds_mla, "bfloat16" as the model dtype (config/cache.py "Some
// models (namely DeepSeekV3.2) default to fp8"; models/config.py DeepseekV32ForCausalLM);
// DeepSeek-V4 stores fp8_ds_mla. Other models keep `requested`. A note says what changed.
std::string sparse_mla_kv_cache_dtype(const ModelSpec& model, const std::string& requested,
                                      std::vector<std::string>& notes);

}  // namespace headroom::engine
