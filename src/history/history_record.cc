// Building run records: from a vLLM log (diagnose's parser and failure classes), the derived
// fields every record gets (era, GPU key, model config hash, resolved settings, headroom's own
// estimate of the empirical terms), and the stored JSON body shared by both stores.
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>

#include "headroom/diagnose.h"
#include "headroom/gpu.h"
#include "headroom/history.h"
#include "headroom/knowledge_base.h"
#include "headroom/model.h"
#include "history/history_settings.h"
#include "history/record_codec.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace headroom {

namespace {

using nlohmann::json;

template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

template <class T>
void take(const json& j, const char* key, std::optional<T>& v) {
  if (j.contains(key) && !j[key].is_null()) v = j[key].get<T>();
}

json measurements_json(const RunMeasurements& m) {
  json j = json::object();
  put(j, "weights_gib", m.weights_gib);
  put(j, "activation_peak_gib", m.activation_peak_gib);
  put(j, "non_torch_gib", m.non_torch_gib);
  put(j, "cuda_graph_gib", m.cuda_graph_gib);
  put(j, "kv_cache_gib", m.kv_cache_gib);
  put(j, "kv_tokens", m.kv_tokens);
  put(j, "gpu_blocks", m.gpu_blocks);
  put(j, "max_concurrency", m.max_concurrency);
  put(j, "concurrency_len", m.concurrency_len);
  return j;
}

RunMeasurements measurements_from(const json& j) {
  RunMeasurements m;
  take(j, "weights_gib", m.weights_gib);
  take(j, "activation_peak_gib", m.activation_peak_gib);
  take(j, "non_torch_gib", m.non_torch_gib);
  take(j, "cuda_graph_gib", m.cuda_graph_gib);
  take(j, "kv_cache_gib", m.kv_cache_gib);
  take(j, "kv_tokens", m.kv_tokens);
  take(j, "gpu_blocks", m.gpu_blocks);
  take(j, "max_concurrency", m.max_concurrency);
  take(j, "concurrency_len", m.concurrency_len);
  return m;
}

// The settings a log shows, keyed as in RunRecord::settings.
json settings_from_flags(const VllmFlags& f) {
  json s = json::object();
  if (f.max_model_len && *f.max_model_len > 0) s["max_model_len"] = *f.max_model_len;
  put(s, "gpu_memory_utilization", f.gpu_memory_utilization);
  put(s, "max_num_seqs", f.max_num_seqs);
  put(s, "max_num_batched_tokens", f.max_num_batched_tokens);
  put(s, "dtype", f.dtype);
  put(s, "kv_cache_dtype", f.kv_cache_dtype);
  put(s, "quantization", f.quantization);
  if (f.enforce_eager) s["enforce_eager"] = true;
  put(s, "block_size", f.block_size);
  put(s, "enable_prefix_caching", f.enable_prefix_caching);
  // The sampler's path as the log names it (topk_topp_sampler.py): the estimate recorded beside the
  // measurement takes the same path.
  put(s, "flashinfer_sampler", f.use_flashinfer_sampler);
  put(s, "performance_mode", f.performance_mode);
  return s;
}

Result<std::string> hash_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::not_found, "cannot open the log", path);
  util::Sha256 h;
  std::string buffer(1 << 20, '\0');
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    h.update(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) return make_error(ErrorCode::io_error, "cannot read the log", path);
  return h.hex_digest();
}

bool is_startup_failure(const Finding& f) { return f.severity == Severity::fatal && !f.error_class.empty(); }

}  // namespace

std::string_view to_string(RunOutcome outcome) { return outcome == RunOutcome::ok ? "ok" : "failed"; }

std::string history_era(const VllmVersion& v) {
  if (!v.is_v1_engine()) return "v0";
  if (v < VllmVersion{0, 9, 1}) return "v1-0.8";
  if (v < VllmVersion{0, 11}) return "v1-0.9.1";
  if (v < VllmVersion{0, 17}) return "v1-0.11";
  if (v < VllmVersion{0, 21}) return "v1-0.17";
  return "v1-0.21";
}

std::string model_config_hash(const ModelSpec& model) {
  if (model.raw_config.is_null()) return "";
  // nlohmann::json objects keep their keys sorted, so the dump is canonical.
  return util::sha256_hex(model.raw_config.dump());
}

