// JSON request bodies → the same values the CLI's options give (see headroom/api_request.h).
#include "headroom/api_request.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "headroom/gpu.h"
#include "headroom/plan.h"
#include "headroom/engine_limits.h"
#include "util/json_file.h"
#include "util/strings.h"

namespace headroom {

namespace {

using nlohmann::json;

// GiB figures (a GPU's memory, used, free, a margin): 1 PiB is past any GPU.
constexpr double k_max_gib = 1 << 20;

const std::vector<std::string> k_target_keys = {"gpu", "gpus", "nodes", "gpu_memory_gib", "used_gib", "free_gib", "vllm_version"};
const std::vector<std::string> k_check_keys = {"model", "flags", "command"};
const std::vector<std::string> k_plan_keys = {"model",         "command",      "context",     "concurrency", "goal",
                                              "max_gpus",      "gpus_per_node", "allow_fp8_kv", "allow_eager", "margin_gib"};

std::string type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

// The body's shape is wrong (unknown key, wrong type, missing model): parse_error, answered 400.
tl::unexpected<Error> bad(const std::string& where, const std::string& message) {
  return make_error(ErrorCode::parse_error, message, where);
}

// A well-formed value the engine cannot take: invalid_argument, answered 422.
tl::unexpected<Error> invalid(const std::string& where, const std::string& message) {
  return make_error(ErrorCode::invalid_argument, message, where);
}

// Typed access to the members of one JSON object; errors name the member ("flags.max_model_len").
class Fields {
 public:
  Fields(const json& object, std::string prefix) : m_object(object), m_prefix(std::move(prefix)) {}

  std::string where(const std::string& key) const { return m_prefix.empty() ? key : m_prefix + "." + key; }

  Result<void> only(const std::vector<std::string>& known) const {
    for (const auto& [key, value] : m_object.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      auto close = util::closest_matches(key, known);
      return bad(where(key), "unknown key '" + key + "'" + (close.empty() ? "" : "; did you mean " + util::or_list(close) + "?") +
                                 " (expected " + util::or_list(known) + ")");
    }
    return {};
  }

  const json* find(const std::string& key) const {
    auto it = m_object.find(key);
    return it == m_object.end() || it->is_null() ? nullptr : &*it;
  }

  // A string of at most max_bytes: names are short, and a long one would only make the work on
  // it (lookups, "did you mean", error messages) longer.
  Result<void> string(const std::string& key, std::string& out, std::size_t max_bytes = 1024) const {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_string()) return bad(where(key), "expected a string, got " + type_name(*v));
    const auto& text = v->get_ref<const std::string&>();
    if (text.size() > max_bytes)
      return invalid(where(key), "expected at most " + std::to_string(max_bytes) + " bytes, got " + std::to_string(text.size()));
    out = text;
    return {};
  }

  Result<void> boolean(const std::string& key, bool& out) const {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_boolean()) return bad(where(key), "expected true or false, got " + type_name(*v));
    out = v->get<bool>();
    return {};
  }

  // An integer from min to max (both within Int): a size outside is refused here, before any work.
  template <class Int>
  Result<void> integer(const std::string& key, std::optional<Int>& out, std::int64_t min, std::int64_t max) const {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_number_integer()) return bad(where(key), "expected an integer, got " + (v->is_number() ? v->dump() : type_name(*v)));
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return invalid(where(key), "must be between " + util::with_commas(min) + " and " + util::with_commas(max) + ", got " + v->dump());
    const auto n = v->get<std::int64_t>();
    if (auto r = check_range(n, min, max, where(key)); !r) return r;
    out = static_cast<Int>(n);
    return {};
  }

  Result<void> number(const std::string& key, std::optional<double>& out, double min = 0.0,
                      double max = k_max_gib) const {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_number()) return bad(where(key), "expected a number, got " + type_name(*v));
    double d = v->get<double>();
    if (!std::isfinite(d)) return bad(where(key), "expected a finite number");
    if (d < min || d > max)
      return invalid(where(key), "expected a number of GiB from " + util::fixed(min, 0) + " to " + util::fixed(max, 0) + ", got " + v->dump());
    out = d;
    return {};
  }

 private:
  const json& m_object;
  std::string m_prefix;
};

