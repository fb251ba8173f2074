#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "engine/encoder_profile.h"
#include "headroom/model.h"
#include "unit/model_test_support.h"
#include "unit/vision_configs.h"
#include "util/json_file.h"

namespace headroom {
namespace {

using namespace test_support;
namespace fs = std::filesystem;

std::string tiny_config() {
  return R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":64,"num_hidden_layers":2,)"
         R"("num_attention_heads":4,"num_key_value_heads":2,"vocab_size":100,"max_position_embeddings":4096})";
}

// Restores an environment variable when the test ends.
class EnvGuard {
 public:
  explicit EnvGuard(const char* name) : m_name(name) {
    if (const char* v = std::getenv(name)) m_old = v;
  }
  ~EnvGuard() {
    if (m_old) setenv(m_name, m_old->c_str(), 1);
    else unsetenv(m_name);
  }

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

// models--Org--Tiny/snapshots/<rev>/ with config.json and a weights file linked to blobs/, as the
// Hugging Face hub lays it out.
void make_hf_repo(const fs::path& hub, const std::string& rev, bool with_ref) {
  fs::path repo = hub / "models--Org--Tiny";
  fs::path blob = repo / "blobs" / "abc123";
  write_bytes(blob, safetensors(R"({"w":{"dtype":"BF16","shape":[4,4],"data_offsets":[0,32]}})", 32));
  fs::path snap = repo / "snapshots" / rev;
  write_bytes(snap / "config.json", tiny_config());
  fs::create_symlink(fs::path("../../blobs/abc123"), snap / "model.safetensors");
  if (with_ref) write_bytes(repo / "refs" / "main", rev + "\n");
}

TEST(ModelLoader, LocalFolderReadsTokenizerLimitAndSafetensors) {
  TempDir dir;
  write_bytes(dir.path() / "config.json", tiny_config());
  write_bytes(dir.path() / "tokenizer_config.json", R"({"model_max_length": 2048})");
  write_bytes(dir.path() / "model.safetensors",
              safetensors(R"({"w":{"dtype":"BF16","shape":[4,4],"data_offsets":[0,32]}})", 32));
  auto m = load_model(dir.path().string());
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->source, ModelSource::local_dir);
  EXPECT_EQ(m->location, dir.path().string());
  EXPECT_EQ(m->tokenizer_model_max_length, 2048);
  ASSERT_TRUE(m->weights);
  EXPECT_TRUE(m->weights->exact);
  EXPECT_EQ(m->weights->total_bytes, 32);
}

TEST(ModelLoader, PathToConfigFile) {
  TempDir dir;
  write_bytes(dir.path() / "my.json", tiny_config());
  auto m = load_model((dir.path() / "my.json").string());
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->source, ModelSource::config_file);
  EXPECT_FALSE(m->weights);
}

TEST(ModelLoader, ModelOptQuantConfigBesideConfig) {
  TempDir dir;
  write_bytes(dir.path() / "config.json", tiny_config());
  write_bytes(dir.path() / "hf_quant_config.json",
              R"({"producer":{"name":"modelopt"},"quantization":{"quant_algo":"FP8","kv_cache_quant_algo":"FP8",)"
              R"("exclude_modules":["lm_head"]}})");
  auto m = load_model(dir.path().string());
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_TRUE(m->quantization);
  EXPECT_EQ(m->quantization->method, "modelopt");
  EXPECT_EQ(m->quantization->bits, 8);
  EXPECT_TRUE(m->quantization->kv_cache_fp8);
}

TEST(ModelLoader, HfHubCacheWithRefsMainAndSymlinkedBlob) {
  TempDir dir;
  make_hf_repo(dir.path(), "0123abcd", true);
  EnvGuard g1("HF_HUB_CACHE");
  setenv("HF_HUB_CACHE", dir.path().c_str(), 1);
  auto m = load_model("org/tiny");  // ids match case-insensitively
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->source, ModelSource::hf_cache);
  EXPECT_EQ(m->location, (dir.path() / "models--Org--Tiny" / "snapshots" / "0123abcd").string());
  ASSERT_TRUE(m->weights);
  EXPECT_EQ(m->weights->total_bytes, 32);
}

