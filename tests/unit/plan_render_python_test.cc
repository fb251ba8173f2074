// The Python rendering of a plan, read back as a pasted LLM(...) call, predicts the same engine
// under the offline defaults (engine/arg_utils.py get_batch_defaults, LLM_CLASS).
#include <gtest/gtest.h>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/plan.h"
#include "headroom/plan_render.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"

namespace headroom {
namespace {

TEST(PlanRenderPython, TheCodeReproducesThePlanUnderOfflineDefaults) {
  auto model = catalog_model("meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_TRUE(model);
  for (const char* gpu : {"H100", "L4"}) {
    GpuSetup setup;
    setup.gpu = *GpuCatalog::builtin().find(gpu);
    PlannedConfig c;
    c.flags.max_model_len = 8192;
    c.flags.gpu_memory_utilization = 0.9;
    auto planned = predict(*model, setup, c.flags, VllmVersion{0, 19, 0});
    ASSERT_TRUE(planned);
    c.prediction = *planned;
    auto cmd = parse_llm_call(render_python(model->id, c, setup));
    ASSERT_TRUE(cmd) << cmd.error().to_string();
    ASSERT_EQ(cmd->flags.usage_context, UsageContext::llm_class);
    auto offline = predict(*model, setup, cmd->flags, VllmVersion{0, 19, 0});
    ASSERT_TRUE(offline);
    EXPECT_EQ(offline->settings.max_num_batched_tokens, planned->settings.max_num_batched_tokens) << gpu;
    EXPECT_EQ(offline->settings.max_num_seqs, planned->settings.max_num_seqs) << gpu;
    EXPECT_EQ(offline->kv_cache_tokens, planned->kv_cache_tokens) << gpu;
  }
}

}  // namespace
}  // namespace headroom
