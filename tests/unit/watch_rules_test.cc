#include <gtest/gtest.h>

#include "headroom/watch.h"

using namespace headroom::watch;

TEST(AlertRules, ExpressionsCarryTheThresholds) {
  AlertThresholds t;
  t.max_waiting = 80;
  t.max_kv_usage = 0.9;
  auto rules = prometheus_alert_rules(t, RuleOptions{});
  ASSERT_TRUE(rules) << rules.error().to_string();
  EXPECT_NE(rules->find("(vllm:num_requests_waiting) > 80\""), std::string::npos);
  EXPECT_NE(rules->find("vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc) > 0.9\""), std::string::npos);
}

TEST(AlertRules, SelectorIsAddedToEverySeries) {
  RuleOptions o;
  o.selector = "job=\"vllm\"";
  auto rules = prometheus_alert_rules(AlertThresholds{}, o);
  ASSERT_TRUE(rules);
  EXPECT_NE(rules->find("vllm:num_requests_waiting{job=\\\"vllm\\\"}"), std::string::npos);
  EXPECT_NE(rules->find("vllm:time_to_first_token_seconds_bucket{job=\\\"vllm\\\"}[5m]"), std::string::npos);
}

TEST(AlertRules, OneRulePerAlert) {
  auto rules = prometheus_alert_rules(AlertThresholds{}, RuleOptions{});
  ASSERT_TRUE(rules);
  std::size_t n = 0;
  for (std::size_t p = rules->find("- alert: "); p != std::string::npos; p = rules->find("- alert: ", p + 1)) ++n;
  EXPECT_EQ(n, 5u);
}

TEST(AlertRules, RejectsBadDuration) {
  RuleOptions o;
  o.for_duration = "5 minutes";
  auto rules = prometheus_alert_rules(AlertThresholds{}, o);
  ASSERT_FALSE(rules);
  EXPECT_EQ(rules.error().to_string(), "--for: expected a Prometheus duration such as 5m or 1h30m, got '5 minutes'");
}

TEST(AlertRules, RejectsSelectorWithBraces) {
  RuleOptions o;
  o.selector = "{job=\"vllm\"}";
  auto rules = prometheus_alert_rules(AlertThresholds{}, o);
  ASSERT_FALSE(rules);
  EXPECT_EQ(rules.error().to_string(),
            "--selector: expected label matchers without braces, such as job=\"vllm\", got '{job=\"vllm\"}'");
}

TEST(AlertRules, RejectsInvalidThresholds) {
  AlertThresholds t;
  t.max_ttft_p99_s = 0;
  auto rules = prometheus_alert_rules(t, RuleOptions{});
  ASSERT_FALSE(rules);
  EXPECT_EQ(rules.error().where, "--max-ttft-p99");
}

TEST(MetricsUrl, AddsSchemeAndPath) {
  EXPECT_EQ(*metrics_url("localhost:8000"), "http://localhost:8000/metrics");
  EXPECT_EQ(*metrics_url("http://h:8000/"), "http://h:8000/metrics");
  EXPECT_EQ(*metrics_url("https://h/custom/metrics"), "https://h/custom/metrics");
}

TEST(MetricsUrl, RejectsOtherSchemes) {
  auto r = metrics_url("ftp://h/metrics");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "URL: expected an http:// or https:// URL, got 'ftp://h/metrics'");
}

TEST(MetricsUrl, LoopbackHostsAreLocal) {
  EXPECT_TRUE(is_local_url("http://127.0.0.1:8000/metrics"));
  EXPECT_TRUE(is_local_url("http://localhost/metrics"));
  EXPECT_TRUE(is_local_url("http://[::1]:8000/metrics"));
  EXPECT_FALSE(is_local_url("http://10.1.2.3:8000/metrics"));
}
