// Accuracy benchmark: runs the prediction over vLLM startup measurements (JSON Lines with the
// fields of calibration/startup.jsonl) and reports, per quantity, count, median and 90th-percentile
// absolute % error, absolute GiB errors, the worst rows, and the same per era and architecture class.
//
//   bench_accuracy [FILE.jsonl] [--filter dense-v1] [--features OUT.jsonl] [--worst N]
//
// --features writes one line per row with the engine's structural inputs next to the observed
// values; scripts/fit_calibration.py fits the empirical constants from it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "engine/calibration_constants.h"
#include "engine/empirical.h"
#include "engine/encoder_profile.h"
#include "engine/quant_kernels.h"
#include "engine/uncertainty.h"
#include "engine/vllm_defaults.h"
#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/units.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"
#include "util/json_file.h"
#include "util/strings.h"

#include "accuracy_report.h"

using namespace headroom;
using nlohmann::json;
using accuracy_report::percentile;
using accuracy_report::print_groups;
using accuracy_report::Sample;

namespace {

std::optional<double> num(const json& r, const char* key) {
  if (!r.contains(key) || !r[key].is_number()) return std::nullopt;
  return r[key].get<double>();
}

// vLLM's own estimate of the graphs, from the row's transcribed log lines: "Estimated CUDA graph
// memory: X GiB total" (profile_cudagraph_memory) or, after capture, "CUDA graph pool memory: A GiB
// (actual), X GiB (estimated)" (v0.19+ logs).
std::optional<double> logged_graph_estimate(const json& r) {
  static const std::regex k_profile(R"(Estimated CUDA graph memory: ([0-9]+(?:\.[0-9]+)?) GiB)");
  static const std::regex k_pool(R"(CUDA graph pool memory: [0-9.]+ GiB \(actual\), ([0-9]+(?:\.[0-9]+)?) GiB \(estimated\))");
  const std::string text = r.dump();
  std::smatch m;
  if (std::regex_search(text, m, k_profile) || std::regex_search(text, m, k_pool)) return std::stod(m[1].str());
  return std::nullopt;
}

std::string str(const json& r, const char* key) {
  return r.contains(key) && r[key].is_string() ? r[key].get<std::string>() : "";
}

// The row's model id. A row whose log names only a local path gives the checkpoint it was matched
// to as "<id> (assumed: <why>)" (architecture and logged weight size agree): the id is taken and the
// row is scored, its weights error showing whether the match holds.
// A row whose log names a model but not which of its released variants ("exact variant not
// named") is scored against the catalogue's line of that model when exactly one catalogue id
// extends the name (UI-TARS-7B: the catalogue has -DPO; -SFT is the same Qwen2-VL-7B architecture);
// the weights error again shows whether the match holds.
std::string row_model(const json& r) {
  std::string model = str(r, "model");
  if (const auto at = model.find(" (assumed:"); at != std::string::npos) model.resize(at);
  if (const auto at = model.find(" (exact variant not named"); at != std::string::npos) {
    model.resize(at);
    std::vector<std::string> variants;
    for (const auto& id : catalog_model_ids())
      if (id.starts_with(model + "-")) variants.push_back(id);
    if (variants.size() == 1) return variants.front();
  }
  return model;
}

// The row's vLLM version; when the row states none, the version its notes name ("~v0.13-0.15",
// "v0.7.x log format"), flagged so the report can keep those rows apart.
std::optional<VllmVersion> row_version(const json& r, bool& from_notes) {
  static const std::regex k_ver(R"((\d+\.\d+(?:\.\d+)*(?:\.post\d+)?))");
  static const std::regex k_note_ver(R"((?:vLLM |~v|~|v)(\d+\.\d+(?:\.\d+)?))");
  std::smatch m;
  std::string s = str(r, "vllm_version");
  from_notes = false;
  if (!std::regex_search(s, m, k_ver)) {
    std::string notes = str(r, "notes");
    if (!std::regex_search(notes, m, k_note_ver)) return std::nullopt;
    from_notes = true;
  }
  auto v = VllmVersion::parse(m.str(1));
  if (!v) return std::nullopt;
  return *v;
}

std::string era_of(const VllmVersion& v) {
  if (!v.is_v1_engine()) return "V0 (<=0.7)";
  if (v < VllmVersion{0, 11}) return "V1 0.8-0.10";
  if (v < VllmVersion{0, 17}) return "V1 0.11-0.16";
  if (v < VllmVersion{0, 21}) return "V1 0.17-0.20";
  return "V1 >=0.21";
}

std::string arch_class(const ModelSpec& m) {
  bool sliding = std::any_of(m.layer_kinds.begin(), m.layer_kinds.end(), [](LayerKind k) {
    return k == LayerKind::sliding_attention || k == LayerKind::chunked_attention;
  });
  bool state = std::any_of(m.layer_kinds.begin(), m.layer_kinds.end(),
                           [](LayerKind k) { return k == LayerKind::mamba || k == LayerKind::linear_attention; });
  if (state) return "hybrid";
  if (m.mla) return "mla";
  if (m.moe) return "moe";
  if (sliding) return "sliding";
  if (m.quantization) return "dense-quantized";
  return "dense";
}

std::string quantization_flag(const json& r, const ModelSpec& model) {
  std::string q = util::to_lower(str(r, "quantization"));
  if (q.empty()) return "";
  // "fp8" on a checkpoint without a quantization config is online quantisation.
  if (q == "fp8" && !model.quantization) return "fp8";
  return "";  // checkpoint quantisation is read from the model itself
}

// vLLM flags the row's `other_flags` names in command-line form ("--kv-cache-memory-bytes 12G;
// --language-model-only"): those that change the memory accounting. Others are left to the
// version's defaults, as the README of the calibration set says for null fields.
void apply_other_flags(const std::string& other, VllmFlags& flags) {
  static const std::regex k_kv_bytes(R"(--kv-cache-memory(?:-bytes)?[ =]([0-9.]+[KMGTkmgt]?))");
  static const std::regex k_limit(R"(--limit-mm-per-prompt[ =]'?(\{[^}]*\}))");
  std::smatch m;
  if (std::regex_search(other, m, k_kv_bytes))
    if (auto b = parse_human_bytes(m[1].str())) flags.kv_cache_memory_bytes = *b;
  if (other.find("--language-model-only") != std::string::npos) flags.language_model_only = true;
  if (other.find("--skip-mm-profiling") != std::string::npos) flags.skip_mm_profiling = true;
  if (other.find("VLLM_USE_FLASHINFER_SAMPLER=1") != std::string::npos) flags.use_flashinfer_sampler = true;
  if (other.find("VLLM_USE_FLASHINFER_SAMPLER=0") != std::string::npos) flags.use_flashinfer_sampler = false;
  if (std::regex_search(other, m, k_limit)) {
    auto j = util::parse_json(m[1].str(), "--limit-mm-per-prompt");
    if (j && j->is_object())
      for (auto& [k, v] : j->items())
        if (v.is_number_integer()) flags.limit_mm_per_prompt[k] = v.get<int>();
  }
}

// bench/calibration_corrections.jsonl: fields of calibration rows that their own cited source
// states otherwise (a version the row's notes only guessed, say). Each line names the row, the
// fields it sets, the source and the sentence that gives them; the report lists what it changed.
std::vector<std::string> apply_corrections(std::vector<json>& rows) {
  std::vector<std::string> applied;
  auto text = util::read_file(std::string(HEADROOM_BENCH_DIR) + "/calibration_corrections.jsonl");
  if (!text) return applied;
  auto lines = util::parse_jsonl(*text, "calibration_corrections.jsonl");
  if (!lines) return applied;
  for (const auto& c : *lines) {
    if (!c.contains("id") || !c["id"].is_string() || !c.contains("set") || !c["set"].is_object()) continue;
    for (auto& r : rows) {
      if (str(r, "id") != c["id"].get<std::string>()) continue;
      for (const auto& [k, v] : c["set"].items()) r[k] = v;
      applied.push_back(c["id"].get<std::string>() + ": " + c["set"].dump());
    }
  }
  return applied;
}

// The catalogue row of the row's GPU: `gpu_catalog` when the row names it, else `gpu_name` without
// its parenthesised remarks and a leading "8x ".
std::optional<GpuSpec> catalog_gpu(const json& r) {
  std::string name = str(r, "gpu_catalog");
  if (name.empty()) {
    name = str(r, "gpu_name");
    name = name.substr(0, name.find(" ("));
    static const std::regex k_count(R"(^\d+ ?x ?)");
    name = std::regex_replace(name, k_count, "");
  }
  auto g = GpuCatalog::builtin().find(name);
  if (!g) return std::nullopt;
  return *g;
}

// GPU families the accuracy is reported by.
std::string gpu_family(const GpuSpec& g) {
  const std::string n = util::to_lower(g.key + " " + g.name);
  if (g.vendor == "AMD") return "AMD Instinct";
  if (g.key == "custom" || g.key.empty()) return "unknown GPU";
  if (n.find("a100") != std::string::npos) return "A100";
  if (n.find("h100") != std::string::npos || n.find("h200") != std::string::npos || n.find("h20") != std::string::npos ||
      n.find("gh200") != std::string::npos)
    return "H100/H200/H20";
  if (n.find("b200") != std::string::npos || n.find("b300") != std::string::npos) return "B200/B300";
  if (n.find("l40") != std::string::npos || n.find("l4") != std::string::npos) return "L40S/L4";
  if (n.find("t4") != std::string::npos || n.find("v100") != std::string::npos) return "T4/V100";
  if (n.find("rtx") != std::string::npos || n.find("a10") != std::string::npos || n.find("a40") != std::string::npos)
    return "consumer/workstation " + g.architecture;
  return "other " + g.architecture;
}

// The GPU class a row is reported under: AMD, the data-centre boards, or the cards people own
// (GeForce, workstation, Jetson, GB10).
std::string gpu_class(const GpuSpec& g) {
  if (g.vendor == "AMD") return "GPU: AMD";
  if (g.key == "custom" || g.key.empty()) return "GPU: unknown";
  static const char* k_datacenter[] = {"v100", "t4", "a10", "a30", "a40", "a100", "a800", "l4", "l20", "h100", "h800",
                                       "h20", "h200", "gh200", "b200", "gb200", "b300"};
  for (const char* p : k_datacenter)
    if (g.key.rfind(p, 0) == 0) return "GPU: datacenter";
  return "GPU: consumer/workstation";
}

std::vector<std::string> row_groups(const ModelSpec& m, const GpuSpec& g, const std::string& online_quantization) {
  std::vector<std::string> out;
  if (engine::is_multimodal(m)) out.push_back("multimodal");
  if (m.quantization || !online_quantization.empty()) out.push_back("quantized");
  if (m.quantization && !m.quantization->guessed_from.empty()) out.push_back("quantized (guessed)");
  // Rows whose model the catalogue lacks, taken as the catalogue model their name extends
  // (catalog_model_by_name): a group of their own, and the two groups above without them.
  if (!m.architecture_assumed_from.empty()) {
    out.push_back("architecture assumed by name");
  } else {
    if (engine::is_multimodal(m)) out.push_back("multimodal, architecture read");
    if (m.quantization || !online_quantization.empty()) out.push_back("quantized, architecture read");
  }
  if (!engine::is_multimodal(m) && !m.quantization && online_quantization.empty()) out.push_back("text, 16-bit");
  out.push_back(gpu_class(g));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = std::string(HEADROOM_SHARED_DIR) + "/calibration/startup.jsonl";
  std::string filter, features_path;
  std::size_t worst_n = 5;
  bool list_rows = false;  // --rows: every row's KV error, range and what is still estimated
  std::vector<std::string> row_lines;
  std::vector<double> range_widths;
  std::vector<double> stated_widths;  // the stated range's width on every row (inside the region too)
  std::vector<double> calibrated_errors;  // |KV error| % of the rows inside the calibrated region
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--filter" && i + 1 < argc) filter = argv[++i];
    else if (a == "--rows") list_rows = true;
    else if (a == "--features" && i + 1 < argc) features_path = argv[++i];
    else if (a == "--worst" && i + 1 < argc) worst_n = static_cast<std::size_t>(std::stoi(argv[++i]));
    else if (a.rfind("--benchmark", 0) == 0) continue;
    else path = a;
  }
  auto text = util::read_file(path);
  if (!text) {
    std::fprintf(stderr, "bench_accuracy: %s\n", text.error().to_string().c_str());
    return 1;
  }
  auto rows = util::parse_jsonl(*text, path);
  if (!rows) {
    std::fprintf(stderr, "bench_accuracy: %s\n", rows.error().to_string().c_str());
    return 1;
  }
  const std::vector<std::string> corrections = apply_corrections(*rows);
  std::map<std::string, std::vector<Sample>> by_quantity;
  std::vector<std::string> skipped;
  int outcome_rows = 0, outcome_right = 0, false_starts = 0;
  int range_rows = 0, range_hits = 0, stated_rows = 0, stated_hits = 0;
  std::vector<std::string> range_misses, stated_misses;
  std::ofstream features;
  if (!features_path.empty()) features.open(features_path);

