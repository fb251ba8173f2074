// Flags vLLM does not know: its argparse exits on them before anything starts ("vllm serve: error:
// unrecognized arguments: ..."). A name that neither headroom nor vLLM's flag list
// (data/vllm_cli_flags.json) has, one or two edits from a vLLM flag, is a typo: predicted as that
// failure, with the flag it most likely meant. Real vLLM flags headroom does not model stay warnings.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/vllm_cli_flags.h"
#include "headroom/vllm_config.h"
#include "unit/engine_test_support.h"

namespace headroom {
namespace {

using test_support::gpus;
using test_support::model;
using test_support::run;

VllmCommand parsed(const std::vector<std::string>& args) {
  auto cmd = parse_vllm_command(args);
  EXPECT_TRUE(cmd) << cmd.error().to_string();
  return cmd ? *cmd : VllmCommand{};
}

Prediction predicted(const std::vector<std::string>& args, VllmVersion version = test_support::k_v019) {
  return run(model("Qwen/Qwen2.5-7B-Instruct"), gpus("H100"), parsed(args).flags, version);
}

bool has_warning(const Prediction& p, const std::string& text) {
  return std::find(p.warnings.begin(), p.warnings.end(), text) != p.warnings.end();
}

TEST(VllmCommandTypos, MistypedFlagIsKeptWithItsValueAndTheFlagItMeant) {
  auto cmd = parsed({"vllm", "serve", "m", "--max-modle-len", "5"});
  EXPECT_TRUE(cmd.warnings.empty());
  ASSERT_EQ(cmd.flags.unrecognized_flags.size(), 1u);
  EXPECT_EQ(cmd.flags.unrecognized_flags[0].shown, "--max-modle-len 5");
  EXPECT_EQ(cmd.flags.unrecognized_flags[0].suggestion, "--max-model-len");
}

// argparse ArgumentParser.parse_args: error('unrecognized arguments: %s' % ' '.join(argv)), as
// "PROG: error: MESSAGE" with PROG "vllm serve"; the run stops before any config is built.
TEST(VllmCommandTypos, MistypedFlagIsVllmsArgparseFailure) {
  Prediction p = predicted({"vllm", "serve", "m", "--max-modle-len", "5", "--gpu-memory-utilisation=0.8"});
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->error_class, "unrecognized_arguments");
  EXPECT_EQ(p.failure->message,
            "vllm serve: error: unrecognized arguments: --max-modle-len 5 --gpu-memory-utilisation=0.8");
  EXPECT_TRUE(has_warning(p, "--max-modle-len is not a vLLM flag; did you mean --max-model-len?"));
  EXPECT_TRUE(has_warning(p, "--gpu-memory-utilisation is not a vLLM flag; did you mean --gpu-memory-utilization?"));
}

// LLM(**kwargs) hands them to EngineArgs(...), whose constructor raises Python's TypeError.
TEST(VllmCommandTypos, MistypedKeywordOfLlmIsATypeError) {
  auto cmd = parse_llm_call("LLM(model='m', max_modle_len=5)");
  ASSERT_TRUE(cmd) << cmd.error().to_string();
  Prediction p = run(model("Qwen/Qwen2.5-7B-Instruct"), gpus("H100"), cmd->flags);
  ASSERT_FALSE(p.starts);
  EXPECT_EQ(p.failure->message, "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'max_modle_len'");
}

TEST(VllmCommandTypos, RealVllmFlagHeadroomDoesNotModelStaysAWarning) {
  auto cmd = parsed({"m", "--max-num-partial-prefills", "2"});
  EXPECT_TRUE(cmd.flags.unrecognized_flags.empty());
  ASSERT_EQ(cmd.warnings.size(), 1u);
  EXPECT_EQ(cmd.warnings[0], "vLLM flag --max-num-partial-prefills 2 is not modelled; the prediction ignores it");
  EXPECT_TRUE(predicted({"m", "--max-num-partial-prefills", "2"}).starts);
}

TEST(VllmCommandTypos, UnknownNameFarFromAnyFlagStaysAWarning) {
  auto cmd = parsed({"m", "--frobnicate-the-widgets", "3"});
  EXPECT_TRUE(cmd.flags.unrecognized_flags.empty());
  ASSERT_EQ(cmd.warnings.size(), 1u);
  EXPECT_EQ(cmd.warnings[0], "vLLM flag --frobnicate-the-widgets 3 is not modelled; the prediction ignores it");
}

// argparse's own -h/--help, --no-X of a BooleanOptionalAction, --X.field of a JSON flag
// (FlexibleArgumentParser) and abbreviations (allow_abbrev) are all taken by vLLM.
TEST(VllmCommandTypos, HelpNegationsJsonFieldsAndAbbreviationsAreNotTypos) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"m", "--help"}, {"m", "-h"}, {"m", "--no-enable-log-requests"},
        {"m", "--compilation-config.level", "3"}, {"m", "--max-num-partial", "2"}, {"m", "--use-v2-block-manager"}}) {
    auto cmd = parsed(args);
    EXPECT_TRUE(cmd.flags.unrecognized_flags.empty()) << args[1];
  }
  EXPECT_TRUE(engine::vllm_accepts_flag("--help"));
  EXPECT_FALSE(engine::vllm_accepts_flag("--max-modle-len"));
}

TEST(VllmCommandTypos, VersionOlderThanTheFlagListKeepsAWarning) {
  ASSERT_EQ(engine::oldest_flag_list_version().to_string(), "0.7.0");
  Prediction p = predicted({"m", "--max-modle-len", "5"}, VllmVersion{0, 6, 3});
  EXPECT_TRUE(!p.failure || p.failure->error_class != "unrecognized_arguments");
  EXPECT_TRUE(has_warning(p, "vLLM flag --max-modle-len 5 is not one headroom knows (its list of vLLM's flags starts at "
                             "v0.7.0); did you mean --max-model-len? vLLM exits on a flag it does not know (unrecognized "
                             "arguments)"));
}

TEST(VllmCommandTypos, KnownFlagsAreNotTypos) {
  auto cmd = parsed({"m", "--max-model-len", "4096", "--port", "8000", "--seed", "1"});
  EXPECT_TRUE(cmd.warnings.empty());
  EXPECT_TRUE(cmd.flags.unrecognized_flags.empty());
}

}  // namespace
}  // namespace headroom
