#include "diagnose/pattern_cache.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "util/json_file.h"
#include "util/regular_file.h"
#include "util/sha256.h"

namespace headroom::pattern_cache {

namespace {

constexpr std::string_view k_magic = "headroom-hyperscan-2\n";
// Larger than any database of headroom's signatures (about 1 MB); a bigger file is not read.
constexpr std::uintmax_t k_max_file_bytes = 64ull << 20;

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
  std::string key = std::string(hs_version()) + '\0' + std::to_string(flags) + '\0';
  for (const auto& p : patterns) key.append(p.data(), p.size() + 1);  // each with its NUL
  return (dir / (util::sha256_hex(key).substr(0, 16) + ".hsdb")).string();
}

hs_database_t* load(const std::vector<std::string>& patterns, unsigned flags) {
  const std::string path = path_for(patterns, flags);
  if (path.empty()) return nullptr;
  auto text = util::read_file(path, k_max_file_bytes);
  if (!text) return nullptr;
  // magic, the payload's SHA-256 in hex, a newline, the payload (hs_serialize_database).
  const std::size_t header = k_magic.size() + 65;
  if (text->size() <= header || std::string_view(*text).substr(0, k_magic.size()) != k_magic) return nullptr;
  const std::string_view payload = std::string_view(*text).substr(header);
  if (text->substr(k_magic.size(), 64) != util::sha256_hex(payload)) return nullptr;
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
  content += util::sha256_hex(payload);
  content += '\n';
  content += payload;
  (void)util::write_file_atomically(path, content);
}

}  // namespace headroom::pattern_cache
