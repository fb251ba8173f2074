#include <gtest/gtest.h>

#include <filesystem>

#include "headroom/hub.h"
#include "unit/model_test_support.h"
#include "util/json_file.h"

namespace headroom::hub {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;

const std::string k_sha = "0123456789abcdef0123456789abcdef01234567";

HubSnapshot snapshot() {
  HubSnapshot s;
  s.repo = "Org/Model";
  s.sha = k_sha;
  s.files = {"config.json", "model.safetensors"};
  s.json_files["config.json"] = R"({"model_type":"llama"})";
  s.fetched_unix_s = 1'750'000'000;
  ShardHeader h;
  h.file = "model.safetensors";
  h.file_size = 1000;
  h.tensors = {TensorInfo{"model.embed_tokens.weight", "BF16", {100, 64}, 12800}, TensorInfo{"scalar", "F32", {}, 4}};
  s.shards.push_back(h);
  return s;
}

TEST(HubCache, StoresAndLoadsASnapshotByRepoAndCommit) {
  TempDir dir;
  HubCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(snapshot(), "main"));
  auto loaded = cache.load("org/model", k_sha);  // repo ids match case-insensitively
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  ASSERT_TRUE(*loaded);
  const HubSnapshot& s = **loaded;
  EXPECT_EQ(s.repo, "Org/Model");
  EXPECT_EQ(s.files, snapshot().files);
  EXPECT_EQ(s.json_files, snapshot().json_files);
  ASSERT_EQ(s.shards.size(), 1u);
  ASSERT_EQ(s.shards[0].tensors.size(), 2u);
  EXPECT_EQ(s.shards[0].tensors[0].shape, (std::vector<std::int64_t>{100, 64}));
  EXPECT_EQ(s.shards[0].tensors[0].bytes, 12800);
  EXPECT_TRUE(s.shards[0].tensors[1].shape.empty());
  EXPECT_EQ(cache.ref("Org/Model", "main"), k_sha);
  EXPECT_EQ(cache.ref("Org/Model", "v1"), std::nullopt);
}

TEST(HubCache, LeavesNoTemporaryFiles) {
  TempDir dir;
  HubCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(snapshot(), "refs/pr/1"));
  for (const auto& e : fs::recursive_directory_iterator(dir.path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  EXPECT_EQ(cache.ref("Org/Model", "refs/pr/1"), k_sha);
}

TEST(HubCache, ACutShortFileIsAnErrorNotAModel) {
  TempDir dir;
  HubCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(snapshot(), "main"));
  fs::path file = dir.path() / "org--model" / (k_sha + ".hub");
  auto text = util::read_file(file.string()).value();
  test_support::write_bytes(file, text.substr(0, text.size() - 10));
  auto loaded = cache.load("Org/Model", k_sha);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, ErrorCode::parse_error);
}

TEST(HubCache, ListsAndClears) {
  TempDir dir;
  HubCache cache(dir.path().string());
  ASSERT_TRUE(cache.store(snapshot(), "main"));
  HubSnapshot other = snapshot();
  other.repo = "Other/Model";
  ASSERT_TRUE(cache.store(other, ""));
  auto entries = cache.list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].repo, "Org/Model");
  EXPECT_EQ(entries[0].refs, (std::vector<std::string>{"main"}));
  EXPECT_EQ(entries[0].shard_count, 1);
  EXPECT_EQ(cache.repo_ids(), (std::vector<std::string>{"Org/Model", "Other/Model"}));
  EXPECT_EQ(cache.clear("Other/Model").value(), 1);
  EXPECT_EQ(cache.list().size(), 1u);
  EXPECT_EQ(cache.clear().value(), 1);
  EXPECT_TRUE(cache.list().empty());
}

}  // namespace
}  // namespace headroom::hub
