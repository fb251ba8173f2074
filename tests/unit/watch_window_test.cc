#include <gtest/gtest.h>

#include "headroom/watch.h"

using namespace headroom::watch;

namespace {

VllmSnapshot at(double t, double prompt_tokens) {
  VllmSnapshot s;
  s.time_s = t;
  s.prompt_tokens_total = prompt_tokens;
  return s;
}

Histogram latency(double fast, double slow) {  // buckets ≤0.1 s, ≤10 s, +Inf
  Histogram h;
  h.upper_bounds = {0.1, 10, INFINITY};
  h.cumulative_counts = {fast, fast + slow, fast + slow};
  h.count = fast + slow;
  return h;
}

VllmSnapshot with_ttft(double t, double fast, double slow) {
  VllmSnapshot s;
  s.time_s = t;
  s.ttft = latency(fast, slow);
  return s;
}

}  // namespace

TEST(MetricsWindow, RateIsIncreaseOverTheSpan) {
  MetricsWindow w(60, 100);
  w.add(at(0, 1000));
  w.add(at(10, 3000));
  DerivedFigures d = w.derive();
  EXPECT_EQ(d.window_s, 10);
  EXPECT_EQ(d.prompt_tokens_per_s, 200.0);
}

TEST(MetricsWindow, CounterResetCountsFromZero) {
  MetricsWindow w(60, 100);
  w.add(at(0, 1000));
  w.add(at(10, 3000));
  w.add(at(20, 500));  // the server restarted
  DerivedFigures d = w.derive();
  EXPECT_EQ(d.prompt_tokens_per_s, 125.0);
  EXPECT_EQ(d.counter_resets, 1);
}

TEST(MetricsWindow, OneSampleHasNoRate) {
  MetricsWindow w(60, 100);
  w.add(at(0, 1000));
  EXPECT_FALSE(w.derive().prompt_tokens_per_s);
}

TEST(MetricsWindow, DropsSamplesOlderThanTheWindow) {
  MetricsWindow w(10, 100);
  for (double t : {0.0, 5.0, 10.0, 15.0}) w.add(at(t, t));
  EXPECT_EQ(w.size(), 3u);
  EXPECT_EQ(w.derive().window_s, 10);
}

TEST(MetricsWindow, RingNeverHoldsMoreThanItsCapacity) {
  MetricsWindow w(1e9, 4);
  for (int i = 0; i < 100; ++i) w.add(at(i, i * 10.0));
  EXPECT_EQ(w.size(), 4u);
  EXPECT_EQ(w.derive().window_s, 3);
  EXPECT_EQ(w.derive().prompt_tokens_per_s, 10.0);
}

TEST(MetricsWindow, QuantilesComeFromBucketIncreasesOnly) {
  MetricsWindow w(60, 100);
  w.add(with_ttft(0, 0, 1000));   // a slow past: 1000 slow requests before the window
  w.add(with_ttft(10, 100, 1000));  // inside the window: 100 fast ones
  DerivedFigures d = w.derive();
  EXPECT_EQ(d.quantile_basis, QuantileBasis::window);
  ASSERT_TRUE(d.ttft_p99_s);
  EXPECT_LE(*d.ttft_p99_s, 0.1);
}

TEST(MetricsWindow, SingleSampleQuantilesCoverTheServerLifetime) {
  MetricsWindow w(60, 100);
  w.add(with_ttft(0, 0, 1000));
  DerivedFigures d = w.derive();
  EXPECT_EQ(d.quantile_basis, QuantileBasis::since_start);
  ASSERT_TRUE(d.ttft_p99_s);
  EXPECT_GT(*d.ttft_p99_s, 0.1);
}

TEST(MetricsWindow, HistogramResetUsesTheNewBuckets) {
  MetricsWindow w(60, 100);
  w.add(with_ttft(0, 0, 1000));
  w.add(with_ttft(10, 50, 0));  // restarted: 50 fast requests since
  DerivedFigures d = w.derive();
  ASSERT_TRUE(d.ttft_p50_s);
  EXPECT_LE(*d.ttft_p50_s, 0.1);
}

TEST(MetricsWindow, NoObservationsInWindowGivesNoQuantile) {
  MetricsWindow w(60, 100);
  w.add(with_ttft(0, 10, 10));
  w.add(with_ttft(10, 10, 10));
  EXPECT_FALSE(w.derive().ttft_p99_s);
}

TEST(Backoff, DoublesUpToTheCap) {
  RetryPolicy policy;
  policy.initial_backoff_s = 1;
  policy.max_backoff_s = 10;
  Backoff b(policy);
  std::vector<double> delays;
  for (int i = 0; i < 6; ++i) delays.push_back(b.next_delay_s());
  EXPECT_EQ(delays, (std::vector<double>{1, 2, 4, 8, 10, 10}));
}

TEST(Backoff, ResetStartsOver) {
  Backoff b(RetryPolicy{});
  b.next_delay_s();
  b.next_delay_s();
  b.reset();
  EXPECT_EQ(b.next_delay_s(), RetryPolicy{}.initial_backoff_s);
}
