#include "util/subprocess.h"

#include <gtest/gtest.h>

namespace headroom::util {
namespace {

TEST(RunProgram, CapturesStdoutStderrAndExitStatus) {
  auto r = run_program("sh", {"-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_status, 3);
}

TEST(RunProgram, ArgumentsAreNotInterpretedByAShell) {
  auto r = run_program("echo", {"$HOME;", "a b"});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->out, "$HOME; a b\n");
}

TEST(RunProgram, MissingProgramIsNotFound) {
  auto r = run_program("/nonexistent/program", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::not_found);
  EXPECT_EQ(r.error().to_string(), "/nonexistent/program: program not found");
}

TEST(RunProgram, LargeOutputOnBothStreamsDoesNotBlock) {
  auto r = run_program("sh", {"-c", "i=0; while [ $i -lt 3000 ]; do echo 0123456789012345678901234567890; "
                                    "echo 0123456789012345678901234567890 >&2; i=$((i+1)); done"});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->out.size(), 3000u * 32u);
  EXPECT_EQ(r->err.size(), 3000u * 32u);
}

}  // namespace
}  // namespace headroom::util
