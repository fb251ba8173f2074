// The request bodies of `headroom serve`: vLLM flag names, pasted commands, errors that name the key.
#include <gtest/gtest.h>

#include "headroom/api_request.h"

namespace headroom {
namespace {

TEST(CheckRequest, FlagsReadAsTheCommandLineWould) {
  auto r = parse_check_request(R"({"model": "m/x", "gpu": "H100", "gpus": 2,
    "flags": {"max_model_len": 4096, "gpu_memory_utilization": 0.85, "enforce_eager": true, "tensor_parallel_size": 2}})");
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& c = r->request.command;
  EXPECT_EQ(c.model, "m/x");
  EXPECT_EQ(c.flags.max_model_len, 4096);
  EXPECT_DOUBLE_EQ(*c.flags.gpu_memory_utilization, 0.85);
  EXPECT_EQ(c.flags.enforce_eager, true);
  EXPECT_EQ(c.flags.tensor_parallel_size, 2);
  EXPECT_EQ(r->request.target.gpu, "H100");
  EXPECT_EQ(r->request.target.gpus, 2);
}

TEST(CheckRequest, FalseIsTheNegatedFlag) {
  auto r = parse_check_request(R"({"model": "m/x", "flags": {"enable_prefix_caching": false}})");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->request.command.flags.enable_prefix_caching, false);
}

TEST(CheckRequest, PastedCommandWithContinuationsAndQuotes) {
  auto r = parse_check_request(R"({"command": "vllm serve 'm/x' \\\n  --max-model-len=8192 \\\n  -tp \"2\""})");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->request.command.model, "m/x");
  EXPECT_EQ(r->request.command.flags.max_model_len, 8192);
  EXPECT_EQ(r->request.command.flags.tensor_parallel_size, 2);
}

TEST(CheckRequest, FlagsBesideACommandComeAfterIt) {
  auto r = parse_check_request(R"({"command": "vllm serve m/x --max-model-len 8192", "flags": {"max_model_len": 1024}})");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->request.command.flags.max_model_len, 1024);
}

TEST(CheckRequest, ModelAndCommandMustAgree) {
  auto r = parse_check_request(R"({"model": "m/y", "command": "vllm serve m/x"})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(r.error().message, "the command serves 'm/x' but \"model\" is 'm/y': give one of them");
}

TEST(CheckRequest, BadFlagValueNamesTheKey) {
  auto r = parse_check_request(R"({"model": "m/x", "flags": {"max_model_len": "lots"}})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(r.error().where, "flags.max_model_len");
}

TEST(CheckRequest, UnknownKeySuggestsTheClosest) {
  auto r = parse_check_request(R"({"model": "m/x", "vllm_verison": "0.19.0"})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::parse_error);
  EXPECT_EQ(r.error().where, "vllm_verison");
  EXPECT_NE(r.error().message.find("did you mean vllm_version?"), std::string::npos) << r.error().message;
}

TEST(CheckRequest, SyntaxErrorPointsIntoTheBody) {
  auto r = parse_check_request("{\n  \"model\": }");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::parse_error);
  EXPECT_EQ(r.error().where, "body:2:12");
}

TEST(CheckRequest, WrongTypesAndRanges) {
  auto t = parse_check_request(R"({"model": "m/x", "gpus": 1.5})");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message, "expected an integer, got 1.5");
  auto n = parse_check_request(R"({"model": "m/x", "gpus": 0})");
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().code, ErrorCode::invalid_argument);
  auto big = parse_check_request(R"({"model": "m/x", "gpus": 99999999999999999999})");
  ASSERT_FALSE(big);
  auto nested = parse_check_request(R"({"model": "m/x", "flags": {"max_model_len": [1]}})");
  ASSERT_FALSE(nested);
  EXPECT_EQ(nested.error().where, "flags.max_model_len");
  auto name = parse_check_request(R"({"model": "m/x", "flags": {"--max-model-len": 1}})");
  ASSERT_FALSE(name);
  EXPECT_EQ(name.error().message, "expected a vLLM flag name in lower case (max_model_len), got '--max-model-len'");
}

TEST(CheckRequest, CanonicalFormIgnoresKeyOrderAndSpaces) {
  auto a = parse_check_request(R"({"gpu": "H100", "model": "m/x", "flags": {"b": 1, "max_model_len": 8}})");
  auto b = parse_check_request(R"({ "model":"m/x","flags":{"max_model_len":8,"b":1},"gpu":"H100" })");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->canonical, b->canonical);
}

TEST(PlanRequest, WorkloadOptionsAtTheTopLevel) {
  auto r = parse_plan_request(R"({"model": "m/x", "gpu": "L4", "context": 4096, "concurrency": 8, "goal": "latency",
    "allow_fp8_kv": true, "margin_gib": 1.5, "max_gpus": 4})");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->request.context, 4096);
  EXPECT_EQ(r->request.concurrency, 8);
  EXPECT_EQ(r->request.goal, "latency");
  EXPECT_TRUE(r->request.allow_fp8_kv);
  EXPECT_DOUBLE_EQ(*r->request.margin_gib, 1.5);
  EXPECT_EQ(r->request.max_gpus, 4);
}

