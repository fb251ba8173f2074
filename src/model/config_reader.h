// ConfigReader: typed access to the keys of one JSON object of a config.json, with errors that name
// the key and, when the raw text is known, its line and column.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/error.h"

namespace headroom::model_detail {

// Byte offsets of every object key in a JSON text, by path ("text_config/num_hidden_layers").
// Built by a small scanner; the text is assumed to be valid JSON (it was parsed before). Keys more
// than 8 levels deep and keys longer than 256 bytes (and what lies below them) are not recorded.
using KeyPositions = std::map<std::string, std::size_t>;
KeyPositions scan_key_positions(std::string_view text);

// "integer", "float", "string", "boolean", "null", "object", "array".
std::string json_kind(const nlohmann::json& value);

class ConfigReader {
 public:
  // `object` must outlive the reader. `path` is the object's key path from the root ("" or
  // "text_config"); `text`/`positions` may be empty/null when the raw text is unknown.
  ConfigReader(const nlohmann::json& object, std::string origin, std::string path = {},
               std::shared_ptr<const std::string> text = nullptr,
               std::shared_ptr<const KeyPositions> positions = nullptr);

  // A reader for a nested object key, if present and an object.
  std::optional<ConfigReader> child(const std::string& key) const;

  const nlohmann::json& json() const { return *m_object; }
  const std::string& origin() const { return m_origin; }

  // True when the key is present and not null.
  bool has(const std::string& key) const;

  // Typed reads: nullopt when absent or null; an error when present with another type.
  // Integers accept floats with an integral value (32.0).
  Result<std::optional<std::int64_t>> get_int(const std::string& key) const;
  Result<std::optional<double>> get_number(const std::string& key) const;
  Result<std::optional<std::string>> get_string(const std::string& key) const;
  Result<std::optional<bool>> get_bool(const std::string& key) const;
  Result<std::optional<std::vector<std::int64_t>>> get_int_list(const std::string& key) const;
  Result<std::optional<std::vector<std::string>>> get_string_list(const std::string& key) const;

  // The first present key among `keys` and its integer value.
  Result<std::optional<std::pair<std::string, std::int64_t>>> first_int(const std::vector<std::string>& keys) const;

  // "origin:line:col" of the key when known, else "origin".
  std::string where(const std::string& key) const;
  // The key as shown in messages: "text_config.num_hidden_layers".
  std::string display(const std::string& key) const;
  Error type_error(const std::string& key, std::string_view expected) const;
  Error missing(const std::vector<std::string>& keys) const;

 private:
  const nlohmann::json* m_object;
  std::string m_origin;
  std::string m_path;
  std::shared_ptr<const std::string> m_text;
  std::shared_ptr<const KeyPositions> m_positions;
};

}  // namespace headroom::model_detail
