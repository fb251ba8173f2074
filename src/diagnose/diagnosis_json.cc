#include <nlohmann/json.hpp>

#include "headroom/diagnose.h"
#include "headroom/vllm_log.h"

namespace headroom {

namespace {

template <class T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

}  // namespace

nlohmann::json to_json(const LoggedRun& run) {
  nlohmann::json j = nlohmann::json::object();
  if (!run.version_text.empty()) j["vllm_version"] = run.version_text;
  if (run.v1_engine) j["engine"] = *run.v1_engine ? "v1" : "v0";
  if (!run.model.empty()) j["model"] = run.model;
  if (!run.architecture.empty()) j["architecture"] = run.architecture;
  if (!run.gpu_name.empty()) j["gpu_name"] = run.gpu_name;
  nlohmann::json flags = nlohmann::json::object();
  const VllmFlags& f = run.flags;
  put(flags, "tensor_parallel_size", f.tensor_parallel_size);
  put(flags, "pipeline_parallel_size", f.pipeline_parallel_size);
  put(flags, "data_parallel_size", f.data_parallel_size);
  put(flags, "max_model_len", f.max_model_len);
  put(flags, "gpu_memory_utilization", f.gpu_memory_utilization);
  put(flags, "max_num_seqs", f.max_num_seqs);
  put(flags, "max_num_batched_tokens", f.max_num_batched_tokens);
  put(flags, "kv_cache_dtype", f.kv_cache_dtype);
  put(flags, "dtype", f.dtype);
  put(flags, "quantization", f.quantization);
  put(flags, "block_size", f.block_size);
  put(flags, "enable_prefix_caching", f.enable_prefix_caching);
  put(flags, "enable_chunked_prefill", f.enable_chunked_prefill);
  put(flags, "kv_cache_memory_bytes", f.kv_cache_memory_bytes);
  if (f.enforce_eager) flags["enforce_eager"] = true;
  j["flags"] = flags;
  put(j, "total_gib", run.total_gib);
  put(j, "free_at_start_gib", run.free_at_start_gib);
  put(j, "requested_gib", run.requested_gib);
  put(j, "initial_memory_usage_gib", run.initial_memory_usage_gib);
  nlohmann::json m = nlohmann::json::object();
  put(m, "weights_gib", run.weights_gib);
  put(m, "activation_peak_gib", run.activation_peak_gib);
  put(m, "non_torch_gib", run.non_torch_gib);
  put(m, "non_kv_total_gib", run.non_kv_total_gib);
  put(m, "kv_cache_gib", run.kv_cache_gib);
  put(m, "kv_tokens", run.kv_tokens);
  put(m, "num_gpu_blocks", run.num_gpu_blocks);
  put(m, "max_concurrency", run.max_concurrency);
  put(m, "concurrency_len", run.concurrency_len);
  put(m, "cuda_graph_gib", run.cuda_graph_gib);
  put(m, "cuda_graph_estimated_gib", run.cuda_graph_estimated_gib);
  put(m, "kv_cache_memory_fit_bytes", run.kv_cache_memory_fit_bytes);
  put(m, "kv_cache_memory_full_bytes", run.kv_cache_memory_full_bytes);
  put(m, "auto_fit_max_model_len", run.auto_fit_max_model_len);
  j["measured"] = m;
  j["stage"] = std::string(to_string(run.stage));
  j["engine_started"] = run.engine_started;
  return j;
}

LogOutcome outcome_of(const Diagnosis& d) {
  if (d.primary) return LogOutcome::failure;
  return d.run.engine_started ? LogOutcome::started : LogOutcome::incomplete;
}

std::string_view to_string(LogOutcome outcome) {
  switch (outcome) {
    case LogOutcome::failure: return "failure";
    case LogOutcome::started: return "started";
    case LogOutcome::incomplete: return "incomplete";
  }
  return "incomplete";
}

const std::string& reported_class(const Finding& f) {
  static const std::string none;
  if (f.unclassified) return none;
  return f.taxonomy_class.empty() ? f.error_class : f.taxonomy_class;
}

nlohmann::json to_json(const Finding& f) {
  nlohmann::json facts = nlohmann::json::object();
  for (const auto& [k, v] : f.facts) facts[k] = v;
  for (const auto& [k, v] : f.text_facts) facts[k] = v;
  // A wrapper that names no class (the engine died, the log does not say why) has class null.
  nlohmann::json j = {{"class", f.unclassified ? nlohmann::json(nullptr) : nlohmann::json(reported_class(f))},
                      {"cause", f.cause.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.cause)},
                      {"record", f.error_class},  {"phase", f.phase},
                      {"phase_basis", f.phase_basis}, {"phase_evidence", f.phase_evidence}, {"line", f.line},
                      {"message", f.message},    {"facts", facts},
                      {"out_of_memory", f.out_of_memory}, {"look_alike", f.look_alike},
                      {"severity", std::string(to_string(f.severity))}, {"occurrences", f.occurrences},
                      {"title_cut", f.title_cut}};
  j["phase_confidence"] = f.phase_confidence ? nlohmann::json(*f.phase_confidence) : nlohmann::json(nullptr);
  if (!f.processes.empty()) {
    nlohmann::json p = nlohmann::json::array();
    for (const auto& [pid, gib] : f.processes) p.push_back({{"pid", pid}, {"gib", gib}});
    j["processes"] = p;
  }
  return j;
}

nlohmann::json to_json(const Diagnosis& d) {
  nlohmann::json j;
  j["schema_version"] = 1;
  j["log"] = d.source;
  j["lines"] = d.lines;
  j["bytes"] = d.bytes;
  j["failure_found"] = d.primary.has_value();
  j["outcome"] = std::string(to_string(outcome_of(d)));
  j["primary"] = d.primary ? to_json(*d.primary) : nlohmann::json(nullptr);
  j["findings"] = nlohmann::json::array();
  for (const auto& f : d.findings) j["findings"].push_back(to_json(f));
  j["run"] = to_json(d.run);
  j["fixes"] = nlohmann::json::array();
  for (const auto& s : d.fixes) {
    nlohmann::json changes = nlohmann::json::object();
    for (const auto& [flag, value] : s.changes) {
      if (flag == "ENV") {
        auto eq = value.find('=');
        changes[value.substr(0, eq)] = eq == std::string::npos ? "" : value.substr(eq + 1);
      } else {
        changes[flag] = value.empty() ? nlohmann::json(true) : nlohmann::json(value);
      }
    }
    j["fixes"].push_back({{"changes", changes}, {"action", s.action}, {"command", s.command}, {"why", s.why}, {"confidence", s.confidence},
                          {"basis", s.basis}});
  }
  j["dead_ends"] = nlohmann::json::array();
  for (const auto& de : d.dead_ends)
    j["dead_ends"].push_back({{"action", de.action}, {"why_fails", de.why_fails},
                              {"fail_rate", de.fail_rate ? nlohmann::json(*de.fail_rate) : nlohmann::json(nullptr)}});
  j["notes"] = d.notes;
  j["warnings"] = d.warnings;
  return j;
}

}  // namespace headroom
