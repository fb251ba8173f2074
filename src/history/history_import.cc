// The JSON Lines exchange format of the history: the fields of startup measurements (what was
// run, what vLLM reported, observed_outcome), plus headroom's own (content_hash, failure_class,
// history_id, recorded_at) on export so that exporting and importing again changes nothing.
#include <set>

#include "headroom/history.h"
#include "util/json_file.h"
#include "util/sha256.h"

namespace headroom {

namespace {

using nlohmann::json;

const char* type_name(const json& v) {
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_number()) return "number";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return "null";
}

tl::unexpected<Error> field_error(const std::string& origin, const char* key, const char* expected, const json& got) {
  return make_error(ErrorCode::parse_error,
                    std::string("expected ") + expected + " \"" + key + "\", got " + type_name(got), origin);
}

// The settings keys, as they appear in a row and in RunRecord::settings.
const char* const k_setting_keys[] = {"max_model_len", "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens",
                                      "dtype",          "kv_cache_dtype",         "quantization", "enforce_eager",
                                      "block_size",     "enable_prefix_caching"};

const char* const k_observed_keys[] = {"observed_weights_gib",    "observed_activation_peak_gib", "observed_non_torch_gib",
                                       "observed_cuda_graph_gib", "observed_kv_cache_gib",        "observed_kv_tokens",
                                       "observed_gpu_blocks",     "observed_max_concurrency",     "observed_concurrency_len"};

// Keys that become record fields; every other key of a row is kept in `extra`.
const std::set<std::string>& mapped_keys() {
  static const std::set<std::string> keys = [] {
    std::set<std::string> k = {"id", "model", "vllm_version", "gpu_name", "total_gpu_memory_gib", "tp", "pp", "dp",
                               "observed_outcome", "source_date", "content_hash", "failure_class", "failure_message",
                               "history_id", "recorded_at", "source", "model_config_hash"};
    for (const char* s : k_setting_keys) k.insert(s);
    for (const char* s : k_observed_keys) k.insert(s);
    return k;
  }();
  return keys;
}

bool is_memory_class(const std::string& c) {
  return c == "out_of_memory" || c == "kv_cache_insufficient" || c == "no_kv_cache_memory" || c.find("oom") != std::string::npos;
}

}  // namespace

Result<RunRecord> record_from_jsonl_row(const json& row, const std::string& origin) {
  if (!row.is_object()) return make_error(ErrorCode::parse_error, std::string("expected an object, got ") + type_name(row), origin);
  RunRecord r;
  auto str = [&](const char* key, std::string& out, bool required) -> Result<void> {
    if (!row.contains(key) || row[key].is_null()) {
      if (required) return make_error(ErrorCode::parse_error, std::string("expected string \"") + key + "\", found none", origin);
      return {};
    }
    if (!row[key].is_string()) return field_error(origin, key, "string", row[key]);
    out = row[key].get<std::string>();
    return {};
  };
  auto number = [&](const char* key, auto& out) -> Result<void> {
    if (!row.contains(key) || row[key].is_null()) return {};
    if (!row[key].is_number()) return field_error(origin, key, "number", row[key]);
    out = row[key].get<typename std::decay_t<decltype(out)>::value_type>();
    return {};
  };
  std::optional<int> tp, pp, dp;
  std::string outcome, failure_class;
  for (auto r2 : {str("model", r.model, true), str("vllm_version", r.vllm_version, false), str("gpu_name", r.gpu_name, false),
                  str("id", r.source_id, false), str("source_date", r.run_date, false),
                  str("observed_outcome", outcome, false), str("failure_class", failure_class, false),
                  str("failure_message", r.failure_message, false), str("content_hash", r.content_hash, false),
                  number("total_gpu_memory_gib", r.total_gib), number("tp", tp), number("pp", pp), number("dp", dp),
                  number("observed_weights_gib", r.measured.weights_gib),
                  number("observed_activation_peak_gib", r.measured.activation_peak_gib),
                  number("observed_non_torch_gib", r.measured.non_torch_gib),
                  number("observed_cuda_graph_gib", r.measured.cuda_graph_gib),
                  number("observed_kv_cache_gib", r.measured.kv_cache_gib), number("observed_kv_tokens", r.measured.kv_tokens),
                  number("observed_gpu_blocks", r.measured.gpu_blocks),
                  number("observed_max_concurrency", r.measured.max_concurrency),
                  number("observed_concurrency_len", r.measured.concurrency_len)})
    if (!r2) return tl::unexpected(r2.error());
  if (r.model.empty()) return make_error(ErrorCode::parse_error, "expected a model name in \"model\", found an empty string", origin);
  r.tp = tp.value_or(1);
  r.pp = pp.value_or(1);
  r.dp = dp.value_or(1);
  if (r.tp < 1 || r.pp < 1 || r.dp < 1)
    return make_error(ErrorCode::parse_error, "expected tp, pp and dp of at least 1", origin);
  for (const char* key : k_setting_keys) {
    if (!row.contains(key) || row[key].is_null()) continue;
    const json& v = row[key];
    bool is_text = std::string(key) == "dtype" || std::string(key) == "kv_cache_dtype" || std::string(key) == "quantization";
    bool is_flag = std::string(key) == "enforce_eager" || std::string(key) == "enable_prefix_caching";
    if (is_text && !v.is_string()) return field_error(origin, key, "string", v);
    if (is_flag && !v.is_boolean()) return field_error(origin, key, "boolean", v);
    if (!is_text && !is_flag && !v.is_number()) return field_error(origin, key, "number", v);
    r.settings[key] = v;
  }
  // Rows of runs started from Python (LLM(...)) get that entry point's batch defaults.
  std::string context = row.value("other_flags", json()).is_string() ? row["other_flags"].get<std::string>() : "";
  if (row.contains("notes") && row["notes"].is_string()) context += " " + row["notes"].get<std::string>();
  if (context.find("LLM(") != std::string::npos) r.settings["usage_context"] = "llm";

  if (outcome.empty() || outcome == "ok") {
    r.outcome = RunOutcome::ok;
  } else {
    r.outcome = RunOutcome::failed;
    if (!failure_class.empty()) r.failure_class = failure_class;
    else if (outcome == "oom") r.failure_class = "out_of_memory";
    else if (r.measured.kv_cache_gib && *r.measured.kv_cache_gib <= 0) r.failure_class = "no_kv_cache_memory";
    else r.failure_class = "startup_error";
  }
  for (const auto& [k, v] : row.items())
    if (!mapped_keys().count(k)) r.extra[k] = v;
  if (r.content_hash.empty()) r.content_hash = util::sha256_hex("jsonl:" + row.dump());
  r.source = "import " + origin;
  return r;
}

