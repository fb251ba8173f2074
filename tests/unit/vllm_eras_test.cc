// The v0.25–v0.33 rules, each at the first release that has it (../shared/spec/vllm-v026-v033.md).
#include <gtest/gtest.h>

#include "engine/vllm_defaults.h"
#include "engine/vllm_eras.h"
#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/report.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"

namespace headroom {
namespace {

ModelSpec model(const std::string& id) {
  auto m = catalog_model(id);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().to_string());
  return m ? *m : ModelSpec{};
}

GpuSpec gpu(const std::string& name) {
  auto g = GpuCatalog::builtin().find(name);
  EXPECT_TRUE(g.has_value());
  return g ? *g : GpuSpec{};
}

TEST(VllmEras, DefaultIsV033ModelledWithV031Rules) {
  EXPECT_EQ(VllmVersion::newest_modelled().to_string(), "0.33.0");
  auto r = engine::era_rules(VllmVersion::newest_modelled(), model("Qwen/Qwen3-8B"));
  EXPECT_EQ(r.rules.to_string(), "0.31.0");
  EXPECT_EQ(r.modelled_with, "v0.33 modelled with v0.31 rules");
}

TEST(VllmEras, DescribedVersionsNeedNoNote) {
  EXPECT_EQ(engine::era_rules(VllmVersion{0, 31, 1}, model("Qwen/Qwen3-8B")).modelled_with, "");
  EXPECT_EQ(engine::era_rules(VllmVersion{0, 26, 0}, model("Qwen/Qwen3-8B")).modelled_with, "");
  EXPECT_EQ(engine::era_rules(VllmVersion{0, 32, 0}, model("Qwen/Qwen3-8B")).modelled_with,
            "v0.32 modelled with v0.31 rules");
}

// #44443 (v0.25) moved dense models to model runner v2, whose profile_cudagraph_memory returned 0
// until #53306 (v0.29); MoE models stayed on MRv1 (and its estimate) until v0.29.
TEST(VllmEras, ModelRunnerV2ReservesNoGraphMemoryBeforeV029) {
  ModelSpec dense = model("Qwen/Qwen3-8B");
  ModelSpec moe = model("Qwen/Qwen3-30B-A3B-Instruct-2507");
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 24}, dense).graph_estimate_is_zero);
  EXPECT_TRUE(engine::era_rules(VllmVersion{0, 25}, dense).graph_estimate_is_zero);
  EXPECT_TRUE(engine::era_rules(VllmVersion{0, 28}, dense).graph_estimate_is_zero);
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 28}, moe).graph_estimate_is_zero);
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 29}, dense).graph_estimate_is_zero);
  EXPECT_TRUE(engine::era_rules(VllmVersion{0, 29}, moe).model_runner_v2);
}

TEST(VllmEras, GraphMemoryIsNotSubtractedOnMrv2BeforeV029) {
  ModelSpec dense = model("Qwen/Qwen3-8B");
  GpuSetup g;
  g.gpu = gpu("H100");
  VllmFlags f;
  f.max_model_len = 8192;
  auto v28 = predict(dense, g, f, VllmVersion{0, 28});
  auto v29 = predict(dense, g, f, VllmVersion{0, 29});
  ASSERT_TRUE(v28 && v29);
  EXPECT_FALSE(v28->settings.estimate_cuda_graphs);
  EXPECT_TRUE(v29->settings.estimate_cuda_graphs);
  EXPECT_EQ(v28->memory.kv_cache - v29->memory.kv_cache, v29->memory.cuda_graph);
}

// V0 v0.6.4 (#9516) takes non-torch memory as the device's use less torch's allocations, so the
// CUDA context is charged to the budget; V1 from v0.9.1 measures from the init snapshot and does
// not. The report shows the charged row, so that its rows add up to the budget.
TEST(VllmEras, TheChargedBaselineIsShownWhereTheVersionChargesIt) {
  ModelSpec dense = model("meta-llama/Llama-3.1-8B-Instruct");
  GpuSetup g;
  g.gpu = gpu("RTX 3090");
  VllmFlags f;
  f.max_model_len = 20000;
  auto v064 = predict(dense, g, f, VllmVersion{0, 6, 4});
  auto v019 = predict(dense, g, f, VllmVersion{0, 19});
  ASSERT_TRUE(v064 && v019);
  const MemoryBreakdown& m = v064->memory;
  EXPECT_EQ(m.charged_baseline, m.baseline);
  EXPECT_EQ(m.budget - m.weights - m.activation_peak - m.non_torch - m.charged_baseline, m.kv_cache);
  EXPECT_EQ(v019->memory.charged_baseline, 0);
  EXPECT_NE(render_prediction_text(dense, g, *v064, TextStyle::plain).find("cuda context, other processes"), std::string::npos);
  EXPECT_EQ(render_prediction_text(dense, g, *v019, TextStyle::plain).find("cuda context, other processes"), std::string::npos);
}

