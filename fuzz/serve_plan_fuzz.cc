// libFuzzer target: POST /v1/plan with hostile numbers. The input's bytes choose the context,
// concurrency, GPU count, GPU memory, max GPUs, margin and a flag pair, each drawn from the whole
// range a JSON number can carry (negative, zero, huge, fractional); the route must answer a JSON
// document (a plan or an error), never crash and never run long.
//
// Every input runs the route's first step (prepare_plan: parse, range checks, pasted command,
// goal, version, model and GPU resolution, error rendering). The search (answer_plan) runs for one
// input in k_search_every, chosen by a hash of the input so a crash reproduces: one search is
// hundreds of predictions, about 200 ms under ASan, and on every input it held the target at
// 5 exec/s (docs/serve.md, "Fuzzing"). With the GPU counts at their bounds a search takes 0.3-0.4 s
// in a release build (`plan ... --gpus 1024 --concurrency 1000000`), several seconds under ASan:
// at one input in 1,024, a 10 s run went from 528 to 2,103 exec/s by which inputs it drew.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "server/api.h"

namespace {

constexpr std::uint32_t k_search_every = 4096;

// FNV-1a of the input: which inputs reach the search.
std::uint32_t input_hash(const std::uint8_t* data, std::size_t size) {
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  return h;
}

struct Fixture {
  headroom::ServerOptions options;
  headroom::server::HistoryCache history{"", true, 0};
  headroom::server::ResponseCache cache{0, 0};
  headroom::KnowledgeBase kb = headroom::KnowledgeBase::load({}).value();
  headroom::server::DiagnoserPool diagnosers{kb};
  headroom::server::ApiContext context{options, history, cache, kb, diagnosers};
};

class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : m_data(data), m_size(size) {}
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8 && m_pos < m_size; ++i) v = (v << 8) | m_data[m_pos++];
    return v;
  }
  // An integer JSON number: small ones often, the edges of every width sometimes.
  nlohmann::json integer() {
    const std::uint64_t v = u64();
    switch (v % 8) {
      case 0: return static_cast<std::int64_t>(v >> 3) % 100000;
      case 1: return -static_cast<std::int64_t>((v >> 3) % 1000);
      case 2: return std::int64_t{1} << ((v >> 3) % 63);
      case 3: return std::numeric_limits<std::uint64_t>::max() - (v >> 3) % 4;
      case 4: return 0;
      case 5: return static_cast<double>(v >> 3) / 7.0;
      default: return static_cast<std::int64_t>((v >> 3) % 64) + 1;
    }
  }
  nlohmann::json real() {
    double d;
    std::uint64_t v = u64();
    std::memcpy(&d, &v, sizeof d);
    if (!std::isfinite(d)) d = 1e308;
    return (v & 1) ? d : static_cast<double>(v % 200);
  }
  bool flag() { return m_pos < m_size && (m_data[m_pos++] & 1); }

 private:
  const std::uint8_t* m_data;
  std::size_t m_size, m_pos = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture* fixture = [] {
    setenv("HF_HUB_OFFLINE", "1", 1);
    return new Fixture;
  }();
  Bytes in(data, size);
  nlohmann::json body = {{"model", "codellama/CodeLlama-7b-hf"}, {"gpu", in.flag() ? "H100" : "L4"}};
  if (in.flag()) body["context"] = in.integer();
  if (in.flag()) body["concurrency"] = in.integer();
  if (in.flag()) body["gpus"] = in.integer();
  if (in.flag()) body["max_gpus"] = in.integer();
  if (in.flag()) body["gpus_per_node"] = in.integer();
  if (in.flag()) body["nodes"] = in.integer();
  if (in.flag()) body["gpu_memory_gib"] = in.real();
  if (in.flag()) body["margin_gib"] = in.real();
  if (in.flag()) body["allow_fp8_kv"] = true;
  if (in.flag()) body["allow_eager"] = true;
  if (in.flag()) body["command"] = "vllm serve codellama/CodeLlama-7b-hf -tp " + in.integer().dump() + " --max-model-len " + in.integer().dump();
  const std::string text = body.dump();
  headroom::server::PreparedPlan prepared;
  std::string answer;
  if (auto answered = headroom::server::prepare_plan(fixture->context, text, prepared))
    answer = std::move(answered->body);
  else if (input_hash(data, size) % k_search_every == 0)
    answer = headroom::server::answer_plan(fixture->context, prepared).body;
  else
    return 0;
  if (nlohmann::json::parse(answer, nullptr, false).is_discarded()) std::abort();
  return 0;
}
