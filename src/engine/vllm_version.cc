#include "headroom/vllm_version.h"

#include <charconv>
#include <string>

namespace headroom {

namespace {

bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

Result<VllmVersion> VllmVersion::parse(std::string_view text) {
  std::string_view s = text;
  auto fail = [&] {
    return make_error(ErrorCode::invalid_argument,
                      "expected a vLLM version like 0.19.0, v0.10.1.1 or 0.6.4.post1, got '" + std::string(text) + "'",
                      "--vllm-version");
  };
  while (!s.empty() && (s.front() == ' ')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ')) s.remove_suffix(1);
  if (!s.empty() && (s.front() == 'v' || s.front() == 'V')) s.remove_prefix(1);
  if (auto plus = s.find('+'); plus != std::string_view::npos) s = s.substr(0, plus);  // local suffix
  VllmVersion v;
  // Pre-release and dev suffixes (0.11.0rc1, 0.11.1.dev12) keep the numeric part.
  int parts[4] = {0, 0, 0, 0};
  int count = 0;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t dot = s.find('.', start);
    std::string_view piece = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (piece.starts_with("post")) {
      if (!parse_int(piece.substr(4), v.post)) return fail();
    } else if (piece.starts_with("dev")) {
      // 0.11.1.dev12: development build of the version before it; keep the numbers.
    } else {
      std::size_t digits = 0;
      while (digits < piece.size() && piece[digits] >= '0' && piece[digits] <= '9') ++digits;
      std::string_view tail = piece.substr(digits);
      if (digits == 0 || count == 4) return fail();
      if (!tail.empty() && !tail.starts_with("rc") && !tail.starts_with("post")) return fail();
      parse_int(piece.substr(0, digits), parts[count++]);
      if (tail.starts_with("post") && !parse_int(tail.substr(4), v.post)) return fail();
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (count < 2) return fail();
  v.major = parts[0];
  v.minor = parts[1];
  v.patch = parts[2];
  v.extra = parts[3];
  return v;
}

// 0.33.0 was published in November 2026; the newest release whose changes are described from
// code, release notes and PRs is 0.31 (../shared/spec/vllm-v026-v033.md §1).
VllmVersion VllmVersion::newest_modelled() { return VllmVersion{0, 33, 0}; }
VllmVersion VllmVersion::newest_described() { return VllmVersion{0, 31, 0}; }

std::string VllmVersion::to_string() const {
  std::string s = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  if (extra) s += "." + std::to_string(extra);
  if (post) s += ".post" + std::to_string(post);
  return s;
}

}  // namespace headroom
