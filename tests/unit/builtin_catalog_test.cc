// The built-in catalogues are read lazily (the model catalogue line by line, the GPU catalogue
// without its documentation members); what they answer equals what parsing the whole files gives.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "headroom/gpu.h"
#include "headroom/gpu_json.h"
#include "headroom/model.h"
#include "util/embedded_data.h"
#include "util/json_file.h"

namespace headroom {
namespace {

TEST(BuiltinCatalog, ModelIdsAreThoseOfEveryLineParsedWhole) {
  auto text = embedded::find("models.jsonl");
  ASSERT_TRUE(text);
  auto lines = util::parse_jsonl(*text, "models.jsonl");
  ASSERT_TRUE(lines) << lines.error().to_string();
  std::vector<std::string> expected;
  for (const auto& line : *lines)
    if (line.contains("hf_id") && line["hf_id"].is_string()) expected.push_back(line["hf_id"].get<std::string>());
  ASSERT_GT(expected.size(), 100u);
  EXPECT_EQ(catalog_model_ids(), expected);
}

TEST(BuiltinCatalog, ModelLookupIgnoresCaseAndReadsTheLine) {
  auto spec = catalog_model("META-LLAMA/llama-3.1-8b-instruct");
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->id, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(spec->raw_config["hf_id"], "meta-llama/Llama-3.1-8B-Instruct");
}

TEST(BuiltinCatalog, GpuCatalogEqualsTheWholeFileParsed) {
  auto text = embedded::find("gpus.jsonl");
  ASSERT_TRUE(text);
  auto whole = GpuCatalog::from_jsonl(*text, "gpus.jsonl");
  ASSERT_TRUE(whole) << whole.error().to_string();
  ASSERT_FALSE(whole->all().empty());
  EXPECT_EQ(gpu_catalog_to_json(GpuCatalog::builtin()), gpu_catalog_to_json(*whole));
}

}  // namespace
}  // namespace headroom
