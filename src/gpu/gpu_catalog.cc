// The GPU catalogue: data/gpus.jsonl parsed into GpuSpecs, and name lookup.
#include <algorithm>
#include <stdexcept>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <optional>
#include <span>
#include <string>

#include "headroom/gpu.h"
#include "util/embedded_data.h"
#include "util/json_file.h"
#include "util/json_members.h"
#include "util/strings.h"
#include "util/word_match.h"

namespace headroom {
namespace {

using nlohmann::json;

// Lower case without spaces, dashes and underscores; "<digit>gb" becomes "<digit>g" so that
// "A100-80GB" meets the alias "a100-80g". Written into `out`, whose storage a caller reuses
// across the catalogue's names (a lookup compares hundreds of them).
void normalize_into(std::string_view name, std::string& out) {
  out.clear();
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_' || c == '\t') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  // Drop the 'b' of "<digit>gb" in place: the write position never passes the read position.
  std::size_t w = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const bool gb = i > 0 && std::isdigit(static_cast<unsigned char>(out[i - 1])) && out[i] == 'g' &&
                    i + 1 < out.size() && out[i + 1] == 'b';
    out[w++] = out[i];
    if (gb) ++i;
  }
  out.resize(w);
}

std::string normalize(std::string_view name) {
  std::string out;
  normalize_into(name, out);
  return out;
}

// Vendor words people add or leave out: "NVIDIA GeForce RTX 4090" vs "RTX 4090". A normalized
// name without its leading vendor words (never all of it).
std::string_view without_vendor_words(std::string_view normalized) {
  static constexpr std::string_view k_prefixes[] = {"nvidia", "geforce", "tesla", "amd", "instinct"};
  bool changed = true;
  while (changed) {
    changed = false;
    for (std::string_view prefix : k_prefixes) {
      if (normalized.size() > prefix.size() && normalized.starts_with(prefix)) {
        normalized.remove_prefix(prefix.size());
        changed = true;
      }
    }
  }
  return normalized;
}

std::string type_name(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "boolean";
  if (j.is_number()) return "number";
  if (j.is_string()) return "string";
  if (j.is_array()) return "array";
  return "object";
}

struct RowReader {
  const json& row;
  std::string where;
  std::optional<Error> error;

