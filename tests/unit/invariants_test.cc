// Invariants over the whole catalogue: every catalogue model × a set of GPUs × the modelled vLLM
// eras. They hold whatever the empirical terms are, so they catch answers that contradict each
// other (a prediction with negative bytes, more KV tokens than blocks hold, less KV memory at a
// higher utilization, ...). A failure names the invariant, the model, the GPU and the era.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/plan.h"
#include "headroom/vllm_engine.h"

namespace headroom {
namespace {

// One version per era of the memory model (docs/ARCHITECTURE.md, the spec's era table §0.1):
// V0 before/at/after #9516, V1 before/after #19312, the NCCL snapshot (#25359), opt-in graph
// estimation (#30515), graph estimation by default (#38284), and the newest modelled release.
std::vector<VllmVersion> eras() {
  std::vector<VllmVersion> v;
  for (const char* text : {"0.6.3", "0.6.4", "0.7.3", "0.8.5", "0.9.2", "0.10.1", "0.11.0", "0.19.0", "0.21.0"})
    v.push_back(VllmVersion::parse(text).value());
  if (VllmVersion::newest_modelled() > v.back()) v.push_back(VllmVersion::newest_modelled());
  return v;
}

// Small consumer, Turing without bf16, Ampere and Hopper data-centre cards.
const std::vector<std::string> k_gpus = {"RTX 4090", "T4", "A100 80GB", "H100"};

struct Catalogue {
  std::vector<ModelSpec> models;
  std::vector<VllmVersion> versions = eras();
  std::vector<std::string> without_facts;  // catalogue rows that name a model but lack its architecture
};

const Catalogue& catalogue() {
  static const Catalogue c = [] {
    Catalogue out;
    for (const auto& id : catalog_model_ids()) {
      auto m = catalog_model(id);
      // Rows kept for their id and sources alone load as an error that asks for the config.json.
      if (m) out.models.push_back(*m);
      else if (m.error().message.find("config.json") != std::string::npos) out.without_facts.push_back(id);
      else ADD_FAILURE() << "catalogue model " << id << " does not load: " << m.error().to_string();
    }
    EXPECT_LT(out.without_facts.size(), out.models.size() / 10) << "most of the catalogue must be modelled";
    return out;
  }();
  return c;
}

GpuSetup setup(const std::string& gpu, int count) {
  GpuSetup s;
  auto found = GpuCatalog::builtin().find(gpu);
  EXPECT_TRUE(found) << gpu << ": " << found.error().to_string();
  if (found) s.gpu = *found;
  s.count = count;
  return s;
}

std::string where(const ModelSpec& m, const GpuSetup& g, const VllmVersion& v) {
  return m.id + " on " + std::to_string(g.count) + " × " + g.gpu.key + " with vLLM " + v.to_string();
}

// A context every model supports (4096 tokens or the model's derived maximum, if shorter), so
// most points start and the KV invariants bite.
VllmFlags short_context(const ModelSpec& m) {
  VllmFlags f;
  std::int64_t longest = 4096;
  GpuSetup any;
  any.gpu = custom_gpu(80);
  if (auto p = predict(m, any, VllmFlags{}, VllmVersion::newest_modelled()); p && p->settings.max_model_len > 0)
    longest = std::min(longest, p->settings.max_model_len);
  f.max_model_len = longest;
  return f;
}

bool is_config_failure(const Prediction& p) { return p.failure && p.failure->phase == "config"; }

void expect_sane_bytes(const Prediction& p, const std::string& at) {
  auto check_stage = [&](const MemoryBreakdown& m, const std::string& stage) {
    const std::pair<const char*, Bytes> terms[] = {
        {"total", m.total},         {"budget", m.budget},         {"weights", m.weights},
        {"activation_peak", m.activation_peak}, {"non_torch", m.non_torch}, {"cuda_graph", m.cuda_graph},
        {"outside_budget", m.outside_budget},   {"baseline", m.baseline}};
    for (const auto& [name, bytes] : terms)
      EXPECT_GE(bytes, 0) << "invariant 'no negative bytes': " << stage << "." << name << " = " << bytes << " for " << at;
  };
  check_stage(p.memory, "memory");
  for (std::size_t i = 0; i < p.stages.size(); ++i) check_stage(p.stages[i], "stage " + std::to_string(i));
  EXPECT_GE(p.num_gpu_blocks, 0) << "invariant 'no negative blocks' for " << at;
  EXPECT_GE(p.kv_cache_tokens, 0) << "invariant 'no negative KV tokens' for " << at;
  EXPECT_GE(p.kv.page_bytes, 0) << "invariant 'no negative page bytes' for " << at;
  EXPECT_GE(p.kv.bytes_per_token, 0) << "invariant 'no negative bytes per token' for " << at;
  EXPECT_TRUE(std::isfinite(p.max_concurrency) && p.max_concurrency >= 0)
      << "invariant 'concurrency is a number ≥ 0': " << p.max_concurrency << " for " << at;
  EXPECT_TRUE(std::isfinite(p.settings.gpu_memory_utilization))
      << "invariant 'utilization is a number' for " << at;
}

// Bytes are never negative or NaN; KV tokens fit in the blocks; KV memory and blocks do not shrink
// when only the utilization rises.
TEST(Invariants, BytesAreSaneAndKvGrowsWithUtilization) {
  const auto& c = catalogue();
  int started = 0, points = 0;
  for (const auto& m : c.models) {
    for (const auto& gpu : k_gpus) {
      GpuSetup g = setup(gpu, 1);
      for (const auto& v : c.versions) {
        const std::string at = where(m, g, v);
        std::optional<Prediction> previous;
        for (double util : {0.6, 0.8, 0.9, 0.95}) {
          VllmFlags f = short_context(m);
          f.gpu_memory_utilization = util;
          auto p = predict(m, g, f, v);
          if (!p) {
            EXPECT_EQ(p.error().code, ErrorCode::unsupported) << at << ": " << p.error().to_string();
            break;
          }
          ++points;
          started += p->starts;
          const std::string at_util = at + " at utilization " + std::to_string(util);
          expect_sane_bytes(*p, at_util);
          EXPECT_LE(p->kv_cache_tokens, p->num_gpu_blocks * p->kv.block_size)
              << "invariant 'KV tokens ≤ blocks × block_size': " << p->kv_cache_tokens << " tokens, "
              << p->num_gpu_blocks << " blocks of " << p->kv.block_size << " for " << at_util;
          if (previous && !is_config_failure(*p)) {
            EXPECT_GE(p->memory.kv_cache, previous->memory.kv_cache)
                << "invariant 'KV bytes do not decrease as utilization rises': "
                << previous->memory.kv_cache << " → " << p->memory.kv_cache << " bytes for " << at_util;
            EXPECT_GE(p->num_gpu_blocks, previous->num_gpu_blocks)
                << "invariant 'KV blocks do not decrease as utilization rises' for " << at_util;
          }
          previous = *p;
        }
      }
    }
  }
  // The walk must have exercised the engine, not skipped its way through.
  EXPECT_GT(points, static_cast<int>(c.models.size() * k_gpus.size() * c.versions.size() * 3));
  EXPECT_GT(started, points / 4);
}

// Splitting the weights over twice the GPUs never makes a GPU's share larger.
TEST(Invariants, DoublingTensorParallelNeverIncreasesPerGpuWeights) {
  const auto& c = catalogue();
  GpuSetup g = setup("H100", 8);
  int compared = 0;
  for (const auto& m : c.models) {
    for (const auto& v : c.versions) {
      const std::string at = where(m, g, v);
      std::optional<Prediction> previous;
      for (int tp : {1, 2, 4, 8}) {
        VllmFlags f = short_context(m);
        f.tensor_parallel_size = tp;
        auto p = predict(m, g, f, v);
        if (!p || is_config_failure(*p)) continue;  // e.g. heads not divisible by tp
        if (previous && previous->settings.tensor_parallel_size * 2 == tp) {
          ++compared;
          EXPECT_LE(p->memory.weights, previous->memory.weights)
              << "invariant 'doubling TP never increases per-GPU weights': tp " << tp / 2 << " → " << tp << ": "
              << previous->memory.weights << " → " << p->memory.weights << " bytes for " << at;
        }
        previous = *p;
      }
    }
  }
  EXPECT_GT(compared, static_cast<int>(c.models.size() * c.versions.size()));
}

bool all_full_attention(const ModelSpec& m) {
  for (int i = 0; i < m.num_layers; ++i)
    if (m.layer_kind(i) != LayerKind::full_attention) return false;
  return !m.hybrid;
}

// With the same KV memory, an fp8 cache holds twice the tokens of a 16-bit one for models whose
// layers are all full attention (one byte per element instead of two; vLLM's
// STR_DTYPE_TO_TORCH_DTYPE["fp8"] = torch.uint8, vllm/utils/torch_utils.py v0.19.0).
TEST(Invariants, Fp8KvDoublesTokensOfFullAttentionLayers) {
  const auto& c = catalogue();
  GpuSetup g = setup("H100", 8);
  int compared = 0;
  for (const auto& m : c.models) {
    if (!all_full_attention(m)) continue;
    for (const auto& v : c.versions) {
      const std::string at = where(m, g, v);
      VllmFlags f = short_context(m);
      f.tensor_parallel_size = 8;
      auto base = predict(m, g, f, v);
      if (!base || !base->starts || base->settings.kv_cache_dtype != "auto") continue;
      if (base->settings.dtype == "float32") continue;  // 4-byte cache: fp8 quarters it
      f.kv_cache_dtype = "fp8";
      auto fp8 = predict(m, g, f, v);
      ASSERT_TRUE(fp8) << at << ": " << fp8.error().to_string();
      if (!fp8->starts || fp8->memory.kv_cache != base->memory.kv_cache) continue;  // not equal KV bytes
      ++compared;
      EXPECT_EQ(fp8->kv.bytes_per_token * 2, base->kv.bytes_per_token)
          << "invariant 'fp8 KV halves bytes per token': " << base->kv.bytes_per_token << " → "
          << fp8->kv.bytes_per_token << " for " << at;
      // Blocks are whole: the fp8 cache may hold up to one more block per group than twice the tokens.
      const std::int64_t slack = 2LL * fp8->kv.block_size * std::max(1, fp8->kv.num_groups);
      EXPECT_GE(fp8->kv_cache_tokens, 2 * base->kv_cache_tokens - slack)
          << "invariant 'fp8 KV doubles tokens at equal KV bytes': " << base->kv_cache_tokens << " → "
          << fp8->kv_cache_tokens << " for " << at;
      EXPECT_LE(fp8->kv_cache_tokens, 2 * base->kv_cache_tokens + slack)
          << "invariant 'fp8 KV doubles tokens at equal KV bytes': " << base->kv_cache_tokens << " → "
          << fp8->kv_cache_tokens << " for " << at;
    }
  }
  EXPECT_GT(compared, 0);
}

// Every configuration a plan recommends (and every alternative), fed back to the engine as `check`
// does, starts also when other processes take the stated safety margin. Each model is planned once,
// the era rotating over the catalogue so every era is planned for many models.
TEST(Invariants, PlanRecommendationsStartWithTheStatedMargin) {
  const auto& c = catalogue();
  GpuSetup g = setup("H100", 8);
  int planned = 0;
  for (std::size_t i = 0; i < c.models.size(); ++i) {
    const ModelSpec& m = c.models[i];
    const VllmVersion& v = c.versions[i % c.versions.size()];
    const std::string at = where(m, g, v);
    PlanRequest r;
    r.context_tokens = short_context(m).max_model_len;
    r.concurrency = 2;
    auto plan = make_plan(m, g, r, v);
    if (!plan) {
      EXPECT_EQ(plan.error().code, ErrorCode::unsupported) << at << ": " << plan.error().to_string();
      continue;
    }
    if (!plan->recommended) continue;
    ++planned;
    std::vector<const PlannedConfig*> configs = {&*plan->recommended};
    for (const auto& alt : plan->alternatives) configs.push_back(&alt);
    for (const PlannedConfig* cfg : configs) {
      GpuSetup squeezed = g;
      squeezed.free_bytes = g.gpu.total_bytes - plan->safety_margin_bytes;
      auto p = predict(m, squeezed, cfg->flags, v);
      ASSERT_TRUE(p) << at << ": " << p.error().to_string();
      EXPECT_TRUE(p->starts) << "invariant 'plan recommendations start with the stated margin': '" << cfg->label
                             << "' fails with " << plan->safety_margin_bytes << " bytes taken for " << at << ": "
                             << (p->failure ? p->failure->message : "");
    }
  }
  EXPECT_GT(planned, static_cast<int>(c.models.size()) / 2);
}

}  // namespace
}  // namespace headroom
