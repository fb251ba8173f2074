// The watch path against a real HTTP server on loopback: the curl client, scrape_once and the
// session, with a server that serves, dies, hangs, closes connections and writes malformed lines.
// Every request is bounded by a short client timeout; the fake server's hang is bounded too.
#include <gtest/gtest.h>

#include "headroom/watch.h"
#include "support/fake_vllm_server/fake_vllm_server.h"

using namespace headroom::watch;
using headroom::testing::FakeVllmServer;
using headroom::testing::ServerBehaviour;

namespace {

constexpr double k_timeout_s = 0.25;

std::string fixture(const std::string& name) {
  return headroom::testing::read_metrics_fixture(HEADROOM_TEST_DATA_DIR, name);
}

WatchOptions options_for(const FakeVllmServer& server) {
  WatchOptions o;
  o.url = server.url();
  o.interval_s = 1;
  o.window_s = 60;
  o.retry.timeout_s = k_timeout_s;
  o.retry.initial_backoff_s = 1;
  o.retry.max_backoff_s = 8;
  return o;
}

}  // namespace

TEST(CurlHttpClient, FetchesThePage) {
  FakeVllmServer server(fixture("vllm-0.6.3.txt"));
  auto http = make_curl_http_client();
  auto r = http->get(server.url(), k_timeout_s);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, fixture("vllm-0.6.3.txt"));
}

TEST(CurlHttpClient, RefusedConnectionSaysSo) {
  FakeVllmServer server(std::string("x 1\n"));
  std::string url = server.url();
  server.stop();
  auto r = make_curl_http_client()->get(url, k_timeout_s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), url + ": cannot connect: Connection refused");
}

TEST(CurlHttpClient, ConnectionClosedMidAnswerSaysSo) {
  FakeVllmServer server(std::string("x 1\n"));
  server.set_behaviour(ServerBehaviour::close_connection);
  auto r = make_curl_http_client()->get(server.url(), k_timeout_s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "the server closed the connection in the middle of the answer");
}

TEST(CurlHttpClient, HangingServerTimesOut) {
  FakeVllmServer server(std::string("x 1\n"));
  server.set_behaviour(ServerBehaviour::hang);
  auto r = make_curl_http_client()->get(server.url(), k_timeout_s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "no response within 0.25 s");
}

TEST(CurlHttpClient, HttpErrorStatusSaysSo) {
  FakeVllmServer server(std::string("x 1\n"));
  server.set_behaviour(ServerBehaviour::http_error);
  auto r = make_curl_http_client()->get(server.url(), k_timeout_s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "the server answered HTTP 500");
}

TEST(CurlHttpClient, OversizedPageIsRefused) {
  FakeVllmServer server(std::string(4096, '#'));
  CurlClientOptions options;
  options.max_body_bytes = 1024;
  auto r = make_curl_http_client(options)->get(server.url(), k_timeout_s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "the response is larger than 1024 bytes");
}

TEST(ScrapeOnce, ReadsEveryRecordedVersionOverHttp) {
  for (const char* name : {"vllm-0.4.3.txt", "vllm-0.6.3.txt", "vllm-0.8.5.txt", "vllm-0.11.0.txt"}) {
    FakeVllmServer server(fixture(name));
    auto http = make_curl_http_client();
    ManualClock clock;
    auto r = scrape_once(*http, clock, server.url(), k_timeout_s);
    ASSERT_TRUE(r) << name << ": " << r.error().to_string();
    EXPECT_TRUE(r->snapshot.requests_running) << name;
    EXPECT_TRUE(r->snapshot.kv_cache_usage) << name;
    EXPECT_EQ(r->skipped_lines, 0) << name;
  }
}

TEST(ScrapeOnce, PageWithoutVllmMetricsIsAnError) {
  FakeVllmServer server(std::string("# TYPE up gauge\nup 1\n"));
  auto http = make_curl_http_client();
  ManualClock clock;
  auto r = scrape_once(*http, clock, server.url(), k_timeout_s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "no vllm: metrics on the page (1 metric families); expected a vLLM server's /metrics endpoint");
}

