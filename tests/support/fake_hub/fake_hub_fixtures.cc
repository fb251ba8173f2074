// The fixture repos of the Hub tests, generated from config.json files the suite already knows.
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "fake_hub.h"

namespace headroom::testing {

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("fake Hub: cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

FakeRepo with_shard_head(FakeRepo repo, const std::string& head, std::uint64_t size) {
  repo.files["model.safetensors"] = FakeFile{head, size, true};
  return repo;
}

}  // namespace

FakeRepo deepseek_v3_fixture(const std::string& models_dir) {
  return make_fixture_repo("deepseek-ai/DeepSeek-V3", read(models_dir + "/deepseek_mla_moe.json"), 163);
}

std::vector<FakeRepo> standard_fixtures(const std::string& models_dir) {
  const std::string llama = read(models_dir + "/llama_gqa.json");
  std::vector<FakeRepo> repos;
  repos.push_back(make_fixture_repo("headroom-test/llama-sharded", llama, 60));
  repos.push_back(make_fixture_repo("headroom-test/deepseek-moe", read(models_dir + "/deepseek_mla_moe.json"), 12));
  repos.push_back(make_fixture_repo("headroom-test/w4a16", read(models_dir + "/compressed_tensors_w4a16.json"), 2));

  // A vision-language repo whose processor allows smaller images than the release default
  // (1280 × 28 × 28 pixels: 35 × 35 merged tokens).
  FakeRepo vl = make_fixture_repo("headroom-test/qwen25-vl", read(models_dir + "/qwen25_vl.json"), 2);
  const std::string processor = R"({"image_processor_type": "Qwen2VLImageProcessor", "max_pixels": 1003520, "min_pixels": 3136, "patch_size": 14, "merge_size": 2, "temporal_patch_size": 2})";
  vl.files["preprocessor_config.json"] = FakeFile{processor, processor.size(), false};
  // And a video processor config, as newer releases write beside it (its size.longest_edge is the
  // video processor's pixel budget).
  const std::string video = R"({"video_processor_type": "Qwen2VLVideoProcessor", "size": {"longest_edge": 25165824, "shortest_edge": 4096}})";
  vl.files["video_preprocessor_config.json"] = FakeFile{video, video.size(), false};
  repos.push_back(vl);

  FakeRepo gated = make_fixture_repo("headroom-test/gated-llama", llama, 2);
  gated.gated = true;
  repos.push_back(gated);

  FakeRepo limited = make_fixture_repo("headroom-test/rate-limited", llama, 1);
  limited.rate_limit_first = 1;
  repos.push_back(limited);

  FakeRepo overloaded = make_fixture_repo("headroom-test/overloaded", llama, 1);
  overloaded.always_503 = true;
  repos.push_back(overloaded);

  FakeRepo slow = make_fixture_repo("headroom-test/slow", llama, 4);
  slow.slow_file = "model-00003-of-00004.safetensors";
  slow.slow_ms = 120000;  // in practice: until the hub stops
  repos.push_back(slow);

  FakeRepo cut = make_fixture_repo("headroom-test/cut", llama, 4);
  cut.cut_file = "model-00002-of-00004.safetensors";
  repos.push_back(cut);

  FakeRepo base = make_fixture_repo("headroom-test/absurd-header", llama, 1);
  // A length of 2^60 bytes: no real header is larger than a few MiB.
  std::string absurd(8, '\0');
  absurd[7] = 0x10;
  repos.push_back(with_shard_head(base, absurd + "{}", 1000));

  base.id = "headroom-test/not-json-header";
  repos.push_back(with_shard_head(base, safetensors_head("<html>Access denied</html>"), 1000));

  base.id = "headroom-test/overflow-shape";
  std::string huge = R"({"w":{"dtype":"BF16","shape":[99999999999999999999999,2],"data_offsets":[0,4]}})";
  repos.push_back(with_shard_head(base, safetensors_head(huge), safetensors_head(huge).size() + 4));

  FakeRepo missing = make_fixture_repo("headroom-test/missing-shard", llama, 3);
  missing.files.erase("model-00002-of-00003.safetensors");
  repos.push_back(missing);

  FakeRepo bin = make_fixture_repo("headroom-test/bin-only", llama, 1);
  bin.files.erase("model.safetensors");
  bin.files["pytorch_model.bin"] = FakeFile{"PK", 1000, true};
  repos.push_back(bin);

  FakeRepo gguf;
  gguf.id = "headroom-test/gguf-only";
  gguf.sha = std::string(40, 'a');
  gguf.files["model-Q4_K_M.gguf"] = FakeFile{"GGUF", 1000, true};
  repos.push_back(gguf);
  return repos;
}

}  // namespace headroom::testing
