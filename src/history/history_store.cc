// Choosing the history database: the --db flag, HEADROOM_DB, or the SQLite file under
// $XDG_DATA_HOME; PostgreSQL URLs go to the PostgreSQL store, everything else is a SQLite path.
#include <cstdlib>

#include "headroom/history.h"

namespace headroom {

namespace {

bool is_postgres_url(const std::string& s) {
  return s.rfind("postgresql://", 0) == 0 || s.rfind("postgres://", 0) == 0;
}

}  // namespace

std::string default_history_location(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("HEADROOM_DB"); env && *env) return env;
  std::string data;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) data = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home) data = std::string(home) + "/.local/share";
  else data = ".";
  return data + "/headroom/history.db";
}

Result<std::unique_ptr<HistoryStore>> open_history(const std::string& location, OpenMode mode) {
  if (is_postgres_url(location)) return open_postgres_history(location);
  std::string path = location.rfind("sqlite:", 0) == 0 ? location.substr(7) : location;
  if (path.empty()) return make_error(ErrorCode::invalid_argument, "expected a database path or postgresql:// URL, found nothing", "--db");
  return open_sqlite_history(path, mode);
}

}  // namespace headroom
