// The serve command's pool of LogDiagnosers: one per request at a time, reused afterwards.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace headroom::server
