// Log normalisation, line by line with one line of look-ahead. The order matters: colour codes go
// first (a prefix may be coloured, `#033[2m(raylet)#033[0m`), then the prefixes, then the decision
// whether the line continues the one before. A paragraph (a line and its continuations) is held
// until a line that starts a new record arrives; its join mode is decided when it is complete,
// because a terminal's width only shows once two wrapped lines of the same width are seen.
#include "headroom/log_normalizer.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include <nlohmann/json.hpp>

namespace headroom {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_word(char c) { return is_alpha(c) || is_digit(c) || c == '_'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Terminal widths common enough that one wrapped line of exactly this width is taken as a hard
// wrap (the classic 80 columns and the usual wider window sizes).
constexpr std::array<std::size_t, 6> k_common_widths = {80, 100, 120, 132, 160, 200};

// Textual spellings of ESC that copy-paste, syslog (rsyslog writes control characters as #ooo)
// and JSON/Python string dumps leave in logs.
constexpr std::array<std::string_view, 7> k_esc_texts = {"#033", "\\x1b", "\\x1B", "\\033", "\\u001b", "\\e", "^["};

// Length of the escape sequence starting at s[i] (0: none). `csi_at` is where '[' must follow.
std::size_t csi_length(std::string_view s, std::size_t csi_at, bool sgr_only) {
  if (csi_at >= s.size() || s[csi_at] != '[') return 0;
  std::size_t j = csi_at + 1;
  std::size_t params = 0;
  while (j < s.size() && (is_digit(s[j]) || s[j] == ';' || s[j] == '?') && params < 32) {
    ++j;
    ++params;
  }
  if (j >= s.size()) return 0;
  char final_byte = s[j];
  if (sgr_only) return (final_byte == 'm' && params > 0) ? j + 1 : 0;
  if (final_byte >= '@' && final_byte <= '~') return j + 1;
  return 0;
}

// A `(...)` token that is a process tag: vLLM's `(EngineCore_DP0 pid=43)`, `(VllmWorker rank=1
// pid=97)`, Ray's `(pid=12, ip=10.0.0.1)`, `(raylet)`, `(RayWorkerWrapper pid=5, ip=...)`.
bool is_process_tag(std::string_view inner) {
  if (inner.empty() || inner.size() > 120) return false;
  if (inner.find("pid=") != std::string_view::npos || inner.find("rank=") != std::string_view::npos ||
      inner.find("ip=") != std::string_view::npos)
    return true;
  static constexpr std::array<std::string_view, 7> k_names = {"raylet", "gcs_server", "dashboard", "monitor",
                                                              "Process", "autoscaler", "dashboard_agent"};
  for (auto name : k_names)
    if (inner == name || (starts_with(inner, name) && inner.size() > name.size() && (inner[name.size()] == ',' || inner[name.size()] == ' ')))
      return true;
  return false;
}

// Date and time at s[i]: "2026-05-08 11:50:14.752", "2024-01-01T00:00:00.123456789Z",
// "2026-11-23T23:20:16+0000", "11:50:14,563". Returns its length, 0 when none.
std::size_t timestamp_length(std::string_view s, std::size_t i) {
  auto digits = [&](std::size_t at, std::size_t n) {
    if (at + n > s.size()) return false;
    for (std::size_t k = 0; k < n; ++k)
      if (!is_digit(s[at + k])) return false;
    return true;
  };
  std::size_t j = i;
  if (digits(j, 4) && j + 10 <= s.size() && s[j + 4] == '-' && digits(j + 5, 2) && s[j + 7] == '-' && digits(j + 8, 2)) {
    j += 10;
    if (j < s.size() && (s[j] == 'T' || s[j] == ' ') && digits(j + 1, 2)) ++j;
    else return j - i;  // a date alone
  }
  if (!(digits(j, 2) && j + 8 <= s.size() && s[j + 2] == ':' && digits(j + 3, 2) && s[j + 5] == ':' && digits(j + 6, 2)))
    return j > i ? 0 : 0;
  j += 8;
  if (j < s.size() && (s[j] == '.' || s[j] == ',') && j + 1 < s.size() && is_digit(s[j + 1])) {
    ++j;
    while (j < s.size() && is_digit(s[j])) ++j;
  }
  if (j < s.size() && s[j] == 'Z') ++j;
  else if (j < s.size() && (s[j] == '+' || s[j] == '-') && digits(j + 1, 2)) {
    j += 3;
    if (j < s.size() && s[j] == ':') ++j;
    if (digits(j, 2)) j += 2;
  }
  return j - i;
}

// systemd journal "Nov 23 23:20:16 host unit[123]: " (short format) at s[i]; 0 when none.
std::size_t journal_length(std::string_view s, std::size_t i) {
  std::size_t j = i;
  if (j + 16 > s.size() || !(s[j] >= 'A' && s[j] <= 'Z') || !(s[j + 1] >= 'a' && s[j + 1] <= 'z') ||
      !(s[j + 2] >= 'a' && s[j + 2] <= 'z') || s[j + 3] != ' ')
    return 0;
  j += 4;
  if (!((s[j] == ' ' || is_digit(s[j])) && is_digit(s[j + 1]) && s[j + 2] == ' ')) return 0;
  j += 3;
  std::size_t t = timestamp_length(s, j);
  if (t < 8) return 0;
  j += t;
  if (j >= s.size() || s[j] != ' ') return 0;
  ++j;
  std::size_t host_end = s.find(' ', j);
  if (host_end == std::string_view::npos || host_end == j) return 0;
  j = host_end + 1;
  std::size_t k = j;
  while (k < s.size() && s[k] != ':' && s[k] != ' ' && s[k] != '[') ++k;
  if (k == j) return 0;
  if (k < s.size() && s[k] == '[') {
    std::size_t close = s.find(']', k);
    if (close == std::string_view::npos) return 0;
    k = close + 1;
  }
  if (k + 1 >= s.size() + 1 || k >= s.size() || s[k] != ':') return 0;
  return k + 1 - i;
}

// "name  | " of docker compose (the name padded to the longest service name); 0 when none.
std::size_t compose_length(std::string_view s, std::size_t i) {
  std::size_t j = i;
  if (j >= s.size() || !(is_alpha(s[j]) || is_digit(s[j]))) return 0;
  while (j < s.size() && (is_word(s[j]) || s[j] == '-' || s[j] == '.') && j - i < 80) ++j;
  std::size_t spaces = 0;
  while (j < s.size() && s[j] == ' ') ++j, ++spaces;
  if (spaces == 0 || j >= s.size() || s[j] != '|') return 0;
  if (j + 1 < s.size() && s[j + 1] != ' ') return 0;
  return j + 1 - i;
}

// vLLM's own header: "ERROR 03-20 23:26:06 [core.py:340] " (V1) or "INFO 02-03 03:43:49 model_runner.py:629] " (V0).
std::size_t vllm_header_length(std::string_view s) {
  static constexpr std::array<std::string_view, 6> k_levels = {"DEBUG ", "INFO ", "WARNING ", "WARN ", "ERROR ", "CRITICAL "};
  std::size_t j = 0;
  for (auto level : k_levels)
    if (starts_with(s, level)) j = level.size();
  if (j == 0) return 0;
  if (!(j + 15 <= s.size() && is_digit(s[j]) && is_digit(s[j + 1]) && s[j + 2] == '-' && is_digit(s[j + 3]) &&
        is_digit(s[j + 4]) && s[j + 5] == ' '))
    return 0;
  j += 6;
  std::size_t t = timestamp_length(s, j);
  if (t < 8) return 0;
  j += t;
  if (j >= s.size() || s[j] != ' ') return 0;
  ++j;
  std::size_t close = s.find(']', j);
  if (close == std::string_view::npos || close - j > 120) return 0;
  for (std::size_t k = j; k < close; ++k)
    if (s[k] == ' ') return 0;
  j = close + 1;
  if (j < s.size() && s[j] == ' ') ++j;
  return j;
}

// Does `body` (after prefixes and vLLM's header) start a new record rather than continue the
// line before? Python traceback lines, exception lines, log levels, indented code, structured data.
bool starts_record(std::string_view body) {
  if (body.empty()) return true;
  if (body.size() >= 2 && is_space(body[0]) && is_space(body[1])) return true;  // frames, code, carets
  if (body[0] == '{' || starts_with(body, "...")) return true;
  static constexpr std::array<std::string_view, 12> k_starts = {
      "Traceback (", "File \"", "During handling", "The above exception", "DEBUG", "INFO", "WARNING", "WARN ",
      "ERROR", "CRITICAL", "FATAL", "Error"};
  for (auto p : k_starts)
    if (starts_with(body, p)) return true;
  // An exception name ("ValueError", "torch.OutOfMemoryError", "vllm...EngineDeadError:").
  std::size_t j = 0;
  while (j < body.size() && (is_word(body[j]) || body[j] == '.')) ++j;
  std::string_view token = body.substr(0, j);
  static constexpr std::array<std::string_view, 6> k_suffixes = {"Error", "Exception", "Exit", "Interrupt", "Warning", "Failure"};
  for (auto suffix : k_suffixes)
    if (token.size() >= suffix.size() && token.substr(token.size() - suffix.size()) == suffix) return true;
  return false;
}

// Display width of a line: UTF-8 code points (continuation bytes do not count).
std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

// Where a vLLM process tag starts inside `s` after position `from` (a log viewer that dropped the
// newlines leaves "...cached_file(APIServer pid=3041)     file = ..."); npos when none.
std::size_t inner_tag_position(std::string_view s, std::size_t from) {
  std::size_t at = from;
  while ((at = s.find(" pid=", at)) != std::string_view::npos) {
    std::size_t low = std::max(from, at > 60 ? at - 60 : std::size_t{0});
    std::size_t open = low < at ? s.substr(low, at - low).rfind('(') : std::string_view::npos;
    if (open == std::string_view::npos) {
      at += 5;
      continue;
    }
    open += low;
    std::size_t close = s.substr(at, 80).find(')');
    if (close != std::string_view::npos) close += at;
    bool name_ok = open + 1 < s.size() && (s[open + 1] >= 'A' && s[open + 1] <= 'Z');
    for (std::size_t k = open + 1; name_ok && k < at; ++k)
      if (!(is_word(s[k]) || s[k] == ' ' || s[k] == '=')) name_ok = false;
    if (close != std::string_view::npos && name_ok && open > from && is_process_tag(s.substr(open + 1, close - open - 1)))
      return open;
    at += 5;
  }
  return std::string_view::npos;
}

// Where text glued after a tqdm progress bar starts ("... 116/1155 [7:54:43<67:30:48, 233.93s/it]INFO ...":
// tqdm's statistics end in "it/s]" or "s/it]"); npos when no bar ends inside `s` with text after it.
std::size_t after_progress_bar(std::string_view s) {
  for (std::string_view end : {std::string_view("it/s]"), std::string_view("s/it]")}) {
    std::size_t at = s.find(end);
    if (at == std::string_view::npos) continue;
    std::size_t open = s.substr(0, at).rfind('[');
    if (open == std::string_view::npos || s.substr(open, at - open).find('<') == std::string_view::npos) continue;
    std::size_t next = at + end.size();
    while (next < s.size() && s[next] == ' ') ++next;
    if (next < s.size()) return next;
  }
  return std::string_view::npos;
}

// The text a log collector's JSON record carries, when `line` is such a record; `complete` is false
// for a Docker "log" piece that does not end its line. nullopt for any other line (vLLM prints
// Python dicts, not JSON records with these keys, so its own lines are left alone).
std::optional<std::string> structured_message(std::string_view line, bool& complete) {
  complete = true;
  std::size_t begin = line.find_first_not_of(" \t");
  std::size_t end = line.find_last_not_of(" \t");
  if (begin == std::string_view::npos || line[begin] != '{' || line[end] != '}') return std::nullopt;
  auto doc = nlohmann::json::parse(line.substr(begin, end + 1 - begin), nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  auto text_of = [](const nlohmann::json& object, const char* key) -> const std::string* {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
  };
  const std::string* text = nullptr;
  bool docker = false;
  if ((text = text_of(doc, "log"))) docker = true;
  for (const char* key : {"MESSAGE", "textPayload", "line", "message", "msg"})
    if (!text) text = text_of(doc, key);
  if (!text) {
    auto payload = doc.find("jsonPayload");
    if (payload != doc.end() && payload->is_object()) text = text_of(*payload, "message");
  }
  if (!text) return std::nullopt;
  std::string out = *text;
  if (docker) complete = !out.empty() && out.back() == '\n';
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

std::string strip_ansi(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  std::size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    std::size_t skip = 0;
    if (c == '\x1b') {
      if (i + 1 < line.size() && line[i + 1] == ']') {  // OSC: up to BEL or ESC backslash
        std::size_t end = line.find_first_of("\x07\x1b", i + 2);
        skip = end == std::string_view::npos ? line.size() - i : end - i + (line[end] == '\x1b' ? 2 : 1);
      } else {
        std::size_t n = csi_length(line, i + 1, false);
        skip = n ? n - i : std::min<std::size_t>(2, line.size() - i);
      }
    } else if (c == '#' || c == '\\' || c == '^') {
      for (auto text : k_esc_texts)
        if (line.substr(i, text.size()) == text) {
          std::size_t n = csi_length(line, i + text.size(), false);
          if (n) skip = n - i;
          break;
        }
    } else if (c == '[') {
      std::size_t n = csi_length(line, i, true);  // "[1;36m" whose ESC was lost in a paste
      if (n) skip = n - i;
    }
    if (skip) {
      i += skip;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

// A collector's label shown as "[key: value]" (Cloud Logging's "[resource.labels.containerName: vllm]").
bool is_label(std::string_view inner) {
  std::size_t colon = inner.find(": ");
  if (colon == std::string_view::npos || colon == 0) return false;
  for (std::size_t k = 0; k < colon; ++k)
    if (!(is_word(inner[k]) || inner[k] == '.' || inner[k] == '-' || inner[k] == '/')) return false;
  return true;
}

// Decoration in front of a line at s[i]: a gutter ("| ", "│ ") that pretty printers and
// collectors draw, a quote marker ("> ") of a pasted reply, Buildkite's timestamp
// ("_bk;t=1712345678901", its ESC and BEL already gone or still there). 0 when none.
std::size_t decoration_length(std::string_view s, std::size_t i) {
  auto spaced = [&](std::size_t len) { return i + len == s.size() || s[i + len] == ' ' || s[i + len] == '\t'; };
  if ((s[i] == '|' || s[i] == '>') && spaced(1)) return 1;
  if (starts_with(s.substr(i), "\xe2\x94\x82") && spaced(3)) return 3;  // U+2502
  std::size_t j = i;
  if (j < s.size() && s[j] == '\x1b') ++j;
  if (!starts_with(s.substr(j), "_bk;t=")) return 0;
  j += 6;
  std::size_t digits = j;
  while (j < s.size() && is_digit(s[j])) ++j;
  if (j == digits) return 0;
  if (j < s.size() && s[j] == '\x07') ++j;
  return j - i;
}

// Collector prefixes that start with a word at s[i]: Cloud Logging's console export
// ("INFO 2025-11-19T20:16:36.096625454Z "), a container runtime's log file (CRI: "stdout F " after
// the timestamp). 0 when none.
std::size_t collector_length(std::string_view s, std::size_t i) {
  static constexpr std::string_view k_severities[] = {"DEFAULT", "DEBUG", "INFO",  "NOTICE",   "WARNING",
                                                      "ERROR",   "CRITICAL", "ALERT", "EMERGENCY"};
  for (auto word : k_severities) {
    if (!starts_with(s.substr(i), word) || i + word.size() >= s.size() || s[i + word.size()] != ' ') continue;
    std::size_t t = timestamp_length(s, i + word.size() + 1);
    if (t >= 19) return word.size() + 1 + t;  // a full date and time; vLLM's own "INFO 05-21 13:04:20" has no year
  }
  if (i > 0 && (starts_with(s.substr(i), "stdout ") || starts_with(s.substr(i), "stderr ")) && i + 8 < s.size() &&
      (s[i + 7] == 'F' || s[i + 7] == 'P') && s[i + 8] == ' ')
    return 8;
  return 0;
}

std::size_t log_prefix_length(std::string_view s, std::string* tags) {
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t n = 0;
    bool tag = true;
    if (is_digit(s[i])) {
      n = timestamp_length(s, i);
      tag = false;
      if (n && i + n < s.size() && s[i + n] != ' ' && s[i + n] != '\t' && s[i + n] != '|') n = 0;
      // "2026-11-23T23:20:16+0000 host unit[123]: " (journalctl -o short-iso): host and unit follow.
    } else if (s[i] == '[') {
      std::size_t close = s.find(']', i);
      if (close != std::string_view::npos && close - i <= 100) {
        std::string_view inner = s.substr(i + 1, close - i - 1);
        bool spaces = inner.find(' ') != std::string_view::npos;
        bool source_file = inner.find(".py:") != std::string_view::npos;  // vLLM's "[core.py:340]" is not a prefix
        if (!inner.empty() && !source_file && (!spaces || timestamp_length(inner, 0) >= 8 || is_label(inner))) {
          n = close + 1 - i;
          if (i + n < s.size() && s[i + n] == ':') ++n;
          if (timestamp_length(inner, 0) >= 8) tag = false;
        }
      }
    } else if (s[i] == '(') {
      std::size_t close = s.find(')', i);
      if (close != std::string_view::npos && is_process_tag(s.substr(i + 1, close - i - 1))) n = close + 1 - i;
    } else if ((n = decoration_length(s, i)) != 0) {
      tag = false;
    } else if (is_alpha(s[i])) {
      n = collector_length(s, i);
      if (n) tag = false;
      if (!n) n = journal_length(s, i);
      if (!n) n = compose_length(s, i);
      if (!n && i > 0) {
        // After an ISO timestamp: "host unit[123]: " of journalctl -o short-iso.
        std::size_t sp = s.find(' ', i);
        if (sp != std::string_view::npos && sp + 1 < s.size()) {
          std::size_t k = sp + 1;
          while (k < s.size() && (is_word(s[k]) || s[k] == '-' || s[k] == '.' || s[k] == '@')) ++k;
          if (k < s.size() && s[k] == '[') {
            std::size_t close = s.find(']', k);
            if (close != std::string_view::npos && close + 1 < s.size() && s[close + 1] == ':') {
              bool pid = close > k + 1;
              for (std::size_t d = k + 1; d < close; ++d) pid = pid && is_digit(s[d]);
              if (pid) n = close + 2 - i;
            }
          }
        }
      }
    }
    if (n == 0) break;
    if (n + i > s.size()) n = s.size() - i;
    if (tags && tag) tags->append(s.substr(i, n));
    i += n;
    if (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;  // one separator; indentation after it is content
  }
  return i;
}

LogNormalizer::LogNormalizer(Emit emit, std::size_t max_line_bytes)
    : m_emit(std::move(emit)), m_max_line_bytes(std::max<std::size_t>(max_line_bytes, 256)) {}

void LogNormalizer::feed(std::int64_t line_number, std::string_view raw) {
  if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  // A carriage return inside a line is a redraw (tqdm's progress bars): each piece is a line of
  // its own, so a bar cannot hide the message written after it.
  if (auto cr = raw.find('\r'); cr != std::string_view::npos) {
    while (true) {
      cr = raw.find('\r');
      std::string_view piece = raw.substr(0, cr);
      if (!piece.empty()) feed_record(line_number, piece);
      if (cr == std::string_view::npos) return;
      raw.remove_prefix(cr + 1);
    }
  }
  feed_record(line_number, raw);
}

void LogNormalizer::feed_record(std::int64_t line_number, std::string_view raw) {
  if (raw.empty() || (raw.front() != '{' && raw.front() != ' ' && raw.front() != '\t') || raw.find('{') == std::string_view::npos) {
    if (!m_partial.empty()) finish_partial();
    feed_line(line_number, raw);
    return;
  }
  bool complete = true;
  auto message = structured_message(raw, complete);
  if (!message) {
    if (!m_partial.empty()) finish_partial();
    feed_line(line_number, raw);
    return;
  }
  if (m_partial.empty()) m_partial_line = line_number;
  m_partial.append(message->substr(0, m_max_line_bytes - std::min(m_max_line_bytes, m_partial.size())));
  if (complete || m_partial.size() >= m_max_line_bytes) finish_partial();
}

void LogNormalizer::finish_partial() {
  // A record's text may hold several lines (a traceback logged as one record): each is a line.
  std::string text = std::move(m_partial);
  m_partial.clear();
  std::string_view rest = text;
  while (true) {
    std::size_t nl = rest.find('\n');
    feed_line(m_partial_line, rest.substr(0, nl));
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
}

void LogNormalizer::feed_line(std::int64_t line_number, std::string_view raw) {
  if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  // Colour codes first; most lines have none, and they are passed on without a copy.
  std::string_view line = raw;
  // Most lines carry '[' (vLLM's "[core.py:77]") but no colour code: test each candidate exactly
  // rather than copying every line through strip_ansi.
  bool maybe_escaped = false;
  for (std::size_t i = 0; i < raw.size() && !maybe_escaped; ++i) {
    char c = raw[i];
    if (c == '\x1b') maybe_escaped = true;
    else if (c == '[') maybe_escaped = csi_length(raw, i, true) != 0;
    else if (c == '#' || c == '\\' || c == '^')
      for (auto text : k_esc_texts)
        if (raw.substr(i, text.size()) == text) maybe_escaped = true;
  }
  std::string stripped;
  if (maybe_escaped) {
    stripped = strip_ansi(raw);
    line = stripped;
  }
  const std::size_t width = display_width(line);
  // A viewer that dropped the newlines: each process tag in the middle of the line starts a piece.
  while (true) {
    std::string tags;
    std::size_t prefix = log_prefix_length(line, &tags);
    std::string_view rest = line.substr(prefix);
    std::size_t inner = std::min(inner_tag_position(rest, 1), after_progress_bar(rest));
    if (inner == std::string_view::npos) {
      feed_piece(line_number, rest, std::move(tags), width);
      return;
    }
    feed_piece(line_number, rest.substr(0, inner), std::move(tags), width);
    line = rest.substr(inner);
  }
}

void LogNormalizer::feed_piece(std::int64_t line_number, std::string_view rest, std::string tags, std::size_t width) {
  std::size_t header = vllm_header_length(rest);
  std::string_view header_text = rest.substr(0, header);
  std::string_view body = rest.substr(header);

  bool blank = body.find_first_not_of(" \t") == std::string_view::npos;
  bool joins = false;
  if (!m_text.empty() && !blank) {
    bool same_stream = tags.empty() || tags == m_tags;
    bool same_record = header == 0 || header_text == m_header;
    bool wrapped_before = !m_widths.empty() && m_widths.back() >= 40;
    bool one_record = header > 0 && header_text == m_header;  // vLLM repeats its header on each line of a message
    joins = same_stream && same_record && (wrapped_before || one_record) && !starts_record(body) &&
            m_text.size() + m_segment_starts.size() + body.size() <= m_max_line_bytes;  // text and separators
  }
  if (joins) {
    m_segment_starts.push_back(m_text.size());
    m_text.append(body);
    m_widths.push_back(width);
    m_last = line_number;
    return;
  }
  flush();
  if (blank) return;  // nothing to match; a blank line also ends a paragraph
  m_first = m_last = line_number;
  m_header.assign(header_text);
  m_tags = std::move(tags);
  m_text.assign(header_text);
  m_text.append(body.substr(0, m_max_line_bytes - std::min(m_max_line_bytes, m_text.size())));
  m_segment_starts.assign(1, 0);
  m_widths.assign(1, width);
}

void LogNormalizer::flush() {
  if (m_text.empty()) return;
  if (m_segment_starts.size() == 1) {
    m_emit({m_first, m_last, m_text});
    m_text.clear();
    return;
  }
  // The terminal width: the widest line before a continuation, when it occurs twice (or matches
  // a width learnt earlier, or a common terminal width). Lines of that width were cut mid-word:
  // join them without a space; other joins are word wraps or multi-line messages: one space.
  const std::size_t joins = m_segment_starts.size() - 1;
  std::size_t widest = 0;
  for (std::size_t k = 0; k < joins; ++k) widest = std::max(widest, m_widths[k]);
  std::size_t count = 0;
  for (std::size_t k = 0; k < joins; ++k) count += m_widths[k] == widest;
  // Confirmed: two lines of the widest width, or the width learnt earlier; the terminal cut one
  // string there, so nothing is inserted. Guessed (one line of a common width): only a cut
  // between two word characters is taken as mid-word.
  bool confirmed = widest >= 40 && (count >= 2 || widest == m_wrap_width);
  bool guessed = !confirmed && std::find(k_common_widths.begin(), k_common_widths.end(), widest) != k_common_widths.end();
  if (confirmed) m_wrap_width = widest;
  m_scratch.clear();
  for (std::size_t k = 0; k <= joins; ++k) {
    std::size_t begin = m_segment_starts[k];
    std::size_t end = k < joins ? m_segment_starts[k + 1] : m_text.size();
    std::string_view segment(m_text.data() + begin, end - begin);
    if (k > 0 && !m_scratch.empty() && !segment.empty()) {
      char before = m_scratch.back();
      char after = segment.front();
      bool at_width = m_widths[k - 1] == widest;
      bool cut = at_width && (confirmed || (guessed && (is_word(before) || before == '-') && is_word(after)));
      if (!cut && !is_space(before) && !is_space(after)) m_scratch.push_back(' ');
    }
    m_scratch.append(segment);
  }
  m_emit({m_first, m_last, m_scratch});
  m_text.clear();
}

void LogNormalizer::finish() {
  if (!m_partial.empty()) finish_partial();
  flush();
}

}  // namespace headroom
