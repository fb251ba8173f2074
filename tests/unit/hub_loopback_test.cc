// The Hub client through libcurl against the loopback Hub (tests/support/fake_hub): fixture repos
// generated from tests/data/models, compared with the same repos as local folders.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>

#include "fake_hub.h"
#include "headroom/hub.h"
#include "unit/model_test_support.h"
#include "util/json_file.h"

namespace headroom::hub {
namespace {

namespace fs = std::filesystem;
using test_support::TempDir;
using testing::FakeHub;

const std::string k_models = std::string(HEADROOM_TEST_DATA_DIR) + "/models";

class HubLoopback : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    s_hub = new FakeHub();
    for (auto& r : testing::standard_fixtures(k_models)) s_hub->add_repo(std::move(r));
  }
  static void TearDownTestSuite() {
    delete s_hub;
    s_hub = nullptr;
  }

  HubSettings settings() {
    HubSettings s;
    s.endpoint = s_hub->endpoint();
    s.cache_dir = m_cache.path().string();
    s.sleep = [this](double w) { m_waits.push_back(w); };
    return s;
  }
  Result<ModelSpec> load(const std::string& id, const HubSettings& s) {
    ModelLoadOptions o;
    o.hub = &s;
    o.hf_hub_cache = m_cache.path().string() + "/no-hf-cache";
    o.on_note = [this](const std::string& n) { m_notes.push_back(n); };
    return load_model(id, o);
  }
  int hub_requests() { return s_hub->stats().hub_requests + s_hub->stats().storage_requests; }

  static FakeHub* s_hub;
  TempDir m_cache;
  std::vector<std::string> m_notes;
  std::vector<double> m_waits;
};
FakeHub* HubLoopback::s_hub = nullptr;

void expect_same_weights(const ModelSpec& hub, const ModelSpec& local) {
  ASSERT_TRUE(hub.weights && local.weights);
  EXPECT_TRUE(hub.weights->exact);
  EXPECT_EQ(hub.weights->file_count, local.weights->file_count);
  EXPECT_EQ(hub.weights->total_bytes, local.weights->total_bytes);
  ASSERT_EQ(hub.weights->tensors.size(), local.weights->tensors.size());
  for (std::size_t i = 0; i < hub.weights->tensors.size(); ++i) {
    EXPECT_EQ(hub.weights->tensors[i].name, local.weights->tensors[i].name);
    EXPECT_EQ(hub.weights->tensors[i].bytes, local.weights->tensors[i].bytes);
    EXPECT_EQ(hub.weights->tensors[i].shape, local.weights->tensors[i].shape);
  }
}

TEST_F(HubLoopback, ShardedRepoWeighsExactlyAsTheSameFilesOnDisk) {
  for (const auto& [id, config, shards] : {std::tuple{"headroom-test/llama-sharded", "llama_gqa.json", 60},
                                            std::tuple{"headroom-test/deepseek-moe", "deepseek_mla_moe.json", 12},
                                            std::tuple{"headroom-test/w4a16", "compressed_tensors_w4a16.json", 2}}) {
    SCOPED_TRACE(id);
    auto s = settings();
    auto hub = load(id, s);
    ASSERT_TRUE(hub) << hub.error().to_string();
    EXPECT_EQ(hub->source, ModelSource::hub);
    auto fixture = testing::make_fixture_repo(id, util::read_file(k_models + "/" + config).value(), shards);
    EXPECT_EQ(hub->revision, fixture.sha);
    EXPECT_EQ(hub->location, std::string(id) + "@" + fixture.sha);
    TempDir local_dir;
    testing::write_local_copy(fixture, local_dir.path().string());
    auto local = load_model(local_dir.path().string());
    ASSERT_TRUE(local) << local.error().to_string();
    expect_same_weights(*hub, *local);
    EXPECT_EQ(hub->num_layers, local->num_layers);
  }
}

