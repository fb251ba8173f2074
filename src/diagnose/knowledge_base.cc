#include "headroom/knowledge_base.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "util/embedded_data.h"
#include "util/json_file.h"
#include "util/strings.h"

namespace headroom {

namespace {

using nlohmann::json;

const std::set<std::string>& known_phases() {
  static const std::set<std::string> phases = {
      "startup-free-memory-check", "weights-load", "profile-run", "kv-cache-alloc", "cuda-graph-capture",
      "sampler-warmup", "runtime-prefill", "runtime-decode", "config", "other", "unknown"};
  return phases;
}

}  // namespace

const std::vector<std::string>& taxonomy_classes() {
  // error-taxonomy.md §4 (A-L), §5 (look-alikes), and the calibration labels that extend it
  // (errors.jsonl: mamba_cache_blocks_insufficient); a unit test compares it with both files.
  static const std::vector<std::string> classes = {
      "kv_cache_insufficient", "no_kv_cache_memory", "startup_free_memory_insufficient", "memory_profiling_error",
      "weights_load_oom", "profile_run_oom", "cuda_graph_capture_oom", "sampler_warmup_oom", "runtime_oom",
      "oom_phase_unknown", "host_memory_exhausted", "kv_cache_exhausted_runtime", "mamba_cache_blocks_insufficient",
      "prompt_too_long", "max_model_len_exceeds_model_limit", "nccl_error", "cuda_driver_mismatch",
      "illegal_memory_access", "model_not_found", "unsupported_dtype_on_gpu", "tp_size_not_divisible"};
  return classes;
}

namespace {

std::string type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string " + v.dump();
  if (v.is_array()) return "array";
  return "object";
}

// Reads the fields of one record; the first problem stops it and names the field.
class RecordReader {
 public:
  explicit RecordReader(std::string origin) : m_origin(std::move(origin)) {}

  bool failed() const { return m_error.has_value(); }
  Error error() const { return *m_error; }

  void fail(const std::string& field, const std::string& message) {
    if (!m_error) m_error = Error{ErrorCode::parse_error, "field '" + field + "': " + message, m_origin};
  }

  std::string string(const json& obj, const std::string& key, const std::string& path, bool required = true) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
      if (required) fail(path, "missing (expected a string)");
      return {};
    }
    if (!it->is_string()) {
      fail(path, "expected a string, got " + type_name(*it));
      return {};
    }
    return it->get<std::string>();
  }

  std::optional<double> rate(const json& obj, const std::string& key, const std::string& path) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 1) {
      fail(path, "expected a number from 0 to 1 or null, got " + type_name(*it));
      return std::nullopt;
    }
    return it->get<double>();
  }

  std::vector<std::string> strings(const json& obj, const std::string& key, const std::string& path,
                                   bool string_allowed = false) {
    std::vector<std::string> out;
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return out;
    if (string_allowed && it->is_string()) return {it->get<std::string>()};
    if (!it->is_array()) {
      fail(path, "expected an array of strings, got " + type_name(*it));
      return out;
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) {
        fail(path + "[" + std::to_string(i) + "]", "expected a string, got " + type_name((*it)[i]));
        return out;
      }
      out.push_back((*it)[i].get<std::string>());
    }
    return out;
  }

  void check_regex(const std::string& regex, const std::string& path) {
    if (regex.empty()) {
      fail(path, "expected a regular expression, got an empty string");
      return;
    }
    RE2::Options options;
    options.set_log_errors(false);
    RE2 re(regex, options);
    if (!re.ok()) fail(path, "expected a regular expression RE2 accepts, got \"" + regex + "\" (" + re.error() + ")");
  }

 private:
  std::string m_origin;
  std::optional<Error> m_error;
};