  void fail(const std::string& field, const std::string& expected) {
    if (error) return;
    error = Error{ErrorCode::parse_error,
                  "expected " + expected + " \"" + field + "\", got " + type_name(row.value(field, json())), where};
  }
  std::string string(const std::string& field, bool required) {
    auto it = row.find(field);
    if (it == row.end() || it->is_null()) {
      if (required) fail(field, "string");
      return {};
    }
    if (!it->is_string()) {
      fail(field, "string");
      return {};
    }
    return it->get<std::string>();
  }
  std::vector<std::string> strings(const std::string& field) {
    std::vector<std::string> out;
    auto it = row.find(field);
    if (it == row.end() || it->is_null()) return out;
    if (!it->is_array()) {
      fail(field, "array of strings");
      return out;
    }
    for (const auto& v : *it) {
      if (!v.is_string()) {
        fail(field, "array of strings");
        return {};
      }
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  std::optional<double> number(const std::string& field) {
    auto it = row.find(field);
    if (it == row.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) {
      fail(field, "number");
      return std::nullopt;
    }
    return it->get<double>();
  }
  bool boolean(const std::string& field, bool fallback) {
    auto it = row.find(field);
    if (it == row.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) {
      fail(field, "boolean");
      return fallback;
    }
    return it->get<bool>();
  }
};

struct ParsedRow {
  GpuSpec spec;
  bool total_known = true;  // false: neither total was in the row; filled from a sibling below
};

}  // namespace

Bytes typical_driver_reserve(Bytes nvml_total_bytes) {
  // Least-squares fit of (nvidia-smi MiB − CUDA MiB) against nvidia-smi MiB over the 26 rows of
  // data/gpus.jsonl with both totals (all but v100-32gb, whose figure comes from an old driver that
  // already excluded the reserve): 380 MiB + 0.23% of the total. It is within ±150 MiB of the
  // observations from 10 GiB to 180 GiB cards, except A100 80GB (770-870 MiB observed).
  double total_mib = to_mib(nvml_total_bytes);
  double reserve_mib = 380.0 + 0.0023 * total_mib;
  return static_cast<Bytes>(std::llround(reserve_mib)) * k_mib;
}

int GpuSpec::capability() const {
  const auto dot = compute_capability.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= compute_capability.size()) return 0;
  try {
    return std::stoi(compute_capability.substr(0, dot)) * 10 + std::stoi(compute_capability.substr(dot + 1));
  } catch (const std::exception&) {
    return 0;
  }
}

GpuSpec custom_gpu(double total_gib) {
  GpuSpec spec;
  spec.key = "custom";
  spec.name = "custom GPU (" + util::fixed(total_gib, 2) + " GiB)";
  spec.total_bytes = from_gib(total_gib);
  spec.memory_marketing_gb = static_cast<int>(std::lround(total_gib));
  return spec;
}

namespace {

// One catalogue row. `total_known` is false when the row has neither total: from_jsonl then takes
// a sibling's.
Result<ParsedRow> parse_row(const json& row, const std::string& where) {
  if (!row.is_object())
    return make_error(ErrorCode::parse_error, "expected a JSON object per line, got " + type_name(row), where);
  RowReader r{row, where, std::nullopt};
  ParsedRow p;
  GpuSpec& s = p.spec;
  s.key = r.string("key", true);
  s.name = r.string("name", false);
  s.vendor = r.string("vendor", false);
  s.architecture = r.string("architecture", false);
  s.compute_capability = r.string("compute_capability", false);
  s.aliases = r.strings("aliases");
  s.nvml_names = r.strings("nvml_name");
  s.memory_marketing_gb = static_cast<int>(r.number("memory_marketing_gb").value_or(0));
  s.bf16_supported = r.boolean("bf16_supported", true);
  s.fp8_supported = r.boolean("fp8_supported", false);
  s.nvlink = r.boolean("nvlink", false);
  s.unified_memory = r.string("memory_type", false).find("unified") != std::string::npos;
  s.nvml_memory_unsupported = r.boolean("nvml_memory_unsupported", false);
  auto smi_mib = r.number("memory_total_mib_nvidia_smi");
  auto torch_gib = r.number("memory_total_gib_torch");
  if (r.error) return tl::unexpected(*r.error);
  if (s.key.empty()) return make_error(ErrorCode::parse_error, "expected a non-empty \"key\"", where);
  if (s.name.empty()) s.name = s.nvml_names.empty() ? s.key : s.nvml_names.front();
  if (smi_mib) s.nvml_total_bytes = static_cast<Bytes>(std::llround(*smi_mib)) * k_mib;
  if (torch_gib) {
    s.total_bytes = from_gib(*torch_gib);
  } else if (s.nvml_total_bytes) {
    // No CUDA total was observed: a30, a100-pcie-40gb, h200-nvl-141gb, gh200-96gb, gh200-144gb,
    // b300-288gb, rtx-4060-ti-16gb and rtx-5070-ti take the nvidia-smi total minus the typical
    // driver reserve (fitted from the rows that have both totals, see typical_driver_reserve).
    s.total_bytes = *s.nvml_total_bytes - typical_driver_reserve(*s.nvml_total_bytes);
  } else {
    p.total_known = false;
  }
  return p;
}

// A row with neither total (l40) takes the CUDA total of a row with the same vendor,
// architecture and advertised size (l40s: same board, 48 GB GDDR6); failing that, the
// advertised size in decimal GB minus the typical reserve.
void fill_unknown_totals(std::vector<ParsedRow>& parsed) {
  for (auto& p : parsed) {
    if (p.total_known) continue;
    auto sibling = std::find_if(parsed.begin(), parsed.end(), [&](const ParsedRow& o) {
      return o.total_known && o.spec.vendor == p.spec.vendor && o.spec.architecture == p.spec.architecture &&
             o.spec.memory_marketing_gb == p.spec.memory_marketing_gb;
    });
    if (sibling != parsed.end()) {
      p.spec.total_bytes = sibling->spec.total_bytes;
    } else {
      Bytes advertised = static_cast<Bytes>(p.spec.memory_marketing_gb) * 1'000'000'000;
      p.spec.total_bytes = advertised > 0 ? advertised - typical_driver_reserve(advertised) : 0;
    }
  }
}

}  // namespace

Result<GpuCatalog> GpuCatalog::from_jsonl(std::string_view text, const std::string& origin) {
  auto rows = util::parse_jsonl(text, origin);
  if (!rows) return tl::unexpected(rows.error());
  // parse_jsonl skips blank lines; recover the line number of each row for messages.
  std::vector<int> line_numbers;
  {
    int line_no = 0;
    for (const auto& line : util::split(text, '\n')) {
      ++line_no;
      if (line.find_first_not_of(" \t\r") != std::string::npos) line_numbers.push_back(line_no);
    }
  }
  std::vector<ParsedRow> parsed;
  for (std::size_t i = 0; i < rows->size(); ++i) {
    std::string where = origin + ":" + std::to_string(line_numbers[i]);
    auto p = parse_row((*rows)[i], where);
    if (!p) return tl::unexpected(p.error());
    for (const auto& other : parsed) {
      if (other.spec.key == p->spec.key)
        return make_error(ErrorCode::parse_error, "duplicate key \"" + p->spec.key + "\"", where);
    }
    parsed.push_back(std::move(*p));
  }
  fill_unknown_totals(parsed);
  GpuCatalog catalog;
  for (auto& p : parsed) catalog.m_gpus.push_back(std::move(p.spec));
  return catalog;
}

CountedGpuName split_gpu_count(std::string_view text) {
  std::string t = util::trim(std::string(text));
  auto digits = [](std::string_view d) {
    if (d.empty() || d.size() > 4) return 0;
    for (char c : d)
      if (!std::isdigit(static_cast<unsigned char>(c))) return 0;
    return std::atoi(std::string(d).c_str());
  };
  // A count first: digits, optional spaces, then 'x', 'X', '*' or '×' (UTF-8 C3 97), then the name.
  std::size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i > 0) {
    std::size_t j = i;
    while (j < t.size() && t[j] == ' ') ++j;
    std::size_t sep = 0;
    if (j < t.size() && (t[j] == 'x' || t[j] == 'X' || t[j] == '*')) sep = 1;
    else if (t.compare(j, 2, "\xC3\x97") == 0) sep = 2;
    if (sep > 0) {
      std::string rest = util::trim(t.substr(j + sep));
      int n = digits(std::string_view(t).substr(0, i));
      if (n > 0 && !rest.empty()) return {rest, n};
    }
  }
  // The name first, then ':' and the count.
  if (auto colon = t.rfind(':'); colon != std::string::npos && colon > 0) {
    int n = digits(util::trim(t.substr(colon + 1)));
    std::string name = util::trim(t.substr(0, colon));
    if (n > 0 && !name.empty()) return {name, n};
  }
  return {t, 0};
}