namespace history_detail {

json record_body(const RunRecord& r) {
  json j;
  j["content_hash"] = r.content_hash;
  j["run_date"] = r.run_date;
  j["source"] = r.source;
  if (!r.source_id.empty()) j["source_id"] = r.source_id;
  j["model"] = r.model;
  j["model_config_hash"] = r.model_config_hash;
  j["gpu_name"] = r.gpu_name;
  j["gpu_key"] = r.gpu_key;
  put(j, "total_gib", r.total_gib);
  j["vllm_version"] = r.vllm_version;
  j["era"] = r.era;
  j["tp"] = r.tp;
  j["pp"] = r.pp;
  j["dp"] = r.dp;
  j["settings"] = r.settings;
  j["measured"] = measurements_json(r.measured);
  put(j, "estimated_activation_gib", r.estimated_activation_gib);
  put(j, "estimated_non_torch_gib", r.estimated_non_torch_gib);
  j["outcome"] = std::string(to_string(r.outcome));
  if (!r.failure_class.empty()) j["failure_class"] = r.failure_class;
  if (!r.failure_message.empty()) j["failure_message"] = r.failure_message;
  if (!r.extra.empty()) j["extra"] = r.extra;
  return j;
}

Result<RunRecord> record_from_body(const std::string& body, const std::string& where) {
  try {
    json j = json::parse(body);
    RunRecord r;
    r.content_hash = j.value("content_hash", "");
    r.run_date = j.value("run_date", "");
    r.source = j.value("source", "");
    r.source_id = j.value("source_id", "");
    r.model = j.value("model", "");
    r.model_config_hash = j.value("model_config_hash", "");
    r.gpu_name = j.value("gpu_name", "");
    r.gpu_key = j.value("gpu_key", "");
    take(j, "total_gib", r.total_gib);
    r.vllm_version = j.value("vllm_version", "");
    r.era = j.value("era", "");
    r.tp = j.value("tp", 1);
    r.pp = j.value("pp", 1);
    r.dp = j.value("dp", 1);
    if (j.contains("settings") && j["settings"].is_object()) r.settings = j["settings"];
    if (j.contains("measured") && j["measured"].is_object()) r.measured = measurements_from(j["measured"]);
    take(j, "estimated_activation_gib", r.estimated_activation_gib);
    take(j, "estimated_non_torch_gib", r.estimated_non_torch_gib);
    r.outcome = j.value("outcome", "ok") == "failed" ? RunOutcome::failed : RunOutcome::ok;
    r.failure_class = j.value("failure_class", "");
    r.failure_message = j.value("failure_message", "");
    if (j.contains("extra") && j["extra"].is_object()) r.extra = j["extra"];
    return r;
  } catch (const std::exception& e) {
    return make_error(ErrorCode::parse_error, std::string("expected a stored record (JSON), found: ") + e.what(), where);
  }
}

std::string utc_now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace history_detail

void enrich_record(RunRecord& r) {
  std::optional<VllmVersion> version = parse_logged_version(r.vllm_version);
  if (version) r.era = history_era(*version);
  // "NVIDIA H100 80GB (79.18 GiB)": the catalogue name is before any parenthesis.
  std::string name = util::trim(r.gpu_name.substr(0, r.gpu_name.find(" (")));
  std::optional<GpuSpec> catalogued;
  if (!name.empty())
    if (auto g = GpuCatalog::builtin().find(name)) catalogued = *g;
  if (catalogued) {
    r.gpu_key = catalogued->key;
    if (!r.total_gib) r.total_gib = catalogued->total_gib();
  }
  auto model = load_model(r.model);
  if (!model) return;
  r.model_config_hash = model_config_hash(*model);
  if (!version || !r.total_gib) return;
  GpuSetup gpus;
  gpus.gpu = custom_gpu(*r.total_gib);
  if (catalogued) {
    gpus.gpu.key = catalogued->key;
    gpus.gpu.name = catalogued->name;
    gpus.gpu.architecture = catalogued->architecture;
    gpus.gpu.bf16_supported = catalogued->bf16_supported;
    gpus.gpu.fp8_supported = catalogued->fp8_supported;
    gpus.gpu.compute_capability = catalogued->compute_capability;
  }
  VllmFlags flags = history_detail::flags_from_settings(r.settings, r.tp, r.pp, *model);
  gpus.count = r.tp * r.pp;
  auto p = predict(*model, gpus, flags, *version);
  if (!p) return;
  history_detail::add_resolved_settings(r.settings, p->settings);
  const MemoryBreakdown& m = p->stages.empty() ? p->memory : p->stages.front();
  r.estimated_activation_gib = to_gib(m.activation_peak);
  r.estimated_non_torch_gib = to_gib(m.non_torch);
}

Result<RunRecord> record_from_log(const std::string& path, const KnowledgeBase& kb, std::optional<RunOutcome> outcome) {
  RunRecord r;
  std::unique_ptr<ByteSource> source;
  if (path == "-") {
    std::string bytes((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    r.content_hash = util::sha256_hex(bytes);
    source = memory_source(std::move(bytes), "-");
  } else {
    auto opened = open_log(path);
    if (!opened) return tl::unexpected(opened.error());
    source = std::move(*opened);
  }
  auto d = diagnose(*source, kb);
  if (!d) return tl::unexpected(d.error());
  std::string stdin_hash = std::move(r.content_hash);
  auto built = record_from_diagnosis(*d, path, outcome);
  if (!built) return tl::unexpected(built.error());
  // Hashed only once the file is known to be a log: a huge binary file is refused without a pass over it.
  if (path != "-") {
    auto hash = hash_file(path);
    if (!hash) return tl::unexpected(hash.error());
    built->content_hash = *hash;
  } else {
    built->content_hash = std::move(stdin_hash);
  }
  return built;
}

Result<RunRecord> record_from_diagnosis(const Diagnosis& diagnosis, const std::string& source, std::optional<RunOutcome> outcome) {
  RunRecord r;
  const LoggedRun& run = diagnosis.run;
  if (run.model.empty())
    return make_error(ErrorCode::invalid_argument,
                      "expected a vLLM startup log naming its model, found none in " + std::to_string(diagnosis.lines) + " lines",
                      source);
  bool failed = diagnosis.primary && is_startup_failure(*diagnosis.primary);
  if (!outcome) {
    if (failed) outcome = RunOutcome::failed;
    else if (run.engine_started || run.stage >= StartupStage::engine_ready) outcome = RunOutcome::ok;
    else
      return make_error(ErrorCode::invalid_argument,
                        "cannot tell whether this run started: the log stops at stage '" + std::string(to_string(run.stage)) +
                            "' (line " + std::to_string(run.stage_line) +
                            ") without a failure; pass --outcome ok or --outcome failed",
                        source);
  }
  r.outcome = *outcome;
  if (r.outcome == RunOutcome::failed) {
    r.failure_class = failed ? diagnosis.primary->error_class : "engine_failure_unexplained";
    if (failed) r.failure_message = diagnosis.primary->message;
  }
  r.source = source;
  r.model = run.model;
  r.gpu_name = run.gpu_name;
  r.total_gib = run.total_gib;
  r.vllm_version = run.version_text.empty() && run.version ? run.version->to_string() : run.version_text;
  r.tp = run.flags.tensor_parallel_size.value_or(1);
  r.pp = run.flags.pipeline_parallel_size.value_or(1);
  r.dp = run.flags.data_parallel_size.value_or(1);
  r.settings = settings_from_flags(run.flags);
  r.measured.weights_gib = run.weights_gib;
  r.measured.activation_peak_gib = run.activation_peak_gib;
  r.measured.non_torch_gib = run.non_torch_gib;
  r.measured.cuda_graph_gib = run.cuda_graph_gib;
  r.measured.kv_cache_gib = run.kv_cache_gib;
  r.measured.kv_tokens = run.kv_tokens;
  r.measured.gpu_blocks = run.num_gpu_blocks;
  r.measured.max_concurrency = run.max_concurrency;
  r.measured.concurrency_len = run.concurrency_len;
  enrich_record(r);
  return r;
}

json to_json(const RunRecord& r) {
  json j = history_detail::record_body(r);
  j["id"] = r.id;
  j["recorded_at"] = r.recorded_at;
  return j;
}

}  // namespace headroom
