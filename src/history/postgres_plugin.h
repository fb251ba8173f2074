// The PostgreSQL plugin (headroom_postgres.so): postgres_store.cc built into a shared object of
// its own, so that only a history kept in PostgreSQL loads libpqxx and libpq. It borrows the
// record encoding from the library that loads it (PostgresHost), so it holds no copy of it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "headroom/history.h"

namespace headroom::plugin {

inline constexpr const char* k_postgres_file = "headroom_postgres.so";
inline constexpr const char* k_postgres_entry = "headroom_postgres_plugin_v1";

// What the plugin calls back into the library for (history/record_codec.h and to_string).
struct PostgresHost {
  nlohmann::json (*record_body)(const RunRecord& record);
  Result<RunRecord> (*record_from_body)(const std::string& body, const std::string& where);
  std::string (*utc_now)();
  std::string_view (*outcome_name)(RunOutcome outcome);
};

struct PostgresPlugin {
  const char* version;  // HEADROOM_VERSION of the plugin's build; the loader checks it
  // open_postgres_history in the plugin; `host` must outlive every store it opens.
  Result<std::unique_ptr<HistoryStore>> (*open)(const PostgresHost* host, const std::string& url);
};

}  // namespace headroom::plugin
