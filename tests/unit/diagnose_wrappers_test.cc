// The same diagnosis whatever wraps the log: every calibration log (errors.jsonl, excerpt_kind
// "log") is diagnosed verbatim and then as log collectors and terminals hand it over (Docker's
// json-file, Cloud Logging's JSON and console export, kubectl --timestamps, a CRI log file,
// the systemd journal, Buildkite, docker compose, a gutter). The class must not change.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>

#include "diagnose_test_support.h"
#include "util/json_file.h"

namespace headroom {
namespace {

using Wrap = std::function<std::string(const std::string& line)>;

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

const std::vector<std::pair<std::string, Wrap>>& wrappers() {
  static const std::vector<std::pair<std::string, Wrap>> w = {
      {"docker json-file", [](const std::string& l) {
         return "{\"log\":" + json_string(l + "\n") + ",\"stream\":\"stderr\",\"time\":\"2026-01-02T03:04:05.123456789Z\"}";
       }},
      {"cloud logging json", [](const std::string& l) {
         return "{\"textPayload\":" + json_string(l) + ",\"severity\":\"ERROR\",\"timestamp\":\"2026-01-02T03:04:05.123Z\"}";
       }},
      {"cloud logging console", [](const std::string& l) { return "ERROR 2026-01-02T03:04:05.123456789Z [resource.labels.containerName: vllm] " + l; }},
      {"kubectl --timestamps", [](const std::string& l) { return "2026-01-02T03:04:05.123456789Z " + l; }},
      {"cri log file", [](const std::string& l) { return "2026-01-02T03:04:05.123456789Z stderr F " + l; }},
      {"systemd journal", [](const std::string& l) { return "Jan 02 03:04:05 gpu-host vllm[4242]: " + l; }},
      {"buildkite", [](const std::string& l) { return "\x1b_bk;t=1767323045123\x07" + l; }},
      {"docker compose", [](const std::string& l) { return "vllm-1  | " + l; }},
      {"gutter", [](const std::string& l) { return "| " + l; }},
  };
  return w;
}

std::string wrap_lines(const std::string& text, const Wrap& wrap) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) out += wrap(line) + "\n";
  return out;
}

TEST(DiagnoseWrappers, CalibrationLogsKeepTheirClassUnderEveryWrapper) {
  auto text = util::read_file(std::string(HEADROOM_SHARED_DIR) + "/calibration/errors.jsonl");
  ASSERT_TRUE(text);
  auto records = util::parse_jsonl(*text, "errors.jsonl");
  ASSERT_TRUE(records);
  auto diagnoser = LogDiagnoser::create(test_support::kb());
  ASSERT_TRUE(diagnoser);
  auto class_of = [&](const std::string& log, const std::string& name) {
    auto source = memory_source(log, name);
    DiagnoseOptions options;
    options.resolve_model = false;
    auto d = (*diagnoser)->diagnose(*source, options);
    return d && d->primary ? reported_class(*d->primary) : std::string("(none)");
  };
  int logs = 0;
  for (const auto& rec : *records) {
    if (rec.value("excerpt_kind", "") != "log") continue;
    ++logs;
    std::string id = rec.value("id", "");
    std::string excerpt = rec.value("log_excerpt", "") + "\n";
    std::string verbatim = class_of(excerpt, id);
    for (const auto& [name, wrap] : wrappers())
      EXPECT_EQ(class_of(wrap_lines(excerpt, wrap), id), verbatim) << id << " wrapped by " << name;
  }
  EXPECT_GT(logs, 60);
}

}  // namespace
}  // namespace headroom
