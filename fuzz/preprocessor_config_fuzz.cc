// libFuzzer target: preprocessor_config.json text → apply_preprocessor_config on the catalogue's
// Qwen3-VL-30B-A3B, Llama 4 Scout and Kimi-VL (each reads other keys: the pixel budget, the tile
// count, the patch limit), then predict() on one H100 at v0.11 and v0.19, so that whatever sizes
// the file gives reach the encoder profile's arithmetic (the frame search, the tiles, the scaled
// dummy image). It must answer with a prediction or an error, never crash.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_engine.h"
#include "model/model_internal.h"
#include "util/json_file.h"

namespace {

struct Fixture {
  headroom::GpuSetup gpus;
  headroom::VllmFlags flags;
  std::vector<headroom::ModelSpec> models;
  Fixture() {
    gpus.gpu = headroom::GpuCatalog::builtin().find("H100").value();
    gpus.count = 1;
    flags.max_model_len = 65536;
    for (const char* id : {"Qwen/Qwen3-VL-30B-A3B-Instruct", "meta-llama/Llama-4-Scout-17B-16E-Instruct",
                           "moonshotai/Kimi-VL-A3B-Instruct"})
      if (auto m = headroom::catalog_model(id)) models.push_back(*m);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Fixture fixture;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto json = headroom::util::parse_json(text, "fuzz/preprocessor_config.json");
  if (!json) return 0;
  for (const auto& base : fixture.models) {
    headroom::ModelSpec model = base;
    auto applied = headroom::model_detail::apply_preprocessor_config(*json, "fuzz/preprocessor_config.json", model);
    if (!applied) continue;
    for (headroom::VllmVersion v : {headroom::VllmVersion{0, 11, 0}, headroom::VllmVersion{0, 19, 0}})
      (void)headroom::predict(model, fixture.gpus, fixture.flags, v);
  }
  return 0;
}
