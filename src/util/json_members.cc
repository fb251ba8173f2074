#include "util/json_members.h"

namespace headroom::util {

namespace {

constexpr std::size_t k_fail = std::string_view::npos;

std::size_t skip_space(std::string_view t, std::size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
  return i;
}

// `i` is at an opening quote: the index just past the closing one, or k_fail.
std::size_t skip_string(std::string_view t, std::size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\') ++i;
    else if (t[i] == '"') return i + 1;
  }
  return k_fail;
}

// `i` is at the first character of a value: the index just past it, or k_fail.
std::size_t skip_value(std::string_view t, std::size_t i) {
  if (i >= t.size()) return k_fail;
  if (t[i] == '"') return skip_string(t, i);
  if (t[i] != '{' && t[i] != '[') {
    // A number, true, false or null: up to the next delimiter.
    while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' && t[i] != '\t' &&
           t[i] != '\n' && t[i] != '\r')
      ++i;
    return i;
  }
  std::size_t depth = 0;
  while (i < t.size()) {
    const char c = t[i];
    if (c == '"') {
      i = skip_string(t, i);
      if (i == k_fail) return k_fail;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    else if ((c == '}' || c == ']') && --depth == 0) return i + 1;
    ++i;
  }
  return k_fail;
}

}  // namespace

std::optional<std::vector<JsonMember>> object_members(std::string_view t, std::size_t leading) {
  std::vector<JsonMember> out;
  std::size_t i = skip_space(t, 0);
  if (i >= t.size() || t[i] != '{') return std::nullopt;
  i = skip_space(t, i + 1);
  if (i < t.size() && t[i] == '}') return skip_space(t, i + 1) == t.size() ? std::optional(out) : std::nullopt;
  while (true) {
    if (i >= t.size() || t[i] != '"') return std::nullopt;
    const std::size_t name_end = skip_string(t, i);
    if (name_end == k_fail) return std::nullopt;
    const std::string_view name = t.substr(i + 1, name_end - i - 2);
    i = skip_space(t, name_end);
    if (i >= t.size() || t[i] != ':') return std::nullopt;
    const std::size_t value_begin = skip_space(t, i + 1);
    const std::size_t value_end = skip_value(t, value_begin);
    if (value_end == k_fail || value_end == value_begin) return std::nullopt;
    out.push_back({name, t.substr(value_begin, value_end - value_begin)});
    if (out.size() == leading) return out;
    i = skip_space(t, value_end);
    if (i < t.size() && t[i] == ',') {
      i = skip_space(t, i + 1);
      continue;
    }
    if (i < t.size() && t[i] == '}') return skip_space(t, i + 1) == t.size() ? std::optional(out) : std::nullopt;
    return std::nullopt;
  }
}

}  // namespace headroom::util
