// Shared plumbing of the Python extension (_headroom): errors raised as one Python exception type
// that the pure-Python package turns into headroom.Error subclasses, model loading with the Hub
// settings of the CLI, the run history, and JSON text that is always valid UTF-8.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/error.h"
#include "headroom/history.h"
#include "headroom/model.h"

namespace headroom::python {

namespace py = pybind11;

// The step an error came from: with the error code it picks the Python exception class.
enum class Step { request, model, gpu, predict, history, log };

// Thrown from the bindings (also while the GIL is released) and translated to
// _headroom.LibraryError(kind, code, message, where).
class LibraryError : public std::runtime_error {
 public:
  LibraryError(const Error& error, Step step);
  std::string kind;  // "model", "gpu", "hub", "argument" or "failure"
  std::string code;  // ErrorCode's name
  std::string message;
  std::string where;
};

template <class T>
T take(Result<T> result, Step step) {
  if (!result) throw LibraryError(result.error(), step);
  return std::move(*result);
}

// An error without a location gets `where` (the keyword the value came from).
template <class T>
T take(Result<T> result, Step step, const char* where) {
  if (!result) {
    Error e = result.error();
    if (e.where.empty()) e.where = where;
    throw LibraryError(e, step);
  }
  return std::move(*result);
}

// The Hub settings check and plan take in place of --offline, --hub-timeout, --hub-connect-timeout.
struct HubArgs {
  bool offline = false;
  std::optional<double> timeout_s;
  std::optional<double> connect_timeout_s;
  std::string revision;  // "" = main
};

// load_model with the Hub settings of the environment (HF_ENDPOINT, HF_HUB_OFFLINE, HF_TOKEN, ...)
// and `hub`, as the CLI's load_model_with_hub; notes are appended to `notes` instead of printed.
ModelSpec load_model_with(const std::string& ref, const HubArgs& hub, std::vector<std::string>& notes);

// The run history at `db` / $HEADROOM_DB / the default location, as the CLI reads it: none when
// `no_history`; an unreadable database is a warning. `location` receives where it looked.
std::vector<RunRecord> read_history_for(const std::string& db, bool no_history, std::string& location,
                                        std::vector<std::string>& warnings);

// JSON text as the CLI prints it (indent 2), invalid UTF-8 replaced, so Python can decode it.
std::string dump(const nlohmann::json& j);

void register_errors(py::module_& m);
void bind_vllm_engine(py::module_& m);
void bind_plan(py::module_& m);
void bind_diagnose(py::module_& m);
void bind_gpu(py::module_& m);
void bind_model(py::module_& m);
void bind_history(py::module_& m);

}  // namespace headroom::python
