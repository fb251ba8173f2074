// The classes diagnose reports are the error taxonomy's: read from ../shared/spec/error-taxonomy.md
// (§4 headings, §5 look-alike table) and the labels of ../shared/calibration/errors.jsonl at test
// time, so a record or a code path that reports anything else fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "diagnose_test_support.h"
#include "headroom/diagnose.h"
#include "headroom/knowledge_base.h"
#include "util/json_file.h"

namespace headroom {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "### A. `kv_cache_insufficient`: ..." and "| `prompt_too_long` | ..." rows of the look-alike table.
std::set<std::string> taxonomy_file_classes() {
  std::string text = read_text(std::string(HEADROOM_SHARED_DIR) + "/spec/error-taxonomy.md");
  std::set<std::string> out;
  static const std::regex heading(R"(^### [A-Z]\. `([a-z0-9_]+)`)");
  static const std::regex row(R"(^\| `([a-z0-9_]+)` \|)");
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, heading) || std::regex_search(line, m, row)) out.insert(m[1]);
  }
  return out;
}

std::set<std::string> calibration_labels() {
  std::set<std::string> out;
  std::string path = std::string(HEADROOM_SHARED_DIR) + "/calibration/errors.jsonl";
  auto text = util::read_file(path);
  if (!text) return out;
  auto records = util::parse_jsonl(*text, path);
  if (!records) return out;
  for (const auto& r : *records) out.insert(r.value("label", ""));
  return out;
}

// The taxonomy's classes and the calibration labels that extend it.
const std::set<std::string>& allowed_classes() {
  static const std::set<std::string> all = [] {
    auto s = taxonomy_file_classes();
    auto l = calibration_labels();
    s.insert(l.begin(), l.end());
    return s;
  }();
  return all;
}

TEST(TaxonomyClass, TheFilesNameTheTaxonomysClasses) {
  auto file = taxonomy_file_classes();
  // §4 has twelve classes (A-L), §5's table eight look-alikes.
  EXPECT_EQ(file.size(), 20u);
  EXPECT_TRUE(file.count("kv_cache_insufficient"));
  EXPECT_TRUE(file.count("tp_size_not_divisible"));
  EXPECT_TRUE(calibration_labels().count("mamba_cache_blocks_insufficient"));
}

TEST(TaxonomyClass, KbValidateAcceptsExactlyTheTaxonomysClasses) {
  const auto& list = taxonomy_classes();
  EXPECT_EQ(std::set<std::string>(list.begin(), list.end()), allowed_classes());
}

TEST(TaxonomyClass, EveryBuiltInRecordReportsATaxonomyClass) {
  for (const auto& r : test_support::kb().records()) {
    if (r.wrapper) {
      EXPECT_TRUE(r.taxonomy_class.empty()) << r.id;
      continue;
    }
    std::string c = r.taxonomy_class.empty() ? r.id : r.taxonomy_class;
    EXPECT_TRUE(allowed_classes().count(c)) << r.id << " reports " << c;
  }
}

TEST(TaxonomyClass, OnlyTheEngineWrapperNamesNoClass) {
  std::vector<std::string> wrappers;
  for (const auto& r : test_support::kb().records())
    if (r.wrapper) wrappers.push_back(r.id);
  EXPECT_EQ(wrappers, std::vector<std::string>{"engine_failure_unexplained"});
}

void expect_taxonomy_class(const Diagnosis& d, const std::string& where) {
  std::vector<const Finding*> all;
  if (d.primary) all.push_back(&*d.primary);
  for (const auto& f : d.findings) all.push_back(&f);
  for (const Finding* f : all) {
    if (f->unclassified) {
      EXPECT_EQ(reported_class(*f), "") << where;
      EXPECT_TRUE(to_json(*f)["class"].is_null()) << where;
      continue;
    }
    EXPECT_TRUE(allowed_classes().count(reported_class(*f))) << where << ": " << reported_class(*f) << " (record " << f->error_class << ")";
    EXPECT_EQ(to_json(*f)["class"], reported_class(*f)) << where;
  }
}

