// SHA-256 (FIPS 180-4) for content keys: duplicate detection of recorded logs and model config
// hashes. Not used for anything security-related.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace headroom::util {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  // The digest as 64 lowercase hex characters. Call once.
  std::string hex_digest();

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> m_h;
  std::array<unsigned char, 64> m_buffer{};
  std::size_t m_buffered = 0;
  std::uint64_t m_length = 0;
};

std::string sha256_hex(std::string_view bytes);

}  // namespace headroom::util
