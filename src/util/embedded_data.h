// Files from data/ compiled into the library (see cmake/embed_data.cmake).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace headroom::embedded {

struct EmbeddedFile {
  const char* path;  // relative to data/, e.g. "models.jsonl", "kb/cuda_oom.json"
  const char* data;
  std::size_t size;
};

// Null-terminated table (the last entry has path == nullptr).
const EmbeddedFile* files();

// The files of web/ (the page of `headroom serve`), relative to web/, in the same form.
const EmbeddedFile* web_files();

// The content of data/<path>, if it was embedded.
std::optional<std::string_view> find(std::string_view path);

// Every embedded file whose path starts with `prefix` (e.g. "kb/").
std::vector<EmbeddedFile> with_prefix(std::string_view prefix);

}  // namespace headroom::embedded
