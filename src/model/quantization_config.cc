// quantization_config (config.json) and hf_quant_config.json (ModelOpt) → QuantizationConfig.
#include <cctype>

#include "model/model_internal.h"
#include "util/strings.h"

namespace headroom::model_detail {

namespace {

void add_modules(const nlohmann::json& list, std::vector<std::string>& out) {
  if (!list.is_array()) return;
  for (const auto& m : list)
    if (m.is_string()) out.push_back(m.get<std::string>());
}

// compressed-tensors: config_groups.<name>.weights.{num_bits, group_size}; the first group decides.
void read_compressed_tensors_groups(const nlohmann::json& q, QuantizationConfig& out) {
  auto groups = q.find("config_groups");
  if (groups == q.end() || !groups->is_object()) return;
  for (const auto& [name, group] : groups->items()) {
    auto w = group.find("weights");
    if (w == group.end() || !w->is_object()) continue;
    if (auto b = w->find("num_bits"); b != w->end() && b->is_number_integer()) out.bits = b->get<int>();
    if (auto g = w->find("group_size"); g != w->end() && g->is_number_integer()) out.group_size = g->get<int>();
    if (auto s = w->find("strategy"); s != w->end() && s->is_string() && s->get<std::string>() == "block") {
      // Block-quantized fp8: group_size stays 0, the block shape is in block_structure.
    }
    break;
  }
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Result<QuantizationConfig> read_quantization_config(const ConfigReader& q) {
  QuantizationConfig out;
  out.raw = q.json();
  HR_TRY(method, q.get_string("quant_method"));
  out.method = util::to_lower(method.value_or(""));
  HR_TRY(bits, q.first_int({"bits", "w_bit", "weight_bits", "num_bits"}));
  if (bits) out.bits = static_cast<int>(bits->second);
  HR_TRY(group, q.first_int({"group_size", "q_group_size"}));
  if (group && group->second > 0) out.group_size = static_cast<int>(group->second);
  HR_TRY(format, q.get_string("format"));
  out.format = format.value_or("");
  HR_TRY(lm_head, q.get_bool("lm_head"));
  out.lm_head_quantized = lm_head.value_or(false);
  for (const char* key : {"ignore", "modules_to_not_convert", "ignored_layers", "exclude_modules"})
    if (q.has(key)) add_modules(q.json().at(key), out.ignored_modules);

  if (out.method == "compressed-tensors") read_compressed_tensors_groups(q.json(), out);
  if (out.method == "fp8" && out.bits == 0) out.bits = 8;
  if (out.method == "mxfp4") {
    out.bits = 4;
    out.group_size = 32;
  }
  if (out.method == "bitsandbytes") {
    HR_TRY(b4, q.get_bool("load_in_4bit"));
    HR_TRY(b8, q.get_bool("load_in_8bit"));
    if (b4.value_or(false)) out.bits = 4;
    else if (b8.value_or(false)) out.bits = 8;
  }
  if (out.method == "modelopt") {
    // ModelOpt written into config.json: the same keys as hf_quant_config.json's "quantization".
    QuantizationConfig mo = read_modelopt_quant_config(nlohmann::json{{"quantization", q.json()}});
    out.bits = mo.bits;
    out.group_size = mo.group_size;
    out.kv_cache_fp8 = mo.kv_cache_fp8;
    if (out.ignored_modules.empty()) out.ignored_modules = mo.ignored_modules;
  }
  // An fp8 KV cache declared by the checkpoint (vLLM resolves --kv-cache-dtype auto to fp8).
  if (q.has("kv_cache_scheme")) {
    const auto& s = q.json().at("kv_cache_scheme");
    if (s.is_object()) {
      auto nb = s.find("num_bits");
      out.kv_cache_fp8 = nb == s.end() || (nb->is_number_integer() && nb->get<int>() == 8);
    }
  }
  HR_TRY(kv_algo, q.get_string("kv_cache_quant_algo"));
  if (kv_algo && util::to_lower(*kv_algo).find("fp8") != std::string::npos) out.kv_cache_fp8 = true;
  return out;
}

QuantizationConfig read_modelopt_quant_config(const nlohmann::json& hf_quant_config) {
  QuantizationConfig out;
  out.method = "modelopt";
  out.raw = hf_quant_config;
  const nlohmann::json* q = &hf_quant_config;
  if (auto it = hf_quant_config.find("quantization"); it != hf_quant_config.end() && it->is_object()) q = &*it;
  std::string algo;
  if (auto a = q->find("quant_algo"); a != q->end() && a->is_string()) algo = upper(a->get<std::string>());
  if (algo.find("FP8") != std::string::npos || algo.find("INT8") != std::string::npos) out.bits = 8;
  if (algo.find("FP4") != std::string::npos || algo.find("INT4") != std::string::npos || algo.find("W4") != std::string::npos) {
    out.bits = 4;
    out.group_size = algo.find("NVFP4") != std::string::npos ? 16 : 0;
  }
  if (auto g = q->find("group_size"); g != q->end() && g->is_number_integer()) out.group_size = g->get<int>();
  if (auto kv = q->find("kv_cache_quant_algo"); kv != q->end() && kv->is_string())
    out.kv_cache_fp8 = util::to_lower(kv->get<std::string>()).find("fp8") != std::string::npos;
  if (auto ex = q->find("exclude_modules"); ex != q->end()) add_modules(*ex, out.ignored_modules);
  out.format = algo;
  return out;
}

}  // namespace headroom::model_detail
