// LogNormalizer: colour escapes, prefixes, wrapped and glued lines, line numbers, bounded memory.
// The inputs are synthetic lines in the formats the tools write (docker compose, kubectl --prefix,
// journalctl, Ray, vLLM's multiprocess tags); the vLLM messages are the templates of
// vllm/v1/worker/gpu_worker.py (init_device, v0.10) and vllm/v1/core/kv_cache_utils.py.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "headroom/log_normalizer.h"

namespace headroom {
namespace {

struct Out {
  std::int64_t first, last;
  std::string text;
};

std::vector<Out> normalize(const std::vector<std::string>& lines, std::size_t max_line_bytes = 1 << 20) {
  std::vector<Out> out;
  LogNormalizer n([&](const NormalizedLine& l) { out.push_back({l.first_line, l.last_line, std::string(l.text)}); },
                  max_line_bytes);
  for (std::size_t i = 0; i < lines.size(); ++i) n.feed(static_cast<std::int64_t>(i + 1), lines[i]);
  n.finish();
  return out;
}

TEST(LogNormalizer, StripsRealAnsiEscapes) {
  EXPECT_EQ(strip_ansi("\x1b[1;36mINFO\x1b[0m done"), "INFO done");
  EXPECT_EQ(strip_ansi("\x1b]0;title\x07text"), "text");
}

TEST(LogNormalizer, StripsTextualEscapeForms) {
  EXPECT_EQ(strip_ansi("#033[2m#033[33m(raylet)#033[0m x"), "(raylet) x");
  EXPECT_EQ(strip_ansi("\\x1b[31mERROR\\x1b[0m y"), "ERROR y");
  EXPECT_EQ(strip_ansi("\\033[1mA\\033[0m ^[[32mB^[[0m \\u001b[0mC"), "A B C");
}

TEST(LogNormalizer, StripsColourCodesWhoseEscapeWasLost) {
  EXPECT_EQ(strip_ansi("[1;36m(EngineCore_DP0 pid=43)[0;0m INFO"), "(EngineCore_DP0 pid=43) INFO");
  EXPECT_EQ(strip_ansi("[rank0]: x [0]"), "[rank0]: x [0]");  // brackets that are not colour codes stay
}

TEST(LogNormalizer, RemovesVllmProcessTags) {
  auto out = normalize({"(EngineCore_DP0 pid=1094) ValueError: x",
                        "(VllmWorker rank=1 pid=97) ERROR 03-20 23:26:06 [multiproc_executor.py:375] y",
                        "(APIServer pid=132135) (DPEngineCoreActor pid=143282) ERROR 12-23 23:04:22 [core.py:1525] z"});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].text, "ValueError: x");
  EXPECT_EQ(out[1].text, "ERROR 03-20 23:26:06 [multiproc_executor.py:375] y");
  EXPECT_EQ(out[2].text, "ERROR 12-23 23:04:22 [core.py:1525] z");
}

TEST(LogNormalizer, RemovesRayPrefixes) {
  EXPECT_EQ(log_prefix_length("(raylet) node_manager.cc:3007: x"), 9u);
  EXPECT_EQ(log_prefix_length("(pid=2345, ip=10.0.0.3) INFO x"), 24u);
  EXPECT_EQ(log_prefix_length("(RayWorkerWrapper pid=5, ip=10.0.0.3) INFO x"), 38u);
  EXPECT_EQ(log_prefix_length("(1) The process is killed by SIGKILL"), 0u);  // Ray's own numbered cause stays
}

TEST(LogNormalizer, RemovesDockerComposePrefix) {
  auto out = normalize({"vllm-1  | ERROR 11-18 18:07:28 engine.py:366] ValueError: No available memory for the cache blocks."});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "ERROR 11-18 18:07:28 engine.py:366] ValueError: No available memory for the cache blocks.");
}

TEST(LogNormalizer, RemovesKubectlPrefixAndTimestamps) {
  std::string line = "[pod/vllm-7d9f/vllm] 2026-03-01T10:00:00.123456789Z INFO 03-01 10:00:00 [api_server.py:1] up";
  auto out = normalize({line});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "INFO 03-01 10:00:00 [api_server.py:1] up");
}

TEST(LogNormalizer, RemovesSystemdJournalPrefix) {
  auto out = normalize({"Nov 23 23:20:16 gpu-node-1 vllm[4242]: torch.OutOfMemoryError: CUDA out of memory.",
                        "2026-11-23T23:20:16+0000 gpu-node-1 vllm[4242]: INFO 11-23 23:20:16 [core.py:1] x"});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].text, "torch.OutOfMemoryError: CUDA out of memory.");
  EXPECT_EQ(out[1].text, "INFO 11-23 23:20:16 [core.py:1] x");
}

