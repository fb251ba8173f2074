// A parser of the Prometheus text exposition format 0.0.4, as written by prometheus_client (which
// vLLM uses). The grammar, from the format's specification:
//   line    = comment | sample | blank
//   comment = "#" [ ("HELP" | "TYPE") name rest ]
//   sample  = name [ "{" [ label { "," label } [ "," ] ] "}" ] value [ timestamp ]
//   label   = label_name "=" '"' escaped '"'     (escapes: \\ \" \n)
// Blanks and tabs separate tokens. Values are Go floats (NaN, +Inf, -Inf allowed); timestamps are
// int64 milliseconds.
#include <charconv>
#include <cmath>
#include <unordered_map>

#include "headroom/prometheus.h"

namespace headroom::prometheus {

std::string_view to_string(MetricType type) {
  switch (type) {
    case MetricType::counter: return "counter";
    case MetricType::gauge: return "gauge";
    case MetricType::histogram: return "histogram";
    case MetricType::summary: return "summary";
    case MetricType::untyped: return "untyped";
  }
  return "untyped";
}

const std::string* Sample::label(std::string_view name) const {
  for (const auto& l : labels)
    if (l.name == name) return &l.value;
  return nullptr;
}

const MetricFamily* Exposition::find(std::string_view name) const {
  for (const auto& f : families)
    if (f.name == name) return &f;
  return nullptr;
}

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_label_start(char c) { return c != ':' && is_name_start(c); }
bool is_label_char(char c) { return c != ':' && is_name_char(c); }

// How a character is shown in "got ..." messages.
std::string describe(std::string_view line, std::size_t pos) {
  if (pos >= line.size()) return "end of line";
  char c = line[pos];
  if (c == '\'') return "\"'\"";
  return std::string("'") + c + "'";
}

struct LineError {
  std::size_t column;  // 0-based byte offset in the line
  std::string message;
};

// Reads one line; `pos` is the cursor. Every reader returns false after filling `m_error`.
class LineReader {
 public:
  explicit LineReader(std::string_view line) : m_line(line) {}

  void skip_blanks() {
    while (m_pos < m_line.size() && is_blank(m_line[m_pos])) ++m_pos;
  }
  bool at_end() const { return m_pos >= m_line.size(); }
  char peek() const { return at_end() ? '\0' : m_line[m_pos]; }
  std::size_t pos() const { return m_pos; }
  void advance() { ++m_pos; }
  std::string_view rest() const { return m_line.substr(std::min(m_pos, m_line.size())); }

  bool fail(std::string message) { return fail_at(m_pos, std::move(message)); }
  bool fail_at(std::size_t column, std::string message) {
    m_error = LineError{column, std::move(message)};
    return false;
  }
  const LineError& error() const { return m_error; }

  bool read_metric_name(std::string& out, const char* what) {
    std::size_t start = m_pos;
    if (at_end() || !is_name_start(m_line[m_pos])) return fail("expected " + std::string(what) + ", got " + describe(m_line, m_pos));
    while (m_pos < m_line.size() && is_name_char(m_line[m_pos])) ++m_pos;
    out.assign(m_line.substr(start, m_pos - start));
    return true;
  }

  bool read_label_name(std::string& out) {
    std::size_t start = m_pos;
    if (at_end() || !is_label_start(m_line[m_pos])) return fail("expected a label name, got " + describe(m_line, m_pos));
    while (m_pos < m_line.size() && is_label_char(m_line[m_pos])) ++m_pos;
    out.assign(m_line.substr(start, m_pos - start));
    return true;
  }

  // Reads a double-quoted label value with the escapes \\ \" \n.
  bool read_quoted(std::string& out) {
    if (peek() != '"') return fail("expected '\"' to open the label value, got " + describe(m_line, m_pos));
    ++m_pos;
    out.clear();
    while (m_pos < m_line.size()) {
      char c = m_line[m_pos];
      if (c == '"') {
        ++m_pos;
        return true;
      }
      if (c == '\\') {
        if (m_pos + 1 >= m_line.size()) break;
        char e = m_line[m_pos + 1];
        if (e == '\\') out += '\\';
        else if (e == '"') out += '"';
        else if (e == 'n') out += '\n';
        else return fail("invalid escape sequence '\\" + std::string(1, e) + "' in label value (expected \\\\, \\\" or \\n)");
        m_pos += 2;
        continue;
      }
      out += c;
      ++m_pos;
    }
    return fail("label value is not closed with '\"' before the end of the line");
  }

  // Reads a run of non-blank characters.
  std::string_view read_token() {
    std::size_t start = m_pos;
    while (m_pos < m_line.size() && !is_blank(m_line[m_pos])) ++m_pos;
    return m_line.substr(start, m_pos - start);
  }

