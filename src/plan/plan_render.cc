#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/plan_render.h"
#include "util/strings.h"

namespace headroom {

namespace {

// (long flag name, value; "" for a switch) in the order vLLM's --help lists them.
std::vector<std::pair<std::string, std::string>> rendered_flags(const PlannedConfig& c, const GpuSetup& gpus) {
  const VllmFlags& f = c.flags;
  std::vector<std::pair<std::string, std::string>> out;
  if (f.tensor_parallel_size.value_or(1) > 1) out.emplace_back("tensor-parallel-size", std::to_string(*f.tensor_parallel_size));
  if (f.pipeline_parallel_size.value_or(1) > 1) out.emplace_back("pipeline-parallel-size", std::to_string(*f.pipeline_parallel_size));
  if (f.data_parallel_size.value_or(1) > 1) out.emplace_back("data-parallel-size", std::to_string(*f.data_parallel_size));
  if (f.max_model_len) out.emplace_back("max-model-len", std::to_string(*f.max_model_len));
  if (f.gpu_memory_utilization) out.emplace_back("gpu-memory-utilization", util::fixed(*f.gpu_memory_utilization, 2));
  if (f.max_num_seqs) out.emplace_back("max-num-seqs", std::to_string(*f.max_num_seqs));
  if (f.max_num_batched_tokens) out.emplace_back("max-num-batched-tokens", std::to_string(*f.max_num_batched_tokens));
  if (f.kv_cache_dtype && *f.kv_cache_dtype != "auto") out.emplace_back("kv-cache-dtype", *f.kv_cache_dtype);
  if (f.dtype && *f.dtype != "auto") out.emplace_back("dtype", *f.dtype);
  if (f.quantization) out.emplace_back("quantization", *f.quantization);
  if (f.enforce_eager) out.emplace_back("enforce-eager", "");
  for (auto& kept : KeptFlags::from(f).values()) out.push_back(std::move(kept));
  if (c.prediction.gpus_used > gpus.count) out.emplace_back("distributed-executor-backend", "ray");
  return out;
}

std::string snake(std::string name) {
  for (char& ch : name)
    if (ch == '-') ch = '_';
  return name;
}

bool is_number(const std::string& v) {
  return !v.empty() && v.find_first_not_of("0123456789.") == std::string::npos;
}

bool is_json(const std::string& v) { return !v.empty() && (v.front() == '{' || v.front() == '['); }

// A YAML single-quoted scalar: a quote inside is doubled.
std::string yaml_single_quoted(const std::string& v) {
  std::string out = "'";
  for (char ch : v) out += ch == '\'' ? std::string("''") : std::string(1, ch);
  return out + "'";
}

// A JSON value (the limits per prompt, processor kwargs) as the Python literal vllm.LLM takes.
std::string python_literal(const nlohmann::json& j) {
  if (j.is_object()) {
    std::string out = "{";
    for (auto it = j.begin(); it != j.end(); ++it)
      out += (it == j.begin() ? "" : ", ") + nlohmann::json(it.key()).dump() + ": " + python_literal(it.value());
    return out + "}";
  }
  if (j.is_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + python_literal(j[i]);
    return out + "]";
  }
  if (j.is_boolean()) return j.get<bool>() ? "True" : "False";
  if (j.is_null()) return "None";
  return j.dump();
}

}  // namespace

std::string render_vllm_serve(const std::string& model_id, const PlannedConfig& c, const GpuSetup& gpus, CommandStyle style) {
  std::string out = "vllm serve " + model_id;
  for (const auto& [name, value] : rendered_flags(c, gpus)) {
    out += style == CommandStyle::multi_line ? " \\\n  " : " ";
    out += "--" + name + (value.empty() ? "" : " " + util::shell_word(value));
  }
  return out + "\n";
}

std::string render_python(const std::string& model_id, const PlannedConfig& c, const GpuSetup& gpus) {
  std::string out = "from vllm import LLM\n\nllm = LLM(\n    model=\"" + model_id + "\",\n";
  // LLM() starts the engine with usage context LLM_CLASS, whose batch defaults differ from the
  // server's (engine/arg_utils.py get_batch_defaults: 16384 / 8192 batched tokens against 8192 /
  // 2048), so the plan's resolved batch limits are written out for the code to reproduce it.
  PlannedConfig offline = c;
  const auto& resolved = c.prediction.settings;
  if (!offline.flags.max_num_seqs && resolved.max_num_seqs > 0) offline.flags.max_num_seqs = resolved.max_num_seqs;
  if (!offline.flags.max_num_batched_tokens && resolved.max_num_batched_tokens > 0)
    offline.flags.max_num_batched_tokens = resolved.max_num_batched_tokens;
  for (const auto& [name, value] : rendered_flags(offline, gpus)) {
    std::string v = value.empty() ? "True" : is_number(value) ? value : "\"" + value + "\"";
    if (is_json(value))
      if (auto j = nlohmann::json::parse(value, nullptr, false); !j.is_discarded()) v = python_literal(j);
    out += "    " + snake(name) + "=" + v + ",\n";
  }
  return out + ")\n";
}

std::string render_yaml(const std::string& model_id, const PlannedConfig& c, const GpuSetup& gpus) {
  std::string out = "# vllm serve " + model_id + " --config vllm-plan.yaml\n";
  for (const auto& [name, value] : rendered_flags(c, gpus))
    out += name + ": " + (value.empty() ? "true" : is_number(value) ? value : is_json(value) ? yaml_single_quoted(value) : "\"" + value + "\"") +
           "\n";
  return out;
}

std::string render_ray(const std::string& model_id, const PlannedConfig& c, const GpuSetup& gpus) {
  if (c.prediction.gpus_used <= gpus.count) return "";
  const int nodes = (c.prediction.gpus_used + gpus.count - 1) / gpus.count;
  std::string out;
  out += "# 1. on the head node (HEAD_IP is its address on the cluster network)\n";
  out += "ray start --head --port=6379\n";
  out += "# 2. on each of the other " + std::to_string(nodes - 1) + " node(s), with the same vLLM version and model files\n";
  out += "ray start --address=HEAD_IP:6379\n";
  out += "# 3. on the head node, once `ray status` shows " + std::to_string(c.prediction.gpus_used) + " GPUs\n";
  out += render_vllm_serve(model_id, c, gpus, CommandStyle::multi_line);
  return out;
}

}  // namespace headroom
