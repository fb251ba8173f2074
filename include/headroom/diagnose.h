// Diagnosis of vLLM logs: LogScanner reads a log (plain or gzip, any size, bounded memory) and
// matches every knowledge-base signature in one Hyperscan pass; Diagnoser turns the matched lines
// into findings (class, phase, line, numbers) and rebuilds the run; plan_fixes computes the flags
// that fix the primary failure, with the prediction engine when the model is known.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/error.h"
#include "headroom/knowledge_base.h"
#include "headroom/vllm_log.h"

namespace headroom {

// One failure (or warning) found in a log.
struct Finding {
  std::string error_class;  // knowledge-base record id (`kb show` names it)
  // The class of the error taxonomy (../spec/error-taxonomy.md) this finding is reported as, and
  // the finer cause when the record or the log names one ("no_kv_cache_memory" with cause
  // "cuda_graph_estimate"). Empty taxonomy_class: the record's id is its class.
  std::string taxonomy_class;
  std::string cause;
  // The record is a wrapper that names no class (engine_failure_unexplained): reported_class is "".
  bool unclassified = false;
  // The error line was cut short ("CUDA out of memo"): the class was read from what is left of it,
  // which only one message of the knowledge base starts with.
  bool title_cut = false;
  std::string phase;        // taxonomy phase
  std::string phase_basis;  // why this phase: "traceback frame load_model in gpu_model_runner.py (line 12)", ...
  // Which evidence decided the phase, strongest first: "signature" (the message names its phase),
  // "message" (vLLM's messages about the failure), "frame" (vLLM frames of the traceback),
  // "startup" (the last startup landmark), "logger" (a serving logger's source file), "none".
  std::string phase_evidence = "none";
  // How sure the phase is, when a rule with a stated confidence placed it (allocation arithmetic).
  std::optional<double> phase_confidence;
  std::int64_t line = 0;    // 1-based line of the first occurrence
  std::int64_t last_line = 0;
  int occurrences = 1;
  std::string message;  // the matched line without colour codes or process prefixes (cut at 2,000 bytes)
  std::map<std::string, double> facts;            // named numbers; sizes in GiB, lengths in tokens
  std::map<std::string, std::string> text_facts;  // named strings (device, derived_key, ...)
  std::vector<std::pair<std::int64_t, double>> processes;  // "Process PID has X GiB memory in use"
  bool out_of_memory = false;
  bool look_alike = false;
  Severity severity = Severity::fatal;
  int priority = 0;
};

// A concrete change that fixes the primary failure.
struct FixSuggestion {
  std::vector<std::pair<std::string, std::string>> changes;  // {"--max-model-len", "856"}; env vars as {"ENV", "K=V"}
  std::string action;   // what to do when no flag changes (stop the process holding the GPU, ...)
  std::string command;  // the corrected `vllm serve` command ("" when no change of flags applies)
  std::string why;
  double confidence = 0.5;  // 0..1
  std::string basis;        // "prediction engine", "log arithmetic", "knowledge base"
};

struct Diagnosis {
  std::string source;  // file name or "-"
  std::optional<Finding> primary;
  std::vector<Finding> findings;  // secondary findings, in line order
  LoggedRun run;
  std::vector<FixSuggestion> fixes;
  std::vector<KbDeadEnd> dead_ends;
  std::vector<std::string> notes;     // facts worth saying (memory held by other processes, ...)
  std::vector<std::string> warnings;  // input problems: truncated lines, truncated gzip, binary data
  std::int64_t lines = 0;
  std::int64_t bytes = 0;
};

// What the log says happened, as a whole: a failure was found; no failure and vLLM became ready
// ("started"); or no failure and the log ends before vLLM was ready ("incomplete": cut short,
// still starting, or not a vLLM log).
enum class LogOutcome { failure, started, incomplete };
LogOutcome outcome_of(const Diagnosis& diagnosis);
std::string_view to_string(LogOutcome outcome);

// The class a finding is reported as: its taxonomy class, its record id when the record sets none
// (a user's record), or "" for a wrapper that names no class.
const std::string& reported_class(const Finding& finding);

// Where log bytes come from (a file, gzip, standard input, a string in tests).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `capacity` bytes; 0 at the end. Errors: io_error, parse_error (corrupt gzip).
  virtual Result<std::size_t> read(char* buffer, std::size_t capacity) = 0;
  virtual std::string name() const = 0;
  // Bytes consumed from the underlying file so far and its size, for progress (nullopt: unknown).
  virtual std::optional<std::uint64_t> position() const { return std::nullopt; }
  virtual std::optional<std::uint64_t> size() const { return std::nullopt; }
};

// Opens a log file ("-" = standard input); gzip is detected by its magic bytes.
// Errors: not_found, io_error.
Result<std::unique_ptr<ByteSource>> open_log(const std::string& path);

// A source over bytes in memory.
std::unique_ptr<ByteSource> memory_source(std::string bytes, std::string name);

class Diagnoser;

struct ScanOptions {
  // A line that does not fit in the read buffer (chunk_bytes + max_line_bytes) is cut: only its first
  // max_line_bytes are scanned, the rest is skipped, and a warning says so. Memory stays bounded.
  std::size_t max_line_bytes = 1 << 20;
  std::size_t chunk_bytes = 4 << 20;
  std::function<void(std::uint64_t done, std::optional<std::uint64_t> total)> progress;  // called every chunk
};

// Matches the diagnoser's patterns over a byte stream: one Hyperscan database, lines found around
// each match, RE2 only on matched lines. Patterns Hyperscan cannot compile are matched with RE2 on
// every line (and reported in warnings()).
class LogScanner {
 public:
  // Errors: invalid_argument when a pattern compiles in neither engine.
  static Result<std::unique_ptr<LogScanner>> create(const std::vector<std::string>& patterns);
  // A scanner sharing this one's compiled patterns with scratch space of its own, for another
  // thread. Errors: internal when Hyperscan cannot allocate the scratch space.
  Result<std::unique_ptr<LogScanner>> clone() const;
  ~LogScanner();

