// A pasted Python call `LLM(model="...", tensor_parallel_size=2, ...)`: vllm/entrypoints/llm.py
// passes its keyword arguments to EngineArgs under the same names the CLI flags have (with
// underscores), and the engine starts with usage context LLM_CLASS, whose batch defaults differ
// from the server's (engine/arg_utils.py get_batch_defaults).
#include <cctype>
#include <re2/re2.h>
#include <string>
#include <vector>

#include "headroom/vllm_config.h"

namespace headroom {

namespace {

struct Cursor {
  std::string_view text;
  std::size_t pos = 0;

  bool done() const { return pos >= text.size(); }
  char peek() const { return done() ? '\0' : text[pos]; }
  void skip_space() {
    while (!done()) {
      if (std::isspace(static_cast<unsigned char>(text[pos])) || text[pos] == '\\') {
        ++pos;
      } else if (text[pos] == '#') {  // a comment runs to the end of the line
        while (!done() && text[pos] != '\n') ++pos;
      } else {
        break;
      }
    }
  }
  // 1-based column of the current position, for messages.
  std::string where() const { return "LLM(...) at character " + std::to_string(pos + 1); }
};

Error call_error(const Cursor& c, const std::string& message) {
  return Error{ErrorCode::invalid_argument, message, c.where()};
}

// A Python string literal with ' or " (optionally r/b/f prefixed), escapes kept simple.
Result<std::string> read_string(Cursor& c) {
  while (!c.done() && std::isalpha(static_cast<unsigned char>(c.peek()))) ++c.pos;  // r"", f""
  const char quote = c.peek();
  ++c.pos;
  std::string out;
  while (!c.done() && c.peek() != quote) {
    if (c.peek() == '\\' && c.pos + 1 < c.text.size()) ++c.pos;
    out += c.text[c.pos++];
  }
  if (c.done()) return tl::unexpected(call_error(c, std::string("unterminated string (expected a closing ") + quote + ")"));
  ++c.pos;
  return out;
}

// Any other value up to the next top-level ',' or ')': numbers, True/False/None, names, and
// bracketed structures (dicts, lists, calls), which are kept as written.
Result<std::string> read_raw(Cursor& c) {
  const std::size_t start = c.pos;
  int depth = 0;
  while (!c.done()) {
    char ch = c.peek();
    if (ch == '"' || ch == '\'') {
      auto s = read_string(c);
      if (!s) return tl::unexpected(s.error());
      continue;
    }
    if (ch == '(' || ch == '[' || ch == '{') ++depth;
    if (ch == ')' || ch == ']' || ch == '}') {
      if (depth == 0) break;
      --depth;
    }
    if (ch == ',' && depth == 0) break;
    ++c.pos;
  }
  if (depth != 0 || c.done()) return tl::unexpected(call_error(c, "unbalanced brackets: expected ')' to close LLM("));
  std::string v(c.text.substr(start, c.pos - start));
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  return v;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') return false;
  return true;
}

}  // namespace

Result<VllmCommand> parse_llm_call(std::string_view text) {
  // Find the call: `LLM(` not preceded by an identifier character (so `MyLLM(` does not match).
  std::size_t at = std::string_view::npos;
  for (std::size_t i = text.find("LLM("); i != std::string_view::npos; i = text.find("LLM(", i + 1)) {
    if (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_')) {
      at = i;
      break;
    }
  }
  if (at == std::string_view::npos)
    return make_error(ErrorCode::invalid_argument, "expected a Python call LLM(model=..., ...), found no 'LLM('");
  Cursor c{text, at + 4};
  std::vector<std::string> args;
  std::string positional_model;
  bool first = true;
  while (true) {
    c.skip_space();
    if (c.done()) return tl::unexpected(call_error(c, "expected ')' to close LLM("));
    if (c.peek() == ')') break;
    // name=value, or the model as the first positional argument.
    std::size_t mark = c.pos;
    std::string name;
    while (!c.done() && (std::isalnum(static_cast<unsigned char>(c.peek())) || c.peek() == '_')) name += c.text[c.pos++];
    c.skip_space();
    const bool keyword = is_identifier(name) && c.peek() == '=' && (c.pos + 1 >= c.text.size() || c.text[c.pos + 1] != '=');
    if (keyword) {
      ++c.pos;
      c.skip_space();
    } else {
      c.pos = mark;
      if (c.peek() == '*') return tl::unexpected(call_error(c, "**kwargs and *args cannot be read: write the arguments out"));
    }
    std::string value;
    bool quoted = false;
    if (c.peek() == '"' || c.peek() == '\'' ||
        ((c.peek() == 'r' || c.peek() == 'f') && c.pos + 1 < c.text.size() && (c.text[c.pos + 1] == '"' || c.text[c.pos + 1] == '\''))) {
      auto s = read_string(c);
      if (!s) return tl::unexpected(s.error());
      value = *s;
      quoted = true;
    } else {
      auto r = read_raw(c);
      if (!r) return tl::unexpected(r.error());
      value = *r;
    }
    if (!keyword) {
      if (!first || !quoted)
        return tl::unexpected(call_error(c, "expected keyword arguments (name=value) after the model, got '" + value + "'"));
      positional_model = value;
    } else if (value == "None") {
      // None is the default: nothing to pass.
    } else if (name == "model") {
      positional_model = value;
    } else {
      std::string flag = "--" + name;
      for (auto& ch : flag) if (ch == '_') ch = '-';
      if (!quoted && (value == "True" || value == "False")) {
        args.push_back(flag + "=" + (value == "True" ? "true" : "false"));
      } else {
        args.push_back(flag + "=" + value);
      }
    }
    first = false;
    c.skip_space();
    if (c.peek() == ',') {
      ++c.pos;
      continue;
    }
    if (c.peek() == ')') break;
    return tl::unexpected(call_error(c, std::string("expected ',' or ')' after an argument, got '") + c.peek() + "'"));
  }
  if (!positional_model.empty()) args.insert(args.begin(), {"--model", positional_model});
  auto cmd = parse_vllm_command(args);
  if (!cmd) return cmd;
  cmd->flags.usage_context = UsageContext::llm_class;
  // Environment set by the script before the call: os.environ["VLLM_X"] = "v".
  // RE2, not std::regex: the script is pasted text of any length, and std::regex recursed once
  // per character of a long value.
  static const RE2 k_env(R"re(os\.environ\[\s*["'](VLLM_[A-Z0-9_]+)["']\s*\]\s*=\s*["']([^"']*)["'])re");
  re2::StringPiece before(text.data(), at);
  std::string name, value;
  while (RE2::FindAndConsume(&before, k_env, &name, &value)) {
    auto applied = apply_vllm_env(cmd->flags, name, value);
    if (!applied) return tl::unexpected(applied.error());
  }
  return cmd;
}

}  // namespace headroom