namespace {

// One line of data/gpus.jsonl without the members that document a row (its sources, notes and
// the totals seen in logs), four fifths of the file: nothing reads them, and parsing them would be
// most of what a check costs. A line that is not an object of members is kept whole for the
// parser to report.
void append_without_documentation(std::string_view line, std::string& out) {
  static constexpr std::string_view k_skipped[] = {"sources", "notes", "memory_total_gib_torch_observed"};
  auto members = util::object_members(line);
  if (!members) {
    out.append(line).push_back('\n');
    return;
  }
  out.push_back('{');
  bool first = true;
  for (const auto& m : *members) {
    if (std::find(std::begin(k_skipped), std::end(k_skipped), m.name) != std::end(k_skipped)) continue;
    if (!first) out.push_back(',');
    first = false;
    out.append("\"").append(m.name).append("\":").append(m.value);
  }
  out.append("}\n");
}

// The whole file so, for from_jsonl; lines stay lines, so its messages keep their line numbers.
std::string without_documentation(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4);
  for (std::string_view rest = text; !rest.empty();) {
    const std::size_t end = rest.find('\n');
    append_without_documentation(rest.substr(0, end), out);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  return out;
}

// The names of catalogue rows as views, without a GpuSpec per row: each row's key, and its
// aliases and NVML names as ranges of one array. Views point into the embedded catalogue, into
// the GpuSpecs of a parsed catalogue, or into `decoded` for a name written with escapes.
struct NameTable {
  struct Row {
    std::string_view key;
    std::uint32_t aliases = 0, nvml = 0, end = 0;  // [aliases, nvml) and [nvml, end) in `names`
  };
  std::vector<Row> rows;
  std::vector<std::string_view> names;
  std::deque<std::string> decoded;  // a deque: its strings never move