  for (const auto& r : *rows) {
    std::string id = str(r, "id");
    bool version_from_notes = false;
    auto version = row_version(r, version_from_notes);
    if (!version) {
      skipped.push_back(id + ": no vLLM version");
      continue;
    }
    auto model = load_model(row_model(r));
    if (!model) {
      skipped.push_back(id + ": " + model.error().message.substr(0, 90));
      continue;
    }
    GpuSetup gpus;
    if (auto total = num(r, "total_gpu_memory_gib")) {
      gpus.gpu = custom_gpu(*total);
      auto named = catalog_gpu(r);
      if (named) {
        gpus.gpu.name = named->name;
        gpus.gpu.key = named->key;
        gpus.gpu.architecture = named->architecture;
        gpus.gpu.bf16_supported = named->bf16_supported;
        gpus.gpu.compute_capability = named->compute_capability;
        gpus.gpu.vendor = named->vendor;
        gpus.gpu.nvlink = named->nvlink;
      }
    } else {
      std::string name = str(r, "gpu_name");
      if (name.find("not stated") != std::string::npos) {
        skipped.push_back(id + ": GPU memory variant not stated (" + name + ")");
        continue;
      }
      auto named = catalog_gpu(r);
      if (!named) {
        skipped.push_back(id + ": GPU total memory unknown (" + str(r, "gpu_name") + ")");
        continue;
      }
      gpus.gpu = *named;
    }
    VllmFlags flags;
    int tp = static_cast<int>(num(r, "tp").value_or(1)), pp = static_cast<int>(num(r, "pp").value_or(1));
    flags.tensor_parallel_size = tp;
    flags.pipeline_parallel_size = pp;
    gpus.count = tp * pp;
    // A run whose ranks outnumber the GPUs one machine showed it ran across nodes.
    if (auto visible = num(r, "gpu_count_visible"); visible && *visible >= 1 && *visible < tp * pp) {
      gpus.count = static_cast<int>(*visible);
      gpus.nodes = (tp * pp + gpus.count - 1) / gpus.count;
    }
    if (auto v = num(r, "max_model_len")) flags.max_model_len = static_cast<std::int64_t>(*v);
    if (auto v = num(r, "gpu_memory_utilization")) flags.gpu_memory_utilization = *v;
    if (auto v = num(r, "max_num_seqs")) flags.max_num_seqs = static_cast<int>(*v);
    if (auto v = num(r, "max_num_batched_tokens")) flags.max_num_batched_tokens = static_cast<int>(*v);
    if (auto v = num(r, "block_size")) flags.block_size = static_cast<int>(*v);
    std::string dtype = str(r, "dtype");
    if (!dtype.empty() && dtype != "auto") flags.dtype = dtype;
    // "fp8 (from checkpoint kv_cache_quant_algo FP8)": the dtype is the first word.
    std::string kv = str(r, "kv_cache_dtype");
    kv = kv.substr(0, kv.find(' '));
    if (!kv.empty() && kv != "auto") flags.kv_cache_dtype = kv;
    if (r.contains("enforce_eager") && r["enforce_eager"].is_boolean()) flags.enforce_eager = r["enforce_eager"].get<bool>();
    if (r.contains("enable_prefix_caching") && r["enable_prefix_caching"].is_boolean())
      flags.enable_prefix_caching = r["enable_prefix_caching"].get<bool>();
    if (auto q = quantization_flag(r, *model); !q.empty()) flags.quantization = q;
    // Rows from `vllm serve` unless the source says LLM(...).
    std::string other = str(r, "other_flags") + " " + str(r, "notes");
    if (other.find("LLM(") != std::string::npos) flags.usage_context = UsageContext::llm_class;
    apply_other_flags(str(r, "other_flags"), flags);
    if (other.find("enable_expert_parallel=True") != std::string::npos || other.find("--enable-expert-parallel") != std::string::npos)
      flags.enable_expert_parallel = true;

    // Rows whose own numbers contradict their stated utilization cannot be scored: from v0.9.1 on,
    // vLLM computes KV = total × utilization − weights − activation − non-torch, so the logged
    // terms must add up to the budget (within rounding); otherwise a flag was misrecorded.
    {
      auto w = num(r, "observed_weights_gib"), a = num(r, "observed_activation_peak_gib"),
           n = num(r, "observed_non_torch_gib"), k = num(r, "observed_kv_cache_gib"),
           u = num(r, "gpu_memory_utilization"), t = num(r, "total_gpu_memory_gib");
      if (w && a && n && k && u && t && *version >= VllmVersion{0, 9, 1} && *version < VllmVersion{0, 21}) {
        double gap = std::abs(*w + *a + *n + *k - *u * *t);
        if (gap > 0.02 * *t) {
          skipped.push_back(id + ": inconsistent row: weights + activation + non-torch + KV = " +
                            util::fixed(*w + *a + *n + *k, 2) + " GiB but utilization × total = " +
                            util::fixed(*u * *t, 2) + " GiB");
          continue;
        }
      }
    }
    auto p = predict(*model, gpus, flags, *version);
    if (!p) {
      skipped.push_back(id + ": " + p.error().message);
      continue;
    }
    std::string era = era_of(*version) + (version_from_notes ? " (version from notes)" : ""), cls = arch_class(*model);
    const std::string family = gpu_family(gpus.gpu);
    if (!filter.empty()) {
      bool dense_v1 = version->is_v1_engine() && (cls == "dense" || cls == "dense-quantized");
      if (filter == "dense-v1" && !dense_v1) continue;
      if (filter == "v1" && !version->is_v1_engine()) continue;
    }
    const std::vector<std::string> groups = row_groups(*model, gpus.gpu, flags.quantization.value_or(""));
    auto add = [&](const char* q, double pred, const char* obs_key, double scale = 1.0) {
      auto o = num(r, obs_key);
      if (!o) return;
      by_quantity[q].push_back({id, era, cls, family, pred / scale, *o, groups});
    };
    // vLLM logs rank 0, i.e. the first pipeline stage.
    const auto& m = p->stages.empty() ? p->memory : p->stages.front();
    add("weights_gib", to_gib(m.weights), "observed_weights_gib");
    add("activation_gib", to_gib(m.activation_peak), "observed_activation_peak_gib");
    add("non_torch_gib", to_gib(m.non_torch), "observed_non_torch_gib");
    add("cuda_graph_gib", to_gib(m.cuda_graph), "observed_cuda_graph_gib");
    const auto capture_sizes = engine::cudagraph_capture_sizes(*version, p->settings.max_num_seqs, p->settings.max_num_batched_tokens);
    const int graphs_captured =
        p->settings.enforce_eager ? 0 : engine::num_cuda_graphs(*version, capture_sizes, p->settings.max_num_seqs);
    const double graph_estimate =
        to_gib(engine::estimate_cuda_graph_profile(*model, graphs_captured, (model->num_layers + pp - 1) / pp,
                                                   flags.enable_expert_parallel ? 1 : tp));
    if (auto est = logged_graph_estimate(r)) by_quantity["graph_estimate_gib"].push_back({id, era, cls, family, graph_estimate, *est, groups});
    add("kv_cache_gib", to_gib(m.kv_cache), "observed_kv_cache_gib");
    // The encoder's profile pass (encoder_profile.h), charged by predict(): what it batched.
    if (list_rows && engine::is_multimodal(*model)) {
      const engine::EncoderDevice device{p->memory.total, p->memory.total - p->memory.weights - p->memory.baseline};
      const auto pass = engine::encoder_profile(*model, flags, p->settings, *version, p->settings.dtype == "float32" ? 4 : 2, device);
      row_lines.push_back("  encoder pass of " + id + ": " + (pass.items > 0 ? pass.explanation : "none (" + pass.skipped_because + ")"));
    }
    add("kv_tokens", static_cast<double>(p->kv_cache_tokens), "observed_kv_tokens");
    add("gpu_blocks", static_cast<double>(p->num_gpu_blocks), "observed_gpu_blocks");
    if (num(r, "observed_max_concurrency")) {
      auto len = num(r, "observed_concurrency_len");
      double conc = p->max_concurrency;
      if (len && static_cast<std::int64_t>(*len) != p->settings.max_model_len) conc = -1;  // different length
      if (conc >= 0) add("concurrency", conc, "observed_max_concurrency");
    }
    // The ranges are about the stage that sets the block count (p->memory); vLLM logs rank 0's
    // (`m`): the same range, moved by the difference of their predicted KV caches.
    const double shift = to_gib(m.kv_cache) - to_gib(p->memory.kv_cache);
    // Every row: does the stated KV range (Prediction::kv_range) hold what vLLM logged?
    if (auto okv = num(r, "observed_kv_cache_gib"); okv && *okv > 0) {
      ++stated_rows;
      const double lo = to_gib(p->kv_range.kv_cache_low) + shift, hi = to_gib(p->kv_range.kv_cache_high) + shift;
      stated_widths.push_back((hi - lo) / *okv * 100.0);
      if (*okv >= lo - 0.005 && *okv <= hi + 0.005) ++stated_hits;
      else if (!p->uncertainty) stated_misses.push_back(id + " (" + util::fixed(*okv, 2) + " GiB outside " + util::fixed(lo, 2) + "-" + util::fixed(hi, 2) + ")");
    }
    // Rows outside the calibrated region: does the printed KV range hold what vLLM logged?
    if (auto okv = num(r, "observed_kv_cache_gib"); okv && p->uncertainty) {
      ++range_rows;
      const double lo = to_gib(p->uncertainty->kv_cache_low) + shift, hi = to_gib(p->uncertainty->kv_cache_high) + shift;
      if (*okv > 0) range_widths.push_back((hi - lo) / *okv * 100.0);
      if (*okv >= lo - 0.005 && *okv <= hi + 0.005) ++range_hits;
      else range_misses.push_back(id + " (" + util::fixed(*okv, 2) + " GiB outside " + util::fixed(lo, 2) + "-" + util::fixed(hi, 2) + ")");
    } else if (okv && *okv > 0) {
      calibrated_errors.push_back(std::abs(to_gib(m.kv_cache) - *okv) / *okv * 100.0);
    }
    if (auto okv = num(r, "observed_kv_cache_gib"); list_rows && okv && *okv > 0) {
      std::string line = util::fixed((to_gib(m.kv_cache) - *okv) / *okv * 100.0, 1) + "% " + id + " [" + util::join(groups, ", ") + "]";
      // The empirical terms the non-Hopper allowance scales (uncertainty.cc), to study its width.
      line += " (activation " + util::fixed(to_gib(m.activation_peak), 2) + ", non-torch " + util::fixed(to_gib(m.non_torch), 2) +
              ", graphs " + util::fixed(to_gib(m.cuda_graph), 2) + " GiB)";
      if (p->uncertainty) {
        line += " range " + util::fixed(to_gib(p->uncertainty->kv_cache_low), 2) + "-" + util::fixed(to_gib(p->uncertainty->kv_cache_high), 2) +
                " GiB, estimated: " + util::join(p->uncertainty->reasons, "; ");
      }
      row_lines.push_back(line);
    }
    std::string outcome = str(r, "observed_outcome");
    if (!outcome.empty()) {
      ++outcome_rows;
      bool really_ok = outcome == "ok";
      if (really_ok == p->starts) ++outcome_right;
      else
        by_quantity["outcome_miss"].push_back({id + " (observed " + outcome + ", predicted " + (p->starts ? "ok" : p->failure->error_class) + ")", era, cls, family, 1, 1, groups});
      if (!really_ok && p->starts) ++false_starts;
    }
    if (features.is_open()) {
      json f;
      f["id"] = id;
      f["era"] = era;
      f["class"] = cls;
      f["family"] = family;
      f["gpu_architecture"] = gpus.gpu.architecture;
      f["interconnect"] = engine::interconnect_of(gpus.gpu) == engine::Interconnect::nvswitch ? "nvswitch"
                          : engine::interconnect_of(gpus.gpu) == engine::Interconnect::nvlink ? "nvlink" : "pcie";
      f["version"] = version->to_string();
      f["tp"] = tp;
      f["pp"] = pp;
      f["nvls_bytes"] = engine::nvls_buffer_bytes(*version, tp, gpus.gpu);
      f["requests"] = std::min(p->settings.max_num_seqs, p->settings.max_num_batched_tokens);
      f["tokens"] = p->settings.max_num_batched_tokens;
      f["vocab_padded"] = round_up(model->vocab_size, 64);
      engine::ActivationInputs ai;
      ai.tensor_parallel_size = tp;
      ai.max_num_seqs = p->settings.max_num_seqs;
      ai.max_num_batched_tokens = p->settings.max_num_batched_tokens;
      ai.dtype_bytes = p->settings.dtype == "float32" ? 4 : 2;
      ai.multimodal = engine::is_multimodal(*model);
      ai.linear_method = engine::resolved_quantization_method(p->settings.quantization, flags.quantization.has_value(), *model, gpus.gpu);
      ai.quant_bits = model->quantization ? model->quantization->bits : 0;
      auto act = engine::estimate_activation(*model, *version, ai);
      f["encoder_bytes"] = act.encoder;
      f["forward_bytes"] = act.forward;
      f["moe_bytes_unit"] = engine::k_moe_workspace_factor > 0 ? static_cast<double>(act.moe) / engine::k_moe_workspace_factor : 0.0;
      f["budget_bytes"] = p->memory.budget;
      f["weights_bytes"] = p->stages.empty() ? p->memory.weights : p->stages.front().weights;
      f["last_stage_has_sampler"] = pp == 1;
      f["layers_per_stage"] = (model->num_layers + pp - 1) / pp;
      f["hidden_size"] = model->hidden_size;
      f["moe"] = model->moe.has_value();
      f["moe_graph_units"] = engine::moe_graph_units(*model, flags.enable_expert_parallel ? 1 : tp);
      f["enforce_eager"] = p->settings.enforce_eager;
      const auto sizes = engine::cudagraph_capture_sizes(*version, p->settings.max_num_seqs, p->settings.max_num_batched_tokens);
      f["num_graph_sizes"] = static_cast<int>(sizes.size());
      f["num_graphs"] = engine::num_cuda_graphs(*version, sizes, p->settings.max_num_seqs);
      // What headroom predicted for the stage vLLM logs, to read the residuals term by term.
      f["predicted_weights_gib"] = to_gib(m.weights);
      f["predicted_activation_gib"] = to_gib(m.activation_peak);
      f["predicted_non_torch_gib"] = to_gib(m.non_torch);
      f["predicted_cuda_graph_gib"] = to_gib(m.cuda_graph);
      f["predicted_graph_estimate_gib"] = graph_estimate;
      if (auto est = logged_graph_estimate(r)) f["observed_graph_estimate_gib"] = *est;
      f["predicted_kv_cache_gib"] = to_gib(m.kv_cache);
      f["gpu_name"] = gpus.gpu.name;
      for (const char* k : {"observed_activation_peak_gib", "observed_non_torch_gib", "observed_cuda_graph_gib",
                            "observed_weights_gib", "observed_kv_cache_gib"})
        f[k] = r.contains(k) ? r[k] : json(nullptr);
      features << f.dump() << "\n";
    }
  }

