// safetensors headers: an 8-byte little-endian length, then a JSON object of tensor entries.
// Only the header is read; tensor data never is.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "model/model_internal.h"
#include "util/json_file.h"
#include "util/regular_file.h"

namespace headroom {

namespace fs = std::filesystem;

namespace {

// The largest header headroom accepts. Real headers are a few MiB at most (DeepSeek-V3 shards
// hold ~1,000 entries each); anything bigger is a corrupt or non-safetensors file.
constexpr std::uint64_t k_max_header_bytes = 100 * 1024 * 1024;

// Bits per element; F4 and F6 are packed below a byte. 0 for a dtype headroom does not know.
int dtype_bits(std::string_view d) {
  if (d == "F4") return 4;
  if (d == "F6_E2M3" || d == "F6_E3M2") return 6;
  return 8 * dtype_bytes(d);
}

Result<TensorInfo> read_entry(const std::string& name, const nlohmann::json& entry, std::uint64_t data_bytes,
                              const std::string& path) {
  auto bad = [&](const std::string& what) {
    return make_error(ErrorCode::parse_error, "tensor \"" + name + "\": " + what, path);
  };
  if (!entry.is_object()) return bad("expected an object, got " + model_detail::json_kind(entry));
  TensorInfo t;
  t.name = name;
  auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) return bad("expected a string \"dtype\"");
  t.dtype = dtype->get<std::string>();
  auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) return bad("expected an array \"shape\"");
  for (const auto& d : *shape) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0) return bad("expected non-negative integers in \"shape\"");
    t.shape.push_back(d.get<std::int64_t>());
  }
  auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned())
    return bad("expected \"data_offsets\" as [begin, end]");
  std::uint64_t begin = (*offsets)[0].get<std::uint64_t>();
  std::uint64_t end = (*offsets)[1].get<std::uint64_t>();
  if (begin > end || end > data_bytes)
    return bad("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] lie outside the " +
               std::to_string(data_bytes) + " data bytes of the file");
  t.bytes = static_cast<Bytes>(end - begin);
  // The safetensors format's own validation (safetensors/src/tensor.rs Metadata::validate): the
  // shape times the dtype's size is the byte range, computed without overflow. A tensor whose shape
  // does not match its bytes is refused, as the loader refuses it.
  if (const int bits = dtype_bits(t.dtype); bits > 0) {
    unsigned __int128 elements = 1;
    for (std::int64_t d : t.shape) {
      elements *= static_cast<std::uint64_t>(d);
      if (elements > (static_cast<unsigned __int128>(1) << 64)) {  // far past any file size; stop before overflow
        elements = (static_cast<unsigned __int128>(1) << 64) + 1;
        break;
      }
    }
    const unsigned __int128 needed_bits = elements * static_cast<unsigned>(bits);
    std::string dims;
    for (std::int64_t d : t.shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    if (needed_bits != static_cast<unsigned __int128>(end - begin) * 8)
      return bad("shape [" + dims + "] of " + t.dtype + " does not match data_offsets [" + std::to_string(begin) + ", " +
                 std::to_string(end) + "] (" + std::to_string(end - begin) + " bytes); the file is corrupt");
  }
  return t;
}

}  // namespace


int dtype_bytes(std::string_view d) {
  if (d == "F64" || d == "I64" || d == "U64" || d == "C64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "BF16" || d == "F16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2" || d == "F8_E8M0" ||
      d == "F8_E4M3FN" || d == "F8_E4M3FNUZ" || d == "F8_E5M2FNUZ")
    return 1;
  // F4 (fp4 e2m1) and F6 types are packed below one byte; their size comes from the data offsets.
  if (d == "F4" || d == "F6_E2M3" || d == "F6_E3M2") return 1;
  return 0;
}

Result<std::uint64_t> safetensors_header_length(std::string_view first_bytes, std::uint64_t file_size,
                                                const std::string& origin) {
  if (file_size < 8 || first_bytes.size() < 8)
    return make_error(ErrorCode::parse_error,
                      "file cut short: " + std::to_string(std::min<std::uint64_t>(file_size, first_bytes.size())) +
                          " bytes, a safetensors file needs at least 8",
                      origin);
  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(first_bytes[static_cast<std::size_t>(i)]);
  if (header_len > k_max_header_bytes)
    return make_error(ErrorCode::parse_error,
                      "header length " + std::to_string(header_len) + " bytes is absurd (limit " +
                          std::to_string(k_max_header_bytes) + "); not a safetensors file?",
                      origin);
  if (header_len > file_size - 8)
    return make_error(ErrorCode::parse_error,
                      "file cut short: the header claims " + std::to_string(header_len) + " bytes but only " +
                          std::to_string(file_size - 8) + " follow the length",
                      origin);
  return header_len;
}