// preprocessor_config.json sets the largest image vLLM profiles with: read from the Hub as from the
// same files on disk, and the encoder's dummy item follows it (35 × 35 merged tokens of 28 × 28
// pixels for max_pixels 1,003,520; qwen2_vl.py get_image_size_with_most_features). The video
// processor's budget comes from video_preprocessor_config.json beside it.
TEST_F(HubLoopback, ThePreprocessorConfigSizesTheLargestImage) {
  auto s = settings();
  auto hub = load("headroom-test/qwen25-vl", s);
  ASSERT_TRUE(hub) << hub.error().to_string();
  ASSERT_TRUE(hub->vision);
  EXPECT_EQ(hub->vision->max_pixels, 1003520);
  EXPECT_EQ(hub->vision->video_max_pixels, 25165824);
  EXPECT_EQ(hub->vision->min_pixels, 3136);
  EXPECT_NE(hub->vision->processor_source.find("preprocessor_config.json"), std::string::npos);
  auto fixture = testing::make_fixture_repo("headroom-test/qwen25-vl", util::read_file(k_models + "/qwen25_vl.json").value(), 2);
  TempDir local_dir;
  testing::write_local_copy(fixture, local_dir.path().string());
  const std::string processor = R"({"max_pixels": 1003520, "min_pixels": 3136})";
  std::ofstream(local_dir.path() / "preprocessor_config.json") << processor;
  auto local = load_model(local_dir.path().string());
  ASSERT_TRUE(local) << local.error().to_string();
  ASSERT_TRUE(local->vision);
  EXPECT_EQ(local->vision->max_pixels, hub->vision->max_pixels);
}

// A cache entry written before headroom read preprocessor_config.json lists the file without its
// text: while the Hub answers it is read again, and offline the entry is still used as it is.
TEST_F(HubLoopback, ACacheEntryWithoutThePreprocessorConfigIsReadAgain) {
  auto s = settings();
  auto first = load("headroom-test/qwen25-vl", s);
  ASSERT_TRUE(first) << first.error().to_string();
  HubCache cache(s.cache_dir);
  auto snap = cache.load("headroom-test/qwen25-vl", first->revision);
  ASSERT_TRUE(snap && *snap);
  HubSnapshot old = **snap;
  old.json_files.erase("preprocessor_config.json");
  ASSERT_TRUE(cache.store(old, "main"));
  auto offline = s;
  offline.offline = true;
  auto stale = load("headroom-test/qwen25-vl", offline);
  ASSERT_TRUE(stale) << stale.error().to_string();
  ASSERT_TRUE(stale->vision);
  EXPECT_EQ(stale->vision->max_pixels, 0);  // the release default applies
  s_hub->reset_stats();
  auto fresh = load("headroom-test/qwen25-vl", s);
  ASSERT_TRUE(fresh) << fresh.error().to_string();
  EXPECT_GT(hub_requests(), 1);  // more than the one HEAD request of a complete entry
  ASSERT_TRUE(fresh->vision);
  EXPECT_EQ(fresh->vision->max_pixels, 1003520);
}

TEST_F(HubLoopback, SecondRunMakesOneRequestAndAShaOrOfflineNone) {
  auto s = settings();
  ASSERT_TRUE(load("headroom-test/w4a16", s));
  s_hub->reset_stats();
  auto again = load("headroom-test/w4a16", s);
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(hub_requests(), 1);  // HEAD resolve/main/config.json
  s_hub->reset_stats();
  auto by_sha = s;
  by_sha.revision = again->revision;
  ASSERT_TRUE(load("headroom-test/w4a16", by_sha));
  EXPECT_EQ(hub_requests(), 0);
  auto offline = s;
  offline.offline = true;
  auto cached = load("headroom-test/w4a16", offline);
  ASSERT_TRUE(cached);
  EXPECT_EQ(cached->revision, again->revision);
  EXPECT_EQ(hub_requests(), 0);
}

TEST_F(HubLoopback, TheTokenNeverReachesTheFileStorage) {
  auto s = settings();
  s.token = "hf_fake_accepted_token";
  s_hub->reset_stats();
  auto m = load("headroom-test/gated-llama", s);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_GT(s_hub->stats().storage_requests, 0);
  EXPECT_EQ(s_hub->stats().storage_with_authorization, 0);
}

