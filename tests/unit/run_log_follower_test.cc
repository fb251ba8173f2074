// Following vLLM's output as it streams (src/run/log_follower.cc): lines in bounded memory, the
// startup parser fed as lines complete, the head and tail kept for diagnose.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "run/log_follower.h"
#include "util/sha256.h"

namespace headroom::run {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string k_ok_log = std::string(HEADROOM_TEST_DATA_DIR) + "/logs/v1_startup_ok.log";

TEST(LogFollower, ReadsTheStartupNumbersFromChunksCutAnywhere) {
  const std::string log = read(k_ok_log);
  LogFollower f;
  for (std::size_t i = 0; i < log.size(); i += 7) f.feed(StreamId::out, std::string_view(log).substr(i, 7));
  f.finish();
  // vLLM's own lines: "GPU KV cache size: 126,256 tokens", "Model loading took 12.56 GiB".
  EXPECT_EQ(f.run().kv_tokens, 126256);
  EXPECT_EQ(f.run().weights_gib, 12.56);
  EXPECT_TRUE(f.ready());
  EXPECT_TRUE(f.serving());
  EXPECT_EQ(f.lines(), 14);
  EXPECT_EQ(f.content_hash(), util::sha256_hex(log));
}

TEST(LogFollower, IsNotReadyBeforeTheEngineSaysSo) {
  std::string log = read(k_ok_log);
  log = log.substr(0, log.find("init engine"));
  LogFollower f;
  f.feed(StreamId::out, log);
  EXPECT_EQ(f.run().kv_tokens, 126256);
  EXPECT_FALSE(f.ready());
}

TEST(LogFollower, StdoutAndStderrAreSplitIntoLinesSeparately) {
  LogFollower f;
  f.feed(StreamId::out, "(EngineCore pid=1) INFO 04-22 15:13:20 [v1/core/kv_cache_utils.py:1319] GPU KV cache ");
  f.feed(StreamId::err, "Loading safetensors checkpoint shards:  50% Completed | 1/2\r");
  f.feed(StreamId::out, "size: 126,256 tokens\n");
  EXPECT_EQ(f.run().kv_tokens, 126256);
  EXPECT_EQ(f.lines(), 2);
}

TEST(LogFollower, CutsLongLinesAndKeepsBoundedHeadAndTail) {
  FollowerLimits limits;
  limits.max_line_bytes = 100;
  limits.head_bytes = 300;
  limits.tail_bytes = 500;
  LogFollower f(limits);
  const std::string long_line(10'000, 'x');
  f.feed(StreamId::out, long_line);
  f.feed(StreamId::out, long_line + "\n");
  for (int i = 0; i < 1000; ++i) f.feed(StreamId::out, "line " + std::to_string(i) + "\n");
  f.finish();
  EXPECT_EQ(f.cut_lines(), 1);
  EXPECT_EQ(f.lines(), 1001);
  const std::string kept = f.kept_log();
  EXPECT_LE(kept.size(), limits.head_bytes + limits.tail_bytes);
  EXPECT_EQ(kept.substr(0, 101), std::string(100, 'x') + "\n");
  EXPECT_NE(kept.find("line 999\n"), std::string::npos);
  EXPECT_EQ(kept.find("line 500\n"), std::string::npos);
}

TEST(LogFollower, NoticesBinaryOutput) {
  LogFollower f;
  f.feed(StreamId::out, std::string("\x01\x00\x02\n", 4));
  EXPECT_TRUE(f.binary_seen());
}

}  // namespace
}  // namespace headroom::run