json record_to_jsonl_row(const RunRecord& r) {
  json row;
  row["id"] = r.source_id.empty() ? "history-" + std::to_string(r.id) : r.source_id;
  row["model"] = r.model;
  row["vllm_version"] = r.vllm_version.empty() ? json(nullptr) : json(r.vllm_version);
  row["gpu_name"] = r.gpu_name;
  row["total_gpu_memory_gib"] = r.total_gib ? json(*r.total_gib) : json(nullptr);
  row["tp"] = r.tp;
  row["pp"] = r.pp;
  row["dp"] = r.dp;
  for (const char* key : k_setting_keys) row[key] = r.settings.contains(key) ? r.settings[key] : json(nullptr);
  auto obs = [&](const char* key, const auto& v) { row[key] = v ? json(*v) : json(nullptr); };
  obs("observed_weights_gib", r.measured.weights_gib);
  obs("observed_activation_peak_gib", r.measured.activation_peak_gib);
  obs("observed_non_torch_gib", r.measured.non_torch_gib);
  obs("observed_cuda_graph_gib", r.measured.cuda_graph_gib);
  obs("observed_kv_cache_gib", r.measured.kv_cache_gib);
  obs("observed_kv_tokens", r.measured.kv_tokens);
  obs("observed_gpu_blocks", r.measured.gpu_blocks);
  obs("observed_max_concurrency", r.measured.max_concurrency);
  obs("observed_concurrency_len", r.measured.concurrency_len);
  row["observed_outcome"] = r.outcome == RunOutcome::ok ? "ok" : (is_memory_class(r.failure_class) ? "oom" : "error");
  row["source_date"] = r.run_date.empty() ? json(nullptr) : json(r.run_date);
  for (const auto& [k, v] : r.extra.items())
    if (!row.contains(k)) row[k] = v;
  if (!r.failure_class.empty()) row["failure_class"] = r.failure_class;
  if (!r.failure_message.empty()) row["failure_message"] = r.failure_message;
  row["content_hash"] = r.content_hash;
  row["history_id"] = r.id;
  row["recorded_at"] = r.recorded_at;
  row["source"] = r.source;
  return row;
}

Result<ImportSummary> import_jsonl(HistoryStore& store, const std::string& path) {
  auto text = util::read_file(path);
  if (!text) return tl::unexpected(text.error());
  auto rows = util::parse_jsonl(*text, path);
  if (!rows) return tl::unexpected(rows.error());
  // Line numbers of the non-blank lines, for messages.
  std::vector<int> lines;
  {
    int n = 0;
    std::size_t start = 0;
    while (start <= text->size()) {
      std::size_t end = text->find('\n', start);
      if (end == std::string::npos) end = text->size();
      ++n;
      if (text->find_first_not_of(" \t\r", start) < end) lines.push_back(n);
      if (end == text->size()) break;
      start = end + 1;
    }
  }
  std::vector<RunRecord> records;
  for (std::size_t i = 0; i < rows->size(); ++i) {
    std::string origin = path + ":" + std::to_string(i < lines.size() ? lines[i] : static_cast<int>(i + 1));
    auto r = record_from_jsonl_row((*rows)[i], origin);
    if (!r) return tl::unexpected(r.error());
    records.push_back(std::move(*r));
  }
  ImportSummary summary;
  for (auto& r : records) {
    enrich_record(r);
    auto added = store.add(r);
    if (!added) return tl::unexpected(added.error());
    ++summary.rows;
    if (added->inserted) ++summary.added;
    else ++summary.duplicates;
  }
  return summary;
}

}  // namespace headroom
