#include "cli/alert_flags.h"

#include <algorithm>
#include <iostream>

#include "cli/cli_common.h"

namespace headroom::cli {

namespace {

struct FlagSpec {
  const char* name;
  const char* help;
  double watch::AlertThresholds::*field;
};

const FlagSpec k_flags[] = {
    {"--max-waiting", "alert when more requests wait than this (default 50)", &watch::AlertThresholds::max_waiting},
    {"--max-kv-usage", "alert when KV cache usage exceeds this fraction (default 0.95)", &watch::AlertThresholds::max_kv_usage},
    {"--max-ttft-p99", "alert when time-to-first-token p99 exceeds this many seconds (default 5)",
     &watch::AlertThresholds::max_ttft_p99_s},
    {"--max-tpot-p99", "alert when time-per-output-token p99 exceeds this many seconds (default 0.1)",
     &watch::AlertThresholds::max_tpot_p99_s},
    {"--max-preemption-rate", "alert when preemptions per second exceed this (default 0: any)",
     &watch::AlertThresholds::max_preemptions_per_s},
    {"--max-kv-mismatch", "flag live KV blocks differing from the prediction by more than this fraction (default 0.05)",
     &watch::AlertThresholds::max_kv_blocks_mismatch},
};

}  // namespace

void add_threshold_flags(CLI::App& app, ThresholdFlags& flags) {
  flags.app = &app;
  for (const auto& f : k_flags) app.add_option(f.name, flags.values.*(f.field), f.help)->group("Alert thresholds");
  app.add_option("--thresholds", flags.config_path,
                 "JSON file of thresholds, keys as the flags without leading dashes ({\"max_waiting\": 80}); flags win")
      ->group("Alert thresholds");
}

Result<watch::AlertThresholds> resolve_thresholds(const ThresholdFlags& flags) {
  watch::AlertThresholds out = flags.values;
  if (!flags.config_path.empty()) {
    auto from_file = watch::read_thresholds_file(flags.config_path, watch::AlertThresholds{});
    if (!from_file) return tl::unexpected(from_file.error());
    out = *from_file;
    for (const auto& f : k_flags)  // flags given on the command line override the file
      if (flags.app != nullptr && flags.app->count(f.name) > 0) out.*(f.field) = flags.values.*(f.field);
  }
  if (auto ok = watch::validate_thresholds(out); !ok) return tl::unexpected(ok.error());
  return out;
}


}  // namespace headroom::cli
