// vLLM's command-line flags as data (data/vllm_cli_flags.json); see vllm_cli_flags.h.
#include "engine/vllm_cli_flags.h"

#include <algorithm>
#include <array>
#include <unordered_set>

#include "util/embedded_data.h"
#include "util/json_file.h"
#include "util/strings.h"

namespace headroom::engine {

namespace {

struct FlagList {
  std::vector<std::string> names;  // sorted
  std::unordered_set<std::string> set;
  VllmVersion oldest;
};

const FlagList& flag_list() {
  static const FlagList list = [] {
    FlagList l;
    auto text = embedded::find("vllm_cli_flags.json");
    if (!text) return l;
    auto j = util::parse_json(*text, "vllm_cli_flags.json");
    if (j && j->is_object()) {
      for (const auto& f : j->value("flags", nlohmann::json::array()))
        if (f.is_object() && f.contains("name") && f["name"].is_string()) l.names.push_back(f["name"].get<std::string>());
      if (auto v = VllmVersion::parse(j->value("oldest_version", std::string()))) l.oldest = *v;
    }
    std::sort(l.names.begin(), l.names.end());
    l.set.insert(l.names.begin(), l.names.end());
    return l;
  }();
  return list;
}

// Edit distance (insertions, deletions, substitutions, adjacent swaps) when it is at most `limit`,
// else limit + 1. Only the diagonal band |x - y| <= limit is computed, on the stack, and a row whose
// every cell is past the limit ends it: a name is compared with every flag, and a command may
// name many.
std::size_t bounded_distance(std::string_view a, std::string_view b, std::size_t limit) {
  constexpr std::size_t k_max = 64;
  const std::size_t over = limit + 1;
  if (a.size() > k_max || b.size() > k_max) return over;
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > limit) return over;
  std::array<std::array<std::size_t, k_max + 1>, 3> rows{};
  auto* before = &rows[0];  // row x - 2
  auto* prev = &rows[1];    // row x - 1
  auto* cur = &rows[2];
  for (std::size_t y = 0; y <= b.size(); ++y) (*prev)[y] = std::min(y, over);
  for (std::size_t x = 1; x <= a.size(); ++x) {
    std::size_t row_min = over;
    (*cur)[0] = std::min(x, over);
    for (std::size_t y = 1; y <= b.size(); ++y) {
      if (y + limit < x || y > x + limit) {
        (*cur)[y] = over;
        continue;
      }
      std::size_t d = std::min({(*prev)[y] + 1, (*cur)[y - 1] + 1, (*prev)[y - 1] + (a[x - 1] == b[y - 1] ? 0 : 1)});
      if (x > 1 && y > 1 && a[x - 1] == b[y - 2] && a[x - 2] == b[y - 1]) d = std::min(d, (*before)[y - 2] + 1);
      (*cur)[y] = std::min(d, over);
      row_min = std::min(row_min, (*cur)[y]);
    }
    if (row_min > limit) return over;
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return (*prev)[b.size()];
}

}  // namespace

bool vllm_accepts_flag(std::string_view name_in) {
  const FlagList& l = flag_list();
  std::string name(name_in);
  if (l.set.count(name)) return true;
  if (name.starts_with("--no-") && l.set.count("--" + name.substr(5))) return true;
  if (auto dot = name.find('.'); dot != std::string::npos && l.set.count(name.substr(0, dot))) return true;
  // An abbreviation: argparse takes a unique prefix of a long option; any prefix is let through
  // (an ambiguous one is an argparse error of its own, not asserted here).
  if (name.size() > 2) {
    auto it = std::lower_bound(l.names.begin(), l.names.end(), name);
    if (it != l.names.end() && it->starts_with(name)) return true;
  }
  return false;
}

FlagNames::FlagNames(const std::vector<std::string>& also) : m_by_length(k_max_length + 1) {
  std::vector<std::string> all = flag_list().names;
  all.insert(all.end(), also.begin(), also.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  for (auto& n : all)
    if (n.starts_with("--") && n.size() <= k_max_length) m_by_length[n.size()].push_back(std::move(n));
}

std::string FlagNames::nearest(std::string_view name) const {
  if (!name.starts_with("--") || name.size() > k_max_length) return "";
  std::string best;
  std::size_t best_distance = 3;
  const std::size_t lo = name.size() > 2 ? name.size() - 2 : 0, hi = std::min(name.size() + 2, k_max_length);
  for (std::size_t length = lo; length <= hi; ++length)
    for (const auto& k : m_by_length[length]) {
      const std::size_t dist = bounded_distance(name, k, 2);
      if (dist < best_distance || (dist == best_distance && !best.empty() && k < best)) best = k, best_distance = dist;
    }
  return best;
}

VllmVersion oldest_flag_list_version() { return flag_list().oldest; }

std::vector<std::pair<std::string, std::string>> flags_newer_than(const VllmFlags& flags, const VllmVersion& version) {
  std::vector<std::pair<std::string, std::string>> out;
  // --performance-mode: v0.17.0 (#34936, opened 2026-02-20; the v0.17.0 release of 2026-03-07 lists it).
  if (flags.performance_mode && version < VllmVersion{0, 17})
    out.emplace_back("--performance-mode", "--performance-mode " + *flags.performance_mode);
  return out;
}

std::optional<Failure> unrecognized_arguments_failure(const VllmFlags& flags, const VllmVersion& version) {
  // Typos first (where the flag list covers the version), then flags of later releases, each as
  // (name, as written).
  std::vector<std::pair<std::string, std::string>> refused;
  if (!(version < oldest_flag_list_version()))
    for (const auto& f : flags.unrecognized_flags) refused.emplace_back(f.name, f.shown);
  for (auto& f : flags_newer_than(flags, version)) refused.push_back(std::move(f));
  if (refused.empty()) return std::nullopt;
  if (flags.usage_context == UsageContext::llm_class) {
    // LLM(**kwargs) passes them to EngineArgs(...): Python's TypeError names the first one.
    std::string keyword = refused.front().first.substr(2);
    std::replace(keyword.begin(), keyword.end(), '-', '_');
    return Failure{"unrecognized_arguments", "config",
                   "TypeError: EngineArgs.__init__() got an unexpected keyword argument '" + keyword + "'", {}};
  }
  // argparse's ArgumentParser.parse_args: error(_('unrecognized arguments: %s') % ' '.join(argv)),
  // printed as "PROG: error: MESSAGE" after the usage line; PROG is "vllm serve" for the CLI.
  std::vector<std::string> shown;
  for (const auto& f : refused) shown.push_back(f.second);
  return Failure{"unrecognized_arguments", "config", "vllm serve: error: unrecognized arguments: " + util::join(shown, " "), {}};
}

std::vector<std::string> unrecognized_flag_warnings(const VllmFlags& flags, const VllmVersion& version) {
  std::vector<std::string> out;
  // The flag list is parsed only when there is a flag to name: a check without a typo pays nothing.
  if (flags.unrecognized_flags.empty()) return out;
  const bool covered = version >= oldest_flag_list_version();
  for (const auto& f : flags.unrecognized_flags) {
    if (covered)
      out.push_back(f.name + " is not a vLLM flag; did you mean " + f.suggestion + "?");
    else
      out.push_back("vLLM flag " + f.shown + " is not one headroom knows (its list of vLLM's flags starts at v" +
                    oldest_flag_list_version().to_string() + "); did you mean " + f.suggestion +
                    "? vLLM exits on a flag it does not know (unrecognized arguments)");
  }
  return out;
}

}  // namespace headroom::engine
