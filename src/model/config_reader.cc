#include "model/config_reader.h"

#include <cmath>

#include "util/json_file.h"
#include "util/strings.h"

namespace headroom::model_detail {

namespace {

// Skips a JSON string starting at text[i] == '"'; returns the index just past the closing quote
// and the decoded-enough key (escapes kept verbatim; config keys never use them).
std::size_t skip_string(std::string_view text, std::size_t i, std::string* out) {
  ++i;
  std::size_t start = i;
  while (i < text.size() && text[i] != '"') i += (text[i] == '\\') ? 2 : 1;
  if (out) *out = std::string(text.substr(start, i - start));
  return i + 1;
}

}  // namespace

KeyPositions scan_key_positions(std::string_view text) {
  KeyPositions positions;
  // The keys headroom reads sit a few levels deep and have short names. Deeper or longer ones are
  // not recorded, so hostile nesting or giant keys cannot make paths grow with the square of the
  // input.
  constexpr std::size_t k_max_depth = 8;
  constexpr std::size_t k_max_key = 256;
  // One frame per open container: for objects the path prefix; arrays get "[]" frames so keys of
  // objects inside arrays are not confused with top-level ones.
  struct Frame {
    bool is_object;
    std::string path;
    bool expect_key;
    bool recorded = true;  // false below a level that is not recorded
  };
  std::vector<Frame> stack;
  std::string last_key;
  std::size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '"') {
      std::string s;
      std::size_t key_pos = i;
      i = skip_string(text, i, &s);
      if (!stack.empty() && stack.back().is_object && stack.back().expect_key) {
        last_key = s;
        if (stack.back().recorded && s.size() <= k_max_key) {
          std::string full = stack.back().path.empty() ? s : stack.back().path + "/" + s;
          positions.emplace(full, key_pos);  // first occurrence wins, as in JSON parsers that keep the first
        }
        stack.back().expect_key = false;
      }
      continue;
    }
    if (c == '{' || c == '[') {
      std::string path;
      bool recorded = stack.size() < k_max_depth;
      if (!stack.empty() && recorded) {
        const Frame& parent = stack.back();
        recorded = parent.recorded && (!parent.is_object || last_key.size() <= k_max_key);
        if (!recorded) path.clear();
        else if (parent.is_object) path = parent.path.empty() ? last_key : parent.path + "/" + last_key;
        else path = parent.path + "/[]";
      }
      stack.push_back({c == '{', path, c == '{', recorded});
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
    } else if (c == ',') {
      if (!stack.empty() && stack.back().is_object) stack.back().expect_key = true;
    }
    ++i;
  }
  return positions;
}

std::string json_kind(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "integer";
    case nlohmann::json::value_t::number_float: return "float";
    case nlohmann::json::value_t::string: return "string";
    case nlohmann::json::value_t::boolean: return "boolean";
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "object";
    case nlohmann::json::value_t::array: return "array";
    default: return "value";
  }
}

ConfigReader::ConfigReader(const nlohmann::json& object, std::string origin, std::string path,
                           std::shared_ptr<const std::string> text, std::shared_ptr<const KeyPositions> positions)
    : m_object(&object), m_origin(std::move(origin)), m_path(std::move(path)), m_text(std::move(text)),
      m_positions(std::move(positions)) {}

std::optional<ConfigReader> ConfigReader::child(const std::string& key) const {
  auto it = m_object->find(key);
  if (it == m_object->end() || !it->is_object()) return std::nullopt;
  return ConfigReader(*it, m_origin, m_path.empty() ? key : m_path + "/" + key, m_text, m_positions);
}

bool ConfigReader::has(const std::string& key) const {
  auto it = m_object->find(key);
  return it != m_object->end() && !it->is_null();
}

std::string ConfigReader::where(const std::string& key) const {
  if (m_text && m_positions) {
    auto it = m_positions->find(m_path.empty() ? key : m_path + "/" + key);
    if (it != m_positions->end()) {
      auto [line, col] = util::line_col(*m_text, it->second);
      return m_origin + ":" + std::to_string(line) + ":" + std::to_string(col);
    }
  }
  return m_origin;
}

std::string ConfigReader::display(const std::string& key) const {
  if (m_path.empty()) return key;
  std::string p = m_path;
  for (auto& ch : p)
    if (ch == '/') ch = '.';
  return p + "." + key;
}

Error ConfigReader::type_error(const std::string& key, std::string_view expected) const {
  return Error{ErrorCode::parse_error,
               "expected " + std::string(expected) + " \"" + display(key) + "\", got " + json_kind(m_object->at(key)),
               where(key)};
}