TEST(LogNormalizer, KeepsTracebackIndentationAfterAPrefix) {
  auto out = normalize({"[rank0]:   File \"/x/vllm/worker/worker.py\", line 1, in load_model"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "  File \"/x/vllm/worker/worker.py\", line 1, in load_model");
}

TEST(LogNormalizer, JoinsLinesHardWrappedAtATerminalWidth) {
  // One message wrapped at 53 columns, cut mid-word and mid-number.
  std::string message =
      "ValueError: Free memory on device (3.22/4.0 GiB) on startup is less than desired GPU memory utilization "
      "(0.9, 3.6 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.";
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < message.size(); at += 53) lines.push_back(message.substr(at, 53));
  ASSERT_GE(lines.size(), 3u);
  auto out = normalize(lines);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, message);
  EXPECT_EQ(out[0].first, 1);
  EXPECT_EQ(out[0].last, static_cast<std::int64_t>(lines.size()));
}

TEST(LogNormalizer, JoinsWordWrappedLinesWithASpace) {
  auto out = normalize({"AssertionError: Error in memory profiling. Initial free memory 82.94 GiB,",
                        "current free memory 90.17 GiB. This happens when other processes sharing the",
                        "same container release GPU memory while vLLM is profiling."});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text,
            "AssertionError: Error in memory profiling. Initial free memory 82.94 GiB, current free memory 90.17 GiB. "
            "This happens when other processes sharing the same container release GPU memory while vLLM is profiling.");
}

TEST(LogNormalizer, JoinsTheLinesOfOneVllmRecord) {
  // vLLM repeats its header on every line of a multi-line message.
  auto out = normalize({"ERROR 05-01 10:00:00 [core.py:700] ValueError: To serve at least one request with the model's max seq len (262144),",
                        "ERROR 05-01 10:00:00 [core.py:700] 22.5 GiB KV cache is needed, which is larger than the available KV cache memory (17.39 GiB)."});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text,
            "ERROR 05-01 10:00:00 [core.py:700] ValueError: To serve at least one request with the model's max seq len "
            "(262144), 22.5 GiB KV cache is needed, which is larger than the available KV cache memory (17.39 GiB).");
}

TEST(LogNormalizer, NeverJoinsTracebackLinesOrNewRecords) {
  auto out = normalize({"Traceback (most recent call last):",
                        "  File \"/x/vllm/v1/worker/gpu_worker.py\", line 180, in init_device",
                        "    raise ValueError(",
                        "ValueError: something long enough to have been wrapped by a terminal window",
                        "INFO 01-01 00:00:00 [core.py:1] next record",
                        "torch.OutOfMemoryError: CUDA out of memory."});
  EXPECT_EQ(out.size(), 6u);
}

TEST(LogNormalizer, DoesNotJoinAcrossInterleavedProcesses) {
  auto out = normalize({"(VllmWorker rank=0 pid=85) a line that is long enough to be wrapped by a terminal",
                        "(VllmWorker rank=1 pid=97) continues nothing of the line above"});
  EXPECT_EQ(out.size(), 2u);
}

TEST(LogNormalizer, SplitsLinesGluedTogetherAtProcessTags) {
  auto out = normalize({"in cached_file(APIServer pid=3041)     file = cached_files()(APIServer pid=3041) OSError: x is not a "
                        "local folder"});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].text, "in cached_file");
  EXPECT_EQ(out[2].text, "OSError: x is not a local folder");
  for (const auto& o : out) EXPECT_EQ(o.first, 1);  // every piece points at the line it came from
}

TEST(LogNormalizer, LineNumbersPointIntoTheOriginal) {
  auto out = normalize({"2024-02-02 21:43:49.554", "[b2k2ml81pl56tl]", "[info]", "INFO 02-03 03:43:49 model_runner.py:629] x",
                        "", "ERROR y"});
  ASSERT_EQ(out.size(), 2u);  // the console's metadata lines are prefixes only, so nothing is left of them
  EXPECT_EQ(out[0].first, 4);
  EXPECT_EQ(out[1].first, 6);
}

TEST(LogNormalizer, HugeInputStaysBounded) {
  // 20,000 continuation lines of 100 bytes: the joined text is emitted in pieces of at most 64 KiB.
  std::vector<Out> out;
  std::size_t longest = 0;
  LogNormalizer n([&](const NormalizedLine& l) { longest = std::max(longest, l.text.size()); out.push_back({l.first_line, l.last_line, {}}); },
                  64 * 1024);
  n.feed(1, std::string(100, 'a'));
  for (int i = 2; i <= 20000; ++i) n.feed(i, std::string(100, 'b'));
  n.finish();
  EXPECT_LE(longest, 64u * 1024);
  EXPECT_GT(out.size(), 20u);
  EXPECT_EQ(out.back().last, 20000);
}