// arg_utils.py get_batch_defaults at the v0.28.0 tag (#51726): ≥ 160 GiB devices default to 16384
// batched tokens for the API server as well, and 1024 sequences.
TEST(VllmEras, BigMemoryTierFromV028) {
  VllmFlags f;
  auto v27 = engine::resolve_batch_limits(VllmVersion{0, 27}, gpu("B200"), f, 32768, true);
  auto v28 = engine::resolve_batch_limits(VllmVersion{0, 28}, gpu("B200"), f, 32768, true);
  EXPECT_EQ(v27.max_num_batched_tokens, 8192);
  EXPECT_EQ(v28.max_num_batched_tokens, 16384);
  EXPECT_EQ(v28.max_num_seqs, 1024);
  auto h100 = engine::resolve_batch_limits(VllmVersion{0, 28}, gpu("H100"), f, 32768, true);
  EXPECT_EQ(h100.max_num_batched_tokens, 8192);
}

// arg_utils.py get_batch_defaults asks NvmlCudaPlatform.get_device_total_memory, which calls
// nvmlDeviceGetMemoryInfo; on GB10's unified memory NVML answers NotSupported, the bare `except`
// sets device_memory = 0, and the 119.7 GiB device takes the small-GPU defaults: 256 sequences and
// 2048 batched tokens for the API server (the NGC v0.13 log of calibration row
// wild-gb10-gptoss20b-abliterated-gmu025-v0130nv prints "max_num_batched_tokens=2048" with no such
// flag given). Not the ≥ 160 GiB tier of v0.28 either.
TEST(VllmEras, Gb10TakesTheSmallGpuDefaultsBecauseNvmlCannotReportItsMemory) {
  VllmFlags f;
  const GpuSpec gb10 = gpu("GB10");
  ASSERT_TRUE(gb10.nvml_memory_unsupported);
  ASSERT_GT(gb10.total_gib(), 70.0);
  EXPECT_FALSE(engine::is_big_gpu(VllmVersion{0, 13}, gb10));
  for (const auto& v : {VllmVersion{0, 13}, VllmVersion{0, 28}}) {
    auto limits = engine::resolve_batch_limits(v, gb10, f, 8192, true);
    EXPECT_EQ(limits.max_num_seqs, 256) << v.to_string();
    EXPECT_EQ(limits.max_num_batched_tokens, 2048) << v.to_string();
  }
  // A GPU of the same size whose NVML reports its memory is a big one.
  GpuSpec reported = gb10;
  reported.nvml_memory_unsupported = false;
  EXPECT_EQ(engine::resolve_batch_limits(VllmVersion{0, 13}, reported, f, 8192, true).max_num_seqs, 1024);
}

// config/vllm.py _set_cudagraph_sizes (#49390, v0.28): SM100-family GPUs capture up to 1024:
// [1, 2, 4] + 8..248 step 8 + 256..1024 step 16 = 3 + 31 + 49 = 83 sizes, against 51 on Hopper.
TEST(VllmEras, BlackwellCapturesUpTo1024FromV028) {
  EXPECT_TRUE(engine::is_sm100_family(gpu("B200")));
  EXPECT_FALSE(engine::is_sm100_family(gpu("H100")));
  EXPECT_FALSE(engine::is_sm100_family(gpu("RTX 5090")));
  EXPECT_EQ(engine::cudagraph_capture_sizes(VllmVersion{0, 28}, 1024, 16384, {.sm100_family = true}).size(), 83u);
  EXPECT_EQ(engine::cudagraph_capture_sizes(VllmVersion{0, 28}, 1024, 16384).size(), 51u);
  EXPECT_EQ(engine::cudagraph_capture_sizes(VllmVersion{0, 27}, 1024, 16384, {.sm100_family = true}).size(), 51u);
}

