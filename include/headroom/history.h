// Run history: every real vLLM start that headroom was shown (`headroom record LOG`, or imported
// measurements) with its measured terms and outcome, kept in SQLite or PostgreSQL, and the
// queries that let predictions use it (measured terms of the same setup, calibration from other
// models on the same GPU, configurations that failed).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/error.h"
#include "headroom/vllm_engine.h"
#include "headroom/vllm_log.h"
#include "headroom/vllm_version.h"

namespace headroom {

class KnowledgeBase;
struct Diagnosis;

enum class RunOutcome { ok, failed };
std::string_view to_string(RunOutcome outcome);

// What vLLM measured during startup, per GPU (rank 0), GiB as vLLM prints them.
struct RunMeasurements {
  std::optional<double> weights_gib;
  std::optional<double> activation_peak_gib;
  std::optional<double> non_torch_gib;
  std::optional<double> cuda_graph_gib;
  std::optional<double> kv_cache_gib;
  std::optional<std::int64_t> kv_tokens;
  std::optional<std::int64_t> gpu_blocks;
  std::optional<double> max_concurrency;
  std::optional<std::int64_t> concurrency_len;
};

// One recorded vLLM start.
struct RunRecord {
  std::int64_t id = 0;          // assigned by the store
  std::string content_hash;     // SHA-256 of the log bytes (record) or of the imported row; unique
  std::string recorded_at;      // UTC, "2026-06-01T12:00:00Z", when it was stored
  std::string run_date;         // "2026-06-01": when the run happened (the source's date, else recorded_at's)
  std::string source;           // log path, or "import FILE:LINE"
  std::string source_id;        // the imported row's id ("" for logs)
  std::string model;            // as vLLM was given it
  std::string model_config_hash;  // SHA-256 of the model's config when headroom could read it, else ""
  std::string gpu_name;         // as logged
  std::string gpu_key;          // catalogue key when the name resolves, else ""
  std::optional<double> total_gib;  // total GPU memory as vLLM reported it
  std::string vllm_version;     // as logged ("0.11.1rc6.dev35"); "" when unknown
  std::string era;              // history_era() of the version; "" when the version is unknown
  int tp = 1, pp = 1, dp = 1;
  // The settings in effect, keyed by vLLM's flag names with underscores (max_model_len,
  // gpu_memory_utilization, max_num_seqs, max_num_batched_tokens, dtype, kv_cache_dtype,
  // quantization, enforce_eager, block_size, enable_prefix_caching). A key is present only when
  // its value is known: logged, given, or resolved from vLLM's defaults by the prediction engine.
  nlohmann::json settings = nlohmann::json::object();
  RunMeasurements measured;
  // headroom's own estimate of the empirical terms for this run, computed when it was recorded
  // (nullopt when the model could not be read): the basis of calibration_for().
  std::optional<double> estimated_activation_gib;
  std::optional<double> estimated_non_torch_gib;
  RunOutcome outcome = RunOutcome::ok;
  std::string failure_class;    // diagnose's class (kv_cache_insufficient, ...) when failed
  std::string failure_message;  // the line vLLM printed, when known
  nlohmann::json extra = nlohmann::json::object();  // other fields of an imported row (notes, source_url)
};

// The era of a version for history matching: measured terms are reused only within one era, the
// stretch of releases whose memory accounting is the same (the boundaries are where vLLM changed
// its profiler: V1 at 0.8, the free-memory accounting at 0.9.1, 0.11, 0.17, 0.21).
std::string history_era(const VllmVersion& version);

struct AddResult {
  std::int64_t id = 0;
  bool inserted = false;  // false: a record with the same content_hash was already there (id is that record's)
};

// Which records list() returns. Empty strings match everything.
struct RecordFilter {
  std::string era;
};

// Where records are kept. Implementations: SQLite (one file) and PostgreSQL (shared by a team).
// Every method is safe against other processes using the same database at the same time.
class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  // Stores `record` (its id and recorded_at are assigned) unless its content_hash is already there.
  virtual Result<AddResult> add(const RunRecord& record) = 0;
  // Records in id order.
  virtual Result<std::vector<RunRecord>> list(const RecordFilter& filter = {}) = 0;
  virtual Result<std::optional<RunRecord>> get(std::int64_t id) = 0;
  // Removes record `id`; false when there was none.
  virtual Result<bool> forget(std::int64_t id) = 0;
  virtual int schema_version() const = 0;
  // "sqlite:/path/history.db" or "postgresql://host:port/db" (without the password).
  virtual std::string description() const = 0;
};