// headroom's extension of the shared record format (the "headroom" object).
Result<KbRecord> read_extension(RecordReader& r, const json& j, KbRecord rec, const std::string& origin) {
  // headroom's extension; a user record without it is a direct, fatal signature of unknown phase.
  KbPattern first{rec.regex, MatchRule::direct, 50, Severity::fatal, {}};
  auto read_pattern_attrs = [&](const json& obj, const std::string& p, KbPattern& pat) {
    if (auto m = obj.find("match"); m != obj.end() && !m->is_null()) {
      if (*m == "direct") pat.match = MatchRule::direct;
      else if (*m == "by_phase") pat.match = MatchRule::by_phase;
      else r.fail(p + ".match", "expected \"direct\" or \"by_phase\", got " + type_name(*m));
    }
    if (auto m = obj.find("priority"); m != obj.end() && !m->is_null()) {
      if (!m->is_number_integer()) r.fail(p + ".priority", "expected an integer, got " + type_name(*m));
      else pat.priority = m->get<int>();
    }
    if (auto m = obj.find("cause"); m != obj.end() && !m->is_null()) {
      if (!m->is_string()) r.fail(p + ".cause", "expected a string, got " + type_name(*m));
      else pat.cause = m->get<std::string>();
    }
    if (auto m = obj.find("severity"); m != obj.end() && !m->is_null()) {
      if (*m == "fatal") pat.severity = Severity::fatal;
      else if (*m == "request") pat.severity = Severity::request;
      else if (*m == "warning") pat.severity = Severity::warning;
      else r.fail(p + ".severity", "expected \"fatal\", \"request\" or \"warning\", got " + type_name(*m));
    }
  };
  auto h = j.find("headroom");
  if (h == j.end() || h->is_null()) {
    rec.phases = {"unknown"};
    rec.patterns.push_back(first);
    return rec;
  }
  if (!h->is_object()) return make_error(ErrorCode::parse_error, "field 'headroom': expected an object, got " + type_name(*h), origin);
  rec.phases = r.strings(*h, "phase", "headroom.phase", true);
  if (rec.phases.empty()) rec.phases = {"unknown"};
  for (std::size_t i = 0; !r.failed() && i < rec.phases.size(); ++i) {
    if (!known_phases().count(rec.phases[i])) {
      std::vector<std::string> names(known_phases().begin(), known_phases().end());
      auto close = util::closest_matches(rec.phases[i], names);
      r.fail("headroom.phase", "expected a phase (" + util::join(names, ", ") + "), got \"" + rec.phases[i] + "\"" +
                                   (close.empty() ? "" : "; did you mean " + util::or_list(close) + "?"));
    }
  }
  auto flag = [&](const char* key, bool& out) {
    if (auto m = h->find(key); m != h->end() && !m->is_null()) {
      if (!m->is_boolean()) r.fail(std::string("headroom.") + key, "expected true or false, got " + type_name(*m));
      else out = m->get<bool>();
    }
  };
  flag("out_of_memory", rec.out_of_memory);
  flag("look_alike", rec.look_alike);
  flag("wrapper", rec.wrapper);
  rec.taxonomy_class = r.string(*h, "class", "headroom.class", false);
  rec.cause = r.string(*h, "cause", "headroom.cause", false);
  if (!rec.taxonomy_class.empty() && !r.failed()) {
    const auto& classes = taxonomy_classes();
    if (std::find(classes.begin(), classes.end(), rec.taxonomy_class) == classes.end()) {
      auto close = util::closest_matches(rec.taxonomy_class, classes);
      r.fail("headroom.class", "expected a class of the error taxonomy, got \"" + rec.taxonomy_class + "\"" +
                                   (close.empty() ? "" : "; did you mean " + util::or_list(close) + "?"));
    }
  }
  if (rec.out_of_memory && rec.look_alike) r.fail("headroom.look_alike", "a look-alike cannot also be out_of_memory");
  if (rec.wrapper && (!rec.taxonomy_class.empty() || rec.out_of_memory))
    r.fail("headroom.wrapper", "a wrapper names no class: it cannot set headroom.class or out_of_memory");
  read_pattern_attrs(*h, "headroom", first);
  rec.patterns.push_back(first);
  if (auto p = h->find("patterns"); !r.failed() && p != h->end() && !p->is_null()) {
    if (!p->is_array()) r.fail("headroom.patterns", "expected an array, got " + type_name(*p));
    for (std::size_t i = 0; !r.failed() && i < p->size(); ++i) {
      std::string path = "headroom.patterns[" + std::to_string(i) + "]";
      const json& pj = (*p)[i];
      if (!pj.is_object()) { r.fail(path, "expected an object, got " + type_name(pj)); break; }
      KbPattern pat = first;
      pat.regex = r.string(pj, "regex", path + ".regex");
      if (!r.failed()) r.check_regex(pat.regex, path + ".regex");
      read_pattern_attrs(pj, path, pat);
      rec.patterns.push_back(std::move(pat));
    }
  }
  if (!r.failed()) rec.fact_patterns = r.strings(*h, "fact_patterns", "headroom.fact_patterns");
  for (std::size_t i = 0; !r.failed() && i < rec.fact_patterns.size(); ++i)
    r.check_regex(rec.fact_patterns[i], "headroom.fact_patterns[" + std::to_string(i) + "]");
  if (!r.failed()) rec.phase_evidence = r.strings(*h, "phase_evidence", "headroom.phase_evidence");
  for (std::size_t i = 0; !r.failed() && i < rec.phase_evidence.size(); ++i)
    r.check_regex(rec.phase_evidence[i], "headroom.phase_evidence[" + std::to_string(i) + "]");
  if (auto f = h->find("facts"); !r.failed() && f != h->end() && !f->is_null()) {
    if (!f->is_object()) r.fail("headroom.facts", "expected an object, got " + type_name(*f));
    for (auto it = f->begin(); !r.failed() && it != f->end(); ++it) {
      std::string path = "headroom.facts." + it.key();
      if (!it->is_object()) { r.fail(path, "expected an object, got " + type_name(*it)); break; }
      rec.facts[it.key()] = KbFact{r.string(*it, "unit", path + ".unit"), r.string(*it, "description", path + ".description", false)};
    }
  }
  if (r.failed()) return tl::unexpected(r.error());
  return rec;
}

