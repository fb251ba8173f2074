// Every line of the built-in catalogue predicts at the default vLLM version on a GPU setup it fits
// (text and JSON, no error, nothing "not modelled"), or names the field its facts lack.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/report.h"
#include "headroom/vllm_engine.h"

namespace headroom {
namespace {

struct Setup {
  const char* gpu;
  int tp;
  int pp;
};

// From one GPU up to two nodes of eight B300s; the first setup where vLLM starts is used.
const std::vector<Setup> k_setups = {{"H100", 1, 1}, {"H100", 2, 1}, {"H100", 4, 1}, {"H100", 8, 1},
                                     {"B200", 8, 1}, {"B300", 8, 1}, {"B300", 8, 2}};

std::optional<std::string> predict_somewhere(const ModelSpec& m, std::string& text, nlohmann::json& json) {
  std::string last;
  for (const auto& s : k_setups) {
    auto g = GpuCatalog::builtin().find(s.gpu);
    if (!g) return "GPU " + std::string(s.gpu) + " missing from the catalogue";
    GpuSetup gpus;
    gpus.gpu = *g;
    gpus.count = s.tp;
    gpus.nodes = s.pp;
    VllmFlags flags;
    flags.tensor_parallel_size = s.tp;
    flags.pipeline_parallel_size = s.pp;
    // A TP size must divide the heads; the context is capped so the walk asks the same question
    // of every model (does it start), not whether a million tokens fit.
    if (m.num_attention_heads % s.tp != 0) continue;
    flags.max_model_len = std::min<std::int64_t>(8192, m.max_position_embeddings > 0 ? m.max_position_embeddings : 2048);
    auto p = predict(m, gpus, flags, VllmVersion::newest_modelled());
    if (!p) return p.error().to_string();
    // MoE checkpoints whose expert width does not split into the TP size's fp8 blocks are served
    // with expert parallelism (experts stay whole), as their model cards say.
    if (!p->starts && m.moe && s.tp > 1) {
      flags.enable_expert_parallel = true;
      p = predict(m, gpus, flags, VllmVersion::newest_modelled());
      if (!p) return p.error().to_string();
    }
    // An architecture the newest release no longer serves (Llama 3.2 Vision, dropped with V0) is
    // predicted too: vLLM refuses it, on any setup.
    const bool refused = p->failure && p->failure->error_class == "architecture_unsupported";
    if (!p->starts && !refused) {
      last = p->failure ? p->failure->message : "does not start";
      continue;
    }
    text = render_prediction_text(m, gpus, *p, TextStyle::plain);
    json = prediction_to_json(m, gpus, *p);
    return std::nullopt;
  }
  return "fits none of the setups: " + last;
}

TEST(CatalogWalk, EveryLinePredictsOrNamesTheMissingField) {
  int predicted = 0, incomplete = 0;
  std::vector<std::string> problems;
  for (const auto& id : catalog_model_ids()) {
    auto m = catalog_model(id);
    if (!m) {
      const std::string msg = m.error().message;
      const bool names_field = msg.find("missing") != std::string::npos;
      if (m.error().code == ErrorCode::unsupported && names_field && msg.find("not modelled") == std::string::npos) {
        ++incomplete;
        continue;
      }
      problems.push_back(id + ": " + m.error().to_string());
      continue;
    }
    std::string text;
    nlohmann::json json;
    if (auto err = predict_somewhere(*m, text, json)) {
      problems.push_back(id + ": " + *err);
      continue;
    }
    if (text.find("not modelled") != std::string::npos || json.dump().find("not modelled") != std::string::npos)
      problems.push_back(id + ": output says \"not modelled\"");
    if (json.at("vllm_modelled_with") != "v0.33 modelled with v0.31 rules")
      problems.push_back(id + ": JSON lacks the modelled-with line");
    if (text.find("rules   v0.33 modelled with v0.31 rules\n") == std::string::npos)
      problems.push_back(id + ": text lacks the modelled-with line");
    ++predicted;
  }
  for (const auto& p : problems) ADD_FAILURE() << p;
  EXPECT_EQ(predicted + incomplete, static_cast<int>(catalog_model_ids().size()));
  // The lines without architecture facts (model card or file listing only) and the partial copies.
  EXPECT_LE(incomplete, 14);
}

}  // namespace
}  // namespace headroom
