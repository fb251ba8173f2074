// Startup-line parser: a loop over the line rules (diagnose/vllm_log_rules.cc, one row per vLLM
// message), the stage bookkeeping, and the helpers shared with other readers of vLLM logs.
#include <cmath>
#include <re2/re2.h>

#include <charconv>
#include <cstdlib>

#include "headroom/vllm_log.h"
#include "diagnose/vllm_log_rules.h"
#include "util/strings.h"

namespace headroom {

namespace {

std::optional<std::int64_t> to_int(std::string_view s) {
  auto d = util::parse_log_number(s, false);
  if (!d || std::fabs(*d) >= 9.2e18) return std::nullopt;  // past int64's range
  return static_cast<std::int64_t>(*d);
}

}  // namespace

std::string_view to_string(StartupStage stage) {
  switch (stage) {
    case StartupStage::not_started: return "not-started";
    case StartupStage::configured: return "configured";
    case StartupStage::loading_weights: return "loading-weights";
    case StartupStage::weights_loaded: return "weights-loaded";
    case StartupStage::profiling: return "profiling";
    case StartupStage::kv_cache_sized: return "kv-cache-sized";
    case StartupStage::capturing_graphs: return "capturing-graphs";
    case StartupStage::graphs_captured: return "graphs-captured";
    case StartupStage::engine_ready: return "engine-ready";
    case StartupStage::serving: return "serving";
  }
  return "not-started";
}

std::optional<VllmVersion> parse_logged_version(std::string_view text) {
  static const RE2 re(R"(v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?post(\d+))?)");
  re2::StringPiece a, b, c, d, post;
  if (!RE2::PartialMatch(text, re, &a, &b, &c, &d, &post)) return std::nullopt;
  VllmVersion v;
  auto num = [](std::string_view s) { return s.empty() ? 0 : static_cast<int>(*to_int(s)); };
  v.major = num(a);
  v.minor = num(b);
  v.patch = num(c);
  v.extra = num(d);
  v.post = num(post);
  return v;
}

std::string clean_log_line(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < line.size() && !(line[j] >= '@' && line[j] <= '~')) ++j;
      i = j;
      continue;
    }
    if (line[i] == '\r') continue;
    out.push_back(line[i]);
  }
  // Process tags vLLM (and Ray, torchrun) put before the level: "(EngineCore_DP0 pid=43) ",
  // "(VllmWorker rank=3 pid=1090) ", "[rank0]: ".
  static const RE2 prefix(R"(^\s*(?:\([A-Za-z_][\w:.-]*(?: rank=\d+)? pid=\d+\)\s*|\[rank\d+\]:\s*)+)");
  re2::StringPiece consume(out);
  if (RE2::Consume(&consume, prefix)) return std::string(consume.data(), consume.size());
  return out;
}

VllmLogParser::VllmLogParser() = default;

const std::vector<std::string>& VllmLogParser::anchors() {
  static const std::vector<std::string> literals = [] {
    std::vector<std::string> out;
    for (const auto& rule : log_line_rules()) out.emplace_back(rule.literal);
    return out;
  }();
  return literals;
}

void VllmLogParser::feed(std::string_view line) {
  ++m_line;
  m_run.lines = m_line;
  const auto& rules = log_line_rules();
  std::optional<std::string> clean;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    if (line.find(rules[i].literal) == std::string_view::npos) continue;
    if (!clean) clean = clean_log_line(line);
    apply(i, *clean);
  }
}

void VllmLogParser::feed_matched(std::int64_t line_number, std::string_view line, std::size_t anchor) {
  m_line = line_number;
  m_run.lines = std::max(m_run.lines, line_number);
  if (anchor >= log_line_rules().size()) return;
  apply(anchor, clean_log_line(line));
}

void VllmLogParser::advance(StartupStage stage) {
  if (stage >= m_run.stage) {
    m_run.stage = stage;
    m_run.stage_line = m_line;
  }
  if (stage >= StartupStage::engine_ready) m_run.engine_started = true;
}

// The rule's function reads the line; the stage it returns moves startup forward.
void VllmLogParser::apply(std::size_t anchor, std::string_view clean_line) {
  if (auto stage = log_line_rules()[anchor].read(m_run, clean_line)) advance(*stage);
}

}  // namespace headroom
