// Reading JSON and JSON Lines with errors that point at path:line:col.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/error.h"

namespace headroom::util {

// Parses `text`; on failure the error's `where` is "origin:line:col".
Result<nlohmann::json> parse_json(std::string_view text, const std::string& origin);

// Reads and parses a JSON file.
Result<nlohmann::json> read_json_file(const std::string& path);

// Parses JSON Lines (blank lines skipped); an error names the line.
Result<std::vector<nlohmann::json>> parse_jsonl(std::string_view text, const std::string& origin);

// Reads a whole file into memory. Errors: not_found, io_error.
Result<std::string> read_file(const std::string& path);

// Line and column (1-based) of a byte offset in `text`.
std::pair<int, int> line_col(std::string_view text, std::size_t offset);

}  // namespace headroom::util
