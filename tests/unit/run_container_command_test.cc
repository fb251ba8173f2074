// docker/podman run lines read as the vLLM command they run (src/engine/container_command.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/container_command.h"
#include "headroom/vllm_config.h"

namespace headroom {
namespace {

using Words = std::vector<std::string>;

Words unwrap(const Words& words) {
  auto out = unwrap_container_command(words);
  EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().to_string());
  return out ? *out : Words{};
}

TEST(ContainerCommand, VllmOpenaiImageRunsVllmServeWithTheArgumentsAfterTheImage) {
  EXPECT_EQ(unwrap({"docker", "run", "--gpus", "all", "-p", "8000:8000", "-v", "/models:/models", "--ipc=host",
                    "vllm/vllm-openai:latest", "--model", "Qwen/Qwen3-8B", "-tp", "2"}),
            (Words{"vllm", "serve", "--model", "Qwen/Qwen3-8B", "-tp", "2"}));
}

TEST(ContainerCommand, EnvOptionsBecomeAssignmentsAndTheClientsEnvironmentDoesNot) {
  EXPECT_EQ(unwrap({"VLLM_USE_V1=0", "podman", "run", "-e", "VLLM_ATTENTION_BACKEND=FLASHINFER", "--env=HF_HOME=/x", "-e",
                    "HF_TOKEN", "--rm", "-it", "docker.io/vllm/vllm-openai:v0.11.0", "Qwen/Qwen3-8B"}),
            (Words{"VLLM_ATTENTION_BACKEND=FLASHINFER", "HF_HOME=/x", "vllm", "serve", "Qwen/Qwen3-8B"}));
}

TEST(ContainerCommand, ShortOptionGroupsTakeTheirValue) {
  EXPECT_EQ(unwrap({"docker", "run", "-itp", "8000:8000", "-eVLLM_USE_V1=1", "vllm/vllm-openai", "m"}),
            (Words{"VLLM_USE_V1=1", "vllm", "serve", "m"}));
}

TEST(ContainerCommand, OtherImagesRunTheCommandAfterTheImage) {
  EXPECT_EQ(unwrap({"docker", "container", "run", "nvcr.io/nvidia/pytorch:24.05", "vllm", "serve", "m"}),
            (Words{"vllm", "serve", "m"}));
  EXPECT_EQ(unwrap({"docker", "run", "--entrypoint", "python3", "vllm/vllm-openai", "-m",
                    "vllm.entrypoints.openai.api_server", "--model", "m"}),
            (Words{"python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"}));
}

TEST(ContainerCommand, OtherCommandsAreLeftAlone) {
  EXPECT_EQ(unwrap({"vllm", "serve", "m"}), (Words{"vllm", "serve", "m"}));
  EXPECT_EQ(unwrap({"docker", "ps"}), (Words{"docker", "ps"}));
}

TEST(ContainerCommand, MissingImageIsAnError) {
  auto out = unwrap_container_command({"docker", "run", "--gpus", "all"});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().to_string(), "docker run: expected an image after the options");
}

TEST(ContainerCommand, CheckParsesADockerRunLikeTheVllmServeItRuns) {
  auto docker = parse_vllm_command({"docker", "run", "--gpus", "all", "-v", "/data:/data", "-e",
                                    "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", "vllm/vllm-openai:latest", "--model",
                                    "Qwen/Qwen3-8B", "--max-model-len", "32768", "-tp", "2"});
  ASSERT_TRUE(docker.has_value()) << docker.error().to_string();
  EXPECT_EQ(docker->model, "Qwen/Qwen3-8B");
  EXPECT_EQ(docker->flags.max_model_len, 32768);
  EXPECT_EQ(docker->flags.tensor_parallel_size, 2);
  EXPECT_TRUE(docker->flags.allow_long_max_model_len);
}

}  // namespace
}  // namespace headroom
