// headroom/gpu.h and gpu_probe.h for Python: the GPU catalogue and this host's live GPUs, as
// `headroom gpus [--catalog] --format json` renders them (gpu_json).
#include <pybind11/stl.h>

#include "binding.h"
#include "headroom/gpu.h"
#include "headroom/gpu_json.h"
#include "headroom/gpu_probe.h"

namespace headroom::python {

void bind_gpu(py::module_& m) {
  m.def("gpu_catalog", [] { return dump(gpu_catalog_to_json(GpuCatalog::builtin())); },
        "gpus --catalog --format json: the built-in GPU catalogue.");
  m.def(
      "gpu_inventory",
      [] {
        std::string document;
        std::vector<std::string> warnings;
        {
          py::gil_scoped_release nogil;
          auto inventory = take(probe_gpus(), Step::gpu);
          warnings = inventory.warnings;
          document = dump(gpu_inventory_to_json(inventory));
        }
        return py::make_tuple(document, warnings);
      },
      "gpus --format json: this host's GPUs (NVML, else nvidia-smi): (document JSON text, warnings).");
}

}  // namespace headroom::python
