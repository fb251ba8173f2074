// The SQLite history store: one file (WAL journal, so readers never block the writer), marked
// with headroom's application_id, schema version in user_version, migrated forward in one
// IMMEDIATE transaction. Writes are single transactions, so a process killed at any moment leaves
// the previous state; concurrent writers wait on busy_timeout. A file that is not headroom's
// (corrupt, or another program's tables) is refused before anything is written to it.
#include <sqlite3.h>

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "headroom/history.h"
#include "history/record_codec.h"
#include "util/strings.h"

namespace headroom {

namespace {

namespace fs = std::filesystem;
using history_detail::k_sqlite_application_id;

constexpr int k_busy_timeout_ms = 30000;

// Migrations: step i brings the schema from version i to i + 1. Version 1 kept the record body
// only; version 2 adds the columns lookups filter on, filled from the body.
const std::vector<std::vector<const char*>>& migrations() {
  static const std::vector<std::vector<const char*>> steps = {
      // 0 → 1
      {"CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, content_hash TEXT NOT NULL UNIQUE, "
       "recorded_at TEXT NOT NULL, model TEXT NOT NULL, body TEXT NOT NULL)"},
      // 1 → 2
      {"ALTER TABLE runs ADD COLUMN model_config_hash TEXT NOT NULL DEFAULT ''",
       "ALTER TABLE runs ADD COLUMN gpu_key TEXT NOT NULL DEFAULT ''",
       "ALTER TABLE runs ADD COLUMN total_gib REAL",
       "ALTER TABLE runs ADD COLUMN era TEXT NOT NULL DEFAULT ''",
       "ALTER TABLE runs ADD COLUMN outcome TEXT NOT NULL DEFAULT 'ok'",
       "UPDATE runs SET model_config_hash = coalesce(json_extract(body, '$.model_config_hash'), ''), "
       "gpu_key = coalesce(json_extract(body, '$.gpu_key'), ''), total_gib = json_extract(body, '$.total_gib'), "
       "era = coalesce(json_extract(body, '$.era'), ''), outcome = coalesce(json_extract(body, '$.outcome'), 'ok')",
       "CREATE INDEX runs_era ON runs (era)",
       "CREATE INDEX runs_model ON runs (model)"},
  };
  return steps;
}

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { m_rc = sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr); }
  ~Statement() { sqlite3_finalize(m_stmt); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return m_rc == SQLITE_OK; }
  int prepare_rc() const { return m_rc; }
  sqlite3_stmt* get() { return m_stmt; }
  void bind(int i, const std::string& s) { sqlite3_bind_text(m_stmt, i, s.c_str(), static_cast<int>(s.size()), SQLITE_TRANSIENT); }
  void bind(int i, std::int64_t v) { sqlite3_bind_int64(m_stmt, i, v); }
  void bind(int i, const std::optional<double>& v) {
    if (v) sqlite3_bind_double(m_stmt, i, *v);
    else sqlite3_bind_null(m_stmt, i);
  }
  int step() { return sqlite3_step(m_stmt); }
  std::string text(int col) {
    const unsigned char* p = sqlite3_column_text(m_stmt, col);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  std::int64_t integer(int col) { return sqlite3_column_int64(m_stmt, col); }

 private:
  sqlite3_stmt* m_stmt = nullptr;
  int m_rc = SQLITE_OK;
};

class SqliteStore : public HistoryStore {
 public:
  SqliteStore(sqlite3* db, std::string path, int version) : m_db(db), m_path(std::move(path)), m_version(version) {}
  ~SqliteStore() override { sqlite3_close_v2(m_db); }

