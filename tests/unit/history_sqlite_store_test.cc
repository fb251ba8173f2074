// The SQLite history store on disk: schema version, WAL, migration from version 1, duplicates,
// and files that are not headroom's (left byte-for-byte untouched).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "headroom/history.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

class HistorySqliteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("headroom-history-test-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  std::string path(const std::string& name) const { return (m_dir / name).string(); }

  static std::string bytes_of(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  static void exec(const std::string& db_path, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
    char* msg = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg);
    std::string m = msg ? msg : "";
    sqlite3_free(msg);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << m;
  }

  static std::string query(const std::string& db_path, const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      out = t ? reinterpret_cast<const char*>(t) : "";
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
  }

  static RunRecord sample(const std::string& hash) {
    RunRecord r;
    r.content_hash = hash;
    r.run_date = "2026-06-01";
    r.model = "meta-llama/Llama-3.1-8B-Instruct";
    r.gpu_name = "NVIDIA H100 80GB HBM3";
    r.gpu_key = "h100-sxm-80gb";
    r.total_gib = 79.19;
    r.vllm_version = "0.19.0";
    r.era = "v1-0.17";
    r.settings = {{"max_model_len", 8192}, {"gpu_memory_utilization", 0.95}};
    r.measured.activation_peak_gib = 1.89;
    r.measured.kv_cache_gib = 58.11;
    r.measured.kv_tokens = 476000;
    return r;
  }

  fs::path m_dir;
};

TEST_F(HistorySqliteTest, NewDatabaseHasCurrentSchemaVersion) {
  auto store = open_sqlite_history(path("h.db"), OpenMode::create);
  ASSERT_TRUE(store) << store.error().to_string();
  EXPECT_EQ((*store)->schema_version(), k_history_schema_version);
  store->reset();
  EXPECT_EQ(query(path("h.db"), "PRAGMA user_version"), std::to_string(k_history_schema_version));
}

TEST_F(HistorySqliteTest, DatabaseUsesWalJournal) {
  auto store = open_sqlite_history(path("h.db"), OpenMode::create);
  ASSERT_TRUE(store);
  store->reset();
  EXPECT_EQ(query(path("h.db"), "PRAGMA journal_mode"), "wal");
}

TEST_F(HistorySqliteTest, CreatesMissingFolders) {
  auto store = open_sqlite_history(path("a/b/history.db"), OpenMode::create);
  ASSERT_TRUE(store) << store.error().to_string();
  EXPECT_TRUE(fs::exists(path("a/b/history.db")));
}

TEST_F(HistorySqliteTest, ExistingOnlyDoesNotCreateTheFile) {
  auto store = open_sqlite_history(path("none.db"), OpenMode::existing_only);
  ASSERT_TRUE(store);
  EXPECT_EQ(*store, nullptr);
  EXPECT_FALSE(fs::exists(path("none.db")));
}

// Processes that open a new history at the same moment all record (`headroom run` twice at once):
// switching a new file to WAL made SQLite answer one of them "database is locked" at once, and
// that run was launched with nothing recorded. Six processes wait on one pipe and start together,
// in several rounds, each on a new file.
TEST_F(HistorySqliteTest, ProcessesOpeningANewHistoryAtOnceAllRecord) {
  constexpr int k_processes = 6;
  for (int round = 0; round < 5; ++round) {
    const std::string db = path("race-" + std::to_string(round) + ".db");
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < k_processes; ++i) {
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        close(go[1]);
        char c = 0;
        if (read(go[0], &c, 1) != 0) _exit(3);  // released when the parent closes the pipe
        auto store = open_sqlite_history(db, OpenMode::create);
        if (!store) {
          std::fprintf(stderr, "open: %s\n", store.error().to_string().c_str());
          _exit(1);
        }
        _exit((*store)->add(sample("hash-" + std::to_string(i))) ? 0 : 2);
      }
      children.push_back(pid);
    }
    close(go[0]);
    close(go[1]);  // every child's read returns now
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round << ": a process failed (" << status << ")";
    }
    auto store = open_sqlite_history(db, OpenMode::existing_only);
    ASSERT_TRUE(store && *store);
    auto all = (*store)->list();
    ASSERT_TRUE(all);
    EXPECT_EQ(all->size(), static_cast<std::size_t>(k_processes)) << "round " << round;
  }
}