// --performance-mode (#34936, v0.17). engine/arg_utils.py: "throughput" doubles max_num_batched_tokens
// and max_num_seqs where the user left them to the default, before the max with max_model_len
// (chunked prefill off) and the cap at max_num_seqs x max_model_len. A small GPU's API-server
// defaults are 2048 tokens and 256 sequences, an H100's 8192 and 1024.
TEST(VllmEras, ThroughputModeDoublesTheDefaultBatchLimitsFromV017) {
  VllmFlags f;
  f.performance_mode = "throughput";
  auto small = engine::resolve_batch_limits(VllmVersion{0, 17}, gpu("RTX 4090"), f, 32768, true);
  EXPECT_EQ(small.max_num_batched_tokens, 4096);
  EXPECT_EQ(small.max_num_seqs, 512);
  auto h100 = engine::resolve_batch_limits(VllmVersion{0, 20}, gpu("H100"), f, 32768, true);
  EXPECT_EQ(h100.max_num_batched_tokens, 16384);
  EXPECT_EQ(h100.max_num_seqs, 2048);
  // A value the user gave is not doubled.
  f.max_num_seqs = 64;
  auto given = engine::resolve_batch_limits(VllmVersion{0, 20}, gpu("H100"), f, 32768, true);
  EXPECT_EQ(given.max_num_seqs, 64);
  EXPECT_EQ(given.max_num_batched_tokens, 16384);
  // Without chunked prefill the doubled default is still raised to max_model_len.
  f.max_num_seqs.reset();
  EXPECT_EQ(engine::resolve_batch_limits(VllmVersion{0, 20}, gpu("RTX 4090"), f, 32768, false).max_num_batched_tokens, 32768);
  // "balanced" (vLLM's default) and versions before the flag change nothing.
  f.performance_mode = "balanced";
  EXPECT_EQ(engine::resolve_batch_limits(VllmVersion{0, 20}, gpu("RTX 4090"), f, 32768, true).max_num_batched_tokens, 2048);
  f.performance_mode = "throughput";
  EXPECT_EQ(engine::resolve_batch_limits(VllmVersion{0, 16}, gpu("RTX 4090"), f, 32768, true).max_num_batched_tokens, 2048);
}

// config/vllm.py _set_cudagraph_sizes with performance_mode "interactivity": every size from 1 to
// min(max capture, 32) in place of 1, 2 and 4. At 256 sequences and 8192 batched tokens the maximum
// capture is min(256 x 2, 512) = 512: 1..32, 40..248 step 8, 256..512 step 16 = 32 + 27 + 17 = 76
// sizes, against 3 + 31 + 17 = 51. A maximum capture of 10 (5 sequences) gives 1..10.
TEST(VllmEras, InteractivityModeCapturesEverySizeUpTo32FromV017) {
  EXPECT_EQ(engine::cudagraph_capture_sizes(VllmVersion{0, 20}, 256, 8192, {.interactivity = true}).size(), 76u);
  EXPECT_EQ(engine::cudagraph_capture_sizes(VllmVersion{0, 20}, 256, 8192).size(), 51u);
  EXPECT_EQ(engine::cudagraph_capture_sizes(VllmVersion{0, 16}, 256, 8192, {.interactivity = true}).size(), 51u);
  std::vector<int> ten;
  for (int i = 1; i <= 10; ++i) ten.push_back(i);
  auto small = engine::cudagraph_capture_sizes(VllmVersion{0, 20}, 5, 8192, {.interactivity = true});
  EXPECT_EQ(std::vector<int>(small.begin(), small.begin() + 10), ten);
  EXPECT_EQ(small.size(), 10u);
}

