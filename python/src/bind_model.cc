// headroom/model.h for Python: the ids of the built-in model catalogue.
#include <pybind11/stl.h>

#include "binding.h"
#include "headroom/model.h"

namespace headroom::python {

void bind_model(py::module_& m) {
  m.def("catalog_model_ids", [] { return catalog_model_ids(); }, "The ids of the built-in model catalogue.");
}

}  // namespace headroom::python
