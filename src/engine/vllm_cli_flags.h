// vLLM's own command-line flags (data/vllm_cli_flags.json, read from vLLM's argument parsers), to
// tell a mistyped flag, which vLLM's argparse refuses before anything starts, from a real flag that
// headroom does not model.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// Whether vLLM's parser takes `name` (a long name, dashes): a flag of the list, --no-NAME of one
// (argparse.BooleanOptionalAction), --NAME.FIELD of one (FlexibleArgumentParser's JSON fields), or
// an abbreviation argparse expands (a prefix of a flag; allow_abbrev is argparse's default).
bool vllm_accepts_flag(std::string_view name);

// The flags of the list and `also` (headroom's own flag names), grouped by length so that a
// nearest-name search looks only at names within two characters of its length. Build once.
class FlagNames {
 public:
  explicit FlagNames(const std::vector<std::string>& also);
  // The flag nearest to `name` within two edits (the first in sort order among equals); "" when none is.
  std::string nearest(std::string_view name) const;

 private:
  static constexpr std::size_t k_max_length = 64;
  std::vector<std::vector<std::string>> m_by_length;  // index: length, names sorted
};

// The oldest vLLM version the flag list covers ("oldest_version" of the data file).
VllmVersion oldest_flag_list_version();

// Flags of the command that `version` does not have yet because a later release added them
// (--performance-mode before v0.17), as (name, as written).
std::vector<std::pair<std::string, std::string>> flags_newer_than(const VllmFlags& flags, const VllmVersion& version);

// vLLM's refusal of mistyped flags (flags.unrecognized_flags) and of flags_newer_than at `version`:
// `vllm serve`'s argparse error "vllm serve: error: unrecognized arguments: --max-modle-len 5"
// (exit 2, before any config is built), or for LLM(...) the TypeError of EngineArgs. nullopt when
// there are none; typos are not asserted when `version` is older than the flag list
// (unrecognized_flag_warnings speaks for them then).
std::optional<Failure> unrecognized_arguments_failure(const VllmFlags& flags, const VllmVersion& version);

// One line per mistyped flag: the did-you-mean, and below the flag list's versions, that vLLM
// exits if the flag is not one of that version's.
std::vector<std::string> unrecognized_flag_warnings(const VllmFlags& flags, const VllmVersion& version);

}  // namespace headroom::engine
