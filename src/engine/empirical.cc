#include "engine/empirical.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "engine/calibration_constants.h"
#include "engine/quant_kernels.h"

namespace headroom::engine {

namespace {

int dense_intermediate(const ModelSpec& model) {
  if (!model.moe) return model.intermediate_size;
  if (model.moe->dense_intermediate_size > 0) return model.moe->dense_intermediate_size;
  if (model.moe->first_k_dense_replace > 0 || !model.moe->mlp_only_layers.empty()) return model.intermediate_size;
  // All layers MoE: the widest dense-like matmul is the shared expert, if any.
  int shared = model.moe->shared_expert_intermediate_size;
  if (shared == 0 && model.moe->num_shared_experts > 0)
    shared = model.moe->num_shared_experts * model.moe->moe_intermediate_size;
  return shared;
}

// The per-rank shapes of the attention and dense MLP projections (QKVParallelLinear keeps at
// least one KV head per rank).
LinearShapes linear_shapes(const ModelSpec& model, double tp) {
  LinearShapes s;
  const int heads = std::max(1, model.num_attention_heads);
  const double head_dim = model.head_dim > 0 ? model.head_dim : static_cast<double>(model.hidden_size) / heads;
  s.hidden = model.hidden_size;
  s.q_out = heads / tp * head_dim;
  s.kv_out = std::max(1.0, std::floor(std::max(1, model.num_kv_heads) / tp)) * head_dim;
  s.mlp_per_rank = dense_intermediate(model) / tp;
  return s;
}

}  // namespace

ActivationEstimate estimate_activation(const ModelSpec& model, const VllmVersion& version, const ActivationInputs& in) {
  ActivationEstimate out;
  const double tp = std::max(1, in.tensor_parallel_size);
  const double tokens = in.max_num_batched_tokens;
  // Requests of the dummy run: min(max_num_seqs, max_num_batched_tokens) (gpu_model_runner.py
  // profile_run); the sampler warm-up builds [R, vocab] logits on the last PP stage.
  const double requests = std::min(in.max_num_seqs, in.max_num_batched_tokens);
  const double vocab = static_cast<double>(round_up(model.vocab_size, 64));
  if (in.last_pp_stage && in.runner_v2_sampler) {
    const double logits = requests * vocab * (in.dtype_bytes + (version < VllmVersion{0, 26} ? 4.0 : 0.0));
    out.sampler = static_cast<Bytes>(logits + in.dtype_bytes * (tokens + requests) * model.hidden_size);
  } else if (in.last_pp_stage) {
    out.sampler = static_cast<Bytes>(sampler_bytes_per_logit_for(version, in.flashinfer_sampler) * requests * vocab);
  }
  // Dummy forward without attention: the MLP's gate_up output (2I/TP), the activation output
  // (I/TP) and ~4 hidden-sized buffers (residual, normed input, QKV/out projections) per token.
  const double inter = dense_intermediate(model);
  out.forward = static_cast<Bytes>(tokens * in.dtype_bytes * (3.0 * inter / tp + 4.0 * model.hidden_size));
  // A dequantizing kernel (plain AWQ or GPTQ, bitsandbytes 4-bit) holds one whole weight in
  // float16 beside those buffers while it multiplies.
  if (in.linear_method == "gguf" && model.quantization) {
    const QuantizationConfig& q = *model.quantization;
    out.dequantized = gguf_dequantized_bytes(q.gguf_dequantized_values, q.gguf_dequantized_rows, tokens, tp, in.dtype_bytes);
    // compute_logits multiplies the requests' rows by the head before the sampler runs: a head
    // dequantized whole sits beside this rank's [R, vocab / TP] logits then.
    const Bytes head = gguf_dequantized_bytes(q.gguf_dequantized_head_values, q.gguf_dequantized_head_rows, requests, tp,
                                              in.dtype_bytes);
    if (in.last_pp_stage && head > 0)
      out.sampler = std::max(out.sampler, head + static_cast<Bytes>(requests * vocab / tp * in.dtype_bytes));
  } else {
    out.dequantized = dequantized_linear_bytes(in.linear_method, in.quant_bits, linear_shapes(model, tp),
                                               in.max_num_batched_tokens, in.dtype_bytes);
  }
  out.forward += out.dequantized;
  if (model.moe && model.moe->num_experts > 0) {
    // fused_moe intermediate caches: topk copies of each token through w13 (2I), the activation (I)
    // and w2 (H). With expert parallelism the expert width is not split.
    const double ep_tp = in.expert_parallel_size > 1 ? 1.0 : tp;
    const double width = 3.0 * model.moe->moe_intermediate_size / ep_tp + model.hidden_size;
    out.moe = static_cast<Bytes>(k_moe_workspace_factor * tokens * std::max(1, model.moe->experts_per_token) * width *
                                 in.dtype_bytes);
  }
  if (in.multimodal && !in.text_only) {
    // gpu_model_runner.py profile_run encodes dummy items first and keeps their outputs in the
    // encoder cache for the rest of the run; its budget defaults to max_num_batched_tokens
    // embeddings of the language model's hidden size (multimodal/encoder_budget.py).
    out.encoder = in.encoder_cached_outputs ? *in.encoder_cached_outputs
                                            : static_cast<Bytes>(tokens * model.hidden_size * in.dtype_bytes);
    out.encoder_pass = in.encoder_pass_peak.value_or(0);
  }
  // The forward pass and the sampler run one after the other: the peak is the larger of the two,
  // plus what stays allocated across them (the encoder cache; from v0.17 the fused-MoE workspace).
  // Before v0.17 the MoE workspace lived only through the forward pass: the logged peaks of
  // gpt-oss-20b and gpt-oss-120b on v0.13 (7.38 GiB each) and the KV of Qwen3-30B-A3B on v0.12
  // (RTX PRO 6000) match the sampler alone; the five MoE rows of v0.17+ carry it on top.
  out.sampler_rival = version.is_v1_engine() && version < VllmVersion{0, 17} ? out.forward + out.moe : out.forward;
  out.total = std::max(out.sampler_rival, out.sampler) + (out.forward + out.moe - out.sampler_rival) + out.encoder;
  // The encoder pass comes first (profile_run runs get_multimodal_embeddings before _dummy_run):
  // its peak and the language model's are not simultaneous; torch's peak is the larger.
  out.total = std::max(out.total, out.encoder_pass);
  return out;
}

bool is_multimodal(const ModelSpec& model) {
  if (model.vision || model.audio) return true;
  const std::string& a = model.architecture;
  return a.find("ForConditionalGeneration") != std::string::npos || a.find("VL") != std::string::npos ||
         a.find("Vision") != std::string::npos || a.find("Llava") != std::string::npos;
}

Interconnect interconnect_of(const GpuSpec& gpu) {
  if (!gpu.nvlink) return Interconnect::pcie;
  if (gpu.architecture == "Hopper" || gpu.architecture == "Blackwell") return Interconnect::nvswitch;
  return Interconnect::nvlink;
}

Bytes nvls_buffer_bytes(const VllmVersion& version, int tp, const GpuSpec& gpu) {
  // NCCL src/transport/nvls.cc: ncclNvlsInit enables NVLS only when more than two GPUs share the
  // communicator and the device supports multicast (NVSwitch boards from Hopper on);
  // ncclNvlsBufferSetup then maps nvlsChannels x 2 x buffSize per head, one head per local rank,
  // with buffSize = NCCL_NVLS_CHUNKSIZE (128 KiB) x NCCL_STEPS (8) = 1 MiB (NCCL 2.23 onward).
  // nvlsChannels: 16 on sm90 (NVLS_NCHANNELS_SM90); 32 on sm100 in NCCL 2.26, 24 on a single
  // sm100 node from 2.27 (NVLS_NCHANNELS_SM100_NVL). With NCCL_RUNTIME_CONNECT (default from
  // 2.22) the buffers are set up at the first NVLS collective (group.cc), which is the profile
  // run's first large all-reduce, so the increase lands in N. torch 2.7 (vLLM 0.9) ships NCCL
  // 2.26.2 and torch 2.8 (vLLM 0.10.2) 2.27.3; earlier NCCLs allocate them at init, in B.
  if (tp <= 2 || interconnect_of(gpu) != Interconnect::nvswitch || !version.is_v1_engine() ||
      version < VllmVersion{0, 9})
    return 0;
  int channels = 16;
  if (gpu.capability() >= 100) channels = version < VllmVersion{0, 10, 2} ? 32 : 24;
  constexpr Bytes k_buff = Bytes{128} * 1024 * 8;
  return static_cast<Bytes>(channels) * 2 * k_buff * tp;
}

// vllm/config/vllm.py enable_allreduce_rms_fusion turns the pass on at -O2 (the default; not in
// eager mode) for TP > 1 on capability 9.0 and the 10.x family when FlashInfer is installed (#34299,
// February 2026, with the unified workspace API of #33985/#34109: taken as first in v0.17; #34392
// left data parallelism out). allreduce_rms_fusion.py sizes max_token_num = min(max_size /
// (hidden x dtype), max_num_batched_tokens), max_size from FI_ALLREDUCE_FUSION_MAX_SIZE_MB (per
// capability and TP size; none for other TP sizes). FlashInfer 0.6.x's TRTLLMAllReduceFusionWorkspace
// allocates three SymmDeviceMemory buffers (data tp x M x H, flags tp x 256 x 4 bytes, Lamport
// 3 x tp x M x H), each rounded to 2 MiB plus 2048 bytes and then to the multicast granularity,
// 512 MiB on NVSwitch Hopper boards (taken as the same on Blackwell): 1.5 GiB on every Hopper
// TP size. Without multicast (no NVSwitch) FlashInfer refuses and vLLM turns the fusion off.
Bytes allreduce_fusion_workspace_bytes(const VllmVersion& version, const ResolvedSettings& s, const GpuSpec& gpu,
                                       int hidden_size, double dtype_bytes) {
  const int tp = s.tensor_parallel_size, cap = gpu.capability();
  if (version < VllmVersion{0, 17} || s.enforce_eager || s.data_parallel_size > 1 || gpu.vendor == "AMD" ||
      interconnect_of(gpu) != Interconnect::nvswitch || hidden_size <= 0 || (tp != 2 && tp != 4 && tp != 8))
    return 0;
  double max_mib = 0;
  const int i = tp == 2 ? 0 : tp == 4 ? 1 : 2;
  if (cap == 90) max_mib = std::array<double, 3>{64, 2, 0.5}[i];
  else if (cap == 103) max_mib = std::array<double, 3>{64, 64, 2}[i];
  else if (cap / 10 == 10) max_mib = std::array<double, 3>{64, 32, 1}[i];
  else return 0;
  const double row = static_cast<double>(hidden_size) * dtype_bytes;
  const double m = std::min(std::floor(max_mib * 1024 * 1024 / row), static_cast<double>(s.max_num_batched_tokens));
  const double data = tp * m * row, flags = tp * 256.0 * 4.0;
  const double lamport = std::min(3.0 * tp * m * row * (dtype_bytes >= 4 ? 2.0 : 1.0), 2'145'386'496.0);
  auto round_up_to = [](double bytes, double unit) { return std::ceil(bytes / unit) * unit; };
  constexpr double k_page = 2.0 * 1024 * 1024, k_multicast = 512.0 * 1024 * 1024;
  double total = 0;
  for (double buffer : {data, flags, lamport}) total += round_up_to(round_up_to(buffer, k_page) + 2048, k_multicast);
  return static_cast<Bytes>(total);
}

Bytes estimate_non_torch(const VllmVersion& version, int tp, int pp, const GpuSpec& gpu) {
  const NonTorchEra& era = non_torch_era(version);
  double gib = era.single_gpu_gib;
  if (tp > 1) {
    switch (interconnect_of(gpu)) {
      case Interconnect::nvswitch:
        gib += era.nvswitch_all_reduce_gib + to_gib(nvls_buffer_bytes(version, tp, gpu));
        break;
      // Without NVSwitch there are no NVLS buffers (NVLink SHARP needs Hopper's NVSwitch); what
      // remains is NCCL's own buffers, and custom all-reduce's few MiB where it runs.
      case Interconnect::nvlink:
      case Interconnect::pcie: gib += k_nccl_buffers_per_peer_gib * (tp - 1); break;
    }
  } else if (pp > 1) {
    gib = k_pipeline_non_torch_gib;
  }
  return from_gib(gib);
}

Bytes estimate_baseline(int tp, int pp) {
  // CUDA context ≈ 0.5 GiB; NCCL communicators and custom all-reduce buffers add with the group size.
  double gib = k_baseline_context_gib;
  if (tp * pp > 1) gib += k_baseline_per_extra_rank_gib * std::min(7, tp * pp - 1);
  return from_gib(gib);
}

int num_cuda_graphs(const VllmVersion& version, const std::vector<int>& sizes, int max_num_seqs,
                    const std::optional<std::string>& mode) {
  const int all = static_cast<int>(sizes.size());
  const int decode = static_cast<int>(std::count_if(sizes.begin(), sizes.end(), [&](int s) { return s <= max_num_seqs; }));
  if (mode && version.is_v1_engine()) {
    if (*mode == "NONE") return 0;
    if (*mode == "PIECEWISE" || *mode == "FULL") return all;
    if (*mode == "FULL_DECODE_ONLY") return decode;
    if (*mode == "FULL_AND_PIECEWISE") return all + decode;
  }
  return version.is_v1_engine() && version >= VllmVersion{0, 11} ? all + decode : all;
}

namespace {
const VllmVersion k_flashinfer_sampler_era{0, 8};  // fitted FlashInfer constant: v0.8-v0.10
const VllmVersion k_sort_sampler_era{0, 11};       // fitted sort constant: v0.11-v0.16
// #26859 (v0.11.1): FlashInfer's kernels only when VLLM_USE_FLASHINFER_SAMPLER=1; before it they
// ran whenever FlashInfer was importable (an optional pip extra until #26443, also v0.11.1).
const VllmVersion k_flashinfer_opt_in{0, 11, 1};
const VllmVersion k_rewritten_sampler{0, 17};
}  // namespace

double sampler_bytes_per_logit_for(const VllmVersion& version, std::optional<bool> flashinfer_sampler) {
  if (version.is_v1_engine() && version < k_rewritten_sampler && flashinfer_sampler) {
    return sampler_bytes_per_logit(*flashinfer_sampler ? k_flashinfer_sampler_era : k_sort_sampler_era);
  }
  return sampler_bytes_per_logit(version);
}

bool sampler_path_depends_on_flashinfer(const VllmVersion& version, std::optional<bool> flashinfer_sampler) {
  return version.is_v1_engine() && version >= k_flashinfer_sampler_era && version < k_flashinfer_opt_in &&
         !flashinfer_sampler.has_value();
}

Bytes sampler_warmup_bytes(const VllmVersion& version, int requests, std::int64_t vocab_size,
                           std::optional<bool> flashinfer_sampler) {
  return static_cast<Bytes>(sampler_bytes_per_logit_for(version, flashinfer_sampler) * static_cast<double>(requests) *
                            static_cast<double>(round_up(vocab_size, 64)));
}

double moe_graph_units(const ModelSpec& model, int moe_width_divisor) {
  if (!model.moe || model.moe->num_experts <= 0) return 0;
  const double d = std::max(1, moe_width_divisor), width = 3.0 * model.moe->moe_intermediate_size;
  return (width / d + model.hidden_size) / (width + model.hidden_size);
}

namespace {

// Piecewise graphs split at every attention layer, so graph memory grows with the layers; the
// static buffers of the largest captured batch grow with the hidden size, and each graph of an MoE
// model keeps its own fused-MoE caches, which grow with topk and the experts' width per GPU; all
// scale with the number of graphs captured (102 at the defaults of a big GPU from v0.11: 51
// PIECEWISE + 51 FULL).
Bytes graph_bytes(const ModelSpec& model, int num_graphs, int stage_layers, int moe_width_divisor,
                  double per_1024_hidden_gib, double per_layer_gib, double per_moe_unit_gib) {
  if (num_graphs <= 0) return 0;
  const double scale = static_cast<double>(num_graphs) / 102.0;
  return from_gib((per_1024_hidden_gib * model.hidden_size / 1024.0 + per_layer_gib * stage_layers +
                   per_moe_unit_gib * moe_graph_units(model, moe_width_divisor)) *
                  scale);
}

}  // namespace

Bytes estimate_cuda_graph(const ModelSpec& model, int num_graphs, int stage_layers, int moe_width_divisor) {
  return graph_bytes(model, num_graphs, stage_layers, moe_width_divisor, k_graph_per_1024_hidden_gib,
                     k_graph_per_layer_gib, k_graph_per_moe_unit_gib);
}

Bytes estimate_cuda_graph_profile(const ModelSpec& model, int num_graphs, int stage_layers, int moe_width_divisor) {
  return graph_bytes(model, num_graphs, stage_layers, moe_width_divisor, k_graph_est_per_1024_hidden_gib,
                     k_graph_est_per_layer_gib, k_graph_est_per_moe_unit_gib);
}

}  // namespace headroom::engine