Result<KbRecord> read_record(const json& j, const std::string& origin) {
  RecordReader r(origin);
  if (!j.is_object()) return make_error(ErrorCode::parse_error, "expected a JSON object, got " + type_name(j), origin);
  KbRecord rec;
  rec.origin = origin;
  rec.id = r.string(j, "id", "id");
  rec.signature = r.string(j, "signature", "signature");
  rec.regex = r.string(j, "regex", "regex");
  if (!r.failed()) r.check_regex(rec.regex, "regex");
  rec.domain = r.string(j, "domain", "domain", false);
  rec.category = r.string(j, "category", "category", false);
  rec.root_cause = r.string(j, "root_cause", "root_cause", false);
  rec.versions = r.strings(j, "versions", "versions", true);
  rec.official_doc_url = r.string(j, "official_doc_url", "official_doc_url", false);
  if (r.failed()) return tl::unexpected(r.error());
  if (auto it = j.find("confidence"); it != j.end() && !it->is_null()) {
    if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 1)
      r.fail("confidence", "expected a number from 0 to 1, got " + type_name(*it));
    else
      rec.confidence = it->get<double>();
  }
  if (auto it = j.find("dead_ends"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) r.fail("dead_ends", "expected an array, got " + type_name(*it));
    for (std::size_t i = 0; !r.failed() && i < it->size(); ++i) {
      std::string p = "dead_ends[" + std::to_string(i) + "]";
      const json& d = (*it)[i];
      if (!d.is_object()) { r.fail(p, "expected an object, got " + type_name(d)); break; }
      KbDeadEnd de{r.string(d, "action", p + ".action"), r.string(d, "why_fails", p + ".why_fails"),
                   r.rate(d, "fail_rate", p + ".fail_rate"), r.string(d, "rate_source", p + ".rate_source", false)};
      if (de.fail_rate && de.rate_source.empty()) r.fail(p + ".rate_source", "expected the source that states fail_rate, got nothing");
      rec.dead_ends.push_back(std::move(de));
    }
  }
  if (auto it = j.find("workarounds"); !r.failed() && it != j.end() && !it->is_null()) {
    if (!it->is_array()) r.fail("workarounds", "expected an array, got " + type_name(*it));
    for (std::size_t i = 0; !r.failed() && i < it->size(); ++i) {
      std::string p = "workarounds[" + std::to_string(i) + "]";
      const json& w = (*it)[i];
      if (!w.is_object()) { r.fail(p, "expected an object, got " + type_name(w)); break; }
      KbWorkaround wa;
      wa.action = r.string(w, "action", p + ".action");
      wa.how = r.string(w, "how", p + ".how", false);
      wa.success_rate = r.rate(w, "success_rate", p + ".success_rate");
      wa.condition = r.string(w, "condition", p + ".condition", false);
      wa.rate_source = r.string(w, "rate_source", p + ".rate_source", false);
      if (wa.success_rate && wa.rate_source.empty())
        r.fail(p + ".rate_source", "expected the source that states success_rate, got nothing");
      rec.workarounds.push_back(std::move(wa));
    }
  }
  if (auto it = j.find("transition_graph"); !r.failed() && it != j.end() && !it->is_null()) {
    if (!it->is_object()) {
      r.fail("transition_graph", "expected an object, got " + type_name(*it));
    } else {
      rec.leads_to = r.strings(*it, "leads_to", "transition_graph.leads_to");
      rec.preceded_by = r.strings(*it, "preceded_by", "transition_graph.preceded_by");
      rec.frequently_confused_with = r.strings(*it, "frequently_confused_with", "transition_graph.frequently_confused_with");
    }
  }
  if (r.failed()) return tl::unexpected(r.error());
  return read_extension(r, j, std::move(rec), origin);
}