Result<json> parse_object(std::string_view body) {
  auto j = util::parse_json(body, "body");
  if (!j) return tl::unexpected(j.error());
  if (!j->is_object()) return make_error(ErrorCode::parse_error, "expected a JSON object, got " + type_name(*j), "body");
  return j;
}

Result<void> read_target(const Fields& f, TargetRequest& t) {
  std::optional<int> gpus, nodes;
  if (auto r = f.string("gpu", t.gpu); !r) return r;
  if (auto r = f.integer("gpus", gpus, 1, limits::k_max_gpus); !r) return r;
  if (auto r = f.integer("nodes", nodes, 1, limits::k_max_nodes); !r) return r;
  if (auto r = f.number("gpu_memory_gib", t.gpu_memory_gib); !r) return r;
  if (auto r = f.number("used_gib", t.used_gib); !r) return r;
  if (auto r = f.number("free_gib", t.free_gib); !r) return r;
  if (auto r = f.string("vllm_version", t.vllm_version, 64); !r) return r;
  t.gpus = gpus.value_or(0);
  t.nodes = nodes.value_or(1);
  return {};
}

// {"max_model_len": 4096, "enforce_eager": true} → --max-model-len 4096 --enforce-eager: the
// object becomes the command line vLLM would be given, so one parser serves both forms.
Result<std::vector<std::string>> flags_to_args(const json& flags) {
  if (!flags.is_object()) return bad("flags", "expected an object of vLLM flags ({\"max_model_len\": 4096}), got " + type_name(flags));
  std::vector<std::string> args;
  for (const auto& [key, value] : flags.items()) {
    std::string where = "flags." + key;
    if (key.empty() || key[0] < 'a' || key[0] > 'z' || !std::all_of(key.begin(), key.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        }))
      return bad(where, "expected a vLLM flag name in lower case (max_model_len), got '" + key + "'");
    // vLLM's longest flag names have about 40 characters.
    if (key.size() > 64) return bad("flags", "expected a vLLM flag name of at most 64 characters, got " + std::to_string(key.size()));
    std::string name = "--" + key;
    std::replace(name.begin() + 2, name.end(), '_', '-');
    if (value.is_boolean()) {
      args.push_back(value.get<bool>() ? name : "--no-" + name.substr(2));
    } else if (value.is_number_integer()) {
      args.push_back(name + "=" + value.dump());
    } else if (value.is_number()) {
      args.push_back(name + "=" + value.dump());
    } else if (value.is_string()) {
      if (value.get_ref<const std::string&>().size() > 4096)
        return invalid(where, "expected at most 4096 bytes, got " + std::to_string(value.get_ref<const std::string&>().size()));
      args.push_back(name + "=" + value.get<std::string>());
    } else {
      return bad(where, "expected a string, number or boolean, got " + type_name(value));
    }
  }
  return args;
}

// vLLM's parser names flags as "--max-model-len"; a flag that came from the "flags" object is
// reported as "flags.max_model_len".
Error rename_flag(Error e, const json* flags) {
  if (flags && e.where.starts_with("--")) {
    std::string key = e.where.substr(2);
    std::replace(key.begin(), key.end(), '-', '_');
    if (flags->contains(key)) e.where = "flags." + key;
  }
  return e;
}

}  // namespace

