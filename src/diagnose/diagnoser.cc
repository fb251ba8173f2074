// From matched lines to findings. The phase of an out-of-memory error is read from its context,
// strongest evidence first: vLLM's own messages about the failure ("Engine loop is not running",
// "while processing method determine_num_available_blocks"); the vLLM frames of the current
// traceback, through the phase table in data/ (the most specific phase wins, because a capture or
// sampler warm-up runs inside the profile/dummy-run functions); the last startup landmark the log
// reached ("Model loading took", "Available KV cache memory", ...); the logger's source file
// (serving_chat.py logs only while requests are served).
#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "diagnose/cut_titles.h"
#include "diagnose/finding_refinement.h"
#include "diagnose/phase_table.h"
#include "headroom/diagnose.h"
#include "util/strings.h"

namespace headroom {

namespace {

// cut: the line ends inside a known error title (cut_titles.h); `pattern` is the regex id of the
// whole message, whose signature refs it borrows.
enum class Role { signature, fact, evidence, anchor, traceback, frame, code, method, logger, cut };

struct PatternRef {
  Role role;
  int record = -1;   // signature, fact, evidence
  int pattern = -1;  // signature: index in record.patterns; anchor: anchor index
  int phase = -1;    // evidence: EvidencePhase
};

// Phases that evidence can point to, with how specific each is.
enum EvidencePhase : int { ev_startup_check, ev_weights, ev_profile, ev_kv_alloc, ev_graphs, ev_sampler, ev_runtime, ev_count };
constexpr std::array<const char*, ev_count> k_evidence_phase = {
    "startup-free-memory-check", "weights-load", "profile-run", "kv-cache-alloc", "cuda-graph-capture", "sampler-warmup", "runtime"};

int evidence_phase_of(const std::string& phase) {
  for (int i = 0; i < ev_count; ++i)
    if (phase == k_evidence_phase[static_cast<std::size_t>(i)]) return i;
  if (phase == "runtime-prefill" || phase == "runtime-decode") return ev_runtime;
  return -1;
}

std::string escape_literal(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

double to_gib(double value, const std::string& unit) {
  if (unit == "bytes" || unit == "B") return value / 1073741824.0;
  if (unit == "KiB" || unit == "KB") return value / 1048576.0;
  if (unit == "MiB" || unit == "MB") return value / 1024.0;
  return value;  // GiB, and vLLM's "GB" (really GiB)
}

// The record a finding belongs to, with the taxonomy class and the cause it is reported under (a
// pattern's own cause is finer than its record's).
void assign_record(Finding& f, const KbRecord& rec, const KbPattern* pattern) {
  f.error_class = rec.id;
  f.taxonomy_class = rec.taxonomy_class;
  f.cause = pattern && !pattern->cause.empty() ? pattern->cause : rec.cause;
  f.unclassified = rec.wrapper;
}

std::string cut(std::string s, std::size_t max) {
  if (s.size() > max) {
    s.resize(max);
    s += "...";
  }
  return s;
}

}  // namespace

// The latest evidence of one kind for each phase.
struct EvidenceSet {
  std::array<std::int64_t, ev_count> line{};
  std::array<std::string, ev_count> what{};

  void set(int phase, std::int64_t at, std::string text) {
    line[static_cast<std::size_t>(phase)] = at;
    what[static_cast<std::size_t>(phase)] = std::move(text);
  }
  // The most specific phase with evidence at or after `from` (-1: none).
  int best(std::int64_t from, const PhaseTable& table) const {
    int best = -1;
    for (int p = 0; p < ev_count; ++p) {
      auto i = static_cast<std::size_t>(p);
      if (line[i] == 0 || line[i] < from) continue;
      if (best < 0 || table.rank(k_evidence_phase[i]) > table.rank(k_evidence_phase[static_cast<std::size_t>(best)])) best = p;
    }
    return best;
  }
};

// What a Diagnoser builds from the knowledge base before it reads a line: the deduplicated regexes,
// each one's roles, and their RE2 forms. Immutable once built (a regex compiles on first use, once,
// under std::call_once), so one set serves every log of a process, from any thread.
struct DiagnosePatterns {
  std::vector<std::string> regexes;
  std::vector<std::vector<PatternRef>> refs;
  mutable std::vector<std::unique_ptr<RE2>> compiled;  // lazily, for captures
  mutable std::unique_ptr<std::once_flag[]> once;

