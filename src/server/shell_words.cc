// POSIX shell word splitting without expansion, for pasted `vllm serve ...` command lines.
#include "headroom/api_request.h"

namespace headroom {

Result<std::vector<std::string>> split_shell_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  enum class Quote { none, single, double_ } quote = Quote::none;
  std::size_t quote_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote == Quote::single) {
      if (c == '\'') quote = Quote::none;
      else word += c;
      continue;
    }
    if (quote == Quote::double_) {
      if (c == '"') {
        quote = Quote::none;
      } else if (c == '\\' && i + 1 < text.size() && std::string_view("\"\\$`\n").find(text[i + 1]) != std::string_view::npos) {
        if (text[i + 1] != '\n') word += text[i + 1];
        ++i;
      } else {
        word += c;
      }
      continue;
    }
    if (c == '\\') {
      if (i + 1 < text.size()) {
        // Backslash-newline joins lines (a command pasted with continuations); otherwise the next
        // character is taken as it is.
        if (text[i + 1] != '\n' && text[i + 1] != '\r') {
          word += text[i + 1];
          in_word = true;
        } else if (text[i + 1] == '\r' && i + 2 < text.size() && text[i + 2] == '\n') {
          ++i;
        }
        ++i;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c == '\'' ? Quote::single : Quote::double_;
      quote_start = i;
      in_word = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    word += c;
    in_word = true;
  }
  if (quote != Quote::none)
    return make_error(ErrorCode::parse_error,
                      std::string("unterminated ") + (quote == Quote::single ? "single" : "double") + " quote opened at byte " +
                          std::to_string(quote_start + 1),
                      "command");
  if (in_word) words.push_back(std::move(word));
  return words;
}

}  // namespace headroom
