// The accounting rules of vLLM from v0.25 on, keyed to the first release that has each change
// (see ../shared/spec/vllm-v026-v033.md §2 and docs/accuracy.md "Eras from v0.26"). Versions past
// the newest one whose code was read are modelled with that one's rules, and say so.
#pragma once

#include <string>
#include <vector>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

struct EraRules {
  VllmVersion rules;          // the version whose rules apply (≤ VllmVersion::newest_described())
  std::string modelled_with;  // "v0.33 modelled with v0.31 rules", or "" when the version is described
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