TEST(ModelLoader, HfHomeHubWithoutRefsUsesASnapshot) {
  TempDir dir;
  make_hf_repo(dir.path() / "hub", "feedbeef", false);
  EnvGuard g1("HF_HUB_CACHE"), g2("HF_HOME");
  unsetenv("HF_HUB_CACHE");
  setenv("HF_HOME", dir.path().c_str(), 1);
  auto m = load_model("Org/Tiny");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->source, ModelSource::hf_cache);
  EXPECT_EQ(m->num_kv_heads, 2);
}

TEST(ModelLoader, FallsBackToTheCatalogue) {
  TempDir dir;
  ModelLoadOptions opts;
  opts.hf_hub_cache = dir.path().string();
  auto m = load_model("qwen/qwen3-0.6b", opts);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->source, ModelSource::catalog);
  EXPECT_EQ(m->id, "Qwen/Qwen3-0.6B");
}

TEST(ModelLoader, HubPageAddressResolvesLikeItsRepoId) {
  TempDir dir;
  ModelLoadOptions opts;
  opts.hf_hub_cache = dir.path().string();
  std::vector<std::string> notes;
  opts.on_note = [&](const std::string& n) { notes.push_back(n); };
  auto m = load_model("https://huggingface.co/Qwen/Qwen3-0.6B/tree/main", opts);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->source, ModelSource::catalog);
  EXPECT_EQ(m->id, "Qwen/Qwen3-0.6B");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "read the address https://huggingface.co/Qwen/Qwen3-0.6B/tree/main as the Hub repo Qwen/Qwen3-0.6B");
}

TEST(ModelLoader, UnknownModelSaysWhereItLooked) {
  TempDir dir;
  ModelLoadOptions opts;
  opts.hf_hub_cache = dir.path().string();
  auto m = load_model("Qwen/Qwen3-8X", opts);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::not_found);
  EXPECT_EQ(m.error().message, "unknown model 'Qwen/Qwen3-8X': not a folder or file, not in the Hugging Face cache (" +
                                   dir.path().string() +
                                   "), not in the built-in catalogue; did you mean Qwen/Qwen3-8B, Qwen/Qwen3-4B or "
                                   "Qwen/Qwen3-14B?");
}

TEST(ModelLoader, FolderWithoutConfigIsNotFound) {
  TempDir dir;
  auto m = load_model(dir.path().string());
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().to_string(), dir.path().string() + ": folder has no config.json");
}

// preprocessor_config.json beside config.json: Qwen2-VL's max_pixels at the top level, Qwen3-VL's
// pixel budget as size.longest_edge; a value out of range or a file that is not an object is an
// error naming the file and key, not a silent default.
TEST(ModelLoader, PreprocessorConfigGivesTheLargestInput) {
  const std::string vl = util::read_file(std::string(HEADROOM_TEST_DATA_DIR) + "/models/qwen25_vl.json").value();
  TempDir dir;
  write_bytes(dir.path() / "config.json", vl);
  write_bytes(dir.path() / "preprocessor_config.json", R"({"size": {"longest_edge": 1003520, "shortest_edge": 3136}})");
  auto m = load_model(dir.path().string());
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->max_pixels, 1003520);
  EXPECT_EQ(m->vision->min_pixels, 3136);

  write_bytes(dir.path() / "preprocessor_config.json", R"({"max_pixels": -5})");
  auto negative = load_model(dir.path().string());
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message.find("max_pixels is -5, outside 1.."), std::string::npos) << negative.error().to_string();
  EXPECT_NE(negative.error().where.find("preprocessor_config.json"), std::string::npos);

  write_bytes(dir.path() / "preprocessor_config.json", R"({"size": {"longest_edge": 99999999999999}})");
  auto huge = load_model(dir.path().string());
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().to_string().find("size.longest_edge"), std::string::npos) << huge.error().to_string();

  write_bytes(dir.path() / "preprocessor_config.json", R"([1, 2])");
  auto list = load_model(dir.path().string());
  ASSERT_FALSE(list);
  EXPECT_NE(list.error().message.find("not an object"), std::string::npos);

  write_bytes(dir.path() / "preprocessor_config.json", R"({"max_pixels": )");
  EXPECT_FALSE(load_model(dir.path().string()));
}

