// The serve command's pool of LogDiagnosers: one per request at a time, reused afterwards.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "headroom/knowledge_base.h"
#include "server/diagnoser_pool.h"

namespace headroom::server {
namespace {

TEST(DiagnoserPool, LendsOnePerRequestAndReusesItAfterwards) {
  auto kb = KnowledgeBase::builtin();
  ASSERT_TRUE(kb) << kb.error().to_string();
  DiagnoserPool pool(*kb, 1);
  LogDiagnoser* first = nullptr;
  {
    auto a = pool.acquire();
    ASSERT_TRUE(a) << a.error().to_string();
    first = &**a;
    auto b = pool.acquire();  // while a is lent: another one
    ASSERT_TRUE(b);
    EXPECT_NE(&**b, first);
  }
  auto again = pool.acquire();  // one of the two came back (the pool keeps one)
  ASSERT_TRUE(again);
  auto other = pool.acquire();
  ASSERT_TRUE(other);
  EXPECT_NE(&**again, &**other);
}

TEST(DiagnoserPool, ALentDiagnoserDiagnosesLikeTheOneShotPipeline) {
  auto kb = KnowledgeBase::builtin();
  ASSERT_TRUE(kb);
  DiagnoserPool pool(*kb);
  // vLLM V0's message when the KV cache gets no memory (vllm/worker/worker.py, raise_if_cache_size_invalid).
  const std::string log =
      "INFO 03-01 10:00:00 [gpu_worker.py:100] Model loading took 15.0 GiB and 20 seconds\n"
      "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
      "when initializing the engine.\n";
  for (int round = 0; round < 2; ++round) {
    auto lent = pool.acquire();
    ASSERT_TRUE(lent);
    auto pooled_source = memory_source(log, "a.log");
    auto pooled = (*lent)->diagnose(*pooled_source);
    auto one_shot_source = memory_source(log, "a.log");
    auto one_shot = diagnose(*one_shot_source, *kb);
    ASSERT_TRUE(pooled && one_shot);
    EXPECT_EQ(to_json(*pooled).dump(), to_json(*one_shot).dump());
    ASSERT_TRUE(pooled->primary);
  }
}

// Clones share the compiled patterns and own their scratch: several threads diagnosing at once
// with clones of one diagnoser each get the one-shot pipeline's answer.
TEST(DiagnoserPool, ClonesDiagnoseConcurrentlyLikeTheOriginal) {
  auto kb = KnowledgeBase::builtin();
  ASSERT_TRUE(kb);
  auto original = LogDiagnoser::create(*kb);
  ASSERT_TRUE(original) << original.error().to_string();
  // vLLM V1's message when the KV cache needs more than is left (v1/core/kv_cache_utils.py).
  const std::string log =
      "INFO 03-01 10:00:00 [gpu_model_runner.py:1] Model loading took 15.0 GiB and 20 seconds\n"
      "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is "
      "needed, which is larger than the available KV cache memory (8.00 GiB). Based on the available memory, the "
      "estimated maximum model length is 65536. Try increasing `gpu_memory_utilization` or decreasing "
      "`max_model_len` when initializing the engine.\n";
  auto reference_source = memory_source(log, "a.log");
  auto reference = diagnose(*reference_source, *kb);
  ASSERT_TRUE(reference && reference->primary);
  const std::string want = to_json(*reference).dump();
  std::vector<std::unique_ptr<LogDiagnoser>> clones;
  for (int i = 0; i < 4; ++i) {
    auto c = (*original)->clone();
    ASSERT_TRUE(c) << c.error().to_string();
    clones.push_back(std::move(*c));
  }
  std::vector<std::string> got(clones.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < clones.size(); ++i)
    threads.emplace_back([&, i] {
      for (int round = 0; round < 20; ++round) {
        auto source = memory_source(log, "a.log");
        auto d = clones[i]->diagnose(*source);
        got[i] = d ? to_json(*d).dump() : d.error().to_string();
        if (got[i] != want) return;
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, want);
}

}  // namespace
}  // namespace headroom::server
