// Reporting helpers of bench_accuracy (header-only: every bench/*.cc is its own executable).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace accuracy_report {

struct Sample {
  std::string row;
  std::string era;
  std::string arch_class;
  std::string family;
  double predicted;
  double observed;
  std::vector<std::string> groups;  // reporting groups: multimodal, quantized, GPU class (consumer, datacenter, AMD)
  double pct() const { return observed == 0 ? 0 : std::abs(predicted - observed) / std::abs(observed) * 100.0; }
  double abs_diff() const { return std::abs(predicted - observed); }
};

inline double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  auto hi = static_cast<std::size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// KV cache GiB per GPU family, era and architecture class, then the component errors per family.
inline void print_groups(std::map<std::string, std::vector<Sample>>& by_quantity) {
  // Per era and per architecture class for the KV cache.
  for (const char* key : {"family", "era", "class"}) {
    std::map<std::string, std::vector<double>> groups, abs_groups;
    for (const char* q : {"kv_cache_gib"}) {
      for (auto& s : by_quantity[q]) {
        std::string g = std::string(key) == "era" ? s.era : std::string(key) == "class" ? s.arch_class : s.family;
        groups[g].push_back(s.pct());
        abs_groups[g].push_back(s.abs_diff());
      }
    }
    std::printf("kv_cache_gib by %s:\n", key);
    for (auto& [g, v] : groups)
      std::printf("  %-18s n=%-3zu median %6.2f%%  p90 %6.2f%%  median abs %6.3f GiB\n", g.c_str(), v.size(),
                  percentile(v, 0.5), percentile(v, 0.9), percentile(abs_groups[g], 0.5));
    std::printf("\n");
  }
  // KV cache GiB per reporting group (a row may be in several).
  {
    std::map<std::string, std::vector<double>> groups, abs_groups;
    for (auto& s : by_quantity["kv_cache_gib"])
      for (const auto& g : s.groups) {
        groups[g].push_back(s.pct());
        abs_groups[g].push_back(s.abs_diff());
      }
    std::printf("kv_cache_gib by group:\n");
    for (auto& [g, v] : groups)
      std::printf("  %-18s n=%-3zu median %6.2f%%  p90 %6.2f%%  median abs %6.3f GiB\n", g.c_str(), v.size(),
                  percentile(v, 0.5), percentile(v, 0.9), percentile(abs_groups[g], 0.5));
    std::printf("\n");
  }
  // Component errors per GPU family: median % (rows) of each term the logs print.
  {
    const char* comps[] = {"weights_gib", "activation_gib", "non_torch_gib", "cuda_graph_gib"};
    std::map<std::string, std::map<std::string, std::vector<double>>> fam;
    for (const char* q : comps)
      for (auto& s : by_quantity[q]) fam[s.family][q].push_back(s.pct());
    std::printf("component median %% (rows) by family: weights, activation, non-torch, cuda graphs\n");
    for (auto& [g, m] : fam) {
      std::printf("  %-30s", g.c_str());
      for (const char* q : comps) {
        auto it = m.find(q);
        if (it == m.end()) std::printf("  %14s", "-");
        else std::printf("  %7.2f%% (%3zu)", percentile(it->second, 0.5), it->second.size());
      }
      std::printf("\n");
    }
    std::printf("\n");
  }
}

}  // namespace accuracy_report