// video_preprocessor_config.json beside config.json: GLM-4.6V-Flash's video processor resizes into
// 100,352,000 pixels, where glm4_1v.py's frame search keeps 47,040,000. At 64k context on v0.19
// the 600 dummy frames of 2184² are resized to floor(sqrt(100,352,000 / 600) / 28) x 28 = 392
// pixels: grid (300, 28, 28), 235,200 patches (120,000 at GLM-4.1V's 47,040,000). A budget out of
// range is an error naming the file and key.
TEST(ModelLoader, VideoPreprocessorConfigGivesTheVideoBudget) {
  TempDir dir;
  write_bytes(dir.path() / "config.json", test_support::k_glm_4_1v);
  write_bytes(dir.path() / "video_preprocessor_config.json",
              R"({"size": {"longest_edge": 100352000, "shortest_edge": 12544}, "video_processor_type": "Glm46VVideoProcessor"})");
  auto m = load_model(dir.path().string());
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->video_max_pixels, 100352000);
  ResolvedSettings s;
  s.max_num_batched_tokens = 8192;
  s.max_num_seqs = 256;
  s.max_model_len = 65536;
  auto p = engine::encoder_profile(*m, {}, s, {0, 19, 0}, 2.0, {});
  EXPECT_EQ(p.item.modality, "video");
  EXPECT_EQ(p.item.patches, 235200);

  write_bytes(dir.path() / "video_preprocessor_config.json", R"({"size": {"longest_edge": 0}})");
  auto zero = load_model(dir.path().string());
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().message.find("size.longest_edge is 0"), std::string::npos) << zero.error().to_string();
  EXPECT_NE(zero.error().where.find("video_preprocessor_config.json"), std::string::npos);
}

// Phi-3.5-vision's preprocessor_config.json writes num_crops (4); Phi3VForCausalLM's tower comes
// from img_processor, since its config.json has no vision_config. A hostile count is refused.
TEST(ModelLoader, PreprocessorConfigGivesPhi3VisionItsCrops) {
  TempDir dir;
  write_bytes(dir.path() / "config.json", R"({"architectures": ["Phi3VForCausalLM"], "model_type": "phi3_v",
    "hidden_size": 3072, "intermediate_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 32,
    "num_hidden_layers": 32, "vocab_size": 32064, "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
    "img_processor": {"image_dim_out": 1024, "name": "clip_vision_model", "num_img_tokens": 144}})");
  write_bytes(dir.path() / "preprocessor_config.json", R"({"num_crops": 4, "image_processor_type": "Phi3VImageProcessor"})");
  auto m = load_model(dir.path().string());
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->max_tiles, 4);
  EXPECT_NE(m->vision->processor_source.find("preprocessor_config.json"), std::string::npos);
  write_bytes(dir.path() / "preprocessor_config.json", R"({"num_crops": 100000})");
  auto huge = load_model(dir.path().string());
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("num_crops is 100000, outside 1.."), std::string::npos) << huge.error().to_string();
}

// Phi-4-multimodal's preprocessor_config.json writes dynamic_hd (the most 448-pixel crops of one
// image, 36 in the release); a smaller one is read, a hostile one refused with file and key.
TEST(ModelLoader, PreprocessorConfigGivesPhi4MultimodalItsCrops) {
  TempDir dir;
  write_bytes(dir.path() / "config.json", test_support::k_phi4_multimodal);
  write_bytes(dir.path() / "preprocessor_config.json", R"({"dynamic_hd": 16, "image_processor_type": "Phi4MMImageProcessor"})");
  auto m = load_model(dir.path().string());
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->max_tiles, 16);
  EXPECT_EQ(m->vision->image_size, 448);
  write_bytes(dir.path() / "preprocessor_config.json", R"({"dynamic_hd": 5000000})");
  auto huge = load_model(dir.path().string());
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message.find("dynamic_hd is 5000000, outside 1.."), std::string::npos) << huge.error().to_string();
}

// A text model ignores a stray preprocessor_config.json.
TEST(ModelLoader, TextModelIgnoresAPreprocessorConfig) {
  TempDir dir;
  write_bytes(dir.path() / "config.json", tiny_config());
  write_bytes(dir.path() / "preprocessor_config.json", R"({"max_pixels": -5})");
  auto m = load_model(dir.path().string());
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_FALSE(m->vision);
}

}  // namespace
}  // namespace headroom
