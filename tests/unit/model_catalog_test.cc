#include <gtest/gtest.h>

#include "headroom/model.h"

namespace headroom {
namespace {

TEST(ModelCatalog, HasEveryLine) { EXPECT_EQ(catalog_model_ids().size(), 219u); }

TEST(ModelCatalog, LookupIsCaseInsensitive) {
  auto m = catalog_model("META-LLAMA/llama-3.1-8b-instruct");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->id, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(m->source, ModelSource::catalog);
  EXPECT_EQ(m->location, "built-in catalogue");
  EXPECT_EQ(m->num_kv_heads, 8);
  EXPECT_EQ(m->head_dim, 128);
  EXPECT_EQ(m->declared_params, 8000000000);
}

TEST(ModelCatalog, UnknownIdSuggestsCloseOnes) {
  auto m = catalog_model("Qwen/Qwen3-0.7B");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::not_found);
  EXPECT_EQ(m.error().message,
            "model 'Qwen/Qwen3-0.7B' is not in the built-in catalogue; did you mean Qwen/Qwen3-0.6B, Qwen/Qwen3-1.7B or "
            "Qwen/Qwen3-14B?");
}

TEST(ModelCatalog, TierGEntryAsksForAConfig) {
  auto m = catalog_model("meta-llama/Llama-3.3-70B-Instruct");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::unsupported);
  EXPECT_EQ(m.error().to_string(),
            "built-in catalogue (meta-llama/Llama-3.3-70B-Instruct): the built-in catalogue has no architecture facts for "
            "'meta-llama/Llama-3.3-70B-Instruct' (missing num_hidden_layers, hidden_size, num_attention_heads, "
            "vocab_size); download its config.json and pass the folder or file instead (e.g. huggingface-cli download "
            "meta-llama/Llama-3.3-70B-Instruct config.json)");
}

TEST(ModelCatalog, EveryLineParsesOrGivesTheClearError) {
  int parsed = 0, no_architecture = 0, incomplete = 0;
  std::vector<std::string> other;
  for (const auto& id : catalog_model_ids()) {
    auto m = catalog_model(id);
    if (m) ++parsed;
    else if (m.error().code == ErrorCode::unsupported && m.error().message.find("no architecture facts") != std::string::npos)
      ++no_architecture;
    else if (m.error().code == ErrorCode::unsupported && m.error().message.find("is incomplete") != std::string::npos)
      ++incomplete;
    else other.push_back(id + ": " + m.error().to_string());
  }
  EXPECT_TRUE(other.empty()) << other.front();
  // Three lines without architecture facts (Llama-3.3-70B-Instruct, the neuralmagic FP8 file
  // listing, TheBloke/llava-v1.5-13B-AWQ) and seven partial copies: Llama-3.2-11B-Vision (base) and
  // Qwen3.5-9B lack num_hidden_layers, Qwen2.5-VL-72B-Instruct and MiniMax-M2.1 lack vocab_size, the
  // three LLaVA text configs write only vocabulary and context (the models README says so).
  EXPECT_EQ(no_architecture, 3);
  EXPECT_EQ(incomplete, 7);
  EXPECT_EQ(parsed, 209);
}

TEST(ModelCatalog, PartialEntryNamesTheMissingField) {
  auto m = catalog_model("Qwen/Qwen2.5-VL-72B-Instruct");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message,
            "the built-in catalogue entry for 'Qwen/Qwen2.5-VL-72B-Instruct' is incomplete (missing required field "
            "\"vocab_size\" (also looked for padded_vocab_size)); download its config.json and pass the folder or file "
            "instead (e.g. huggingface-cli download Qwen/Qwen2.5-VL-72B-Instruct config.json)");
}

TEST(ModelCatalog, NullKvHeadsMeansMha) {
  auto m = catalog_model("meta-llama/Llama-2-7b-hf");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->num_kv_heads, 32);
}

TEST(ModelCatalog, FalconKvHeadsFromTheCrossCheck) {
  auto m = catalog_model("tiiuae/falcon-7b");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->num_kv_heads, 1);
}

TEST(ModelCatalog, SparseGemma3UsesTextConfigDefaults) {
  auto m = catalog_model("google/gemma-3-4b-it");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->num_attention_heads, 8);
  EXPECT_EQ(m->num_kv_heads, 4);
  EXPECT_EQ(m->head_dim, 256);
  EXPECT_EQ(m->vocab_size, 262208);
  EXPECT_EQ(m->max_position_embeddings, 131072);
  EXPECT_EQ(m->sliding_window, 1024);
  EXPECT_EQ(m->layer_kind(5), LayerKind::full_attention);
  EXPECT_EQ(m->layer_kind(4), LayerKind::sliding_attention);
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->depth, 27);
}

TEST(ModelCatalog, Gemma2Alternates) {
  auto m = catalog_model("google/gemma-2-9b-it");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->layer_kind(0), LayerKind::sliding_attention);
  EXPECT_EQ(m->layer_kind(1), LayerKind::full_attention);
  EXPECT_TRUE(m->tie_word_embeddings);
}

TEST(ModelCatalog, GptOssLayerTypesPeriodAndMxfp4) {
  auto m = catalog_model("openai/gpt-oss-20b");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->layer_kinds.size(), 24u);
  EXPECT_EQ(m->layer_kind(0), LayerKind::sliding_attention);
  EXPECT_EQ(m->layer_kind(1), LayerKind::full_attention);
  ASSERT_TRUE(m->quantization);
  EXPECT_EQ(m->quantization->method, "mxfp4");
  ASSERT_TRUE(m->moe);
  EXPECT_EQ(m->moe->num_experts, 32);
}

TEST(ModelCatalog, HybridsCountTheirAttentionLayers) {
  auto next = catalog_model("Qwen/Qwen3-Next-80B-A3B-Instruct");
  ASSERT_TRUE(next);
  EXPECT_EQ(std::count(next->layer_kinds.begin(), next->layer_kinds.end(), LayerKind::full_attention), 12);
  auto nemo = catalog_model("nvidia/Nemotron-H-56B-Base-8K");
  ASSERT_TRUE(nemo);
  EXPECT_EQ(std::count(nemo->layer_kinds.begin(), nemo->layer_kinds.end(), LayerKind::full_attention), 10);
  EXPECT_EQ(std::count(nemo->layer_kinds.begin(), nemo->layer_kinds.end(), LayerKind::mamba), 54);
}

TEST(ModelCatalog, TierIQuantizationFromTheId) {
  auto m = catalog_model("RedHatAI/Qwen2.5-7B-Instruct-fp8-dynamic");
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->quantization);
  EXPECT_EQ(m->quantization->method, "fp8");
  auto n = catalog_model("nvidia/Llama-3.1-70B-Instruct-FP8");
  ASSERT_TRUE(n);
  ASSERT_TRUE(n->quantization);
  EXPECT_TRUE(n->quantization->kv_cache_fp8);
}

}  // namespace
}  // namespace headroom
