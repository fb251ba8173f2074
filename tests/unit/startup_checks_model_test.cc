// vLLM's checks of the model itself: an attention layer whose query heads do not group over its KV
// heads (attention/layer.py Attention.__init__), and an architecture outside vLLM's registry
// (model_executor/models/registry.py, data/vllm_architectures.json).
#include <gtest/gtest.h>

#include <string>

#include "headroom/model.h"
#include "headroom/vllm_engine.h"
#include "unit/engine_test_support.h"

namespace headroom {
namespace {

using test_support::gpus;
using test_support::run;

ModelSpec local_model(const std::string& architecture, int heads, int kv_heads) {
  nlohmann::json j = {{"architectures", {architecture}},
                      {"model_type", "llama"},
                      {"hidden_size", 4096},
                      {"intermediate_size", 14336},
                      {"num_hidden_layers", 32},
                      {"num_attention_heads", heads},
                      {"num_key_value_heads", kv_heads},
                      {"vocab_size", 128256},
                      {"max_position_embeddings", 8192},
                      {"torch_dtype", "bfloat16"}};
  auto m = parse_model_config(j, "config.json");
  EXPECT_TRUE(m) << m.error().to_string();
  m->source = ModelSource::config_file;
  m->id = "local";
  return *m;
}

bool has_warning(const Prediction& p, const std::string& part) {
  for (const auto& w : p.warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
}

// 64 KV heads for 32 query heads: Attention asserts num_heads % num_kv_heads == 0 per rank.
TEST(StartupChecksModel, MoreKvHeadsThanQueryHeadsFailsAtModelConstruction) {
  Prediction p = run(local_model("LlamaForCausalLM", 32, 64), gpus("H100"), VllmFlags{});
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->error_class, "attention_heads_invalid");
  EXPECT_EQ(p.failure->phase, "model-construction");
  EXPECT_EQ(p.failure->message, "num_heads (32) is not divisible by num_kv_heads (64)");
}

// Per rank at TP 2: 16 query heads over 3 KV heads (6 / 2) do not group either.
TEST(StartupChecksModel, KvHeadsThatDoNotGroupPerRankFail) {
  VllmFlags f;
  f.tensor_parallel_size = 2;
  Prediction p = run(local_model("LlamaForCausalLM", 32, 6), gpus("H100", 2), f);
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->message, "num_heads (16) is not divisible by num_kv_heads (3)");
}

TEST(StartupChecksModel, GroupedKvHeadsStart) {
  EXPECT_TRUE(run(local_model("LlamaForCausalLM", 32, 8), gpus("H100"), VllmFlags{}).starts);
}

// registry.py _raise_for_unsupported: a generative class that neither vLLM's registry nor
// transformers (the Transformers backend) nor remote code has stops the engine, up to the release
// the registry was read at (v0.12.0). A later release may have added it: a warning, no verdict.
TEST(StartupChecksModel, GenerativeArchitectureNobodyHasFails) {
  Prediction p = run(local_model("EvilForCausalLM", 32, 8), gpus("H100"), VllmFlags{}, VllmVersion{0, 12, 0});
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->error_class, "architecture_unsupported");
  EXPECT_EQ(p.failure->message.rfind("Model architectures ['EvilForCausalLM'] are not supported for now.", 0), 0u)
      << p.failure->message;
  Prediction later = run(local_model("EvilForCausalLM", 32, 8), gpus("H100"), VllmFlags{}, VllmVersion{0, 19, 0});
  EXPECT_TRUE(later.starts);
  EXPECT_TRUE(has_warning(later, "vLLM 0.19.0 is newer and may have added it"));
}

// openai/whisper-large-v3-turbo's config.json: an encoder-decoder (32 encoder layers, 4 decoder
// layers) that headroom reads as a decoder-only model; the prediction says what it leaves out.
TEST(StartupChecksModel, WhisperIsNamedAsNotModelled) {
  auto m = parse_model_config_text(R"({"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper",
    "d_model": 1280, "decoder_attention_heads": 20, "decoder_ffn_dim": 5120, "decoder_layers": 4, "encoder_attention_heads": 20,
    "encoder_ffn_dim": 5120, "encoder_layers": 32, "max_source_positions": 1500, "max_target_positions": 448,
    "num_hidden_layers": 32, "num_mel_bins": 128, "vocab_size": 51866, "torch_dtype": "float16"})",
                                   "config.json");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(has_warning(run(*m, gpus("H100"), VllmFlags{}), "Whisper is an encoder-decoder model, which headroom does not model"));
}

// A class transformers has runs on vLLM's Transformers backend (NanoChat is in transformers'
// MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, not in vLLM's registry as read).
TEST(StartupChecksModel, TransformersBackendArchitectureStarts) {
  Prediction p = run(local_model("NanoChatForCausalLM", 32, 8), gpus("H100"), VllmFlags{});
  EXPECT_TRUE(p.starts);
  EXPECT_FALSE(has_warning(p, "model registry"));
}

// Not a generative class (a pooling or base model): transformers may have it outside the mappings
// read, so it is a warning.
TEST(StartupChecksModel, OtherUnknownArchitectureIsWarned) {
  Prediction p = run(local_model("EvilModel", 32, 8), gpus("H100"), VllmFlags{});
  EXPECT_TRUE(p.starts);
  EXPECT_TRUE(has_warning(p, "vLLM stops with \"Model architectures ['EvilModel'] are not supported for now.\""));
}

TEST(StartupChecksModel, ArchitecturesInVllmsRegistryAreNotWarned) {
  for (const char* arch : {"LlamaForCausalLM", "MistralForCausalLM", "InternLM3ForCausalLM"}) {
    Prediction p = run(local_model(arch, 32, 8), gpus("H100"), VllmFlags{});
    EXPECT_FALSE(has_warning(p, "model registry")) << arch;
  }
}

// Remote code (auto_map) runs whatever class it names.
TEST(StartupChecksModel, RemoteCodeArchitecturesAreNotWarned) {
  ModelSpec m = local_model("EvilForCausalLM", 32, 8);
  m.raw_config["auto_map"] = {{"AutoModelForCausalLM", "modeling_evil.EvilForCausalLM"}};
  Prediction p = run(m, gpus("H100"), VllmFlags{});
  EXPECT_TRUE(p.starts);
  EXPECT_FALSE(has_warning(p, "model registry"));
}

}  // namespace
}  // namespace headroom
