// Reads logs in fixed-size chunks (plain or gzip through zlib), matches all patterns in one
// Hyperscan pass per chunk, and hands only the matching lines on. Memory stays bounded by the
// chunk size plus the line-length cap, whatever the size of the log.
#include <hs/hs.h>
#include <re2/re2.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>

#include "headroom/diagnose.h"
#include "headroom/log_normalizer.h"
#include "util/strings.h"

namespace headroom {

namespace {

class GzSource : public ByteSource {
 public:
  GzSource(gzFile file, std::string name, std::optional<std::uint64_t> size, int fd)
      : m_file(file), m_name(std::move(name)), m_size(size), m_fd(fd) {}
  ~GzSource() override { gzclose(m_file); }

  Result<std::size_t> read(char* buffer, std::size_t capacity) override {
    if (m_done) return std::size_t{0};
    int n = gzread(m_file, buffer, static_cast<unsigned>(std::min<std::size_t>(capacity, 1u << 30)));
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(m_file, &code);
      m_done = true;
      if (code == Z_ERRNO) return make_error(ErrorCode::io_error, std::strerror(errno), m_name);
      return make_error(ErrorCode::parse_error,
                        std::string("corrupt or truncated gzip data (") + (msg ? msg : "zlib error") + ") after " +
                            util::with_commas(static_cast<long long>(m_total)) + " bytes of log",
                        m_name);
    }
    if (n == 0) {
      // zlib reports a stream cut short as end of file plus a Z_BUF_ERROR.
      int code = 0;
      gzerror(m_file, &code);
      m_done = true;
      if (code == Z_BUF_ERROR)
        return make_error(ErrorCode::parse_error,
                          "truncated gzip data (unexpected end of file) after " +
                              util::with_commas(static_cast<long long>(m_total)) + " bytes of log",
                          m_name);
    }
    m_total += static_cast<std::uint64_t>(n);
    return static_cast<std::size_t>(n);
  }
  std::string name() const override { return m_name; }
  std::optional<std::uint64_t> position() const override {
    z_off_t off = gzoffset(m_file);
    if (off < 0) return std::nullopt;
    return static_cast<std::uint64_t>(off);
  }
  std::optional<std::uint64_t> size() const override { return m_size; }

 private:
  gzFile m_file;
  std::string m_name;
  std::optional<std::uint64_t> m_size;
  int m_fd;
  std::uint64_t m_total = 0;
  bool m_done = false;
};

class MemorySource : public ByteSource {
 public:
  MemorySource(std::string bytes, std::string name) : m_bytes(std::move(bytes)), m_name(std::move(name)) {}
  Result<std::size_t> read(char* buffer, std::size_t capacity) override {
    std::size_t n = std::min(capacity, m_bytes.size() - m_pos);
    std::memcpy(buffer, m_bytes.data() + m_pos, n);
    m_pos += n;
    return n;
  }
  std::string name() const override { return m_name; }
  std::optional<std::uint64_t> position() const override { return m_pos; }
  std::optional<std::uint64_t> size() const override { return m_bytes.size(); }

 private:
  std::string m_bytes;
  std::string m_name;
  std::size_t m_pos = 0;
};

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

Result<std::unique_ptr<ByteSource>> open_log(const std::string& path) {
  int fd = 0;
  std::optional<std::uint64_t> size;
  if (path == "-") {
    fd = dup(0);
  } else {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0)
      return make_error(ErrorCode::not_found, "expected a log file, found nothing at this path", path);
    if (S_ISDIR(st.st_mode)) return make_error(ErrorCode::invalid_argument, "expected a log file, got a directory", path);
    if (S_ISREG(st.st_mode)) size = static_cast<std::uint64_t>(st.st_size);
    fd = ::open(path.c_str(), O_RDONLY);
  }
  if (fd < 0) return make_error(ErrorCode::io_error, std::strerror(errno), path);
  gzFile file = gzdopen(fd, "rb");
  if (!file) {
    ::close(fd);
    return make_error(ErrorCode::io_error, "cannot read", path);
  }
  gzbuffer(file, 1 << 20);
  return std::unique_ptr<ByteSource>(new GzSource(file, path == "-" ? "<stdin>" : path, size, fd));
}

