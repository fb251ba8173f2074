// Applying computed changes to the user's own command line (src/run/command_edit.cc).
#include <gtest/gtest.h>

#include "run/command_edit.h"

namespace headroom::run {
namespace {

using Words = std::vector<std::string>;

LaunchSpec spec(Words argv) { return LaunchSpec{std::move(argv), {}}; }

TEST(CommandEdit, ReplacesAValueWhereItStandsWhateverItsSpelling) {
  EXPECT_EQ(edit_command(spec({"vllm", "serve", "m", "--max_model_len", "32768", "-tp", "2"}),
                         {{"--max-model-len", "8192"}, {"--tensor-parallel-size", "4"}})
                .argv,
            (Words{"vllm", "serve", "m", "--max_model_len", "8192", "-tp", "4"}));
  EXPECT_EQ(edit_command(spec({"vllm", "serve", "m", "--gpu-memory-utilization=0.95"}), {{"--gpu-memory-utilization", "0.9"}}).argv,
            (Words{"vllm", "serve", "m", "--gpu-memory-utilization=0.9"}));
}

TEST(CommandEdit, AppendsANewFlagAndABooleanOnce) {
  EXPECT_EQ(edit_command(spec({"vllm", "serve", "m", "--enforce-eager"}), {{"--enforce-eager", ""}, {"--kv-cache-dtype", "fp8"}}).argv,
            (Words{"vllm", "serve", "m", "--enforce-eager", "--kv-cache-dtype", "fp8"}));
  EXPECT_EQ(edit_command(spec({"vllm", "serve", "m", "--no-enforce-eager"}), {{"--enforce-eager", ""}}).argv,
            (Words{"vllm", "serve", "m", "--enforce-eager"}));
}

TEST(CommandEdit, RemovesADroppedFlagAndItsValue) {
  EXPECT_EQ(edit_command(spec({"vllm", "serve", "m", "-q", "awq", "--max-model-len", "4096"}), {}, {"--quantization"}).argv,
            (Words{"vllm", "serve", "m", "--max-model-len", "4096"}));
}

TEST(CommandEdit, EnvironmentGoesToTheChildOrIntoTheContainer) {
  auto plain = edit_command(spec({"vllm", "serve", "m"}), {{"ENV", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"}});
  EXPECT_EQ(plain.env, (Words{"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"}));
  EXPECT_EQ(plain.argv, (Words{"vllm", "serve", "m"}));
  auto docker = edit_command(spec({"docker", "run", "--gpus", "all", "vllm/vllm-openai", "--model", "m", "-p", "2"}),
                             {{"ENV", "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0"}, {"--max-model-len", "8192"}});
  EXPECT_EQ(docker.argv, (Words{"docker", "run", "-e", "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0", "--gpus", "all",
                                "vllm/vllm-openai", "--model", "m", "-p", "2", "--max-model-len", "8192"}));
  EXPECT_TRUE(docker.env.empty());
}

TEST(CommandEdit, ContainerOptionsAreNotTakenForVllmFlags) {
  // -q is vLLM's --quantization; before the image it is not vLLM's.
  EXPECT_EQ(edit_command(spec({"docker", "run", "-v", "/m:/m", "vllm/vllm-openai", "--model", "m", "-q", "awq"}), {}, {"--quantization"}).argv,
            (Words{"docker", "run", "-v", "/m:/m", "vllm/vllm-openai", "--model", "m"}));
}

TEST(CommandEdit, DisplayQuotesAndHidesSecrets) {
  LaunchSpec s{{"vllm", "serve", "my model", "--api-key", "sk-123", "--api_key=sk-456"}, {"HF_TOKEN=hf_abc", "VLLM_USE_V1=1"}};
  EXPECT_EQ(display_command(s), "HF_TOKEN=*** VLLM_USE_V1=1 vllm serve 'my model' --api-key *** --api_key=***");
  EXPECT_EQ(display_command(spec({"docker", "run", "-e", "HF_TOKEN=hf_abc", "img"})), "docker run -e HF_TOKEN=*** img");
}

}  // namespace
}  // namespace headroom::run
