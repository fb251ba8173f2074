// VllmVersion: a vLLM release whose memory accounting headroom models, and the era it belongs to
// (see docs/ARCHITECTURE.md and the memory-model spec's era table).
#pragma once

#include <compare>
#include <string>
#include <string_view>

#include "headroom/error.h"

namespace headroom {

struct VllmVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  int extra = 0;  // fourth component (0.10.1.1)
  int post = 0;   // .postN

  // Accepts "0.19.0", "v0.10.1.1", "0.6.4.post1", "0.11" and strings with a local suffix
  // ("0.11.0+cu128"). Errors: invalid_argument naming the expected form.
  static Result<VllmVersion> parse(std::string_view text);

  // The newest version headroom accepts as its default for --vllm-version (what `pip install
  // vllm` gives today).
  static VllmVersion newest_modelled();
  // The newest version whose code the accounting rules were read from; later versions are
  // modelled with its rules ("v0.33 modelled with v0.31 rules").
  static VllmVersion newest_described();

  std::string to_string() const;  // "0.19.0", "0.10.1.1", "0.6.4.post1"

  bool is_v1_engine() const { return *this >= VllmVersion{0, 8}; }
  // CUDA graph memory is estimated and subtracted before KV sizing by default (v0.21, #38284).
  bool estimates_cuda_graphs_by_default() const { return *this >= VllmVersion{0, 21}; }

  auto operator<=>(const VllmVersion&) const = default;
};

}  // namespace headroom
