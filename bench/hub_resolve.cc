// Resolving DeepSeek-V3's checkpoint layout (config + 163 safetensors shards) from the loopback Hub
// with 50 ms added to every request (the Hub's API and the file storage each), through libcurl:
// end to end from the Hub (empty cache), and again from headroom's Hub cache (revision = sha).
// Targets: ≤ 2 s from the Hub, ≤ 20 ms from the cache.
//   cmake --build build --target bench_hub_resolve && build/bench_hub_resolve
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>

#include "fake_hub.h"
#include "headroom/hub.h"
#include "headroom/model.h"

namespace {

namespace fs = std::filesystem;
using headroom::testing::FakeHub;

const std::string k_models = std::string(HEADROOM_TEST_DATA_DIR) + "/models";
constexpr int k_latency_ms = 50;

struct Setup {
  FakeHub hub{"hf_fake_accepted_token", k_latency_ms};
  std::string sha;
  fs::path cache = fs::temp_directory_path() / ("headroom-bench-hub-" + std::to_string(::getpid()));
  Setup() {
    auto repo = headroom::testing::deepseek_v3_fixture(k_models);
    sha = repo.sha;
    hub.add_repo(std::move(repo));
  }
  ~Setup() { fs::remove_all(cache); }
};

Setup& setup() {
  static Setup s;
  return s;
}

headroom::Result<headroom::ModelSpec> resolve(const headroom::hub::HubSettings& s) {
  headroom::ModelLoadOptions o;
  o.hub = &s;
  o.hf_hub_cache = (setup().cache / "no-hf-cache").string();
  return headroom::load_model("deepseek-ai/DeepSeek-V3", o);
}

headroom::hub::HubSettings settings() {
  headroom::hub::HubSettings s;
  s.endpoint = setup().hub.endpoint();
  s.cache_dir = setup().cache.string();
  return s;
}

void BM_ResolveFromHub(benchmark::State& state) {
  auto s = settings();
  int requests = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(setup().cache);
    setup().hub.reset_stats();
    state.ResumeTiming();
    auto m = resolve(s);
    if (!m || !m->weights || m->weights->file_count != 163) state.SkipWithError("resolve failed");
    requests = setup().hub.stats().hub_requests + setup().hub.stats().storage_requests;
  }
  state.counters["requests"] = requests;
}
BENCHMARK(BM_ResolveFromHub)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_ResolveFromCache(benchmark::State& state) {
  auto s = settings();
  if (!resolve(s)) state.SkipWithError("first resolve failed");
  s.revision = setup().sha;  // a sha: no request at all
  setup().hub.reset_stats();
  for (auto _ : state) {
    auto m = resolve(s);
    if (!m || !m->weights) state.SkipWithError("resolve failed");
    benchmark::DoNotOptimize(m);
  }
  state.counters["requests"] = setup().hub.stats().hub_requests;
}
BENCHMARK(BM_ResolveFromCache)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
