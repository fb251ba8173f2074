#include "util/embedded_data.h"

namespace headroom::embedded {

std::optional<std::string_view> find(std::string_view path) {
  for (const EmbeddedFile* f = files(); f->path != nullptr; ++f) {
    if (path == f->path) return std::string_view(f->data, f->size);
  }
  return std::nullopt;
}

std::vector<EmbeddedFile> with_prefix(std::string_view prefix) {
  std::vector<EmbeddedFile> out;
  for (const EmbeddedFile* f = files(); f->path != nullptr; ++f) {
    if (std::string_view(f->path).starts_with(prefix)) out.push_back(*f);
  }
  return out;
}

}  // namespace headroom::embedded