  explicit DiagnosePatterns(const KnowledgeBase& kb) {
    const PhaseTable& table = PhaseTable::builtin();
    std::unordered_map<std::string, int> index;
    auto add = [&](const std::string& regex, PatternRef ref) {
      auto [it, inserted] = index.emplace(regex, static_cast<int>(regexes.size()));
      if (inserted) {
        regexes.push_back(regex);
        refs.emplace_back();
      }
      refs[static_cast<std::size_t>(it->second)].push_back(ref);
    };
    add(R"(Traceback \(most recent call last\))", {Role::traceback});
    add(R"re(File "[^"\n]*", line \d+, in [\w<>.]+)re", {Role::frame});
    add(R"(while processing method \w+)", {Role::method});
    for (const auto& [code, phase] : table.code_lines())
      if (int ev = evidence_phase_of(phase); ev >= 0) add(escape_literal(code), {Role::code, -1, -1, ev});
    std::string loggers;
    for (const auto& file : table.serving_loggers()) loggers += (loggers.empty() ? "" : "|") + escape_literal(file);
    if (!loggers.empty()) add("[\\[ ](?:" + loggers + "):\\d+\\]", {Role::logger});
    const auto& anchors = VllmLogParser::anchors();
    for (std::size_t a = 0; a < anchors.size(); ++a) add(escape_literal(anchors[a]), {Role::anchor, -1, static_cast<int>(a)});
    const auto& records = kb.records();
    for (std::size_t r = 0; r < records.size(); ++r) {
      const KbRecord& rec = records[r];
      for (std::size_t p = 0; p < rec.patterns.size(); ++p)
        add(rec.patterns[p].regex, {Role::signature, static_cast<int>(r), static_cast<int>(p)});
      for (const auto& f : rec.fact_patterns) add(f, {Role::fact, static_cast<int>(r)});
      int ev = -1;
      for (const auto& ph : rec.phases)
        if (ev < 0) ev = evidence_phase_of(ph);
      if (ev >= 0)
        for (const auto& e : rec.phase_evidence) add(e, {Role::evidence, static_cast<int>(r), -1, ev});
    }
    const auto& titles = cut_titles();
    for (std::size_t t = 0; t < titles.size(); ++t) {
      const KbRecord* rec = kb.find(titles[t].record);
      if (!rec || titles[t].pattern < 0 || static_cast<std::size_t>(titles[t].pattern) >= rec->patterns.size()) continue;
      auto whole = index.find(rec->patterns[static_cast<std::size_t>(titles[t].pattern)].regex);
      if (whole != index.end()) add(cut_title_regex(titles, t), {Role::cut, -1, whole->second});
    }
    compiled.resize(regexes.size());
    once = std::make_unique<std::once_flag[]>(regexes.size());
  }

  const RE2& re(int id) const {
    auto i = static_cast<std::size_t>(id);
    std::call_once(once[i], [&] {
      RE2::Options options;
      options.set_log_errors(false);
      compiled[i] = std::make_unique<RE2>(regexes[i], options);
    });
    return *compiled[i];
  }
};

struct Diagnoser::Impl {
  const KnowledgeBase& kb;
  const PhaseTable& table = PhaseTable::builtin();
  std::shared_ptr<const DiagnosePatterns> patterns;
  const std::vector<std::string>& regexes;
  const std::vector<std::vector<PatternRef>>& refs;
  VllmLogParser parser;

