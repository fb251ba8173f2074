// The whole pipeline for one log: scanner (normaliser + Hyperscan), diagnoser, fix planner.
#include "headroom/diagnose.h"

namespace headroom {

Result<Diagnosis> diagnose(ByteSource& source, const KnowledgeBase& kb, LogScanner& scanner, const DiagnoseOptions& options) {
  Diagnoser diagnoser(kb);
  auto totals = scanner.scan(
      source, [&](std::int64_t n, std::string_view line, const std::vector<int>& ids) { diagnoser.on_line(n, line, ids); },
      options.scan);
  if (!totals) return tl::unexpected(totals.error());
  Diagnosis d = diagnoser.finish();
  d.source = source.name();
  d.lines = totals->lines;
  d.bytes = totals->bytes;
  d.warnings = scanner.warnings();
  d.warnings.insert(d.warnings.end(), totals->warnings.begin(), totals->warnings.end());
  plan_fixes(d, kb, options.fix);
  return d;
}

Result<Diagnosis> diagnose(ByteSource& source, const KnowledgeBase& kb, const DiagnoseOptions& options) {
  auto scanner = LogScanner::create(Diagnoser(kb).patterns());
  if (!scanner) return tl::unexpected(scanner.error());
  return diagnose(source, kb, **scanner, options);
}

}  // namespace headroom