// The schema version this build writes.
constexpr int k_history_schema_version = 2;

enum class OpenMode {
  create,         // create the database (and its folder) when missing; migrate an older schema
  existing_only,  // nullopt when the database does not exist; nothing is created
};

// Opens the history at `location`: "postgresql://..." / "postgres://..." for PostgreSQL, anything
// else a SQLite file path ("sqlite:" prefix allowed). Errors: parse_error for a file that is not
// a SQLite database ("file is not a database") or one made by another program (it has other
// tables), unsupported for a newer schema than this build knows, unavailable when PostgreSQL cannot
// be reached, io_error. A file that is not headroom's is never written to.
// With OpenMode::existing_only a missing SQLite file gives nullptr.
Result<std::unique_ptr<HistoryStore>> open_history(const std::string& location, OpenMode mode);

// The database to use: `flag` (--db) when given, else $HEADROOM_DB, else
// $XDG_DATA_HOME/headroom/history.db (XDG_DATA_HOME defaults to ~/.local/share).
std::string default_history_location(const std::string& flag = {});

// SQLite directly, for tests that need a specific file.
Result<std::unique_ptr<HistoryStore>> open_sqlite_history(const std::string& path, OpenMode mode);
Result<std::unique_ptr<HistoryStore>> open_postgres_history(const std::string& url);

// --- Building records ---

// Reads a vLLM log (plain or gzip), rebuilds the run with diagnose's parser and classifies the
// outcome: `failed` when diagnose finds a fatal failure (its class becomes failure_class), `ok`
// when the engine started. `outcome` overrides it (--outcome); a log that neither started nor
// failed recognisably without an override is an invalid_argument error. content_hash is the
// SHA-256 of the log's bytes. Errors: those of open_log and diagnose.
Result<RunRecord> record_from_log(const std::string& path, const KnowledgeBase& kb,
                                  std::optional<RunOutcome> outcome = std::nullopt);

// The record of a run that diagnose has read (the second half of record_from_log, for logs read
// some other way, such as `headroom run` following vLLM's output): the outcome, failure class and
// measurements as record_from_log decides them, then enrich_record(). `source` is stored and names
// the log in errors; content_hash is left empty for the caller. Errors as record_from_log's.
Result<RunRecord> record_from_diagnosis(const Diagnosis& diagnosis, const std::string& source,
                                        std::optional<RunOutcome> outcome = std::nullopt);

// Fills the derived fields of a record: era, gpu_key, model_config_hash, the settings vLLM's
// defaults resolve to, and headroom's estimates of the empirical terms. Needs the model's config;
// when it cannot be read only era and gpu_key are filled. Never fails.
void enrich_record(RunRecord& record);

// A row in the JSON Lines format of startup measurements (model, vllm_version, gpu_name,
// total_gpu_memory_gib, tp, pp, dp, flags..., observed_*, observed_outcome) to a record, and back.
// `origin` is "FILE:LINE" for errors. Errors: parse_error naming the field.
Result<RunRecord> record_from_jsonl_row(const nlohmann::json& row, const std::string& origin);
nlohmann::json record_to_jsonl_row(const RunRecord& record);

struct ImportSummary {
  int rows = 0;
  int added = 0;
  int duplicates = 0;
};

// Imports every line of a JSON Lines file; all rows are checked before any is stored.
Result<ImportSummary> import_jsonl(HistoryStore& store, const std::string& path);

// --- Using the history ---

// The setup a prediction is for.
struct SetupKey {
  std::string model;              // as given
  std::string model_config_hash;  // "" when unknown
  std::string gpu_key;            // catalogue key, "custom" or ""
  double total_gib = 0;           // what CUDA reports
  int tp = 1, pp = 1;
  VllmVersion version;
  ResolvedSettings settings;      // from a prediction without history
};

// The measured terms of the newest matching record: same model (config hash when both are known,
// else the id), same GPU (catalogue key, else total memory within 0.05 GiB), TP, PP and era. A term
// is taken only from a record whose settings that term depends on are the same: weights (dtype,
// quantization), activation peak (max_num_seqs, max_num_batched_tokens, dtype), CUDA graphs
// (max_num_seqs, max_num_batched_tokens, enforce_eager), non-torch (none beyond TP/PP). Records of
// the same version win over others of the era. source: "measured on 2026-06-01 (history #12)";
// when terms come from different records, each term's source is in `term_sources`.
struct HistoryTerms {
  MeasuredTerms terms;
  std::vector<std::int64_t> record_ids;
  TermSources term_sources;  // per-term "measured on ... (history #N)"; empty for terms not measured
};
std::optional<HistoryTerms> measured_terms_for(const std::vector<RunRecord>& records, const SetupKey& key);

