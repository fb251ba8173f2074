#include <gtest/gtest.h>

#include "headroom/model.h"
#include "model/config_reader.h"
#include "util/json_file.h"

namespace headroom {
namespace {

std::string fixture(const std::string& name) { return std::string(HEADROOM_TEST_DATA_DIR) + "/models/" + name; }

ModelSpec load_fixture(const std::string& name) {
  auto text = util::read_file(fixture(name));
  EXPECT_TRUE(text) << name;
  auto spec = parse_model_config_text(*text, name);
  EXPECT_TRUE(spec) << spec.error().to_string();
  return *spec;
}

ModelSpec parse(const nlohmann::json& j) {
  auto spec = parse_model_config(j, "config.json");
  EXPECT_TRUE(spec) << spec.error().to_string();
  return spec ? *spec : ModelSpec{};
}

nlohmann::json base_config() {
  return {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"hidden_size", 1024},
          {"num_hidden_layers", 4},                {"num_attention_heads", 8}, {"vocab_size", 1000}};
}

// llava-hf's LLaVA-NeXT and LLaVA-1.5 configs write a compact text_config (only what differs from
// the class): transformers fills MistralConfig's / LlamaConfig's sizes (configuration_mistral.py:
// 4096 wide, 32 layers of 32 heads, 8 KV heads, 14336 MLP; configuration_llama.py: 11008 MLP, KV
// heads = heads), where headroom refused them for a missing text_config.num_hidden_layers. A key
// written as null stays null: llava-v1.6-mistral's "sliding_window": null is no window.
TEST(ModelConfig, CompactLlavaTextConfigTakesTheClassDefaults) {
  nlohmann::json next = {{"architectures", {"LlavaNextForConditionalGeneration"}}, {"model_type", "llava_next"},
                         {"text_config", {{"model_type", "mistral"}, {"vocab_size", 32064}, {"sliding_window", nullptr},
                                          {"max_position_embeddings", 32768}}},
                         {"vision_config", {{"model_type", "clip_vision_model"}, {"hidden_size", 1024}, {"image_size", 336},
                                            {"intermediate_size", 4096}, {"num_attention_heads", 16},
                                            {"num_hidden_layers", 24}, {"patch_size", 14}}}};
  ModelSpec m = parse(next);
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(m.intermediate_size, 14336);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.vocab_size, 32064);
  EXPECT_FALSE(m.sliding_window.has_value());
  next["text_config"] = {{"model_type", "llama"}, {"vocab_size", 32064}, {"max_position_embeddings", 4096}};
  m = parse(next);
  EXPECT_EQ(m.intermediate_size, 11008);
  EXPECT_EQ(m.num_kv_heads, 32);
  // Only inside a wrapper: a top-level Llama config that leaves its sizes out is still refused.
  EXPECT_FALSE(parse_model_config({{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}}, "config.json"));
}

// mistral-community/pixtral-12b's vision_config writes only head_dim, hidden_act, image and patch
// sizes and rope_theta; transformers' PixtralVisionConfig (configuration_pixtral.py) gives the rest:
// 1024 wide, 4096 MLP, 24 layers of 16 heads. Before, the tower was read as zero layers.
TEST(ModelConfig, CompactPixtralVisionConfigTakesTheClassDefaults) {
  nlohmann::json c = {{"architectures", {"LlavaForConditionalGeneration"}}, {"model_type", "llava"},
                      {"text_config", {{"model_type", "mistral"}, {"hidden_size", 5120}, {"head_dim", 128},
                                       {"num_hidden_layers", 40}, {"num_key_value_heads", 8}, {"vocab_size", 131072}}},
                      {"vision_config", {{"model_type", "pixtral"}, {"head_dim", 64}, {"image_size", 1024},
                                         {"patch_size", 16}, {"rope_theta", 10000.0}}}};
  ModelSpec m = parse(c);
  ASSERT_TRUE(m.vision);
  EXPECT_EQ(m.vision->hidden_size, 1024);
  EXPECT_EQ(m.vision->intermediate_size, 4096);
  EXPECT_EQ(m.vision->depth, 24);
  EXPECT_EQ(m.vision->num_heads, 16);
  EXPECT_EQ(m.num_attention_heads, 32);  // MistralConfig's default, the text_config leaving it out
}

