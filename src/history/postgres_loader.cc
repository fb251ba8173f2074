// open_postgres_history for the library: loads headroom_postgres.so at first use
// (util/plugin_loader.h) and lends it the record encoding.
#include <cstring>

#include "history/postgres_plugin.h"
#include "history/record_codec.h"
#include "util/plugin_loader.h"

namespace headroom {

namespace {

std::string_view outcome_name(RunOutcome outcome) { return to_string(outcome); }

const plugin::PostgresHost k_host{&history_detail::record_body, &history_detail::record_from_body,
                                  &history_detail::utc_now, &outcome_name};

}  // namespace

Result<std::unique_ptr<HistoryStore>> open_postgres_history(const std::string& url) {
  // The URL may carry a password: it never goes into a message here.
  auto entry = plugin::entry_point(plugin::k_postgres_file, plugin::k_postgres_entry);
  if (!entry) return make_error(entry.error().code, "a PostgreSQL history needs " + entry.error().to_string());
  auto* plugin = reinterpret_cast<const plugin::PostgresPlugin* (*)()>(*entry)();
  if (std::strcmp(plugin->version, HEADROOM_VERSION) != 0)
    return make_error(ErrorCode::unavailable, std::string(plugin::k_postgres_file) + " is from headroom " +
                                                  plugin->version + ", this is " + HEADROOM_VERSION + "; rebuild");
  return plugin->open(&k_host, url);
}

}  // namespace headroom
