// Text of any length from outside meets a pattern in linear time: a pasted script's environment
// lines (RE2 in llm_call.cc; std::regex recursed once per character and overflowed the stack on
// a long value) and a checkpoint's quantization ignore list (RE2 in synthesize_weights.cc;
// std::regex backtracked exponentially on a glob of many stars).
#include <gtest/gtest.h>

#include <string>

#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "unit/engine_test_support.h"

namespace headroom {
namespace {

TEST(HostilePatterns, EnvironmentLineWithA100kCharacterValueIsRead) {
  const std::string value(100000, 'A');
  const std::string script = "import os\nos.environ[\"VLLM_ATTENTION_BACKEND\"] = \"" + value +
                             "\"\nllm = LLM(model=\"Qwen/Qwen3-8B\", max_model_len=4096)\n";
  auto cmd = parse_llm_call(script);
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  ASSERT_TRUE(cmd->flags.attention_backend);
  EXPECT_EQ(cmd->flags.attention_backend->size(), value.size());
  EXPECT_EQ(cmd->flags.max_model_len, 4096);
}

TEST(HostilePatterns, IgnorePatternsOfManyStarsOrGreatLengthMatchNothingAndEndQuickly) {
  ModelSpec m = test_support::model("MiniMaxAI/MiniMax-M2.5");
  ASSERT_TRUE(m.quantization);
  const Bytes plain = synthesize_weights(m).total_bytes;
  // "^(.*){40}Q" for std::regex: no module name holds a Q, so a backtracking engine tries every
  // split of the name over forty stars.
  m.quantization->ignored_modules.push_back(std::string(40, '*') + "Q");
  m.quantization->ignored_modules.push_back("re:" + std::string(100000, 'a') + "Q");
  m.quantization->ignored_modules.push_back(std::string(100000, 'b'));
  EXPECT_EQ(synthesize_weights(m).total_bytes, plain);
}

}  // namespace
}  // namespace headroom