Result<std::vector<TensorInfo>> parse_safetensors_header(std::string_view bytes, std::uint64_t file_size,
                                                         const std::string& origin) {
  auto length = safetensors_header_length(bytes, file_size, origin);
  if (!length) return tl::unexpected(length.error());
  const std::uint64_t header_len = *length;
  if (bytes.size() < 8 + header_len)
    return make_error(ErrorCode::parse_error,
                      "header cut short: " + std::to_string(bytes.size() - 8) + " of its " + std::to_string(header_len) +
                          " bytes were read",
                      origin);
  std::string_view header = bytes.substr(8, header_len);
  auto json = util::parse_json(header, origin);
  if (!json) {
    // Positions inside a one-line header are byte offsets; report them as such.
    Error e = json.error();
    auto col = e.where.substr(e.where.rfind(':') + 1);
    return make_error(ErrorCode::parse_error, "malformed safetensors header at column " + col + " of the header: " + e.message.substr(e.message.find(": ") + 2), origin);
  }
  if (!json->is_object())
    return make_error(ErrorCode::parse_error, "expected a JSON object header, got " + model_detail::json_kind(*json), origin);
  const std::uint64_t data_bytes = file_size - 8 - header_len;
  std::vector<TensorInfo> tensors;
  tensors.reserve(json->size());
  for (const auto& [name, entry] : json->items()) {
    if (name == "__metadata__") continue;
    auto t = read_entry(name, entry, data_bytes, origin);
    if (!t) return tl::unexpected(t.error());
    tensors.push_back(std::move(*t));
  }
  return tensors;
}

Result<std::vector<TensorInfo>> read_safetensors_header(const std::string& path) {
  std::error_code ec;
  if (auto regular = util::check_regular_file(path); !regular) return tl::unexpected(regular.error());
  std::uint64_t file_size = fs::file_size(path, ec);  // follows symlinks (HF cache blobs)
  if (ec) return make_error(ErrorCode::io_error, "cannot read the file size: " + ec.message(), path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::io_error, "cannot open the file", path);
  std::string bytes(std::min<std::uint64_t>(file_size, 8), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!in) return make_error(ErrorCode::io_error, "cannot read the 8-byte header length", path);
  auto length = safetensors_header_length(bytes, file_size, path);
  if (!length) return tl::unexpected(length.error());
  bytes.resize(8 + *length);
  in.read(bytes.data() + 8, static_cast<std::streamsize>(*length));
  if (!in) return make_error(ErrorCode::io_error, "cannot read the header", path);
  return parse_safetensors_header(bytes, file_size, path);
}

Result<std::vector<std::string>> parse_safetensors_index(std::string_view text, const std::string& origin) {
  auto j = util::parse_json(text, origin);
  if (!j) return tl::unexpected(j.error());
  if (!j->is_object()) return make_error(ErrorCode::parse_error, "expected a JSON object, got " + model_detail::json_kind(*j), origin);
  auto map = j->find("weight_map");
  if (map == j->end() || !map->is_object())
    return make_error(ErrorCode::parse_error, "expected an object \"weight_map\"", origin);
  std::set<std::string> names;
  for (const auto& [tensor, file] : map->items()) {
    if (!file.is_string())
      return make_error(ErrorCode::parse_error, "expected a file name for tensor \"" + tensor + "\" in \"weight_map\"", origin);
    const auto& name = file.get_ref<const std::string&>();
    // Shards are files beside the index: a name that climbs out of the folder is hostile.
    if (name.empty() || name.find("..") != std::string::npos || name.front() == '/')
      return make_error(ErrorCode::parse_error, "shard name \"" + name + "\" for tensor \"" + tensor + "\" is not a file beside the index", origin);
    names.insert(name);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

Result<std::optional<WeightsInventory>> read_safetensors_dir(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> files;
  fs::path index = fs::path(dir) / "model.safetensors.index.json";
  if (fs::exists(index, ec)) {
    auto text = util::read_file(index.string());
    if (!text) return tl::unexpected(text.error());
    auto names = parse_safetensors_index(*text, index.string());
    if (!names) return tl::unexpected(names.error());
    for (const auto& name : *names) {
      fs::path p = fs::path(dir) / name;
      if (!fs::exists(p, ec))  // exists() follows symlinks: a dangling HF cache link counts as missing
        return make_error(ErrorCode::not_found,
                          "shard \"" + name + "\" listed in model.safetensors.index.json is missing", p.string());
      files.push_back(p.string());
    }
  } else {
    if (!fs::is_directory(dir, ec)) return make_error(ErrorCode::not_found, "no such folder", dir);
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".safetensors" && fs::is_regular_file(e.path(), ec)) files.push_back(e.path().string());
    }
    if (ec) return make_error(ErrorCode::io_error, "cannot list the folder: " + ec.message(), dir);
    std::sort(files.begin(), files.end());
  }
  if (files.empty()) return std::optional<WeightsInventory>{};
  WeightsInventory inv;
  inv.exact = true;
  inv.file_count = static_cast<int>(files.size());
  for (const auto& f : files) {
    auto tensors = read_safetensors_header(f);
    if (!tensors) return tl::unexpected(tensors.error());
    for (auto& t : *tensors) {
      inv.total_bytes += t.bytes;
      inv.tensors.push_back(std::move(t));
    }
  }
  return std::optional<WeightsInventory>(std::move(inv));
}

}  // namespace headroom