TEST(TaxonomyClass, EveryClassDiagnosedOnTheCalibrationAndTestLogsIsTheTaxonomys) {
  std::string path = std::string(HEADROOM_SHARED_DIR) + "/calibration/errors.jsonl";
  auto text = util::read_file(path);
  ASSERT_TRUE(text);
  auto records = util::parse_jsonl(*text, path);
  ASSERT_TRUE(records);
  for (const auto& r : *records) expect_taxonomy_class(test_support::run_shared(r.value("log_excerpt", "") + "\n"), r.value("id", ""));
  int logs = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(HEADROOM_TEST_DATA_DIR) + "/logs")) {
    if (e.path().extension() != ".log") continue;
    ++logs;
    std::ifstream in(e.path());
    std::stringstream text_of_log;
    text_of_log << in.rdbuf();
    expect_taxonomy_class(test_support::run_shared(text_of_log.str()), e.path().filename().string());
  }
  EXPECT_GT(logs, 5);
}

TEST(TaxonomyClass, TheEngineWrapperAloneIsAFailureWithNoClass) {
  Diagnosis d = test_support::run_text(
      "(EngineCore_DP0 pid=43) ERROR 03-20 17:39:14 [core.py:708] EngineCore failed to start.\n"
      "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n");
  ASSERT_TRUE(d.primary);
  EXPECT_TRUE(d.primary->unclassified);
  EXPECT_EQ(d.primary->error_class, "engine_failure_unexplained");
  EXPECT_EQ(reported_class(*d.primary), "");
  EXPECT_TRUE(to_json(*d.primary)["class"].is_null());
  EXPECT_EQ(to_json(*d.primary)["record"], "engine_failure_unexplained");
  EXPECT_FALSE(d.primary->out_of_memory);
}

struct Mapped {
  const char* line;
  const char* record;
  const char* taxonomy_class;
  const char* cause;
};

// Messages as vLLM and Triton print them (config/model.py _verify_quantization,
// model_executor/model_loader/weight_utils.py get_quant_config, distributed/utils.py get_pp_indices,
// triton/runtime/errors.py OutOfResources).
TEST(TaxonomyClass, ChecksTheTaxonomyNamesOnlyInPassingReportItsNearestClassWithACause) {
  const Mapped cases[] = {
      {"ValueError: Quantization method specified in the model config (fp8) does not match the quantization method "
       "specified in the `quantization` argument (awq).",
       "quantization_mismatch", "model_not_found", "quantization_mismatch"},
      {"ValueError: Cannot find the config file for awq", "quantization_config_missing", "model_not_found",
       "quantization_config_missing"},
      {"ValueError: Invalid partition string: 8,8,x", "pp_layer_partition_invalid", "tp_size_not_divisible",
       "pp_layer_partition_invalid"},
      {"triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536. "
       "Reducing block sizes or `num_stages` may help.",
       "triton_out_of_resources", "unsupported_dtype_on_gpu", "shared_memory_per_block"},
  };
  for (const auto& c : cases) {
    Diagnosis d = test_support::run_text(std::string(c.line) + "\n");
    ASSERT_TRUE(d.primary) << c.line;
    EXPECT_EQ(d.primary->error_class, c.record);
    EXPECT_EQ(reported_class(*d.primary), c.taxonomy_class);
    EXPECT_EQ(d.primary->cause, c.cause);
    EXPECT_TRUE(d.primary->look_alike);
    EXPECT_FALSE(d.primary->out_of_memory);
  }
}

TEST(TaxonomyClass, KbRejectsAWrapperWithAClass) {
  auto rec = KnowledgeBase::parse_record(
      R"({"id": "x", "signature": "s", "regex": "boom", "versions": ["all"], "headroom": {"wrapper": true, "class": "runtime_oom"}})",
      "x.json");
  ASSERT_FALSE(rec);
  EXPECT_EQ(rec.error().to_string(),
            "x.json: field 'headroom.wrapper': a wrapper names no class: it cannot set headroom.class or out_of_memory");
}

}  // namespace
}  // namespace headroom
