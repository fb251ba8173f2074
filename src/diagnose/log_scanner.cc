// Reads logs in fixed-size chunks (the sources are in log_source.cc), matches all patterns in one
// Hyperscan pass per chunk, and hands only the matching lines on. Memory stays bounded by the
// chunk size plus the line-length cap, whatever the size of the log.
#include <hs/hs.h>
#include <re2/re2.h>

#include <algorithm>
#include <cstring>

#include "diagnose/log_source.h"
#include "diagnose/pattern_cache.h"
#include "headroom/diagnose.h"
#include "headroom/log_normalizer.h"
#include "util/strings.h"

namespace headroom {

namespace {

// Where binary data starts in the first bytes of a log, if it does: NUL bytes or mostly control
// characters. Colour codes (ESC) and UTF-8 are text.
std::optional<std::size_t> binary_offset(const char* data, std::size_t n) {
  n = std::min<std::size_t>(n, 64 * 1024);
  std::size_t control = 0;
  std::optional<std::size_t> first;
  for (std::size_t i = 0; i < n; ++i) {
    auto c = static_cast<unsigned char>(data[i]);
    if (c == 0) return i;
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b && c != '\f' && c != '\v') {
      ++control;
      if (!first) first = i;
    }
  }
  if (n > 0 && control * 10 > n) return first;
  return std::nullopt;
}

}  // namespace

// The compiled patterns: immutable once built, shared by every clone of a scanner (Hyperscan
// databases and RE2 objects are safe to match from several threads at once).
struct CompiledPatterns {
  hs_database_t* db = nullptr;
  std::vector<int> hs_ids;  // Hyperscan id → pattern index
  std::vector<std::pair<int, std::unique_ptr<RE2>>> fallback;
  ~CompiledPatterns() {
    if (db) hs_free_database(db);
  }
};

struct LogScanner::Impl {
  std::shared_ptr<CompiledPatterns> compiled;
  hs_scratch_t* scratch = nullptr;  // one per scanner: Hyperscan scratch is single-threaded
  const hs_database_t* db() const { return compiled->db; }
  ~Impl() {
    if (scratch) hs_free_scratch(scratch);
  }
};

LogScanner::~LogScanner() = default;

Result<std::unique_ptr<LogScanner>> LogScanner::create(const std::vector<std::string>& patterns) {
  std::unique_ptr<LogScanner> scanner(new LogScanner());
  scanner->m_impl = std::make_unique<Impl>();
  scanner->m_impl->compiled = std::make_shared<CompiledPatterns>();
  CompiledPatterns& impl = *scanner->m_impl->compiled;
  std::vector<int> candidates(patterns.size());
  for (std::size_t i = 0; i < patterns.size(); ++i) candidates[i] = static_cast<int>(i);
  // A database compiled by an earlier run (only ever stored when every pattern compiled).
  if (hs_database_t* cached = patterns.empty() ? nullptr : pattern_cache::load(patterns, HS_FLAG_MULTILINE)) {
    impl.db = cached;
    impl.hs_ids = candidates;
    candidates.clear();
  }
  // Compile everything at once; a pattern Hyperscan rejects is moved to the RE2 fallback and the
  // rest compiled again.
  while (!candidates.empty()) {
    std::vector<const char*> exprs;
    std::vector<unsigned> flags, ids;
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      exprs.push_back(patterns[candidates[k]].c_str());
      flags.push_back(HS_FLAG_MULTILINE);
      ids.push_back(static_cast<unsigned>(k));
    }
    hs_compile_error_t* err = nullptr;
    hs_database_t* db = nullptr;
    if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK,
                         nullptr, &db, &err) == HS_SUCCESS) {
      impl.db = db;
      impl.hs_ids = candidates;
      if (impl.fallback.empty()) pattern_cache::store(patterns, HS_FLAG_MULTILINE, db);
      break;
    }
    int bad = err ? err->expression : -1;
    std::string reason = err && err->message ? err->message : "unknown error";
    if (err) hs_free_compile_error(err);
    if (bad < 0 || bad >= static_cast<int>(candidates.size()))
      return make_error(ErrorCode::internal, "Hyperscan could not compile the signatures: " + reason);
    int index = candidates[static_cast<std::size_t>(bad)];
    RE2::Options options;
    options.set_log_errors(false);
    auto re = std::make_unique<RE2>(patterns[static_cast<std::size_t>(index)], options);
    if (!re->ok())
      return make_error(ErrorCode::invalid_argument,
                        "expected a regular expression, got \"" + patterns[static_cast<std::size_t>(index)] + "\" (" +
                            re->error() + ")");
    scanner->m_warnings.push_back("pattern \"" + patterns[static_cast<std::size_t>(index)] +
                                  "\" is not supported by Hyperscan (" + reason +
                                  "); it is matched with RE2 on every line, which is slower");
    impl.fallback.emplace_back(index, std::move(re));
    candidates.erase(candidates.begin() + bad);
  }
  if (impl.db && hs_alloc_scratch(impl.db, &scanner->m_impl->scratch) != HS_SUCCESS)
    return make_error(ErrorCode::internal, "Hyperscan could not allocate its scratch space");
  return scanner;
}