// rope_scaling.factor 1e300 multiplied the length into a negative max_model_len; numbers read from
// a config are range-checked, with the key's line and column, before any arithmetic.
TEST(ModelConfig, AbsurdRopeScalingFactorIsRefusedWithItsPosition) {
  const std::string text =
      "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", \"hidden_size\": 1024,\n"
      " \"num_hidden_layers\": 4, \"num_attention_heads\": 8, \"vocab_size\": 1000,\n"
      " \"max_position_embeddings\": 8192,\n"
      " \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 1e300}}";
  auto spec = parse_model_config_text(text, "config.json");
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().to_string(), "config.json:4:40: expected \"rope_scaling.factor\" between 0 and 1024, got 1e+300");
}

TEST(ModelConfig, RopeScalingBeyondTwoToThe32TokensIsRefused) {
  nlohmann::json j = base_config();
  j["max_position_embeddings"] = 1LL << 30;
  j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 64.0}};
  auto spec = parse_model_config(j, "config.json");
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("implausible \"rope_scaling.factor\""), std::string::npos) << spec.error().message;
}

// fuzz_gguf found it: without an MLP width the default 4 × hidden_size overflowed int for a hidden
// size past 2^29 (undefined behaviour); it is an error now.
TEST(ModelConfig, DefaultMlpWidthPastTwoToThe31IsRefused) {
  nlohmann::json j = base_config();
  j["hidden_size"] = 788529408;
  auto spec = parse_model_config(j, "config.json");
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.error().message.find("past 2^31"), std::string::npos) << spec.error().message;
  j["hidden_size"] = 1024;
  EXPECT_EQ(parse(j).intermediate_size, 4096);
}

TEST(ModelConfig, HugeIntegersInListsAreRefused) {
  nlohmann::json j = base_config();
  j["cross_attention_layers"] = {1, 9223372036854775807LL};
  auto spec = parse_model_config(j, "config.json");
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.error().message, "expected array of integers below 2^31 \"cross_attention_layers\", got array");
}


TEST(ModelConfig, DenseGqaModel) {
  ModelSpec m = load_fixture("llama_gqa.json");
  EXPECT_EQ(m.architecture, "LlamaForCausalLM");
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.max_position_embeddings, 131072);
  EXPECT_EQ(m.max_length_key, "max_position_embeddings");
  ASSERT_TRUE(m.rope_scaling);
  EXPECT_EQ(m.rope_scaling->type, "llama3");
  EXPECT_EQ(m.rope_scaling->factor, 8.0);
  EXPECT_EQ(m.rope_scaling->original_max_position_embeddings, 8192);
  EXPECT_EQ(m.torch_dtype, "bfloat16");
  EXPECT_FALSE(m.tie_word_embeddings);
  EXPECT_TRUE(m.layer_kinds.empty());
}

TEST(ModelConfig, ExplicitHeadDimWinsOverHiddenOverHeads) {
  ModelSpec m = load_fixture("mistral_nemo.json");
  EXPECT_EQ(m.head_dim, 128);  // 5120 / 32 would be 160
  EXPECT_FALSE(m.sliding_window);
}

TEST(ModelConfig, MultimodalTextConfigWithGemma3Defaults) {
  ModelSpec m = load_fixture("gemma3_multimodal.json");
  EXPECT_EQ(m.architecture, "Gemma3ForConditionalGeneration");
  EXPECT_EQ(m.model_type, "gemma3_text");
  EXPECT_EQ(m.num_layers, 34);
  EXPECT_EQ(m.num_attention_heads, 8);  // Gemma3TextConfig defaults
  EXPECT_EQ(m.num_kv_heads, 4);
  EXPECT_EQ(m.head_dim, 256);
  EXPECT_EQ(m.vocab_size, 262208);
  EXPECT_TRUE(m.tie_word_embeddings);
  ASSERT_TRUE(m.vision);
  EXPECT_EQ(m.vision->depth, 27);
  EXPECT_EQ(m.vision->hidden_size, 1152);
  // Every 6th layer global, the rest slide over 1024 tokens.
  ASSERT_EQ(m.layer_kinds.size(), 34u);
  EXPECT_EQ(m.layer_kind(0), LayerKind::sliding_attention);
  EXPECT_EQ(m.layer_kind(5), LayerKind::full_attention);
  EXPECT_EQ(m.layer_kind(11), LayerKind::full_attention);
  EXPECT_EQ(m.sliding_window, 1024);
}