// Correction factors for the empirical terms from other models' runs on the same GPU and era:
// the median over those records of measured / headroom's estimate (at record time), separately for
// the activation peak and non-torch memory. A factor needs at least k_min_calibration_runs runs;
// with fewer it stays 1. Simple on purpose: it corrects a shared bias of the estimate on that GPU
// and version (allocator behaviour, library workspaces) without fitting any one model.
struct Calibration {
  double activation_factor = 1.0;
  double non_torch_factor = 1.0;
  int activation_runs = 0;
  int non_torch_runs = 0;
};
constexpr int k_min_calibration_runs = 3;
Calibration calibration_for(const std::vector<RunRecord>& records, const SetupKey& key);

// A configuration that failed to start on a GPU.
struct FailedConfiguration {
  std::int64_t record_id = 0;
  std::string run_date;
  std::string vllm_version;
  int tp = 1, pp = 1;
  nlohmann::json settings;      // as in RunRecord
  std::string failure_class;
  std::string failure_message;

  // Whether `candidate` (tp/pp and resolved settings) would fail for the same reason: the same
  // configuration, or for memory failures one that asks for at least as much memory (same TP/PP,
  // dtypes and quantization; max_model_len, max_num_seqs and max_num_batched_tokens no smaller; and
  // a gpu_memory_utilization no larger for KV-cache/OOM failures, no smaller for the startup
  // free-memory check). Settings the record does not know are taken as equal.
  bool rules_out(int candidate_tp, int candidate_pp, const ResolvedSettings& candidate) const;

  // "startup failed with gpu_memory_utilization=0.90, max_model_len=32000 on this GPU
  //  (kv_cache_insufficient; history #7, 2026-06-01)"
  std::string citation() const;
};

// Failed runs of the model (config hash or id) on the GPU (key or total memory), newest first.
std::vector<FailedConfiguration> failed_configurations(const std::vector<RunRecord>& records, const SetupKey& key);

// What the history contributes to one prediction.
struct HistoryAdvice {
  std::optional<MeasuredTerms> measured;   // to pass as PredictOptions::measured
  TermSources sources;                     // per-term sources to show (overrides Prediction.sources)
  std::vector<FailedConfiguration> failures;  // failures of this model on this GPU
  std::optional<FailedConfiguration> same_failed;  // one that rules this configuration out
  std::vector<std::string> notes;          // "activation peak measured on 2026-06-01: 1.89 GiB (history #12)"
};

// Measured terms first, then calibration for the empirical terms not measured (when pp == 1),
// then the failures. `estimate` is the prediction without history for the same setup.
HistoryAdvice advise(const std::vector<RunRecord>& records, const SetupKey& key, const Prediction& estimate);

// Reads every record of the history at `location` for consulting it (check, plan): an empty list
// when no database exists there, and none is created. Errors: those of open_history and of reading
// (callers warn and go on without the history).
Result<std::vector<RunRecord>> read_history(const std::string& location);

// predict() with the history applied: the estimate, then advise(), then predict() again with the
// measured (or calibrated) terms; Prediction.sources name each term's record and the advice's notes
// are added to Prediction.notes. When `advice.same_failed` is set its citation is added to the
// notes, and when that failure was recorded with this very vLLM version and the arithmetic says
// the configuration starts, the prediction becomes a failure (phase "history") citing the record.
// `advice` (optional) receives what the history contributed. Errors: those of predict().
Result<Prediction> predict_with_history(const ModelSpec& model, const GpuSetup& gpus, const VllmFlags& flags,
                                        const VllmVersion& version, const std::vector<RunRecord>& records,
                                        HistoryAdvice* advice = nullptr);

// Builds the key for a prediction: model_config_hash from the model's raw config.
SetupKey setup_key(const ModelSpec& model, const GpuSetup& gpus, const Prediction& estimate);

// SHA-256 of a model's config (its raw JSON with sorted keys), hex.
std::string model_config_hash(const ModelSpec& model);

// The record as JSON for `history show` / `list --format json`.
nlohmann::json to_json(const RunRecord& record);

}  // namespace headroom
