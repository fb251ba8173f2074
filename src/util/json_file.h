// Reading JSON and JSON Lines with errors that point at path:line:col.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/error.h"

namespace headroom::util {

// Deepest nesting of arrays and objects parse_json accepts. Real inputs nest a few levels; a limit
// keeps recursive code further on (dump, comparison, path scans) bounded on hostile input.
inline constexpr int k_max_json_depth = 256;

// Parses `text`; on failure the error's `where` is "origin:line:col". Nesting deeper than
// k_max_json_depth is a parse_error at the bracket that goes too deep.
Result<nlohmann::json> parse_json(std::string_view text, const std::string& origin);

// Reads and parses a JSON file.
Result<nlohmann::json> read_json_file(const std::string& path);

// Parses JSON Lines (blank lines skipped); an error names the line.
Result<std::vector<nlohmann::json>> parse_jsonl(std::string_view text, const std::string& origin);

// Largest file read_file reads by default: headroom's JSON inputs (config.json, safetensors
// indexes, knowledge-base records, history exports) are far smaller, and a bound keeps memory
// bounded when a path points at something huge.
inline constexpr std::uintmax_t k_max_read_bytes = 32ull << 20;

// Reads a whole file into memory. Errors: not_found, io_error, invalid_argument (a directory, or a
// file larger than max_bytes, which is not read).
Result<std::string> read_file(const std::string& path, std::uintmax_t max_bytes = k_max_read_bytes);

// Line and column (1-based) of a byte offset in `text`.
std::pair<int, int> line_col(std::string_view text, std::size_t offset);

}  // namespace headroom::util
