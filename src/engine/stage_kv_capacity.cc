// Stage 6b of predict(): what the KV cache holds and the checks on it, in vLLM's order
// (v1/core/kv_cache_utils.py check_enough_kv_cache_memory, with --max-model-len auto's fit, and
// _report_kv_cache_config's tokens and concurrency; then the allocation's own checks in
// gpu_model_runner.py initialize_kv_cache; V0's worker raise_if_cache_size_invalid).
#include <algorithm>

#include "engine/predict_stages.h"
#include "engine/startup_checks.h"
#include "engine/vllm_messages.h"

namespace headroom::engine {

namespace {

bool has_state_layers(const ModelSpec& m) {
  return std::any_of(m.layer_kinds.begin(), m.layer_kinds.end(), [](LayerKind k) {
    return k == LayerKind::mamba || k == LayerKind::linear_attention || k == LayerKind::kda_attention;
  });
}

// check_enough_kv_cache_memory, after --max-model-len auto has fitted the length: no memory at
// all, or less than one request of max_model_len needs (V1). Updates `out.max_model_len`.
void check_enough_memory(const ResolvedConfig& config, const VllmFlags& flags, const KvLayout& layout,
                         const RankKvCache& rank, KvCapacity& out) {
  const KvCacheConfig& kv = rank.config;
  const std::int64_t derived_len = config.derived_max_model_len, in_flight = layout.in_flight_tokens;
  if (flags.max_model_len_auto) {
    const std::int64_t fit = estimate_max_model_len(kv, layout.kv_available, derived_len, in_flight);
    if (fit <= 0) {
      out.failures.push_back(Failure{"no_kv_cache_memory", "kv-cache-alloc", auto_fit_impossible_message(), {}});
    } else {
      if (fit < derived_len)
        out.notes.push_back("--max-model-len auto: reduced from " + std::to_string(derived_len) + " to " + std::to_string(fit) +
                            " to fit in available GPU memory");
      out.max_model_len = fit;
    }
  }
  const Bytes need = rank.check_specs.empty()
                         ? kv_bytes_needed(kv, out.max_model_len, in_flight)
                         : pre_hybrid_kv_need(rank.check_specs, out.max_model_len, config.version, in_flight);
  if (layout.kv_available <= 0) {
    out.failures.push_back(Failure{"no_kv_cache_memory", "kv-cache-alloc", no_kv_cache_memory_message(config.version), {}});
  } else if (config.era.v1_engine && need > layout.kv_available) {
    const std::int64_t est = estimate_max_model_len(kv, layout.kv_available, out.max_model_len, in_flight);
    out.failures.push_back(Failure{"kv_cache_insufficient", "kv-cache-alloc",
                                   kv_cache_insufficient_message(config.version, out.max_model_len, need, layout.kv_available, est),
                                   est});
  }
}

// _report_kv_cache_config: the tokens and concurrency the log reports, counted by era.
void report_capacity(const ResolvedConfig& config, const KvLayout& layout, const KvCacheConfig& kv, KvCapacity& out) {
  const std::int64_t len = out.max_model_len, blocks = layout.num_gpu_blocks;
  const int block_size = layout.summary.block_size;
  out.blocks_per_request = blocks_per_request(kv, len, layout.in_flight_tokens);
  out.max_concurrency = max_concurrency(kv, blocks, len, layout.in_flight_tokens);
  switch (config.era.kv_tokens_report) {
    case KvTokensReport::blocks_times_block_size:
      out.kv_cache_tokens = blocks * block_size;
      out.max_concurrency = static_cast<double>(out.kv_cache_tokens) / static_cast<double>(len);
      break;
    case KvTokensReport::blocks_per_group: {
      const std::int64_t groups = std::max<std::int64_t>(1, static_cast<std::int64_t>(kv.groups.size()));
      out.kv_cache_tokens = kv.uniform_type || groups == 1 ? blocks * block_size : (blocks / groups) * block_size;
      break;
    }
    case KvTokensReport::concurrency_times_len:
      out.kv_cache_tokens = static_cast<std::int64_t>(out.max_concurrency * static_cast<double>(len));
      break;
  }
}

// DeepSeek-V4: the sliding-window caches and compressor states are sized for every token in
// flight, and each of their pages takes a whole packed block; say so when they, not the context,
// set the concurrency.
void note_window_pages(const ResolvedSettings& s, const KvLayout& layout, const KvCacheConfig& kv, KvCapacity& out) {
  if (!kv.layer_tuples || kv.groups.empty() || out.blocks_per_request <= 0) return;
  const std::int64_t in_flight = layout.in_flight_tokens;
  const std::int64_t context_pages = group_pages_per_request(kv.groups.front(), out.max_model_len, in_flight);
  const std::int64_t window_pages = out.blocks_per_request - context_pages;
  if (window_pages <= context_pages) return;
  out.notes.push_back(
      "each request holds " + std::to_string(context_pages) + " blocks for its context and " + std::to_string(window_pages) +
      " for the sliding-window caches and compressor states, sized for " + std::to_string(in_flight) +
      " tokens in flight (max_num_batched_tokens" +
      (in_flight > s.max_num_batched_tokens ? " × " + std::to_string(in_flight / std::max(1, s.max_num_batched_tokens)) : std::string()) +
      "); a lower --max-num-batched-tokens raises the concurrency");
}

// Hybrid Mamba models: each decode sequence needs its own state block, and FULL decode graphs are
// captured up to max_num_seqs (config/compilation.py resolve_cudagraph_mode_and_sizes, 2026).
std::optional<Failure> mamba_block_failure(const ModelSpec& model, const ResolvedConfig& config, std::int64_t blocks) {
  const ResolvedSettings& s = config.settings;
  if (!has_state_layers(model) || !config.era.mamba_block_per_decode_sequence || s.enforce_eager || blocks <= 0 ||
      s.max_num_seqs <= blocks)
    return std::nullopt;
  return Failure{"mamba_cache_blocks_insufficient", "kv-cache-alloc",
                 "max_num_seqs (" + std::to_string(s.max_num_seqs) + ") exceeds available Mamba cache blocks (" +
                     std::to_string(blocks) +
                     "). Each decode sequence requires one Mamba cache block, so CUDA graph capture cannot proceed. Please "
                     "lower max_num_seqs to at most " + std::to_string(blocks) + " or increase gpu_memory_utilization.",
                 {}};
}

}  // namespace

KvCapacity kv_cache_capacity(const ModelSpec& model, const GpuSpec& gpu, const VllmFlags& flags,
                             const ResolvedConfig& config, const KvLayout& layout) {
  const RankKvCache& rank = layout.ranks[layout.binding];
  const KvCacheConfig& kv = rank.config;
  KvCapacity out;
  out.max_model_len = config.settings.max_model_len;
  out.largest_fitting_max_model_len =
      kv.empty() ? out.max_model_len
                 : estimate_max_model_len(kv, layout.kv_available, std::max(config.derived_max_model_len, out.max_model_len),
                                          layout.in_flight_tokens);
  if (!kv.empty()) check_enough_memory(config, flags, layout, rank, out);
  report_capacity(config, layout, kv, out);
  note_window_pages(config.settings, layout, kv, out);
  // The allocation's own checks see the binding rank's block size and the fitted length.
  ResolvedSettings allocated = config.settings;
  allocated.block_size = layout.summary.block_size;
  allocated.max_model_len = out.max_model_len;
  if (auto f = kv_allocation_failure(StartupCheckInputs{model, gpu, flags, config.version, allocated, config.derived_max_model_len}))
    out.failures.push_back(*f);
  if (auto f = mamba_block_failure(model, config, layout.num_gpu_blocks)) out.failures.push_back(*f);
  // V0 (worker.py raise_if_cache_size_invalid): the KV cache must hold one max_model_len sequence.
  if (!config.era.v1_engine && out.kv_cache_tokens < out.max_model_len)
    out.failures.push_back(Failure{"kv_cache_insufficient", "kv-cache-alloc",
                                   v0_max_len_message(out.max_model_len, out.kv_cache_tokens),
                                   out.largest_fitting_max_model_len});
  return out;
}

}  // namespace headroom::engine
