// The whole pipeline for one log: scanner (normaliser + Hyperscan), diagnoser, the run's context,
// allocation arithmetic, fix planner.
#include <re2/re2.h>

#include "diagnose/allocation_match.h"
#include "headroom/diagnose.h"
#include "headroom/model.h"

namespace headroom {

namespace {

template <typename T>
void fill(std::optional<T>& out, const std::optional<T>& given) {
  if (!out && given) out = given;
}

// The model the log names, resolved without the network, when an out-of-memory error still has
// no phase (the only step that needs it).
std::optional<ModelSpec> model_for_allocation(const Diagnosis& d, const DiagnoseOptions& options) {
  if (!options.resolve_model || !d.primary || !d.primary->out_of_memory || d.primary->phase != "unknown") return std::nullopt;
  // A model the user named on the command line is resolved as given; one read from the log only
  // in the shape of a Hub id ("org/name"), never as a path, so a log cannot make a server that
  // diagnoses it open files of its choice.
  const std::string& ref = d.run.model;
  bool from_user = !options.context.model.empty() && ref == options.context.model;
  static const RE2 hub_id(R"([A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96})");
  if (ref.empty() || ref.size() > 200) return std::nullopt;
  if (!from_user && (!RE2::FullMatch(ref, hub_id) || ref.find("..") != std::string::npos)) return std::nullopt;
  auto model = load_model(ref);
  if (!model) return std::nullopt;
  return std::move(*model);
}

// A primary failure read from an error line cut short: say so, and trust its fixes less (the
// rest of the message, with its numbers, is missing).
void say_cut_title(Diagnosis& d) {
  if (!d.primary || !d.primary->title_cut) return;
  constexpr double k_cut_confidence = 0.8;
  for (auto& fix : d.fixes) fix.confidence *= k_cut_confidence;
  if (d.primary->phase_confidence) *d.primary->phase_confidence *= k_cut_confidence;
  d.notes.push_back("line " + std::to_string(d.primary->line) +
                    " is cut short: the class is read from the beginning of the message, which no other known message "
                    "shares; the numbers the rest would give are missing, so the fixes are less certain");
}

}  // namespace

void merge_context(LoggedRun& run, const RunContext& c) {
  if (run.model.empty()) run.model = c.model;
  if (run.gpu_name.empty()) run.gpu_name = c.gpu_name;
  fill(run.total_gib, c.gpu_total_gib);
  VllmFlags& f = run.flags;
  const VllmFlags& g = c.flags;
  fill(f.tensor_parallel_size, g.tensor_parallel_size);
  fill(f.pipeline_parallel_size, g.pipeline_parallel_size);
  fill(f.data_parallel_size, g.data_parallel_size);
  fill(f.max_model_len, g.max_model_len);
  fill(f.gpu_memory_utilization, g.gpu_memory_utilization);
  fill(f.max_num_seqs, g.max_num_seqs);
  fill(f.max_num_batched_tokens, g.max_num_batched_tokens);
  fill(f.kv_cache_dtype, g.kv_cache_dtype);
  fill(f.dtype, g.dtype);
  fill(f.quantization, g.quantization);
  fill(f.block_size, g.block_size);
  fill(f.cpu_offload_gb, g.cpu_offload_gb);
  f.enforce_eager = f.enforce_eager || g.enforce_eager;
}

LogDiagnoser::LogDiagnoser(const KnowledgeBase& kb, std::shared_ptr<const DiagnosePatterns> patterns,
                           std::unique_ptr<LogScanner> scanner)
    : m_kb(kb), m_patterns(std::move(patterns)), m_scanner(std::move(scanner)) {}

Result<std::unique_ptr<LogDiagnoser>> LogDiagnoser::create(const KnowledgeBase& kb) {
  auto patterns = Diagnoser::compile_patterns(kb);
  auto scanner = LogScanner::create(Diagnoser(kb, patterns).patterns());
  if (!scanner) return tl::unexpected(scanner.error());
  return std::unique_ptr<LogDiagnoser>(new LogDiagnoser(kb, std::move(patterns), std::move(*scanner)));
}

Result<std::unique_ptr<LogDiagnoser>> LogDiagnoser::clone() const {
  auto scanner = m_scanner->clone();
  if (!scanner) return tl::unexpected(scanner.error());
  return std::unique_ptr<LogDiagnoser>(new LogDiagnoser(m_kb, m_patterns, std::move(*scanner)));
}

Result<Diagnosis> LogDiagnoser::diagnose(ByteSource& source, const DiagnoseOptions& options) {
  Diagnoser diagnoser(m_kb, m_patterns);
  auto totals = m_scanner->scan(
      source, [&](std::int64_t n, std::string_view line, const std::vector<int>& ids) { diagnoser.on_line(n, line, ids); },
      options.scan);
  if (!totals) return tl::unexpected(totals.error());
  Diagnosis d = diagnoser.finish();
  d.source = source.name();
  d.lines = totals->lines;
  d.bytes = totals->bytes;
  d.warnings = m_scanner->warnings();
  d.warnings.insert(d.warnings.end(), totals->warnings.begin(), totals->warnings.end());
  merge_context(d.run, options.context);
  auto model = model_for_allocation(d, options);
  place_by_allocation(d, m_kb, model ? &*model : nullptr);
  plan_fixes(d, m_kb, options.fix);
  say_cut_title(d);
  return d;
}

Result<Diagnosis> diagnose(ByteSource& source, const KnowledgeBase& kb, const DiagnoseOptions& options) {
  auto diagnoser = LogDiagnoser::create(kb);
  if (!diagnoser) return tl::unexpected(diagnoser.error());
  return (*diagnoser)->diagnose(source, options);
}

}  // namespace headroom
