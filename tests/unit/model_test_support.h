// Temporary folders and safetensors files for the model tests.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "headroom/model.h"

namespace headroom::test_support {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "headroom-model-XXXXXX").string();
    m_path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  fs::path path() const { return m_path; }

 private:
  fs::path m_path;
};

inline void write_bytes(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

inline std::string le64(std::uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// A safetensors file: length, header, then `data_bytes` zero bytes.
inline std::string safetensors(const std::string& header, std::size_t data_bytes) {
  return le64(header.size()) + header + std::string(data_bytes, '\0');
}

// The tensor of an inventory by name, or nullptr.
inline const TensorInfo* find_tensor(const WeightsInventory& inv, const std::string& name) {
  for (const auto& t : inv.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace headroom::test_support
