// The Hub client against a scripted transport: which requests it makes, retries, error messages.
#include <gtest/gtest.h>

#include <functional>

#include "headroom/hub.h"
#include "unit/model_test_support.h"

namespace headroom::hub {
namespace {

const std::string k_sha = "0123456789abcdef0123456789abcdef01234567";

// Answers each request with the first scripted answer whose URL prefix matches.
class ScriptedTransport : public HttpTransport {
 public:
  std::function<HttpResult(const HttpRequest&)> answer;
  std::vector<HttpRequest> seen;
  std::vector<HttpResult> perform(const std::vector<HttpRequest>& requests,
                                  const std::function<void(std::size_t, const HttpResult&)>& on_done) override {
    std::vector<HttpResult> out;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      seen.push_back(requests[i]);
      out.push_back(answer(requests[i]));
      if (on_done) on_done(i, out.back());
    }
    return out;
  }
};

HttpResult status(long code, std::map<std::string, std::string> headers = {}, std::string body = {}) {
  HttpResult r;
  r.status = code;
  r.headers = std::move(headers);
  r.first_headers = r.headers;
  r.body = std::move(body);
  return r;
}

struct Fixture {
  std::shared_ptr<ScriptedTransport> transport = std::make_shared<ScriptedTransport>();
  std::vector<double> waits;
  HubSettings settings;
  Fixture() {
    settings.endpoint = "https://hub.test";
    settings.transport = transport;
    settings.sleep = [this](double s) { waits.push_back(s); };
  }
};

TEST(HubClient, RetriesARateLimitAfterTheWaitTheHubAsksFor) {
  Fixture f;
  int calls = 0;
  f.transport->answer = [&](const HttpRequest&) {
    return ++calls == 1 ? status(429, {{"retry-after", "2"}}) : status(200, {{"x-repo-commit", k_sha}});
  };
  auto sha = resolve_revision("Org/M", f.settings);
  ASSERT_TRUE(sha) << sha.error().to_string();
  EXPECT_EQ(*sha, k_sha);
  EXPECT_EQ(f.waits, (std::vector<double>{2.0}));
}

TEST(HubClient, ServerErrorsAreRetriedABoundedNumberOfTimes) {
  Fixture f;
  f.transport->answer = [](const HttpRequest&) { return status(503); };
  auto sha = resolve_revision("Org/M", f.settings);
  ASSERT_FALSE(sha);
  EXPECT_EQ(f.transport->seen.size(), 4u);  // the request and 3 retries
  EXPECT_EQ(f.waits, (std::vector<double>{0.5, 1.0, 2.0}));
  EXPECT_EQ(sha.error().message, "the Hub answered HTTP 503 reading the file list of Org/M@main after 3 retries");
}

TEST(HubClient, ARetryAfterLongerThanTheLimitIsReportedNotWaited) {
  Fixture f;
  f.transport->answer = [](const HttpRequest&) { return status(429, {{"retry-after", "3600"}}); };
  auto sha = resolve_revision("Org/M", f.settings);
  ASSERT_FALSE(sha);
  EXPECT_TRUE(f.waits.empty());
  EXPECT_EQ(sha.error().message,
            "the Hub is rate limiting requests (HTTP 429) reading the file list of Org/M@main after 0 retries; it asks "
            "to retry after 3600 s");
}

TEST(HubClient, GatedWithoutTokenSaysToAcceptTheLicenseAndSetHfToken) {
  Fixture f;
  f.transport->answer = [](const HttpRequest&) { return status(401, {{"x-error-code", "GatedRepo"}}); };
  auto snap = fetch_snapshot("meta-llama/Llama-3.1-8B", f.settings);
  ASSERT_FALSE(snap);
  EXPECT_EQ(snap.error().message,
            "meta-llama/Llama-3.1-8B is a gated model and no Hugging Face token was given (HTTP 401): accept its license "
            "on https://hub.test/meta-llama/Llama-3.1-8B and set HF_TOKEN to a token of that account");
}

TEST(HubClient, GatedWithARefusedTokenSaysTheTokenWasRefused) {
  Fixture f;
  f.settings.token = "hf_refused";
  f.transport->answer = [](const HttpRequest&) { return status(403, {{"x-error-code", "GatedRepo"}}); };
  auto snap = fetch_snapshot("meta-llama/Llama-3.1-8B", f.settings);
  ASSERT_FALSE(snap);
  EXPECT_EQ(snap.error().message,
            "meta-llama/Llama-3.1-8B is a gated model and the Hub refused the token (HTTP 403): the token's account has "
            "not been granted access; accept the license on https://hub.test/meta-llama/Llama-3.1-8B with that account, "
            "or set HF_TOKEN to a token of an account that has");
  EXPECT_EQ(snap.error().message.find("hf_refused"), std::string::npos);
}

TEST(HubClient, AHostThatDoesNotResolveIsNoNetwork) {
  Fixture f;
  f.transport->answer = [](const HttpRequest&) {
    HttpResult r;
    r.failure = TransportFailure::resolve;
    r.detail = "cannot resolve the host name";
    return r;
  };
  auto snap = fetch_snapshot("Org/M", f.settings);
  ASSERT_FALSE(snap);
  EXPECT_TRUE(is_no_network(snap.error()));
  EXPECT_TRUE(f.waits.empty());  // no retries: the loader falls back at once
  EXPECT_EQ(snap.error().message,
            "no network: cannot reach the Hub at https://hub.test (cannot resolve the host name); use --offline "
            "(headroom's Hub cache), an id from the built-in catalogue, or a local folder with config.json");
}

TEST(HubClient, ASmallFileListMakesOneRequestPerFileAndShard) {
  Fixture f;
  std::string header = R"({"w":{"dtype":"BF16","shape":[4,4],"data_offsets":[0,32]}})";
  std::string head = test_support::le64(header.size()) + header;
  f.transport->answer = [&](const HttpRequest& r) {
    if (r.url.find("/api/models/") != std::string::npos)
      return status(200, {}, R"({"id":"Org/M","sha":")" + k_sha + R"(","siblings":[{"rfilename":"config.json"},{"rfilename":"model.safetensors"},{"rfilename":"README.md"}]})");
    if (r.url.ends_with("/config.json"))
      return status(200, {}, R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":100,"max_position_embeddings":4096})");
    return status(206, {{"content-range", "bytes 0-" + std::to_string(head.size() - 1) + "/" + std::to_string(head.size() + 32)}}, head);
  };
  auto snap = fetch_snapshot("Org/M", f.settings);
  ASSERT_TRUE(snap) << snap.error().to_string();
  ASSERT_EQ(f.transport->seen.size(), 3u);
  EXPECT_EQ(f.transport->seen[0].url, "https://hub.test/api/models/Org/M/revision/main");
  EXPECT_EQ(f.transport->seen[1].url, "https://hub.test/Org/M/resolve/" + k_sha + "/config.json");
  EXPECT_EQ(f.transport->seen[2].url, "https://hub.test/Org/M/resolve/" + k_sha + "/model.safetensors");
  EXPECT_EQ(f.transport->seen[2].range_begin, 0u);
  ASSERT_EQ(snap->shards.size(), 1u);
  EXPECT_EQ(snap->shards[0].tensors.at(0).bytes, 32);
  std::vector<std::string> notes;
  auto spec = model_from_snapshot(*snap, notes);
  ASSERT_TRUE(spec) << spec.error().to_string();
  EXPECT_EQ(spec->source, ModelSource::hub);
  EXPECT_EQ(spec->revision, k_sha);
  EXPECT_TRUE(spec->weights && spec->weights->exact);
}

}  // namespace
}  // namespace headroom::hub
