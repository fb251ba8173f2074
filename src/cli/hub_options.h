// The Hub options of commands that read a model (check, plan): --offline, --quiet, --hub-timeout,
// --hub-connect-timeout, --revision, and the model loading they configure (notes and progress on
// stderr).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "headroom/hub.h"
#include "headroom/model.h"

namespace headroom::cli {

struct HubOptions {
  bool offline = false;
  bool quiet = false;
  std::optional<double> timeout_s;
  std::optional<double> connect_timeout_s;
  std::string revision;  // --revision (vLLM's flag), "" = main
};

// Registers --offline, --quiet, --hub-timeout and --hub-connect-timeout (and --revision when
// `with_revision`: `plan` has no vLLM command line to carry it).
enum class RevisionOption { include, omit };
void add_hub_options(CLI::App& app, HubOptions& options, RevisionOption revision);

// The option names, for split_args.
const std::vector<std::string>& hub_value_flags();
const std::vector<std::string>& hub_bool_flags();

// Loads MODEL with the Hub (settings from the environment and the options): notes on stderr
// ("headroom: note: ..."), progress on stderr when both stdout and stderr are terminals; neither
// with --quiet. Errors: invalid_argument for bad option values, else load_model's.
Result<ModelSpec> load_model_with_hub(const std::string& model_ref, const HubOptions& options);

}  // namespace headroom::cli
