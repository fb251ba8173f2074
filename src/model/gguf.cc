// GGUF files (llama.cpp's single-file checkpoints, which vLLM serves with `vllm serve model.gguf
// --tokenizer <base repo>`): the header's metadata and tensor table are read, tensor data never is.
// Layout (ggml/docs/gguf.md, version 2 and 3): "GGUF", u32 version, u64 tensor count, u64
// metadata count, the metadata (key string, u32 type, value), the tensor infos (name, u32 dims,
// u64 sizes innermost first, u32 ggml type, u64 offset), then the data, aligned to
// general.alignment (32 unless stated). Strings are a u64 length and bytes; all little-endian.
#include "model/gguf.h"

#include <algorithm>
#include <cstring>

#include "model/model_internal.h"
#include "util/regular_file.h"

namespace headroom {

namespace {

using nlohmann::json;

constexpr std::uint64_t k_max_tensors = 1'000'000;
constexpr std::uint64_t k_max_metadata = 100'000;
constexpr std::uint64_t k_max_string = 16 * 1024 * 1024;
constexpr std::uint32_t k_max_dims = 8;

// Reads little-endian values from the header bytes; any read past the end sets `short_` and
// yields zeros, so a truncated header is reported once, where it was noticed.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : m_bytes(bytes) {}
  template <class T>
  T number() {
    T v{};
    if (!take(sizeof(T))) return v;
    std::memcpy(&v, m_bytes.data() + m_at - sizeof(T), sizeof(T));
    return v;
  }
  std::string string(std::uint64_t limit = k_max_string) {
    const auto n = number<std::uint64_t>();
    if (n > limit) {
      m_bad = "a string of " + std::to_string(n) + " bytes at offset " + std::to_string(m_at) + " (limit " + std::to_string(limit) + ")";
      return {};
    }
    if (!take(n)) return {};
    return std::string(m_bytes.substr(m_at - n, n));
  }
  bool skip(std::uint64_t n) { return take(n); }
  bool ok() const { return !m_short && m_bad.empty(); }
  bool cut_short() const { return m_short; }
  const std::string& bad() const { return m_bad; }
  void fail(std::string why) {
    if (m_bad.empty()) m_bad = std::move(why);
  }
  std::uint64_t offset() const { return m_at; }

 private:
  bool take(std::uint64_t n) {
    if (!ok() || n > m_bytes.size() - m_at) {
      m_short = m_short || m_bad.empty();
      return false;
    }
    m_at += n;
    return true;
  }
  std::string_view m_bytes;
  std::uint64_t m_at = 0;
  bool m_short = false;
  std::string m_bad;
};

enum ValueType : std::uint32_t { u8 = 0, i8, u16, i16, u32, i32, f32, boolean, string, array, u64, i64, f64 };

std::uint64_t scalar_size(std::uint32_t type) {
  switch (type) {
    case u8: case i8: case boolean: return 1;
    case u16: case i16: return 2;
    case u32: case i32: case f32: return 4;
    case u64: case i64: case f64: return 8;
    default: return 0;
  }
}

json scalar(Reader& r, std::uint32_t type) {
  switch (type) {
    case u8: return r.number<std::uint8_t>();
    case i8: return r.number<std::int8_t>();
    case u16: return r.number<std::uint16_t>();
    case i16: return r.number<std::int16_t>();
    case u32: return r.number<std::uint32_t>();
    case i32: return r.number<std::int32_t>();
    case f32: return r.number<float>();
    case boolean: return r.number<std::uint8_t>() != 0;
    case u64: return r.number<std::uint64_t>();
    case i64: return r.number<std::int64_t>();
    case f64: return r.number<double>();
    case string: return r.string();
    default: r.fail("a metadata value of unknown type " + std::to_string(type)); return nullptr;
  }
}

// A metadata value. Arrays (the tokenizer's vocabulary, merges, scores) are skipped and kept as
// their length only, which is all headroom needs of them (the vocabulary size).
json value(Reader& r, std::uint32_t type) {
  if (type != array) return scalar(r, type);
  const auto elem = r.number<std::uint32_t>();
  const auto count = r.number<std::uint64_t>();
  if (elem == string) {
    for (std::uint64_t i = 0; i < count && r.ok(); ++i) r.skip(r.number<std::uint64_t>());
  } else if (const std::uint64_t size = scalar_size(elem); size > 0) {
    if (count > (std::uint64_t{1} << 40)) r.fail("an array of " + std::to_string(count) + " values");
    else r.skip(count * size);
  } else {
    r.fail("an array of element type " + std::to_string(elem) + " (nested arrays are not read)");
  }
  return json{{"array_length", count}};
}

}  // namespace

Result<GgufHeader> parse_gguf_header(std::string_view bytes, std::uint64_t file_size, const std::string& origin) {
  Reader r(bytes);
  if (bytes.size() < 4 || bytes.substr(0, 4) != "GGUF")
    return make_error(ErrorCode::parse_error, "not a GGUF file (it does not start with \"GGUF\")", origin);
  r.skip(4);
  GgufHeader h;
  h.version = r.number<std::uint32_t>();
  if (r.ok() && (h.version < 2 || h.version > 3))
    return make_error(ErrorCode::unsupported, "GGUF version " + std::to_string(h.version) + " (headroom reads versions 2 and 3)", origin);
  const auto tensors = r.number<std::uint64_t>(), entries = r.number<std::uint64_t>();
  if (tensors > k_max_tensors || entries > k_max_metadata)
    return make_error(ErrorCode::parse_error, "the header claims " + std::to_string(tensors) + " tensors and " +
                                                  std::to_string(entries) + " metadata entries; not a GGUF checkpoint?", origin);
  for (std::uint64_t i = 0; i < entries && r.ok(); ++i) {
    std::string key = r.string(65536);
    const auto type = r.number<std::uint32_t>();
    json v = value(r, type);
    if (r.ok()) h.metadata[key] = std::move(v);
  }
  for (std::uint64_t i = 0; i < tensors && r.ok(); ++i) {
    GgufTensor t;
    t.name = r.string(65536);
    const auto dims = r.number<std::uint32_t>();
    if (r.ok() && dims > k_max_dims) r.fail("tensor \"" + t.name + "\" has " + std::to_string(dims) + " dimensions");
    for (std::uint32_t d = 0; d < dims && r.ok(); ++d) t.dims.push_back(r.number<std::uint64_t>());
    t.type = r.number<std::uint32_t>();
    t.offset = r.number<std::uint64_t>();
    if (r.ok()) h.tensors.push_back(std::move(t));
  }
  if (r.cut_short())
    return make_error(ErrorCode::parse_error, "header cut short: " + std::to_string(bytes.size()) + " bytes read" +
                                                  (bytes.size() < file_size ? " (headroom reads at most this much of a GGUF header)" : ", the file ends there"),
                      origin);
  if (!r.ok()) return make_error(ErrorCode::parse_error, "malformed GGUF header: " + r.bad(), origin);
  h.header_bytes = r.offset();
  return h;
}

}  // namespace headroom
