// Byte quantities and the unit conversions vLLM uses: GiB is 2^30 bytes (what vLLM prints);
// GB is 10^9 and is only used where a vendor or vLLM's human-readable parser means it.
#pragma once

#include <cmath>
#include <cstdint>

namespace headroom {

using Bytes = std::int64_t;

inline constexpr Bytes k_kib = 1024;
inline constexpr Bytes k_mib = 1024 * k_kib;
inline constexpr Bytes k_gib = 1024 * k_mib;

inline constexpr double to_gib(Bytes b) { return static_cast<double>(b) / static_cast<double>(k_gib); }
inline Bytes from_gib(double gib) { return static_cast<Bytes>(std::llround(gib * static_cast<double>(k_gib))); }
inline constexpr double to_mib(Bytes b) { return static_cast<double>(b) / static_cast<double>(k_mib); }

// Python's round(x, 2) for display, as vLLM's format_gib does.
inline double round2(double x) { return std::nearbyint(x * 100.0) / 100.0; }

inline constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
inline constexpr std::int64_t round_up(std::int64_t a, std::int64_t multiple) {
  return ceil_div(a, multiple) * multiple;
}

}  // namespace headroom