TEST_F(HistorySqliteTest, RecordRoundTripsThroughTheFile) {
  {
    auto store = open_sqlite_history(path("h.db"), OpenMode::create);
    ASSERT_TRUE(store);
    auto added = (*store)->add(sample("abc"));
    ASSERT_TRUE(added);
    EXPECT_TRUE(added->inserted);
  }
  auto store = open_sqlite_history(path("h.db"), OpenMode::existing_only);
  ASSERT_TRUE(store && *store);
  auto r = (*store)->get(1);
  ASSERT_TRUE(r && *r);
  EXPECT_EQ((*r)->model, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ((*r)->settings["gpu_memory_utilization"], 0.95);
  EXPECT_DOUBLE_EQ(*(*r)->measured.activation_peak_gib, 1.89);
  EXPECT_EQ(*(*r)->measured.kv_tokens, 476000);
  EXPECT_EQ((*r)->run_date, "2026-06-01");
  EXPECT_FALSE((*r)->recorded_at.empty());
}

TEST_F(HistorySqliteTest, SameContentIsStoredOnce) {
  auto store = open_sqlite_history(path("h.db"), OpenMode::create);
  ASSERT_TRUE(store);
  auto first = (*store)->add(sample("same"));
  auto second = (*store)->add(sample("same"));
  ASSERT_TRUE(first && second);
  EXPECT_TRUE(first->inserted);
  EXPECT_FALSE(second->inserted);
  EXPECT_EQ(second->id, first->id);
  auto all = (*store)->list();
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 1u);
}

TEST_F(HistorySqliteTest, ForgetRemovesOnlyThatRecord) {
  auto store = open_sqlite_history(path("h.db"), OpenMode::create);
  ASSERT_TRUE(store);
  ASSERT_TRUE((*store)->add(sample("one")));
  ASSERT_TRUE((*store)->add(sample("two")));
  auto gone = (*store)->forget(1);
  ASSERT_TRUE(gone);
  EXPECT_TRUE(*gone);
  auto again = (*store)->forget(1);
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  auto all = (*store)->list();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->front().content_hash, "two");
}

TEST_F(HistorySqliteTest, ListFiltersByEra) {
  auto store = open_sqlite_history(path("h.db"), OpenMode::create);
  ASSERT_TRUE(store);
  auto old = sample("old");
  old.era = "v1-0.11";
  ASSERT_TRUE((*store)->add(old));
  ASSERT_TRUE((*store)->add(sample("new")));
  auto some = (*store)->list(RecordFilter{"v1-0.17"});
  ASSERT_TRUE(some);
  ASSERT_EQ(some->size(), 1u);
  EXPECT_EQ(some->front().content_hash, "new");
}