  std::span<const std::string_view> aliases(const Row& r) const { return {names.data() + r.aliases, r.nvml - r.aliases}; }
  std::span<const std::string_view> nvml_names(const Row& r) const { return {names.data() + r.nvml, r.end - r.nvml}; }
  std::uint32_t mark() const { return static_cast<std::uint32_t>(names.size()); }
};

NameTable table_of(const std::vector<GpuSpec>& gpus) {
  NameTable t;
  t.rows.reserve(gpus.size());
  for (const auto& gpu : gpus) {
    NameTable::Row row{gpu.key};
    row.aliases = t.mark();
    t.names.insert(t.names.end(), gpu.aliases.begin(), gpu.aliases.end());
    row.nvml = t.mark();
    t.names.insert(t.names.end(), gpu.nvml_names.begin(), gpu.nvml_names.end());
    row.end = t.mark();
    t.rows.push_back(row);
  }
  return t;
}

std::size_t skip_blanks(std::string_view s, std::size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return i;
}

// A JSON string written without escapes (how the catalogue writes its names), as a view of its
// text; nullopt when it is written otherwise. `i` is where the opening quote should be; on
// success it is moved past the closing quote.
std::optional<std::string_view> plain_string(std::string_view s, std::size_t& i) {
  if (i >= s.size() || s[i] != '"') return std::nullopt;
  // A plain loop: string_view::find_first_of calls memchr once per character.
  std::size_t close = i + 1;
  while (close < s.size() && s[close] != '"' && s[close] != '\\') ++close;
  if (close >= s.size() || s[close] != '"') return std::nullopt;
  const std::string_view out = s.substr(i + 1, close - i - 1);
  i = close + 1;
  return out;
}

// `value` as an array of plain strings, appended to `into` without a JSON parser (1.4 M of a
// check's 7.9 M instructions went to parsing these arrays). false when written otherwise.
bool plain_strings(std::string_view value, std::vector<std::string_view>& into) {
  std::size_t i = skip_blanks(value, 0);
  if (i >= value.size() || value[i] != '[') return false;
  i = skip_blanks(value, i + 1);
  if (i < value.size() && value[i] == ']') return skip_blanks(value, i + 1) == value.size();
  while (auto name = plain_string(value, i)) {
    into.push_back(*name);
    i = skip_blanks(value, i);
    if (i < value.size() && value[i] == ']') return skip_blanks(value, i + 1) == value.size();
    if (i >= value.size() || value[i] != ',') return false;
    i = skip_blanks(value, i + 1);
  }
  return false;
}

// `value` (a JSON array of strings) appended to the table's names, decoding escapes when the
// catalogue writes any; false when it is no array of strings.
bool append_names(std::string_view value, NameTable& t) {
  const std::size_t before = t.names.size();
  if (plain_strings(value, t.names)) return true;
  t.names.resize(before);
  auto parsed = util::parse_json(value, "gpus.jsonl");
  if (!parsed || !parsed->is_array()) return false;
  for (const auto& v : *parsed) {
    if (!v.is_string()) return false;
    t.names.push_back(t.decoded.emplace_back(v.get<std::string>()));
  }
  return true;
}

// A row's key: its plain text, or decoded when written with escapes; nullopt when no string.
std::optional<std::string_view> key_of(std::string_view value, NameTable& t) {
  std::size_t i = skip_blanks(value, 0);
  if (auto key = plain_string(value, i); key && skip_blanks(value, i) == value.size()) return key;
  auto parsed = util::parse_json(value, "gpus.jsonl");
  if (!parsed || !parsed->is_string()) return std::nullopt;
  return t.decoded.emplace_back(parsed->get<std::string>());
}

}  // namespace

struct GpuCatalog::NameIndex {
  NameTable table;                      // key, aliases and NVML names of each line; the rest unread
  std::vector<std::string_view> lines;  // the embedded line each row of `table` was read from
  // Rows parsed so far, the first time find() answers with each (serve asks again and again).
  mutable std::mutex mutex;
  mutable std::map<std::size_t, Result<GpuSpec>> parsed;
};

