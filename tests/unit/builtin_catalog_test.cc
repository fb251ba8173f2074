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

// The lines of an embedded JSONL file, parsed whole; empty (and a failure) when it is missing or
// malformed.
std::vector<nlohmann::json> embedded_lines(const char* name) {
  auto text = embedded::find(name);
  EXPECT_TRUE(text) << name;
  if (!text) return {};
  auto lines = util::parse_jsonl(*text, name);
  EXPECT_TRUE(lines) << lines.error().to_string();
  return lines ? *lines : std::vector<nlohmann::json>{};
}

TEST(BuiltinCatalog, ModelIdsAreThoseOfEveryLineParsedWhole) {
  const auto lines = embedded_lines("models.jsonl");
  std::vector<std::string> expected;
  for (const auto& line : lines)
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

// A line added from a copy of its repo's config.json (scripts/catalog_add_config.py) predicts as
// that config.json read from the Hub or a folder would: the same architecture, the same
// synthesised weights, the quantization and its ignore list read rather than guessed.
TEST(BuiltinCatalog, LinesAddedFromAWholeConfigReadItAsTheHubWould) {
  int whole = 0;
  for (const auto& line : embedded_lines("config_supplements.jsonl")) {
    if (!line.value("whole_config", false)) continue;
    ++whole;
    const std::string id = line["hf_id"].get<std::string>();
    auto from_catalogue = catalog_model(id);
    ASSERT_TRUE(from_catalogue) << id << ": " << from_catalogue.error().to_string();
    auto from_file = parse_model_config(line["config"], id + "/config.json");
    ASSERT_TRUE(from_file) << id << ": " << from_file.error().to_string();
    EXPECT_EQ(from_catalogue->location.rfind("built-in catalogue", 0), 0u) << id;
    EXPECT_EQ(from_catalogue->architecture, from_file->architecture) << id;
    EXPECT_EQ(from_catalogue->num_layers, from_file->num_layers) << id;
    EXPECT_EQ(from_catalogue->vision.has_value(), from_file->vision.has_value()) << id;
    EXPECT_EQ(synthesize_weights(*from_catalogue).total_bytes, synthesize_weights(*from_file).total_bytes) << id;
    ASSERT_EQ(from_catalogue->quantization.has_value(), from_file->quantization.has_value()) << id;
    if (from_catalogue->quantization) {
      EXPECT_EQ(from_catalogue->quantization->guessed_from, "") << id;
      // The config's own ignore list, not a catalogue summary's reading of it.
      EXPECT_EQ(from_catalogue->quantization->ignored_modules, from_file->quantization->ignored_modules) << id;
      EXPECT_EQ(from_catalogue->quantization->ignore_list_inferred, from_file->quantization->ignore_list_inferred) << id;
    }
  }
  EXPECT_GT(whole, 0);
}

// Where a line records its checkpoint's size (model.safetensors.index.json's metadata.total_size),
// the weights synthesised from its config come to that many bytes: to the byte for Nanonets-OCR-s
// (a bfloat16 Qwen2.5-VL-3B fine-tune, 7,509,245,952 in its index), InternVL3.5 4B and 8B
// (9,464,978,432 and 17,056,636,928) and UI-TARS-1.5-7B (33,168,666,624 in float32);
// MiniCPM-V 4.5's index has 18,432 bytes (9,216 bfloat16 values, 0.0001 %) that the synthesis
// does not place, so the bound is 0.001 %.
TEST(BuiltinCatalog, LinesWithTheirCheckpointSizeSynthesiseExactlyThatMany) {
  int checked = 0;
  for (const auto& line : embedded_lines("models.jsonl")) {
    const auto size = line.find("safetensors_total_size_bytes");
    if (size == line.end() || !size->is_number_integer()) continue;
    const std::string id = line["hf_id"].get<std::string>();
    auto spec = catalog_model(id);
    ASSERT_TRUE(spec) << id << ": " << spec.error().to_string();
    // A checkpoint stored in float32 under a bfloat16 config (UI-TARS-1.5-7B) holds the same values
    // at twice the bytes the synthesis, in the config's dtype, gives.
    const std::int64_t stored = line.contains("safetensors_dtype") ? dtype_bytes(line["safetensors_dtype"].get<std::string>()) : 2;
    const std::int64_t synthesised = synthesize_weights(*spec).total_bytes * stored / 2;
    const auto expected = static_cast<double>(size->get<std::int64_t>());
    EXPECT_NEAR(static_cast<double>(synthesised), expected, expected * 1e-5) << id;
    if (id != "openbmb/MiniCPM-V-4_5") {
      EXPECT_EQ(synthesised, size->get<std::int64_t>()) << id;
    }
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

// Every member of a GpuSpec, for comparing two answers.
std::string fields(const GpuSpec& g) {
  nlohmann::json j = {g.key, g.name, g.vendor, g.architecture, g.compute_capability, g.total_bytes,
                      g.nvml_total_bytes.value_or(-1), g.memory_marketing_gb, g.bf16_supported,
                      g.fp8_supported, g.nvlink, g.unified_memory, g.aliases, g.nvml_names};
  return j.dump();
}

// find() on the built-in catalogue reads the names of each line and parses only the line it
// answers with; every name (keys, aliases, NVML names, with and without vendor words, in other
// cases) answers as the whole file parsed does, including l40, whose total comes from a sibling.
TEST(BuiltinCatalog, GpuLookupEqualsTheWholeFileParsed) {
  auto text = embedded::find("gpus.jsonl");
  ASSERT_TRUE(text);
  auto whole = GpuCatalog::from_jsonl(*text, "gpus.jsonl");
  ASSERT_TRUE(whole) << whole.error().to_string();
  std::vector<std::string> names = {"NVIDIA H100", "geforce rtx 4090", "a100_80gb", "L40", "h200-nvl",
                                    "no such gpu", "H1OO", "", std::string(5000, 'x')};
  for (const auto& gpu : whole->all()) {
    names.push_back(gpu.key);
    for (const auto& a : gpu.aliases) names.push_back(a);
    for (const auto& n : gpu.nvml_names) names.push_back(n);
  }
  ASSERT_GT(names.size(), 300u);
  for (const auto& name : names) {
    auto lazy = GpuCatalog::builtin().find(name);
    auto parsed = whole->find(name);
    ASSERT_EQ(lazy.has_value(), parsed.has_value()) << name;
    if (parsed) {
      EXPECT_EQ(fields(*lazy), fields(*parsed)) << name;
    } else {
      EXPECT_EQ(lazy.error().message, parsed.error().message) << name;
    }
  }
}

}  // namespace
}  // namespace headroom
