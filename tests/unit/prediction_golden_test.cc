// The whole prediction, pinned: every catalogue model × a grid of GPUs, vLLM versions and flags,
// rendered as `check --format json` and as the text report, compared with goldens in
// tests/golden/predict/ (HEADROOM_UPDATE_GOLDEN=1 rewrites them).
//
// cases.tsv holds one line per case: its name, the verdict, the KV cache tokens and a digest of the
// JSON document and text report together, so a change shows which cases moved and how.
// full.jsonl holds the complete outputs of a slice of the grid (every model on an H100 with vLLM's
// newest modelled version), so the changed text itself can be read. When a case differs, the test
// writes every actual output to $HEADROOM_BINARY_DIR/prediction_golden_actual.jsonl.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "headroom/check_changes.h"
#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/report.h"
#include "headroom/vllm_engine.h"
#include "util/sha256.h"

namespace headroom {
namespace {

const std::string k_golden_dir = std::string(HEADROOM_TEST_DATA_DIR) + "/../golden/predict";

struct FlagSet {
  std::string label;
  int gpus;  // GPUs in the setup
  std::function<void(VllmFlags&, GpuSetup&, PredictOptions&)> apply;
};

void len8k(VllmFlags& f) { f.max_model_len = 8192; }

// One flag or environment variable at a time (with an 8k context so most models start and the
// later stages run), plus the combinations vLLM users paste most.
const std::vector<FlagSet>& flag_sets() {
  static const std::vector<FlagSet> sets = {
      {"tp2", 2, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.tensor_parallel_size = 2; }},
      {"tp4", 4, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.tensor_parallel_size = 4; }},
      {"pp2", 2, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.pipeline_parallel_size = 2; }},
      {"tp2-pp2-partition", 4,
       [](VllmFlags& f, GpuSetup&, PredictOptions&) {
         len8k(f), f.tensor_parallel_size = 2, f.pipeline_parallel_size = 2, f.pp_layer_partition = "2,30";
       }},
      {"tp2-ep", 2,
       [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.tensor_parallel_size = 2, f.enable_expert_parallel = true; }},
      {"dp2", 2, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.data_parallel_size = 2; }},
      {"len4k", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { f.max_model_len = 4096; }},
      {"len-auto", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { f.max_model_len_auto = true; }},
      {"fp8-kv", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.kv_cache_dtype = "fp8"; }},
      {"eager", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.enforce_eager = true; }},
      {"util0.8-seqs64", 1,
       [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.gpu_memory_utilization = 0.8, f.max_num_seqs = 64; }},
      {"mnbt2048", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.max_num_batched_tokens = 2048; }},
      {"q-fp8", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.quantization = "fp8"; }},
      {"dtype-half", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.dtype = "half"; }},
      {"dtype-bf16", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.dtype = "bfloat16"; }},
      {"block32", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.block_size = 32; }},
      {"prefix-on-chunked-off", 1,
       [](VllmFlags& f, GpuSetup&, PredictOptions&) {
         len8k(f), f.enable_prefix_caching = true, f.enable_chunked_prefill = false;
       }},
      {"kv-bytes-4g", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.kv_cache_memory_bytes = 4 * k_gib; }},
      {"blocks-override-1000", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.num_gpu_blocks_override = 1000; }},
      {"cpu-offload-4", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.cpu_offload_gb = 4; }},
      {"used-8gib", 1,
       [](VllmFlags& f, GpuSetup& g, PredictOptions&) {
         len8k(f);
         g.free_bytes = g.gpu.total_bytes - 8 * k_gib;
         g.memory_holders = {"PID 4242 python holds 8.00 GiB on GPU 0"};
       }},
      {"free-by-vllm", 1,
       [](VllmFlags& f, GpuSetup& g, PredictOptions&) {
         len8k(f);
         g.free_bytes = g.gpu.total_bytes - 3 * k_gib;
         g.free_measured_by_vllm = true;
       }},
      {"env-v1-off", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.use_v1_engine = false; }},
      {"env-estimate-graphs", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.estimate_cuda_graphs = true; }},
      {"env-flashinfer-sampler-off", 1,
       [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.use_flashinfer_sampler = false; }},
      {"fp4-indexer", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.use_fp4_indexer_cache = true; }},
      {"llm-entrypoint", 1, [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f), f.usage_context = UsageContext::llm_class; }},
      {"measured", 1,
       [](VllmFlags& f, GpuSetup&, PredictOptions& o) {
         len8k(f);
         MeasuredTerms m;
         m.activation_peak = 2 * k_gib;
         m.non_torch = k_gib / 2;
         m.cuda_graph = k_gib / 4;
         m.source = "measured on 2026-06-01 (history #12)";
         o.measured = m;
       }},
  };
  return sets;
}

