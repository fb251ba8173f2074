// Allocation arithmetic: a frame-less out-of-memory error placed by the size it tried to allocate.
// Sizes come from vLLM's allocations (sampler logits max_num_seqs × vocabulary × 4 B in float32,
// one KV tensor per layer) and torch's two-decimal format_size.
#include <gtest/gtest.h>

#include "diagnose/allocation_match.h"
#include "diagnose_test_support.h"

namespace headroom {
namespace {

ModelSpec llama_like() {
  ModelSpec m;
  m.id = "test/llama-3.1-8b-like";
  m.vocab_size = 128256;  // Llama 3.1's vocabulary
  m.num_layers = 32;
  return m;
}

Finding oom(double tried_gib, double total_gib) {
  Finding f;
  f.out_of_memory = true;
  f.phase = "unknown";
  f.facts["tried_gib"] = tried_gib;
  f.facts["total_gib"] = total_gib;
  return f;
}

TEST(AllocationMatch, SamplerLogitsOfMaxNumSeqsTimesVocabularyInFloat32) {
  LoggedRun run;
  run.flags.max_num_seqs = 1024;
  ModelSpec model = llama_like();
  // 1024 × 128,256 × 4 B = 525,336,576 B = 501.00 MiB, as torch prints it.
  auto m = match_allocation(501.00 / 1024.0, oom(501.00 / 1024.0, 79.19), run, &model);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->phase, "sampler-warmup");
  EXPECT_EQ(m->basis, "501.00 MiB = 1,024 sequences × 128,256 vocabulary × 4 B (float32 logits): the sampler warm-up");
  EXPECT_DOUBLE_EQ(m->confidence, 0.8);
}

TEST(AllocationMatch, SamplerAfterStartupIsServing) {
  LoggedRun run;
  run.flags.max_num_seqs = 256;
  run.engine_started = true;
  ModelSpec model = llama_like();
  // 256 × 128,256 × 8 B (int64 sort indices) = 262,668,288 B = 250.50 MiB.
  auto m = match_allocation(250.50 / 1024.0, oom(250.50 / 1024.0, 79.19), run, &model);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->phase, "runtime-decode");
}

TEST(AllocationMatch, OneLayersKvCacheTensor) {
  LoggedRun run;
  run.kv_cache_gib = 32.0;  // "Available KV cache memory: 32.00 GiB"
  ModelSpec model = llama_like();
  auto m = match_allocation(1.0, oom(1.0, 79.19), run, &model);  // 32 GiB / 32 layers
  ASSERT_TRUE(m);
  EXPECT_EQ(m->phase, "kv-cache-alloc");
}

TEST(AllocationMatch, LargerThanTheGpuIsTheProfileRun) {
  LoggedRun run;
  auto m = match_allocation(1029.51, oom(1029.51, 79.35), run, nullptr);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->phase, "profile-run");
}

TEST(AllocationMatch, NoMatchKeepsUnknown) {
  LoggedRun run;
  run.flags.max_num_seqs = 1024;
  ModelSpec model = llama_like();
  EXPECT_FALSE(match_allocation(80.0 / 1024.0, oom(80.0 / 1024.0, 139.72), run, &model));
}

TEST(AllocationMatch, DiagnoseUsesTheContextGivenOnTheCommandLine) {
  // A bare OOM line: nothing in the log places it.
  std::string log =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 501.00 MiB. GPU 0 has a total capacity of 79.19 GiB "
      "of which 300.00 MiB is free.\n";
  auto source = memory_source(log, "bare.log");
  DiagnoseOptions options;
  options.context.model = "meta-llama/Llama-3.1-8B-Instruct";  // catalogue model, vocabulary 128,256
  options.context.flags.max_num_seqs = 1024;
  auto d = diagnose(*source, test_support::kb(), options);
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->primary);
  EXPECT_EQ(reported_class(*d->primary), "sampler_warmup_oom");
  EXPECT_EQ(d->primary->phase_evidence, "allocation");
  ASSERT_TRUE(d->primary->phase_confidence);

  auto plain = test_support::run_text(log);
  ASSERT_TRUE(plain.primary);
  EXPECT_EQ(plain.primary->phase, "unknown");  // without the context nothing matches
}

}  // namespace
}  // namespace headroom