  std::printf("accuracy over %s%s\n", path.c_str(), filter.empty() ? "" : (" (filter " + filter + ")").c_str());
  for (const auto& c : corrections) std::printf("  corrected from the row's own source (bench/calibration_corrections.jsonl): %s\n", c.c_str());
  std::printf("\n");
  std::printf("%-16s %5s %9s %9s %9s %11s %11s\n", "quantity", "n", "median%", "p90%", "max%", "medianAbs", "p90Abs");
  const char* order[] = {"weights_gib", "activation_gib", "non_torch_gib", "cuda_graph_gib", "graph_estimate_gib", "kv_cache_gib",
                         "kv_tokens", "gpu_blocks", "concurrency"};
  for (const char* q : order) {
    auto& v = by_quantity[q];
    std::vector<double> pct, absd;
    for (auto& s : v) {
      pct.push_back(s.pct());
      absd.push_back(s.abs_diff());
    }
    std::printf("%-16s %5zu %9.2f %9.2f %9.2f %11.3f %11.3f\n", q, v.size(), percentile(pct, 0.5), percentile(pct, 0.9),
                pct.empty() ? 0.0 : *std::max_element(pct.begin(), pct.end()), percentile(absd, 0.5), percentile(absd, 0.9));
  }
  std::printf("%-16s %5d  right: %d  wrong: %d  predicted to start but failed: %d\n\n", "outcome", outcome_rows,
              outcome_right, outcome_rows - outcome_right, false_starts);

