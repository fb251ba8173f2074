// `headroom rules`: prints Prometheus alerting rules for the alerts of `headroom watch`.
#include <cstdio>

#include "cli/alert_flags.h"
#include "cli/cli_common.h"
#include "cli/cli_parse.h"
#include "cli/commands.h"

namespace headroom::cli {

int run_rules(const Args& args) {
  CLI::App app("Prints Prometheus alerting rules (YAML) for the alerts of 'headroom watch': requests waiting, "
               "KV cache full, TTFT and TPOT p99, rising preemptions. Check them with 'promtool check rules'.",
               "headroom rules");
  ThresholdFlags thresholds;
  add_threshold_flags(app, thresholds);
  watch::RuleOptions options;
  app.add_option("--for", options.for_duration, "how long a condition must hold before the alert fires (default 5m)");
  app.add_option("--window", options.rate_window, "range of rate() and the latency quantiles (default 5m)");
  app.add_option("--selector", options.selector, "label matchers added to every series, e.g. 'job=\"vllm\"'");
  app.add_option("--group", options.group_name, "name of the rule group (default headroom-vllm)");
  if (auto code = parse_or_exit(app, args, "rules")) return *code;

  auto values = resolve_thresholds(thresholds);
  if (!values) {
    print_error(values.error());
    return exit_code_for(values.error());
  }
  auto rules = watch::prometheus_alert_rules(*values, options);
  if (!rules) {
    print_error(rules.error());
    return exit_code_for(rules.error());
  }
  std::fputs(rules->c_str(), stdout);
  return k_exit_ok;
}

}  // namespace headroom::cli
