#include "headroom/check_document.h"

#include <cctype>
#include <string_view>

#include "headroom/report.h"

namespace headroom {

nlohmann::json check_document(const ModelSpec& model, const GpuSetup& gpus, const Prediction& prediction,
                              const std::vector<std::string>& command_warnings, const std::vector<RunRecord>& records,
                              const HistoryAdvice& advice, const std::string& history_location) {
  auto j = prediction_to_json(model, gpus, prediction);
  for (const auto& w : command_warnings) j["warnings"].push_back(w);
  if (!records.empty()) {
    nlohmann::json failures = nlohmann::json::array();
    for (const auto& f : advice.failures) failures.push_back(f.citation());
    j["history"] = {{"database", redact_location(history_location)}, {"records", records.size()}, {"failed_configurations", failures}};
  }
  return j;
}

namespace {

// Linear scans, no regex: the text can be a client's (an unknown model name in an API error), and
// std::regex recursed once per character (a 50,000-character name overflowed a worker's stack).
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool is_scheme_char(char c) { return is_alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '.' || c == '-'; }

// True when the characters just before `pos` end a URL scheme ([A-Za-z][A-Za-z0-9+.-]*).
bool scheme_ends_at(const std::string& text, std::size_t pos) {
  for (std::size_t i = pos; i > 0 && is_scheme_char(text[i - 1]); --i) {
    if (is_alpha(text[i - 1])) return true;
  }
  return false;
}

// scheme://user:password@ -> scheme://user:***@
std::string redact_userinfo(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  for (std::size_t at = text.find("://"); at != std::string::npos; at = text.find("://", at + 3)) {
    if (at < copied || !scheme_ends_at(text, at)) continue;
    std::size_t i = at + 3;
    while (i < text.size() && text[i] != '/' && text[i] != '@' && text[i] != ':' && !is_space(text[i])) ++i;
    if (i >= text.size() || text[i] != ':') continue;
    const std::size_t password = i + 1;
    std::size_t j = password;
    while (j < text.size() && text[j] != '@' && text[j] != '/' && !is_space(text[j])) ++j;
    if (j >= text.size() || text[j] != '@') continue;
    out.append(text, copied, password - copied);
    out += "***@";
    copied = j + 1;
  }
  out.append(text, copied, std::string::npos);
  return out;
}

// password=value (libpq's key/value and URL query forms, any case) -> password=***
std::string redact_password_keyword(const std::string& text) {
  static constexpr std::string_view k_key = "password=";
  std::string lower(text);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  for (std::size_t at = lower.find(k_key); at != std::string::npos; at = lower.find(k_key, copied)) {
    std::size_t value = at + k_key.size();
    std::size_t end = value;
    while (end < text.size() && text[end] != '&' && !is_space(text[end])) ++end;
    out.append(text, copied, value - copied);
    out += "***";
    copied = end;
  }
  out.append(text, copied, std::string::npos);
  return out;
}

}  // namespace

std::string redact_location(std::string text) {
  return redact_password_keyword(redact_userinfo(text));
}

}  // namespace headroom