  print_groups(by_quantity);
  for (const char* q : order) {
    auto v = by_quantity[q];
    if (v.empty()) continue;
    std::sort(v.begin(), v.end(), [](const Sample& a, const Sample& b) { return a.pct() > b.pct(); });
    std::printf("worst %s:\n", q);
    for (std::size_t i = 0; i < std::min(worst_n, v.size()); ++i)
      std::printf("  %7.2f%%  predicted %12.3f observed %12.3f  %s\n", v[i].pct(), v[i].predicted, v[i].observed,
                  v[i].row.c_str());
  }
  for (auto& s : by_quantity["outcome_miss"]) std::printf("outcome miss: %s\n", s.row.c_str());
  std::printf("\nKV range stated on all %d rows that log the KV size: holds it on %d (%.0f%%); median width %.1f%% of vLLM's value\n",
              stated_rows, stated_hits, stated_rows > 0 ? 100.0 * stated_hits / stated_rows : 0.0, percentile(stated_widths, 0.5));
  for (auto& m : stated_misses) std::printf("  outside (a calibrated row): %s\n", m.c_str());
  std::printf("KV range printed (outside the calibrated region) on %d rows that log the KV size: holds it on %d; "
              "median width %.1f%% of vLLM's value\n",
              range_rows, range_hits, percentile(range_widths, 0.5));
  for (auto& m : range_misses) std::printf("  outside: %s\n", m.c_str());
  // What every printed range also allows for (engine::k_calibrated_kv_error, uncertainty.h).
  std::printf("KV error inside the calibrated region on %zu rows: median %.2f%%, p90 %.2f%% (in-sample); "
              "every stated range allows the held-out %.2f%% either side for it\n",
              calibrated_errors.size(), percentile(calibrated_errors, 0.5), percentile(calibrated_errors, 0.9),
              engine::k_calibrated_kv_error * 100.0);
  if (list_rows) {
    std::printf("\nrows (KV error, groups, range and what is still estimated):\n");
    for (auto& l : row_lines) std::printf("  %s\n", l.c_str());
  }
  std::printf("\nskipped %zu rows without the inputs:\n", skipped.size());
  for (auto& s : skipped) std::printf("  %s\n", s.c_str());
  return 0;
}
