// Loads data/vllm_phase_frames.json. A frame is looked up by function (and file, when the entry
// names one), then by path; only frames under a vLLM path count, so a model's own `forward` in
// site-packages/transformers never decides a phase.
#include "diagnose/phase_table.h"

#include "util/embedded_data.h"
#include "util/json_file.h"

namespace headroom {

Result<PhaseTable> PhaseTable::parse(std::string_view json_text, const std::string& origin) {
  auto json = util::parse_json(json_text, origin);
  if (!json) return tl::unexpected(json.error());
  PhaseTable table;
  try {
    for (const auto& [phase, rank] : json->at("phase_rank").items()) table.m_rank[phase] = rank.get<int>();
    for (const auto& p : json->at("vllm_paths")) table.m_vllm_paths.push_back(p.get<std::string>());
    for (const auto& f : json->at("functions")) {
      Entry e;
      e.function = f.at("function").get<std::string>();
      e.file = f.value("file", "");
      if (f.contains("phase") && !f.at("phase").is_null()) e.phase = f.at("phase").get<std::string>();
      if (!e.phase.empty() && !table.m_rank.count(e.phase))
        return make_error(ErrorCode::parse_error,
                          "field 'functions': phase \"" + e.phase + "\" of \"" + e.function + "\" has no phase_rank", origin);
      table.m_functions.push_back(std::move(e));
    }
    for (const auto& f : json->at("files")) table.m_files.emplace_back(f.at("path").get<std::string>(), f.at("phase").get<std::string>());
    if (json->contains("code"))
      for (const auto& c : json->at("code")) table.m_code.emplace_back(c.at("code").get<std::string>(), c.at("phase").get<std::string>());
    for (const auto& l : json->at("loggers").at("files")) table.m_loggers.push_back(l.get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::parse_error, std::string("expected the phase table's fields: ") + e.what(), origin);
  }
  return table;
}

const PhaseTable& PhaseTable::builtin() {
  static const PhaseTable table = [] {
    auto text = embedded::find("vllm_phase_frames.json");
    if (!text) return PhaseTable{};
    auto parsed = parse(*text, "data/vllm_phase_frames.json");
    return parsed ? std::move(*parsed) : PhaseTable{};
  }();
  return table;
}

std::string_view PhaseTable::frame_phase(std::string_view path, std::string_view function) const {
  bool vllm = false;
  for (const auto& p : m_vllm_paths)
    if (path.find(p) != std::string_view::npos) vllm = true;
  if (!vllm) return {};
  // A listed function decides, a shared one ("" phase) stops the search: its caller decides.
  const Entry* any_file = nullptr;
  for (const auto& e : m_functions) {
    if (e.function != function) continue;
    if (!e.file.empty()) {
      if (path.find(e.file) != std::string_view::npos) return e.phase;
    } else if (!any_file) {
      any_file = &e;
    }
  }
  if (any_file) return any_file->phase;
  for (const auto& [fragment, phase] : m_files)
    if (path.find(fragment) != std::string_view::npos) return phase;
  return {};
}

std::string_view PhaseTable::function_phase(std::string_view function) const {
  for (const auto& e : m_functions)
    if (e.function == function && e.file.empty()) return e.phase;
  return {};
}

bool PhaseTable::serving_logger(std::string_view file) const {
  for (const auto& l : m_loggers)
    if (l == file) return true;
  return false;
}

int PhaseTable::rank(std::string_view phase) const {
  auto it = m_rank.find(phase);
  return it == m_rank.end() ? 0 : it->second;
}

}  // namespace headroom
