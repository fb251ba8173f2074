// The sliding window of snapshots behind rates and latency quantiles. Memory is bounded by the ring:
// a sample that falls out of the window (or out of the ring) is overwritten in place.
#include <algorithm>
#include <cmath>

#include "headroom/watch.h"

namespace headroom::watch {

std::string_view to_string(QuantileBasis basis) {
  switch (basis) {
    case QuantileBasis::none: return "none";
    case QuantileBasis::window: return "window";
    case QuantileBasis::since_start: return "since_start";
  }
  return "none";
}

MetricsWindow::MetricsWindow(double window_s, std::size_t max_samples)
    : m_window_s(window_s), m_capacity(std::max<std::size_t>(2, max_samples)) {
  m_ring.reserve(m_capacity);
}

const VllmSnapshot& MetricsWindow::at(std::size_t i) const { return m_ring[(m_head + i) % m_ring.size()]; }

void MetricsWindow::add(VllmSnapshot snapshot) {
  if (m_size > 0 && snapshot.time_s < at(m_size - 1).time_s) {
    m_size = 0;  // the clock went backwards: start over rather than compute negative spans
    m_head = 0;
    m_ring.clear();
  }
  if (m_ring.size() < m_capacity) {  // still filling: the ring is in order from index 0
    m_ring.push_back(std::move(snapshot));
    ++m_size;
  } else if (m_size < m_ring.size()) {
    m_ring[(m_head + m_size) % m_ring.size()] = std::move(snapshot);
    ++m_size;
  } else {  // full: overwrite the oldest
    m_ring[m_head] = std::move(snapshot);
    m_head = (m_head + 1) % m_ring.size();
  }
  double newest = at(m_size - 1).time_s;
  while (m_size > 1 && newest - at(0).time_s > m_window_s + 1e-9) {
    m_head = (m_head + 1) % m_ring.size();
    --m_size;
  }
}

namespace {

using CounterField = std::optional<double> VllmSnapshot::*;
using HistogramField = std::optional<Histogram> VllmSnapshot::*;

struct Increase {
  std::optional<double> value;
  int resets = 0;
};

// Sum of step-by-step increases; a step where the counter drops is a restart and counts the new value.
template <class At>
Increase counter_increase(const At& at, std::size_t n, CounterField field) {
  Increase out;
  if (!(at(n - 1).*field)) return out;
  double total = 0;
  for (std::size_t i = 1; i < n; ++i) {
    const auto& a = at(i - 1).*field;
    const auto& b = at(i).*field;
    if (!a || !b) continue;
    if (*b >= *a) total += *b - *a;
    else {
      total += *b;
      ++out.resets;
    }
  }
  out.value = total;
  return out;
}

bool same_layout(const Histogram& a, const Histogram& b) { return a.upper_bounds == b.upper_bounds; }

// Bucket increases over the window, in the newest sample's layout; a step whose count drops (or
// whose layout changed) is a restart and counts the new buckets.
template <class At>
std::optional<Histogram> histogram_increase(const At& at, std::size_t n, HistogramField field) {
  const auto& newest = at(n - 1).*field;
  if (!newest) return std::nullopt;
  Histogram out;
  out.upper_bounds = newest->upper_bounds;
  out.cumulative_counts.assign(out.upper_bounds.size(), 0.0);
  for (std::size_t i = 1; i < n; ++i) {
    const auto& a = at(i - 1).*field;
    const auto& b = at(i).*field;
    if (!b || !same_layout(*b, out)) continue;
    bool restarted = !a || !same_layout(*a, *b) || b->count < a->count ||
                     b->cumulative_counts.back() < a->cumulative_counts.back();
    for (std::size_t k = 0; k < out.cumulative_counts.size(); ++k)
      out.cumulative_counts[k] +=
          restarted ? b->cumulative_counts[k] : std::max(0.0, b->cumulative_counts[k] - a->cumulative_counts[k]);
    out.count += restarted ? b->count : b->count - a->count;
    out.sum += restarted ? b->sum : b->sum - a->sum;
  }
  return out;
}

}  // namespace

DerivedFigures MetricsWindow::derive() const {
  DerivedFigures d;
  d.samples = static_cast<int>(m_size);
  if (m_size == 0) return d;
  auto get = [this](std::size_t i) -> const VllmSnapshot& { return at(i); };
  const VllmSnapshot& newest = at(m_size - 1);

  if (m_size == 1) {
    // One sample holds no rate; latency quantiles come from the server's lifetime buckets.
    if (newest.ttft) d.ttft_p50_s = histogram_quantile(0.5, *newest.ttft), d.ttft_p99_s = histogram_quantile(0.99, *newest.ttft);
    if (newest.tpot) d.tpot_p50_s = histogram_quantile(0.5, *newest.tpot), d.tpot_p99_s = histogram_quantile(0.99, *newest.tpot);
    if (newest.ttft || newest.tpot) d.quantile_basis = QuantileBasis::since_start;
    if (newest.prefix_cache_queries_total && newest.prefix_cache_hits_total && *newest.prefix_cache_queries_total > 0)
      d.prefix_cache_hit_rate = *newest.prefix_cache_hits_total / *newest.prefix_cache_queries_total;
    return d;
  }

  d.window_s = newest.time_s - at(0).time_s;
  auto rate = [&](CounterField field) -> std::optional<double> {
    Increase inc = counter_increase(get, m_size, field);
    d.counter_resets = std::max(d.counter_resets, inc.resets);
    if (!inc.value || d.window_s <= 0) return std::nullopt;
    return *inc.value / d.window_s;
  };
  d.prompt_tokens_per_s = rate(&VllmSnapshot::prompt_tokens_total);
  d.generation_tokens_per_s = rate(&VllmSnapshot::generation_tokens_total);
  d.preemptions_per_s = rate(&VllmSnapshot::preemptions_total);
  d.requests_per_s = rate(&VllmSnapshot::requests_finished_total);
  Increase queries = counter_increase(get, m_size, &VllmSnapshot::prefix_cache_queries_total);
  Increase hits = counter_increase(get, m_size, &VllmSnapshot::prefix_cache_hits_total);
  if (queries.value && hits.value && *queries.value > 0) d.prefix_cache_hit_rate = *hits.value / *queries.value;

  auto ttft = histogram_increase(get, m_size, &VllmSnapshot::ttft);
  auto tpot = histogram_increase(get, m_size, &VllmSnapshot::tpot);
  if (ttft) d.ttft_p50_s = histogram_quantile(0.5, *ttft), d.ttft_p99_s = histogram_quantile(0.99, *ttft);
  if (tpot) d.tpot_p50_s = histogram_quantile(0.5, *tpot), d.tpot_p99_s = histogram_quantile(0.99, *tpot);
  if (ttft || tpot) d.quantile_basis = QuantileBasis::window;
  return d;
}

}  // namespace headroom::watch
