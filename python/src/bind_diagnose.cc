// headroom/diagnose.h for Python: diagnose() of one log, given as a path or as its text, answered
// with diagnose's --format json document (diagnosis_json).
#include <pybind11/stl.h>

#include "binding.h"
#include "headroom/diagnose.h"
#include "headroom/knowledge_base.h"

namespace headroom::python {

namespace {

struct DiagnoseOutput {
  std::string document;
  std::vector<std::string> warnings;
};

DiagnoseOutput run_diagnose(std::unique_ptr<ByteSource> source, int gpus, const std::vector<std::string>& kb_dirs) {
  DiagnoseOutput out;
  auto kb = take(KnowledgeBase::load(kb_dirs), Step::request);
  auto engine = prediction_fix_engine();
  DiagnoseOptions options;
  options.fix.engine = engine.get();
  if (gpus > 0) options.fix.gpus = gpus;
  Diagnosis d = take(diagnose(*source, kb, options), Step::log);
  for (const auto& w : d.warnings) out.warnings.push_back(d.source + ": " + w);
  if (d.bytes == 0) out.warnings.push_back(d.source + ": the log is empty; nothing to diagnose");
  out.document = dump(to_json(d));
  return out;
}

}  // namespace

void bind_diagnose(py::module_& m) {
  m.def(
      "diagnose_path",
      [](const py::bytes& path, int gpus, const std::vector<std::string>& kb_dirs) {
        std::string p = path;  // bytes: any file name the OS allows, UTF-8 or not
        DiagnoseOutput out;
        {
          py::gil_scoped_release nogil;
          out = run_diagnose(take(open_log(p), Step::log), gpus, kb_dirs);
        }
        return py::make_tuple(out.document, out.warnings);
      },
      py::arg("path"), py::arg("gpus"), py::arg("kb_dirs"),
      "diagnose --format json of the log at `path` (plain or gzip): (document JSON text, warnings).");
  m.def(
      "diagnose_text",
      [](const py::bytes& text, const std::string& name, int gpus, const std::vector<std::string>& kb_dirs) {
        std::string bytes = text;
        DiagnoseOutput out;
        {
          py::gil_scoped_release nogil;
          out = run_diagnose(memory_source(std::move(bytes), name), gpus, kb_dirs);
        }
        return py::make_tuple(out.document, out.warnings);
      },
      py::arg("text"), py::arg("name"), py::arg("gpus"), py::arg("kb_dirs"),
      "diagnose --format json of a log's bytes: (document JSON text, warnings).");
}

}  // namespace headroom::python