namespace {

// The names of each line of `text`, from its leading members (the catalogue writes "key",
// "aliases" and "nvml_name" first), into `t`, and each row's line into `lines`. false when a line
// is written otherwise: the caller then parses the whole file.
bool index_names(std::string_view text, NameTable& t, std::vector<std::string_view>& lines) {
  // Room for the catalogue as it is (81 lines, 435 names) and some growth, without a pass over
  // the text to count them.
  t.rows.reserve(128);
  lines.reserve(128);
  t.names.reserve(768);
  for (std::string_view rest = text; !rest.empty();) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto members = util::object_members(line, 3);
    if (!members || members->size() != 3 || (*members)[0].name != "key" || (*members)[1].name != "aliases" ||
        (*members)[2].name != "nvml_name")
      return false;
    auto key = key_of((*members)[0].value, t);
    if (!key) return false;
    NameTable::Row row{*key};
    row.aliases = t.mark();
    if (!append_names((*members)[1].value, t)) return false;
    row.nvml = t.mark();
    if (!append_names((*members)[2].value, t)) return false;
    row.end = t.mark();
    t.rows.push_back(row);
    lines.push_back(line);
  }
  return true;
}

// The row `name` means in `t` (see GpuCatalog::find): its index, or nullopt. Compares without
// allocating: one buffer holds each candidate normalized in turn.
std::optional<std::size_t> match_name(const NameTable& t, std::string_view name) {
  const std::string query = normalize(name);
  const std::string_view bare_query = without_vendor_words(query);
  std::string candidate;
  candidate.reserve(64);
  auto matches = [&](std::string_view n) {
    normalize_into(n, candidate);
    return candidate == query || without_vendor_words(candidate) == bare_query;
  };
  // Pass 0: keys, 1: aliases, 2: NVML names; each pass also tries the names without vendor words.
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    if (matches(t.rows[i].key)) return i;
  for (int pass = 1; pass < 3; ++pass) {
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      auto names = pass == 1 ? t.aliases(t.rows[i]) : t.nvml_names(t.rows[i]);
      if (std::any_of(names.begin(), names.end(), matches)) return i;
    }
  }
  return std::nullopt;
}

Error unknown_gpu(std::string_view name, const NameTable& t) {
  std::vector<std::string> candidates;
  for (const auto& row : t.rows) {
    candidates.emplace_back(row.key);
    for (auto a : t.aliases(row)) candidates.emplace_back(a);
  }
  std::string message = "unknown GPU '" + std::string(name) + "'";
  auto close = util::closest_matches(name, candidates);
  if (!close.empty()) message += "; did you mean " + util::or_list(close) + "?";
  message += " ('headroom gpus --catalog' lists the known GPUs; --gpu-memory-gib sets any size)";
  return Error{ErrorCode::not_found, message, "--gpu"};
}

}  // namespace

const GpuCatalog& GpuCatalog::builtin_parsed_whole() {
  static const GpuCatalog catalog = [] {
    auto text = embedded::find("gpus.jsonl");
    if (!text) return GpuCatalog{};
    auto parsed = from_jsonl(without_documentation(*text), "gpus.jsonl");
    // The embedded file is checked by the test suite; a broken build yields an empty catalogue
    // rather than a crash, and every lookup then says "unknown GPU".
    return parsed ? std::move(*parsed) : GpuCatalog{};
  }();
  return catalog;
}

const GpuCatalog& GpuCatalog::builtin() {
  static const GpuCatalog catalog = [] {
    auto text = embedded::find("gpus.jsonl");
    auto index = std::make_shared<NameIndex>();
    if (!text || !index_names(*text, index->table, index->lines)) return builtin_parsed_whole();
    GpuCatalog lazy;
    lazy.m_index = std::move(index);
    return lazy;
  }();
  return catalog;
}

const std::vector<GpuSpec>& GpuCatalog::all() const { return m_index ? builtin_parsed_whole().m_gpus : m_gpus; }