  // Context.
  EvidenceSet messages;  // vLLM's messages about the failure (knowledge-base phase evidence)
  EvidenceSet frames;    // vLLM frames of tracebacks, through the phase table
  std::int64_t logger_line = 0;
  std::string logger_file;
  std::int64_t added_request_line = 0;
  std::int64_t traceback_line = 0;

  struct Open {
    std::size_t finding;
    std::int64_t line;
    std::vector<int> records;
  };
  std::optional<Open> open;
  std::vector<Finding> findings;
  std::vector<std::vector<int>> finding_records;  // per finding: the records sharing its signature
  std::unordered_map<std::string, std::size_t> by_key;

  Impl(const KnowledgeBase& k, std::shared_ptr<const DiagnosePatterns> p)
      : kb(k), patterns(std::move(p)), regexes(patterns->regexes), refs(patterns->refs) {}

  const RE2& re(int id) const { return patterns->re(id); }

  // Named captures of pattern `id` on `line` (every match when `all`), units folded into GiB.
  void extract(int id, std::string_view line, Finding& f, bool only_missing) {
    const RE2& r = re(id);
    if (!r.ok()) return;
    int groups = r.NumberOfCapturingGroups();
    if (groups <= 0) return;
    const auto& names = r.CapturingGroupNames();
    std::vector<re2::StringPiece> sub(static_cast<std::size_t>(groups) + 1);
    std::size_t pos = 0;
    while (pos <= line.size() &&
           r.Match(line, pos, line.size(), RE2::UNANCHORED, sub.data(), static_cast<int>(sub.size()))) {
      std::map<std::string, std::string_view> values;
      for (const auto& [gi, name] : names)
        if (sub[static_cast<std::size_t>(gi)].data())
          values[name] = std::string_view(sub[static_cast<std::size_t>(gi)].data(), sub[static_cast<std::size_t>(gi)].size());
      if (values.count("process_pid") && values.count("process_gib")) {
        auto pid = util::parse_log_number(values["process_pid"]);
        auto gib = util::parse_log_number(values["process_gib"]);
        if (pid && gib) {
          std::string unit = values.count("process_gib_unit") ? std::string(values["process_gib_unit"]) : "GiB";
          f.processes.emplace_back(static_cast<std::int64_t>(*pid), to_gib(*gib, unit));
        }
      } else {
        for (const auto& [name, text] : values) {
          if (name.size() > 5 && name.compare(name.size() - 5, 5, "_unit") == 0) continue;
          if (only_missing && (f.facts.count(name) || f.text_facts.count(name))) continue;
          auto number = util::parse_log_number(text);
          if (!number) {
            f.text_facts[name] = std::string(text);
            continue;
          }
          auto unit = values.find(name + "_unit");
          f.facts[name] = unit == values.end() ? *number : to_gib(*number, std::string(unit->second));
        }
      }
      std::size_t end = static_cast<std::size_t>(sub[0].data() + sub[0].size() - line.data());
      if (!values.count("process_pid") || end <= pos) break;
      pos = end;
    }
  }

  struct PhaseChoice {
    std::string phase;  // "" = unknown
    std::string basis;
    std::string evidence = "none";  // message, frame, startup, logger, none
  };

