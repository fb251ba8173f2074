// libFuzzer target: POST /v1/plan with hostile numbers. The input's bytes choose the context,
// concurrency, GPU count, GPU memory, max GPUs, margin and a flag pair, each drawn from the whole
// range a JSON number can carry (negative, zero, huge, fractional); the route must answer a JSON
// document (a plan or an error), never crash and never run long.
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
  auto answer = headroom::server::api_plan(fixture->context, text);
  if (nlohmann::json::parse(answer.body, nullptr, false).is_discarded()) std::abort();
  return 0;
}
