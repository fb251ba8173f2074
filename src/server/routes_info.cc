// GET /v1/gpus (`headroom gpus --catalog --format json`; the live GPUs with --live-gpus and
// ?live=1), GET /v1/models?q= (catalogue and Hugging Face cache ids), GET /v1/history
// (`headroom history list --format json`).
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "headroom/gpu_json.h"
#include "headroom/history.h"
#include "headroom/model.h"
#include "server/api.h"
#include "server/request_target.h"
#include "util/strings.h"

namespace headroom::server {

namespace fs = std::filesystem;

namespace {

std::string dump(const nlohmann::json& j) { return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; }

std::string query_value(const Query& query, const std::string& key) {
  auto it = query.find(key);
  return it == query.end() ? "" : it->second;
}

// "models--ORG--NAME" folders → "ORG/NAME".
std::vector<std::string> cached_model_ids(const fs::path& hub) {
  std::vector<std::string> ids;
  std::error_code ec;
  if (hub.empty() || !fs::is_directory(hub, ec)) return ids;
  for (const auto& e : fs::directory_iterator(hub, ec)) {
    std::string name = e.path().filename().string();
    if (!name.starts_with("models--") || !e.is_directory(ec)) continue;
    std::string id = name.substr(8);
    if (auto pos = id.find("--"); pos != std::string::npos) id = id.substr(0, pos) + "/" + id.substr(pos + 2);
    ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Every space-separated word of the query appears in the id (case-insensitive).
bool matches(const std::string& id, const std::vector<std::string>& words) {
  std::string lower = util::to_lower(id);
  return std::all_of(words.begin(), words.end(), [&](const std::string& w) { return lower.find(w) != std::string::npos; });
}

constexpr std::size_t k_max_models = 50;

}  // namespace

ApiResponse api_gpus(ApiContext& ctx, const Query& query) {
  std::string live = query_value(query, "live");
  if (live.empty() || live == "0" || live == "false") return json_response(dump(gpu_catalog_to_json(GpuCatalog::builtin())));
  if (!ctx.options.live_gpus)
    return error_response({403, "forbidden", "this server does not show its own GPUs (start it with --live-gpus)", "live"});
  auto inventory = probe_gpus();
  if (!inventory) return error_response(from_library(inventory.error()));
  return json_response(dump(gpu_inventory_to_json(*inventory)));
}

ApiResponse api_models(ApiContext& ctx, const Query& query) {
  std::string q = query_value(query, "q");
  if (q.size() > 200) return error_response({400, "parse_error", "expected a query of at most 200 characters", "q"});
  std::vector<std::string> words;
  for (const auto& w : util::split(util::to_lower(q), ' '))
    if (!w.empty()) words.push_back(w);
  nlohmann::json models = nlohmann::json::array();
  bool truncated = false;
  auto add = [&](const std::vector<std::string>& ids, const char* source) {
    for (const auto& id : ids) {
      if (!matches(id, words)) continue;
      if (models.size() >= k_max_models) {
        truncated = true;
        return;
      }
      models.push_back({{"id", id}, {"source", source}});
    }
  };
  add(cached_model_ids(server_hub_cache(ctx.options)), "hf_cache");
  add(catalog_model_ids(), "catalog");
  return json_response(dump({{"schema_version", 1}, {"query", q}, {"models", models}, {"truncated", truncated}}));
}

ApiResponse api_history(ApiContext& ctx) {
  auto store = open_history(ctx.history.location(), OpenMode::existing_only);
  if (!store) return error_response(from_library(store.error()));
  if (!*store) return json_response(dump({{"schema_version", 1}, {"records", nlohmann::json::array()}}));
  auto records = (*store)->list();
  if (!records) return error_response(from_library(records.error()));
  nlohmann::json all = nlohmann::json::array();
  for (const auto& r : *records) all.push_back(to_json(r));
  return json_response(dump({{"schema_version", 1}, {"database", (*store)->description()}, {"records", all}}));
}

}  // namespace headroom::server
