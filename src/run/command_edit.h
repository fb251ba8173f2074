// Editing the user's command line the way a person would: a flag's value replaced where it
// stands (whatever spelling was used: --max-model-len, --max_model_len, -tp, --flag=value), a new
// flag appended at the end (where a container command's vLLM arguments are), a dropped flag
// removed, an environment variable set for the child (`-e VAR=value` for a container).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "run/process_host.h"

namespace headroom::run {

// A change in diagnose's and check's spelling: {"--max-model-len", "8192"}; a boolean flag has the
// value ""; {"ENV", "VAR=value"} is an environment variable.
using FlagEdits = std::vector<std::pair<std::string, std::string>>;

// `spec` with `set` applied and the flags in `removed` taken out.
LaunchSpec edit_command(const LaunchSpec& spec, const FlagEdits& set, const std::vector<std::string>& removed = {});

// The command as a person would type it: env assignments first, words quoted for a POSIX shell when
// they need it, and the values of secrets (--api-key, *TOKEN*, *KEY*, *SECRET*, *PASSWORD* variables)
// shown as ***.
std::string display_command(const LaunchSpec& spec);

}  // namespace headroom::run
