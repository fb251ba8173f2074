// The entry point of headroom_postgres.so (built from this file and postgres_store.cc; see
// CMakeLists.txt), and the record helpers postgres_store.cc uses, forwarded to the library that
// loaded the plugin.
#include <atomic>

#include "history/postgres_plugin.h"
#include "history/record_codec.h"

namespace headroom {

namespace {

std::atomic<const plugin::PostgresHost*> g_host{nullptr};

Result<std::unique_ptr<HistoryStore>> open(const plugin::PostgresHost* host, const std::string& url) {
  g_host.store(host);
  return open_postgres_history(url);
}

const plugin::PostgresPlugin k_plugin{HEADROOM_VERSION, &open};

}  // namespace

std::string_view to_string(RunOutcome outcome) { return g_host.load()->outcome_name(outcome); }

namespace history_detail {

nlohmann::json record_body(const RunRecord& record) { return g_host.load()->record_body(record); }

Result<RunRecord> record_from_body(const std::string& body, const std::string& where) {
  return g_host.load()->record_from_body(body, where);
}

std::string utc_now() { return g_host.load()->utc_now(); }

}  // namespace history_detail

}  // namespace headroom

extern "C" __attribute__((visibility("default"))) const headroom::plugin::PostgresPlugin* headroom_postgres_plugin_v1() {
  return &headroom::k_plugin;
}
