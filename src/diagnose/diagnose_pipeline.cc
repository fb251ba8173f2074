// The whole pipeline for one log: scanner (normaliser + Hyperscan), diagnoser, fix planner.
#include "headroom/diagnose.h"

namespace headroom {

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
  plan_fixes(d, m_kb, options.fix);
  return d;
}

Result<Diagnosis> diagnose(ByteSource& source, const KnowledgeBase& kb, const DiagnoseOptions& options) {
  auto diagnoser = LogDiagnoser::create(kb);
  if (!diagnoser) return tl::unexpected(diagnoser.error());
  return (*diagnoser)->diagnose(source, options);
}

}  // namespace headroom