// The flag from a command line and from LLM(...), end to end: interactivity captures more graphs
// (more graph memory outside the budget), throughput runs with the doubled limits; before v0.17
// vLLM's argparse refuses the flag (the v0.17.0 release added it).
TEST(VllmEras, PerformanceModeFromTheCommandLine) {
  GpuSetup g;
  g.gpu = gpu("H100");
  auto run = [&](const std::vector<std::string>& args, VllmVersion v) {
    auto cmd = parse_vllm_command(args);
    EXPECT_TRUE(cmd.has_value()) << (cmd ? "" : cmd.error().to_string());
    return predict(model("Qwen/Qwen3-8B"), g, cmd->flags, v);
  };
  auto balanced = run({"--max-model-len", "8192"}, VllmVersion{0, 20});
  auto interactive = run({"--max-model-len", "8192", "--performance-mode", "interactivity"}, VllmVersion{0, 20});
  auto throughput = run({"--max-model-len", "8192", "--performance-mode=throughput"}, VllmVersion{0, 20});
  ASSERT_TRUE(balanced && interactive && throughput);
  EXPECT_GT(interactive->memory.cuda_graph, balanced->memory.cuda_graph);
  EXPECT_EQ(interactive->settings.performance_mode, "interactivity");
  EXPECT_EQ(throughput->settings.max_num_batched_tokens, 16384);
  EXPECT_EQ(throughput->settings.max_num_seqs, 2048);
  auto old = run({"--max-model-len", "8192", "--performance-mode", "throughput"}, VllmVersion{0, 16});
  ASSERT_TRUE(old);
  ASSERT_TRUE(old->failure.has_value());
  EXPECT_EQ(old->failure->message, "vllm serve: error: unrecognized arguments: --performance-mode throughput");
  EXPECT_EQ(old->settings.performance_mode, "");
  auto bad = parse_vllm_command({"--performance-mode", "fast"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().to_string().find("invalid choice: 'fast' (choose from 'balanced', 'interactivity', 'throughput')"),
            std::string::npos);
  auto llm = parse_llm_call(R"(LLM(model="Qwen/Qwen3-8B", performance_mode="interactivity"))");
  ASSERT_TRUE(llm.has_value());
  EXPECT_EQ(llm->flags.performance_mode.value_or(""), "interactivity");
}

// #50991 (v0.28): hybrid models start with prefix caching on in Mamba cache mode "align", two
// state pages per request, so the state-bound concurrency halves.
TEST(VllmEras, HybridsHoldTwoStatePagesFromV028) {
  ModelSpec m = model("Qwen/Qwen3-Next-80B-A3B-Instruct");
  GpuSetup g;
  g.gpu = gpu("H200");
  g.count = 2;
  VllmFlags f;
  f.tensor_parallel_size = 2;
  f.max_model_len = 4096;
  auto v27 = predict(m, g, f, VllmVersion{0, 27});
  auto v28 = predict(m, g, f, VllmVersion{0, 28});
  ASSERT_TRUE(v27 && v28);
  EXPECT_FALSE(v27->settings.enable_prefix_caching);
  EXPECT_TRUE(v28->settings.enable_prefix_caching);
  EXPECT_GT(v28->kv.blocks_per_request, v27->kv.blocks_per_request);
}

// Sparse MLA: DeepSeek-V3.2 stores fp8_ds_mla by default (config/cache.py "Some models (namely
// DeepSeekV3.2) default to fp8"), in 64-token blocks (FLASHMLA_SPARSE).
TEST(VllmEras, SparseMlaDefaultsToFp8DsMla) {
  ModelSpec m = model("deepseek-ai/DeepSeek-V3.2");
  GpuSetup g;
  g.gpu = gpu("H200");
  g.count = 8;
  VllmFlags f;
  f.tensor_parallel_size = 8;
  f.max_model_len = 32768;
  auto p = predict(m, g, f, VllmVersion::newest_modelled());
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(p->settings.kv_cache_dtype, "fp8_ds_mla");
  EXPECT_EQ(p->settings.block_size, 64);
  // 61 latent pages of 64 × 656 bytes and 61 indexer pages of 64 × 132 bytes per block.
  EXPECT_EQ(p->kv.page_bytes, 61LL * 64 * (656 + 132));
}

// The eras before v0.25, as the stages of predict() look them up (memory model §3; each field's
// comment in vllm_eras.h names the vLLM change). Each boundary is checked on both sides.
TEST(VllmEras, EngineAndMemoryCheckEras) {
  const ModelSpec m = model("Qwen/Qwen3-8B");
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 7, 3}, m).v1_engine);
  EXPECT_TRUE(engine::era_rules(VllmVersion{0, 8, 0}, m).v1_engine);
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 10, 2}, m).v0_engine_removed);
  EXPECT_TRUE(engine::era_rules(VllmVersion{0, 11, 0}, m).v0_engine_removed);
  EXPECT_EQ(engine::era_rules(VllmVersion{0, 9, 0}, m).float32_downcast_dtype, "float16");
  EXPECT_EQ(engine::era_rules(VllmVersion{0, 9, 1}, m).float32_downcast_dtype, "bfloat16");
  // gpu_worker.py init_device's free-memory check: V1 from v0.9.1; before it, the non-KV figure
  // charged the whole device's non-torch memory (and V0 did so in v0.6.4 only).
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 9, 0}, m).startup_free_memory_check);
  EXPECT_TRUE(engine::era_rules(VllmVersion{0, 9, 1}, m).startup_free_memory_check);
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 7, 3}, m).startup_free_memory_check);
  EXPECT_TRUE(engine::era_rules(VllmVersion{0, 9, 0}, m).non_kv_includes_device_baseline);
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 9, 1}, m).non_kv_includes_device_baseline);
  EXPECT_TRUE(engine::era_rules(VllmVersion{0, 6, 4}, m).non_kv_includes_device_baseline);
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 6, 5}, m).non_kv_includes_device_baseline);
  EXPECT_FALSE(engine::era_rules(VllmVersion{0, 6, 3}, m).non_kv_includes_device_baseline);
}

