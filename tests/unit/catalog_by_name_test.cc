// catalog_model_by_name: a repo the catalogue lacks, taken as the catalogue model its name
// extends. The expected architectures are the base models' config.json facts as the catalogue
// holds them (Qwen3-30B-A3B: 48 layers, 128 experts; Llama 3.1 8B: 32 layers).
#include <gtest/gtest.h>

#include "engine_test_support.h"

namespace headroom {
namespace {

TEST(CatalogByName, AQuantizedFineTuneIsItsBaseWithTheMethodItsNameSays) {
  auto m = catalog_model_by_name("someone/Qwen3-30B-A3B-AWQ-4bit");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->id, "someone/Qwen3-30B-A3B-AWQ-4bit");
  EXPECT_EQ(m->architecture_assumed_from, "Qwen/Qwen3-30B-A3B");
  EXPECT_EQ(m->architecture, "Qwen3MoeForCausalLM");
  EXPECT_EQ(m->num_layers, 48);
  ASSERT_TRUE(m->moe);
  EXPECT_EQ(m->moe->num_experts, 128);
  ASSERT_TRUE(m->quantization);
  EXPECT_EQ(m->quantization->method, "awq");
  EXPECT_EQ(m->quantization->bits, 4);
  EXPECT_EQ(m->quantization->guessed_from, "the repo name");
  EXPECT_EQ(m->location, "built-in catalogue (architecture assumed from Qwen/Qwen3-30B-A3B, whose name this repo's extends; "
                         "its own config.json was not read)");
}

// Variant words (Instruct, Thinking, Chat, it, pt, Base) aside: the Thinking-2507 release is taken
// as the catalogue's Instruct-2507 line (the same 48-layer, 128-expert architecture and its
// 262,144 positions), rather than as the shorter name Qwen3-30B-A3B; the source says so.
TEST(CatalogByName, AnotherVariantOfTheSameReleaseIsTheLongerMatch) {
  auto m = catalog_model_by_name("cpatonn/Qwen3-30B-A3B-Thinking-2507-AWQ-4bit");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->architecture_assumed_from, "Qwen/Qwen3-30B-A3B-Instruct-2507");
  EXPECT_EQ(m->max_position_embeddings, 262144);
  EXPECT_EQ(m->quantization->method, "awq");
  EXPECT_NE(m->location.find("whose name this repo's extends (Instruct, Thinking, Chat, it, pt or Base aside)"), std::string::npos)
      << m->location;
  auto thinking = catalog_model_by_name("Qwen/Qwen3-VL-8B-Thinking");
  ASSERT_TRUE(thinking) << thinking.error().to_string();
  EXPECT_EQ(thinking->architecture_assumed_from, "Qwen/Qwen3-VL-8B-Instruct");
  EXPECT_FALSE(thinking->quantization);
}

// A base line read from its repo's whole config.json (Qwen2.5-VL-3B-Instruct: 36 layers, no
// quantization_config) keeps the method the fine-tune's name says.
TEST(CatalogByName, ABaseReadFromAWholeConfigTakesTheGuessedMethod) {
  auto m = catalog_model_by_name("someone/Qwen2.5-VL-3B-Instruct-AWQ");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->architecture_assumed_from, "Qwen/Qwen2.5-VL-3B-Instruct");
  EXPECT_EQ(m->num_layers, 36);
  ASSERT_TRUE(m->quantization);
  EXPECT_EQ(m->quantization->method, "awq");
  EXPECT_EQ(m->quantization->guessed_from, "the repo name");
}

