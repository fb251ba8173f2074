// The terms of vLLM's startup accounting that cannot be derived from the config: activation peak
// of the profile run, non-torch memory, CUDA context baseline and CUDA graph memory. Each is a small
// model of how the term depends on the inputs; the constants are fitted by
// scripts/fit_calibration.py on the calibration measurements (see docs/accuracy.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/units.h"
#include "headroom/vllm_engine.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

struct ActivationInputs {
  int tensor_parallel_size = 1;
  int expert_parallel_size = 1;
  int max_num_seqs = 0;
  int max_num_batched_tokens = 0;
  double dtype_bytes = 2;
  bool last_pp_stage = true;
  int stage_layers = 0;
  bool multimodal = false;  // the profile run encodes dummy images first (first PP stage)
  std::optional<bool> flashinfer_sampler;  // VLLM_USE_FLASHINFER_SAMPLER when given
  // The encoder pass on the dummy multimodal batch (encoder_profile.h), when it is modelled: its
  // peak, and the embeddings it leaves in the encoder cache for the language model's dummy run.
  // Without it a multimodal model keeps max_num_batched_tokens embeddings and no encoder peak.
  std::optional<Bytes> encoder_pass_peak;
  std::optional<Bytes> encoder_cached_outputs;
  bool text_only = false;  // every modality limited to 0: no encoder cache at all
  // The linear layers' kernel as vLLM resolves it (resolved_quantization_method) and the weight
  // bits: a dequantizing kernel's whole-weight transient joins the forward pass (quant_kernels.h).
  std::string linear_method;
  int quant_bits = 0;
  // Model runner v2's dummy sampler as its code reads (v1/worker/gpu/sample/sampler.py): the
  // dummy requests carry no sampling parameters, so it keeps the [R, vocab] logits in the model
  // dtype beside the hidden states, plus a float32 copy before v0.26 (#48641 and #47711 dropped
  // it for requests that need no processing). The fitted constant is the V1 runner's; this is the
  // range's other reading for runs on model runner v2, which no calibration run measures.
  bool runner_v2_sampler = false;
};

struct ActivationEstimate {
  Bytes total = 0;
  Bytes sampler = 0;   // [R, vocab] logits and the top-k/top-p sort path
  Bytes forward = 0;   // dense MLP / attention projections of the dummy forward
  Bytes dequantized = 0;  // a dequantizing kernel's whole-weight transient (in forward)
  Bytes moe = 0;       // fused-MoE intermediate caches
  Bytes encoder = 0;   // multimodal encoder outputs kept in the encoder cache during the profile run
  Bytes encoder_pass = 0;  // the encoder's own peak on the dummy batch (before the language model runs)
  Bytes sampler_rival = 0; // what the sampler's buffers compete with for the peak (the forward pass; before
                           // v0.17 with the fused-MoE caches)
};

// Whether vLLM treats the model as multimodal (it profiles the encoder): a vision tower in the
// config, or an architecture registered as one (…ForConditionalGeneration, VL, Vision, Llava).
bool is_multimodal(const ModelSpec& model);

// Torch peak increase during the profile run (A).
ActivationEstimate estimate_activation(const ModelSpec& model, const VllmVersion& version, const ActivationInputs& in);

// How the GPUs of a tensor-parallel group exchange data, which decides the all-reduce buffers
// (distributed/device_communicators/custom_all_reduce.py: custom all-reduce needs NVLink, or P2P
// between two PCIe GPUs, which consumer boards and T4s lack).
enum class Interconnect {
  nvswitch,  // Hopper/Blackwell SXM boards: custom all-reduce plus symmetric-memory / NVLS buffers
  nvlink,    // NVLink before Hopper (V100, A100, A40 / RTX A6000 bridges): custom all-reduce over NVLink,
             // but no NVLS (NVLink SHARP needs Hopper's NVSwitch): NCCL's buffers are what is left
  pcie,      // no NVLink: NCCL alone
};
Interconnect interconnect_of(const GpuSpec& gpu);

// Non-torch memory increase since the init snapshot (N): kernel images loaded during the profile run
// (by era), plus the communication buffers of the TP group (by interconnect and era) or of the
// pipeline's send/receive.
Bytes estimate_non_torch(const VllmVersion& version, int tensor_parallel_size, int pipeline_parallel_size, const GpuSpec& gpu);

