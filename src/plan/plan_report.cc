// The plan's JSON document and text report.
#include <cmath>

#include "headroom/plan_render.h"
#include "util/strings.h"

namespace headroom {

namespace {

double gib2(Bytes b) { return std::round(to_gib(b) * 100.0) / 100.0; }

nlohmann::json config_to_json(const ModelSpec& model, const Plan& plan, const PlannedConfig& c) {
  nlohmann::json j;
  j["label"] = c.label;
  if (!c.trade_off.empty()) j["trade_off"] = c.trade_off;
  j["settings"] = settings_to_json(c.prediction.settings);
  j["utilization"] = {{"min", c.utilization_min},
                      {"max", c.utilization_max},
                      {"min_reason", c.utilization_min_reason},
                      {"max_reason", c.utilization_max_reason}};
  j["replica_gpus"] = c.replica_gpus;
  j["requests_at_context"] = std::floor(c.requests_at_context * 100.0) / 100.0;
  j["choices"] = nlohmann::json::array();
  for (const auto& ch : c.choices) j["choices"].push_back({{"setting", ch.setting}, {"value", ch.value}, {"reason", ch.reason}});
  j["prediction"] = prediction_to_json(model, plan.gpus, c.prediction);
  std::string ray = render_ray(plan.model_id, c, plan.gpus);
  j["renderings"] = {{"vllm_serve", render_vllm_serve(plan.model_id, c, plan.gpus, CommandStyle::one_line)},
                     {"python", render_python(plan.model_id, c, plan.gpus)},
                     {"yaml", render_yaml(plan.model_id, c, plan.gpus)},
                     {"ray", ray.empty() ? nlohmann::json(nullptr) : nlohmann::json(ray)}};
  return j;
}

std::string indent(const std::string& text, const std::string& pad) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    out += (line.empty() ? "" : pad + line) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

nlohmann::json plan_to_json(const ModelSpec& model, const Plan& plan) {
  nlohmann::json j;
  j["schema_version"] = k_plan_schema_version;
  j["model"] = {{"id", model.id}, {"architecture", model.architecture}, {"max_model_len", plan.model_max_len}};
  j["gpu"] = {{"name", plan.gpus.gpu.name},
              {"key", plan.gpus.gpu.key},
              {"total_gib", gib2(plan.gpus.gpu.total_bytes)},
              {"count", plan.gpus.count},
              {"nodes", plan.gpus.nodes},
              {"free_gib", plan.gpus.free_bytes ? nlohmann::json(gib2(*plan.gpus.free_bytes)) : nlohmann::json(nullptr)}};
  j["vllm_version"] = plan.version.to_string();
  const auto& r = plan.request;
  j["request"] = {{"context", r.context_tokens ? nlohmann::json(*r.context_tokens) : nlohmann::json(nullptr)},
                  {"concurrency", r.concurrency},
                  {"goal", std::string(to_string(r.goal))},
                  {"max_gpus", r.max_gpus ? nlohmann::json(*r.max_gpus) : nlohmann::json(nullptr)},
                  {"allow_fp8_kv", r.allow_fp8_kv},
                  {"allow_eager", r.allow_eager},
                  {"safety_margin_gib", gib2(plan.safety_margin_bytes)}};
  j["context_tokens"] = plan.context_tokens;
  j["outcome"] = plan.recommended ? "ok" : "no_fit";
  j["recommended"] = plan.recommended ? config_to_json(model, plan, *plan.recommended) : nlohmann::json(nullptr);
  j["alternatives"] = nlohmann::json::array();
  for (const auto& a : plan.alternatives) j["alternatives"].push_back(config_to_json(model, plan, a));
  j["explanation"] = plan.explanation;
  if (plan.no_fit) {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& c : plan.no_fit->changes) changes.push_back({{"kind", c.kind}, {"summary", c.summary}, {"option", c.option}});
    j["no_fit"] = {{"reason", plan.no_fit->reason}, {"details", plan.no_fit->details}, {"changes", changes}};
  } else {
    j["no_fit"] = nullptr;
  }
  return j;
}

std::string render_plan_text(const ModelSpec& model, const Plan& plan, TextStyle style) {
  std::string out;
  auto line = [&](const std::string& l) { out += l + "\n"; };
  auto bold = [&](const std::string& t) { return style == TextStyle::color ? "\x1b[1m" + t + "\x1b[0m" : t; };
  const auto& g = plan.gpus;
  const auto& r = plan.request;
  std::string gpu = std::to_string(g.count * std::max(1, g.nodes)) + " × " + g.gpu.name +
                    (g.nodes > 1 ? " (" + std::to_string(g.nodes) + " nodes × " + std::to_string(g.count) + ")" : "") + ", " +
                    util::fixed(to_gib(g.gpu.total_bytes), 2) + " GiB each";
  if (g.free_bytes) gpu += ", " + util::fixed(to_gib(*g.free_bytes), 2) + " GiB free";
  line(bold("plan") + "  " + model.id + " on " + gpu + ", vLLM " + plan.version.to_string());
  line("      requests up to " + util::with_commas(plan.context_tokens) + " tokens" + (r.context_tokens ? "" : " (no --context: chosen by the plan)") +
       ", " + std::to_string(r.concurrency) + " at once; goal " + std::string(to_string(r.goal)) + "; safety margin " +
       util::fixed(to_gib(plan.safety_margin_bytes), 2) + " GiB per GPU");
  line("");
  if (!plan.recommended) {
    line(bold("nothing fits") + ": " + (plan.no_fit ? plan.no_fit->reason : "no configuration starts"));
    if (plan.no_fit) {
      for (const auto& d : plan.no_fit->details) line("  " + d);
      line("");
      if (plan.no_fit->changes.empty()) {
        line("no single change found that fits (more GPUs up to 8 nodes of 8, fp8, quantized checkpoints were tried)");
      } else {
        line(bold("smallest changes that fit"));
        for (const auto& c : plan.no_fit->changes) line("  - " + c.summary + "\n      " + c.option);
      }
    }
    return out;
  }
  const auto& rec = *plan.recommended;
  line(bold("recommended"));
  for (const auto& c : rec.choices) {
    std::string name = c.setting, value = c.value;
    name.resize(24, ' ');
    value.resize(std::max<std::size_t>(value.size(), 7), ' ');
    line("  " + name + " " + value + " " + c.reason);
  }
  line("");
  line(bold("why this gpu_memory_utilization"));
  for (const auto& e : plan.explanation) line("  " + e);
  line("");
  line(bold("predicted memory") + " (as `headroom check` reports it)");
  out += indent(render_prediction_text(model, g, rec.prediction, style), "  ");
  line("");
  if (!plan.alternatives.empty()) {
    line(bold("alternatives"));
    int i = 1;
    for (const auto& a : plan.alternatives) {
      line("  " + std::to_string(i++) + ". " + a.label + ": " + a.trade_off);
      std::string cmd = render_vllm_serve(plan.model_id, a, g, CommandStyle::one_line);
      cmd.pop_back();
      line("     " + cmd);
    }
    line("");
  }
  std::string ray = render_ray(plan.model_id, rec, g);
  if (!ray.empty()) {
    line(bold("run it on a Ray cluster"));
    out += indent(ray, "  ");
  } else {
    line(bold("run it"));
    out += indent(render_vllm_serve(plan.model_id, rec, g, CommandStyle::multi_line), "  ");
  }
  line("");
  line(bold("python"));
  out += indent(render_python(plan.model_id, rec, g), "  ");
  line("");
  line(bold("yaml") + " (vllm-plan.yaml)");
  out += indent(render_yaml(plan.model_id, rec, g), "  ");
  return out;
}

}  // namespace headroom