Result<std::vector<std::filesystem::path>> json_files(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return make_error(ErrorCode::not_found, "expected a directory of knowledge-base records (*.json), found none", dir);
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

Result<KbRecord> read_record_file(const std::filesystem::path& path) {
  auto text = util::read_file(path.string());
  if (!text) return tl::unexpected(text.error());
  return KnowledgeBase::parse_record(*text, path.string());
}

}  // namespace

std::string_view to_string(Severity severity) {
  switch (severity) {
    case Severity::fatal: return "fatal";
    case Severity::request: return "request";
    case Severity::warning: return "warning";
  }
  return "fatal";
}

Result<KbRecord> KnowledgeBase::parse_record(std::string_view json_text, const std::string& origin) {
  auto j = util::parse_json(json_text, origin);
  if (!j) return tl::unexpected(j.error());
  return read_record(*j, origin);
}

Result<KnowledgeBase> KnowledgeBase::builtin() {
  KnowledgeBase kb;
  for (const auto& file : embedded::with_prefix("kb/")) {
    std::string path = file.path;
    if (path.size() < 5 || path.substr(path.size() - 5) != ".json") continue;
    auto rec = parse_record(std::string_view(file.data, file.size), "data/" + path);
    if (!rec) return tl::unexpected(rec.error());
    rec->origin = "built-in";
    kb.add(std::move(*rec));
  }
  return kb;
}

Result<KnowledgeBase> KnowledgeBase::load(const std::vector<std::string>& extra_dirs) {
  auto kb = builtin();
  if (!kb) return kb;
  std::vector<std::string> dirs = extra_dirs;
  if (const char* env = std::getenv("HEADROOM_KB_PATH"); env && *env)
    for (auto& d : util::split(env, ':'))
      if (!d.empty()) dirs.push_back(d);
  for (const auto& dir : dirs) {
    auto files = json_files(dir);
    if (!files) return tl::unexpected(files.error());
    for (const auto& f : *files) {
      auto rec = read_record_file(f);
      if (!rec) return tl::unexpected(rec.error());
      kb->add(std::move(*rec));
    }
  }
  return kb;
}

Result<std::vector<Error>> KnowledgeBase::validate_dir(const std::string& dir) {
  auto files = json_files(dir);
  if (!files) return tl::unexpected(files.error());
  std::vector<Error> errors;
  for (const auto& f : *files) {
    auto rec = read_record_file(f);
    if (!rec) errors.push_back(rec.error());
  }
  return errors;
}

void KnowledgeBase::add(KbRecord record) {
  for (auto& r : m_records) {
    if (r.id == record.id) {
      r = std::move(record);
      return;
    }
  }
  m_records.push_back(std::move(record));
}

const KbRecord* KnowledgeBase::find(std::string_view id) const {
  for (const auto& r : m_records)
    if (r.id == id) return &r;
  return nullptr;
}

}  // namespace headroom