Error ConfigReader::missing(const std::vector<std::string>& keys) const {
  std::string msg = "missing required field \"" + display(keys.front()) + "\"";
  if (keys.size() > 1) {
    std::vector<std::string> rest(keys.begin() + 1, keys.end());
    msg += " (also looked for " + util::or_list(rest) + ")";
  }
  return Error{ErrorCode::parse_error, msg, m_origin};
}

Result<std::optional<std::int64_t>> ConfigReader::get_int(const std::string& key) const {
  if (!has(key)) return std::optional<std::int64_t>{};
  const auto& v = m_object->at(key);
  // Every integer a config.json carries (sizes, counts, lengths, token ids) fits in 32 bits; larger
  // values are corrupt and would wrap when stored.
  constexpr double k_limit = 2147483648.0;
  double d = 0;
  if (v.is_number_unsigned()) d = static_cast<double>(v.get<std::uint64_t>());
  else if (v.is_number_integer()) d = static_cast<double>(v.get<std::int64_t>());
  else if (v.is_number_float()) d = v.get<double>();
  else return tl::unexpected(type_error(key, "integer"));
  if (!std::isfinite(d) || std::floor(d) != d) return tl::unexpected(type_error(key, "integer"));
  if (d >= k_limit || d <= -k_limit) return tl::unexpected(type_error(key, "integer below 2^31"));
  return std::optional<std::int64_t>(static_cast<std::int64_t>(d));
}

Result<std::optional<double>> ConfigReader::get_number(const std::string& key) const {
  if (!has(key)) return std::optional<double>{};
  const auto& v = m_object->at(key);
  if (v.is_number()) return std::optional<double>(v.get<double>());
  return tl::unexpected(type_error(key, "number"));
}

Result<std::optional<std::string>> ConfigReader::get_string(const std::string& key) const {
  if (!has(key)) return std::optional<std::string>{};
  const auto& v = m_object->at(key);
  if (v.is_string()) return std::optional<std::string>(v.get<std::string>());
  return tl::unexpected(type_error(key, "string"));
}

Result<std::optional<bool>> ConfigReader::get_bool(const std::string& key) const {
  if (!has(key)) return std::optional<bool>{};
  const auto& v = m_object->at(key);
  if (v.is_boolean()) return std::optional<bool>(v.get<bool>());
  return tl::unexpected(type_error(key, "boolean"));
}

Result<std::optional<std::vector<std::int64_t>>> ConfigReader::get_int_list(const std::string& key) const {
  if (!has(key)) return std::optional<std::vector<std::int64_t>>{};
  const auto& v = m_object->at(key);
  if (!v.is_array()) return tl::unexpected(type_error(key, "array of integers"));
  std::vector<std::int64_t> out;
  for (const auto& e : v) {
    if (e.is_boolean()) out.push_back(e.get<bool>() ? 1 : 0);
    else if (e.is_number_unsigned() && e.get<std::uint64_t>() >= (1ULL << 31))
      return tl::unexpected(type_error(key, "array of integers below 2^31"));
    else if (e.is_number_integer() && (e.get<std::int64_t>() >= (1LL << 31) || e.get<std::int64_t>() <= -(1LL << 31)))
      return tl::unexpected(type_error(key, "array of integers below 2^31"));
    else if (e.is_number_integer() || e.is_number_unsigned()) out.push_back(e.get<std::int64_t>());
    else return tl::unexpected(type_error(key, "array of integers"));
  }
  return std::optional<std::vector<std::int64_t>>(std::move(out));
}

Result<std::optional<std::vector<std::string>>> ConfigReader::get_string_list(const std::string& key) const {
  if (!has(key)) return std::optional<std::vector<std::string>>{};
  const auto& v = m_object->at(key);
  if (!v.is_array()) return tl::unexpected(type_error(key, "array of strings"));
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) return tl::unexpected(type_error(key, "array of strings"));
    out.push_back(e.get<std::string>());
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

Result<std::optional<std::pair<std::string, std::int64_t>>> ConfigReader::first_int(
    const std::vector<std::string>& keys) const {
  for (const auto& k : keys) {
    auto v = get_int(k);
    if (!v) return tl::unexpected(v.error());
    if (*v) return std::optional<std::pair<std::string, std::int64_t>>(std::make_pair(k, **v));
  }
  return std::optional<std::pair<std::string, std::int64_t>>{};
}

}  // namespace headroom::model_detail