TEST_F(HubLoopback, GatedRepoWithoutTokenOrWithARefusedOne) {
  auto s = settings();
  auto m = load("headroom-test/gated-llama", s);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message,
            "headroom-test/gated-llama is a gated model and no Hugging Face token was given (HTTP 401): accept its "
            "license on " + s.endpoint + "/headroom-test/gated-llama and set HF_TOKEN to a token of that account");
  s.token = "hf_not_granted";
  m = load("headroom-test/gated-llama", s);
  ASSERT_FALSE(m);
  EXPECT_TRUE(m.error().message.starts_with("headroom-test/gated-llama is a gated model and the Hub refused the token (HTTP 403)"))
      << m.error().message;
}

TEST_F(HubLoopback, UnknownRepoSuggestsCloseIds) {
  auto s = settings();
  ASSERT_TRUE(load("headroom-test/w4a16", s));  // now in headroom's Hub cache
  auto m = load("headroom-test/w4a15", s);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message,
            "unknown model 'headroom-test/w4a15': the Hub has no such repo (HTTP 401; if it is private, set HF_TOKEN); "
            "did you mean headroom-test/w4a16?");
}

TEST_F(HubLoopback, UnknownRevision) {
  auto s = settings();
  s.revision = "v9";
  auto m = load("headroom-test/w4a16", s);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message,
            "unknown revision 'v9' of headroom-test/w4a16: expected a branch, tag or commit sha of the repo (HTTP 404)");
}

// An address copied from the browser reads the repo, at the revision the address shows.
TEST_F(HubLoopback, PageAddressReadsTheRepoAtItsRevision) {
  auto s = settings();
  auto m = load("https://huggingface.co/headroom-test/w4a16", s);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->id, "headroom-test/w4a16");
  EXPECT_EQ(m->source, ModelSource::hub);
  ASSERT_FALSE(m_notes.empty());
  EXPECT_EQ(m_notes.front(), "read the address https://huggingface.co/headroom-test/w4a16 as the Hub repo headroom-test/w4a16");
  auto at_v9 = load("huggingface.co/headroom-test/w4a16/tree/v9", s);
  ASSERT_FALSE(at_v9);
  EXPECT_EQ(at_v9.error().message,
            "unknown revision 'v9' of headroom-test/w4a16: expected a branch, tag or commit sha of the repo (HTTP 404)");
}

TEST_F(HubLoopback, RateLimitIsRetriedAfterRetryAfter) {
  auto s = settings();
  auto m = load("headroom-test/rate-limited", s);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m_waits, (std::vector<double>{1.0}));
}

TEST_F(HubLoopback, ServerErrorsGiveUpAfterBoundedRetries) {
  auto s = settings();
  auto m = load("headroom-test/overloaded", s);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message, "the Hub answered HTTP 503 reading the file list of headroom-test/overloaded@main after 3 retries");
  EXPECT_EQ(m_waits.size(), 3u);
}

TEST_F(HubLoopback, ASlowShardHitsTheTotalTimeout) {
  auto s = settings();
  // The shard never answers while the hub runs; 5 s leaves the other requests room on any machine.
  s.total_timeout_s = 5;
  s.connect_timeout_s = 5;
  s.max_retries = 0;
  auto m = load("headroom-test/slow", s);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message,
            "reading model-00003-of-00004.safetensors of headroom-test/slow@" +
                testing::make_fixture_repo("headroom-test/slow", util::read_file(k_models + "/llama_gqa.json").value(), 4).sha +
                " from the Hub: no complete answer within 5 s (--hub-timeout)");
}