  PhaseChoice context_phase(std::int64_t line) const {
    const LoggedRun& run = parser.run();
    std::int64_t window = traceback_line > 0 && line - traceback_line <= 400 ? traceback_line : line - 60;
    window = std::max(window, run.stage_line);
    // 1. vLLM's own messages about the failure; they may come just before the traceback
    //    ("Exception in worker ... while processing method ...").
    std::int64_t message_window = std::max(std::min(window, line - 60), run.stage_line);
    if (int m = messages.best(message_window, table); m >= 0) {
      auto i = static_cast<std::size_t>(m);
      return {k_evidence_phase[i], "vLLM message " + messages.what[i] + " (line " + std::to_string(messages.line[i]) + ")",
              "message"};
    }
    // 2. The vLLM frames of the traceback.
    if (int f = frames.best(window, table); f >= 0) {
      auto i = static_cast<std::size_t>(f);
      return {k_evidence_phase[i], "traceback frame " + frames.what[i] + " (line " + std::to_string(frames.line[i]) + ")",
              "frame"};
    }
    // 3. How far startup got.
    std::string after = " (the last startup landmark, line " + std::to_string(run.stage_line) + ")";
    switch (run.stage) {
      case StartupStage::serving:
      case StartupStage::engine_ready: return {"runtime", "engine started" + after, "startup"};
      case StartupStage::graphs_captured:
        if (run.v1_engine == std::optional<bool>(false)) return {"runtime", "after CUDA graph capture" + after, "startup"};
        return {"sampler-warmup", "after CUDA graph capture, before the engine was ready" + after, "startup"};
      case StartupStage::capturing_graphs: return {"cuda-graph-capture", "during CUDA graph capture" + after, "startup"};
      case StartupStage::kv_cache_sized:
        if (run.flags.enforce_eager) return {"sampler-warmup", "after KV cache sizing, eager mode" + after, "startup"};
        return {"cuda-graph-capture", "after KV cache sizing" + after, "startup"};
      case StartupStage::weights_loaded:
      case StartupStage::profiling: return {"profile-run", "after the weights were loaded" + after, "startup"};
      case StartupStage::loading_weights: return {"weights-load", "while loading weights" + after, "startup"};
      case StartupStage::configured:
        if (logger_line > 0 && line - logger_line <= 60) break;  // a serving logger says more than the config line
        return {"weights-load", "engine configured, no 'Model loading took' line yet" + after, "startup"};
      case StartupStage::not_started: break;
    }
    // 4. The logger's source file.
    if (logger_line > 0 && line - logger_line <= 60)
      return {"runtime", "logged by " + logger_file + " (line " + std::to_string(logger_line) + "), which logs while requests are served",
              "logger"};
    return {"", "no message, frame or startup line places it"};
  }

  // Picks the record a shared (by-phase) signature belongs to in `phase`.
  int record_for_phase(const std::vector<int>& candidates, const std::string& phase) const {
    int fallback = -1;
    for (int r : candidates) {
      const auto& phases = kb.records()[static_cast<std::size_t>(r)].phases;
      for (const auto& p : phases) {
        if (p == phase || (phase == "runtime" && (p == "runtime-prefill" || p == "runtime-decode"))) return r;
        if (p == "unknown" && fallback < 0) fallback = r;
      }
    }
    return fallback >= 0 ? fallback : (candidates.empty() ? -1 : candidates.front());
  }

  std::string concrete_phase(const std::string& phase, std::int64_t line) const {
    if (phase != "runtime") return phase;
    // A request added just before the failure is being prefilled.
    bool added = added_request_line > 0 && line - added_request_line <= 60;
    const bool near_startup = parser.run().stage_line > 0 && line - parser.run().stage_line <= 60;
    return (added || near_startup) ? "runtime-prefill" : "runtime-decode";
  }

