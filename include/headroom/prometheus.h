// The Prometheus text exposition format (version 0.0.4): what a `/metrics` page holds (metric
// families with HELP, TYPE and samples) and a parser that reports errors with line and column.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/error.h"

namespace headroom::prometheus {

enum class MetricType { counter, gauge, histogram, summary, untyped };
std::string_view to_string(MetricType type);

struct Label {
  std::string name;
  std::string value;  // unescaped
  bool operator==(const Label&) const = default;
};

// One line of samples: `name{labels} value [timestamp_ms]`.
struct Sample {
  std::string name;           // the full sample name, e.g. "x_bucket", "x_sum", "x_total"
  std::vector<Label> labels;  // in the order written
  double value = 0;           // NaN and ±Inf are valid values
  std::optional<std::int64_t> timestamp_ms;

  // The value of label `name`, or nullptr when the sample does not carry it.
  const std::string* label(std::string_view name) const;
};

// The samples of one metric with its HELP and TYPE. A histogram family "x" holds the samples
// x_bucket, x_sum and x_count; a summary holds x, x_sum and x_count.
struct MetricFamily {
  std::string name;
  MetricType type = MetricType::untyped;
  std::string help;  // unescaped
  std::vector<Sample> samples;
};

struct Exposition {
  std::vector<MetricFamily> families;  // in order of first appearance
  // Lines skipped in MalformedLines::skip mode, with their errors (at most k_max_reported_problems
  // are kept; `skipped_lines` counts them all).
  std::vector<Error> problems;
  int skipped_lines = 0;

  static constexpr std::size_t k_max_reported_problems = 20;

  // The family named `name`, or nullptr.
  const MetricFamily* find(std::string_view name) const;
};

// What the parser does with a line it cannot read: stop with the error (as Prometheus does when it
// scrapes), or skip the line, note the error and go on (what `headroom watch` wants from a server
// that writes a few bad lines).
enum class MalformedLines { reject, skip };

// Parses a text-format page. `origin` names the page in errors, which read
// "origin:LINE:COL" + message, e.g. `metrics:3:18: expected '=' after label name "le", got '}'`.
// Errors (reject mode): parse_error for any malformed line, a second TYPE or HELP for a metric, a
// TYPE after the metric's samples, or an unknown type.
Result<Exposition> parse_text(std::string_view text, const std::string& origin = "metrics",
                              MalformedLines mode = MalformedLines::reject);

}  // namespace headroom::prometheus