// "command" as `plan -- vllm serve ...`: the model, --max-model-len as the context, TP as the GPUs,
// an fp8 KV cache allowed; what the body states wins.
TEST(PlanRequest, CommandGivesTheModelAndWhatTheBodyLeavesOpen) {
  auto r = parse_plan_request(
      R"({"command": "vllm serve Qwen/Qwen3-8B --max-model-len 40960 -tp 2 --kv-cache-dtype fp8", "gpu": "L4"})");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->request.model, "Qwen/Qwen3-8B");
  EXPECT_EQ(r->request.context, 40960);
  EXPECT_EQ(r->request.target.gpus, 2);
  EXPECT_TRUE(r->request.allow_fp8_kv);
  EXPECT_EQ(r->request.from_command.size(), 3u);
  auto stated = parse_plan_request(R"({"command": "vllm serve Qwen/Qwen3-8B --max-model-len 40960 -tp 2", "context": 8192, "gpus": 4})");
  ASSERT_TRUE(stated) << stated.error().to_string();
  EXPECT_EQ(stated->request.context, 8192);
  EXPECT_EQ(stated->request.target.gpus, 4);
  EXPECT_TRUE(stated->request.from_command.empty());
  auto two = parse_plan_request(R"({"model": "Qwen/Qwen3-4B", "command": "vllm serve Qwen/Qwen3-8B"})");
  ASSERT_FALSE(two);
  EXPECT_EQ(two.error().where, "model");
}

TEST(PlanRequest, NegativeMarginIsRefused) {
  auto r = parse_plan_request(R"({"model": "m/x", "margin_gib": -1})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "margin_gib");
}

// Regression: "tensor_parallel_size": 1000000 ran past 120 s of CPU before its verdict; sizes are
// refused where the body is read, naming the JSON member.
TEST(CheckRequest, HugeSizesAreRefusedAtTheEdge) {
  auto tp = parse_check_request(R"({"model": "m/x", "flags": {"tensor_parallel_size": 1000000}})");
  ASSERT_FALSE(tp);
  EXPECT_EQ(tp.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(tp.error().where, "flags.tensor_parallel_size");
  EXPECT_EQ(tp.error().message, "must be between 1 and 1,024, got 1,000,000");
  auto pp = parse_check_request(R"({"command": "vllm serve m/x -pp 8192"})");
  ASSERT_FALSE(pp);
  EXPECT_EQ(pp.error().where, "--pipeline-parallel-size");
  auto all = parse_check_request(R"({"model": "m/x", "flags": {"tensor_parallel_size": 1024, "data_parallel_size": 1024}})");
  ASSERT_FALSE(all);
  EXPECT_EQ(all.error().where, "flags.tensor_parallel_size");
  auto gpus = parse_check_request(R"({"model": "m/x", "gpus": 1000000000})");
  ASSERT_FALSE(gpus);
  EXPECT_EQ(gpus.error().message, "must be between 1 and 4,096, got 1,000,000,000");
  auto huge = parse_check_request(R"({"model": "m/x", "nodes": 18446744073709551615})");
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().message, "must be between 1 and 1,024, got 18446744073709551615");
  auto memory = parse_check_request(R"({"model": "m/x", "gpu_memory_gib": 1e300})");
  ASSERT_FALSE(memory);
  EXPECT_EQ(memory.error().where, "gpu_memory_gib");
  EXPECT_TRUE(parse_check_request(R"({"model": "m/x", "flags": {"tensor_parallel_size": 8, "max_model_len": 131072}})"));
}

TEST(PlanRequest, HugeWorkloadNumbersAreRefusedAtTheEdge) {
  for (const char* body : {R"({"model": "m/x", "concurrency": 1000000000})", R"({"model": "m/x", "context": 4611686018427387904})",
                           R"({"model": "m/x", "max_gpus": 18446744073709551615})", R"({"model": "m/x", "gpus_per_node": 100000})",
                           R"({"command": "vllm serve m/x -tp 65536"})"}) {
    auto r = parse_plan_request(body);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument) << body;
  }
}

TEST(CheckRequest, LongStringsAreRefusedBeforeAnyLookup) {
  auto r = parse_check_request(R"({"model": ")" + std::string(5000, 'A') + R"(", "gpu": "H100"})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().where, "model");
  EXPECT_EQ(r.error().message, "expected at most 1024 bytes, got 5000");
  auto v = parse_check_request(R"({"model": "m/x", "vllm_version": ")" + std::string(100, '9') + R"("})");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().where, "vllm_version");
}

TEST(ShellWords, QuotesEscapesAndContinuations) {
  auto w = split_shell_words("vllm serve \"a b\" 'c \"d\"' e\\ f \\\n --x=\"$y\"");
  ASSERT_TRUE(w);
  EXPECT_EQ(*w, (std::vector<std::string>{"vllm", "serve", "a b", "c \"d\"", "e f", "--x=$y"}));
}

TEST(ShellWords, EmptyQuotedWordIsKept) {
  auto w = split_shell_words("a '' b");
  ASSERT_TRUE(w);
  EXPECT_EQ(*w, (std::vector<std::string>{"a", "", "b"}));
}

TEST(ShellWords, UnterminatedQuoteSaysWhere) {
  auto w = split_shell_words("vllm serve 'm/x");
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().message, "unterminated single quote opened at byte 12");
}

}  // namespace
}  // namespace headroom