std::string version_label(const VllmVersion& v) { return v.to_string(); }

struct Case {
  std::string name;
  std::string summary;  // verdict \t tokens \t digest
  std::string json;     // the JSON document, compact
  std::string text;     // the text report
};

// One case: predict, render both ways; an error is an output too.
Case run_case(const ModelSpec& model, const std::string& gpu_name, const VllmVersion& version, const std::string& label,
              const std::function<void(VllmFlags&, GpuSetup&, PredictOptions&)>& apply, int gpu_count,
              bool with_changes) {
  Case c;
  c.name = model.id + "|" + gpu_name + "|" + version_label(version) + "|" + label;
  auto g = GpuCatalog::builtin().find(gpu_name);
  EXPECT_TRUE(g.has_value()) << gpu_name;
  GpuSetup gpus;
  if (g) gpus.gpu = *g;
  gpus.count = gpu_count;
  VllmFlags flags;
  PredictOptions options;
  if (apply) apply(flags, gpus, options);
  auto p = predict(model, gpus, flags, version, options);
  std::string verdict, tokens = "-";
  if (!p) {
    verdict = "error";
    c.text = "error: " + p.error().to_string() + "\n";
    c.json = nlohmann::json{{"error", p.error().to_string()}}.dump();
  } else {
    verdict = p->starts ? "starts" : (p->failure ? p->failure->error_class : "fails");
    tokens = std::to_string(p->kv_cache_tokens);
    nlohmann::json j = prediction_to_json(model, gpus, *p);
    if (with_changes && !p->starts) {
      const PredictFn again = [&](const VllmFlags& changed, const GpuSetup& setup) {
        return predict(model, setup, changed, version, options);
      };
      auto changes = suggest_changes(model, gpus, flags, *p, again);
      j["changes"] = changes_document(changes);
      for (const auto& ch : changes) c.text += "change: " + describe_change(ch, flags) + " -- " + ch.why + "\n";
    }
    c.json = j.dump();
    c.text = render_prediction_text(model, gpus, *p, TextStyle::plain) + c.text;
  }
  c.summary = verdict + "\t" + tokens + "\t" + util::sha256_hex(c.json + "\n" + c.text).substr(0, 16);
  return c;
}