TEST(WatchSession, MalformedLinesAreSkippedAndReported) {
  FakeVllmServer server(fixture("vllm-malformed.txt"));
  auto http = make_curl_http_client();
  auto gpus = make_null_gpu_memory_source();
  ManualClock clock;
  WatchSession session(options_for(server), *http, clock, *gpus);
  WatchSample s = session.step();
  ASSERT_TRUE(s.ok) << s.error->to_string();
  EXPECT_EQ(s.skipped_lines, 4);
  ASSERT_FALSE(s.page_problems.empty());
  EXPECT_EQ(s.page_problems[0].to_string(), server.url() + ":8:64: expected ',' or '}' after a label value, got end of line");
  EXPECT_EQ(s.snapshot->requests_waiting, 64.0);
}

TEST(WatchSession, BacksOffWhileTheServerIsDownAndRecovers) {
  auto server = std::make_unique<FakeVllmServer>(fixture("vllm-0.8.5.txt"));
  int port = server->port();
  WatchOptions options = options_for(*server);
  auto http = make_curl_http_client();
  auto gpus = make_null_gpu_memory_source();
  ManualClock clock;
  WatchSession session(options, *http, clock, *gpus);
  ASSERT_TRUE(session.step().ok);

  server->stop();
  std::vector<double> delays;
  for (int i = 0; i < 5; ++i) {
    WatchSample s = session.step();
    ASSERT_FALSE(s.ok);
    EXPECT_EQ(s.consecutive_failures, i + 1);
    delays.push_back(s.next_delay_s);
  }
  EXPECT_EQ(delays, (std::vector<double>{1, 2, 4, 8, 8}));

  server = std::make_unique<FakeVllmServer>(fixture("vllm-0.8.5.txt"), port);  // back on the same port
  WatchSample back = session.step();
  ASSERT_TRUE(back.ok) << back.error->to_string();
  EXPECT_EQ(back.consecutive_failures, 0);
  EXPECT_EQ(back.next_delay_s, 1);
}

TEST(WatchSession, KeepsRunningThroughHangsAndClosedConnections) {
  FakeVllmServer server(fixture("vllm-0.6.3.txt"));
  auto http = make_curl_http_client();
  auto gpus = make_null_gpu_memory_source();
  ManualClock clock;
  WatchSession session(options_for(server), *http, clock, *gpus);
  std::atomic<bool> stop{false};
  std::vector<std::string> outcomes;
  int n = 0;
  session.run(
      [&](const WatchSample& s) {
        outcomes.push_back(s.ok ? "ok" : s.error->message);
        ++n;
        if (n == 1) server.set_behaviour(ServerBehaviour::hang);
        if (n == 2) server.set_behaviour(ServerBehaviour::close_connection);
        if (n == 3) server.set_behaviour(ServerBehaviour::serve);
      },
      stop, 4);
  EXPECT_EQ(outcomes, (std::vector<std::string>{"ok", "no response within 0.25 s",
                                                "the server closed the connection in the middle of the answer", "ok"}));
}

TEST(WatchSession, RunStopsWhenAsked) {
  FakeVllmServer server(fixture("vllm-0.6.3.txt"));
  auto http = make_curl_http_client();
  auto gpus = make_null_gpu_memory_source();
  ManualClock clock;
  WatchSession session(options_for(server), *http, clock, *gpus);
  std::atomic<bool> stop{false};
  int n = 0;
  session.run([&](const WatchSample&) { stop = ++n == 3; }, stop);
  EXPECT_EQ(n, 3);
}

TEST(WatchSession, RatesComeFromConsecutiveScrapes) {
  double tokens = 1000;
  FakeVllmServer server([&tokens] {
    tokens += 500;
    return "vllm:num_requests_running{model_name=\"m\"} 1\nvllm:prompt_tokens_total{model_name=\"m\"} " +
           std::to_string(tokens) + "\n";
  });
  auto http = make_curl_http_client();
  auto gpus = make_null_gpu_memory_source();
  ManualClock clock;
  WatchSession session(options_for(server), *http, clock, *gpus);
  std::atomic<bool> stop{false};
  WatchSample last;
  session.run([&](const WatchSample& s) { last = s; }, stop, 3);
  ASSERT_TRUE(last.ok);
  EXPECT_EQ(last.derived.window_s, 2);
  EXPECT_EQ(last.derived.prompt_tokens_per_s, 500.0);
}
