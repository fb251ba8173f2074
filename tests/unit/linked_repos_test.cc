// Ultravox configs that name their language and audio models by repo id (text_model_id,
// audio_model_id), as the fixie-ai releases do: load_model reads those repos' config.json and
// safetensors headers as vLLM's UltravoxConfig and ultravox.py load them (the language model's
// tensors under language_model., the Whisper checkpoint's encoder only, model.encoder. mapped to
// audio_tower.), from the Hugging Face cache and from the loopback Hub.
#include <gtest/gtest.h>

#include <filesystem>

#include "fake_hub.h"
#include "headroom/hub.h"
#include "headroom/model.h"
#include "unit/model_test_support.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using namespace test_support;

// The release config's shape (fixie-ai/ultravox-v0_4_1-llama-3_1-8b): projector settings, the two
// ids, no text_config or audio_config.
const char* k_ultravox = R"({"architectures": ["UltravoxModel"], "model_type": "ultravox", "hidden_size": 4096,
  "stack_factor": 8, "projector_act": "swiglu", "torch_dtype": "bfloat16", "vocab_size": 128256,
  "audio_model_id": "test-org/whisper-tiny", "text_model_id": "test-org/llama-tiny"})";
const char* k_llama = R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
  "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
  "vocab_size": 100, "max_position_embeddings": 4096})";
const char* k_whisper = R"({"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper",
  "d_model": 64, "encoder_layers": 2, "encoder_attention_heads": 4, "encoder_ffn_dim": 256, "decoder_layers": 2,
  "num_mel_bins": 128, "max_source_positions": 1500})";

// One BF16 tensor per name, each `bytes` long, laid out back to back.
std::string header_of(const std::vector<std::pair<std::string, int>>& tensors) {
  std::string h = "{";
  int offset = 0;
  for (const auto& [name, bytes] : tensors) {
    if (h.size() > 1) h += ",";
    h += "\"" + name + "\":{\"dtype\":\"BF16\",\"shape\":[" + std::to_string(bytes / 2) + "],\"data_offsets\":[" +
         std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  return h + "}";
}

int total_of(const std::vector<std::pair<std::string, int>>& tensors) {
  int n = 0;
  for (const auto& t : tensors) n += t.second;
  return n;
}

const std::vector<std::pair<std::string, int>> k_projector = {{"multi_modal_projector.linear_1.weight", 400},
                                                              {"multi_modal_projector.linear_2.weight", 200}};
const std::vector<std::pair<std::string, int>> k_llama_tensors = {{"model.embed_tokens.weight", 1000},
                                                                  {"model.layers.0.self_attn.q_proj.weight", 300},
                                                                  {"lm_head.weight", 1000}};
const std::vector<std::pair<std::string, int>> k_whisper_tensors = {{"model.encoder.conv1.weight", 120},
                                                                    {"model.encoder.layers.0.fc1.weight", 80},
                                                                    {"model.decoder.layers.0.fc1.weight", 5000},
                                                                    {"model.decoder.embed_tokens.weight", 7000},
                                                                    {"proj_out.weight", 7000}};

void cache_repo(const fs::path& hub, const std::string& dir, const std::string& config,
                const std::vector<std::pair<std::string, int>>& tensors) {
  const fs::path snap = hub / dir / "snapshots" / "0123abcd";
  write_bytes(snap / "config.json", config);
  write_bytes(snap / "model.safetensors", safetensors(header_of(tensors), static_cast<std::size_t>(total_of(tensors))));
}

// The release repo (its projector, and `own_extra` beside it) and the two repos it names, in the
// Hugging Face cache under `hub`; options that read that cache.
ModelLoadOptions cache_release(const fs::path& hub, const std::vector<std::pair<std::string, int>>& own_extra = {}) {
  auto own = k_projector;
  own.insert(own.end(), own_extra.begin(), own_extra.end());
  cache_repo(hub, "models--fixie-test--ultravox", k_ultravox, own);
  cache_repo(hub, "models--test-org--llama-tiny", k_llama, k_llama_tensors);
  cache_repo(hub, "models--test-org--whisper-tiny", k_whisper, k_whisper_tensors);
  ModelLoadOptions opts;
  opts.hf_hub_cache = hub.string();
  return opts;
}

void expect_composed(const ModelSpec& m) {
  EXPECT_EQ(m.architecture, "UltravoxModel");
  EXPECT_EQ(m.num_layers, 2);
  EXPECT_EQ(m.hidden_size, 64);
  ASSERT_TRUE(m.audio);
  EXPECT_EQ(m.audio->d_model, 64);
  ASSERT_TRUE(m.weights);
  EXPECT_TRUE(m.weights->exact);
  // The projector, every language-model tensor and the Whisper encoder's two; not its decoder.
  EXPECT_EQ(m.weights->total_bytes, 600 + 2300 + 200);
  EXPECT_TRUE(find_tensor(*m.weights, "language_model.model.layers.0.self_attn.q_proj.weight"));
  EXPECT_TRUE(find_tensor(*m.weights, "audio_tower.layers.0.fc1.weight"));
  EXPECT_FALSE(find_tensor(*m.weights, "audio_tower.model.decoder.layers.0.fc1.weight"));
  ASSERT_EQ(m.linked_repos.size(), 2u);
  EXPECT_FALSE(m.linked_unread);
}

TEST(LinkedRepos, UltravoxReadsItsLanguageAndAudioModelsFromTheHuggingFaceCache) {
  TempDir dir;
  auto m = load_model("fixie-test/ultravox", cache_release(dir.path()));
  ASSERT_TRUE(m) << m.error().to_string();
  expect_composed(*m);
  EXPECT_EQ(m->linked_repos[0].key, "text_model_id");
  EXPECT_EQ(m->linked_repos[0].repo, "test-org/llama-tiny");
  EXPECT_EQ(m->linked_repos[0].source, "the Hugging Face cache");
}

TEST(LinkedRepos, AnUnreadableLinkedRepoIsAnErrorThatSaysWhatToDo) {
  TempDir dir;
  cache_repo(dir.path(), "models--fixie-test--ultravox", k_ultravox, k_projector);
  cache_repo(dir.path(), "models--test-org--whisper-tiny", k_whisper, k_whisper_tensors);
  ModelLoadOptions opts;
  opts.hf_hub_cache = dir.path().string();
  auto m = load_model("fixie-test/ultravox", opts);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::not_found);
  EXPECT_NE(m.error().message.find("text_model_id test-org/llama-tiny"), std::string::npos) << m.error().message;
  EXPECT_NE(m.error().message.find("holds text_config itself"), std::string::npos) << m.error().message;
}

