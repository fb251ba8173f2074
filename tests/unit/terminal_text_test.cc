#include "util/terminal_text.h"

#include <gtest/gtest.h>

namespace headroom::util {
namespace {

TEST(TerminalSafe, PrintableTextIsKept) {
  EXPECT_EQ(terminal_safe("meta-llama/Llama-3.1-8B-Instruct"), "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(terminal_safe("Qwen 通义 ✓"), "Qwen 通义 ✓");
}

// Regression: watch printed a server's model_name label raw, so a hostile /metrics page could set
// the window title, clear the screen or add lines to the frame.
TEST(TerminalSafe, EscapeSequencesAndLineBreaksAreWrittenOut) {
  EXPECT_EQ(terminal_safe("\x1b]0;owned\x07x"), "\\x1b]0;owned\\x07x");
  EXPECT_EQ(terminal_safe("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(terminal_safe("a\nb\r\tc\x7f"), "a\\nb\\r\\tc\\x7f");
}

TEST(TerminalSafe, C1ControlsBidiOverridesAndBadUtf8AreEscaped) {
  EXPECT_EQ(terminal_safe("\xc2\x9b" "2J"), "\\u009b2J");   // CSI as one C1 character
  EXPECT_EQ(terminal_safe("x\xe2\x80\xaey"), "x\\u202ey");   // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(terminal_safe("\xff\xc0\xaf"), "\\xff\\xc0\\xaf");  // not UTF-8; an overlong '/'
  EXPECT_EQ(terminal_safe("\xe2\x82"), "\\xe2\\x82");        // cut short
}

TEST(TerminalSafe, LongTextIsCutBeforeItIsLookedAt) {
  EXPECT_EQ(terminal_safe(std::string(10, 'a'), 4), "aaaa…");
}

}  // namespace
}  // namespace headroom::util
