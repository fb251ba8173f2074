// Flags vLLM does not know: argparse exits on them ("unrecognized arguments"). A name one or two
// edits from a flag headroom knows is taken for a typo and named; other unknown names may be real
// vLLM flags headroom does not model, so each stays a warning.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "headroom/vllm_config.h"

namespace headroom {
namespace {

std::vector<std::string> warnings_of(const std::vector<std::string>& args) {
  auto cmd = parse_vllm_command(args);
  EXPECT_TRUE(cmd) << cmd.error().to_string();
  return cmd ? cmd->warnings : std::vector<std::string>{};
}

TEST(VllmCommandTypos, MistypedFlagNamesTheFlagAndVllmsExit) {
  auto w = warnings_of({"vllm", "serve", "m", "--max-modle-len", "5"});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "vLLM flag --max-modle-len 5 is not one headroom knows; did you mean --max-model-len? vLLM exits on a flag it "
            "does not know (vllm serve: error: unrecognized arguments: --max-modle-len 5)");
}

TEST(VllmCommandTypos, MissingLetterIsATypoToo) {
  auto w = warnings_of({"m", "--gpu-memory-utilisation=0.8"});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("did you mean --gpu-memory-utilization?"), std::string::npos) << w[0];
}

TEST(VllmCommandTypos, UnknownNamesFarFromAnyFlagStayUnmodelledWarnings) {
  auto w = warnings_of({"m", "--guided-decoding-backend", "xgrammar"});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "vLLM flag --guided-decoding-backend xgrammar is not modelled; the prediction ignores it");
}

TEST(VllmCommandTypos, KnownFlagsAreNotTypos) {
  EXPECT_TRUE(warnings_of({"m", "--max-model-len", "4096", "--port", "8000", "--seed", "1"}).empty());
}

}  // namespace
}  // namespace headroom
