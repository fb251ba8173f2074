// libFuzzer target: a safetensors header → the tensor list a checkpoint folder gives → predict()
// and plan's inventory compaction. The header's names, dtypes and shapes reach the engine's weight
// staging (layer numbers, tower prefixes, sharding by name, pipeline stages); a hostile header must
// give a prediction or an error, never an exception or a crash (a layer number past int once ended
// the process). Two catalogue models take the tensors: a dense one and an MoE one, each at TP 2 and
// PP 2 so that sharding and stage placement run.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_engine.h"
#include "plan/compact_weights.h"

namespace {

struct Fixture {
  headroom::ModelSpec dense = headroom::catalog_model("Qwen/Qwen3-0.6B").value();
  headroom::ModelSpec moe = headroom::catalog_model("Qwen/Qwen3-30B-A3B").value();
  headroom::GpuSetup gpus;
  headroom::VllmFlags flags;
  Fixture() {
    gpus.gpu = headroom::GpuCatalog::builtin().find("H100").value();
    gpus.count = 4;
    flags.max_model_len = 4096;
    flags.tensor_parallel_size = 2;
    flags.pipeline_parallel_size = 2;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Fixture fixture;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // A claimed file of 1 TiB: the header alone is the input, and any data offsets below that pass.
  auto tensors = headroom::parse_safetensors_header(bytes, std::uint64_t{1} << 40, "fuzz");
  if (!tensors) return 0;
  headroom::WeightsInventory inventory;
  inventory.exact = true;
  inventory.file_count = 1;
  for (const auto& t : *tensors) inventory.total_bytes += t.bytes;
  inventory.tensors = std::move(*tensors);
  for (const headroom::ModelSpec* base : {&fixture.dense, &fixture.moe}) {
    headroom::ModelSpec model = *base;
    model.weights = inventory;
    (void)headroom::predict(model, fixture.gpus, fixture.flags, headroom::VllmVersion{0, 19, 0});
    (void)headroom::plan::compact_inventory(model, inventory, 2);
  }
  return 0;
}
