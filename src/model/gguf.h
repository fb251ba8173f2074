// GGUF checkpoints (llama.cpp's single-file format): the header read without the tensor data, and
// the ModelSpec vLLM's GGUF loader would build from it (gguf.cc, gguf_model.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/error.h"
#include "headroom/model.h"

namespace headroom {

struct GgufTensor {
  std::string name;                 // llama.cpp's name: "blk.3.attn_q.weight"
  std::vector<std::uint64_t> dims;  // innermost first (ne[0] is a row's length)
  std::uint32_t type = 0;           // ggml type id (F16 = 1, Q4_K = 12, ...)
  std::uint64_t offset = 0;         // into the data section
};

struct GgufHeader {
  std::uint32_t version = 0;
  nlohmann::json metadata = nlohmann::json::object();  // scalars as read; arrays as {"array_length": n}
  std::vector<GgufTensor> tensors;
  std::uint64_t header_bytes = 0;  // where the header ends (the data starts at the next alignment)
};

// Parses a GGUF header from the first bytes of a file of `file_size` bytes. Errors: parse_error
// for a file that is not GGUF, a header cut short (or longer than `bytes`), absurd counts or
// sizes; unsupported for GGUF version 1.
Result<GgufHeader> parse_gguf_header(std::string_view bytes, std::uint64_t file_size, const std::string& origin);

// The ModelSpec of a parsed GGUF header: the architecture from general.architecture and its
// "<arch>.*" keys, the weights from the tensor table (each tensor's bytes from its ggml type's
// block size, names mapped to the Hugging Face layout vLLM's loader maps them to), quantization
// "gguf". Errors: parse_error for tensors whose data lies outside the file or whose sizes do not
// fill whole blocks; unsupported for an architecture headroom does not map.
Result<ModelSpec> gguf_model(const GgufHeader& header, std::uint64_t file_size, const std::string& origin);

// Reads a .gguf file's header (at most 64 MiB of it) and builds its ModelSpec.
Result<ModelSpec> read_gguf_model(const std::string& path);

}  // namespace headroom