  void add_signature(std::int64_t line_number, std::string_view raw, int id, const std::vector<PatternRef>& sig_refs) {
    // Direct patterns decide the class; shared ones wait for the phase.
    const PatternRef* direct = nullptr;
    std::vector<int> by_phase;
    for (const auto& ref : sig_refs) {
      const auto& pat = kb.records()[static_cast<std::size_t>(ref.record)].patterns[static_cast<std::size_t>(ref.pattern)];
      if (pat.match == MatchRule::direct) {
        if (!direct || pat.priority > kb.records()[static_cast<std::size_t>(direct->record)]
                                          .patterns[static_cast<std::size_t>(direct->pattern)]
                                          .priority)
          direct = &ref;
      } else {
        by_phase.push_back(ref.record);
      }
    }
    PhaseChoice choice = context_phase(line_number);
    int record = -1;
    const KbPattern* pattern = nullptr;
    std::vector<int> candidates;
    if (direct) {
      record = direct->record;
      pattern = &kb.records()[static_cast<std::size_t>(record)].patterns[static_cast<std::size_t>(direct->pattern)];
      candidates = {record};
      for (const auto& ref : sig_refs)
        if (ref.record != record) candidates.push_back(ref.record);
    } else {
      record = record_for_phase(by_phase, choice.phase);
      if (record < 0) return;
      candidates = by_phase;
      for (const auto& ref : sig_refs)
        if (ref.record == record) pattern = &kb.records()[static_cast<std::size_t>(record)].patterns[static_cast<std::size_t>(ref.pattern)];
    }
    const KbRecord& rec = kb.records()[static_cast<std::size_t>(record)];
    std::string phase;
    if (direct) {
      // A direct class has its own phase; when it lists several, the context picks one.
      std::string ctx = concrete_phase(choice.phase, line_number);
      for (const auto& p : rec.phases)
        if (p == ctx || (choice.phase == "runtime" && p.rfind("runtime", 0) == 0)) phase = p;
      if (phase.empty()) phase = rec.phases.front();
      if (phase != ctx) {
        choice.basis = "the message belongs to this phase";
        choice.evidence = "signature";
      }
    } else {
      phase = choice.phase.empty() ? "unknown" : concrete_phase(choice.phase, line_number);
    }
    std::string key = rec.id + "|" + phase;
    std::string clean = cut(clean_log_line(raw), 2000);
    auto it = by_key.find(key);
    if (it != by_key.end()) {
      Finding& f = findings[it->second];
      f.occurrences++;
      f.last_line = line_number;
      if (pattern->priority > f.priority) {
        f.priority = pattern->priority;
        f.severity = pattern->severity;
        f.line = line_number;
        f.message = clean;
        f.title_cut = false;  // this line's own cut, if any, is marked by the caller
      }
      extract(id, clean, f, true);
      open = Open{it->second, line_number, candidates};
      return;
    }
    Finding f;
    assign_record(f, rec, pattern);
    f.phase = phase;
    f.phase_basis = choice.basis;
    f.phase_evidence = choice.evidence;
    f.line = f.last_line = line_number;
    f.message = clean;
    f.out_of_memory = rec.out_of_memory;
    f.look_alike = rec.look_alike;
    f.severity = pattern->severity;
    f.priority = pattern->priority;
    extract(id, clean, f, false);
    by_key[key] = findings.size();
    open = Open{findings.size(), line_number, candidates};
    findings.push_back(std::move(f));
  }

  void add_fact(std::int64_t line_number, std::string_view raw, int id, const std::vector<PatternRef>& fact_refs) {
    if (!open || line_number - open->line > 8) return;
    bool listed = false;
    for (const auto& ref : fact_refs)
      if (std::find(open->records.begin(), open->records.end(), ref.record) != open->records.end()) listed = true;
    if (!listed) return;
    Finding& f = findings[open->finding];
    extract(id, clean_log_line(raw), f, f.line != open->line);
  }

  // The finding this line made is the cut message's when its record is one the whole message
  // would have given.
  void mark_cut(std::int64_t line_number, int whole) {
    if (!open || open->line != line_number) return;
    Finding& f = findings[open->finding];
    if (f.line != line_number) return;
    for (const auto& ref : refs[static_cast<std::size_t>(whole)])
      if (ref.role == Role::signature && kb.records()[static_cast<std::size_t>(ref.record)].id == f.error_class) f.title_cut = true;
  }

