// KnowledgeBase: the failure classes headroom recognises in vLLM logs, one JSON record per class
// (data/kb/*.json, compiled in), in the record format users share, extended with headroom's own
// "headroom" object (phase, the patterns, the named numbers to extract, the phase evidence).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/error.h"

namespace headroom {

// How a signature decides the failure class.
enum class MatchRule {
  direct,    // the pattern names the class on its own
  by_phase,  // a shared signature (a torch OOM): the class is the record whose phase matches the context
};

enum class Severity { fatal, request, warning };
std::string_view to_string(Severity severity);

struct KbPattern {
  std::string regex;  // RE2 syntax, named groups (?P<name>...) become facts
  MatchRule match = MatchRule::direct;
  int priority = 50;  // higher wins when several classes match one log
  Severity severity = Severity::fatal;
  std::string cause;  // the finer cause this wording names ("" = the record's cause)
};

struct KbDeadEnd {
  std::string action;
  std::string why_fails;
  std::optional<double> fail_rate;  // 0..1, unknown when absent
  std::string rate_source;          // who states fail_rate (required with it)
};

struct KbWorkaround {
  std::string action;
  std::string how;
  std::optional<double> success_rate;  // 0..1, unknown when absent
  std::string condition;
  std::string rate_source;  // who states success_rate (required with it)
};

struct KbFact {
  std::string unit;  // GiB, tokens, count, ratio, text, bytes
  std::string description;
};

struct KbRecord {
  // The shared record format.
  std::string id;  // the failure class, e.g. "kv_cache_insufficient"
  std::string signature;
  std::string regex;
  std::string domain;
  std::string category;
  std::string root_cause;
  std::vector<std::string> versions;
  std::vector<KbDeadEnd> dead_ends;
  std::vector<KbWorkaround> workarounds;
  std::vector<std::string> leads_to, preceded_by, frequently_confused_with;
  std::string official_doc_url;
  double confidence = 0.5;
  // headroom's extension.
  std::vector<std::string> phases;  // taxonomy phases: weights-load, profile-run, ...
  // The taxonomy class findings of this record are reported as (headroom.class; "" = the id) and
  // the finer cause the record stands for (headroom.cause), e.g. no_kv_cache_memory and
  // cuda_graph_estimate.
  std::string taxonomy_class;
  std::string cause;
  bool out_of_memory = false;       // a GPU out-of-memory failure
  bool look_alike = false;          // looks like an OOM but is not one
  // A wrapper message that only says the engine died ("Engine core initialization failed. See root
  // cause above.", error-taxonomy.md §5): it names no class, so its findings are reported with none.
  bool wrapper = false;
  std::vector<KbPattern> patterns;  // patterns[0] is `regex` with the record's match/priority/severity
  std::vector<std::string> fact_patterns;  // searched on the matched line and the few lines after it
  std::map<std::string, KbFact> facts;
  std::vector<std::string> phase_evidence;  // lines or frames that place a failure in phases[0]
  std::string origin;                       // "built-in" or the file it came from
};

// The classes of the error taxonomy (../spec/error-taxonomy.md, and the labels of the calibration
// reports that follow it): a record's headroom.class must be one of them.
const std::vector<std::string>& taxonomy_classes();

class KnowledgeBase {
 public:
  // The records compiled into the binary (data/kb/*.json).
  static Result<KnowledgeBase> builtin();

  // The built-in records, then every *.json of each directory in `extra_dirs`, then of each
  // directory in HEADROOM_KB_PATH (colon-separated). A later record with the same id replaces the
  // earlier one. Errors name the file and the field.
  static Result<KnowledgeBase> load(const std::vector<std::string>& extra_dirs);

  // Parses one record. `origin` names the file in errors ("x.json: field 'regex': ...").
  static Result<KbRecord> parse_record(std::string_view json_text, const std::string& origin);

  // Checks every *.json of `dir`; returns one error per broken record (empty when all are valid).
  // Errors: not_found when `dir` is not a directory.
  static Result<std::vector<Error>> validate_dir(const std::string& dir);

  // Adds or replaces a record (by id).
  void add(KbRecord record);

  const std::vector<KbRecord>& records() const { return m_records; }
  const KbRecord* find(std::string_view id) const;

 private:
  std::vector<KbRecord> m_records;
};

}  // namespace headroom
