#include "run/command_edit.h"

#include <algorithm>
#include <cctype>

#include "engine/container_command.h"

namespace headroom::run {

namespace {

// vLLM's short aliases (engine/arg_utils.py add_cli_args).
const std::vector<std::pair<std::string, std::string>> k_aliases = {
    {"--tensor-parallel-size", "-tp"}, {"--pipeline-parallel-size", "-pp"}, {"--data-parallel-size", "-dp"},
    {"--quantization", "-q"}};

// vLLM's boolean flags among those headroom changes or drops: they never take the next word.
const std::vector<std::string> k_boolean_flags = {"--enforce-eager", "--enable-chunked-prefill", "--enable-prefix-caching",
                                                  "--enable-expert-parallel", "--trust-remote-code", "--skip-mm-profiling",
                                                  "--language-model-only"};

std::string canonical(const std::string& word) {
  std::string name = word.substr(0, word.find('='));
  if (name.starts_with("--")) std::replace(name.begin() + 2, name.end(), '_', '-');
  for (const auto& [long_name, short_name] : k_aliases)
    if (name == short_name) return long_name;
  return name;
}

bool is_boolean(const std::string& flag) {
  return std::find(k_boolean_flags.begin(), k_boolean_flags.end(), flag) != k_boolean_flags.end();
}

bool looks_like_flag(const std::string& s) {
  return s.size() >= 2 && s[0] == '-' && !std::isdigit(static_cast<unsigned char>(s[1])) && s[1] != '.';
}

// Where vLLM's arguments start: after the image of a container command, else at the first word.
std::size_t vllm_args_begin(const std::vector<std::string>& argv) {
  auto container = parse_container_command(argv);
  if (container && *container) return (*container)->image + 1;
  return 0;
}

// The index of `flag` (any spelling) in argv from `begin`, and how many words it spans.
std::pair<std::size_t, std::size_t> find_flag(const std::vector<std::string>& argv, std::size_t begin, const std::string& flag) {
  for (std::size_t i = begin; i < argv.size(); ++i) {
    if (!looks_like_flag(argv[i]) || canonical(argv[i]) != flag) continue;
    bool inline_value = argv[i].find('=') != std::string::npos;
    bool next_is_value = !inline_value && !is_boolean(flag) && i + 1 < argv.size() && !looks_like_flag(argv[i + 1]);
    return {i, next_is_value ? 2 : 1};
  }
  return {argv.size(), 0};
}

void set_env(LaunchSpec& spec, const std::string& assignment) {
  const std::string name = assignment.substr(0, assignment.find('='));
  auto container = parse_container_command(spec.argv);
  if (container && *container) {
    // `-e VAR=value` right after `run`, replacing an earlier -e of the same variable.
    const std::size_t image = (*container)->image;
    for (std::size_t i = (*container)->run_end; i + 1 < image; ++i)
      if ((spec.argv[i] == "-e" || spec.argv[i] == "--env") && spec.argv[i + 1].substr(0, spec.argv[i + 1].find('=')) == name) {
        spec.argv[i + 1] = assignment;
        return;
      }
    const auto at = spec.argv.begin() + static_cast<long>((*container)->run_end);
    spec.argv.insert(at, {"-e", assignment});
    return;
  }
  auto same = [&](const std::string& e) { return e.substr(0, e.find('=')) == name; };
  spec.env.erase(std::remove_if(spec.env.begin(), spec.env.end(), same), spec.env.end());
  spec.env.push_back(assignment);
}

bool is_secret_name(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const char* s : {"TOKEN", "KEY", "SECRET", "PASSWORD"})
    if (name.find(s) != std::string::npos) return true;
  return false;
}

std::string redact(const std::string& word, bool after_secret_flag) {
  if (after_secret_flag) return "***";
  auto eq = word.find('=');
  if (eq != std::string::npos && eq > 0 && is_secret_name(word.substr(0, eq))) return word.substr(0, eq + 1) + "***";
  return word;
}

std::string quote(const std::string& word) {
  if (!word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
        return std::isalnum(c) || std::string_view("-_./:=,+@%*").find(static_cast<char>(c)) != std::string_view::npos;
      }))
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

LaunchSpec edit_command(const LaunchSpec& spec, const FlagEdits& set, const std::vector<std::string>& removed) {
  LaunchSpec out = spec;
  for (const auto& flag : removed) {
    auto [at, span] = find_flag(out.argv, vllm_args_begin(out.argv), canonical(flag));
    if (span > 0) out.argv.erase(out.argv.begin() + static_cast<long>(at), out.argv.begin() + static_cast<long>(at + span));
  }
  for (const auto& [flag, value] : set) {
    if (flag == "ENV") {
      set_env(out, value);
      continue;
    }
    if (value.empty() && std::find(removed.begin(), removed.end(), flag) != removed.end()) continue;
    const std::string name = canonical(flag);
    auto [at, span] = find_flag(out.argv, vllm_args_begin(out.argv), name);
    if (span == 0) {
      // `--no-enforce-eager` and the like say the opposite of a boolean being set: it goes.
      if (value.empty()) {
        auto [neg, neg_span] = find_flag(out.argv, vllm_args_begin(out.argv), "--no-" + name.substr(2));
        if (neg_span > 0) out.argv.erase(out.argv.begin() + static_cast<long>(neg));
      }
      out.argv.push_back(flag);
      if (!value.empty()) out.argv.push_back(value);
      continue;
    }
    if (value.empty()) continue;  // a boolean already set
    if (span == 2) out.argv[at + 1] = value;
    else out.argv[at] = out.argv[at].substr(0, out.argv[at].find('=')) + "=" + value;
  }
  return out;
}

std::string display_command(const LaunchSpec& spec) {
  std::vector<std::string> words;
  for (const auto& e : spec.env) words.push_back(redact(e, false));
  bool secret_next = false;
  for (const auto& w : spec.argv) {
    const bool api_key = looks_like_flag(w) && canonical(w) == "--api-key";
    if (api_key && w.find('=') != std::string::npos) words.push_back(w.substr(0, w.find('=') + 1) + "***");
    else words.push_back(redact(w, secret_next));
    secret_next = api_key && w.find('=') == std::string::npos;
  }
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + quote(w);
  return out;
}

}  // namespace headroom::run