std::unique_ptr<ByteSource> memory_source(std::string bytes, std::string name) {
  return std::make_unique<MemorySource>(std::move(bytes), std::move(name));
}

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
  std::size_t line_start;  // index of the normalised line
  std::int64_t line_number;
  int id;
};

struct MatchContext {
  std::vector<std::pair<unsigned long long, unsigned>> matches;
};

int on_hs_match(unsigned id, unsigned long long, unsigned long long to, unsigned, void* ctx) {
  static_cast<MatchContext*>(ctx)->matches.emplace_back(to, id);
  return 0;
}

}  // namespace

Result<LogScanner::Totals> LogScanner::scan(ByteSource& source, const LineCallback& on_line, const ScanOptions& options) {
  Totals totals;
  const std::size_t max_line = std::max<std::size_t>(options.max_line_bytes, 256);
  std::size_t chunk = std::max<std::size_t>(options.chunk_bytes, 4096);
  // A small input needs no 5 MiB buffer (allocating and clearing it dominated short logs): size it
  // from what the source says, with room for gzip to expand; it grows if the data is larger.
  std::size_t reserve = max_line;
  if (auto total = source.size()) {
    std::size_t need = std::max<std::size_t>(static_cast<std::size_t>(std::min<std::uint64_t>(*total, 1ull << 40)) * 8, 4096);
    chunk = std::min(chunk, need);
    reserve = std::min(reserve, need);
  }
  std::vector<char> buf(chunk + reserve);
  std::size_t carry = 0;
  bool skipping = false;  // inside a line longer than max_line, after its first max_line bytes
  bool first_read = true;
  std::int64_t line_number = 0;  // lines completed so far
  int long_lines = 0;
  MatchContext ctx;
  std::vector<Hit> hits;
  std::vector<int> ids;

  // The normalised text of the lines read so far, one line per '\n', with the number of the input
  // line each one starts on. Matching runs on this text, so colour codes, prefixes and terminal
  // wraps cannot hide a signature, and the numbers still point into the original file.
  std::string norm;
  std::vector<std::pair<std::size_t, std::int64_t>> norm_lines;  // offset in norm, input line number
  LogNormalizer normalizer(
      [&](const NormalizedLine& line) {
        norm_lines.emplace_back(norm.size(), line.first_line);
        norm.append(line.text);
        norm.push_back('\n');
      },
      max_line);

  // Matches the normalised lines collected so far and hands the matching ones on.
  auto match_normalized = [&]() {
    if (norm.empty()) return;
    const char* p = norm.data();
    const std::size_t len = norm.size();
    hits.clear();
    ctx.matches.clear();
    if (m_impl->db()) hs_scan(m_impl->db(), p, static_cast<unsigned>(len), 0, m_impl->scratch, on_hs_match, &ctx);
    auto line_of = [&](std::size_t offset) {
      auto it = std::upper_bound(norm_lines.begin(), norm_lines.end(), offset,
                                 [](std::size_t o, const auto& entry) { return o < entry.first; });
      return static_cast<std::size_t>(it - norm_lines.begin()) - 1;
    };
    for (auto [to, hs_id] : ctx.matches) {
      std::size_t last = to == 0 ? 0 : static_cast<std::size_t>(to - 1);
      std::size_t k = line_of(last);
      hits.push_back({k, norm_lines[k].second, m_impl->compiled->hs_ids[hs_id]});
    }
    if (!m_impl->compiled->fallback.empty())
      for (std::size_t k = 0; k < norm_lines.size(); ++k) {
        std::size_t s = norm_lines[k].first;
        std::size_t e = (k + 1 < norm_lines.size() ? norm_lines[k + 1].first : len) - 1;
        std::string_view line(p + s, e - s);
        for (auto& [index, re] : m_impl->compiled->fallback)
          if (RE2::PartialMatch(line, *re)) hits.push_back({k, norm_lines[k].second, index});
      }
    std::stable_sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.line_start < b.line_start; });
    for (std::size_t i = 0; i < hits.size();) {
      std::size_t j = i;
      ids.clear();
      while (j < hits.size() && hits[j].line_start == hits[i].line_start) {
        if (std::find(ids.begin(), ids.end(), hits[j].id) == ids.end()) ids.push_back(hits[j].id);
        ++j;
      }
      std::size_t k = hits[i].line_start;
      std::size_t s = norm_lines[k].first;
      std::size_t e = (k + 1 < norm_lines.size() ? norm_lines[k + 1].first : len) - 1;
      on_line(hits[i].line_number, std::string_view(p + s, e - s), ids);
      i = j;
    }
    norm.clear();
    norm_lines.clear();
  };

  // Feeds the whole lines of [p, p+len) to the normaliser, the last one possibly without its newline.
  auto scan_region = [&](const char* p, std::size_t len) {
    std::size_t s = 0;
    while (s < len) {
      const void* nl = std::memchr(p + s, '\n', len - s);
      std::size_t e = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - p) : len;
      normalizer.feed(++line_number, std::string_view(p + s, e - s));
      s = e + 1;
    }
    match_normalized();
  };

  auto truncated_line = [&](const char* p) {
    ++long_lines;
    if (long_lines <= 3)
      totals.warnings.push_back("line " + util::with_commas(line_number + 1) + " is longer than " +
                                util::with_commas(static_cast<long long>(max_line)) +
                                " bytes; only its first bytes were scanned");
    scan_region(p, max_line);  // counts as one line (no newline inside)
    skipping = true;
  };

  while (true) {
    if (buf.size() < carry + chunk) buf.resize(carry + chunk);
    auto got = source.read(buf.data() + carry, chunk);
    if (!got) {
      if (got.error().code != ErrorCode::parse_error) return tl::unexpected(got.error());
      totals.warnings.push_back(got.error().to_string() + "; diagnosed what was read");
      break;
    }
    std::size_t n = *got;
    if (first_read && n > 0) {
      first_read = false;
      if (auto off = binary_offset(buf.data(), n))
        return make_error(ErrorCode::parse_error,
                          "expected a text log (plain or gzip), found binary data at byte " +
                              util::with_commas(static_cast<long long>(*off)),
                          source.name());
    }
    if (n == 0) break;
    totals.bytes += static_cast<std::int64_t>(n);
    char* data = buf.data();
    std::size_t end = carry + n;
    std::size_t begin = 0;
    if (skipping) {
      const void* nl = std::memchr(data + carry, '\n', n);
      if (!nl) {
        carry = 0;
        continue;
      }
      // The long line ends here; drop the rest of it (its number was already counted).
      std::size_t pos = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
      std::memmove(data, data + pos + 1, end - pos - 1);
      end = end - pos - 1;
      skipping = false;
    }
    const char* last_nl = nullptr;
    for (std::size_t i = end; i > begin; --i)
      if (data[i - 1] == '\n') {
        last_nl = data + i - 1;
        break;
      }
    if (!last_nl) {
      carry = end;
      if (carry >= max_line) {
        truncated_line(data);
        carry = 0;
      }
    } else {
      std::size_t region = static_cast<std::size_t>(last_nl - data) + 1;
      scan_region(data, region);
      carry = end - region;
      std::memmove(data, data + region, carry);
      if (carry >= max_line) {
        truncated_line(data);
        carry = 0;
      }
    }
    if (options.progress) options.progress(source.position().value_or(static_cast<std::uint64_t>(totals.bytes)), source.size());
  }
  if (carry > 0 && !skipping) scan_region(buf.data(), carry);
  normalizer.finish();
  match_normalized();
  if (long_lines > 3)
    totals.warnings.push_back(util::with_commas(long_lines) + " lines were longer than " +
                              util::with_commas(static_cast<long long>(max_line)) + " bytes and were cut");
  totals.lines = line_number;
  return totals;
}

}  // namespace headroom
