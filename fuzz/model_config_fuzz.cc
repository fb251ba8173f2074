// libFuzzer target: config.json text → parse_model_config_text (never crashes; errors are values),
// then the spec's synthesized tensors, and a prediction on one H100 at TP 2: the config's numbers
// reach every stage of predict() (layer kinds, heads, experts, windows, quantization), which must
// answer with a prediction or an error, never crash. A second prediction limits images and video
// to 0, so a multimodal config's audio encoder pass (its own dummy clips) is sized too.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_engine.h"

namespace {

struct Fixture {
  headroom::GpuSetup gpus;
  headroom::VllmFlags flags;
  headroom::VllmFlags audio_only;
  Fixture() {
    gpus.gpu = headroom::GpuCatalog::builtin().find("H100").value();
    gpus.count = 2;
    flags.max_model_len = 4096;
    flags.tensor_parallel_size = 2;
    audio_only = flags;
    audio_only.limit_mm_per_prompt = {{"image", 0}, {"video", 0}};
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Fixture fixture;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = headroom::parse_model_config_text(text, "fuzz/config.json");
  if (!spec) return 0;
  (void)headroom::synthesize_weights(*spec);
  (void)headroom::predict(*spec, fixture.gpus, fixture.flags, headroom::VllmVersion{0, 19, 0});
  if (spec->audio) (void)headroom::predict(*spec, fixture.gpus, fixture.audio_only, headroom::VllmVersion{0, 19, 0});
  return 0;
}
