#include <gtest/gtest.h>

#include <cmath>

#include "headroom/prometheus.h"

using headroom::prometheus::MalformedLines;
using headroom::prometheus::MetricType;
using headroom::prometheus::parse_text;

namespace {

std::string error_of(std::string_view text) {
  auto r = parse_text(text, "page");
  if (r) return "(parsed)";
  return r.error().to_string();
}

}  // namespace

TEST(PrometheusParser, ReadsHelpTypeAndGaugeSample) {
  auto r = parse_text(
      "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
      "# TYPE vllm:num_requests_running gauge\n"
      "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n");
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(r->families.size(), 1u);
  const auto& f = r->families[0];
  EXPECT_EQ(f.name, "vllm:num_requests_running");
  EXPECT_EQ(f.type, MetricType::gauge);
  EXPECT_EQ(f.help, "Number of requests in model execution batches.");
  ASSERT_EQ(f.samples.size(), 1u);
  EXPECT_EQ(*f.samples[0].label("model_name"), "m");
  EXPECT_EQ(*f.samples[0].label("engine"), "0");
  EXPECT_EQ(f.samples[0].value, 3.0);
}

TEST(PrometheusParser, GroupsHistogramSeriesUnderTheirFamily) {
  auto r = parse_text(
      "# TYPE x histogram\n"
      "x_bucket{le=\"0.1\"} 1\nx_bucket{le=\"+Inf\"} 2\nx_sum 0.5\nx_count 2\n");
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(r->families.size(), 1u);
  EXPECT_EQ(r->families[0].samples.size(), 4u);
  EXPECT_EQ(r->families[0].samples[3].name, "x_count");
}

TEST(PrometheusParser, UnescapesLabelValues) {
  auto r = parse_text("m{path=\"C:\\\\dir\\\\x\",q=\"say \\\"hi\\\"\",nl=\"a\\nb\"} 1\n");
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& s = r->families[0].samples[0];
  EXPECT_EQ(*s.label("path"), "C:\\dir\\x");
  EXPECT_EQ(*s.label("q"), "say \"hi\"");
  EXPECT_EQ(*s.label("nl"), "a\nb");
}

TEST(PrometheusParser, UnescapesHelpText) {
  auto r = parse_text("# HELP m first\\nsecond \\\\ done\nm 1\n");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->families[0].help, "first\nsecond \\ done");
}

TEST(PrometheusParser, ReadsSpecialValuesAndTimestamps) {
  auto r = parse_text("a +Inf\nb -Inf\nc NaN\nd 1.5e3 1712345678901\ne -0.25 -5\n");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(std::isinf(r->find("a")->samples[0].value));
  EXPECT_GT(r->find("a")->samples[0].value, 0);
  EXPECT_LT(r->find("b")->samples[0].value, 0);
  EXPECT_TRUE(std::isnan(r->find("c")->samples[0].value));
  EXPECT_EQ(r->find("d")->samples[0].value, 1500.0);
  EXPECT_EQ(*r->find("d")->samples[0].timestamp_ms, 1712345678901);
  EXPECT_EQ(*r->find("e")->samples[0].timestamp_ms, -5);
}

TEST(PrometheusParser, AcceptsBlanksTrailingCommaAndCrlf) {
  auto r = parse_text("  \t# a comment\n\nm { a = \"1\" , b=\"2\", }\t7 \r\n");
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& s = r->find("m")->samples[0];
  EXPECT_EQ(s.labels.size(), 2u);
  EXPECT_EQ(s.value, 7.0);
}

TEST(PrometheusParser, CounterTypedWithoutTotalOwnsTheTotalSample) {
  auto r = parse_text("# TYPE requests counter\nrequests_total 4\n");
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(r->families.size(), 1u);
  EXPECT_EQ(r->families[0].samples[0].name, "requests_total");
}

TEST(PrometheusParser, ErrorNamesLineAndColumnOfMissingEquals) {
  EXPECT_EQ(error_of("ok 1\nx_bucket{le} 1\n"), "page:2:12: expected '=' after label name \"le\", got '}'");
}

TEST(PrometheusParser, ErrorForUnclosedLabelValue) {
  EXPECT_EQ(error_of("m{a=\"1} 2\n"), "page:1:10: label value is not closed with '\"' before the end of the line");
}

TEST(PrometheusParser, ErrorForInvalidEscape) {
  EXPECT_EQ(error_of("m{a=\"x\\ty\"} 2\n"),
            "page:1:7: invalid escape sequence '\\t' in label value (expected \\\\, \\\" or \\n)");
}

TEST(PrometheusParser, ErrorForBadValue) {
  EXPECT_EQ(error_of("m{a=\"1\"} twelve\n"), "page:1:10: expected a number, NaN, +Inf or -Inf as the value, got 'twelve'");
}

TEST(PrometheusParser, ErrorForMissingValue) {
  EXPECT_EQ(error_of("# TYPE m gauge\nm\n"), "page:2:2: expected a value after \"m\", got end of line");
}

TEST(PrometheusParser, ErrorForBadTimestamp) {
  EXPECT_EQ(error_of("m 1 12.5\n"), "page:1:5: expected an integer timestamp in milliseconds, got '12.5'");
}

TEST(PrometheusParser, ErrorForUnknownType) {
  EXPECT_EQ(error_of("# TYPE m meter\n"),
            "page:1:10: expected counter, gauge, histogram, summary or untyped, got 'meter'");
}

TEST(PrometheusParser, ErrorForTypeAfterSamples) {
  EXPECT_EQ(error_of("m 1\n# TYPE m gauge\n"), "page:2:1: TYPE line for metric \"m\" after its samples");
}

TEST(PrometheusParser, ErrorForSecondType) {
  EXPECT_EQ(error_of("# TYPE m gauge\n# TYPE m counter\n"), "page:2:1: second TYPE line for metric \"m\"");
}

TEST(PrometheusParser, ErrorForBucketWithoutLe) {
  EXPECT_EQ(error_of("# TYPE h histogram\nh_bucket{a=\"1\"} 1\n"), "page:2:1: histogram bucket \"h_bucket\" has no \"le\" label");
}

TEST(PrometheusParser, ErrorForDuplicateLabel) {
  EXPECT_EQ(error_of("m{a=\"1\",a=\"2\"} 1\n"), "page:1:9: label \"a\" appears twice");
}

TEST(PrometheusParser, ErrorForBadMetricName) {
  EXPECT_EQ(error_of("9lives 1\n"), "page:1:1: expected a metric name, got '9'");
}

TEST(PrometheusParser, SkipModeKeepsGoodLinesAndReportsBadOnes) {
  auto r = parse_text("a 1\nb{x=} 2\nc 3\n<html>\n", "page", MalformedLines::skip);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->families.size(), 2u);
  EXPECT_NE(r->find("c"), nullptr);
  EXPECT_EQ(r->skipped_lines, 2);
  ASSERT_EQ(r->problems.size(), 2u);
  EXPECT_EQ(r->problems[0].to_string(), "page:2:5: expected '\"' to open the label value, got '}'");
  EXPECT_EQ(r->problems[1].to_string(), "page:4:1: expected a metric name, got '<'");
}

TEST(PrometheusParser, SkipModeBoundsTheProblemsKept) {
  std::string page;
  for (int i = 0; i < 100; ++i) page += "{bad\n";
  auto r = parse_text(page, "page", MalformedLines::skip);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->skipped_lines, 100);
  EXPECT_EQ(r->problems.size(), headroom::prometheus::Exposition::k_max_reported_problems);
}