Result<ParsedRequest<CheckApiRequest>> parse_check_request(std::string_view body) {
  auto j = parse_object(body);
  if (!j) return tl::unexpected(j.error());
  Fields f(*j, "");
  std::vector<std::string> known = k_check_keys;
  known.insert(known.end(), k_target_keys.begin(), k_target_keys.end());
  if (auto r = f.only(known); !r) return tl::unexpected(r.error());
  ParsedRequest<CheckApiRequest> out;
  if (auto r = read_target(f, out.request.target); !r) return tl::unexpected(r.error());
  std::string model, command;
  if (auto r = f.string("model", model); !r) return tl::unexpected(r.error());
  if (auto r = f.string("command", command, 64 * 1024); !r) return tl::unexpected(r.error());
  std::vector<std::string> args;
  if (!command.empty()) {
    auto words = split_shell_words(command);
    if (!words) return tl::unexpected(words.error());
    args = std::move(*words);
  }
  const json* flags = f.find("flags");
  if (flags) {
    auto more = flags_to_args(*flags);
    if (!more) return tl::unexpected(more.error());
    args.insert(args.end(), more->begin(), more->end());
  }
  auto cmd = parse_vllm_command(args);
  if (!cmd) return tl::unexpected(rename_flag(cmd.error(), flags));
  if (!model.empty()) {
    if (!cmd->model.empty() && cmd->model != model)
      return invalid("model", "the command serves '" + cmd->model + "' but \"model\" is '" + model + "': give one of them");
    cmd->model = model;
  }
  if (cmd->model.empty())
    return bad("model", "no model given: expected \"model\" (a catalogue or Hugging Face id) or a \"command\" naming one");
  if (auto ok = validate_flags(cmd->flags); !ok) return tl::unexpected(rename_flag(ok.error(), flags));
  out.request.command = std::move(*cmd);
  out.canonical = j->dump(-1, ' ', false, json::error_handler_t::replace);
  return out;
}

Result<ParsedRequest<PlanApiRequest>> parse_plan_request(std::string_view body) {
  auto j = parse_object(body);
  if (!j) return tl::unexpected(j.error());
  Fields f(*j, "");
  std::vector<std::string> known = k_plan_keys;
  known.insert(known.end(), k_target_keys.begin(), k_target_keys.end());
  if (auto r = f.only(known); !r) return tl::unexpected(r.error());
  ParsedRequest<PlanApiRequest> out;
  PlanApiRequest& p = out.request;
  if (auto r = read_target(f, p.target); !r) return tl::unexpected(r.error());
  std::optional<int> concurrency;
  for (auto r : {f.string("model", p.model), f.string("goal", p.goal, 64), f.integer("context", p.context, 1, limits::k_max_model_len),
                 f.integer("concurrency", concurrency, 1, limits::k_max_concurrency),
                 f.integer("max_gpus", p.max_gpus, 1, limits::k_max_gpus),
                 f.integer("gpus_per_node", p.gpus_per_node, 1, limits::k_max_gpus), f.boolean("allow_fp8_kv", p.allow_fp8_kv),
                 f.boolean("allow_eager", p.allow_eager), f.number("margin_gib", p.margin_gib)})
    if (!r) return tl::unexpected(r.error());
  p.concurrency = concurrency.value_or(1);
  // A vllm serve command: its model, and what its flags say about the workload where the body
  // says nothing (plan_hints, as `plan -- vllm serve ...`).
  std::string command;
  if (auto r = f.string("command", command, 64 * 1024); !r) return tl::unexpected(r.error());
  if (!command.empty()) {
    auto words = split_shell_words(command);
    if (!words) return tl::unexpected(words.error());
    auto cmd = parse_vllm_command(*words);
    if (!cmd) return tl::unexpected(cmd.error());
    if (auto ok = validate_engine_sizes(cmd->flags); !ok) return tl::unexpected(ok.error());
    if (!cmd->model.empty()) {
      if (!p.model.empty() && cmd->model != p.model)
        return invalid("model", "the command serves '" + cmd->model + "' but \"model\" is '" + p.model + "': give one of them");
      p.model = cmd->model;
    }
    PlanRequest given;
    given.context_tokens = p.context;
    given.allow_fp8_kv = p.allow_fp8_kv;
    given.allow_eager = p.allow_eager;
    const bool gpus_given = p.target.gpus > 0 || split_gpu_count(p.target.gpu).count > 0 || p.gpus_per_node.has_value();
    const CommandHints hints = plan_hints(cmd->flags, given, gpus_given);
    if (hints.context) p.context = hints.context;
    if (hints.gpus > 0) p.target.gpus = hints.gpus;
    p.allow_fp8_kv = p.allow_fp8_kv || hints.allow_fp8_kv;
    p.allow_eager = p.allow_eager || hints.allow_eager;
    p.kept = hints.kept;
    p.from_command = hints.taken;
  }
  if (p.model.empty())
    return bad("model", "no model given: expected \"model\" (a catalogue or Hugging Face id) or a \"command\" naming one");
  out.canonical = j->dump(-1, ' ', false, json::error_handler_t::replace);
  return out;
}

}  // namespace headroom