// Row `at` of the built-in catalogue, parsed alone. A row that takes its total from a sibling,
// or one that does not parse, is answered from the whole file, which says the same for every
// other row (tests/unit/builtin_catalog_test.cc).
Result<GpuSpec> GpuCatalog::builtin_row(std::size_t at) const {
  {
    std::lock_guard<std::mutex> lock(m_index->mutex);
    if (auto it = m_index->parsed.find(at); it != m_index->parsed.end()) return it->second;
  }
  auto answer = [&]() -> Result<GpuSpec> {
    std::string line;
    append_without_documentation(m_index->lines[at], line);
    auto row = util::parse_json(line, "gpus.jsonl");
    auto parsed = row ? parse_row(*row, "gpus.jsonl") : Result<ParsedRow>(tl::unexpected(row.error()));
    if (parsed && parsed->total_known) return std::move(parsed->spec);
    const std::string_view key = m_index->table.rows[at].key;
    for (const auto& gpu : all())
      if (gpu.key == key) return gpu;
    return tl::unexpected(unknown_gpu(key, m_index->table));
  }();
  std::lock_guard<std::mutex> lock(m_index->mutex);
  return m_index->parsed.emplace(at, std::move(answer)).first->second;
}

Result<GpuSpec> GpuCatalog::find(std::string_view name) const {
  if (m_index) {
    auto at = match_name(m_index->table, name);
    if (!at) return tl::unexpected(unknown_gpu(name, m_index->table));
    return builtin_row(*at);
  }
  const NameTable table = table_of(m_gpus);
  auto at = match_name(table, name);
  if (!at) return tl::unexpected(unknown_gpu(name, table));
  return m_gpus[*at];
}

namespace {

// Lower-case words of a GPU name, split at spaces, dashes and underscores.
std::vector<std::string> gpu_name_words(std::string_view name) { return util::lower_words(name, " -_"); }

// "80gb", "12g", "16gib": a memory size.
bool is_memory_word(const std::string& w) {
  static const std::regex k_memory(R"(\d+(\.\d+)?(g|gb|gib))");
  return std::regex_match(w, k_memory);
}

}  // namespace

std::vector<GpuSpec> GpuCatalog::other_sizes_named(std::string_view name, const GpuSpec& chosen) const {
  const auto typed = gpu_name_words(name);
  std::vector<GpuSpec> out;
  if (typed.empty() || std::any_of(typed.begin(), typed.end(), is_memory_word)) return out;
  for (const auto& gpu : all()) {
    if (gpu.key == chosen.key || gpu.total_bytes <= 0 || chosen.total_bytes <= 0) continue;
    const double ratio = static_cast<double>(gpu.total_bytes) / static_cast<double>(chosen.total_bytes);
    if (ratio > 0.95 && ratio < 1.05) continue;
    // The row's own name (its first alias) is the typed one with a size: "A100 80GB", not "H100 NVL".
    if (gpu.aliases.empty()) continue;
    const auto words = gpu_name_words(gpu.aliases.front());
    if (words.size() == typed.size() + 1 && std::equal(typed.begin(), typed.end(), words.begin()) &&
        is_memory_word(words.back()))
      out.push_back(gpu);
  }
  return out;
}

std::optional<GpuSpec> GpuCatalog::match_live(std::string_view nvml_name, Bytes nvml_total_bytes) const {
  const std::string query = normalize(nvml_name);
  std::vector<const GpuSpec*> rows;
  for (const auto& gpu : all()) {
    for (const auto& n : gpu.nvml_names) {
      if (normalize(n) == query) {
        rows.push_back(&gpu);
        break;
      }
    }
  }
  if (rows.empty()) {
    auto found = find(nvml_name);
    if (!found) return std::nullopt;
    for (const auto& gpu : all())
      if (gpu.key == found->key) rows.push_back(&gpu);
  }
  // The row whose expected NVML total is closest to the live one.
  auto expected_nvml = [](const GpuSpec& g) {
    return g.nvml_total_bytes ? *g.nvml_total_bytes : g.total_bytes + typical_driver_reserve(g.total_bytes);
  };
  const GpuSpec* best = *std::min_element(rows.begin(), rows.end(), [&](const GpuSpec* a, const GpuSpec* b) {
    return std::llabs(expected_nvml(*a) - nvml_total_bytes) < std::llabs(expected_nvml(*b) - nvml_total_bytes);
  });
  // CUDA never sees more than NVML's total, and the reserve is a few percent at most: a row
  // outside that is another SKU sold under the same name (RTX 4060 Ti 8GB vs the 16GB row).
  if (best->total_bytes > nvml_total_bytes) return std::nullopt;
  if (nvml_total_bytes - best->total_bytes > nvml_total_bytes / 10) return std::nullopt;
  return *best;
}

}  // namespace headroom
