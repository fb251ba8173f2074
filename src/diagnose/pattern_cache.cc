#include "diagnose/pattern_cache.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "util/json_file.h"
#include "util/regular_file.h"

namespace headroom::pattern_cache {

namespace {

constexpr std::string_view k_magic = "headroom-hyperscan-1\n";
// Larger than any database of headroom's signatures (about 1 MB); a bigger file is not read.
constexpr std::uintmax_t k_max_file_bytes = 64ull << 20;

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<std::size_t>(i)] = digits[v & 15];
  return out;
}

std::filesystem::path folder() {
  if (const char* own = std::getenv("HEADROOM_PATTERN_CACHE"); own && *own)
    return std::string_view(own) == "0" ? std::filesystem::path() : std::filesystem::path(own);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "headroom" / "patterns";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".cache" / "headroom" / "patterns";
  return {};
}

}  // namespace

std::string path_for(const std::vector<std::string>& patterns, unsigned flags) {
  const std::filesystem::path dir = folder();
  if (dir.empty()) return {};
  std::uint64_t h = fnv1a(hs_version());
  h = fnv1a(std::to_string(flags), h);
  for (const auto& p : patterns) h = fnv1a(std::string_view(p.data(), p.size() + 1), h);  // with its NUL
  return (dir / (hex(h) + ".hsdb")).string();
}

hs_database_t* load(const std::vector<std::string>& patterns, unsigned flags) {
  const std::string path = path_for(patterns, flags);
  if (path.empty()) return nullptr;
  auto text = util::read_file(path, k_max_file_bytes);
  if (!text) return nullptr;
  // magic, 16 hex digits of the payload's hash, a newline, the payload (hs_serialize_database).
  const std::size_t header = k_magic.size() + 17;
  if (text->size() <= header || std::string_view(*text).substr(0, k_magic.size()) != k_magic) return nullptr;
  const std::string_view payload = std::string_view(*text).substr(header);
  if (text->substr(k_magic.size(), 16) != hex(fnv1a(payload))) return nullptr;
  hs_database_t* db = nullptr;
  if (hs_deserialize_database(payload.data(), payload.size(), &db) != HS_SUCCESS) return nullptr;
  return db;
}

void store(const std::vector<std::string>& patterns, unsigned flags, const hs_database_t* db) {
  const std::string path = path_for(patterns, flags);
  if (path.empty() || db == nullptr) return;
  char* bytes = nullptr;
  std::size_t size = 0;
  if (hs_serialize_database(db, &bytes, &size) != HS_SUCCESS || bytes == nullptr) return;
  std::string payload(bytes, size);
  std::free(bytes);  // hs_serialize_database allocates with the misc allocator, malloc by default
  std::string content(k_magic);
  content += hex(fnv1a(payload));
  content += '\n';
  content += payload;
  (void)util::write_file_atomically(path, content);
}

}  // namespace headroom::pattern_cache
