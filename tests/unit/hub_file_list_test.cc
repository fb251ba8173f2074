#include <gtest/gtest.h>

#include "headroom/hub.h"

namespace headroom::hub {
namespace {

const std::string k_sha = "0123456789abcdef0123456789abcdef01234567";

TEST(HubFileList, ReadsShaAndSiblings) {
  auto list = parse_file_list(R"({"id":"Org/M","sha":")" + k_sha +
                                  R"(","siblings":[{"rfilename":"config.json"},{"rfilename":"model.safetensors"}]})",
                              "list");
  ASSERT_TRUE(list) << list.error().to_string();
  EXPECT_EQ(list->repo, "Org/M");
  EXPECT_EQ(list->sha, k_sha);
  EXPECT_EQ(list->files, (std::vector<std::string>{"config.json", "model.safetensors"}));
}

TEST(HubFileList, RejectsAShaThatIsNotACommit) {
  auto list = parse_file_list(R"({"sha":"main","siblings":[]})", "list");
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().to_string(), "list: expected a 40-hex commit \"sha\" in the Hub's answer");
}

TEST(HubFileList, RejectsSiblingsWithoutNames) {
  auto list = parse_file_list(R"({"sha":")" + k_sha + R"(","siblings":[{"size":3}]})", "list");
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().message, "expected {\"rfilename\": NAME} entries in \"siblings\"");
}

TEST(HubFileList, NotJsonNamesTheOrigin) {
  auto list = parse_file_list("<html>", "Org/M@main (file list)");
  ASSERT_FALSE(list);
  EXPECT_TRUE(list.error().where.starts_with("Org/M@main (file list):1:")) << list.error().where;
}

TEST(HubIds, RepoIdsAndShas) {
  EXPECT_TRUE(is_repo_id("meta-llama/Llama-3.1-8B-Instruct"));
  EXPECT_TRUE(is_repo_id("Qwen/Qwen3.5-35B-A3B"));
  EXPECT_FALSE(is_repo_id("gpt2"));
  EXPECT_FALSE(is_repo_id("a/b/c"));
  EXPECT_FALSE(is_repo_id("org/../x"));
  EXPECT_FALSE(is_repo_id("org/na me"));
  EXPECT_TRUE(is_commit_sha(k_sha));
  EXPECT_FALSE(is_commit_sha("main"));
  EXPECT_FALSE(is_commit_sha(k_sha.substr(0, 12)));
}

TEST(HubIds, PageAddressesNameTheRepoAndTheRevision) {
  auto a = parse_repo_address("https://huggingface.co/Qwen/Qwen3-8B");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->repo, "Qwen/Qwen3-8B");
  EXPECT_EQ(a->revision, "");
  a = parse_repo_address("hf.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/config.json?download=true");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->repo, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(a->revision, "main");
  a = parse_repo_address("https://www.huggingface.co/org/model/tree/refs%2Fpr%2F3/");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->revision, "refs/pr/3");
  EXPECT_FALSE(parse_repo_address("Qwen/Qwen3-8B"));
  EXPECT_FALSE(parse_repo_address("https://huggingface.co/datasets/org/data"));
  EXPECT_FALSE(parse_repo_address("https://huggingface.co/spaces/org/app"));
  EXPECT_FALSE(parse_repo_address("https://huggingface.co/gpt2"));
  EXPECT_FALSE(parse_repo_address("https://example.com/Qwen/Qwen3-8B"));
  EXPECT_FALSE(parse_repo_address("https://huggingface.co/org/na me"));
}

TEST(SafetensorsIndex, ListsEachShardOnceSorted) {
  auto names = parse_safetensors_index(
      R"({"weight_map":{"a":"model-00002-of-00002.safetensors","b":"model-00001-of-00002.safetensors","c":"model-00001-of-00002.safetensors"}})",
      "index");
  ASSERT_TRUE(names) << names.error().to_string();
  EXPECT_EQ(*names, (std::vector<std::string>{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}));
}

TEST(SafetensorsIndex, RejectsShardNamesOutsideTheFolder) {
  auto names = parse_safetensors_index(R"({"weight_map":{"a":"../../etc/passwd"}})", "index");
  ASSERT_FALSE(names);
  EXPECT_EQ(names.error().to_string(),
            "index: shard name \"../../etc/passwd\" for tensor \"a\" is not a file beside the index");
}

}  // namespace
}  // namespace headroom::hub