 private:
  std::string_view m_line;
  std::size_t m_pos = 0;
  LineError m_error;
};

std::optional<double> parse_value(std::string_view token) {
  if (token.empty()) return std::nullopt;
  bool negative = false;
  if (token[0] == '+' || token[0] == '-') {
    negative = token[0] == '-';
    token.remove_prefix(1);
    // from_chars rejects a second sign itself; an empty rest is not a number.
    if (token.empty() || token[0] == '+' || token[0] == '-') return std::nullopt;
  }
  double v = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return negative ? -v : v;
}

std::optional<std::int64_t> parse_timestamp(std::string_view token) {
  std::int64_t v = 0;
  if (!token.empty() && token[0] == '+') token.remove_prefix(1);
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (token.empty() || ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return v;
}

// Unescapes a HELP docstring (\\ and \n).
bool unescape_help(LineReader& r, std::string_view text, std::size_t offset, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '\\') out += '\\';
    else if (i + 1 < text.size() && text[i + 1] == 'n') out += '\n';
    else
      return r.fail_at(offset + i, "invalid escape sequence in HELP text (expected \\\\ or \\n)");
    ++i;
  }
  return true;
}

struct FamilyState {
  bool has_type = false;
  bool has_help = false;
  bool has_samples = false;
};

class Parser {
 public:
  Parser(std::string origin) : m_origin(std::move(origin)) {}

  // Returns false with r.error() set when the line is malformed.
  bool parse_line(std::string_view line) {
    LineReader r(line);
    r.skip_blanks();
    if (r.at_end()) return true;
    if (r.peek() == '#') return parse_comment(r, line);
    return parse_sample(r, line);
  }

  Exposition take() { return std::move(m_out); }
  Exposition& out() { return m_out; }
  const LineError& last_error() const { return m_last_error; }

 private:
  std::size_t family_index(const std::string& name) {
    auto it = m_index.find(name);
    if (it != m_index.end()) return it->second;
    m_out.families.push_back(MetricFamily{name, MetricType::untyped, {}, {}});
    m_state.emplace_back();
    m_index.emplace(name, m_out.families.size() - 1);
    return m_out.families.size() - 1;
  }