TEST(ModelConfig, MlaAndMoeFields) {
  ModelSpec m = load_fixture("deepseek_mla_moe.json");
  ASSERT_TRUE(m.mla);
  EXPECT_EQ(m.mla->kv_lora_rank, 512);
  EXPECT_EQ(m.mla->q_lora_rank, 1536);
  EXPECT_EQ(m.mla->qk_rope_head_dim, 64);
  EXPECT_EQ(m.head_dim, 192);
  ASSERT_TRUE(m.moe);
  EXPECT_EQ(m.moe->num_experts, 256);
  EXPECT_EQ(m.moe->experts_per_token, 8);
  EXPECT_EQ(m.moe->moe_intermediate_size, 2048);
  EXPECT_EQ(m.moe->num_shared_experts, 1);
  EXPECT_EQ(m.moe->first_k_dense_replace, 3);
  EXPECT_EQ(m.moe->dense_intermediate_size, 18432);
  EXPECT_EQ(m.moe->num_nextn_predict_layers, 1);
  EXPECT_FALSE(is_moe_layer(m, 2));
  EXPECT_TRUE(is_moe_layer(m, 3));
  ASSERT_TRUE(m.rope_scaling);
  EXPECT_EQ(m.rope_scaling->type, "yarn");  // from the legacy "type" key
  ASSERT_TRUE(m.quantization);
  EXPECT_EQ(m.quantization->method, "fp8");
  EXPECT_EQ(m.quantization->bits, 8);
}

TEST(ModelConfig, MixtralExpertsUseIntermediateSize) {
  auto j = base_config();
  j["model_type"] = "mixtral";
  j["intermediate_size"] = 4096;
  j["num_local_experts"] = 8;
  j["num_experts_per_tok"] = 2;
  ModelSpec m = parse(j);
  ASSERT_TRUE(m.moe);
  EXPECT_EQ(m.moe->num_experts, 8);
  EXPECT_EQ(m.moe->moe_intermediate_size, 4096);
  EXPECT_TRUE(is_moe_layer(m, 0));
}

TEST(ModelConfig, KvHeadsFromFirstPresentAlias) {
  auto j = base_config();
  j["multi_query_group_num"] = 2;
  j["num_key_value_heads"] = 4;
  EXPECT_EQ(parse(j).num_kv_heads, 4);  // num_key_value_heads comes before multi_query_group_num
  j.erase("num_key_value_heads");
  EXPECT_EQ(parse(j).num_kv_heads, 2);
  j.erase("multi_query_group_num");
  EXPECT_EQ(parse(j).num_kv_heads, 8);  // MHA
}

TEST(ModelConfig, LegacyNames) {
  nlohmann::json j = {{"architectures", {"GPT2LMHeadModel"}}, {"model_type", "gpt2"}, {"n_layer", 12}, {"n_head", 12},
                      {"n_embd", 768}, {"n_inner", nullptr}, {"vocab_size", 50257}, {"n_positions", 1024}};
  ModelSpec m = parse(j);
  EXPECT_EQ(m.num_layers, 12);
  EXPECT_EQ(m.hidden_size, 768);
  EXPECT_EQ(m.intermediate_size, 3072);
  EXPECT_EQ(m.max_position_embeddings, 1024);
  EXPECT_EQ(m.max_length_key, "n_positions");
  EXPECT_TRUE(m.tie_word_embeddings);
}

TEST(ModelConfig, MaxLengthIsTheSmallestPresentKey) {
  auto j = base_config();
  j["max_position_embeddings"] = 8192;
  j["seq_length"] = 4096;
  ModelSpec m = parse(j);
  EXPECT_EQ(m.max_position_embeddings, 4096);
  EXPECT_EQ(m.max_length_key, "seq_length");
}

TEST(ModelConfig, DtypeKeyOfTransformersV5) {
  auto j = base_config();
  j["dtype"] = "float16";
  EXPECT_EQ(parse(j).torch_dtype, "float16");
}

TEST(ModelConfig, Gemma2EvenLayersSlide) {
  auto j = base_config();
  j["model_type"] = "gemma2";
  j["sliding_window"] = 4096;
  ModelSpec m = parse(j);
  EXPECT_EQ(m.layer_kind(0), LayerKind::sliding_attention);
  EXPECT_EQ(m.layer_kind(1), LayerKind::full_attention);
  EXPECT_EQ(m.layer_kind(2), LayerKind::sliding_attention);
}