// Log collectors' JSON records (formats as the tools document them: Docker's json-file driver,
// journalctl -o json, Google Cloud Logging, Loki): the text they carry is read as the line.
std::vector<std::string> texts(const std::vector<Out>& out) {
  std::vector<std::string> t;
  for (const auto& o : out) t.push_back(o.text);
  return t;
}

TEST(LogNormalizer, ReadsDockerJsonFileRecordsAsTheirLines) {
  const std::vector<std::string> plain = {
      "ERROR 03-20 23:26:06 [core.py:340] Traceback (most recent call last):",
      "ERROR 03-20 23:26:06 [core.py:340]   File \"/v/kv_cache_utils.py\", line 6, in _check_enough_kv_cache_memory",
      "ValueError: To serve at least one request with the model's max seq len (250000), (1.8 GiB KV cache is needed"};
  std::vector<std::string> wrapped;
  for (const auto& l : plain) {
    std::string escaped;
    for (char c : l) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
    wrapped.push_back("{\"log\":\"" + escaped + "\\n\",\"stream\":\"stderr\",\"time\":\"2026-03-20T23:26:06.1Z\"}");
  }
  EXPECT_EQ(texts(normalize(wrapped)), texts(normalize(plain)));
  auto out = normalize(wrapped);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].first, 3);
}

TEST(LogNormalizer, JoinsDockerPiecesOfOneLongLine) {
  // Docker cuts lines over 16 KiB into records; only the last piece ends with the newline.
  auto out = normalize({R"({"log":"ValueError: To serve at least one request ","stream":"stderr"})",
                        R"({"log":"with the model's max seq len (250000)\n","stream":"stderr"})",
                        R"({"log":"INFO next\n","stream":"stderr"})"});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].text, "ValueError: To serve at least one request with the model's max seq len (250000)");
  EXPECT_EQ(out[0].first, 1);
  EXPECT_EQ(out[1].text, "INFO next");
  EXPECT_EQ(out[1].first, 3);
}

TEST(LogNormalizer, ReadsOtherCollectorsRecords) {
  auto out = normalize({R"({"__REALTIME_TIMESTAMP":"1","MESSAGE":"torch.OutOfMemoryError: CUDA out of memory.","_PID":"7"})",
                        R"({"textPayload":"INFO 02-03 03:43:49 model_runner.py:629] a","severity":"INFO"})",
                        R"({"jsonPayload":{"message":"ERROR b"},"severity":"ERROR"})",
                        R"({"line":"WARNING c","labels":{"pod":"vllm-0"}})",
                        R"({"level":"error","msg":"ERROR d"})"});
  EXPECT_EQ(texts(out), (std::vector<std::string>{"torch.OutOfMemoryError: CUDA out of memory.",
                                                  "INFO 02-03 03:43:49 model_runner.py:629] a", "ERROR b", "WARNING c",
                                                  "ERROR d"}));
}

TEST(LogNormalizer, ARecordHoldingATracebackGivesItsLines) {
  auto out = normalize({R"({"message":"Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nValueError: y"})"});
  EXPECT_EQ(texts(out), (std::vector<std::string>{"Traceback (most recent call last):", "  File \"x.py\", line 1, in f",
                                                  "ValueError: y"}));
  for (const auto& o : out) EXPECT_EQ(o.first, 1);
}

TEST(LogNormalizer, OtherJsonAndBrokenRecordsStayAsTheyAre) {
  const std::vector<std::string> lines = {R"({"max_model_len": 8192})", R"({"log": 5})", R"({"log": "cut)",
                                          "{'log': 'a Python dict'}", "{}"};
  EXPECT_EQ(texts(normalize(lines)), lines);
}

TEST(LogNormalizer, EndlessDockerPiecesStayBounded) {
  std::vector<Out> out;
  std::size_t longest = 0;
  LogNormalizer n([&](const NormalizedLine& l) { longest = std::max(longest, l.text.size()); out.push_back({l.first_line, l.last_line, {}}); },
                  64 * 1024);
  for (int i = 1; i <= 5000; ++i) n.feed(i, "{\"log\":\"" + std::string(100, 'a') + "\"}");
  n.finish();
  EXPECT_LE(longest, 64u * 1024);
  EXPECT_GT(out.size(), 5u);
}

}  // namespace
}  // namespace headroom
