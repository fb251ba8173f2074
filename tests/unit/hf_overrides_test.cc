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

// Qwen3's model card extends its 32,768 native positions four times with YaRN. vLLM's
// _get_and_verify_max_len takes original_max_position_embeddings x factor for yarn: 131,072,
// above the config's 40,960. Which key carries it depends on the release (hf_overrides.h).
const std::string k_yarn = R"({"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768})";

Prediction predicted(const ModelSpec& model, const std::vector<std::string>& args, VllmVersion version) {
  auto p = predict(model, h100(), flags_of(args), version);
  EXPECT_TRUE(p) << p.error().to_string();
  return p ? *p : Prediction{};
}

bool refuses_the_length(const Prediction& p) {
  return p.failure && p.failure->error_class == "max_model_len_exceeds_model_limit";
}

TEST(HfOverrides, YarnScalingLengthensTheDerivedLimit) {
  auto model = load_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(model) << model.error().to_string();
  EXPECT_EQ(engine::derived_max_model_len(*model), 40960);
  const VllmVersion v18{0, 18};  // transformers v4: rope_scaling and rope_parameters both count
  for (const auto& args : {std::vector<std::string>{"--rope-scaling", k_yarn, "--max-model-len", "131072"},
                           std::vector<std::string>{"--hf-overrides", R"({"rope_scaling":)" + k_yarn + "}", "--max-model-len", "131072"},
                           std::vector<std::string>{"--hf-overrides", R"({"rope_parameters":)" + k_yarn + "}", "--max-model-len", "131072"}}) {
    auto overridden = engine::apply_hf_overrides(*model, flags_of(args), v18);
    ASSERT_TRUE(overridden && overridden->model);
    EXPECT_EQ(engine::derived_max_model_len(*overridden->model), 131072);
    const Prediction p = predicted(*model, args, v18);
    EXPECT_FALSE(p.failure.has_value()) << p.failure->message;
    EXPECT_EQ(p.settings.max_model_len, 131072);
  }
  // Without the override vLLM refuses the same length.
  EXPECT_TRUE(refuses_the_length(predicted(*model, {"--max-model-len", "131072"}, v18)));
}

// From v0.19.1 vLLM runs transformers v5, whose config reads rope_parameters: a rope_scaling
// override changes nothing (the length is refused, and a warning says which key to give).
// Before v0.12 vLLM read rope_scaling only, and rope_parameters changed nothing.
TEST(HfOverrides, TheRopeKeyThatCountsFollowsTheRelease) {
  auto model = load_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(model);
  const std::vector<std::string> scaling = {"--rope-scaling", k_yarn, "--max-model-len", "131072"};
  const std::vector<std::string> parameters = {"--hf-overrides", R"({"rope_parameters":)" + k_yarn + "}", "--max-model-len", "131072"};
  const Prediction v5_scaling = predicted(*model, scaling, VllmVersion{0, 20});
  EXPECT_TRUE(refuses_the_length(v5_scaling));
  ASSERT_FALSE(v5_scaling.warnings.empty());
  EXPECT_NE(v5_scaling.warnings.back().find(R"(give --hf-overrides '{"rope_parameters": {...}}')"), std::string::npos)
      << v5_scaling.warnings.back();
  EXPECT_FALSE(predicted(*model, parameters, VllmVersion{0, 20}).failure.has_value());
  EXPECT_TRUE(refuses_the_length(predicted(*model, parameters, VllmVersion{0, 11})));
  EXPECT_FALSE(predicted(*model, scaling, VllmVersion{0, 11}).failure.has_value());
}

// v0.12 to v0.19.0 run transformers v4, where patch_rope_parameters copies the config's own
// rope_scaling over rope_parameters: Llama-3.1's llama3 scaling stays, and the override is said
// to change nothing; an overridden rope_scaling takes its place.
TEST(HfOverrides, TransformersV4CopiesTheConfigsOwnScalingOverRopeParameters) {
  auto model = load_model("meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_TRUE(model);
  const std::string dynamic = R"({"rope_type":"dynamic","factor":2.0})";
  auto kept = engine::apply_hf_overrides(*model, flags_of({"--hf-overrides", R"({"rope_parameters":)" + dynamic + "}"}),
                                         VllmVersion{0, 15});
  ASSERT_TRUE(kept && kept->model);
  EXPECT_EQ(engine::derived_max_model_len(*kept->model), engine::derived_max_model_len(*model));
  ASSERT_EQ(kept->notes.size(), 1u);
  EXPECT_NE(kept->notes[0].find("copies the config's own rope_scaling"), std::string::npos) << kept->notes[0];
  auto replaced = engine::apply_hf_overrides(*model, flags_of({"--hf-overrides", R"({"rope_scaling":)" + dynamic + "}"}),
                                             VllmVersion{0, 15});
  ASSERT_TRUE(replaced && replaced->model);
  EXPECT_EQ(replaced->model->rope_scaling->type, "dynamic");
}

// The rotary cache follows the overridden length; the model as published keeps its own weights
// (the per-layout weights memo must not hand one to the other).
TEST(HfOverrides, TheWeightsMemoKeepsThePublishedModelApart) {
  auto model = load_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(model);
  const VllmVersion v18{0, 18};
  const Prediction before = predicted(*model, {"--max-model-len", "32768"}, v18);
  const Prediction scaled = predicted(*model, {"--rope-scaling", k_yarn, "--max-model-len", "32768"}, v18);
  const Prediction after = predicted(*model, {"--max-model-len", "32768"}, v18);
  EXPECT_GT(scaled.memory.weights, before.memory.weights);
  EXPECT_EQ(after.memory.weights, before.memory.weights);
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
  auto overridden = engine::apply_hf_overrides(*model, flags_of({"--rope-theta", "5000000"}), VllmVersion{0, 18});
  ASSERT_TRUE(overridden);
  EXPECT_FALSE(overridden->model.has_value());
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
    auto r = engine::apply_hf_overrides(*model, flags_of({"--hf-overrides", hostile}), VllmVersion{0, 20});
    EXPECT_FALSE(r) << hostile;
    auto p = predict(*model, h100(), flags_of({"--hf-overrides", hostile}), VllmVersion{0, 19});
    EXPECT_FALSE(p) << hostile;
  }
}

// A vision-language model's text length lives in text_config; an override may name it there.
TEST(HfOverrides, TextConfigOverridesApplyToTheLanguageModel) {
  auto model = load_model("Qwen/Qwen2.5-VL-7B-Instruct");
  ASSERT_TRUE(model) << model.error().to_string();
  auto overridden = engine::apply_hf_overrides(
      *model, flags_of({"--hf-overrides", R"({"text_config": {"max_position_embeddings": 32768}})"}), VllmVersion{0, 20});
  ASSERT_TRUE(overridden && overridden->model);
  EXPECT_EQ(overridden->model->max_position_embeddings, 32768);
}

}  // namespace
}  // namespace headroom
