#include "engine/quant_kernels.h"

#include <algorithm>

#include "util/strings.h"

namespace headroom::engine {

namespace {

// A key of the quantization config as read; nullopt when the config does not write it (a
// catalogue line may keep only the method and bits).
std::optional<nlohmann::json> config_value(const ModelSpec& model, const char* key) {
  if (!model.quantization || !model.quantization->raw.is_object()) return std::nullopt;
  auto it = model.quantization->raw.find(key);
  if (it == model.quantization->raw.end() || it->is_null()) return std::nullopt;
  return *it;
}

bool written_false(const ModelSpec& model, const char* key) {
  const auto v = config_value(model, key);
  return v && v->is_boolean() && !v->get<bool>();
}

// gptq_marlin.py is_gptq_marlin_compatible: (bits, sym) in {(4, True), (8, True)}; awq_marlin.py
// is_awq_marlin_compatible: bits 4 or 8 with zero points (scalar types uint4 / uint8, which
// marlin_utils.py offers only with has_zp). Both need a CUDA GPU of capability 8.0 or more
// (check_marlin_supported). A key the config as read does not carry is taken as the common
// release's value (sym true, zero_point true): only a config that writes otherwise decides it.
bool marlin_compatible(const std::string& q, const ModelSpec& model, const GpuSpec& gpu) {
  if (gpu.vendor == "AMD" || gpu.capability() < 80) return false;
  const int bits = model.quantization ? model.quantization->bits : 0;
  if (bits != 0 && bits != 4 && bits != 8) return false;
  if (q == "gptq") return !written_false(model, "sym");
  if (q == "awq") return !written_false(model, "zero_point");
  return false;
}

}  // namespace

std::string resolved_quantization_method(const std::string& quantization, bool user_named, const ModelSpec& model,
                                         const GpuSpec& gpu) {
  const std::string q = util::to_lower(quantization);
  if (!user_named && (q == "gptq" || q == "awq") && marlin_compatible(q, model, gpu)) return q + "_marlin";
  // modelopt.py ModelOptNvFp4Config.override_quantization_method: a quant_algo with "NVFP4" or "FP4".
  if (q == "modelopt" && model.quantization && model.quantization->bits == 4 &&
      util::to_lower(model.quantization->raw.dump()).find("fp4") != std::string::npos)
    return "modelopt_fp4";
  return q;
}

Bytes dequantized_linear_bytes(const std::string& method, int bits, const LinearShapes& s, int tokens, double dtype_bytes) {
  const double qkv = s.hidden * (s.q_out + 2 * s.kv_out), o = s.q_out * s.hidden;
  const double gate_up = s.hidden * 2 * s.mlp_per_rank, down = s.mlp_per_rank * s.hidden;
  double elements = 0, bytes_per = 2;  // float16: AWQ's scales and GPTQ's activations are float16
  if (method == "awq") {
    if (tokens < 256) return 0;  // FP16_MATMUL_HEURISTIC_CONDITION
    elements = std::max({qkv, o, gate_up, down});
  } else if (method == "gptq") {
    elements = std::max({qkv, o, gate_up, down});
  } else if (method == "bitsandbytes" && bits != 8) {
    // bits 0: quantized while loading, BitsAndBytesConfig's default load_in_4bit.
    if (tokens < 2) return 0;
    elements = std::max({s.hidden * s.q_out, s.hidden * s.kv_out, o, s.hidden * s.mlp_per_rank, down});
    bytes_per = dtype_bytes;
  }
  return static_cast<Bytes>(elements * bytes_per);
}

Bytes gguf_dequantized_bytes(std::int64_t values, std::int64_t out_rows, double batch_rows, double tp,
                             double dtype_bytes) {
  const double mmvq_safe = out_rows > 5120 ? 8 : 16;
  if (values <= 0 || batch_rows <= mmvq_safe) return 0;
  return static_cast<Bytes>(static_cast<double>(values) / std::max(1.0, tp) * dtype_bytes);
}

}  // namespace headroom::engine
