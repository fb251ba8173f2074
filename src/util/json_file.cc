#include "util/json_file.h"

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "util/regular_file.h"

namespace headroom::util {

std::pair<int, int> line_col(std::string_view text, std::size_t offset) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

namespace {

// Offset of the first bracket that opens level k_max_json_depth + 1 (outside strings), if any.
std::optional<std::size_t> too_deep_at(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > k_max_json_depth) return i;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<nlohmann::json> parse_json(std::string_view text, const std::string& origin) {
  if (auto at = too_deep_at(text)) {
    auto [line, col] = line_col(text, *at);
    return make_error(ErrorCode::parse_error,
                      "malformed JSON: nested deeper than " + std::to_string(k_max_json_depth) + " levels",
                      origin + ":" + std::to_string(line) + ":" + std::to_string(col));
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports the byte index just past the offending character.
    std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    auto [line, col] = line_col(text, offset);
    std::string msg = e.what();
    // Keep the part after "parse error at line X, column Y: " which nlohmann embeds.
    if (auto pos = msg.find(": syntax error"); pos != std::string::npos) msg = msg.substr(pos + 2);
    else if (auto p2 = msg.rfind("]: "); p2 != std::string::npos) msg = msg.substr(p2 + 3);
    return make_error(ErrorCode::parse_error, "malformed JSON: " + msg,
                      origin + ":" + std::to_string(line) + ":" + std::to_string(col));
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406: a number too large for a double ("1e99999"); no position is reported.
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    return make_error(ErrorCode::parse_error, "malformed JSON: " + msg, origin);
  }
}

Result<std::string> read_file(const std::string& path, std::uintmax_t max_bytes) {
  auto file = RegularFile::open(path);
  if (!file) return tl::unexpected(file.error());
  auto too_large = [&](std::uintmax_t size) {
    return make_error(ErrorCode::invalid_argument,
                      "expected a file of at most " + std::to_string(max_bytes >> 20) + " MiB, found " +
                          std::to_string(size >> 20) + " MiB; it was not read",
                      path);
  };
  if (file->size() > max_bytes) return too_large(file->size());
  // Read in pieces up to the limit: a file that grows while it is read has no size to check
  // beforehand.
  std::string out;
  std::vector<char> buf(1 << 16);
  for (;;) {
    long n = file->read(buf.data(), buf.size());
    if (n < 0) return make_error(ErrorCode::io_error, std::string("cannot read: ") + std::strerror(errno), path);
    if (n == 0) break;
    out.append(buf.data(), static_cast<std::size_t>(n));
    if (out.size() > max_bytes) return too_large(out.size());
  }
  return out;
}

Result<nlohmann::json> read_json_file(const std::string& path) {
  auto text = read_file(path);
  if (!text) return tl::unexpected(text.error());
  return parse_json(*text, path);
}

Result<std::vector<nlohmann::json>> parse_jsonl(std::string_view text, const std::string& origin) {
  std::vector<nlohmann::json> out;
  std::size_t start = 0;
  int line_no = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto j = parse_json(line, origin + ":" + std::to_string(line_no));
    if (!j) {
      // parse_json reported origin:N:line:col; rewrite to origin:N:col.
      Error e = j.error();
      auto col_pos = e.where.rfind(':');
      e.where = origin + ":" + std::to_string(line_no) + ":" + e.where.substr(col_pos + 1);
      return tl::unexpected(e);
    }
    out.push_back(std::move(*j));
  }
  return out;
}

}  // namespace headroom::util
