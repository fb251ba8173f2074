// --hf-overrides, --rope-scaling and --rope-theta: read into one JSON object of config overrides,
// and applied to the model before its length limit is derived (engine/hf_overrides.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/hf_overrides.h"
#include "engine/vllm_defaults.h"
#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"

namespace headroom {
namespace {

VllmFlags flags_of(const std::vector<std::string>& args) {
  auto cmd = parse_vllm_command(args);
  EXPECT_TRUE(cmd.has_value()) << (cmd ? "" : cmd.error().to_string());
  return cmd ? cmd->flags : VllmFlags{};
}

GpuSetup h100() {
  GpuSetup g;
  g.gpu = custom_gpu(79.19);
  return g;
}

// Qwen3's model card extends its 32,768 native positions four times with YaRN, as
// `--rope-scaling '{"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768}'`
// or the same object under --hf-overrides' rope_scaling. vLLM's _get_and_verify_max_len takes
// original_max_position_embeddings x factor for yarn: 131,072, above the config's 40,960.
TEST(HfOverrides, YarnScalingLengthensTheDerivedLimit) {
  auto model = load_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(model) << model.error().to_string();
  EXPECT_EQ(engine::derived_max_model_len(*model), 40960);
  const std::string yarn = R"({"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768})";
  for (const auto& args : {std::vector<std::string>{"--rope-scaling", yarn, "--max-model-len", "131072"},
                           std::vector<std::string>{"--hf-overrides", R"({"rope_scaling":)" + yarn + "}", "--max-model-len", "131072"}}) {
    const VllmFlags f = flags_of(args);
    auto overridden = engine::apply_hf_overrides(*model, f);
    ASSERT_TRUE(overridden && overridden->has_value());
    EXPECT_EQ(engine::derived_max_model_len(**overridden), 131072);
    auto p = predict(*model, h100(), f, VllmVersion{0, 19});
    ASSERT_TRUE(p) << p.error().to_string();
    EXPECT_FALSE(p->failure.has_value()) << p->failure->message;
    EXPECT_EQ(p->settings.max_model_len, 131072);
  }
  // The rotary cache follows the overridden length; the model as published keeps its own weights
  // (the per-layout weights memo must not hand one to the other).
  auto before = predict(*model, h100(), flags_of({"--max-model-len", "32768"}), VllmVersion{0, 18});
  auto scaled = predict(*model, h100(), flags_of({"--rope-scaling", yarn, "--max-model-len", "32768"}), VllmVersion{0, 18});
  auto after = predict(*model, h100(), flags_of({"--max-model-len", "32768"}), VllmVersion{0, 18});
  ASSERT_TRUE(before && scaled && after);
  EXPECT_GT(scaled->memory.weights, before->memory.weights);
  EXPECT_EQ(after->memory.weights, before->memory.weights);
  // Without the override vLLM refuses the same length.
  auto p = predict(*model, h100(), flags_of({"--max-model-len", "131072"}), VllmVersion{0, 19});
  ASSERT_TRUE(p && p->failure);
  EXPECT_EQ(p->failure->error_class, "max_model_len_exceeds_model_limit");
}

TEST(HfOverrides, LaterFlagsMergeKeyByKeyAndUnmodelledKeysWarn) {
  auto cmd = parse_vllm_command({"--hf-overrides", R"({"max_position_embeddings": 8192, "architectures": ["X"]})",
                                 "--rope-theta", "1000000", "--hf-overrides", R"({"max_position_embeddings": 16384})"});
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  const auto j = nlohmann::json::parse(cmd->flags.hf_overrides);
  EXPECT_EQ(j.at("max_position_embeddings"), 16384);
  EXPECT_EQ(j.at("rope_theta"), 1000000.0);
  ASSERT_EQ(cmd->warnings.size(), 1u);
  EXPECT_NE(cmd->warnings[0].find("'architectures' is not modelled"), std::string::npos) << cmd->warnings[0];
}

TEST(HfOverrides, OnlyTheBaseOfRopeChangesNothing) {
  auto model = load_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(model);
  auto overridden = engine::apply_hf_overrides(*model, flags_of({"--rope-theta", "5000000"}));
  ASSERT_TRUE(overridden);
  EXPECT_FALSE(overridden->has_value());
}

TEST(HfOverrides, MalformedValuesAreErrorsNamingTheFlag) {
  auto not_object = parse_vllm_command({"--hf-overrides", "[1]"});
  ASSERT_FALSE(not_object);
  EXPECT_EQ(not_object.error().where, "--hf-overrides");
  auto bad_scaling = parse_vllm_command({"--rope-scaling", "yarn"});
  ASSERT_FALSE(bad_scaling);
  EXPECT_EQ(bad_scaling.error().where, "--rope-scaling");

  auto model = load_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(model);
  for (const char* hostile : {R"({"max_position_embeddings": -4})", R"({"max_position_embeddings": 1e300})",
                              R"({"rope_scaling": {"rope_type": "yarn", "factor": 1e9}})",
                              R"({"rope_scaling": "yarn"})"}) {
    auto r = engine::apply_hf_overrides(*model, flags_of({"--hf-overrides", hostile}));
    EXPECT_FALSE(r) << hostile;
    auto p = predict(*model, h100(), flags_of({"--hf-overrides", hostile}), VllmVersion{0, 19});
    EXPECT_FALSE(p) << hostile;
  }
}

// A vision-language model's text length lives in text_config; an override may name it there.
TEST(HfOverrides, TextConfigOverridesApplyToTheLanguageModel) {
  auto model = load_model("Qwen/Qwen2.5-VL-7B-Instruct");
  ASSERT_TRUE(model) << model.error().to_string();
  auto overridden = engine::apply_hf_overrides(*model, flags_of({"--hf-overrides", R"({"text_config": {"max_position_embeddings": 32768}})"}));
  ASSERT_TRUE(overridden && overridden->has_value());
  EXPECT_EQ((*overridden)->max_position_embeddings, 32768);
}

}  // namespace
}  // namespace headroom