// FlashInfer's workspace for the all-reduce + RMSNorm fusion that vLLM compiles in at TP 2, 4 and
// 8 on NVSwitch Hopper and Blackwell boards from v0.17 (part of N). Zero where the fusion does
// not run: eager mode, data parallelism, another interconnect or GPU, or an older vLLM.
// Derivation in empirical.cc.
Bytes allreduce_fusion_workspace_bytes(const VllmVersion& version, const ResolvedSettings& settings, const GpuSpec& gpu,
                                       int hidden_size, double dtype_bytes);

// NCCL's NVLink SHARP buffers at TP > 2 on NVSwitch boards, allocated at the first NVLS collective
// of the profile run (NCCL >= 2.22 connects algorithms at run time), so part of N. Zero where NCCL
// does not run NVLS: two GPUs or fewer, no NVSwitch, or an NCCL that sets them up at init (before
// vLLM 0.9's torch 2.7). Derivation in empirical.cc.
Bytes nvls_buffer_bytes(const VllmVersion& version, int tensor_parallel_size, const GpuSpec& gpu);

// CUDA context + NCCL memory present at the init snapshot (B): never charged to the budget but
// must fit beside it (the startup free-memory check).
Bytes estimate_baseline(int tensor_parallel_size, int pipeline_parallel_size);

// CUDA graphs captured: one PIECEWISE graph per capture size, plus from v0.11 (#25444,
// FULL_AND_PIECEWISE) one FULL decode graph per size ≤ max_num_seqs (cudagraph_dispatcher.py).
// --compilation-config's cudagraph_mode, where given: NONE captures nothing, PIECEWISE and FULL
// one graph per size, FULL_DECODE_ONLY one per size ≤ max_num_seqs, FULL_AND_PIECEWISE both.
int num_cuda_graphs(const VllmVersion& version, const std::vector<int>& capture_sizes, int max_num_seqs,
                    const std::optional<std::string>& mode = std::nullopt);

// The buffers of the sampler warm-up after graph capture: R dummy requests over the padded
// vocabulary at the sampler era's bytes per logit (the same _dummy_sampler_run as the profile's).
Bytes sampler_warmup_bytes(const VllmVersion& version, int requests, std::int64_t vocab_size,
                           std::optional<bool> flashinfer_sampler = std::nullopt);

// Sampler bytes per [request × padded vocab] logit of the version's top-k/top-p path. V1's sampler
// (v1/sample/ops/topk_topp_sampler.py) takes FlashInfer's kernels when FlashInfer is installed and
// VLLM_USE_FLASHINFER_SAMPLER is not 0 in v0.8-v0.10, where the fitted constant is FlashInfer's;
// with the variable at 0 the PyTorch sort path of v0.11-v0.16 applies, and with it at 1 there the
// FlashInfer constant. From v0.17 (sampler rewritten) and in V0 the variable changes nothing here.
double sampler_bytes_per_logit_for(const VllmVersion& version, std::optional<bool> flashinfer_sampler);

// v0.8-v0.10 V1 without VLLM_USE_FLASHINFER_SAMPLER: whether FlashInfer is installed decides the
// sampler's path, and a plain pip install lacks it ("FlashInfer is not available. Falling back to
// the PyTorch-native implementation of top-p & top-k sampling" in the log).
bool sampler_path_depends_on_flashinfer(const VllmVersion& version, std::optional<bool> flashinfer_sampler);

// Memory CUDA graph capture takes (G), for the number of captured graphs and the stage's layers.
Bytes estimate_cuda_graph(const ModelSpec& model, int num_graphs, int stage_layers, int moe_width_divisor);

// The share of an MoE model's fused-MoE intermediate caches one GPU holds in its captured graphs:
// per token topk × ((2I + I) / d + H) (fused_moe.py's intermediate_cache1..3) relative to d = 1,
// where d is the TP size that splits the experts' width (1 with expert parallelism). 1 on one GPU,
// 0 for dense models. Across models the MoE term stays one constant: the calibration's MoE models
// span too narrow a range of widths to fit how it grows with them.
double moe_graph_units(const ModelSpec& model, int moe_width_divisor);

// What vLLM's own profile estimates for the graphs before sizing the KV cache (v0.21+, or
// VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1): gpu_model_runner.py profile_cudagraph_memory
// captures the two largest sizes of each mode and extrapolates the second over the rest, which is
// not what the full capture later takes ("CUDA graph pool memory: X GiB (actual), Y GiB
// (estimated)"). Same form as estimate_cuda_graph, fitted on the logged estimates.
Bytes estimate_cuda_graph_profile(const ModelSpec& model, int num_graphs, int stage_layers, int moe_width_divisor);

}  // namespace headroom::engine
