// Stage 7 of predict(): after the KV cache is allocated, graph capture, then the sampler warm-up
// (v1/worker/gpu_worker.py compile_or_warm_up_model runs it after capture_model on purpose, so its
// buffers stay allocated). Resident then: the CUDA context, other processes, weights, non-torch
// and the KV tensors; the profile's activation was freed and is not part of it. The graphs are
// captured into what is left (an estimate in the budget only reserved room for them), then the
// warm-up's [R, vocab] buffers.
#include <algorithm>

#include "engine/empirical.h"
#include "engine/predict_stages.h"
#include "engine/vllm_messages.h"

namespace headroom::engine {

AfterKvChecks checks_after_kv_sizing(const ModelSpec& model, const VllmFlags& flags, const ResolvedConfig& config,
                                     const Budget& budget, const LoadedWeights& weights, const Profile& profile,
                                     const KvLayout& layout) {
  const ResolvedSettings& s = config.settings;
  const RankProfile& rank = profile.ranks[layout.binding];
  const Bytes total = budget.total;
  const Bytes kv_alloc = layout.num_gpu_blocks * layout.block_bytes;
  const Bytes in_use =
      budget.baseline + budget.other_processes + weights.ranks[layout.binding].resident + rank.non_torch + kv_alloc;
  const Bytes graphs = s.enforce_eager ? 0 : rank.graph;
  const int requests = std::min(s.max_num_seqs, s.max_num_batched_tokens);
  const Bytes warmup =
      rank.sampler > 0 ? sampler_warmup_bytes(config.version, requests, model.vocab_size, flags.use_flashinfer_sampler) : 0;
  AfterKvChecks out;
  if (graphs > 0 && in_use + graphs > total) {
    out.failure = Failure{"cuda_graph_capture_oom", "cuda-graph-capture",
                          "torch.OutOfMemoryError: CUDA out of memory while capturing CUDA graphs: about " + gib(rank.graph) +
                              " of graphs do not fit in the " + gib(std::max<Bytes>(0, total - in_use)) +
                              " left after the KV cache",
                          {}};
  } else if (config.era.v1_engine && in_use + graphs + warmup > total) {
    out.failure = Failure{"sampler_warmup_oom", "sampler-warmup", sampler_warmup_oom_message(requests), {}};
    out.notes.push_back("the sampler warm-up after graph capture needs about " + gib(warmup) + " for " +
                        std::to_string(requests) + " dummy requests × a " + std::to_string(model.vocab_size) +
                        "-token vocabulary, but only " + gib(std::max<Bytes>(0, total - in_use - graphs)) +
                        " is left beside the KV cache and the graphs: lower --gpu-memory-utilization or --max-num-seqs");
  }
  return out;
}

}  // namespace headroom::engine