TEST(CatalogByName, TheLongestBaseNameWinsAndAnotherOwnerKeepsTheModel) {
  auto awq = catalog_model_by_name("hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4");
  ASSERT_TRUE(awq) << awq.error().to_string();
  EXPECT_EQ(awq->architecture_assumed_from, "meta-llama/Meta-Llama-3.1-8B-Instruct");
  EXPECT_EQ(awq->num_layers, 32);
  EXPECT_EQ(awq->quantization->method, "awq");
  auto same = catalog_model_by_name("unsloth/Qwen3-8B");
  ASSERT_TRUE(same) << same.error().to_string();
  EXPECT_EQ(same->architecture_assumed_from, "Qwen/Qwen3-8B");
  EXPECT_FALSE(same->quantization);
  // A base named with transformers' "-hf" marker, which re-quantizations drop.
  auto chat = catalog_model_by_name("TheBloke/Llama-2-7B-Chat-AWQ");
  ASSERT_TRUE(chat) << chat.error().to_string();
  EXPECT_EQ(chat->architecture_assumed_from, "meta-llama/Llama-2-7b-chat-hf");
  // "4b" after the method is its bit width, not another model's size.
  auto bits = catalog_model_by_name("ISTA-DASLab/gemma-3-27b-it-GPTQ-4b-128g");
  ASSERT_TRUE(bits) << bits.error().to_string();
  EXPECT_EQ(bits->architecture_assumed_from, "google/gemma-3-27b-it");
  EXPECT_EQ(bits->quantization->method, "gptq");
  auto gptq8 = catalog_model_by_name("someone/Qwen2.5-7B-Instruct-GPTQ-Int8");
  ASSERT_TRUE(gptq8) << gptq8.error().to_string();
  EXPECT_EQ(gptq8->quantization->method, "gptq");
  EXPECT_EQ(gptq8->quantization->bits, 8);
}

// Names that extend a base by a word that changes the model, or that no sized base begins.
TEST(CatalogByName, NamesThatSayAnotherModelAreRefused) {
  for (const char* id : {"deepseek-ai/DeepSeek-R1-0528-Qwen3-8B",  // "DeepSeek-R1" gives no size
                         "Qwen/Qwen3-Embedding-8B",                // not an extension of Qwen3-8B or Qwen3-Embedding-0.6B
                         "Qwen/Qwen2.5-7B-Instruct-1M",            // another context (dual-chunk attention)
                         "someone/Qwen3-8B-GGUF",                  // another file format
                         "someone/Qwen3-8B-Eagle3",                // a draft model
                         "someone/Qwen3-8B-4B-merge",              // another size, before any method
                         "someone/Qwen3-8B-int4",                  // quantized, but by which method?
                         "Qwen3-8B-AWQ"}) {                        // not a repo id
    auto m = catalog_model_by_name(id);
    ASSERT_FALSE(m) << id << " was taken as " << m->architecture_assumed_from;
    EXPECT_EQ(m.error().code, ErrorCode::not_found) << id;
  }
  auto int4 = catalog_model_by_name("someone/Qwen3-8B-int4");
  ASSERT_FALSE(int4);
  EXPECT_NE(int4.error().message.find("quantized but not by which method"), std::string::npos) << int4.error().message;
}

// The loader falls back to it only when nothing read the repo's own config, and says so.
TEST(CatalogByName, TheLoaderUsesItForARepoNothingElseKnowsAndNotesIt) {
  std::vector<std::string> notes;
  ModelLoadOptions options;
  options.hf_hub_cache = "/nonexistent-hf-cache";
  options.on_note = [&](const std::string& n) { notes.push_back(n); };
  auto m = load_model("google/gemma-4-E2B-it-qat-w4a16-ct", options);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->architecture_assumed_from, "google/gemma-4-E2B-it");
  EXPECT_EQ(m->quantization->method, "compressed-tensors");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("assumed to be google/gemma-4-E2B-it's"), std::string::npos) << notes[0];
  // A catalogue id is still the catalogue's own line.
  auto exact = load_model("google/gemma-4-E2B-it", options);
  ASSERT_TRUE(exact);
  EXPECT_TRUE(exact->architecture_assumed_from.empty());
  options.use_catalog = false;
  EXPECT_FALSE(load_model("google/gemma-4-E2B-it-qat-w4a16-ct", options));
}

// A max_model_len beyond the assumed base's limit is no predicted failure: the repo's own config
// may allow it (Qwen3-30B-A3B's 2507 releases are 262,144-token models; the base's line has 40,960).
TEST(CatalogByName, NoFailureIsAssertedFromTheAssumedLengthLimit) {
  auto m = catalog_model_by_name("someone/Qwen3-30B-A3B-AWQ-4bit");
  ASSERT_TRUE(m);
  VllmFlags flags;
  flags.max_model_len = 131072;
  const Prediction p = test_support::run(*m, test_support::gpus("H100"), flags);
  EXPECT_FALSE(p.failure && p.failure->error_class == "max_model_len_exceeds_model_limit") << p.failure->message;
  const Prediction base = test_support::run(test_support::model("Qwen/Qwen3-30B-A3B"), test_support::gpus("H100"), flags);
  ASSERT_TRUE(base.failure);
  EXPECT_EQ(base.failure->error_class, "max_model_len_exceeds_model_limit");
}

}  // namespace
}  // namespace headroom