  // Feeds every line that matched at least one pattern to `on_line(line_number, line, ids)`.
  // Returns input warnings (truncated lines, truncated gzip). Errors: binary input, read errors.
  using LineCallback = std::function<void(std::int64_t, std::string_view, const std::vector<int>&)>;
  struct Totals {
    std::int64_t lines = 0;
    std::int64_t bytes = 0;
    std::vector<std::string> warnings;
  };
  Result<Totals> scan(ByteSource& source, const LineCallback& on_line, const ScanOptions& options = {});

  const std::vector<std::string>& warnings() const { return m_warnings; }

 private:
  LogScanner() = default;
  struct Impl;
  class Pass;
  std::unique_ptr<Impl> m_impl;
  std::vector<std::string> m_warnings;
};

// The diagnoser's regexes and their roles, built from a knowledge base (opaque; immutable, so one
// set may serve many Diagnosers on any thread).
struct DiagnosePatterns;

// Turns matched lines into findings and a LoggedRun.
class Diagnoser {
 public:
  explicit Diagnoser(const KnowledgeBase& kb);
  // With patterns built once by compile_patterns(kb) (the same kb): no per-log set-up.
  Diagnoser(const KnowledgeBase& kb, std::shared_ptr<const DiagnosePatterns> patterns);
  static std::shared_ptr<const DiagnosePatterns> compile_patterns(const KnowledgeBase& kb);
  ~Diagnoser();

  // The regexes the scanner must match (ids index this list).
  const std::vector<std::string>& patterns() const;

  void on_line(std::int64_t line_number, std::string_view line, const std::vector<int>& pattern_ids);

  // Chooses the primary finding. Call once, after the last line.
  Diagnosis finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// The engine step of fix planning: given the failure and the rebuilt run, returns fixes computed
// by the prediction engine, or nullopt when it cannot (model unknown, total memory unknown).
class FixEngine {
 public:
  virtual ~FixEngine() = default;
  virtual std::optional<std::vector<FixSuggestion>> plan(const Finding& primary, const LoggedRun& run) = 0;
};

// The FixEngine backed by predict() and load_model(); nullptr when this build has no engine.
std::unique_ptr<FixEngine> prediction_fix_engine();

struct FixOptions {
  FixEngine* engine = nullptr;  // null: log arithmetic only
  std::optional<int> gpus;      // GPUs available (for tensor-parallel suggestions)
};

// Fills diagnosis.fixes and diagnosis.dead_ends for the primary finding: the engine's fixes first
// when it can compute them, then the log arithmetic of the taxonomy, then the knowledge base's
// workarounds; dead ends come from the record.
void plan_fixes(Diagnosis& diagnosis, const KnowledgeBase& kb, const FixOptions& options = {});

// Renders `vllm serve MODEL --flag value ...` from the run's flags with `changes` applied.
std::string serve_command(const LoggedRun& run, const std::vector<std::pair<std::string, std::string>>& changes);

// What the user knows about the run besides its log (diagnose --model, --gpu, `-- vllm serve ...`).
// The log's own lines win; these fill what the log leaves out.
struct RunContext {
  std::string model;
  VllmFlags flags;
  std::optional<double> gpu_total_gib;
  std::string gpu_name;
};

// Fills the run's unknowns from the context (a value the log gave is kept).
void merge_context(LoggedRun& run, const RunContext& context);

struct DiagnoseOptions {
  ScanOptions scan;
  FixOptions fix;
  RunContext context;
  // Resolve the run's model (local folder, Hugging Face cache, catalogue; never the network) to
  // size the allocations of an out-of-memory error no evidence placed.
  bool resolve_model = true;
};

// Scans one log and diagnoses it (the whole pipeline: scanner, diagnoser, context, allocation
// arithmetic, fix planner).
// Errors: those of LogScanner::create and LogScanner::scan.
Result<Diagnosis> diagnose(ByteSource& source, const KnowledgeBase& kb, const DiagnoseOptions& options = {});

// Everything diagnose() builds from a knowledge base before it reads a line (the patterns and
// their Hyperscan database), built once: for servers, benchmarks and fuzzers that diagnose many
// logs. `kb` must outlive it. One per thread (the scanner keeps scratch space).
class LogDiagnoser {
 public:
  // Errors: those of LogScanner::create.
  static Result<std::unique_ptr<LogDiagnoser>> create(const KnowledgeBase& kb);
  // Another diagnoser on the same patterns and pattern database (no compilation), for another
  // thread. Errors: those of LogScanner::clone.
  Result<std::unique_ptr<LogDiagnoser>> clone() const;
  // Errors: those of LogScanner::scan.
  Result<Diagnosis> diagnose(ByteSource& source, const DiagnoseOptions& options = {});

 private:
  LogDiagnoser(const KnowledgeBase& kb, std::shared_ptr<const DiagnosePatterns> patterns, std::unique_ptr<LogScanner> scanner);
  const KnowledgeBase& m_kb;
  std::shared_ptr<const DiagnosePatterns> m_patterns;
  std::unique_ptr<LogScanner> m_scanner;
};

// The diagnosis as JSON (schema_version 1): outcome, primary {class, cause, record, phase, line,
// message, facts}, findings, run, fixes [{changes, command, why, confidence}], dead_ends, notes,
// warnings.
nlohmann::json to_json(const Diagnosis& diagnosis);
nlohmann::json to_json(const Finding& finding);

}  // namespace headroom
