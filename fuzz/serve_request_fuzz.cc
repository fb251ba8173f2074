// libFuzzer target: an HTTP request body of `headroom serve`, end to end through the routes of
// POST /v1/check and POST /v1/plan (parse, range checks, model and GPU lookup, prediction or plan,
// rendering of the answer or of the error document), and the shell word splitter of pasted
// commands. Never crash, never throw; every answer is a JSON document with a status. Inputs up to
// 1 MB (serve_request.options), as --max-body-bytes allows.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "headroom/api_request.h"
#include "server/api.h"

namespace {

struct Fixture {
  headroom::ServerOptions options;
  headroom::server::HistoryCache history{"", true, 0};
  headroom::server::ResponseCache cache{0, 0};
  headroom::KnowledgeBase kb = headroom::KnowledgeBase::load({}).value();
  headroom::server::DiagnoserPool diagnosers{kb};
  headroom::server::ApiContext context{options, history, cache, kb, diagnosers};
};

// Every answer is a JSON document; an error's message and location are bounded.
void check_answer(const headroom::server::ApiResponse& r) {
  auto doc = nlohmann::json::parse(r.body, nullptr, false);
  if (doc.is_discarded()) std::abort();
  if (r.status >= 400) {
    const auto& e = doc.at("error");
    if (e.at("message").get_ref<const std::string&>().size() > headroom::server::k_max_message_bytes + 8) std::abort();
    if (e.at("where").get_ref<const std::string&>().size() > headroom::server::k_max_where_bytes + 8) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture* fixture = [] {
    setenv("HF_HUB_OFFLINE", "1", 1);
    return new Fixture;
  }();
  std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)headroom::split_shell_words(body);
  check_answer(headroom::server::api_check(fixture->context, body));
  // A plan that parses searches many layouts (fuzz/serve_plan_fuzz.cc covers those); here only its
  // error documents.
  if (!headroom::parse_plan_request(body)) check_answer(headroom::server::api_plan(fixture->context, body));
  return 0;
}
