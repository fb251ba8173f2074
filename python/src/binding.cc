#include "binding.h"

#include "headroom/hub.h"

namespace headroom::python {

namespace {

// Which Python class an error becomes: a name the catalogue and the Hub do not know is
// UnknownModel, a GPU name the catalogue does not hold UnknownGpu, a Hub that cannot be reached or
// refuses HubError, a value the user gave InvalidArgument; the rest Error.
std::string kind_of(const Error& e, Step step) {
  if (step == Step::model) {
    if (e.code == ErrorCode::not_found) return "model";
    if (e.code == ErrorCode::unavailable) return "hub";
  }
  if (step == Step::gpu && e.code == ErrorCode::not_found) return "gpu";
  if (e.code == ErrorCode::invalid_argument) return "argument";
  if (step == Step::request && e.code == ErrorCode::parse_error) return "argument";
  return "failure";
}

}  // namespace

LibraryError::LibraryError(const Error& e, Step step)
    : std::runtime_error(e.to_string()), kind(kind_of(e, step)), code(to_string(e.code)), message(e.message), where(e.where) {}

void register_errors(py::module_& m) {
  // Never destroyed: the interpreter may be gone when static destructors run.
  static auto* type = new py::exception<LibraryError>(m, "LibraryError");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const LibraryError& e) {
      py::tuple args = py::make_tuple(e.kind, e.code, py::str(py::bytes(e.message).attr("decode")("utf-8", "replace")),
                                      py::str(py::bytes(e.where).attr("decode")("utf-8", "replace")));
      PyErr_SetObject(type->ptr(), args.ptr());
    }
  });
}

ModelSpec load_model_with(const std::string& ref, const HubArgs& hub, std::vector<std::string>& notes) {
  hub::HubSettings settings = hub::settings_from_environment();
  if (hub.offline) settings.offline = true;
  if (!hub.revision.empty()) settings.revision = hub.revision;
  if (hub.timeout_s) {
    if (!(*hub.timeout_s > 0))
      throw LibraryError({ErrorCode::invalid_argument, "expected a positive number of seconds", "hub_timeout"}, Step::request);
    settings.total_timeout_s = *hub.timeout_s;
  }
  if (hub.connect_timeout_s) {
    if (!(*hub.connect_timeout_s > 0))
      throw LibraryError({ErrorCode::invalid_argument, "expected a positive number of seconds", "hub_connect_timeout"},
                         Step::request);
    settings.connect_timeout_s = *hub.connect_timeout_s;
  }
  ModelLoadOptions load;
  load.hub = &settings;
  load.on_note = [&notes](const std::string& note) { notes.push_back(note); };
  return take(load_model(ref, load), Step::model);
}

std::vector<RunRecord> read_history_for(const std::string& db, bool no_history, std::string& location,
                                        std::vector<std::string>& warnings) {
  location.clear();
  if (no_history) return {};
  location = default_history_location(db);
  auto read = read_history(location);
  if (!read) {
    warnings.push_back("run history not used: " + read.error().to_string());
    return {};
  }
  return std::move(*read);
}

std::string dump(const nlohmann::json& j) { return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace headroom::python

PYBIND11_MODULE(_headroom, m) {
  namespace hp = headroom::python;
  m.doc() = "headroom's C++ library: vLLM startup memory predictions, plans, log diagnoses and run history";
  m.attr("version") = HEADROOM_VERSION;
  hp::register_errors(m);
  hp::bind_vllm_engine(m);
  hp::bind_plan(m);
  hp::bind_diagnose(m);
  hp::bind_gpu(m);
  hp::bind_model(m);
  hp::bind_history(m);
}
