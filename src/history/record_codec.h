// Internal: the stored form of a RunRecord (a JSON body next to the indexed columns) shared by
// the SQLite and PostgreSQL stores, and the date helpers they use.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "headroom/error.h"
#include "headroom/history.h"

namespace headroom::history_detail {

// Everything but id and recorded_at (those are columns).
nlohmann::json record_body(const RunRecord& record);

// Rebuilds a record from its body; `where` names it in errors ("history #12").
Result<RunRecord> record_from_body(const std::string& body, const std::string& where);

// The current time as "2026-06-01T12:00:00Z".
std::string utc_now();

// The application id headroom writes into its SQLite files ("HdRm").
constexpr int k_sqlite_application_id = 0x4864526d;

}  // namespace headroom::history_detail
