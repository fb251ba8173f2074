// The PostgreSQL history store, for a team sharing one history: the same records and schema
// versions as the SQLite store (tables headroom_runs and headroom_meta), migrations serialised by
// a transaction-scoped advisory lock, inserts made idempotent by the unique content hash
// (ON CONFLICT DO NOTHING). libpqxx exceptions are caught here and become Errors.
#include <pqxx/pqxx>

#include <string>
#include <vector>

#include "headroom/history.h"
#include "history/record_codec.h"

namespace headroom {

namespace {

// Advisory lock key for migrations ("hdrm").
constexpr long long k_migration_lock = 0x6864726d;

const std::vector<std::vector<const char*>>& migrations() {
  static const std::vector<std::vector<const char*>> steps = {
      // 0 → 1
      {"CREATE TABLE IF NOT EXISTS headroom_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
       "CREATE TABLE headroom_runs (id BIGSERIAL PRIMARY KEY, content_hash TEXT NOT NULL UNIQUE, "
       "recorded_at TEXT NOT NULL, model TEXT NOT NULL, body TEXT NOT NULL)"},
      // 1 → 2
      {"ALTER TABLE headroom_runs ADD COLUMN model_config_hash TEXT NOT NULL DEFAULT ''",
       "ALTER TABLE headroom_runs ADD COLUMN gpu_key TEXT NOT NULL DEFAULT ''",
       "ALTER TABLE headroom_runs ADD COLUMN total_gib DOUBLE PRECISION",
       "ALTER TABLE headroom_runs ADD COLUMN era TEXT NOT NULL DEFAULT ''",
       "ALTER TABLE headroom_runs ADD COLUMN outcome TEXT NOT NULL DEFAULT 'ok'",
       "UPDATE headroom_runs SET model_config_hash = coalesce(body::jsonb->>'model_config_hash', ''), "
       "gpu_key = coalesce(body::jsonb->>'gpu_key', ''), total_gib = (body::jsonb->>'total_gib')::double precision, "
       "era = coalesce(body::jsonb->>'era', ''), outcome = coalesce(body::jsonb->>'outcome', 'ok')",
       "CREATE INDEX headroom_runs_era ON headroom_runs (era)",
       "CREATE INDEX headroom_runs_model ON headroom_runs (model)"},
  };
  return steps;
}

// The URL without its password, for messages: postgres[ql]://USER:PASSWORD@... becomes
// postgres[ql]://USER:***@... (plain code: a URL in a message may be of any length).
std::string redact(const std::string& url) {
  std::size_t user = url.starts_with("postgresql://") ? 13 : url.starts_with("postgres://") ? 11 : 0;
  if (user == 0) return url;
  std::size_t colon = url.find_first_of(":/@", user);
  if (colon == std::string::npos || url[colon] != ':') return url;
  std::size_t at = url.find('@', colon);
  if (at == std::string::npos) return url;
  return url.substr(0, colon) + ":***" + url.substr(at);
}

class PostgresStore : public HistoryStore {
 public:
  PostgresStore(std::unique_ptr<pqxx::connection> conn, std::string where, int version)
      : m_conn(std::move(conn)), m_where(std::move(where)), m_version(version) {}

  Result<AddResult> add(const RunRecord& record) override {
    try {
      std::string recorded_at = record.recorded_at.empty() ? history_detail::utc_now() : record.recorded_at;
      RunRecord stored = record;
      stored.recorded_at = recorded_at;
      if (stored.run_date.empty()) stored.run_date = recorded_at.substr(0, 10);
      pqxx::work tx(*m_conn);
      // Look first, so that a duplicate does not use up a sequence value (ids stay dense); the
      // ON CONFLICT below covers a concurrent insert of the same content.
      auto found = tx.exec("SELECT id FROM headroom_runs WHERE content_hash = " + tx.quote(record.content_hash));
      if (!found.empty()) return AddResult{found[0][0].as<long long>(), false};
      auto total = record.total_gib ? tx.quote(*record.total_gib) : std::string("NULL");
      auto inserted = tx.exec(
          "INSERT INTO headroom_runs (content_hash, recorded_at, model, body, model_config_hash, gpu_key, total_gib, era, "
          "outcome) VALUES (" +
          tx.quote(record.content_hash) + ", " + tx.quote(recorded_at) + ", " + tx.quote(record.model) + ", " +
          tx.quote(history_detail::record_body(stored).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) + ", " + tx.quote(record.model_config_hash) + ", " +
          tx.quote(record.gpu_key) + ", " + total + ", " + tx.quote(record.era) + ", " +
          tx.quote(std::string(to_string(record.outcome))) + ") ON CONFLICT (content_hash) DO NOTHING RETURNING id");
      AddResult out;
      if (!inserted.empty()) {
        out.id = inserted[0][0].as<long long>();
        out.inserted = true;
      } else {
        auto existing = tx.exec("SELECT id FROM headroom_runs WHERE content_hash = " + tx.quote(record.content_hash));
        if (existing.empty()) return make_error(ErrorCode::internal, "record neither inserted nor found", m_where);
        out.id = existing[0][0].as<long long>();
      }
      tx.commit();
      return out;
    } catch (const std::exception& e) {
      return failure("store the record", e);
    }
  }