  // The family a sample belongs to: its own name, or the histogram/summary/counter it is part of.
  std::size_t family_for_sample(const std::string& name) {
    if (auto it = m_index.find(name); it != m_index.end()) return it->second;
    auto base_of = [&](std::string_view suffix) -> const std::size_t* {
      if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) return nullptr;
      auto it = m_index.find(name.substr(0, name.size() - suffix.size()));
      return it == m_index.end() ? nullptr : &it->second;
    };
    for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
      if (const std::size_t* i = base_of(suffix)) {
        MetricType t = m_out.families[*i].type;
        if (t == MetricType::histogram || (t == MetricType::summary && suffix != "_bucket")) return *i;
      }
    }
    if (const std::size_t* i = base_of("_total"); i && m_out.families[*i].type == MetricType::counter) return *i;
    return family_index(name);
  }

  bool parse_comment(LineReader& r, std::string_view line) {
    r.advance();  // '#'
    r.skip_blanks();
    std::string_view keyword = r.read_token();
    if (keyword != "HELP" && keyword != "TYPE") return true;  // an ordinary comment
    r.skip_blanks();
    std::string name;
    if (!r.read_metric_name(name, "a metric name")) {
      m_last_error = r.error();
      return false;
    }
    std::size_t i = family_index(name);
    FamilyState& state = m_state[i];
    if (keyword == "HELP") {
      if (!r.at_end() && !is_blank(r.peek())) return fail(r, r.pos(), "expected a blank after the metric name, got " + describe(line, r.pos()));
      if (!r.at_end()) r.advance();  // exactly one separator; the docstring keeps the rest
      if (state.has_help) return fail(r, 0, "second HELP line for metric \"" + name + "\"");
      std::string help;
      if (!unescape_help(r, r.rest(), r.pos(), help)) {
        m_last_error = r.error();
        return false;
      }
      m_out.families[i].help = std::move(help);
      state.has_help = true;
      return true;
    }
    r.skip_blanks();
    std::size_t type_col = r.pos();
    std::string_view type = r.read_token();
    r.skip_blanks();
    if (!r.at_end()) return fail(r, r.pos(), "unexpected text after the metric type: " + describe(line, r.pos()));
    MetricType t;
    if (type == "counter") t = MetricType::counter;
    else if (type == "gauge") t = MetricType::gauge;
    else if (type == "histogram") t = MetricType::histogram;
    else if (type == "summary") t = MetricType::summary;
    else if (type == "untyped") t = MetricType::untyped;
    else
      return fail(r, type_col,
                  "expected counter, gauge, histogram, summary or untyped, got '" + std::string(type) + "'");
    if (state.has_type) return fail(r, 0, "second TYPE line for metric \"" + name + "\"");
    if (state.has_samples) return fail(r, 0, "TYPE line for metric \"" + name + "\" after its samples");
    m_out.families[i].type = t;
    state.has_type = true;
    return true;
  }

  bool parse_sample(LineReader& r, std::string_view line) {
    Sample s;
    if (!r.read_metric_name(s.name, "a metric name")) {
      m_last_error = r.error();
      return false;
    }
    std::size_t name_end = r.pos();
    r.skip_blanks();
    bool blank_after_name = r.pos() > name_end;
    if (r.peek() == '{') {
      r.advance();
      r.skip_blanks();
      while (r.peek() != '}') {
        Label l;
        std::size_t label_col = r.pos();
        if (!r.read_label_name(l.name)) {
          m_last_error = r.error();
          return false;
        }
        r.skip_blanks();
        if (r.peek() != '=')
          return fail(r, r.pos(), "expected '=' after label name \"" + l.name + "\", got " + describe(line, r.pos()));
        r.advance();
        r.skip_blanks();
        if (!r.read_quoted(l.value)) {
          m_last_error = r.error();
          return false;
        }
        if (s.label(l.name) != nullptr) return fail(r, label_col, "label \"" + l.name + "\" appears twice");
        s.labels.push_back(std::move(l));
        r.skip_blanks();
        if (r.peek() == ',') {
          r.advance();
          r.skip_blanks();
        } else if (r.peek() != '}') {
          return fail(r, r.pos(), "expected ',' or '}' after a label value, got " + describe(line, r.pos()));
        }
      }
      r.advance();  // '}'
      blank_after_name = false;
    }
    if (!blank_after_name && !r.at_end() && !is_blank(r.peek()))
      return fail(r, r.pos(), "expected a blank before the value, got " + describe(line, r.pos()));
    r.skip_blanks();
    std::size_t value_col = r.pos();
    std::string_view value = r.read_token();
    if (value.empty()) return fail(r, value_col, "expected a value after \"" + s.name + "\", got end of line");
    auto v = parse_value(value);
    if (!v) return fail(r, value_col, "expected a number, NaN, +Inf or -Inf as the value, got '" + std::string(value) + "'");
    s.value = *v;
    r.skip_blanks();
    if (!r.at_end()) {
      std::size_t ts_col = r.pos();
      std::string_view ts = r.read_token();
      auto t = parse_timestamp(ts);
      if (!t) return fail(r, ts_col, "expected an integer timestamp in milliseconds, got '" + std::string(ts) + "'");
      s.timestamp_ms = *t;
      r.skip_blanks();
      if (!r.at_end()) return fail(r, r.pos(), "unexpected text after the timestamp: " + describe(line, r.pos()));
    }
    std::size_t i = family_for_sample(s.name);
    const MetricFamily& family = m_out.families[i];
    if (family.type == MetricType::histogram && s.name == family.name + "_bucket") {
      const std::string* le = s.label("le");
      if (le == nullptr) return fail(r, 0, "histogram bucket \"" + s.name + "\" has no \"le\" label");
      if (!parse_value(*le))
        return fail(r, 0, "histogram bucket \"" + s.name + "\" has le=\"" + *le + "\", expected a number or +Inf");
    }
    m_state[i].has_samples = true;
    m_out.families[i].samples.push_back(std::move(s));
    return true;
  }

  bool fail(LineReader& r, std::size_t column, std::string message) {
    r.fail_at(column, std::move(message));
    m_last_error = r.error();
    return false;
  }

  std::string m_origin;
  Exposition m_out;
  std::vector<FamilyState> m_state;
  std::unordered_map<std::string, std::size_t> m_index;
  LineError m_last_error;
};

}  // namespace

Result<Exposition> parse_text(std::string_view text, const std::string& origin, MalformedLines mode) {
  Parser parser(origin);
  int line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // tolerate CRLF pages
    ++line_number;
    start = end + 1;
    if (parser.parse_line(line)) continue;
    const LineError& e = parser.last_error();
    Error error{ErrorCode::parse_error, e.message,
                origin + ":" + std::to_string(line_number) + ":" + std::to_string(e.column + 1)};
    if (mode == MalformedLines::reject) return tl::unexpected<Error>(std::move(error));
    Exposition& out = parser.out();
    ++out.skipped_lines;
    if (out.problems.size() < Exposition::k_max_reported_problems) out.problems.push_back(std::move(error));
  }
  return parser.take();
}

}  // namespace headroom::prometheus