TEST(ModelConfig, QwenWindowOnlyWhenEnabledFromMaxWindowLayers) {
  auto j = base_config();
  j["model_type"] = "qwen2";
  j["sliding_window"] = 32768;
  j["use_sliding_window"] = false;
  j["max_window_layers"] = 2;
  ModelSpec off = parse(j);
  EXPECT_FALSE(off.sliding_window);
  EXPECT_TRUE(off.layer_kinds.empty());
  j["use_sliding_window"] = true;
  ModelSpec on = parse(j);
  EXPECT_EQ(on.layer_kind(1), LayerKind::full_attention);
  EXPECT_EQ(on.layer_kind(2), LayerKind::sliding_attention);
}

TEST(ModelConfig, MistralWindowOnAllLayersAndZeroIsOff) {
  auto j = base_config();
  j["model_type"] = "mistral";
  j["sliding_window"] = 4096;
  ModelSpec m = parse(j);
  ASSERT_EQ(m.layer_kinds.size(), 4u);
  EXPECT_EQ(m.layer_kind(3), LayerKind::sliding_attention);
  j["sliding_window"] = 0;
  EXPECT_TRUE(parse(j).layer_kinds.empty());
}

TEST(ModelConfig, LayerTypesArray) {
  auto j = base_config();
  j["model_type"] = "gpt_oss";
  j["sliding_window"] = 128;
  j["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "full_attention"};
  ModelSpec m = parse(j);
  EXPECT_EQ(m.layer_kind(0), LayerKind::sliding_attention);
  EXPECT_EQ(m.layer_kind(1), LayerKind::full_attention);
}

TEST(ModelConfig, LayerTypesOfWrongLengthIsAnError) {
  auto j = base_config();
  j["sliding_window"] = 128;
  j["layer_types"] = {"sliding_attention"};
  auto r = parse_model_config(j, "config.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "config.json: expected 4 entries in \"layer_types\" (one per layer), got 1");
}

TEST(ModelConfig, Llama4ChunkedOnRopeLayersGlobalOnNope) {
  auto j = base_config();
  j["model_type"] = "llama4_text";
  j["attention_chunk_size"] = 8192;
  j["no_rope_layers"] = {1, 1, 1, 0};
  ModelSpec m = parse(j);
  EXPECT_EQ(m.attention_chunk_size, 8192);
  EXPECT_EQ(m.layer_kind(0), LayerKind::chunked_attention);
  EXPECT_EQ(m.layer_kind(3), LayerKind::full_attention);
}

TEST(ModelConfig, MllamaCrossAttentionLayers) {
  auto j = base_config();
  j["cross_attention_layers"] = {1, 3};
  ModelSpec m = parse(j);
  EXPECT_EQ(m.layer_kind(0), LayerKind::full_attention);
  EXPECT_EQ(m.layer_kind(1), LayerKind::cross_attention);
  EXPECT_EQ(m.layer_kind(3), LayerKind::cross_attention);
}

TEST(ModelConfig, Qwen3NextFullAttentionInterval) {
  auto j = base_config();
  j["model_type"] = "qwen3_next";
  j["full_attention_interval"] = 4;
  j["linear_num_key_heads"] = 16;
  j["linear_num_value_heads"] = 32;
  j["linear_key_head_dim"] = 128;
  j["linear_value_head_dim"] = 128;
  j["linear_conv_kernel_dim"] = 4;
  ModelSpec m = parse(j);
  EXPECT_EQ(m.layer_kind(0), LayerKind::linear_attention);
  EXPECT_EQ(m.layer_kind(3), LayerKind::full_attention);
  ASSERT_TRUE(m.hybrid);
  EXPECT_EQ(m.hybrid->linear_num_value_heads, 32);
}

TEST(ModelConfig, NemotronHybridPattern) {
  ModelSpec m = load_fixture("nemotron_h.json");
  ASSERT_EQ(m.layer_kinds.size(), 8u);
  EXPECT_EQ(m.layer_kind(0), LayerKind::mamba);
  EXPECT_EQ(m.layer_kind(1), LayerKind::no_attention);
  EXPECT_EQ(m.layer_kind(3), LayerKind::full_attention);
  EXPECT_EQ(m.layer_kind(6), LayerKind::no_attention);
  ASSERT_TRUE(m.hybrid);
  EXPECT_EQ(m.hybrid->mamba_num_heads, 64);
  EXPECT_EQ(m.hybrid->mamba_intermediate_size, 4096);
  EXPECT_EQ(m.hybrid->mamba_ssm_cache_dtype, "float32");
  EXPECT_TRUE(is_moe_layer(m, 1));
  EXPECT_FALSE(is_moe_layer(m, 6));
  ASSERT_TRUE(m.moe);
  EXPECT_EQ(m.moe->shared_expert_intermediate_size, 3712);
}

TEST(ModelConfig, CompressedTensorsQuantization) {
  ModelSpec m = load_fixture("compressed_tensors_w4a16.json");
  ASSERT_TRUE(m.quantization);
  EXPECT_EQ(m.quantization->method, "compressed-tensors");
  EXPECT_EQ(m.quantization->format, "pack-quantized");
  EXPECT_EQ(m.quantization->bits, 4);
  EXPECT_EQ(m.quantization->group_size, 128);
  EXPECT_TRUE(m.quantization->kv_cache_fp8);
  EXPECT_EQ(m.quantization->ignored_modules, std::vector<std::string>{"lm_head"});
}

TEST(ModelConfig, GptqLmHeadAndModelOptKvAlgo) {
  auto j = base_config();
  j["quantization_config"] = {{"quant_method", "GPTQ"}, {"bits", 4}, {"group_size", 128}, {"lm_head", true}};
  ModelSpec g = parse(j);
  EXPECT_EQ(g.quantization->method, "gptq");
  EXPECT_TRUE(g.quantization->lm_head_quantized);
  j["quantization_config"] = {{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"kv_cache_quant_algo", "FP8"}};
  ModelSpec mo = parse(j);
  EXPECT_EQ(mo.quantization->bits, 8);
  EXPECT_TRUE(mo.quantization->kv_cache_fp8);
}

TEST(ModelConfig, TypeErrorNamesFileLineAndColumn) {
  auto text = util::read_file(fixture("bad_type.json"));
  auto r = parse_model_config_text(*text, "config.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "config.json:5:3: expected integer \"num_hidden_layers\", got string");
  EXPECT_EQ(r.error().code, ErrorCode::parse_error);
}

TEST(ModelConfig, TypeErrorInsideTextConfigNamesTheNestedKey) {
  std::string text = "{\n  \"model_type\": \"gemma3\",\n  \"text_config\": {\n    \"model_type\": \"gemma3_text\",\n"
                     "    \"hidden_size\": true\n  }\n}\n";
  auto r = parse_model_config_text(text, "config.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "config.json:5:5: expected integer \"text_config.hidden_size\", got boolean");
}

TEST(ModelConfig, MalformedJsonNamesFileLineAndColumn) {
  auto text = util::read_file(fixture("malformed.json"));
  auto r = parse_model_config_text(*text, "config.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "config.json:5:1");
}

TEST(ModelConfig, MissingRequiredFieldNamesFieldAndFile) {
  auto j = base_config();
  j.erase("num_hidden_layers");
  auto r = parse_model_config(j, "/models/x/config.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            "/models/x/config.json: missing required field \"num_hidden_layers\" (also looked for n_layer, num_layers or "
            "n_layers)");
}

TEST(ModelConfig, TieDefaultsFollowTheModelType) {
  auto j = base_config();
  EXPECT_FALSE(parse(j).tie_word_embeddings);  // LlamaConfig default
  j["model_type"] = "gemma";
  EXPECT_TRUE(parse(j).tie_word_embeddings);  // GemmaConfig default
  j["tie_word_embeddings"] = false;
  EXPECT_FALSE(parse(j).tie_word_embeddings);
}

// Regression (tests/cli/bad_input.sh): the key-position scan built a path per nesting level, so
// deep nesting or giant keys made it grow with the square of the input.
TEST(ModelConfig, KeyPositionsStopEightLevelsDownAndSkipLongKeys) {
  std::string deep = "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":{\"h\":{\"i\":{\"j\":1}}}}}}}}}}";
  auto positions = model_detail::scan_key_positions(deep);
  EXPECT_EQ(positions.count("a/b/c/d/e/f/g/h"), 1u);
  EXPECT_EQ(positions.count("a/b/c/d/e/f/g/h/i"), 0u);
  EXPECT_EQ(positions.size(), 8u);

  const std::string long_key(300, 'k');
  auto wide = model_detail::scan_key_positions("{\"" + long_key + "\":{\"x\":1},\"y\":2}");
  EXPECT_EQ(wide.size(), 1u);
  EXPECT_EQ(wide.count("y"), 1u);
}

}  // namespace
}  // namespace headroom
