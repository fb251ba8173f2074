#include "util/strings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace headroom::util {

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

namespace {

// The Levenshtein distance of `a` and `b` as they are, when it is at most `limit`; limit + 1 when
// it is more. The table stops at the first row whose every entry is past the limit: a row's
// smallest entry never falls, so the distance is past it too. `rows` is scratch space.
std::size_t bounded_distance(std::string_view a, std::string_view b, std::size_t limit,
                             std::vector<std::size_t>& rows) {
  rows.assign(2 * (b.size() + 1), 0);
  std::size_t* prev = rows.data();
  std::size_t* cur = prev + b.size() + 1;
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    std::size_t row_min = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > limit) return limit + 1;
    std::swap(prev, cur);
  }
  return std::min(prev[b.size()], limit + 1);
}

}  // namespace

std::size_t edit_distance(std::string_view a_in, std::string_view b_in) {
  const std::string a = to_lower(a_in), b = to_lower(b_in);
  std::vector<std::size_t> rows;
  return bounded_distance(a, b, std::max(a.size(), b.size()), rows);
}

std::vector<std::string> closest_matches(std::string_view query, const std::vector<std::string>& candidates,
                                         std::size_t max) {
  // Edit distance costs query x candidate: a query this long is close to no name anyway.
  if (query.size() > 256) return {};
  std::string q = to_lower(query);
  struct Scored {
    std::size_t score;
    std::string name;
  };
  std::vector<Scored> scored;
  std::vector<std::size_t> rows;
  for (const auto& c : candidates) {
    std::string lc = to_lower(c);
    bool contains = !q.empty() && (lc.find(q) != std::string::npos || q.find(lc) != std::string::npos);
    std::size_t limit = std::max<std::size_t>(2, std::max(lc.size(), q.size()) / 3);
    // The distance is at least the difference in length: past the limit, nothing to compute.
    const std::size_t length_gap = lc.size() > q.size() ? lc.size() - q.size() : q.size() - lc.size();
    if (!contains && length_gap > limit) continue;
    std::size_t d = bounded_distance(q, lc, limit, rows);
    if (contains) d = std::min(d, limit);  // substring hits always qualify
    if (d <= limit) scored.push_back({d, c});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& x, const Scored& y) { return x.score < y.score; });
  std::vector<std::string> out;
  for (const auto& s : scored) {
    if (std::any_of(out.begin(), out.end(), [&](const std::string& o) { return iequals(o, s.name); })) continue;
    out.push_back(s.name);
    if (out.size() == max) break;
  }
  return out;
}

std::string or_list(const std::vector<std::string>& items) {
  if (items.empty()) return "";
  if (items.size() == 1) return items[0];
  std::vector<std::string> head(items.begin(), items.end() - 1);
  return join(head, ", ") + " or " + items.back();
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string py_round2(double value) {
  double r = std::nearbyint(value * 100.0) / 100.0;
  std::string s = fixed(r, 2);
  // Python prints the shortest repr: 5.0, 15.7, 15.72.
  if (s.size() > 1 && s.back() == '0') s.pop_back();
  return s;
}

std::string with_commas(long long n) {
  // Through unsigned, so the most negative value has a magnitude too.
  const unsigned long long magnitude = n < 0 ? 0ULL - static_cast<unsigned long long>(n) : static_cast<unsigned long long>(n);
  std::string digits = std::to_string(magnitude);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count && count % 3 == 0) out.push_back(',');
    out.push_back(*it);
    ++count;
  }
  if (n < 0) out.push_back('-');
  return std::string(out.rbegin(), out.rend());
}

std::optional<double> parse_log_number(std::string_view text, bool whole) {
  std::string t;
  for (char c : text)
    if (c != ',') t.push_back(c);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || (whole && end != t.c_str() + t.size()) || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string shell_word(std::string_view word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || std::string_view("._-/:,+=").find(ch) != std::string_view::npos;
  });
  if (plain) return std::string(word);
  std::string out = "'";
  for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace headroom::util