TEST_F(HistorySqliteTest, MigratesAVersion1Database) {
  // Version 1 kept the record body only.
  exec(path("old.db"),
       "PRAGMA application_id = 1214534253; PRAGMA user_version = 1;"
       "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, content_hash TEXT NOT NULL UNIQUE, "
       "recorded_at TEXT NOT NULL, model TEXT NOT NULL, body TEXT NOT NULL);"
       "INSERT INTO runs (content_hash, recorded_at, model, body) VALUES ('h1', '2026-05-01T00:00:00Z', 'm', "
       "'{\"content_hash\":\"h1\",\"model\":\"m\",\"era\":\"v1-0.17\",\"gpu_key\":\"h100-sxm-80gb\",\"total_gib\":79.19,"
       "\"outcome\":\"failed\",\"failure_class\":\"kv_cache_insufficient\",\"run_date\":\"2026-05-01\"}');");
  auto store = open_sqlite_history(path("old.db"), OpenMode::create);
  ASSERT_TRUE(store) << store.error().to_string();
  EXPECT_EQ((*store)->schema_version(), 2);
  auto r = (*store)->get(1);
  ASSERT_TRUE(r && *r);
  EXPECT_EQ((*r)->failure_class, "kv_cache_insufficient");
  auto in_era = (*store)->list(RecordFilter{"v1-0.17"});
  ASSERT_TRUE(in_era);
  EXPECT_EQ(in_era->size(), 1u);
  store->reset();
  EXPECT_EQ(query(path("old.db"), "PRAGMA user_version"), "2");
  EXPECT_EQ(query(path("old.db"), "SELECT outcome FROM runs WHERE id = 1"), "failed");
  EXPECT_EQ(query(path("old.db"), "SELECT gpu_key FROM runs WHERE id = 1"), "h100-sxm-80gb");
}

TEST_F(HistorySqliteTest, NewerSchemaIsRefused) {
  exec(path("new.db"), "PRAGMA application_id = 1214534253; PRAGMA user_version = 9; CREATE TABLE runs (id INTEGER);");
  auto store = open_sqlite_history(path("new.db"), OpenMode::create);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().to_string(),
            path("new.db") + ": history schema version 9 is newer than this headroom (2); upgrade headroom");
}

TEST_F(HistorySqliteTest, CorruptFileGetsAClearErrorAndIsNotTouched) {
  const std::string garbage = "this is not a database, it is a text file\n" + std::string(4096, 'x');
  {
    std::ofstream out(path("corrupt.db"), std::ios::binary);
    out << garbage;
  }
  auto store = open_sqlite_history(path("corrupt.db"), OpenMode::create);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().to_string(),
            path("corrupt.db") +
                ": expected a headroom history database (SQLite), found a file that is not a SQLite database (left "
                "untouched; move it away or choose another file with --db)");
  EXPECT_EQ(bytes_of(path("corrupt.db")), garbage);
  EXPECT_FALSE(fs::exists(path("corrupt.db-wal")));
}

TEST_F(HistorySqliteTest, ForeignSqliteFileGetsAClearErrorAndIsNotTouched) {
  exec(path("foreign.db"), "CREATE TABLE customers (id INTEGER, name TEXT); CREATE TABLE orders (id INTEGER);"
                           "INSERT INTO customers VALUES (1, 'ada');");
  const std::string before = bytes_of(path("foreign.db"));
  auto store = open_sqlite_history(path("foreign.db"), OpenMode::create);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().to_string(),
            path("foreign.db") +
                ": expected a headroom history database, found a SQLite database of another program (tables customers, "
                "orders); left untouched, choose another file with --db");
  EXPECT_EQ(bytes_of(path("foreign.db")), before);
  EXPECT_FALSE(fs::exists(path("foreign.db-wal")));
}

TEST_F(HistorySqliteTest, ForeignFileIsRefusedWhenOnlyReading) {
  exec(path("foreign.db"), "CREATE TABLE customers (id INTEGER);");
  const std::string before = bytes_of(path("foreign.db"));
  auto store = open_sqlite_history(path("foreign.db"), OpenMode::existing_only);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, ErrorCode::parse_error);
  EXPECT_EQ(bytes_of(path("foreign.db")), before);
}

TEST_F(HistorySqliteTest, OpenHistoryTakesASqlitePrefix) {
  auto store = open_history("sqlite:" + path("p.db"), OpenMode::create);
  ASSERT_TRUE(store) << store.error().to_string();
  EXPECT_EQ((*store)->description(), "sqlite:" + path("p.db"));
}

}  // namespace
}  // namespace headroom
