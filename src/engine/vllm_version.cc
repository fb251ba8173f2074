#include "headroom/vllm_version.h"

#include <charconv>
#include <cstdint>
#include <string>

#include "headroom/engine_limits.h"

namespace headroom {

namespace {

enum class Parsed { ok, malformed, too_large };

// A version component: digits only, at most limits::k_max_version_component (an overflowing
// 4294967296 is refused, not wrapped to 0).
Parsed parse_int(std::string_view s, int& out) {
  if (s.empty()) return Parsed::malformed;
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) return Parsed::too_large;
  if (ec != std::errc() || p != s.data() + s.size()) return Parsed::malformed;
  if (v < 0) return Parsed::malformed;
  if (v > limits::k_max_version_component) return Parsed::too_large;
  out = static_cast<int>(v);
  return Parsed::ok;
}

}  // namespace

Result<VllmVersion> VllmVersion::parse(std::string_view text) {
  std::string_view s = text;
  // Long text is cut before it is quoted back.
  const std::string shown = text.size() > 64 ? std::string(text.substr(0, 64)) + "..." : std::string(text);
  auto fail = [&] {
    return make_error(ErrorCode::invalid_argument,
                      "expected a vLLM version like 0.19.0, v0.10.1.1 or 0.6.4.post1, got '" + shown + "'",
                      "--vllm-version");
  };
  auto too_large = [&](std::string_view piece) {
    const std::string number = piece.size() > 24 ? std::string(piece.substr(0, 24)) + "..." : std::string(piece);
    return make_error(ErrorCode::invalid_argument,
                      "version component " + number + " in '" + shown + "' is out of range (each part is at most " +
                          std::to_string(limits::k_max_version_component) + "); expected a vLLM version like 0.19.0",
                      "--vllm-version");
  };
  auto component = [&](std::string_view piece, int& out) -> Result<void> {
    switch (parse_int(piece, out)) {
      case Parsed::ok: return {};
      case Parsed::too_large: return too_large(piece);
      case Parsed::malformed: break;
    }
    return fail();
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
      if (auto r = component(piece.substr(4), v.post); !r) return tl::unexpected(r.error());
    } else if (piece.starts_with("dev")) {
      // 0.11.1.dev12: development build of the version before it; keep the numbers.
    } else {
      std::size_t digits = 0;
      while (digits < piece.size() && piece[digits] >= '0' && piece[digits] <= '9') ++digits;
      std::string_view tail = piece.substr(digits);
      if (digits == 0 || count == 4) return fail();
      if (!tail.empty() && !tail.starts_with("rc") && !tail.starts_with("post")) return fail();
      if (auto r = component(piece.substr(0, digits), parts[count++]); !r) return tl::unexpected(r.error());
      if (tail.starts_with("post"))
        if (auto r = component(tail.substr(4), v.post); !r) return tl::unexpected(r.error());
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
