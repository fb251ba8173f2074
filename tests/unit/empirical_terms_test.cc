// How the empirical terms depend on what drives them: the interconnect of a TP group, the number
// of CUDA graphs captured; and, against vLLM's own logs, runs outside the H100 sweep that those
// mechanisms decide (values from calibration/startup.jsonl's log lines).
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/empirical.h"
#include "headroom/vllm_config.h"
#include "unit/engine_test_support.h"

namespace headroom {
namespace {

using test_support::gpus;
using test_support::model;
using test_support::run;

TEST(EmpiricalTerms, NvlinkBeforeHopperCarriesNcclBuffersButNoNvls) {
  const VllmVersion v{0, 10, 1};
  const GpuSetup a100 = gpus("A100 80GB"), pcie = gpus("A100 80GB PCIe"), h100 = gpus("H100");
  ASSERT_EQ(engine::interconnect_of(a100.gpu), engine::Interconnect::nvlink);
  ASSERT_EQ(engine::interconnect_of(pcie.gpu), engine::Interconnect::pcie);
  // NVLink SHARP (NVLS) needs Hopper's NVSwitch: an A100 SXM board's TP group holds what a PCIe
  // board's does, and less than an H100 board's.
  EXPECT_EQ(engine::estimate_non_torch(v, 2, 1, a100.gpu), engine::estimate_non_torch(v, 2, 1, pcie.gpu));
  EXPECT_LT(engine::estimate_non_torch(v, 2, 1, a100.gpu), engine::estimate_non_torch(v, 2, 1, h100.gpu));
  EXPECT_GT(engine::estimate_non_torch(v, 2, 1, a100.gpu), engine::estimate_non_torch(v, 1, 1, a100.gpu));
}

// NCCL src/transport/nvls.cc: no NVLS with two GPUs or fewer (ncclNvlsInit); otherwise
// nvlsChannels x 2 x 1 MiB (128 KiB chunk x 8 steps) per local rank: 16 channels on sm90, 32 on
// sm100 in NCCL 2.26 (torch 2.7, vLLM 0.9-0.10.1), 24 on one sm100 node from 2.27 (torch 2.8).
TEST(EmpiricalTerms, NvlsBuffersFollowNcclsFormula) {
  const GpuSetup h100 = gpus("H100"), b200 = gpus("B200"), a100 = gpus("A100 80GB");
  constexpr Bytes mib = Bytes{1} << 20;
  const VllmVersion v19{0, 19, 0};
  EXPECT_EQ(engine::nvls_buffer_bytes(v19, 2, h100.gpu), 0);
  EXPECT_EQ(engine::nvls_buffer_bytes(v19, 4, h100.gpu), 16 * 2 * 4 * mib);
  EXPECT_EQ(engine::nvls_buffer_bytes(v19, 8, h100.gpu), 16 * 2 * 8 * mib);
  EXPECT_EQ(engine::nvls_buffer_bytes(v19, 8, b200.gpu), 24 * 2 * 8 * mib);
  EXPECT_EQ(engine::nvls_buffer_bytes(VllmVersion{0, 10, 1}, 4, b200.gpu), 32 * 2 * 4 * mib);
  EXPECT_EQ(engine::nvls_buffer_bytes(v19, 8, a100.gpu), 0);  // no NVSwitch multicast before Hopper
  // NCCL 2.21 (torch 2.6, vLLM 0.8) sets the buffers up at init: the init snapshot holds them.
  EXPECT_EQ(engine::nvls_buffer_bytes(VllmVersion{0, 8, 5}, 8, h100.gpu), 0);
  // The TP-group share grows by exactly the NVLS buffers from TP 2 to TP 8.
  EXPECT_NEAR(static_cast<double>(engine::estimate_non_torch(v19, 8, 1, h100.gpu) -
                                  engine::estimate_non_torch(v19, 2, 1, h100.gpu)),
              static_cast<double>(16 * 2 * 8 * mib), 1024.0);
}

// fused_moe.py's intermediate caches per token: topk × ((2I + I) / TP + H). Qwen3-30B-A3B's config:
// moe_intermediate_size 768, hidden_size 2048; at TP 4 a GPU holds (576 + 2048) / (2304 + 2048).
TEST(EmpiricalTerms, MoeGraphUnitsFollowTheFusedMoeCaches) {
  const ModelSpec moe = model("Qwen/Qwen3-30B-A3B");
  EXPECT_DOUBLE_EQ(engine::moe_graph_units(moe, 1), 1.0);
  EXPECT_DOUBLE_EQ(engine::moe_graph_units(moe, 4), (3 * 768 / 4.0 + 2048) / (3 * 768 + 2048.0));
  EXPECT_EQ(engine::moe_graph_units(model("meta-llama/Llama-3.1-8B-Instruct"), 1), 0.0);
  // Splitting the experts' width over TP shrinks the MoE share of the graphs.
  EXPECT_LT(engine::estimate_cuda_graph(moe, 102, 48, 4), engine::estimate_cuda_graph(moe, 102, 48, 1));
}

TEST(EmpiricalTerms, MoeGraphMemoryScalesWithTheGraphsCaptured) {
  const ModelSpec moe = model("Qwen/Qwen3-30B-A3B");
  const Bytes all = engine::estimate_cuda_graph(moe, 102, 48, 1), few = engine::estimate_cuda_graph(moe, 12, 48, 1);
  EXPECT_NEAR(static_cast<double>(few), static_cast<double>(all) * 12.0 / 102.0, 2.0);
  EXPECT_EQ(engine::estimate_cuda_graph(moe, 0, 48, 1), 0);
}

// Qwen2-7B-Instruct on two A100 80GB SXM in one node, vLLM 0.10.1.1, gpu_memory_utilization 0.25,
// max_model_len 16384: "Available KV cache memory: 12.02 GiB". The NVSwitch all-reduce share of an
// H100 board would leave 0.36 GiB less.
TEST(EmpiricalTerms, A100TensorParallelKvMatchesTheLog) {
  VllmFlags f;
  f.tensor_parallel_size = 2;
  f.gpu_memory_utilization = 0.25;
  f.max_model_len = 16384;
  Prediction p = run(model("Qwen/Qwen2-7B-Instruct"), gpus("A100 80GB", 2), f, VllmVersion{0, 10, 1, 1});
  EXPECT_NEAR(to_gib(p.memory.kv_cache), 12.02, 0.01 * 12.02);
}

// Qwen3-Coder-30B-A3B-Instruct on an A100-SXM4-80GB, vLLM 0.26.1rc1, max_num_seqs 16 (12 graphs):
// "Available KV cache memory: 13.84 GiB", with 0.15 GiB of CUDA graphs estimated into the budget.
TEST(EmpiricalTerms, FewGraphsOfAnMoeModelLeaveTheLoggedKv) {
  VllmFlags f;
  f.max_model_len = 131072;
  f.max_num_seqs = 16;
  f.gpu_memory_utilization = 0.9;
  GpuSetup g = gpus("A100 80GB");
  g.gpu.total_bytes = from_gib(79.25);  // the log's "Free memory on device (78.84/79.25 GiB)"
  Prediction p = run(model("Qwen/Qwen3-Coder-30B-A3B-Instruct"), g, f, VllmVersion{0, 26, 1});
  EXPECT_NEAR(to_gib(p.memory.cuda_graph), 0.15, 0.05);
  EXPECT_NEAR(to_gib(p.memory.kv_cache), 13.84, 0.01 * 13.84);
}

// VLLM_USE_FLASHINFER_SAMPLER picks the sampler's path in V1 before the v0.17 rewrite: at 0 a
// v0.10 run takes the sort path of v0.11-v0.16, at 1 a v0.13 run takes v0.8-v0.10's FlashInfer
// kernels; from v0.17 it changes nothing here.
TEST(EmpiricalTerms, FlashinferSamplerVariableSelectsTheSamplerPath) {
  auto cmd = parse_vllm_command({"VLLM_USE_FLASHINFER_SAMPLER=0", "vllm", "serve", "m"});
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  EXPECT_EQ(cmd->flags.use_flashinfer_sampler, false);
  const VllmVersion v010{0, 10, 0}, v013{0, 13, 0}, v019{0, 19, 0};
  auto sampler = [](VllmVersion v, std::optional<bool> fi) {
    return engine::sampler_warmup_bytes(v, 1024, 128256, fi);
  };
  EXPECT_EQ(sampler(v010, false), sampler(v013, std::nullopt));
  EXPECT_EQ(sampler(v013, true), sampler(v010, std::nullopt));
  EXPECT_LT(sampler(v010, std::nullopt), sampler(v013, std::nullopt));
  EXPECT_EQ(sampler(v019, false), sampler(v019, std::nullopt));
  EXPECT_EQ(sampler(v019, true), sampler(v019, std::nullopt));
  EXPECT_TRUE(engine::sampler_path_depends_on_flashinfer(v010, std::nullopt));
  EXPECT_FALSE(engine::sampler_path_depends_on_flashinfer(v010, true));
  EXPECT_FALSE(engine::sampler_path_depends_on_flashinfer(v013, std::nullopt));
}

// On v0.8-v0.10 without the variable, `check` states the ambiguity: the KV range's low end is what
// the sort path would leave; with the variable set the path is known and the run is in range.
TEST(EmpiricalTerms, UnsetFlashinferSamplerOnV010WidensTheLowSide) {
  VllmFlags f;
  f.max_model_len = 8192;
  const ModelSpec m = model("meta-llama/Llama-3.1-8B-Instruct");
  Prediction unset = run(m, gpus("H100"), f, VllmVersion{0, 10, 0});
  ASSERT_TRUE(unset.uncertainty.has_value());
  bool said = false;
  for (const auto& r : unset.uncertainty->reasons) said = said || r.find("FlashInfer is not available") != std::string::npos;
  EXPECT_TRUE(said);
  f.use_flashinfer_sampler = false;
  Prediction sort = run(m, gpus("H100"), f, VllmVersion{0, 10, 0});
  EXPECT_FALSE(sort.uncertainty.has_value());
  // Each end also allows 1.1 % of the KV memory, the held-out error inside the calibrated region.
  const double base = 0.011 * static_cast<double>(unset.memory.kv_cache);
  EXPECT_NEAR(static_cast<double>(unset.uncertainty->kv_cache_low), static_cast<double>(sort.memory.kv_cache) - base, 2.0);
  EXPECT_NEAR(static_cast<double>(unset.uncertainty->kv_cache_high), static_cast<double>(unset.memory.kv_cache) + base, 2.0);
  f.use_flashinfer_sampler = true;
  Prediction kernels = run(m, gpus("H100"), f, VllmVersion{0, 10, 0});
  EXPECT_FALSE(kernels.uncertainty.has_value());
  EXPECT_EQ(kernels.memory.kv_cache, unset.memory.kv_cache);
}

// On a GPU the calibration does not measure, the range allows 30 % of the activation for other
// kernels, but not of the sampler's [R, vocab] buffers, which torch sizes by their shapes. Llama-3.1-8B
// on an A100 at v0.19's defaults (256 sequences over a 128,256-token vocabulary against a forward pass
// of 2,048 tokens): the sampler sets the peak, so the range is half the non-torch term (at least
// 0.1 GiB) and the calibrated 1.1 % either side. With the sampler's share shrunk to one sequence the
// forward pass sets the peak and its 30 % is back.
TEST(EmpiricalTerms, AnotherArchitectureAllowsForTheForwardPassNotTheSamplersBuffers) {
  VllmFlags f;
  f.max_model_len = 8192;
  const ModelSpec m = model("meta-llama/Llama-3.1-8B-Instruct");
  Prediction p = run(m, gpus("A100 80GB"), f, VllmVersion{0, 19, 0});
  ASSERT_TRUE(p.uncertainty.has_value());
  const double kv = static_cast<double>(p.memory.kv_cache);
  const double half = std::max(0.5 * static_cast<double>(p.memory.non_torch), static_cast<double>(from_gib(0.1))) + 0.011 * kv;
  EXPECT_NEAR(static_cast<double>(p.uncertainty->kv_cache_high) - kv, half, 2.0);
  EXPECT_NEAR(kv - static_cast<double>(p.uncertainty->kv_cache_low), half, 2.0);
  f.max_num_seqs = 1;
  Prediction one = run(m, gpus("A100 80GB"), f, VllmVersion{0, 19, 0});
  ASSERT_TRUE(one.uncertainty.has_value());
  const double kv1 = static_cast<double>(one.memory.kv_cache);
  const double half1 = 0.3 * static_cast<double>(one.memory.activation_peak) +
                       std::max(0.5 * static_cast<double>(one.memory.non_torch), static_cast<double>(from_gib(0.1))) + 0.011 * kv1;
  EXPECT_NEAR(static_cast<double>(one.uncertainty->kv_cache_high) - kv1, half1, 2.0);
}

// What vLLM subtracts from v0.21 is its profile's own estimate, which the logs print next to the
// full capture: Llama-3.1-8B-Instruct on an H100, v0.19 defaults, "Estimated CUDA graph memory:
// 0.84 GiB total" and "CUDA graph pool memory: 0.91 GiB (actual), 0.84 GiB (estimated)".
TEST(EmpiricalTerms, ChargedGraphMemoryIsVllmsEstimateNotTheCapture) {
  VllmFlags f;
  f.max_model_len = 8192;
  f.estimate_cuda_graphs = true;
  Prediction est = run(model("meta-llama/Llama-3.1-8B-Instruct"), gpus("H100"), f, VllmVersion{0, 19, 0});
  EXPECT_NEAR(to_gib(est.memory.cuda_graph), 0.84, 0.1 * 0.84);
  f.estimate_cuda_graphs = false;
  Prediction capture = run(model("meta-llama/Llama-3.1-8B-Instruct"), gpus("H100"), f, VllmVersion{0, 19, 0});
  EXPECT_NEAR(to_gib(capture.memory.cuda_graph), 0.91, 0.1 * 0.91);
  // Only the charged estimate moves the KV cache.
  EXPECT_NEAR(to_gib(capture.memory.kv_cache - est.memory.kv_cache), to_gib(est.memory.cuda_graph), 0.01);
}


// FlashInfer's all-reduce + RMSNorm fusion workspace (empirical.cc): three SymmDeviceMemory buffers,
// each rounded up to the 512 MiB multicast granularity. On sm90 TP 2 with hidden 8192 in bf16 the
// 64 MiB max size gives M = 4096 rows: data 128 MiB, Lamport 384 MiB, flags 2 KiB: 3 x 512 MiB. On
// sm103 TP 4 (64 MiB) data is 256 MiB and Lamport 768 MiB: 512 + 512 + 1024 MiB. Nothing where the
// pass does not run: eager, data parallelism, no NVSwitch, or before v0.17.
TEST(EmpiricalTerms, AllReduceFusionWorkspaceFollowsFlashInfersRounding) {
  ResolvedSettings s;
  s.tensor_parallel_size = 2;
  s.max_num_batched_tokens = 8192;
  const GpuSpec h100 = gpus("H100").gpu, b300 = gpus("B300").gpu, a100 = gpus("A100 80GB").gpu;
  const VllmVersion v19{0, 19, 0};
  const Bytes mib = 1024 * 1024;
  EXPECT_EQ(engine::allreduce_fusion_workspace_bytes(v19, s, h100, 8192, 2.0), 3 * 512 * mib);
  EXPECT_EQ(engine::allreduce_fusion_workspace_bytes(v19, s, a100, 8192, 2.0), 0);
  EXPECT_EQ(engine::allreduce_fusion_workspace_bytes(VllmVersion{0, 16, 0}, s, h100, 8192, 2.0), 0);
  ResolvedSettings eager = s;
  eager.enforce_eager = true;
  EXPECT_EQ(engine::allreduce_fusion_workspace_bytes(v19, eager, h100, 8192, 2.0), 0);
  ResolvedSettings dp = s;
  dp.data_parallel_size = 2;
  EXPECT_EQ(engine::allreduce_fusion_workspace_bytes(v19, dp, h100, 8192, 2.0), 0);
  ResolvedSettings tp4 = s;
  tp4.tensor_parallel_size = 4;
  EXPECT_EQ(engine::allreduce_fusion_workspace_bytes(v19, tp4, b300, 8192, 2.0), 2048 * mib);
  ResolvedSettings tp3 = s;
  tp3.tensor_parallel_size = 3;
  EXPECT_EQ(engine::allreduce_fusion_workspace_bytes(v19, tp3, h100, 8192, 2.0), 0);
}

// From v0.26 (#49208) vLLM's non-KV memory is the device free-memory drop since the init snapshot,
// so the runner's persistent buffers count. Model Runner V2 (dense Qwen3 from v0.25):
// penalties.py's output_bin_counts [256, 151936] int32 plus prompt_bin_mask and the structured
// outputs' grammar_bitmask, [256, cdiv(151936, 32) = 4748] int32 each. The V1 runner (MoE models
// before v0.29): gpu_model_runner.py's inputs_embeds [max_num_tokens, 2048] in bfloat16.
TEST(EmpiricalTerms, RunnerBuffersJoinNonTorchMemoryFromV026) {
  VllmFlags f;
  f.max_model_len = 16384;
  const GpuSetup rtx5090 = gpus("RTX 5090"), h100 = gpus("H100");
  const ModelSpec dense = model("Qwen/Qwen3-14B");
  const Prediction before = run(dense, rtx5090, f, VllmVersion{0, 25, 1}), after = run(dense, rtx5090, f, VllmVersion{0, 28, 0});
  ASSERT_EQ(after.settings.max_num_seqs, 256);
  EXPECT_EQ(after.memory.non_torch - before.memory.non_torch, Bytes{256} * 151936 * 4 + 2 * Bytes{256} * 4748 * 4);
  const ModelSpec moe = model("Qwen/Qwen3-30B-A3B");
  const Prediction v25 = run(moe, h100, f, VllmVersion{0, 25, 1}), v26 = run(moe, h100, f, VllmVersion{0, 26, 0});
  EXPECT_EQ(v26.memory.non_torch - v25.memory.non_torch, Bytes{v26.settings.max_num_batched_tokens} * 2048 * 2);
}

// VLLM_USE_V2_MODEL_RUNNER=0 keeps a dense model on the V1 runner at v0.28: its profile estimates
// the CUDA graphs and subtracts them (model runner v2 reserved none before v0.29, #49224), and its
// persistent buffer is inputs_embeds [max_num_batched_tokens, 5120] bfloat16 instead of model runner
// v2's penalty counts.
TEST(EmpiricalTerms, ModelRunnerVariablePicksTheRunner) {
  auto cmd = parse_vllm_command({"VLLM_USE_V2_MODEL_RUNNER=0", "vllm", "serve", "m"});
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  ASSERT_EQ(cmd->flags.use_v2_model_runner, false);
  VllmFlags f;
  f.max_model_len = 16384;
  const ModelSpec dense = model("Qwen/Qwen3-14B");
  const Prediction v2 = run(dense, gpus("RTX 5090"), f, VllmVersion{0, 28, 0});
  f.use_v2_model_runner = false;
  const Prediction v1 = run(dense, gpus("RTX 5090"), f, VllmVersion{0, 28, 0});
  EXPECT_FALSE(v2.settings.estimate_cuda_graphs);
  EXPECT_TRUE(v1.settings.estimate_cuda_graphs);
  EXPECT_EQ(v2.memory.non_torch - v1.memory.non_torch,
            Bytes{256} * 151936 * 4 + 2 * Bytes{256} * 4748 * 4 - Bytes{v1.settings.max_num_batched_tokens} * 5120 * 2);
  // Before model runner v2 existed the variable changes nothing.
  const Prediction old_default = run(dense, gpus("RTX 5090"), VllmFlags{}, VllmVersion{0, 11, 0});
  VllmFlags on;
  on.use_v2_model_runner = true;
  EXPECT_EQ(run(dense, gpus("RTX 5090"), on, VllmVersion{0, 11, 0}).memory.kv_cache, old_default.memory.kv_cache);
}

// Model runner v2's dummy sampler, as its code reads, keeps only the bf16 logits [R, vocab] beside
// the hidden states (its dummy requests carry no sampling parameters; from v0.27 no float32 copy):
// for Llama-3.1-8B on an H100 at v0.26 (R 1024, 8192 tokens) the forward pass then sets the peak,
// 8192 × 2 × (3 × 14336 + 4 × 4096) bytes, below the fitted V1 constant's 15.4 × 1024 × 128256.
// v0.26 on Hopper is otherwise inside the calibrated region: the range's high side allows the
// difference and its low side only the calibrated error. On the V1 runner there is nothing to allow.
TEST(EmpiricalTerms, ModelRunnerV2SamplerIsTheRangesOtherReading) {
  VllmFlags f;
  f.max_model_len = 8192;
  const ModelSpec llama = model("meta-llama/Llama-3.1-8B-Instruct");
  const Prediction v2 = run(llama, gpus("H100"), f, VllmVersion{0, 26, 0});
  ASSERT_EQ(v2.settings.max_num_seqs, 1024);
  ASSERT_EQ(v2.settings.max_num_batched_tokens, 8192);
  ASSERT_TRUE(v2.uncertainty.has_value());
  const Bytes less = static_cast<Bytes>(15.4 * 1024 * 128256) - Bytes{8192} * 2 * (3 * 14336 + 4 * 4096);
  EXPECT_GE(v2.uncertainty->kv_cache_high - v2.memory.kv_cache, less);
  EXPECT_LE(static_cast<double>(v2.memory.kv_cache - v2.uncertainty->kv_cache_low), 0.0111 * static_cast<double>(v2.memory.kv_cache));
  auto mentions_v2 = [](const Prediction& p) {
    if (!p.uncertainty) return false;
    for (const auto& r : p.uncertainty->reasons)
      if (r.find("model runner v2") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(mentions_v2(v2));
  f.use_v2_model_runner = false;
  EXPECT_FALSE(mentions_v2(run(llama, gpus("H100"), f, VllmVersion{0, 26, 0})));
}

// From v0.26 vLLM's CUDA graph estimate charges a profiling transient as graph memory on Gated
// DeltaNet hybrids (#50780: 18-24 % less KV cache); the range's low side allows the larger share.
// Without the estimate (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0), or before v0.26, nothing.
TEST(KvUncertainty, GatedDeltaNetHybridsAllowForTheGraphEstimatesTransient) {
  const ModelSpec m = model("Qwen/Qwen3.5-9B");
  VllmFlags f;
  f.max_model_len = 32768;
  auto names_it = [](const Prediction& p) {
    if (!p.uncertainty) return false;
    for (const auto& r : p.uncertainty->reasons)
      if (r.find("#50780") != std::string::npos) return true;
    return false;
  };
  const Prediction v26 = run(m, gpus("H100"), f, VllmVersion{0, 26, 0});
  ASSERT_TRUE(names_it(v26));
  EXPECT_GE(static_cast<double>(v26.memory.kv_cache - v26.uncertainty->kv_cache_low), 0.24 * static_cast<double>(v26.memory.kv_cache));
  EXPECT_FALSE(names_it(run(m, gpus("H100"), f, VllmVersion{0, 22, 0})));
  f.estimate_cuda_graphs = false;
  EXPECT_FALSE(names_it(run(m, gpus("H100"), f, VllmVersion{0, 26, 0})));
}

}  // namespace
}  // namespace headroom