  Result<std::vector<RunRecord>> list(const RecordFilter& filter) override {
    try {
      pqxx::read_transaction tx(*m_conn);
      std::string sql = "SELECT id, recorded_at, body FROM headroom_runs";
      if (!filter.era.empty()) sql += " WHERE era = " + tx.quote(filter.era);
      sql += " ORDER BY id";
      std::vector<RunRecord> out;
      for (const auto& row : tx.exec(sql)) {
        auto r = from_row(row);
        if (!r) return tl::unexpected(r.error());
        out.push_back(std::move(*r));
      }
      return out;
    } catch (const std::exception& e) {
      return failure("read the records", e);
    }
  }

  Result<std::optional<RunRecord>> get(std::int64_t id) override {
    try {
      pqxx::read_transaction tx(*m_conn);
      auto rows = tx.exec("SELECT id, recorded_at, body FROM headroom_runs WHERE id = " + tx.quote(static_cast<long long>(id)));
      if (rows.empty()) return std::optional<RunRecord>{};
      auto r = from_row(rows[0]);
      if (!r) return tl::unexpected(r.error());
      return std::optional<RunRecord>(std::move(*r));
    } catch (const std::exception& e) {
      return failure("read the record", e);
    }
  }

  Result<bool> forget(std::int64_t id) override {
    try {
      pqxx::work tx(*m_conn);
      auto rows = tx.exec("DELETE FROM headroom_runs WHERE id = " + tx.quote(static_cast<long long>(id)));
      tx.commit();
      return rows.affected_rows() > 0;
    } catch (const std::exception& e) {
      return failure("forget the record", e);
    }
  }

  int schema_version() const override { return m_version; }
  std::string description() const override { return m_where; }

 private:
  Result<RunRecord> from_row(const pqxx::row& row) {
    auto id = row[0].as<long long>();
    auto r = history_detail::record_from_body(row[2].as<std::string>(), m_where + ": history #" + std::to_string(id));
    if (!r) return r;
    r->id = id;
    r->recorded_at = row[1].as<std::string>();
    return r;
  }

  tl::unexpected<Error> failure(const std::string& what, const std::exception& e) const {
    bool broken = dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr;
    return make_error(broken ? ErrorCode::unavailable : ErrorCode::io_error, "cannot " + what + ": " + e.what(), m_where);
  }

  std::unique_ptr<pqxx::connection> m_conn;
  std::string m_where;
  int m_version;
};

}  // namespace

Result<std::unique_ptr<HistoryStore>> open_postgres_history(const std::string& url) {
  const std::string where = redact(url);
  std::unique_ptr<pqxx::connection> conn;
  try {
    conn = std::make_unique<pqxx::connection>(url);
  } catch (const std::exception& e) {
    std::string m = e.what();
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
    return make_error(ErrorCode::unavailable, "cannot connect to PostgreSQL: " + m, where);
  }
  try {
    pqxx::work tx(*conn);
    tx.exec("SELECT pg_advisory_xact_lock(" + std::to_string(k_migration_lock) + ")");
    int version = 0;
    auto meta = tx.exec("SELECT to_regclass('headroom_meta') IS NOT NULL, to_regclass('headroom_runs') IS NOT NULL");
    bool has_meta = meta[0][0].as<bool>(), has_runs = meta[0][1].as<bool>();
    if (has_meta) {
      auto v = tx.exec("SELECT value FROM headroom_meta WHERE key = 'schema_version'");
      if (!v.empty()) version = std::stoi(v[0][0].as<std::string>());
    }
    if (has_runs && version == 0)
      return make_error(ErrorCode::parse_error,
                        "expected a headroom history database, found a table headroom_runs without headroom's schema "
                        "version; left untouched",
                        where);
    if (version > k_history_schema_version)
      return make_error(ErrorCode::unsupported,
                        "history schema version " + std::to_string(version) + " is newer than this headroom (" +
                            std::to_string(k_history_schema_version) + "); upgrade headroom",
                        where);
    if (version < k_history_schema_version) {
      for (int v = version; v < k_history_schema_version; ++v)
        for (const char* sql : migrations()[static_cast<std::size_t>(v)]) tx.exec(sql);
      tx.exec("INSERT INTO headroom_meta (key, value) VALUES ('schema_version', " +
              tx.quote(std::to_string(k_history_schema_version)) +
              ") ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value");
      version = k_history_schema_version;
    }
    tx.commit();
    return std::unique_ptr<HistoryStore>(new PostgresStore(std::move(conn), where, version));
  } catch (const std::exception& e) {
    return make_error(ErrorCode::io_error, std::string("cannot prepare the history schema: ") + e.what(), where);
  }
}

}  // namespace headroom
