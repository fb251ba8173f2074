// `vllm serve --config FILE.yaml`, read as vLLM reads it (utils/argparse_utils.py
// FlexibleArgumentParser._load_config_file): a YAML mapping of flag names to values, each turned
// into `--name value`; a true boolean becomes the bare flag; lists and mappings are passed as one
// value. The file's flags come before the command line's, so the command line wins.
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "headroom/vllm_config.h"

namespace headroom {

namespace {

Error yaml_error(const std::string& origin, const YAML::Mark& mark, const std::string& message) {
  std::string where = origin;
  if (!mark.is_null()) where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  return Error{ErrorCode::invalid_argument, message, where};
}

// YAML 1.1 booleans as PyYAML's safe_load reads them.
std::optional<bool> yaml_bool(const std::string& s) {
  static const std::vector<std::string> k_true = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const std::vector<std::string> k_false = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
  for (const auto& t : k_true)
    if (s == t) return true;
  for (const auto& f : k_false)
    if (s == f) return false;
  return std::nullopt;
}

nlohmann::json to_json(const YAML::Node& node, int depth) {
  if (depth > 64) return nullptr;
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& n : node) a.push_back(to_json(n, depth + 1));
      return a;
    }
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : node) o[kv.first.IsScalar() ? kv.first.Scalar() : std::string("?")] = to_json(kv.second, depth + 1);
      return o;
    }
    case YAML::NodeType::Scalar:
      return node.Scalar();
    default:
      return nullptr;
  }
}

}  // namespace

Result<std::vector<std::string>> config_file_args(std::string_view yaml_text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return tl::unexpected(yaml_error(origin, e.mark, "invalid YAML: " + e.msg));
  }
  if (root.IsNull()) return std::vector<std::string>{};
  if (!root.IsMap())
    return tl::unexpected(yaml_error(origin, root.Mark(), "expected a mapping of vLLM flag names to values (e.g. 'max-model-len: 8192')"));
  std::vector<std::string> args;
  try {
    for (const auto& kv : root) {
      if (!kv.first.IsScalar())
        return tl::unexpected(yaml_error(origin, kv.first.Mark(), "expected a flag name as the key"));
      const std::string key = kv.first.Scalar();
      const YAML::Node& value = kv.second;
      const std::string flag = "--" + key;
      if (value.IsScalar()) {
        const bool plain = value.Tag() != "!";  // a quoted "true" is a string, not a boolean
        if (auto b = yaml_bool(value.Scalar()); b && plain) {
          args.push_back(flag + "=" + (*b ? "true" : "false"));
        } else {
          args.push_back(flag + "=" + value.Scalar());
        }
      } else if (value.IsSequence() || value.IsMap()) {
        // A file is not always UTF-8: invalid bytes become U+FFFD instead of an exception.
        args.push_back(flag + "=" + to_json(value, 0).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      } else if (value.IsNull()) {
        continue;  // `key:` with no value: None, vLLM's default
      }
    }
  } catch (const YAML::Exception& e) {
    return tl::unexpected(yaml_error(origin, e.mark, "invalid YAML: " + e.msg));
  }
  return args;
}

}  // namespace headroom