// A request on a kept-alive connection that times out is a slow answer, not "no connection"
// (libcurl reports a connect time of 0 for a reused connection).
TEST_F(HubLoopback, ATimeoutOnAReusedConnectionIsASlowAnswer) {
  auto fixture = testing::make_fixture_repo("headroom-test/slow", util::read_file(k_models + "/llama_gqa.json").value(), 4);
  std::string base = "http://127.0.0.1:" + std::to_string(s_hub->storage_port()) + "/lfs/headroom-test/slow/" + fixture.sha + "/";
  TransportOptions o;
  o.connect_timeout_s = 5;
  o.total_timeout_s = 2;
  o.max_parallel = 1;
  auto transport = make_curl_transport(o);
  HttpRequest fast;
  fast.url = base + "model-00001-of-00004.safetensors";
  fast.range_end = 7;
  auto first = transport->perform({fast}, nullptr);
  ASSERT_EQ(first.size(), 1U);
  ASSERT_EQ(first[0].failure, TransportFailure::none) << first[0].detail;
  EXPECT_EQ(first[0].status, 206);
  HttpRequest slow;
  slow.url = base + "model-00003-of-00004.safetensors";
  slow.range_end = 7;
  auto second = transport->perform({slow}, nullptr);
  ASSERT_EQ(second.size(), 1U);
  EXPECT_EQ(second[0].failure, TransportFailure::timeout);
  EXPECT_EQ(second[0].detail, "no complete answer within 2 s");
}

TEST_F(HubLoopback, AConnectionCutInTheMiddleOfAHeader) {
  auto s = settings();
  auto m = load("headroom-test/cut", s);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("model-00002-of-00004.safetensors"), std::string::npos) << m.error().message;
  EXPECT_NE(m.error().message.find("the connection was cut in the middle of the answer (3 retries)"), std::string::npos)
      << m.error().message;
}

TEST_F(HubLoopback, HostileHeaders) {
  auto s = settings();
  auto absurd = load("headroom-test/absurd-header", s);
  ASSERT_FALSE(absurd);
  EXPECT_EQ(absurd.error().message, "header length 1152921504606846976 bytes is absurd (limit 104857600); not a safetensors file?");
  auto not_json = load("headroom-test/not-json-header", s);
  ASSERT_FALSE(not_json);
  EXPECT_TRUE(not_json.error().message.starts_with("malformed safetensors header at column 1 of the header")) << not_json.error().message;
  auto overflow = load("headroom-test/overflow-shape", s);
  ASSERT_FALSE(overflow);
  EXPECT_EQ(overflow.error().message, "tensor \"w\": expected non-negative integers in \"shape\"");
  EXPECT_TRUE(overflow.error().where.starts_with("headroom-test/overflow-shape@")) << overflow.error().where;
}

TEST_F(HubLoopback, AnIndexNamingMissingShards) {
  auto s = settings();
  auto m = load("headroom-test/missing-shard", s);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message,
            "model.safetensors.index.json names 1 shard that the repo does not hold: model-00002-of-00003.safetensors");
}

TEST_F(HubLoopback, BinOnlyRepoFallsBackToTheArchitectureWithANote) {
  auto s = settings();
  auto m = load("headroom-test/bin-only", s);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_FALSE(m->weights);
  ASSERT_EQ(m_notes.size(), 1u);
  EXPECT_EQ(m_notes[0],
            "headroom-test/bin-only has no safetensors files (.bin files only): its weights are computed from the "
            "architecture, not read");
  auto gguf = load("headroom-test/gguf-only", s);
  ASSERT_FALSE(gguf);
  EXPECT_EQ(gguf.error().message,
            "the repo has no config.json or params.json (a GGUF-only repo): headroom reads a model's architecture from them; "
            "download the .gguf file you will serve and pass its path (headroom reads its header)");
}

TEST_F(HubLoopback, UnreachableHubFallsBackToTheCatalogueAtOnce) {
  auto s = settings();
  s.endpoint = "http://127.0.0.1:1";  // nothing listens on port 1
  auto m = load("meta-llama/Llama-3.1-8B-Instruct", s);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->source, ModelSource::catalog);
  ASSERT_EQ(m_notes.size(), 1u);
  EXPECT_EQ(m_notes[0],
            "no network: cannot reach the Hub at http://127.0.0.1:1 (cannot connect); using the built-in catalogue "
            "(--offline skips the Hub)");
  auto unknown = load("headroom-test/llama-sharded", s);
  ASSERT_FALSE(unknown);
  EXPECT_TRUE(is_no_network(unknown.error()));
}