Result<std::unique_ptr<LogScanner>> LogScanner::clone() const {
  std::unique_ptr<LogScanner> copy(new LogScanner());
  copy->m_impl = std::make_unique<Impl>();
  copy->m_impl->compiled = m_impl->compiled;
  copy->m_warnings = m_warnings;
  if (m_impl->scratch && hs_clone_scratch(m_impl->scratch, &copy->m_impl->scratch) != HS_SUCCESS)
    return make_error(ErrorCode::internal, "Hyperscan could not allocate its scratch space");
  return copy;
}

namespace {

struct Hit {
  std::size_t line_index;  // index of the normalised line
  std::int64_t line_number;
  int id;
};

int on_hs_match(unsigned id, unsigned long long, unsigned long long to, unsigned, void* ctx) {
  static_cast<std::vector<std::pair<unsigned long long, unsigned>>*>(ctx)->emplace_back(to, id);
  return 0;
}

}  // namespace

// One pass of the scanner over one source: read a chunk, cut it into lines, normalise them,
// match the normalised text, hand the matching lines on; a line longer than the cap is cut.
class LogScanner::Pass {
 public:
  Pass(const Impl& impl, ByteSource& source, const LineCallback& on_line, const ScanOptions& options)
      : m_impl(impl), m_source(&source), m_on_line(on_line), m_options(options),
        m_max_line(std::max<std::size_t>(options.max_line_bytes, 256)),
        m_normalizer([this](const NormalizedLine& line) { collect(line); }, m_max_line) {}

  Result<Totals> run() {
    size_buffer();
    while (true) {
      auto got = read_chunk();
      if (!got) return tl::unexpected(got.error());
      if (*got == 0) break;
      scan_chunk(*got);
      if (m_options.progress)
        m_options.progress(m_source->position().value_or(static_cast<std::uint64_t>(m_totals.bytes)), m_source->size());
    }
    finish();
    return m_totals;
  }

 private:
  // A small input needs no 5 MiB buffer (allocating and clearing it dominated short logs): size it
  // from what the source says, with room for gzip to expand; it grows if the data is larger.
  void size_buffer() {
    m_chunk = std::max<std::size_t>(m_options.chunk_bytes, 4096);
    std::size_t reserve = m_max_line;
    if (auto total = m_source->size()) {
      std::size_t need = std::max<std::size_t>(static_cast<std::size_t>(std::min<std::uint64_t>(*total, 1ull << 40)) * 8, 4096);
      m_chunk = std::min(m_chunk, need);
      reserve = std::min(reserve, need);
    }
    m_buf.resize(m_chunk + reserve);
  }

  // Reads the next chunk after the carried partial line; 0 at the end. A gzip stream cut short
  // ends the log with a warning. The first chunk decides the encoding.
  Result<std::size_t> read_chunk() {
    if (m_buf.size() < m_carry + m_chunk) m_buf.resize(m_carry + m_chunk);
    auto got = m_source->read(m_buf.data() + m_carry, m_chunk);
    if (!got) {
      if (got.error().code != ErrorCode::parse_error) return tl::unexpected(got.error());
      m_totals.warnings.push_back(got.error().to_string() + "; diagnosed what was read");
      return std::size_t{0};
    }
    if (m_first_read && *got > 0) {
      m_first_read = false;
      return check_encoding(*got);
    }
    return got;
  }