  Result<AddResult> add(const RunRecord& record) override {
    std::string recorded_at = record.recorded_at.empty() ? history_detail::utc_now() : record.recorded_at;
    RunRecord stored = record;
    stored.recorded_at = recorded_at;
    if (stored.run_date.empty()) stored.run_date = recorded_at.substr(0, 10);
    std::string body = history_detail::record_body(stored).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (auto r = exec("BEGIN IMMEDIATE"); !r) return tl::unexpected(r.error());
    auto result = [&]() -> Result<AddResult> {
      Statement find(m_db, "SELECT id FROM runs WHERE content_hash = ?1");
      if (!find.ok()) return error("prepare");
      find.bind(1, record.content_hash);
      int rc = find.step();
      if (rc == SQLITE_ROW) return AddResult{find.integer(0), false};
      if (rc != SQLITE_DONE) return error("look up the record");
      Statement ins(m_db,
                    "INSERT INTO runs (content_hash, recorded_at, model, body, model_config_hash, gpu_key, total_gib, era, "
                    "outcome) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
      if (!ins.ok()) return error("prepare");
      ins.bind(1, record.content_hash);
      ins.bind(2, recorded_at);
      ins.bind(3, record.model);
      ins.bind(4, body);
      ins.bind(5, record.model_config_hash);
      ins.bind(6, record.gpu_key);
      ins.bind(7, record.total_gib);
      ins.bind(8, record.era);
      ins.bind(9, std::string(to_string(record.outcome)));
      if (ins.step() != SQLITE_DONE) return error("store the record");
      return AddResult{sqlite3_last_insert_rowid(m_db), true};
    }();
    if (!result) {
      exec("ROLLBACK");
      return result;
    }
    if (auto r = exec("COMMIT"); !r) {
      exec("ROLLBACK");
      return tl::unexpected(r.error());
    }
    return result;
  }

  Result<std::vector<RunRecord>> list(const RecordFilter& filter) override {
    Statement q(m_db, filter.era.empty() ? "SELECT id, recorded_at, body FROM runs ORDER BY id"
                                         : "SELECT id, recorded_at, body FROM runs WHERE era = ?1 ORDER BY id");
    if (!q.ok()) return error("prepare");
    if (!filter.era.empty()) q.bind(1, filter.era);
    std::vector<RunRecord> out;
    for (;;) {
      int rc = q.step();
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return error("read the records");
      auto r = row(q);
      if (!r) return tl::unexpected(r.error());
      out.push_back(std::move(*r));
    }
    return out;
  }

  Result<std::optional<RunRecord>> get(std::int64_t id) override {
    Statement q(m_db, "SELECT id, recorded_at, body FROM runs WHERE id = ?1");
    if (!q.ok()) return error("prepare");
    q.bind(1, id);
    int rc = q.step();
    if (rc == SQLITE_DONE) return std::optional<RunRecord>{};
    if (rc != SQLITE_ROW) return error("read the record");
    auto r = row(q);
    if (!r) return tl::unexpected(r.error());
    return std::optional<RunRecord>(std::move(*r));
  }

  Result<bool> forget(std::int64_t id) override {
    Statement q(m_db, "DELETE FROM runs WHERE id = ?1");
    if (!q.ok()) return error("prepare");
    q.bind(1, id);
    if (q.step() != SQLITE_DONE) return error("forget the record");
    return sqlite3_changes(m_db) > 0;
  }

  int schema_version() const override { return m_version; }
  std::string description() const override { return "sqlite:" + m_path; }

 private:
  Result<RunRecord> row(Statement& q) {
    std::int64_t id = q.integer(0);
    auto r = history_detail::record_from_body(q.text(2), m_path + ": history #" + std::to_string(id));
    if (!r) return r;
    r->id = id;
    r->recorded_at = q.text(1);
    return r;
  }

  tl::unexpected<Error> error(const std::string& what) const {
    return make_error(ErrorCode::io_error, "cannot " + what + ": " + sqlite3_errmsg(m_db), m_path);
  }

  Result<void> exec(const char* sql) {
    char* msg = nullptr;
    if (sqlite3_exec(m_db, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
      std::string m = msg ? msg : "unknown error";
      sqlite3_free(msg);
      return make_error(ErrorCode::io_error, std::string(sql) + " failed: " + m, m_path);
    }
    return {};
  }

  sqlite3* m_db;
  std::string m_path;
  int m_version;
};

// What the file holds, read without writing anything.
struct FileIdentity {
  int application_id = 0;
  int user_version = 0;
  std::vector<std::string> tables;
};

Result<FileIdentity> identify(sqlite3* db, const std::string& path) {
  FileIdentity id;
  auto scalar = [&](const char* sql, int& out) -> int {
    Statement q(db, sql);
    if (!q.ok()) return q.prepare_rc();
    int rc = q.step();
    if (rc == SQLITE_ROW) out = static_cast<int>(q.integer(0));
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
  };
  int rc = scalar("PRAGMA application_id", id.application_id);
  if (rc == SQLITE_OK) rc = scalar("PRAGMA user_version", id.user_version);
  if (rc == SQLITE_OK) {
    Statement q(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
    rc = q.prepare_rc();
    while (rc == SQLITE_OK) {
      int s = q.step();
      if (s == SQLITE_ROW) id.tables.push_back(q.text(0));
      else {
        rc = s == SQLITE_DONE ? SQLITE_OK : s;
        break;
      }
    }
  }
  if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)
    return make_error(ErrorCode::parse_error,
                      "expected a headroom history database (SQLite), found a file that is not a SQLite database "
                      "(left untouched; move it away or choose another file with --db)",
                      path);
  if (rc != SQLITE_OK)
    return make_error(ErrorCode::io_error, std::string("cannot read the database: ") + sqlite3_errmsg(db), path);
  return id;
}

Result<void> check_identity(const FileIdentity& id, const std::string& path) {
  if (id.application_id == k_sqlite_application_id) {
    if (id.user_version > k_history_schema_version)
      return make_error(ErrorCode::unsupported,
                        "history schema version " + std::to_string(id.user_version) + " is newer than this headroom (" +
                            std::to_string(k_history_schema_version) + "); upgrade headroom",
                        path);
    return {};
  }
  if (id.application_id == 0 && id.tables.empty()) return {};  // a new, empty database
  std::string what = id.tables.empty() ? "application_id " + std::to_string(id.application_id)
                                       : "tables " + util::join(id.tables, ", ");
  return make_error(ErrorCode::parse_error,
                    "expected a headroom history database, found a SQLite database of another program (" + what +
                        "); left untouched, choose another file with --db",
                    path);
}

// Runs `sql`; on failure, SQLite's result code and an error naming the statement.
struct SqlFailure {
  int rc;
  Error error;
};

std::optional<SqlFailure> run_sql(sqlite3* db, const std::string& sql, const std::string& path) {
  char* msg = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg);
  if (rc == SQLITE_OK) return std::nullopt;
  std::string m = msg ? msg : sqlite3_errmsg(db);
  sqlite3_free(msg);
  return SqlFailure{rc, Error{ErrorCode::io_error, "'" + sql.substr(0, 60) + "' failed: " + m, path}};
}

Result<void> exec_sql(sqlite3* db, const std::string& sql, const std::string& path) {
  if (auto failed = run_sql(db, sql, path)) return tl::unexpected(failed->error);
  return {};
}

// identify() inside one read transaction: its statements then see one state of the file. Read
// one by one, another process's migration could commit between them, and a file read as "no
// application_id yet" then "a runs table" looked like another program's database.
Result<FileIdentity> identify_in_one_read(sqlite3* db, const std::string& path) {
  if (auto r = exec_sql(db, "BEGIN", path); !r) return tl::unexpected(r.error());
  auto id = identify(db, path);
  exec_sql(db, id ? "COMMIT" : "ROLLBACK", path);
  return id;
}

// WAL needs the file's exclusive lock. When two processes open a new history at once, each holds
// a shared lock as it asks for it, and SQLite answers one of them SQLITE_BUSY at once rather than
// calling the busy handler (a lock upgrade that would wait on a connection waiting for it is a
// deadlock). The statement holds no lock between tries, so it is tried again until the busy
// timeout: the other process finishes its switch meanwhile.
Result<void> enable_wal(sqlite3* db, const std::string& path) {
  constexpr int k_step_ms = 5;
  for (int waited = 0;; waited += k_step_ms) {
    auto failed = run_sql(db, "PRAGMA journal_mode = WAL", path);
    if (!failed) return {};
    if (failed->rc != SQLITE_BUSY || waited >= k_busy_timeout_ms) return tl::unexpected(failed->error);
    sqlite3_sleep(k_step_ms);
  }
}

// Brings the schema to k_history_schema_version inside one IMMEDIATE transaction, re-reading the
// identity under the lock (another process may have created or migrated the file meanwhile).
Result<int> migrate(sqlite3* db, const std::string& path) {
  if (auto r = exec_sql(db, "BEGIN IMMEDIATE", path); !r) return tl::unexpected(r.error());
  auto body = [&]() -> Result<int> {
    auto id = identify(db, path);
    if (!id) return tl::unexpected(id.error());
    if (auto ok = check_identity(*id, path); !ok) return tl::unexpected(ok.error());
    int version = id->user_version;
    if (version == k_history_schema_version) return version;
    const auto& steps = migrations();
    for (int v = version; v < k_history_schema_version; ++v)
      for (const char* sql : steps[static_cast<std::size_t>(v)])
        if (auto r = exec_sql(db, sql, path); !r) return tl::unexpected(r.error());
    if (auto r = exec_sql(db, "PRAGMA application_id = " + std::to_string(k_sqlite_application_id), path); !r)
      return tl::unexpected(r.error());
    if (auto r = exec_sql(db, "PRAGMA user_version = " + std::to_string(k_history_schema_version), path); !r)
      return tl::unexpected(r.error());
    return k_history_schema_version;
  }();
  if (!body) {
    exec_sql(db, "ROLLBACK", path);
    return body;
  }
  if (auto r = exec_sql(db, "COMMIT", path); !r) {
    exec_sql(db, "ROLLBACK", path);
    return tl::unexpected(r.error());
  }
  return body;
}

}  // namespace

Result<std::unique_ptr<HistoryStore>> open_sqlite_history(const std::string& path, OpenMode mode) {
  std::error_code ec;
  bool exists = fs::exists(path, ec);
  if (!exists && mode == OpenMode::existing_only) return std::unique_ptr<HistoryStore>{};
  if (exists && fs::is_directory(path, ec))
    return make_error(ErrorCode::invalid_argument, "expected a database file, found a folder", path);
  if (!exists) {
    auto parent = fs::path(path).parent_path();
    if (!parent.empty()) {
      fs::create_directories(parent, ec);
      if (ec) return make_error(ErrorCode::io_error, "cannot create the folder: " + ec.message(), parent.string());
    }
  }
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | (mode == OpenMode::create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close_v2)> db(raw, &sqlite3_close_v2);
  if (rc != SQLITE_OK)
    return make_error(ErrorCode::io_error, std::string("cannot open the database: ") + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)),
                      path);
  sqlite3_busy_timeout(db.get(), k_busy_timeout_ms);
  sqlite3_extended_result_codes(db.get(), 0);

  // Identify before any write: neither the journal mode nor the schema is touched on a file that
  // is not headroom's.
  auto id = identify_in_one_read(db.get(), path);
  if (!id) return tl::unexpected(id.error());
  if (auto ok = check_identity(*id, path); !ok) return tl::unexpected(ok.error());
  if (auto r = enable_wal(db.get(), path); !r) return tl::unexpected(r.error());
  int version = id->user_version;
  if (id->application_id != k_sqlite_application_id || version < k_history_schema_version) {
    auto migrated = migrate(db.get(), path);
    if (!migrated) return tl::unexpected(migrated.error());
    version = *migrated;
  }
  return std::unique_ptr<HistoryStore>(new SqliteStore(db.release(), path, version));
}

}  // namespace headroom
