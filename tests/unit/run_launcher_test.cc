// The run loop (src/run/launcher.cc) on a scripted ProcessHost: what is launched, recorded and
// retried, and what happens to signals, without starting a process.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <sstream>

#include "headroom/knowledge_base.h"
#include "run/launcher.h"

namespace headroom::run {
namespace {

std::string read(const std::string& name) {
  std::ifstream in(std::string(HEADROOM_TEST_DATA_DIR) + "/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One launch: what it prints, then the signals headroom receives, then its exit status.
struct Script {
  std::string output;
  std::vector<int> signals;
  int exit_status = 0;
};

class FakeHost final : public ProcessHost {
 public:
  explicit FakeHost(std::vector<Script> scripts) : m_scripts(std::move(scripts)) {}
  Result<void> start(const LaunchSpec& spec) override {
    if (spec.argv[0] == "missing") return make_error(ErrorCode::not_found, "no such executable on PATH", "missing");
    starts.push_back(spec);
    m_step = 0;
    return {};
  }
  ProcessEvent next() override {
    const Script& s = m_scripts.at(starts.size() - 1);
    ProcessEvent e;
    const std::size_t lines_at = m_step;
    ++m_step;
    if (lines_at == 0 && !s.output.empty()) {
      e.kind = ProcessEvent::Kind::output;
      e.bytes = s.output;
      return e;
    }
    const std::size_t signal_index = lines_at - (s.output.empty() ? 0 : 1);
    if (signal_index < s.signals.size()) {
      e.kind = ProcessEvent::Kind::signal;
      e.signal = s.signals[signal_index];
      return e;
    }
    e.kind = ProcessEvent::Kind::exited;
    e.exit_status = s.exit_status;
    return e;
  }
  void pass_through() override { ++pass_throughs; }
  void signal_group(int signal) override { signals.push_back(signal); }
  void cleanup(std::chrono::milliseconds) override { ++cleanups; }

  std::vector<LaunchSpec> starts;
  std::vector<int> signals;
  int pass_throughs = 0, cleanups = 0;

 private:
  std::vector<Script> m_scripts;
  std::size_t m_step = 0;
};

class MemoryHistory final : public HistoryStore {
 public:
  explicit MemoryHistory(std::vector<RunRecord>* records) : m_records(records) {}
  Result<AddResult> add(const RunRecord& r) override {
    m_records->push_back(r);
    return AddResult{static_cast<std::int64_t>(m_records->size()), true};
  }
  Result<std::vector<RunRecord>> list(const RecordFilter&) override { return *m_records; }
  Result<std::optional<RunRecord>> get(std::int64_t) override { return std::optional<RunRecord>{}; }
  Result<bool> forget(std::int64_t) override { return false; }
  int schema_version() const override { return k_history_schema_version; }
  std::string description() const override { return "memory"; }

 private:
  std::vector<RunRecord>* m_records;
};

struct Harness {
  explicit Harness(std::vector<Script> scripts) : host(std::move(scripts)) {
    kb = *KnowledgeBase::builtin();
    deps.host = &host;
    deps.kb = &kb;
    deps.open_history = [this](const std::string&) -> Result<std::unique_ptr<HistoryStore>> {
      return std::unique_ptr<HistoryStore>(std::make_unique<MemoryHistory>(&records));
    };
    deps.check = [this](const LaunchSpec& s, CheckNotes) -> Result<CheckedCommand> {
      checked.push_back(s);
      return check_result;
    };
    deps.out.note = [this](const std::string& m) { notes.push_back(m); };
    deps.out.warning = [this](const std::string& m) { notes.push_back("warning: " + m); };
    deps.out.error = [this](const std::string& m) { notes.push_back("error: " + m); };
    deps.out.report = [this](const std::string& m) { report += m; };
    options.history = "memory";
  }
  bool noted(const std::string& text) const {
    for (const auto& n : notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  }
  int run(std::vector<std::string> argv) { return run_command(LaunchSpec{std::move(argv), {}}, options, deps); }

  FakeHost host;
  KnowledgeBase kb;
  RunDependencies deps;
  RunOptions options;
  std::vector<RunRecord> records;
  std::vector<LaunchSpec> checked;
  CheckedCommand check_result;
  std::vector<std::string> notes;
  std::string report;
};

CheckedCommand starts_with(std::int64_t kv_tokens) {
  CheckedCommand c;
  c.prediction.starts = true;
  c.prediction.kv_cache_tokens = kv_tokens;
  return c;
}

TEST(RunLauncher, RecordsACleanStartAndComparesItWithThePrediction) {
  Harness h({{read("logs/v1_startup_ok.log"), {}, 0}});
  h.check_result = starts_with(125'000);
  EXPECT_EQ(h.run({"vllm", "serve", "codellama/CodeLlama-7b-hf"}), 0);
  ASSERT_EQ(h.records.size(), 1u);
  EXPECT_EQ(h.records[0].outcome, RunOutcome::ok);
  EXPECT_EQ(h.records[0].measured.kv_tokens, 126256);
  // (126,256 - 125,000) / 125,000 = +1.0 %
  EXPECT_TRUE(h.noted("KV cache 126,256 tokens (predicted 125,000, +1.0 %); recorded as run #1")) << h.notes.front();
  EXPECT_EQ(h.host.pass_throughs, 1);
  EXPECT_EQ(h.host.cleanups, 1);
}

TEST(RunLauncher, RetriesAMemoryFailureWithTheComputedFix) {
  Harness h({{read("logs/v1_kv_insufficient.log"), {}, 1}, {read("run/qwen3_8b_h100_ok.log"), {}, 0}});
  h.options.retries = 2;
  h.options.check = false;
  EXPECT_EQ(h.run({"vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "250000"}), 0);
  ASSERT_EQ(h.host.starts.size(), 2u);
  // vLLM's message: "the estimated maximum model length is 856".
  EXPECT_EQ(h.host.starts[1].argv, (std::vector<std::string>{"vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "856"}));
  ASSERT_EQ(h.records.size(), 2u);
  EXPECT_EQ(h.records[0].failure_class, "kv_cache_insufficient");
  EXPECT_EQ(h.records[1].outcome, RunOutcome::ok);
}

TEST(RunLauncher, NeverRetriesAFailureNoFlagFixes) {
  Harness h({{read("run/driver_mismatch.log"), {}, 1}});
  h.options.retries = 3;
  h.options.check = false;
  EXPECT_EQ(h.run({"vllm", "serve", "codellama/CodeLlama-7b-hf"}), 1);
  EXPECT_EQ(h.host.starts.size(), 1u);
  EXPECT_TRUE(h.noted("not retried: cuda_driver_mismatch (environment)"));
  ASSERT_EQ(h.records.size(), 1u);
  EXPECT_EQ(h.records[0].failure_class, "cuda_driver_mismatch");
}

TEST(RunLauncher, NeverRunsTheSameCommandTwice) {
  const std::string failure = read("logs/v1_kv_insufficient.log");
  Harness h({{failure, {}, 1}, {failure, {}, 1}, {failure, {}, 1}});
  h.options.retries = 5;
  h.options.check = false;
  EXPECT_EQ(h.run({"vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "250000"}), 1);
  EXPECT_EQ(h.host.starts.size(), 2u);
  EXPECT_TRUE(h.noted("not retried: the computed fix gives a command already tried"));
}

TEST(RunLauncher, PassesTheFirstSignalOnAndKillsOnTheSecond) {
  Harness h({{"", {SIGTERM, SIGINT, SIGINT}, 128 + SIGKILL}});
  h.options.check = false;
  EXPECT_EQ(h.run({"vllm", "serve", "m"}), 137);
  EXPECT_EQ(h.host.signals, (std::vector<int>{SIGTERM, SIGKILL, SIGKILL}));
  EXPECT_TRUE(h.records.empty());  // stopped by the person, not a failure
}

TEST(RunLauncher, APredictedFailureIsNotLaunchedUnlessForcedOrFixed) {
  Harness h({{"", {}, 0}});
  h.check_result.report = "report\n";
  FlagChange change;
  change.set = {{"--max-model-len", "4096"}};
  change.prediction.kv_cache_tokens = 5000;
  h.check_result.changes = {change};
  EXPECT_EQ(h.run({"vllm", "serve", "m", "--max-model-len", "65536"}), k_run_predicted_failure);
  EXPECT_TRUE(h.host.starts.empty());
  EXPECT_EQ(h.report, "report\n");
  h.options.predicted_failure = PredictedFailure::fix;
  EXPECT_EQ(h.run({"vllm", "serve", "m", "--max-model-len", "65536"}), 0);
  ASSERT_EQ(h.host.starts.size(), 1u);
  EXPECT_EQ(h.host.starts[0].argv, (std::vector<std::string>{"vllm", "serve", "m", "--max-model-len", "4096"}));
}

TEST(RunLauncher, CommandsThatAreNotVllmRunWithAWarningOrAreRefused) {
  Harness h({{"hello\n", {}, 0}});
  EXPECT_EQ(h.run({"echo", "hello"}), 0);
  EXPECT_TRUE(h.checked.empty());
  EXPECT_TRUE(h.noted("warning: 'echo' is not a vLLM command"));
  h.options.not_vllm = NotVllm::refuse;
  EXPECT_EQ(h.run({"echo", "hello"}), k_run_refused);
  EXPECT_EQ(h.host.starts.size(), 1u);
}

TEST(RunLauncher, AMissingExecutableIsSaidPlainly) {
  Harness h({});
  h.options.check = false;
  EXPECT_EQ(h.run({"missing", "serve", "m"}), k_run_not_found);
  EXPECT_TRUE(h.noted("error: cannot run missing: no such executable on PATH"));
}

TEST(RunLauncher, RecognisesVllmCommands) {
  EXPECT_TRUE(is_vllm_command({"vllm", "serve", "m"}));
  EXPECT_TRUE(is_vllm_command({"CUDA_VISIBLE_DEVICES=0", "/opt/venv/bin/vllm", "serve", "m"}));
  EXPECT_TRUE(is_vllm_command({"python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"}));
  EXPECT_TRUE(is_vllm_command({"docker", "run", "--gpus", "all", "vllm/vllm-openai:latest", "--model", "m"}));
  EXPECT_FALSE(is_vllm_command({"docker", "run", "ubuntu", "bash"}));
  EXPECT_FALSE(is_vllm_command({"python3", "serve.py"}));
}

}  // namespace
}  // namespace headroom::run