// Every case of the grid, model by model (the engine memoises a model's per-stage weights): the
// model's own context on four GPUs at five versions; an 8k context at every release where the
// accounting changes; each flag set at the newest version, and those that depend on the era at
// v0.10.1.1 (V1 before 2026) and on other GPUs. check's changes come with the H100 default case
// at the newest version when it fails.
std::vector<Case> run_grid(std::vector<Case>& full) {
  const VllmVersion newest = VllmVersion::newest_modelled();
  const std::vector<std::string> gpus = {"H100", "A100-40GB", "RTX 4090", "L4"};
  const std::vector<VllmVersion> default_versions = {{0, 6, 4}, {0, 8, 5}, {0, 10, 1, 1}, {0, 19, 0}, newest};
  // The releases where the accounting changes: V0 (0.6.4, 0.7.3), V1 before and after the
  // free-memory check (0.8.5, 0.9.2), the hybrid manager (0.10.1.1), MLA blocks (0.12), 2026's
  // releases (0.19, 0.21, 0.22) and the eras from 0.25 (0.26, 0.28, 0.29) and past them (0.33).
  const std::vector<VllmVersion> era_versions = {{0, 6, 4},  {0, 7, 3},  {0, 8, 5},  {0, 9, 2},  {0, 10, 1, 1},
                                                 {0, 12, 0}, {0, 19, 0}, {0, 21, 0}, {0, 22, 0}, {0, 26, 0},
                                                 {0, 28, 0}, {0, 29, 0}, newest};
  const std::vector<std::string> v010_sets = {"tp2", "pp2", "fp8-kv", "eager", "used-8gib", "env-v1-off",
                                              "env-estimate-graphs", "env-flashinfer-sampler-off", "len-auto"};
  const std::vector<std::pair<std::string, std::string>> other_gpu_sets = {
      {"L4", "tp2"}, {"L4", "fp8-kv"}, {"L4", "q-fp8"}, {"RTX 4090", "tp4"}, {"A100-40GB", "q-fp8"}, {"T4", "dtype-bf16"}};
  const auto len8k_set = [](VllmFlags& f, GpuSetup&, PredictOptions&) { len8k(f); };
  std::map<std::string, const FlagSet*> by_label;
  for (const auto& s : flag_sets()) by_label[s.label] = &s;
  std::vector<Case> cases;
  for (const auto& id : catalog_model_ids()) {
    auto m = catalog_model(id);
    if (!m) {
      cases.push_back(Case{id + "|catalogue", "error\t-\t" + util::sha256_hex(m.error().to_string()).substr(0, 16), "", ""});
      continue;
    }
    for (const auto& gpu : gpus)
      for (const auto& v : default_versions) {
        const bool with_changes = gpu == "H100" && v == newest;
        Case d = run_case(*m, gpu, v, "default", nullptr, 1, with_changes);
        if (with_changes) full.push_back(d);
        cases.push_back(std::move(d));
      }
    for (const auto& v : era_versions) cases.push_back(run_case(*m, "H100", v, "len8k", len8k_set, 1, false));
    for (const auto& gpu : gpus)
      if (gpu != "H100") cases.push_back(run_case(*m, gpu, newest, "len8k", len8k_set, 1, false));
    for (const auto& s : flag_sets()) cases.push_back(run_case(*m, "H100", newest, s.label, s.apply, s.gpus, false));
    for (const auto& label : v010_sets) {
      const FlagSet& s = *by_label.at(label);
      cases.push_back(run_case(*m, "H100", VllmVersion{0, 10, 1, 1}, s.label, s.apply, s.gpus, false));
    }
    for (const auto& [gpu, label] : other_gpu_sets) {
      const FlagSet& s = *by_label.at(label);
      cases.push_back(run_case(*m, gpu, newest, s.label, s.apply, s.gpus, false));
    }
  }
  return cases;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string case_line(const Case& c) { return c.name + "\t" + c.summary + "\n"; }

std::string full_line(const Case& c) {
  return nlohmann::json{{"case", c.name}, {"json", nlohmann::json::parse(c.json)}, {"text", c.text}}.dump() + "\n";
}

TEST(PredictionGolden, CatalogueGridMatchesGoldens) {
  std::vector<Case> full;
  const std::vector<Case> cases = run_grid(full);
  std::string summary, full_text;
  for (const auto& c : cases) summary += case_line(c);
  for (const auto& c : full) full_text += full_line(c);
  const std::string cases_path = k_golden_dir + "/cases.tsv", full_path = k_golden_dir + "/full.jsonl";
  if (const char* u = std::getenv("HEADROOM_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::filesystem::create_directories(k_golden_dir);
    std::ofstream cases_out(cases_path, std::ios::binary), full_out(full_path, std::ios::binary);
    cases_out << summary;
    full_out << full_text;
    ASSERT_TRUE(cases_out.good() && full_out.good()) << "could not write " << k_golden_dir;
    GTEST_SKIP() << "rewrote " << cases_path << " (" << cases.size() << " cases) and " << full_path;
  }
  // Line by line, so a failure names the cases that moved.
  std::map<std::string, std::string> expected;
  {
    std::istringstream in(read_file(cases_path));
    for (std::string line; std::getline(in, line);) {
      const auto tab = line.find('\t');
      if (tab != std::string::npos) expected[line.substr(0, tab)] = line.substr(tab + 1);
    }
  }
  ASSERT_FALSE(expected.empty()) << "no goldens at " << cases_path << " (HEADROOM_UPDATE_GOLDEN=1 writes them)";
  int differing = 0;
  for (const auto& c : cases) {
    auto it = expected.find(c.name);
    if (it == expected.end()) {
      if (++differing <= 20) ADD_FAILURE() << "new case " << c.name << "\t" << c.summary;
    } else if (it->second != c.summary) {
      if (++differing <= 20) ADD_FAILURE() << c.name << "\n  expected " << it->second << "\n  actual   " << c.summary;
    }
  }
  EXPECT_EQ(cases.size(), expected.size()) << "the grid's size changed";
  EXPECT_EQ(differing, 0) << differing << " cases differ";
  EXPECT_EQ(full_text, read_file(full_path)) << "the full outputs in " << full_path << " differ";
  if (differing > 0 || full_text != read_file(full_path)) {
    const std::string actual_path = std::string(HEADROOM_BINARY_DIR) + "/prediction_golden_actual.jsonl";
    std::ofstream out(actual_path, std::ios::binary);
    for (const auto& c : cases)
      if (!c.json.empty()) out << full_line(c);
    ADD_FAILURE() << "every actual output: " << actual_path;
  }
}

}  // namespace
}  // namespace headroom
