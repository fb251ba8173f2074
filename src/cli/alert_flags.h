// Flags shared by `headroom watch` and `headroom rules`: the alert thresholds (with an optional
// JSON file of them) and CLI11 parsing that follows the exit-code table.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "headroom/watch.h"

namespace headroom::cli {

struct ThresholdFlags {
  watch::AlertThresholds values;  // defaults, overridden by the file, then by flags
  std::string config_path;
  CLI::App* app = nullptr;
};

// Adds --max-waiting, --max-kv-usage, --max-ttft-p99, --max-tpot-p99, --max-preemption-rate,
// --max-kv-mismatch and --thresholds FILE.
void add_threshold_flags(CLI::App& app, ThresholdFlags& flags);

// The thresholds after parsing: the file's values, then the flags given on the command line.
Result<watch::AlertThresholds> resolve_thresholds(const ThresholdFlags& flags);


}  // namespace headroom::cli