  // UTF-16 (what PowerShell's `>` writes) is decoded to UTF-8 from here on; binary data is refused
  // with the byte where it starts.
  Result<std::size_t> check_encoding(std::size_t n) {
    if (auto order = utf16_order(std::string_view(m_buf.data(), n))) {
      m_decoder = utf16_decoder(*m_source, std::string(m_buf.data(), n), *order);
      m_source = m_decoder.get();
      m_totals.warnings.push_back(std::string("the log is UTF-16 (") +
                                  (*order == Utf16Order::little_endian ? "little" : "big") +
                                  "-endian, as PowerShell's '>' writes it); it was read as UTF-8");
      auto got = m_source->read(m_buf.data(), m_chunk);
      if (!got || *got == 0) return got;
      n = *got;
    }
    if (auto off = binary_offset(m_buf.data(), n))
      return make_error(ErrorCode::parse_error,
                        "expected a text log (plain or gzip), found binary data at byte " +
                            util::with_commas(static_cast<long long>(*off)),
                        m_source->name());
    return n;
  }

  // Scans the whole lines of the carried bytes plus `n` new ones and carries the last partial line.
  void scan_chunk(std::size_t n) {
    m_totals.bytes += static_cast<std::int64_t>(n);
    char* data = m_buf.data();
    std::size_t end = m_carry + n;
    if (m_skipping) {
      const void* nl = std::memchr(data + m_carry, '\n', n);
      if (!nl) {
        m_carry = 0;
        return;
      }
      // The long line ends here; drop the rest of it (its number was already counted).
      std::size_t pos = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
      std::memmove(data, data + pos + 1, end - pos - 1);
      end = end - pos - 1;
      m_skipping = false;
    }
    std::size_t region = 0;
    for (std::size_t i = end; i > 0; --i)
      if (data[i - 1] == '\n') {
        region = i;
        break;
      }
    if (region > 0) scan_lines(data, region);
    m_carry = end - region;
    if (region > 0) std::memmove(data, data + region, m_carry);
    if (m_carry >= m_max_line) cut_long_line();
  }