// A language model the Hub would not give (here: not cached, offline) that the built-in catalogue
// holds is taken from its line, with a note; the weights are then laid out from the configs. The
// release configs name meta-llama/Meta-Llama-3.1-8B-Instruct, a gated repo.
TEST(LinkedRepos, TheCatalogueStandsInForALanguageModelTheHubWouldNotGive) {
  TempDir dir;
  std::string config = k_ultravox;
  config.replace(config.find("test-org/llama-tiny"), std::string("test-org/llama-tiny").size(), "meta-llama/Meta-Llama-3.1-8B-Instruct");
  cache_repo(dir.path(), "models--fixie-test--ultravox", config, k_projector);
  cache_repo(dir.path(), "models--test-org--whisper-tiny", k_whisper, k_whisper_tensors);
  ModelLoadOptions opts;
  opts.hf_hub_cache = dir.path().string();
  std::vector<std::string> notes;
  opts.on_note = [&](const std::string& n) { notes.push_back(n); };
  auto m = load_model("fixie-test/ultravox", opts);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->num_layers, 32);
  EXPECT_EQ(m->hidden_size, 4096);
  ASSERT_TRUE(m->audio);
  EXPECT_FALSE(m->weights);
  ASSERT_EQ(m->linked_repos.size(), 2u);
  EXPECT_EQ(m->linked_repos[0].source, "the built-in catalogue");
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("using the built-in catalogue's line for it"), std::string::npos) << notes[0];
  opts.use_catalog = false;
  EXPECT_FALSE(load_model("fixie-test/ultravox", opts));
}

// A repo whose own checkpoint also holds the Whisper encoder (audio_tower.model.encoder.*, as
// ultravox.py's mapper reads it): each tensor is loaded once.
TEST(LinkedRepos, AnEncoderTensorTheRepoAlsoHoldsIsCountedOnce) {
  TempDir dir;
  auto m = load_model("fixie-test/ultravox", cache_release(dir.path(), {{"audio_tower.model.encoder.layers.0.fc1.weight", 80}}));
  ASSERT_TRUE(m) << m.error().to_string();
  expect_composed(*m);
}

// A config that holds text_config and audio_config itself is read as before, ids or not.
TEST(LinkedRepos, AConfigHoldingBothConfigsReadsNoOtherRepo) {
  TempDir dir;
  std::string config = k_ultravox;
  config.insert(config.rfind('}'), std::string(R"(, "text_config": )") + k_llama + R"(, "audio_config": )" + k_whisper);
  write_bytes(dir.path() / "config.json", config);
  auto m = load_model(dir.path().string());
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_TRUE(m->linked_repos.empty());
  EXPECT_EQ(m->num_layers, 2);
}

testing::FakeRepo fake_repo(const std::string& id, char sha, const std::string& config,
                            const std::vector<std::pair<std::string, int>>& tensors) {
  testing::FakeRepo r;
  r.id = id;
  r.sha = std::string(40, sha);
  r.files["config.json"] = {config, config.size(), false};
  r.files["model.safetensors"] = {testing::safetensors_head(header_of(tensors)), 0, true};
  r.files["model.safetensors"].size = r.files["model.safetensors"].head.size() + static_cast<std::uint64_t>(total_of(tensors));
  return r;
}

TEST(LinkedRepos, UltravoxReadsItsLinkedReposFromTheHub) {
  testing::FakeHub fake;
  fake.add_repo(fake_repo("fixie-test/ultravox", 'a', k_ultravox, k_projector));
  fake.add_repo(fake_repo("test-org/llama-tiny", 'b', k_llama, k_llama_tensors));
  fake.add_repo(fake_repo("test-org/whisper-tiny", 'c', k_whisper, k_whisper_tensors));
  TempDir dir;
  hub::HubSettings s;
  s.endpoint = fake.endpoint();
  s.cache_dir = (dir.path() / "hub-cache").string();
  ModelLoadOptions opts;
  opts.hub = &s;
  opts.hf_hub_cache = (dir.path() / "no-hf-cache").string();
  auto m = load_model("fixie-test/ultravox", opts);
  ASSERT_TRUE(m) << m.error().to_string();
  expect_composed(*m);
  EXPECT_EQ(m->source, ModelSource::hub);
  EXPECT_EQ(m->linked_repos[1].repo, "test-org/whisper-tiny");
  EXPECT_EQ(m->linked_repos[1].source, "the Hub");
  // Offline, the same three repos come from headroom's Hub cache.
  s.offline = true;
  auto cached = load_model("fixie-test/ultravox", opts);
  ASSERT_TRUE(cached) << cached.error().to_string();
  expect_composed(*cached);
  EXPECT_EQ(cached->linked_repos[0].source, "headroom's Hub cache");
}

}  // namespace
}  // namespace headroom