TEST(VllmEras, KvCacheEras) {
  const ModelSpec m = model("Qwen/Qwen3-8B");
  auto era = [&](VllmVersion v) { return engine::era_rules(v, m); };
  EXPECT_TRUE(era({0, 11, 0}).mla_forces_block_size);
  EXPECT_FALSE(era({0, 12, 0}).mla_forces_block_size);
  EXPECT_FALSE(era({0, 7, 3}).mla_forces_block_size);
  EXPECT_FALSE(era({0, 9, 2}).hybrid_kv_manager);
  EXPECT_TRUE(era({0, 10, 0}).hybrid_kv_manager);
  EXPECT_TRUE(era({0, 9, 2}).kv_check_sums_own_specs);
  EXPECT_FALSE(era({0, 10, 0}).kv_check_sums_own_specs);
  EXPECT_FALSE(era({0, 12, 0}).hybrid_kv_manager_with_chunked_attention);
  EXPECT_TRUE(era({0, 13, 0}).hybrid_kv_manager_with_chunked_attention);
  EXPECT_FALSE(era({0, 21, 0}).in_flight_per_concurrent_batch);
  EXPECT_TRUE(era({0, 22, 0}).in_flight_per_concurrent_batch);
  EXPECT_EQ(era({0, 7, 3}).kv_tokens_report, engine::KvTokensReport::blocks_times_block_size);
  EXPECT_EQ(era({0, 9, 2}).kv_tokens_report, engine::KvTokensReport::blocks_times_block_size);
  EXPECT_EQ(era({0, 10, 0}).kv_tokens_report, engine::KvTokensReport::blocks_per_group);
  EXPECT_EQ(era({0, 20, 0}).kv_tokens_report, engine::KvTokensReport::blocks_per_group);
  EXPECT_EQ(era({0, 21, 0}).kv_tokens_report, engine::KvTokensReport::concurrency_times_len);
  EXPECT_FALSE(era({0, 20, 0}).graphs_estimated_by_default);
  EXPECT_TRUE(era({0, 21, 0}).graphs_estimated_by_default);
  EXPECT_FALSE(era({0, 17, 0}).mamba_block_per_decode_sequence);
  EXPECT_TRUE(era({0, 18, 0}).mamba_block_per_decode_sequence);
}

// A version past the newest described one takes that one's rules for the old eras as well.
TEST(VllmEras, NewerVersionsKeepTheOldErasRules) {
  const ModelSpec m = model("Qwen/Qwen3-8B");
  auto r = engine::era_rules(VllmVersion::newest_modelled(), m);
  EXPECT_TRUE(r.v1_engine && r.v0_engine_removed && r.startup_free_memory_check && r.hybrid_kv_manager &&
              r.in_flight_per_concurrent_batch && r.graphs_estimated_by_default);
  EXPECT_EQ(r.kv_tokens_report, engine::KvTokensReport::concurrency_times_len);
}

}  // namespace
}  // namespace headroom
