// --compilation-config's CUDA graph keys: parsed from the JSON vLLM takes (config/compilation.py
// CompilationConfig) and applied to the capture sizes and the graphs counted.
#include <gtest/gtest.h>

#include "engine/empirical.h"
#include "engine/vllm_defaults.h"
#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"

namespace headroom {
namespace {

TEST(CompilationConfig, TheGraphKeysAreRead) {
  auto cmd = parse_vllm_command({"--compilation-config",
                                 R"({"cudagraph_capture_sizes": [8, 1, 4, 2, 4], "cudagraph_mode": "full_decode_only", "level": 3})"});
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  ASSERT_TRUE(cmd->flags.cudagraph_capture_sizes);
  EXPECT_EQ(cmd->flags.cudagraph_capture_sizes->size(), 5u);
  EXPECT_EQ(cmd->flags.cudagraph_mode.value_or(""), "FULL_DECODE_ONLY");
  ASSERT_EQ(cmd->warnings.size(), 1u);
  EXPECT_NE(cmd->warnings[0].find("'level' not modelled"), std::string::npos) << cmd->warnings[0];
}

// FlexibleArgumentParser's dotted form, and later objects merging key by key.
TEST(CompilationConfig, DottedFieldsAndLaterObjectsMerge) {
  auto cmd = parse_vllm_command({"--compilation-config", R"({"cudagraph_capture_sizes": [1, 2]})",
                                 "--compilation-config.cudagraph_mode", "NONE", "--compilation-config.max_cudagraph_capture_size=32"});
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  ASSERT_TRUE(cmd->flags.cudagraph_capture_sizes);
  EXPECT_EQ(*cmd->flags.cudagraph_capture_sizes, (std::vector<int>{1, 2}));
  EXPECT_EQ(cmd->flags.cudagraph_mode.value_or(""), "NONE");
  EXPECT_EQ(cmd->flags.max_cudagraph_capture_size.value_or(0), 32);
  EXPECT_TRUE(cmd->warnings.empty()) << cmd->warnings.front();
  auto bad = parse_vllm_command({"--compilation-config.cudagraph_mode", "SOMETIMES"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().where, "--compilation-config");
}

// Raw bytes that are not UTF-8, in the dotted field's name or its value (the fuzzer's find: the
// JSON they were put in threw on serialisation and ended the process): an error or a warning.
TEST(CompilationConfig, BytesThatAreNotUtf8AreNoCrash) {
  auto bad_value = parse_vllm_command({"--compilation-config.cudagraph_mode", "N\xff\xfeNE"});
  ASSERT_FALSE(bad_value);
  EXPECT_EQ(bad_value.error().where, "--compilation-config");
  auto bad_field = parse_vllm_command({"--compilation-config.\xffx", "1"});
  ASSERT_TRUE(bad_field) << bad_field.error().to_string();
  ASSERT_EQ(bad_field->warnings.size(), 1u);
}

TEST(CompilationConfig, MalformedValuesAreErrorsNamingTheFlag) {
  for (const char* bad : {"[1]", R"({"cudagraph_capture_sizes": [0]})", R"({"cudagraph_capture_sizes": "1,2"})",
                          R"({"cudagraph_capture_sizes": [1e12]})", R"({"max_cudagraph_capture_size": -1})",
                          R"({"cudagraph_mode": "SOMETIMES"})"}) {
    auto cmd = parse_vllm_command({"--compilation-config", bad});
    ASSERT_FALSE(cmd) << bad;
    EXPECT_EQ(cmd.error().where, "--compilation-config") << bad;
  }
}

// The user's list replaces vLLM's default one (sizes above max_num_batched_tokens cannot run);
// max_cudagraph_capture_size caps the default list's pattern ([1, 2, 4] and steps of 8).
TEST(CompilationConfig, GivenSizesAndTheLargestSizeShapeTheList) {
  const std::vector<int> given = {8, 1, 4, 2, 4, 4096};
  const auto sizes = engine::cudagraph_capture_sizes(VllmVersion{0, 19}, 256, 2048, {.given_sizes = &given});
  EXPECT_EQ(sizes, (std::vector<int>{1, 2, 4, 8}));
  const auto capped = engine::cudagraph_capture_sizes(VllmVersion{0, 19}, 256, 2048, {.max_capture_size = 64});
  EXPECT_EQ(capped, (std::vector<int>{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64}));
}

// cudagraph_dispatcher.py: PIECEWISE and FULL capture one graph per size, FULL_DECODE_ONLY one per
// size up to max_num_seqs, FULL_AND_PIECEWISE (v0.11's default) both; NONE captures nothing.
TEST(CompilationConfig, TheModeSetsHowManyGraphsAreCaptured) {
  const std::vector<int> sizes = {1, 2, 4, 8, 16, 512};
  const VllmVersion v{0, 19};
  EXPECT_EQ(engine::num_cuda_graphs(v, sizes, 256), 11);
  EXPECT_EQ(engine::num_cuda_graphs(v, sizes, 256, std::string("FULL_AND_PIECEWISE")), 11);
  EXPECT_EQ(engine::num_cuda_graphs(v, sizes, 256, std::string("PIECEWISE")), 6);
  EXPECT_EQ(engine::num_cuda_graphs(v, sizes, 256, std::string("FULL")), 6);
  EXPECT_EQ(engine::num_cuda_graphs(v, sizes, 256, std::string("FULL_DECODE_ONLY")), 5);
  EXPECT_EQ(engine::num_cuda_graphs(v, sizes, 256, std::string("NONE")), 0);
}

// A prediction follows: fewer graphs, less graph memory; from v0.21 the profile's graph estimate
// comes out of the budget first, so the KV cache grows by what the smaller list saves.
TEST(CompilationConfig, FewerCapturesLeaveMoreKvCacheWhereTheEstimateIsSubtracted) {
  auto model = load_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(model);
  GpuSetup g;
  g.gpu = custom_gpu(22.0);
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--max-model-len", "8192"});
    auto cmd = parse_vllm_command(args);
    EXPECT_TRUE(cmd);
    auto p = predict(*model, g, cmd->flags, VllmVersion{0, 21});
    EXPECT_TRUE(p) << p.error().to_string();
    return *p;
  };
  const Prediction base = run({});
  const Prediction small = run({"--compilation-config", R"({"cudagraph_capture_sizes": [1, 2, 4, 8]})"});
  const Prediction none = run({"--compilation-config", R"({"cudagraph_mode": "NONE"})"});
  EXPECT_LT(small.memory.cuda_graph, base.memory.cuda_graph);
  EXPECT_GT(small.num_gpu_blocks, base.num_gpu_blocks);
  EXPECT_EQ(none.memory.cuda_graph, 0);
  EXPECT_GE(none.num_gpu_blocks, small.num_gpu_blocks);
}

}  // namespace
}  // namespace headroom