// A fine-tune the catalogue lacks, with the Hub out of reach: the catalogue model its name
// extends, said in a note after the one about the network. With the Hub reachable, its own config
// is read, and a repo the Hub does not have is no guess.
TEST_F(HubLoopback, UnreachableHubTakesAFineTuneAsTheModelItsNameExtends) {
  auto s = settings();
  s.endpoint = "http://127.0.0.1:1";
  auto m = load("someone/Llama-3.1-8B-Instruct-abliterated", s);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->architecture_assumed_from, "meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_EQ(m_notes.size(), 2u);
  EXPECT_EQ(m_notes[0], "no network: cannot reach the Hub at http://127.0.0.1:1 (cannot connect)");
  EXPECT_NE(m_notes[1].find("its architecture is assumed to be meta-llama/Llama-3.1-8B-Instruct's"), std::string::npos) << m_notes[1];
  auto absent = load("someone/Llama-3.1-8B-Instruct-abliterated", settings());
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().code, ErrorCode::not_found);
}


// An unreachable Hub is remembered in the cache folder: the next load within no_network_memo_s
// falls back at once, saying when the Hub was last tried; 0 asks every time; an answer from the
// Hub forgets it (src/hub/no_network_memo.h).
TEST_F(HubLoopback, AnUnreachableHubIsRememberedForAWhile) {
  auto s = settings();
  s.endpoint = "http://127.0.0.1:1";
  ASSERT_TRUE(load("meta-llama/Llama-3.1-8B-Instruct", s));
  const fs::path memo = m_cache.path() / "no-network";
  ASSERT_TRUE(fs::exists(memo));
  m_notes.clear();
  ASSERT_TRUE(load("meta-llama/Llama-3.1-8B-Instruct", s));
  ASSERT_EQ(m_notes.size(), 1u);
  // The age counts whole seconds from the memo's modification second, so the two loads may
  // straddle a second boundary (1 s ago, again 59 s after that): the two always add up to the
  // 60 s window.
  EXPECT_NE(m_notes[0].find("no network: cannot reach the Hub at http://127.0.0.1:1 (cannot connect, "), std::string::npos)
      << m_notes[0];
  std::smatch age;
  ASSERT_TRUE(std::regex_search(m_notes[0], age,
                                std::regex(R"(, (\d+) s ago; headroom asks again (\d+) s after that \(HEADROOM_HUB_RETRY_AFTER_S=0 asks every time\)\))")))
      << m_notes[0];
  EXPECT_LE(std::stoi(age[1].str()), 2) << m_notes[0];
  EXPECT_EQ(std::stoi(age[1].str()) + std::stoi(age[2].str()), 60) << m_notes[0];

  // Another endpoint is asked: the fake Hub answers, and the memo of 127.0.0.1:1 stays.
  auto reachable = settings();
  ASSERT_TRUE(load("headroom-test/llama-sharded", reachable));
  EXPECT_TRUE(fs::exists(memo));

  // The memo's endpoint answering (the Hub came back after the window) removes it.
  std::ofstream(memo, std::ios::trunc) << reachable.endpoint << "\nconnect\ncannot connect\n";
  fs::last_write_time(memo, fs::file_time_type::clock::now() - std::chrono::minutes(2));
  const int before = hub_requests();
  ASSERT_TRUE(load("headroom-test/deepseek-moe", reachable));
  EXPECT_GT(hub_requests(), before);
  EXPECT_FALSE(fs::exists(memo));

  // Within the window the same endpoint is not asked at all; with 0 it is.
  std::ofstream(memo, std::ios::trunc) << reachable.endpoint << "\nconnect\ncannot connect\n";
  const int quiet = hub_requests();
  EXPECT_FALSE(load("headroom-test/w4a16", reachable));
  EXPECT_EQ(hub_requests(), quiet);
  reachable.no_network_memo_s = 0;
  ASSERT_TRUE(load("headroom-test/w4a16", reachable));
  EXPECT_GT(hub_requests(), quiet);
}

}  // namespace
}  // namespace headroom::hub