  // "File \"/x/vllm/v1/worker/gpu_model_runner.py\", line 4105, in _dummy_sampler_run"
  void add_frame(std::int64_t line_number, std::string_view line) {
    static const RE2 frame(R"re(File "([^"]*)", line \d+, in ([\w<>.]+))re");
    std::string path, function;
    if (!RE2::PartialMatch(line, frame, &path, &function)) return;
    int phase = evidence_phase_of(std::string(table.frame_phase(path, function)));
    if (phase < 0) return;
    auto slash = path.find_last_of('/');
    frames.set(phase, line_number, function + " in " + (slash == std::string::npos ? path : path.substr(slash + 1)));
  }

  // vLLM's "Exception in worker VllmWorkerProcess while processing method determine_num_available_blocks".
  void add_method(std::int64_t line_number, std::string_view line) {
    static const RE2 method(R"(while processing method (\w+))");
    std::string function;
    if (!RE2::PartialMatch(line, method, &function)) return;
    int phase = evidence_phase_of(std::string(table.function_phase(function)));
    if (phase >= 0) messages.set(phase, line_number, "'while processing method " + function + "'");
  }

  void add_logger(std::int64_t line_number, std::string_view line) {
    static const RE2 header(R"([\[ ](\w+\.py):\d+\])");
    std::string file;
    if (!RE2::PartialMatch(line, header, &file) || !table.serving_logger(file)) return;
    logger_line = line_number;
    logger_file = file;
  }

  void on_line(std::int64_t line_number, std::string_view line, const std::vector<int>& ids) {
    // Landmarks and evidence first, so a failure on this line sees them.
    for (int id : ids) {
      for (const auto& ref : refs[static_cast<std::size_t>(id)]) {
        if (ref.role == Role::traceback) traceback_line = line_number;
        else if (ref.role == Role::anchor) {
          parser.feed_matched(line_number, line, static_cast<std::size_t>(ref.pattern));
          if (VllmLogParser::anchors()[static_cast<std::size_t>(ref.pattern)] == "Added request") added_request_line = line_number;
        }
        else if (ref.role == Role::evidence) messages.set(ref.phase, line_number, "'" + regexes[static_cast<std::size_t>(id)] + "'");
        else if (ref.role == Role::frame) add_frame(line_number, line);
        else if (ref.role == Role::code)
          frames.set(ref.phase, line_number, "source line '" + regexes[static_cast<std::size_t>(id)] + "'");
        else if (ref.role == Role::method) add_method(line_number, line);
        else if (ref.role == Role::logger) add_logger(line_number, line);
      }
    }
    // One finding per line: the strongest signature on it.
    int best_id = -1;
    int best_priority = -1;
    bool any_fact = false;
    for (int id : ids) {
      int priority = -1;
      for (const auto& ref : refs[static_cast<std::size_t>(id)]) {
        if (ref.role == Role::fact) any_fact = true;
        if (ref.role != Role::signature) continue;
        priority = std::max(priority, kb.records()[static_cast<std::size_t>(ref.record)].patterns[static_cast<std::size_t>(ref.pattern)].priority);
      }
      if (priority > best_priority) {
        best_priority = priority;
        best_id = id;
      }
    }
    // A line that ends inside a known title is that message cut short, unless the whole message
    // matched after all.
    int cut_whole = -1;
    for (int id : ids)
      for (const auto& ref : refs[static_cast<std::size_t>(id)])
        if (ref.role == Role::cut && std::find(ids.begin(), ids.end(), ref.pattern) == ids.end()) cut_whole = ref.pattern;
    if (best_id < 0) best_id = cut_whole;
    if (best_id >= 0) {
      std::vector<PatternRef> sig;
      for (const auto& ref : refs[static_cast<std::size_t>(best_id)])
        if (ref.role == Role::signature) sig.push_back(ref);
      add_signature(line_number, line, best_id, sig);
      if (cut_whole >= 0) mark_cut(line_number, cut_whole);
    }
    if (!any_fact) return;
    for (int id : ids) {
      std::vector<PatternRef> facts;
      for (const auto& ref : refs[static_cast<std::size_t>(id)])
        if (ref.role == Role::fact) facts.push_back(ref);
      if (!facts.empty()) add_fact(line_number, line, id, facts);
    }
  }
};

Diagnoser::Diagnoser(const KnowledgeBase& kb) : Diagnoser(kb, compile_patterns(kb)) {}

Diagnoser::Diagnoser(const KnowledgeBase& kb, std::shared_ptr<const DiagnosePatterns> patterns)
    : m_impl(std::make_unique<Impl>(kb, std::move(patterns))) {}

std::shared_ptr<const DiagnosePatterns> Diagnoser::compile_patterns(const KnowledgeBase& kb) {
  return std::make_shared<const DiagnosePatterns>(kb);
}
Diagnoser::~Diagnoser() = default;

const std::vector<std::string>& Diagnoser::patterns() const { return m_impl->regexes; }

void Diagnoser::on_line(std::int64_t line_number, std::string_view line, const std::vector<int>& pattern_ids) {
  m_impl->on_line(line_number, line, pattern_ids);
}

Diagnosis Diagnoser::finish() {
  Impl& impl = *m_impl;
  Diagnosis d;
  d.run = impl.parser.run();
  // CUDA graphs exist when torch reports memory in private pools: an OOM whose phase came only
  // from the startup stage happened after capture.
  for (auto& f : impl.findings) {
    auto pools = f.facts.find("private_pools_gib");
    if (pools == f.facts.end() || pools->second <= 0 || !f.out_of_memory) continue;
    if (f.phase_evidence == "message" || f.phase_evidence == "frame") continue;  // placed by stronger evidence
    if (f.phase == "profile-run" || f.phase == "weights-load" || f.phase == "unknown" || f.phase == "kv-cache-alloc") {
      // After capture and before the engine is ready comes the sampler warm-up; but vLLM (v0.8+,
      // gpu_model_runner.py _dummy_sampler_run) wraps a warm-up OOM in its own message, a direct
      // signature that wins over this one. With no startup line at all in the log, nothing says
      // startup was still going on, and an OOM after capture is one of serving.
      bool serving = d.run.engine_started || d.run.stage == StartupStage::not_started;
      std::string phase = serving ? "runtime-decode" : "sampler-warmup";
      const KbRecord* rec = nullptr;
      for (const auto& r : impl.kb.records())
        for (const auto& p : r.phases)
          if (p == phase && r.out_of_memory && !rec) rec = &r;
      if (rec) {
        assign_record(f, *rec, nullptr);
        f.phase = phase;
        f.phase_basis = "torch reports memory in CUDA graph private pools, so graphs were already captured";
        f.phase_evidence = "message";
      }
    }
  }
  // A failure no evidence placed when it was read: use what came after it (consoles that show the
  // newest line first put the startup lines below the error).
  for (auto& f : impl.findings) {
    if (!f.out_of_memory || f.phase != "unknown") continue;
    auto choice = impl.context_phase(f.line);
    if (choice.phase.empty()) continue;
    std::string phase = impl.concrete_phase(choice.phase, f.line);
    for (const auto& r : impl.kb.records()) {
      if (!r.out_of_memory || r.patterns.empty() || r.patterns.front().match != MatchRule::by_phase) continue;
      if (std::find(r.phases.begin(), r.phases.end(), phase) == r.phases.end()) continue;
      assign_record(f, r, nullptr);
      f.phase = phase;
      f.phase_basis = choice.basis + ", read after the failure line";
      f.phase_evidence = choice.evidence;
      break;
    }
  }
  refine_graph_estimate(impl.findings, impl.kb, d.run);
  std::vector<Finding> all = std::move(impl.findings);
  if (!all.empty()) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < all.size(); ++i)
      if (all[i].priority > all[best].priority || (all[i].priority == all[best].priority && all[i].line < all[best].line))
        best = i;
    d.primary = all[best];
    all.erase(all.begin() + static_cast<std::ptrdiff_t>(best));
    std::sort(all.begin(), all.end(), [](const Finding& a, const Finding& b) { return a.line < b.line; });
    d.findings = std::move(all);
  }
  // Fill the run's total memory from the failure when no startup line gave it.
  if (d.primary && !d.run.total_gib) {
    if (auto t = d.primary->facts.find("total_gib"); t != d.primary->facts.end()) d.run.total_gib = t->second;
  }
  return d;
}

}  // namespace headroom