  // Feeds the whole lines of [p, p+len) to the normaliser (the last one possibly without its
  // newline) and matches what it made.
  void scan_lines(const char* p, std::size_t len) {
    std::size_t s = 0;
    while (s < len) {
      const void* nl = std::memchr(p + s, '\n', len - s);
      std::size_t e = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - p) : len;
      m_normalizer.feed(++m_line_number, std::string_view(p + s, e - s));
      s = e + 1;
    }
    match_normalized();
  }

  // A line longer than the cap: its first bytes count as one line, the rest is skipped.
  void cut_long_line() {
    ++m_long_lines;
    if (m_long_lines <= 3)
      m_totals.warnings.push_back("line " + util::with_commas(m_line_number + 1) + " is longer than " +
                                  util::with_commas(static_cast<long long>(m_max_line)) +
                                  " bytes; only its first bytes were scanned");
    scan_lines(m_buf.data(), m_max_line);
    m_skipping = true;
    m_carry = 0;
  }

  // The normalised text of the lines read so far, one line per '\n', with the number of the input
  // line each one starts on. Matching runs on this text, so colour codes, prefixes and terminal
  // wraps cannot hide a signature, and the numbers still point into the original file.
  void collect(const NormalizedLine& line) {
    m_norm_lines.emplace_back(m_norm.size(), line.first_line);
    m_norm.append(line.text);
    m_norm.push_back('\n');
  }

  std::string_view norm_line(std::size_t k) const {
    std::size_t s = m_norm_lines[k].first;
    std::size_t e = (k + 1 < m_norm_lines.size() ? m_norm_lines[k + 1].first : m_norm.size()) - 1;
    return std::string_view(m_norm.data() + s, e - s);
  }

  // Matches the normalised lines collected so far and hands the matching ones on.
  void match_normalized() {
    if (m_norm.empty()) return;
    m_hits.clear();
    find_hyperscan_hits();
    find_fallback_hits();
    dispatch_hits();
    m_norm.clear();
    m_norm_lines.clear();
  }

  void find_hyperscan_hits() {
    if (!m_impl.db()) return;
    m_matches.clear();
    hs_scan(m_impl.db(), m_norm.data(), static_cast<unsigned>(m_norm.size()), 0, m_impl.scratch, on_hs_match, &m_matches);
    for (auto [to, hs_id] : m_matches) {
      std::size_t last = to == 0 ? 0 : static_cast<std::size_t>(to - 1);
      auto it = std::upper_bound(m_norm_lines.begin(), m_norm_lines.end(), last,
                                 [](std::size_t o, const auto& entry) { return o < entry.first; });
      std::size_t k = static_cast<std::size_t>(it - m_norm_lines.begin()) - 1;
      m_hits.push_back({k, m_norm_lines[k].second, m_impl.compiled->hs_ids[hs_id]});
    }
  }

  // Patterns Hyperscan rejected are matched with RE2 on every line.
  void find_fallback_hits() {
    if (m_impl.compiled->fallback.empty()) return;
    for (std::size_t k = 0; k < m_norm_lines.size(); ++k)
      for (auto& [index, re] : m_impl.compiled->fallback)
        if (RE2::PartialMatch(norm_line(k), *re)) m_hits.push_back({k, m_norm_lines[k].second, index});
  }

  // One callback per matching line, in line order, with the distinct pattern ids that matched it.
  void dispatch_hits() {
    std::stable_sort(m_hits.begin(), m_hits.end(), [](const Hit& a, const Hit& b) { return a.line_index < b.line_index; });
    for (std::size_t i = 0; i < m_hits.size();) {
      std::size_t j = i;
      m_ids.clear();
      while (j < m_hits.size() && m_hits[j].line_index == m_hits[i].line_index) {
        if (std::find(m_ids.begin(), m_ids.end(), m_hits[j].id) == m_ids.end()) m_ids.push_back(m_hits[j].id);
        ++j;
      }
      m_on_line(m_hits[i].line_number, norm_line(m_hits[i].line_index), m_ids);
      i = j;
    }
  }

  // The last line without a newline, the line the normaliser still holds, the count of cut lines.
  void finish() {
    if (m_carry > 0 && !m_skipping) scan_lines(m_buf.data(), m_carry);
    m_normalizer.finish();
    match_normalized();
    if (m_long_lines > 3)
      m_totals.warnings.push_back(util::with_commas(m_long_lines) + " lines were longer than " +
                                  util::with_commas(static_cast<long long>(m_max_line)) + " bytes and were cut");
    m_totals.lines = m_line_number;
  }

  const Impl& m_impl;
  ByteSource* m_source;
  std::unique_ptr<ByteSource> m_decoder;  // set when the log is UTF-16
  const LineCallback& m_on_line;
  const ScanOptions& m_options;
  const std::size_t m_max_line;
  std::size_t m_chunk = 0;
  std::vector<char> m_buf;
  std::size_t m_carry = 0;
  bool m_skipping = false;  // inside a line longer than the cap, after its first m_max_line bytes
  bool m_first_read = true;
  std::int64_t m_line_number = 0;  // lines completed so far
  int m_long_lines = 0;
  Totals m_totals;
  LogNormalizer m_normalizer;
  std::string m_norm;
  std::vector<std::pair<std::size_t, std::int64_t>> m_norm_lines;  // offset in m_norm, input line number
  std::vector<std::pair<unsigned long long, unsigned>> m_matches;
  std::vector<Hit> m_hits;
  std::vector<int> m_ids;
};

Result<LogScanner::Totals> LogScanner::scan(ByteSource& source, const LineCallback& on_line, const ScanOptions& options) {
  Pass pass(*m_impl, source, on_line, options);
  return pass.run();
}

}  // namespace headroom
