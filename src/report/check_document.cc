#include "headroom/check_document.h"

#include <regex>

#include "headroom/report.h"

namespace headroom {

nlohmann::json check_document(const ModelSpec& model, const GpuSetup& gpus, const Prediction& prediction,
                              const std::vector<std::string>& command_warnings, const std::vector<RunRecord>& records,
                              const HistoryAdvice& advice, const std::string& history_location) {
  auto j = prediction_to_json(model, gpus, prediction);
  for (const auto& w : command_warnings) j["warnings"].push_back(w);
  if (!records.empty()) {
    nlohmann::json failures = nlohmann::json::array();
    for (const auto& f : advice.failures) failures.push_back(f.citation());
    j["history"] = {{"database", redact_location(history_location)}, {"records", records.size()}, {"failed_configurations", failures}};
  }
  return j;
}

std::string redact_location(std::string text) {
  // scheme://user:password@ and password=value (libpq's key/value and URL query forms).
  static const std::regex userinfo(R"(([A-Za-z][A-Za-z0-9+.-]*://[^/@:\s]*:)[^@\s/]*@)");
  static const std::regex keyword(R"((password=)[^&\s]*)", std::regex::icase);
  text = std::regex_replace(text, userinfo, "$1***@");
  return std::regex_replace(text, keyword, "$1***");
}

}  // namespace headroom
