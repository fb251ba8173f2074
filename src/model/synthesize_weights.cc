// synthesize_weights: the tensor list a model's Hugging Face checkpoint would hold, built from its
// architecture when no safetensors headers are at hand. Names and shapes follow the HF layouts
// (the engine shards tensors by name); dtypes follow torch_dtype and the quantization config.
#include <re2/re2.h>

#include <algorithm>
#include <bit>
#include <memory>
#include <optional>

#include "model/model_internal.h"
#include "util/strings.h"

namespace headroom {

namespace {

using Shape = std::vector<std::int64_t>;

std::string dense_dtype(const ModelSpec& m) {
  if (m.torch_dtype == "float16" || m.torch_dtype == "half") return "F16";
  if (m.torch_dtype == "float32" || m.torch_dtype == "float") return "F32";
  return "BF16";  // bfloat16, or not written (gpt-oss): current checkpoints are bf16
}

enum class Scheme { none, fp8, int8, gptq4, awq4, packed4, nvfp4, bnb4, mxfp4 };

Scheme scheme_of(const QuantizationConfig& q) {
  const std::string& m = q.method;
  if (m == "mxfp4") return Scheme::mxfp4;
  if (m == "fp8" || m == "fbgemm_fp8") return Scheme::fp8;
  if (m == "gptq" || m == "gptq_marlin") return q.bits == 8 ? Scheme::int8 : Scheme::gptq4;
  if (m == "awq" || m == "awq_marlin") return Scheme::awq4;
  if (m == "bitsandbytes") return q.bits == 8 ? Scheme::int8 : Scheme::bnb4;
  if (m == "modelopt" || m == "modelopt_fp4") return q.bits == 4 ? Scheme::nvfp4 : Scheme::fp8;
  if (m == "compressed-tensors") {
    if (q.format.find("float") != std::string::npos || q.format.find("fp8") != std::string::npos) return Scheme::fp8;
    if (q.format.find("nvfp4") != std::string::npos) return Scheme::nvfp4;
    if (q.bits == 4 || q.format == "pack-quantized") return Scheme::packed4;
    if (q.bits == 8) return Scheme::int8;
    return Scheme::fp8;
  }
  return Scheme::none;
}

// One entry of a quantization config's ignore list, compiled once: "re:<regex>" (compressed-
// tensors), a glob with "*" ("model.layers.*.self_attn"), or a module name.
class ModulePattern {
 public:
  explicit ModulePattern(const std::string& pattern) : m_plain(pattern) {
    std::string re;
    if (pattern.rfind("re:", 0) == 0) {
      re = pattern.substr(3);
    } else if (pattern.find('*') != std::string::npos) {
      re = "^" + model_detail::glob_to_regex(pattern);
    } else {
      return;
    }
    // RE2: the pattern comes from a checkpoint's config and runs in linear time whatever it is.
    RE2::Options options;
    options.set_log_errors(false);
    m_regex = std::make_shared<const RE2>(re, options);
    if (!m_regex->ok()) m_invalid = true;  // an ignore entry that is no valid regex ignores nothing
  }

  bool matches(const std::string& name) const {
    if (m_invalid) return false;
    if (m_regex) return RE2::PartialMatch(name, *m_regex);
    // Whole dotted components only: "gate" (MiniMax-M2's fp8 router) names "mlp.gate" but not
    // "mlp.experts.gate_proj" (vLLM quantization/utils/quant_utils.py is_layer_skipped compares
    // module names, v0.16).
    return component_match(name, m_plain);
  }

  // `plain` as whole dotted components of `name`: the name itself, its start, its end or its middle.
  static bool component_match(std::string_view name, std::string_view plain) {
    if (plain.empty()) return false;
    for (std::size_t at = name.find(plain); at != std::string_view::npos; at = name.find(plain, at + 1)) {
      const std::size_t end = at + plain.size();
      if ((at == 0 || name[at - 1] == '.') && (end == name.size() || name[end] == '.')) return true;
    }
    return false;
  }

 private:
  std::string m_plain;
  std::shared_ptr<const RE2> m_regex;
  bool m_invalid = false;
};

class Builder {
 public:
  explicit Builder(const ModelSpec& m) : m_model(m), m_dtype(dense_dtype(m)) {
    if (m.quantization) m_scheme = scheme_of(*m.quantization);
    if (m.quantization && m.quantization->raw.is_object()) {
      auto b = m.quantization->raw.find("weight_block_size");
      if (b != m.quantization->raw.end() && b->is_array() && b->size() == 2) m_block = {(*b)[0].get<int>(), (*b)[1].get<int>()};
    }
    m_group = m.quantization && m.quantization->group_size > 0 ? m.quantization->group_size : 128;
    // Room for a layer's usual tensors (up to 16 with a quantized layout's scales), so the list is
    // not copied as it grows; the layer count was range-checked where the config was read.
    m_inv.tensors.reserve(static_cast<std::size_t>(std::clamp(m.num_layers, 0, 4096)) * 16 + 16);
    if (m.quantization)
      for (const auto& p : m.quantization->ignored_modules) {
        m_ignore.emplace_back(p);
        // Multimodal checkpoints saved by transformers 4.52+ name the text model
        // "model.language_model.*" (their ignore lists too); the names synthesised here keep the
        // older "language_model.model.*" layout.
        for (const auto& [from, to] : {std::pair<std::string_view, std::string_view>{"model.language_model.", "language_model.model."},
                                       {"model\\.language_model\\.", "language_model\\.model\\."}})
          if (const auto at = p.find(from); at != std::string::npos)
            m_ignore.emplace_back(std::string(p).replace(at, from.size(), to));
      }
  }

  const std::string& dtype() const { return m_dtype; }

  void add(const std::string& name, const std::string& dtype, Shape shape) {
    TensorInfo t{name, dtype, std::move(shape), 0};
    std::int64_t n = 1;
    for (auto d : t.shape) n *= d;
    t.bytes = n * dtype_bytes(dtype);
    m_inv.total_bytes += t.bytes;
    m_inv.tensors.push_back(std::move(t));
  }
  void dense(const std::string& name, Shape shape) { add(name, m_dtype, std::move(shape)); }

  // `count` identical linear layers stored as one stacked tensor per parameter ([count, ...]):
  // routed experts. Bytes and sharding are those of the separate tensors, at a fraction of the
  // tensor count (DeepSeek-V3 has 58 × 256 experts).
  void stacked_linear(const std::string& prefix, std::int64_t count, std::int64_t out, std::int64_t in) {
    if (count <= 0) return;  // MoE layers whose config names no experts hold none
    std::size_t first = m_inv.tensors.size();
    linear(prefix, out, in);
    for (std::size_t i = first; i < m_inv.tensors.size(); ++i) {
      TensorInfo& t = m_inv.tensors[i];
      m_inv.total_bytes += t.bytes * (count - 1);
      t.bytes *= count;
      t.shape.insert(t.shape.begin(), count);
    }
  }

  // `count` MXFP4 linear layers stacked: two e2m1 values per byte and one e8m0 scale per 32
  // values (DeepSeek-V4's routed experts, expert_dtype "fp4").
  void stacked_mxfp4(const std::string& prefix, std::int64_t count, std::int64_t out, std::int64_t in) {
    if (count <= 0) return;
    add(prefix + ".weight", "U8", {count, out, ceil_div(in, 2)});
    add(prefix + ".scale", "U8", {count, out, ceil_div(in, 32)});
  }

  // A linear layer's weight [out, in] under `prefix` (no ".weight"), quantized per the scheme
  // unless the module is in the ignore list. Biases are added by the caller.
  void linear(const std::string& prefix, std::int64_t out, std::int64_t in) {
    Scheme s = m_scheme;
    if (s == Scheme::mxfp4 || ignored(prefix)) s = Scheme::none;  // mxfp4 covers only experts
    const std::int64_t g = m_group;
    switch (s) {
      case Scheme::none: dense(prefix + ".weight", {out, in}); break;
      case Scheme::fp8:
        add(prefix + ".weight", "F8_E4M3", {out, in});
        if (m_block) add(prefix + ".weight_scale_inv", "F32", {ceil_div(out, m_block->first), ceil_div(in, m_block->second)});
        else if (m_model.quantization->method == "compressed-tensors") add(prefix + ".weight_scale", "F32", {out, 1});
        else {
          add(prefix + ".weight_scale", "F32", {});
          add(prefix + ".input_scale", "F32", {});
        }
        break;
      case Scheme::int8:
        add(prefix + ".weight", "I8", {out, in});
        add(prefix + ".weight_scale", "F32", {out, 1});
        break;
      case Scheme::gptq4:
        add(prefix + ".qweight", "I32", {ceil_div(in, 8), out});
        add(prefix + ".qzeros", "I32", {ceil_div(in, g), ceil_div(out, 8)});
        add(prefix + ".scales", "F16", {ceil_div(in, g), out});
        add(prefix + ".g_idx", "I32", {in});
        break;
      case Scheme::awq4:
        add(prefix + ".qweight", "I32", {in, ceil_div(out, 8)});
        add(prefix + ".qzeros", "I32", {ceil_div(in, g), ceil_div(out, 8)});
        add(prefix + ".scales", "F16", {ceil_div(in, g), out});
        break;
      case Scheme::packed4:
        add(prefix + ".weight_packed", "I32", {out, ceil_div(in, 8)});
        add(prefix + ".weight_scale", "BF16", {out, ceil_div(in, g)});
        add(prefix + ".weight_shape", "I64", {2});
        break;
      case Scheme::nvfp4:
        add(prefix + ".weight", "U8", {out, ceil_div(in, 2)});
        add(prefix + ".weight_scale", "F8_E4M3", {out, ceil_div(in, 16)});
        add(prefix + ".weight_scale_2", "F32", {});
        add(prefix + ".input_scale", "F32", {});
        break;
      case Scheme::bnb4:
        add(prefix + ".weight", "U8", {ceil_div(out * in, 2), 1});
        add(prefix + ".weight.absmax", "F32", {ceil_div(out * in, 64)});
        break;
      case Scheme::mxfp4: break;
    }
  }

  bool mxfp4() const { return m_scheme == Scheme::mxfp4; }
  bool nvfp4() const { return m_scheme == Scheme::nvfp4; }
  WeightsInventory take() {
    m_inv.exact = false;
    m_inv.file_count = 0;
    return std::move(m_inv);
  }

 private:
  bool ignored(const std::string& prefix) const {
    if (!m_model.quantization) return true;
    for (const auto& p : m_ignore)
      if (p.matches(prefix)) return true;
    return false;
  }

  const ModelSpec& m_model;
  std::string m_dtype;
  Scheme m_scheme = Scheme::none;
  std::optional<std::pair<int, int>> m_block;
  std::int64_t m_group = 128;
  std::vector<ModulePattern> m_ignore;
  WeightsInventory m_inv;
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// `kind`: the layer's kind, for models whose full-attention or sliding layers have their own
// shape. Gemma 4's full-attention layers (gemma4.py Gemma4DecoderLayer) take global_head_dim and,
// with attention_k_eq_v, num_global_key_value_heads; their QKVParallelLinear keeps a V slot even
// then, filled with K's weights, so V is counted as loaded. MiMo-V2-Flash's sliding layers
// (mimo_v2_flash.py MiMoV2FlashDecoderLayer) take swa_num_key_value_heads, swa_head_dim and
// swa_v_head_dim; V and the o_proj input are v_head_dim wide (QKVParallelLinear v_head_size).
void add_attention(Builder& b, const ModelSpec& m, const std::string& p, bool cross, LayerKind kind = LayerKind::full_attention) {
  const std::optional<AttentionShape>& own = kind == LayerKind::full_attention      ? m.full_attention_shape
                                             : kind == LayerKind::sliding_attention ? m.sliding_attention_shape
                                                                                    : std::nullopt;
  const bool shaped = !cross && own && own->head_dim > 0;
  const std::int64_t H = m.hidden_size, hd = shaped ? own->head_dim : m.head_dim, nq = m.num_attention_heads,
                     nkv = shaped && own->num_kv_heads > 0 ? own->num_kv_heads : m.num_kv_heads;
  const std::int64_t vd = shaped ? (own->v_head_dim > 0 ? own->v_head_dim : hd) : (m.v_head_dim > 0 && !m.mla ? m.v_head_dim : hd);
  const std::string& t = m.model_type;
  std::string a = p + (cross ? "cross_attn." : "self_attn.");
  if (m.mla) {
    const auto& x = *m.mla;
    std::int64_t qk = x.qk_nope_head_dim + x.qk_rope_head_dim;
    if (x.q_lora_rank > 0) {
      b.linear(a + "q_a_proj", x.q_lora_rank, H);
      b.dense(a + "q_a_layernorm.weight", {x.q_lora_rank});
      b.linear(a + "q_b_proj", nq * qk, x.q_lora_rank);
    } else {
      b.linear(a + "q_proj", nq * qk, H);
    }
    b.linear(a + "kv_a_proj_with_mqa", x.kv_lora_rank + x.qk_rope_head_dim, H);
    b.dense(a + "kv_a_layernorm.weight", {x.kv_lora_rank});
    b.linear(a + "kv_b_proj", nq * (x.qk_nope_head_dim + x.v_head_dim), x.kv_lora_rank);
    b.linear(a + "o_proj", H, nq * x.v_head_dim);
    return;
  }
  if (t == "phi3") {
    b.linear(a + "qkv_proj", (nq + 2 * nkv) * hd, H);
  } else {
    // Qwen3-Next full-attention layers compute a gate alongside Q (q_proj is twice as wide).
    b.linear(a + "q_proj", nq * hd * (t == "qwen3_next" ? 2 : 1), H);
    b.linear(a + "k_proj", nkv * hd, H);
    b.linear(a + "v_proj", nkv * vd, H);
  }
  b.linear(a + "o_proj", H, nq * vd);
  bool qkv_bias = starts_with(t, "qwen2") || t == "gpt_oss" || t == "opt" || t == "phi";
  if (qkv_bias) {
    b.dense(a + "q_proj.bias", {nq * hd});
    b.dense(a + "k_proj.bias", {nkv * hd});
    b.dense(a + "v_proj.bias", {nkv * vd});
  }
  if (t == "gpt_oss" || t == "opt" || t == "phi") b.dense(a + "o_proj.bias", {H});
  if (t == "gpt_oss") b.dense(a + "sinks", {nq});
  if (starts_with(t, "qwen3") || starts_with(t, "gemma3") || cross) {
    b.dense(a + "q_norm.weight", {hd});
    b.dense(a + "k_norm.weight", {hd});
  }
  if (t == "olmo2") {
    b.dense(a + "q_norm.weight", {nq * hd});
    b.dense(a + "k_norm.weight", {nkv * hd});
  }
}

void add_gated_mlp(Builder& b, const std::string& p, std::int64_t H, std::int64_t I) {
  b.linear(p + "gate_proj", I, H);
  b.linear(p + "up_proj", I, H);
  b.linear(p + "down_proj", H, I);
}

// Nemotron-3 LatentMoE (vllm/model_executor/models/nemotron_h.py): routed experts work in a
// moe_latent_size space between fc1/fc2 latent projections. The field is read from the config as
// written (config.json, text_config, or the catalogue line's moe summary).
std::int64_t moe_latent_size(const ModelSpec& m) {
  for (const nlohmann::json* j : {&m.raw_config, m.raw_config.contains("text_config") ? &m.raw_config["text_config"] : nullptr,
                                  m.raw_config.contains("moe") ? &m.raw_config["moe"] : nullptr}) {
    if (!j || !j->is_object()) continue;
    auto it = j->find("moe_latent_size");
    if (it != j->end() && it->is_number_integer() && it->get<std::int64_t>() > 0) return it->get<std::int64_t>();
  }
  return 0;
}

void add_moe(Builder& b, const ModelSpec& m, const std::string& p) {
  const auto& x = *m.moe;
  const std::int64_t E = x.num_experts, I = x.moe_intermediate_size;
  const std::int64_t latent = moe_latent_size(m);
  const std::int64_t H = latent > 0 ? latent : m.hidden_size;  // width the routed experts see
  const std::string& t = m.model_type;
  if (t == "gpt_oss") {
    b.dense(p + "mlp.router.weight", {E, H});
    b.dense(p + "mlp.router.bias", {E});
    std::string e = p + "mlp.experts.";
    if (b.mxfp4()) {
      // MXFP4: two 4-bit values per byte, one E8M0 scale per 32 values.
      b.add(e + "gate_up_proj_blocks", "U8", {E, 2 * I, H / 32, 16});
      b.add(e + "gate_up_proj_scales", "U8", {E, 2 * I, H / 32});
      b.add(e + "down_proj_blocks", "U8", {E, H, I / 32, 16});
      b.add(e + "down_proj_scales", "U8", {E, H, I / 32});
    } else {
      b.dense(e + "gate_up_proj", {E, H, 2 * I});
      b.dense(e + "down_proj", {E, I, H});
    }
    b.dense(e + "gate_up_proj_bias", {E, 2 * I});
    b.dense(e + "down_proj_bias", {E, H});
    return;
  }
  if (starts_with(t, "llama4")) {
    std::string f = p + "feed_forward.";
    b.dense(f + "router.weight", {E, H});
    b.dense(f + "experts.gate_up_proj", {E, H, 2 * I});
    b.dense(f + "experts.down_proj", {E, I, H});
    add_gated_mlp(b, f + "shared_expert.", H, I);
    return;
  }
  if (t == "mixtral") {
    std::string f = p + "block_sparse_moe.";
    b.dense(f + "gate.weight", {E, H});
    b.stacked_linear(f + "experts.w1", E, I, H);
    b.stacked_linear(f + "experts.w2", E, H, I);
    b.stacked_linear(f + "experts.w3", E, I, H);
    return;
  }
  if (x.dense_mlp_in_every_layer && starts_with(t, "gemma4")) {
    // Gemma 4 MoE layers (gemma4.py; transformers' Gemma4TextDecoderLayer): the router and the
    // experts sit beside the dense "mlp", not inside it, which ModelOpt's ignore lists rely on
    // ("layers.0.mlp*" keeps the dense MLP 16-bit, not the experts).
    b.dense(p + "router.weight", {E, H});  // replicated and 16-bit, as routers are
    b.stacked_linear(p + "experts.gate_proj", E, I, H);
    b.stacked_linear(p + "experts.up_proj", E, I, H);
    b.stacked_linear(p + "experts.down_proj", E, H, I);
    return;
  }
  bool nemotron = t == "nemotron_h";
  std::string f = p + (nemotron ? "mixer." : "mlp.");
  b.dense(f + "gate.weight", {E, m.hidden_size});
  if (latent > 0) {
    b.linear(f + "fc1_latent_proj", latent, m.hidden_size);
    b.linear(f + "fc2_latent_proj", m.hidden_size, latent);
  }
  if (t == "deepseek_v3" || t == "kimi_k2" || nemotron) b.add(f + "gate.e_score_correction_bias", "F32", {E});
  const std::string ep = f + "experts.";
  if (x.routed_experts_fp4 && !b.nvfp4()) {
    // DeepSeek-V4: MXFP4 routed experts (not re-encoded to fp8 unless VLLM_DSV4_FP4_DEQUANT=1).
    b.stacked_mxfp4(ep + "w1", E, I, H);
    b.stacked_mxfp4(ep + "w3", E, I, H);
    b.stacked_mxfp4(ep + "w2", E, H, I);
  } else {
    if (!nemotron) b.stacked_linear(ep + "gate_proj", E, I, H);  // squared-ReLU experts have no gate
    b.stacked_linear(ep + "up_proj", E, I, H);
    b.stacked_linear(ep + "down_proj", E, H, I);
  }
  if (x.shared_expert_intermediate_size > 0 && !nemotron) {
    add_gated_mlp(b, f + "shared_expert.", H, x.shared_expert_intermediate_size);
    b.dense(f + "shared_expert_gate.weight", {1, H});
  } else if (x.num_shared_experts > 0) {
    std::int64_t w = x.shared_expert_intermediate_size > 0 ? x.shared_expert_intermediate_size
                                                          : static_cast<std::int64_t>(x.num_shared_experts) * I;
    const std::int64_t hidden = m.hidden_size;
    if (nemotron) {
      b.linear(f + "shared_experts.up_proj", w, hidden);
      b.linear(f + "shared_experts.down_proj", hidden, w);
    } else {
      add_gated_mlp(b, f + "shared_experts.", hidden, w);
    }
  }
}

void add_mamba(Builder& b, const ModelSpec& m, const std::string& p) {
  const auto& h = *m.hybrid;
  const std::int64_t H = m.hidden_size, I = h.mamba_intermediate_size, G = h.n_groups, N = h.ssm_state_size,
                     heads = h.mamba_num_heads > 0 ? h.mamba_num_heads : I / std::max(1, h.mamba_head_dim);
  const std::int64_t conv_dim = I + 2 * G * N;
  b.linear(p + "in_proj", I + conv_dim + heads, H);
  b.dense(p + "conv1d.weight", {conv_dim, 1, std::max(1, h.conv_kernel)});
  b.dense(p + "conv1d.bias", {conv_dim});
  b.add(p + "A_log", "F32", {heads});
  b.add(p + "D", "F32", {heads});
  b.add(p + "dt_bias", "F32", {heads});
  b.dense(p + "norm.weight", {I});
  b.linear(p + "out_proj", H, I);
}

// LFM2's ShortConv (short_conv.py): in_proj from the width to 3 × conv_dim (B, C and x), the
// depthwise kernel as a [conv_dim, conv_L_cache] linear, out_proj back; biased with conv_bias.
void add_short_conv(Builder& b, const ModelSpec& m, const std::string& p) {
  const auto& h = *m.hybrid;
  const std::int64_t H = m.hidden_size, D = h.mamba_intermediate_size;
  b.linear(p + "in_proj", 3 * D, H);
  b.dense(p + "conv.weight", {D, 1, std::max(1, h.conv_kernel)});
  b.linear(p + "out_proj", H, D);
  if (h.conv_bias) {
    b.dense(p + "in_proj.bias", {3 * D});
    b.dense(p + "conv.bias", {D});
    b.dense(p + "out_proj.bias", {H});
  }
}

void add_gated_deltanet(Builder& b, const ModelSpec& m, const std::string& p) {
  const auto& h = *m.hybrid;
  const std::int64_t H = m.hidden_size, hk = h.linear_num_key_heads, hv = h.linear_num_value_heads,
                     dk = h.linear_key_head_dim, dv = h.linear_value_head_dim;
  b.linear(p + "in_proj_qkvz", 2 * hk * dk + 2 * hv * dv, H);
  b.linear(p + "in_proj_ba", 2 * hv, H);
  b.dense(p + "conv1d.weight", {2 * hk * dk + hv * dv, 1, std::max(1, h.linear_conv_kernel_dim)});
  b.dense(p + "dt_bias", {hv});
  b.add(p + "A_log", "F32", {hv});
  b.dense(p + "norm.weight", {dv});
  b.linear(p + "out_proj", H, hv * dv);
}

// The vision towers vLLM builds, by family (model_executor/models/*.py): each family's block
// layout, gated or plain MLP, and the projector into the language model.
enum class VisionFamily { generic, qwen2_vl, qwen2_5_vl, qwen3_vl, dots, moonvit, pixtral, llama4, gemma3, clip, internvl, phi3v, mllama, glm4v, aya, minicpmv, idefics3, paddleocr, ovis };

VisionFamily vision_family(const ModelSpec& m) {
  const std::string& vt = m.vision->model_type;
  const std::string& a = m.architecture;
  auto has = [](const std::string& s, const char* part) { return s.find(part) != std::string::npos; };
  if (has(a, "Phi3VForCausalLM")) return VisionFamily::phi3v;
  if (a == "Ovis2_5") return VisionFamily::ovis;
  if (has(a, "Mllama") || vt == "mllama_vision_model") return VisionFamily::mllama;
  if (a.starts_with("Glm4v") || vt.starts_with("glm4v")) return VisionFamily::glm4v;
  if (has(a, "Qwen2VL") || vt == "qwen2_vl") return VisionFamily::qwen2_vl;
  if (has(a, "Qwen2_5_VL") || has(a, "Qwen2_5Omni") || vt == "qwen2_5_vl" || vt.starts_with("qwen2_5_omni"))
    return VisionFamily::qwen2_5_vl;
  // Qwen3-Omni's thinker has Qwen3-VL's tower (deepstack mergers included).
  if (has(a, "Qwen3VL") || has(a, "Qwen3_5") || has(a, "Qwen3Omni") || vt.starts_with("qwen3_vl") || vt.starts_with("qwen3_5") ||
      vt.starts_with("qwen3_omni"))
    return VisionFamily::qwen3_vl;
  if (has(a, "DotsOCR") || vt == "dots_vit") return VisionFamily::dots;
  if (has(a, "KimiVL") || has(a, "KimiK25") || vt == "moonvit") return VisionFamily::moonvit;
  if (has(a, "Mistral3") || has(a, "Pixtral") || vt == "pixtral") return VisionFamily::pixtral;
  if (has(a, "Llama4") || vt == "llama4_vision_model") return VisionFamily::llama4;
  if (has(a, "Gemma3ForConditionalGeneration")) return VisionFamily::gemma3;
  if (has(a, "AyaVision")) return VisionFamily::aya;
  if (a.starts_with("Idefics3") || a.starts_with("SmolVLM")) return VisionFamily::idefics3;
  if (has(a, "PaddleOCRVL")) return VisionFamily::paddleocr;
  if (a == "MiniCPMV" || a == "MiniCPMO" || m.vision->resampler_queries > 0) return VisionFamily::minicpmv;
  if (has(a, "Llava") || vt == "clip_vision_model") return VisionFamily::clip;
  // The transformers layout (interns1.py: InternS1VisionModel, multi_modal_projector) has the same
  // shapes under other names: q/k/v apart (3 h² in all), layer scales lambda_1/lambda_2, and the
  // projector's layer_norm, linear_1, linear_2.
  if (has(a, "InternVLChatModel") || vt == "intern_vit_6b" || has(a, "InternVLForConditionalGeneration") ||
      has(a, "InternS1ForConditionalGeneration") || vt == "internvl_vision" || vt == "interns1_vision")
    return VisionFamily::internvl;
  return VisionFamily::generic;
}

void linear_bias(Builder& b, const std::string& name, std::int64_t out, std::int64_t in, bool bias = true) {
  b.dense(name + ".weight", {out, in});
  if (bias) b.dense(name + ".bias", {out});
}

void layer_norm(Builder& b, const std::string& name, std::int64_t width, bool bias = true) {
  b.dense(name + ".weight", {width});
  if (bias) b.dense(name + ".bias", {width});
}

// A pre-norm encoder block with biased q/k/v/o projections, a plain fc1/fc2 MLP and two
// LayerNorms (siglip.py, clip.py, mllama4.py); the families differ only in the names.
struct PlainBlockNames {
  const char* attention;  // "self_attn"
  const char* out;        // "out_proj" (SigLIP, CLIP) or "o_proj" (Llama 4)
  const char* norm1;
  const char* norm2;
};

void plain_block(Builder& b, const std::string& l, const PlainBlockNames& n, std::int64_t h, std::int64_t I) {
  for (const char* proj : {"q_proj", "k_proj", "v_proj", n.out}) linear_bias(b, l + n.attention + "." + proj, h, h);
  linear_bias(b, l + "mlp.fc1", I, h);
  linear_bias(b, l + "mlp.fc2", h, I);
  layer_norm(b, l + n.norm1, h);
  layer_norm(b, l + n.norm2, h);
}

// Qwen3-VL's patch merger: a norm (over the tower width, or over the merged width after the
// shuffle), then merged → merged → out, where merged = merge² × width.
void patch_merger(Builder& b, const std::string& p, std::int64_t merged, std::int64_t out, std::int64_t norm_width) {
  layer_norm(b, p + "norm", norm_width);
  linear_bias(b, p + "linear_fc1", merged, merged);
  linear_bias(b, p + "linear_fc2", out, merged);
}

// The tower's sizes with the defaults of its family's code: width h, MLP width I, patch, the
// language model's width H, the merge and what the merger hands on.
struct VisionDims {
  std::int64_t h, I, patch, H, merge, merged, out;
};

VisionDims vision_dims(const ModelSpec& m) {
  const auto& v = *m.vision;
  VisionDims d{};
  d.h = v.hidden_size;
  d.I = v.intermediate_size > 0 ? v.intermediate_size : 4 * d.h;
  d.patch = v.patch_size > 0 ? v.patch_size : 14;
  d.H = m.hidden_size;
  d.merge = v.spatial_merge_size > 0 ? v.spatial_merge_size : 2;
  d.merged = d.h * d.merge * d.merge;
  d.out = v.out_hidden_size > 0 ? v.out_hidden_size : d.H;
  return d;
}

void add_qwen_vision(Builder& b, const ModelSpec& m, VisionFamily family) {
  [[maybe_unused]] const auto& v = *m.vision;
  [[maybe_unused]] const auto [h, I, patch, H, merge, merged, out] = vision_dims(m);
  // qwen2_vl.py / qwen2_5_vl.py / qwen3_vl.py / dots_ocr.py: fused qkv; Qwen2-VL and Qwen3-VL
  // have a plain fc1/fc2 MLP, Qwen2.5-VL and dots.ocr a gated one (SwiGLU).
  const bool qwen3 = family == VisionFamily::qwen3_vl, dots = family == VisionFamily::dots;
  const bool gated = family == VisionFamily::qwen2_5_vl || dots;
  const std::string p = dots ? "vision_tower." : "visual.";
  const std::int64_t temporal = dots ? 1 : (v.temporal_patch_size > 0 ? v.temporal_patch_size : 2);
  b.dense(p + "patch_embed.proj.weight", {h, 3, temporal, patch, patch});
  if (qwen3 || dots) b.dense(p + "patch_embed.proj.bias", {h});
  if (qwen3 && v.num_position_embeddings > 0) b.dense(p + "pos_embed.weight", {v.num_position_embeddings, h});
  for (int i = 0; i < v.depth; ++i) {
    const std::string l = p + "blocks." + std::to_string(i) + ".";
    const bool bias = !dots;
    linear_bias(b, l + "attn.qkv", 3 * h, h, bias);
    linear_bias(b, l + "attn.proj", h, h, bias);
    if (gated) {
      linear_bias(b, l + (dots ? "mlp.fc1" : "mlp.gate_proj"), I, h, bias);
      linear_bias(b, l + (dots ? "mlp.fc3" : "mlp.up_proj"), I, h, bias);
      linear_bias(b, l + (dots ? "mlp.fc2" : "mlp.down_proj"), h, I, bias);
    } else {
      linear_bias(b, l + (qwen3 ? "mlp.linear_fc1" : "mlp.fc1"), I, h);
      linear_bias(b, l + (qwen3 ? "mlp.linear_fc2" : "mlp.fc2"), h, I);
    }
    // LayerNorm (weight and bias) in Qwen2-VL and Qwen3-VL, RMSNorm in Qwen2.5-VL and dots.ocr.
    layer_norm(b, l + "norm1", h, !gated);
    layer_norm(b, l + "norm2", h, !gated);
  }
  if (qwen3) {
    patch_merger(b, p + "merger.", merged, out, h);
    // Deepstack mergers normalise after the shuffle (use_postshuffle_norm).
    for (int i = 0; i < v.deepstack_layers; ++i)
      patch_merger(b, p + "deepstack_merger_list." + std::to_string(i) + ".", merged, out, merged);
  } else {
    b.dense(p + "merger.ln_q.weight", {h});
    if (!gated) b.dense(p + "merger.ln_q.bias", {h});
    linear_bias(b, p + "merger.mlp.0", merged, merged);
    linear_bias(b, p + "merger.mlp.2", out, merged);
  }
}

void add_moonvit(Builder& b, const ModelSpec& m) {
  [[maybe_unused]] const auto& v = *m.vision;
  [[maybe_unused]] const auto [h, I, patch, H, merge, merged, out] = vision_dims(m);
  // moonvit.py: a learned 2-D position table (64 × 64 per the configs), fused wqkv, fc0/fc1;
  // kimi_vl.py's projector: LayerNorm, merged → merged, merged → text hidden size.
  const std::string p = "vision_tower.";
  b.dense(p + "patch_embed.proj.weight", {h, 3, patch, patch});
  b.dense(p + "patch_embed.proj.bias", {h});
  b.dense(p + "patch_embed.pos_emb.weight", {64, 64, h});
  for (int i = 0; i < v.depth; ++i) {
    const std::string l = p + "encoder.blocks." + std::to_string(i) + ".";
    layer_norm(b, l + "norm0", h);
    layer_norm(b, l + "norm1", h);
    linear_bias(b, l + "wqkv", 3 * h, h);
    linear_bias(b, l + "wo", h, h);
    linear_bias(b, l + "mlp.fc0", I, h);
    linear_bias(b, l + "mlp.fc1", h, I);
  }
  layer_norm(b, p + "encoder.final_layernorm", h);
  layer_norm(b, "multi_modal_projector.pre_norm", h);
  linear_bias(b, "multi_modal_projector.linear_1", merged, merged);
  linear_bias(b, "multi_modal_projector.linear_2", H, merged);
}

void add_pixtral_vision(Builder& b, const ModelSpec& m) {
  [[maybe_unused]] const auto& v = *m.vision;
  [[maybe_unused]] const auto [h, I, patch, H, merge, merged, out] = vision_dims(m);
  // pixtral.py (PixtralHFVisionModel): no biases, RMSNorms, gated feed-forward; mistral3.py's
  // projector: RMSNorm, the patch merger (merge² × h → h), then h → H → H.
  const std::string p = "vision_tower.";
  b.dense(p + "patch_conv.weight", {h, 3, patch, patch});
  b.dense(p + "ln_pre.weight", {h});
  for (int i = 0; i < v.depth; ++i) {
    const std::string l = p + "transformer.layers." + std::to_string(i) + ".";
    for (const char* n : {"q_proj", "k_proj", "v_proj", "o_proj"}) linear_bias(b, l + "attention." + n, h, h, false);
    linear_bias(b, l + "feed_forward.gate_proj", I, h, false);
    linear_bias(b, l + "feed_forward.up_proj", I, h, false);
    linear_bias(b, l + "feed_forward.down_proj", h, I, false);
    b.dense(l + "attention_norm.weight", {h});
    b.dense(l + "ffn_norm.weight", {h});
  }
  b.dense("multi_modal_projector.norm.weight", {h});
  linear_bias(b, "multi_modal_projector.patch_merger.merging_layer", h, merged, false);
  linear_bias(b, "multi_modal_projector.linear_1", H, h, false);
  linear_bias(b, "multi_modal_projector.linear_2", H, H, false);
}

void add_llama4_vision(Builder& b, const ModelSpec& m) {
  [[maybe_unused]] const auto& v = *m.vision;
  [[maybe_unused]] const auto [h, I, patch, H, merge, merged, out] = vision_dims(m);
  // mllama4.py: a linear patch embedding, class token and position table, LayerNorm blocks
  // with biased q/k/v/o and fc1/fc2, the pixel-shuffle adapter (h / ratio² → projector input
  // → projector output) and a linear projector into the language model.
  const std::string p = "vision_model.";
  const std::int64_t side = v.image_size > 0 ? v.image_size / patch : 24;
  b.dense(p + "patch_embedding.linear.weight", {h, 3 * patch * patch});
  b.dense(p + "class_embedding", {h});
  b.dense(p + "positional_embedding_vlm", {side * side + 1, h});
  layer_norm(b, p + "layernorm_pre", h);
  layer_norm(b, p + "layernorm_post", h);
  for (int i = 0; i < v.depth; ++i)
    plain_block(b, p + "model.layers." + std::to_string(i) + ".",
                {"self_attn", "o_proj", "input_layernorm", "post_attention_layernorm"}, h, I);
  const double ratio = v.pixel_shuffle_ratio > 0 ? v.pixel_shuffle_ratio : 0.5;
  const auto shuffled = static_cast<std::int64_t>(static_cast<double>(h) / (ratio * ratio));
  const std::int64_t pin = v.projector_input_dim > 0 ? v.projector_input_dim : 4096,
                     pout = v.projector_output_dim > 0 ? v.projector_output_dim : pin;
  linear_bias(b, p + "vision_adapter.mlp.fc1", pin, shuffled, false);
  linear_bias(b, p + "vision_adapter.mlp.fc2", pout, pin, false);
  linear_bias(b, "multi_modal_projector.linear_1", H, out, false);
}

void add_siglip_vision(Builder& b, const ModelSpec& m, VisionFamily family) {
  [[maybe_unused]] const auto& v = *m.vision;
  [[maybe_unused]] const auto [h, I, patch, H, merge, merged, out] = vision_dims(m);
  // SigLIP / CLIP encoders (siglip.py, clip.py): biased q/k/v/out and fc1/fc2, LayerNorms.
  const std::string p = "vision_tower.";
  b.dense(p + "vision_model.embeddings.patch_embedding.weight", {h, 3, patch, patch});
  b.dense(p + "vision_model.embeddings.patch_embedding.bias", {h});
  // CLIP has a class token and its position; SigLIP (also under LLaVA-OneVision) has neither.
  const bool class_token = family == VisionFamily::clip && v.model_type != "siglip_vision_model";
  if (class_token) b.dense(p + "vision_model.embeddings.class_embedding", {h});
  if (v.image_size > 0) {
    std::int64_t n = (v.image_size / patch) * (v.image_size / patch) + (class_token ? 1 : 0);
    b.dense(p + "vision_model.embeddings.position_embedding.weight", {n, h});
  }
  for (int i = 0; i < v.depth; ++i)
    plain_block(b, p + "vision_model.encoder.layers." + std::to_string(i) + ".",
                {"self_attn", "out_proj", "layer_norm1", "layer_norm2"}, h, I);
  layer_norm(b, p + "vision_model.post_layernorm", h);
  if (family == VisionFamily::gemma3) {
    // gemma3_mm.py: one projection matrix and a soft-embedding RMSNorm.
    b.dense("multi_modal_projector.mm_input_projection_weight", {h, H});
    b.dense("multi_modal_projector.mm_soft_emb_norm.weight", {h});
  } else if (family == VisionFamily::aya) {
    // aya_vision.py AyaVisionMultiModalProjector: a LayerNorm over the pixel-shuffled width
    // (h × factor²), linear_1 into alignment_intermediate_size, SwiGLU halving it, linear_2 into
    // the language model; both linears biased. Defaults: aya-vision-8b's config (factor 2, 28,672).
    const double ratio = v.pixel_shuffle_ratio > 0 ? v.pixel_shuffle_ratio : 0.5;
    const auto shuffled = static_cast<std::int64_t>(std::llround(static_cast<double>(h) / (ratio * ratio)));
    const std::int64_t width = v.projector_intermediate_size > 0 ? v.projector_intermediate_size : 28672;
    layer_norm(b, "multi_modal_projector.layernorm", shuffled);
    linear_bias(b, "multi_modal_projector.linear_1", width, shuffled);
    linear_bias(b, "multi_modal_projector.linear_2", H, width / 2);
  } else if (family == VisionFamily::minicpmv) {
    // resampler.py Resampler2_5 (MiniCPM-V 2.5 to 4.x): query_num learned queries of the language
    // model's width, kv_proj from the tower's width (no bias), torch's MultiheadAttention (in_proj
    // 3H x H and out_proj, both biased), LayerNorms on the queries, the keys and the output, and
    // the output projection H x H.
    const std::int64_t queries = v.resampler_queries > 0 ? v.resampler_queries : 64;
    b.dense("resampler.query", {queries, H});
    if (h != H) linear_bias(b, "resampler.kv_proj", H, h, false);
    b.dense("resampler.attn.in_proj_weight", {3 * H, H});
    b.dense("resampler.attn.in_proj_bias", {3 * H});
    linear_bias(b, "resampler.attn.out_proj", H, H);
    for (const char* norm : {"resampler.ln_q", "resampler.ln_kv", "resampler.ln_post"}) layer_norm(b, norm, H);
    b.dense("resampler.proj", {H, H});
  } else if (family == VisionFamily::idefics3) {
    // idefics3.py Idefics3SimpleMLP: one bias-free projection from the pixel-shuffled width
    // (h × scale_factor²) into the language model.
    const double ratio = v.pixel_shuffle_ratio > 0 ? v.pixel_shuffle_ratio : 0.5;
    b.dense("connector.modality_projection.proj.weight",
            {H, static_cast<std::int64_t>(std::llround(static_cast<double>(h) / (ratio * ratio)))});
  } else if (family == VisionFamily::paddleocr) {
    // paddleocr_vl.py Projector (mlp_AR): a LayerNorm over the tower's width, the 2 x 2 merge
    // (4h), linear_1 4h -> 4h and linear_2 4h -> the language model, both nn.Linear with biases.
    const std::int64_t merged4 = h * 4;
    layer_norm(b, "mlp_AR.pre_norm", h);
    linear_bias(b, "mlp_AR.linear_1", merged4, merged4);
    linear_bias(b, "mlp_AR.linear_2", H, merged4);
  } else if (family == VisionFamily::clip) {
    // llava.py: a two-layer MLP projector; LLaVA-NeXT and OneVision add the row-end embedding
    // (llava_next.py / llava_onevision.py image_newline), which LLaVA-NeXT-Video does not load
    // (llava_next_video.py: ignore_unexpected_prefixes=["image_newline"]).
    linear_bias(b, "multi_modal_projector.linear_1", H, h);
    linear_bias(b, "multi_modal_projector.linear_2", H, H);
    const bool next_video = m.architecture.find("LlavaNextVideo") != std::string::npos;
    if (!next_video && (m.architecture.find("LlavaNext") != std::string::npos ||
                        m.architecture.find("LlavaOnevision") != std::string::npos))
      b.dense("image_newline", {H});
  } else {
    b.dense("multi_modal_projector.linear.weight", {H, h});
  }
}

// Ovis2.5 (ovis2_5.py, siglip2navit.py): the SigLIP2-NaViT tower (the patch embedding a linear
// map of 3 × patch² pixels, the image_size / patch per side learned position table, plain biased
// blocks, post-LayerNorm), the visual tokenizer's head (a bias-free linear from hidden ×
// hidden_stride² to visual_vocab_size − 4, then a LayerNorm of that width) and the visual
// embedding table (visual_vocab_size × the language model's hidden size).
void add_ovis_vision(Builder& b, const ModelSpec& m) {
  [[maybe_unused]] const auto& v = *m.vision;
  [[maybe_unused]] const auto [h, I, patch, H, merge, merged, out] = vision_dims(m);
  const std::string p = "visual_tokenizer.vit.vision_model.";
  linear_bias(b, p + "embeddings.patch_embedding", h, 3 * patch * patch);
  if (v.image_size > 0) b.dense(p + "embeddings.position_embedding.weight", {(v.image_size / patch) * (v.image_size / patch), h});
  for (int i = 0; i < v.depth; ++i)
    plain_block(b, p + "encoder.layers." + std::to_string(i) + ".", {"self_attn", "out_proj", "layer_norm1", "layer_norm2"}, h, I);
  layer_norm(b, p + "post_layernorm", h);
  const std::int64_t vocab = v.visual_vocab_size > 4 ? v.visual_vocab_size : 65536, stride = v.spatial_merge_size > 0 ? v.spatial_merge_size : 2;
  b.dense("visual_tokenizer.head.0.weight", {vocab - 4, h * stride * stride});
  layer_norm(b, "visual_tokenizer.head.1", vocab - 4);
  b.dense("vte.weight", {vocab, H});
}

// mllama.py MllamaVisionModel: a bias-free linear patch embedding, the class token, the gated
// position table with its per-aspect-ratio tile table (aspect ratio ids x tiles x (patches + 1) x
// width), gated pre- and post-tile tables, LayerNorms before and after, the local encoder and
// the gated global one (fused qkv and o_proj without biases, CLIP's fc1/fc2 with them), and
// MllamaForConditionalGeneration's projector from vision_output_dim into the language model.
void add_mllama_vision(Builder& b, const ModelSpec& m) {
  [[maybe_unused]] const auto& v = *m.vision;
  [[maybe_unused]] const auto [h, I, patch, H, merge, merged, out] = vision_dims(m);
  const std::string p = "vision_model.";
  const std::int64_t tiles = v.max_tiles > 0 ? v.max_tiles : 4, ids = v.aspect_ratio_ids + 1;
  const std::int64_t positions = (v.image_size / patch) * (v.image_size / patch) + 1;
  b.dense(p + "patch_embedding._linear.weight", {h, 3 * patch * patch});
  b.dense(p + "class_embedding", {h});
  b.dense(p + "gated_positional_embedding.gate", {1});
  b.dense(p + "gated_positional_embedding.embedding", {positions, h});
  b.dense(p + "gated_positional_embedding.tile_embedding.weight", {ids, tiles * positions * h});
  for (const char* table : {"pre_tile_positional_embedding.", "post_tile_positional_embedding."}) {
    b.dense(p + table + "embedding.weight", {ids, tiles * h});
    b.dense(p + table + "gate", {1});
  }
  layer_norm(b, p + "layernorm_pre", h);
  layer_norm(b, p + "layernorm_post", h);
  // Copies of the bindings: clang 14 (the sanitizer build) cannot capture structured bindings.
  const std::int64_t width = h, inner = I;
  auto block = [&b, width, inner](const std::string& l, bool gated) {
    b.dense(l + "self_attn.qkv_proj.weight", {3 * width, width});
    b.dense(l + "self_attn.o_proj.weight", {width, width});
    linear_bias(b, l + "mlp.fc1", inner, width);
    linear_bias(b, l + "mlp.fc2", width, inner);
    layer_norm(b, l + "input_layernorm", width);
    layer_norm(b, l + "post_attention_layernorm", width);
    if (gated)
      for (const char* gate : {"gate_attn", "gate_ffn"}) b.dense(l + gate, {1});
  };
  for (int i = 0; i < v.depth; ++i) block(p + "transformer.layers." + std::to_string(i) + ".", false);
  for (int i = 0; i < v.global_layers; ++i) block(p + "global_transformer.layers." + std::to_string(i) + ".", true);
  linear_bias(b, "multi_modal_projector", H, out);
}

// GLM-4.1V / 4.5V / 4.6V (glm4_1v.py, transformers' Glm4vVisionModel): a Conv3d patch embedding with
// bias, a learned position table of (image_size / patch)² rows, RMSNorm blocks with a fused qkv
// (attention_bias) and a bias-free proj, a gated bias-free MLP whose width is out_hidden_size, the
// post-conv and post RMSNorms, the merge x merge downsampling convolution into out_hidden_size, and
// the merger (proj, LayerNorm, gated MLP of intermediate_size), all bias-free but the norm.
void add_glm4v_vision(Builder& b, const ModelSpec& m) {
  [[maybe_unused]] const auto& v = *m.vision;
  [[maybe_unused]] const auto [h, I, patch, H, merge, merged, out] = vision_dims(m);
  const std::string p = "visual.";
  const std::int64_t temporal = v.temporal_patch_size > 0 ? v.temporal_patch_size : 2;
  b.dense(p + "patch_embed.proj.weight", {h, 3, temporal, patch, patch});
  b.dense(p + "patch_embed.proj.bias", {h});
  if (v.image_size > 0) b.dense(p + "embeddings.position_embedding.weight", {(v.image_size / patch) * (v.image_size / patch), h});
  b.dense(p + "post_conv_layernorm.weight", {h});
  for (int i = 0; i < v.depth; ++i) {
    const std::string l = p + "blocks." + std::to_string(i) + ".";
    b.dense(l + "norm1.weight", {h});
    b.dense(l + "norm2.weight", {h});
    linear_bias(b, l + "attn.qkv", 3 * h, h, v.qkv_bias);
    b.dense(l + "attn.proj.weight", {h, h});
    b.dense(l + "mlp.gate_proj.weight", {out, h});
    b.dense(l + "mlp.up_proj.weight", {out, h});
    b.dense(l + "mlp.down_proj.weight", {h, out});
  }
  b.dense(p + "post_layernorm.weight", {h});
  b.dense(p + "downsample.weight", {out, h, merge, merge});
  b.dense(p + "downsample.bias", {out});
  b.dense(p + "merger.proj.weight", {out, out});
  layer_norm(b, p + "merger.post_projection_norm", out);
  b.dense(p + "merger.gate_proj.weight", {I, out});
  b.dense(p + "merger.up_proj.weight", {I, out});
  b.dense(p + "merger.down_proj.weight", {out, I});
}

// phi3v.py Phi3HDImageEmbedding: CLIP ViT-L/14-336 up to the feature layer (clip.py, with its
// class token and pre-LayerNorm), the 2 x 2-merged separators glb_GN and sub_GN, and
// img_projection (image_dim_out x 4 -> H, GELU, H -> H).
void add_phi3v_vision(Builder& b, const ModelSpec& m) {
  [[maybe_unused]] const auto& v = *m.vision;
  [[maybe_unused]] const auto [h, I, patch, H, merge, merged, out] = vision_dims(m);
  const std::string p = "model.vision_embed_tokens.", t = p + "img_processor.vision_model.";
  const std::int64_t side = v.image_size / patch, merged_width = 4 * (v.out_hidden_size > 0 ? v.out_hidden_size : h);
  b.dense(t + "embeddings.class_embedding", {h});
  b.dense(t + "embeddings.patch_embedding.weight", {h, 3, patch, patch});
  b.dense(t + "embeddings.position_embedding.weight", {side * side + 1, h});
  layer_norm(b, t + "pre_layrnorm", h);
  for (int i = 0; i < v.depth; ++i)
    plain_block(b, t + "encoder.layers." + std::to_string(i) + ".", {"self_attn", "out_proj", "layer_norm1", "layer_norm2"}, h, I);
  b.dense(p + "glb_GN", {1, 1, merged_width});
  b.dense(p + "sub_GN", {1, 1, 1, merged_width});
  linear_bias(b, p + "img_projection.0", H, merged_width);
  linear_bias(b, p + "img_projection.2", H, H);
}

void add_internvl_vision(Builder& b, const ModelSpec& m) {
  [[maybe_unused]] const auto& v = *m.vision;
  [[maybe_unused]] const auto [h, I, patch, H, merge, merged, out] = vision_dims(m);
  // intern_vit.py (InternVisionModel): a class token and a learned position per patch plus one,
  // fused qkv (biased unless qkv_bias is false; q/k RMSNorms with qk_normalization), layer scales
  // ls1/ls2, LayerNorms (RMSNorms with norm_type rms_norm). internvl.py's projector mlp1: a
  // LayerNorm over the pixel-shuffled width (h / downsample_ratio²), then that width → H → H.
  const std::string p = "vision_model.";
  const std::int64_t side = v.image_size > 0 ? v.image_size / patch : 0;
  b.dense(p + "embeddings.class_embedding", {1, 1, h});
  b.dense(p + "embeddings.patch_embedding.weight", {h, 3, patch, patch});
  b.dense(p + "embeddings.patch_embedding.bias", {h});
  if (side > 0) b.dense(p + "embeddings.position_embedding", {1, side * side + 1, h});
  for (int i = 0; i < v.depth; ++i) {
    const std::string l = p + "encoder.layers." + std::to_string(i) + ".";
    linear_bias(b, l + "attn.qkv", 3 * h, h, v.qkv_bias);
    if (v.qk_norm) {
      b.dense(l + "attn.q_norm.weight", {h});
      b.dense(l + "attn.k_norm.weight", {h});
    }
    linear_bias(b, l + "attn.proj", h, h);
    linear_bias(b, l + "mlp.fc1", I, h);
    linear_bias(b, l + "mlp.fc2", h, I);
    layer_norm(b, l + "norm1", h, !v.rms_norm);
    layer_norm(b, l + "norm2", h, !v.rms_norm);
    b.dense(l + "ls1", {h});
    b.dense(l + "ls2", {h});
  }
  const double ratio = v.pixel_shuffle_ratio > 0 ? v.pixel_shuffle_ratio : 0.5;
  const auto shuffled = static_cast<std::int64_t>(std::llround(static_cast<double>(h) / (ratio * ratio)));
  layer_norm(b, "mlp1.0", shuffled);
  linear_bias(b, "mlp1.1", H, shuffled);
  linear_bias(b, "mlp1.3", H, H);
}

// DeepSeek-OCR's DeepEncoder as deepseek_ocr.py builds it, whatever the config says (build_sam_vit_b
// and a fixed CLIPVisionConfig): SAM ViT-B (patch 16, 768 wide, 12 blocks with fused qkv, MLP 3072,
// relative positions over 2 × 14 − 1 in windowed blocks and 2 × 64 − 1 in the global ones 2, 5, 8,
// 11; the 64² position table; the neck 768 → 256 and the two stride-2 convolutions to 1024), CLIP-L
// (1024 wide, 24 layers, MLP 4096, class token, 257 positions, pre-LayerNorm, fused qkv; its own
// patch convolution is loaded though SAM's output replaces it), the linear projector 2048 → the
// language model, and the learned image newline and view separator.
void add_deepencoder(Builder& b, const ModelSpec& m) {
  const std::int64_t w = 768, c = 1024, H = m.hidden_size;
  const std::string sam = "model.sam_model.";
  b.dense(sam + "patch_embed.proj.weight", {w, 3, 16, 16});
  b.dense(sam + "patch_embed.proj.bias", {w});
  b.dense(sam + "pos_embed", {1, 64, 64, w});
  for (int i = 0; i < 12; ++i) {
    const std::string blk = sam + "blocks." + std::to_string(i) + ".";
    linear_bias(b, blk + "attn.qkv", 3 * w, w);
    linear_bias(b, blk + "attn.proj", w, w);
    linear_bias(b, blk + "mlp.lin1", 4 * w, w);
    linear_bias(b, blk + "mlp.lin2", w, 4 * w);
    layer_norm(b, blk + "norm1", w);
    layer_norm(b, blk + "norm2", w);
    const std::int64_t span = (i % 3 == 2) ? 2 * 64 - 1 : 2 * 14 - 1;
    b.dense(blk + "attn.rel_pos_h", {span, 64});
    b.dense(blk + "attn.rel_pos_w", {span, 64});
  }
  b.dense(sam + "neck.0.weight", {256, w, 1, 1});
  layer_norm(b, sam + "neck.1", 256);
  b.dense(sam + "neck.2.weight", {256, 256, 3, 3});
  layer_norm(b, sam + "neck.3", 256);
  b.dense(sam + "net_2.weight", {512, 256, 3, 3});
  b.dense(sam + "net_3.weight", {c, 512, 3, 3});
  const std::string clip = "model.vision_model.";
  b.dense(clip + "embeddings.class_embedding", {c});
  b.dense(clip + "embeddings.patch_embedding.weight", {c, 3, 14, 14});
  b.dense(clip + "embeddings.position_embedding.weight", {257, c});
  layer_norm(b, clip + "pre_layrnorm", c);
  for (int i = 0; i < 24; ++i) {
    const std::string l = clip + "transformer.layers." + std::to_string(i) + ".";
    linear_bias(b, l + "self_attn.qkv_proj", 3 * c, c);
    linear_bias(b, l + "self_attn.out_proj", c, c);
    layer_norm(b, l + "layer_norm1", c);
    layer_norm(b, l + "layer_norm2", c);
    linear_bias(b, l + "mlp.fc1", 4 * c, c);
    linear_bias(b, l + "mlp.fc2", c, 4 * c);
  }
  linear_bias(b, "model.projector.layers", H, 2 * c);
  b.dense("model.image_newline", {H});
  b.dense("model.view_seperator", {H});
}

// The vision tower and projector, one function per family of vLLM model code.
// Gemma 4 12B's encoder-free front end (gemma4_unified.py): Gemma4UnifiedVisionEmbedder's
// LayerNorm over the (patch × pooling)² × 3 pixels of a merged patch, its biased projection to
// mm_embed_dim, a LayerNorm, the [mm_posemb_size, 2, mm_embed_dim] positional table and its
// LayerNorm; embed_vision's bias-free projection from output_proj_dims to the language model
// (its RMSNorm has no weight). embed_audio is counted only from safetensors.
void add_gemma4_unified_embedders(Builder& b, const ModelSpec& m) {
  const auto& v = *m.vision;
  const std::int64_t side = static_cast<std::int64_t>(v.patch_size > 0 ? v.patch_size : 16) * (v.pooling_kernel_size > 0 ? v.pooling_kernel_size : 3);
  const std::int64_t pixels = side * side * 3, d = v.hidden_size, out = v.out_hidden_size > 0 ? v.out_hidden_size : d;
  const std::string p = "vision_embedder.";
  layer_norm(b, p + "patch_ln1", pixels);
  linear_bias(b, p + "patch_dense", d, pixels);
  layer_norm(b, p + "patch_ln2", d);
  b.dense(p + "pos_embedding", {std::max(1, v.num_position_embeddings), 2, d});
  layer_norm(b, p + "pos_norm", d);
  b.dense("embed_vision.embedding_projection.weight", {m.hidden_size, out});
}

// DeepSeek-VL2's tower (deepseek_vl2.py): timm's vit_so400m_patch14_siglip_384 with its fixed
// widths (patch embedding, 27 × 27 position table, pre-norm blocks with fused qkv and a plain
// MLP, final norm) and the attention-pool head timm builds for global_pool "map" though it never
// runs (latent, q, kv, proj, norm, MLP); the MlpProjector from the 2 × 2-unfolded width to n_embed
// and on, and the image_newline and view_seperator vectors.
void add_deepseek_vl2_vision(Builder& b, const ModelSpec& m) {
  const auto& v = *m.vision;
  const std::int64_t w = v.hidden_size, inter = v.intermediate_size, patch = v.patch_size, grid = v.image_size / v.patch_size;
  const std::int64_t embed = v.out_hidden_size > 0 ? v.out_hidden_size : m.hidden_size, merged = w * 4;
  const std::string p = "vision.";
  b.dense(p + "patch_embed.proj.weight", {w, 3, patch, patch});
  b.dense(p + "patch_embed.proj.bias", {w});
  b.dense(p + "pos_embed", {1, grid * grid, w});
  for (int i = 0; i < v.depth; ++i) {
    const std::string l = p + "blocks." + std::to_string(i) + ".";
    layer_norm(b, l + "norm1", w);
    linear_bias(b, l + "attn.qkv", 3 * w, w);
    linear_bias(b, l + "attn.proj", w, w);
    layer_norm(b, l + "norm2", w);
    linear_bias(b, l + "mlp.fc1", inter, w);
    linear_bias(b, l + "mlp.fc2", w, inter);
  }
  layer_norm(b, p + "norm", w);
  b.dense(p + "attn_pool.latent", {1, 1, w});
  linear_bias(b, p + "attn_pool.q", w, w);
  linear_bias(b, p + "attn_pool.kv", 2 * w, w);
  linear_bias(b, p + "attn_pool.proj", w, w);
  layer_norm(b, p + "attn_pool.norm", w);
  linear_bias(b, p + "attn_pool.mlp.fc1", inter, w);
  linear_bias(b, p + "attn_pool.mlp.fc2", w, inter);
  linear_bias(b, "projector.layers.0", embed, merged);
  linear_bias(b, "projector.layers.2", embed, embed);
  b.dense("image_newline", {embed});
  b.dense("view_seperator", {embed});
}

// Molmo's vision backbone (molmo.py, VisionBackboneConfig's defaults): the ViT's class and position
// embeddings (577 positions), a bias-free patch embedding of 14 × 14 × 3 pixels, pre_ln, 23 blocks of
// biased wq/wk/wv/wo and w1/w2 with two LayerNorms; the attention pooling from the two concatenated
// layers (2048 wide) to 1024; the SwiGLU projector (w1 and w3 to half the language model's
// ff_proj width, w2 to its hidden size; no biases) and pad_embed [2, 2048].
void add_molmo_vision(Builder& b, const ModelSpec& m) {
  const auto& v = *m.vision;
  const std::int64_t w = v.hidden_size, inter = v.intermediate_size, grid = v.image_size / v.patch_size;
  const std::int64_t pixels = v.patch_size * v.patch_size * 3, pooled_in = 2 * w, half = m.intermediate_size;
  const std::string p = "model.vision_backbone.", vit = p + "image_vit.";
  b.dense(vit + "class_embedding", {w});
  b.dense(vit + "positional_embedding", {grid * grid + 1, w});
  b.dense(vit + "patch_embedding.weight", {w, pixels});
  layer_norm(b, vit + "pre_ln", w);
  for (int i = 0; i < v.depth; ++i) {
    const std::string l = vit + "transformer.resblocks." + std::to_string(i) + ".";
    for (const char* proj : {"wq", "wk", "wv", "wo"}) linear_bias(b, l + "attention." + proj, w, w);
    linear_bias(b, l + "feed_forward.w1", inter, w);
    linear_bias(b, l + "feed_forward.w2", w, inter);
    layer_norm(b, l + "attention_norm", w);
    layer_norm(b, l + "ffn_norm", w);
  }
  for (const char* proj : {"wq", "wk", "wv"}) linear_bias(b, p + "image_pooling_2d." + proj, w, pooled_in);
  linear_bias(b, p + "image_pooling_2d.wo", w, w);
  linear_bias(b, p + "image_projector.w1", half, w, false);
  linear_bias(b, p + "image_projector.w3", half, w, false);
  linear_bias(b, p + "image_projector.w2", m.hidden_size, half, false);
  b.dense(p + "pad_embed", {2, pooled_in});
}

// Gemma3nMultimodalEmbedder (gemma3n_mm.py, embed_vision / embed_audio): a vocabulary table of the
// tower's width, its hard and soft RMSNorms, and the projection into the language model; the
// post-projection norm has no weight.
void add_gemma3n_embedder(Builder& b, const std::string& p, std::int64_t vocab, std::int64_t width, std::int64_t text_hidden) {
  b.dense(p + "embedding.weight", {vocab, width});
  b.dense(p + "hard_embedding_norm.weight", {width});
  b.dense(p + "soft_embedding_norm.weight", {width});
  b.dense(p + "embedding_projection.weight", {text_hidden, width});
}

// Gemma 3n's vision tower is timm's mobilenetv5_300m_enc (gemma3n_mm.py AutoModel.from_config ->
// TimmWrapperModel), whose shapes vision_config does not set: timm's mobilenetv5.py
// _gen_mobilenet_v5 builds it from fixed block strings. Its parameters, counted per part from
// those blocks (timm 1.0.17 on, with conv_stem's bias, which the release checkpoint carries):
// stem 1,856; stages 1,492,608, 2,439,168, 63,407,744 and 211,540,480; the multi-scale fusion
// adapter 15,245,056: 294,126,912 in all. Another timm model, or model_args that reshape it, is
// counted only from the checkpoint's headers.
void add_gemma3n_vision(Builder& b, const ModelSpec& m) {
  const auto& v = *m.vision;
  if (v.timm_architecture == "mobilenetv5_300m_enc" && !v.timm_model_args) {
    const std::string p = "vision_tower.timm_model.";
    b.dense(p + "conv_stem.weight", {1856});
    const std::int64_t stages[] = {1492608, 2439168, 63407744, 211540480};
    for (int i = 0; i < 4; ++i) b.dense(p + "blocks." + std::to_string(i) + ".weight", {stages[i]});
    b.dense(p + "msfa.weight", {15245056});
  }
  if (v.hidden_size > 0) add_gemma3n_embedder(b, "embed_vision.", v.embedder_vocab > 0 ? v.embedder_vocab : 128, v.hidden_size, m.hidden_size);
}

void add_vision(Builder& b, const ModelSpec& m) {
  const auto& v = *m.vision;
  if (v.model_type == "gemma3n_vision") return add_gemma3n_vision(b, m);
  if (v.model_type == "molmo_vit") return add_molmo_vision(b, m);
  if (v.model_type == "deepseek_vl2_siglip") return add_deepseek_vl2_vision(b, m);
  if (m.architecture == "DeepseekOCRForCausalLM") return add_deepencoder(b, m);
  if (v.model_type == "gemma4_unified_vision" && v.hidden_size > 0) return add_gemma4_unified_embedders(b, m);
  if (v.depth <= 0 || v.hidden_size <= 0) return;  // summary too thin to size the tower
  const VisionFamily family = vision_family(m);
  switch (family) {
    case VisionFamily::qwen2_vl:
    case VisionFamily::qwen2_5_vl:
    case VisionFamily::qwen3_vl:
    case VisionFamily::dots: return add_qwen_vision(b, m, family);
    case VisionFamily::moonvit: return add_moonvit(b, m);
    case VisionFamily::pixtral: return add_pixtral_vision(b, m);
    case VisionFamily::llama4: return add_llama4_vision(b, m);
    case VisionFamily::internvl: return add_internvl_vision(b, m);
    case VisionFamily::phi3v: return add_phi3v_vision(b, m);
    case VisionFamily::gemma3:
    case VisionFamily::clip:
    case VisionFamily::aya:
    case VisionFamily::minicpmv:
    case VisionFamily::idefics3:
    case VisionFamily::paddleocr:
    case VisionFamily::generic: return add_siglip_vision(b, m, family);
    case VisionFamily::mllama: return add_mllama_vision(b, m);
    case VisionFamily::glm4v: return add_glm4v_vision(b, m);
    case VisionFamily::ovis: return add_ovis_vision(b, m);
  }
}

// The omni audio encoders' layers (Whisper's encoder layer): q/k/v/out projections, biased except
// k_proj where Whisper leaves it out, a LayerNorm before attention and one before fc1/fc2.
void audio_encoder_layers(Builder& b, const std::string& p, const AudioConfig& a, std::int64_t ffn, bool k_bias) {
  const std::int64_t d = a.d_model;
  for (int i = 0; i < a.layers; ++i) {
    const std::string l = p + "layers." + std::to_string(i) + ".";
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"})
      linear_bias(b, l + "self_attn." + proj, d, d, k_bias || std::string_view(proj) != "k_proj");
    layer_norm(b, l + "self_attn_layer_norm", d);
    linear_bias(b, l + "fc1", ffn, d);
    linear_bias(b, l + "fc2", d, ffn);
    layer_norm(b, l + "final_layer_norm", d);
  }
}

// Qwen3-Omni's audio encoder (Qwen3OmniMoeAudioEncoder, the thinker's audio_tower): three 3 x 3
// stride-2 convolutions of downsample_hidden_size channels over the mel bins, conv_out from the
// flattened channels x (mel bins / 8) to d_model without bias, encoder layers with biased q/k/v/out
// projections, fc1/fc2 and two LayerNorms, ln_post, and proj1 (d_model) / proj2 (output_dim).
void add_qwen3_omni_audio(Builder& b, const ModelSpec& m) {
  const AudioConfig& a = *m.audio;
  const std::int64_t d = a.d_model, c = a.downsample_hidden_size > 0 ? a.downsample_hidden_size : 480;
  const std::int64_t mel = a.num_mel_bins > 0 ? a.num_mel_bins : 128, ffn = a.ffn > 0 ? a.ffn : 4 * d;
  const std::int64_t out = a.output_dim > 0 ? a.output_dim : m.hidden_size;
  const std::string p = "audio_tower.";
  b.dense(p + "conv2d1.weight", {c, 1, 3, 3});
  b.dense(p + "conv2d1.bias", {c});
  for (const char* conv : {"conv2d2", "conv2d3"}) {
    b.dense(p + conv + ".weight", {c, c, 3, 3});
    b.dense(p + conv + ".bias", {c});
  }
  b.dense(p + "conv_out.weight", {d, c * ((mel + 7) / 8)});
  audio_encoder_layers(b, p, a, ffn, true);
  layer_norm(b, p + "ln_post", d);
  linear_bias(b, p + "proj1", d, d);
  linear_bias(b, p + "proj2", out, d);
}

// Qwen2.5-Omni's audio encoder (Qwen2_5OmniAudioEncoder, the thinker's audio_tower, Whisper's
// layout): conv1 over the mel bins and conv2 (kernel 3, biased), the audio begin/end embeddings
// (2 x output_dim), encoder layers whose k_proj has no bias, ln_post and proj into the language
// model (avg_pooler has no parameters).
void add_qwen2_5_omni_audio(Builder& b, const ModelSpec& m) {
  const AudioConfig& a = *m.audio;
  const std::int64_t d = a.d_model, mel = a.num_mel_bins > 0 ? a.num_mel_bins : 128, ffn = a.ffn > 0 ? a.ffn : 4 * d;
  const std::int64_t out = a.output_dim > 0 ? a.output_dim : m.hidden_size;
  const std::string p = "audio_tower.";
  b.dense(p + "conv1.weight", {d, mel, 3});
  b.dense(p + "conv1.bias", {d});
  b.dense(p + "conv2.weight", {d, d, 3});
  b.dense(p + "conv2.bias", {d});
  b.dense(p + "audio_bos_eos_token.weight", {2, out});
  audio_encoder_layers(b, p, a, ffn, false);
  layer_norm(b, p + "ln_post", d);
  linear_bias(b, p + "proj", out, d);
}

// Gemma 3n's subsampling (Gemma3nAudioSubSampleConvProjection): two conv blocks, each a Conv2d
// without bias over [time, frequency] and a CumulativeGroupNorm scale per channel; the frequency
// axis, padded by one each side, shrinks to (F + 2 - kernel) / stride + 1 per block, and
// input_proj_linear maps channels x the last width to the encoder's width. The release writes
// channels (128, 32), kernels (3, 3) and strides (2, 2): 128 mel bins -> 64 -> 32.
void add_gemma3n_subsampling(Builder& b, const std::string& p, const AudioConfig& a) {
  std::int64_t in = 1, freq = a.num_mel_bins > 0 ? a.num_mel_bins : 128;
  for (std::size_t i = 0; i < 2; ++i) {
    const std::int64_t c = i < a.subsample_channels.size() ? a.subsample_channels[i] : (i == 0 ? 128 : 32);
    const std::array<int, 2> k = i < a.subsample_kernels.size() ? a.subsample_kernels[i] : std::array<int, 2>{3, 3};
    const std::array<int, 2> st = i < a.subsample_strides.size() ? a.subsample_strides[i] : std::array<int, 2>{2, 2};
    const std::string conv = p + "conv_" + std::to_string(i) + ".";
    b.dense(conv + "conv.weight", {c, in, k[0], k[1]});
    b.dense(conv + "norm.weight", {c});
    freq = std::max<std::int64_t>(1, (freq + 2 - k[1]) / st[1] + 1);
    in = c;
  }
  b.dense(p + "input_proj_linear.weight", {a.d_model, in * freq});
}

// Gemma 3n's audio encoder (transformers' Gemma3nAudioEncoder, which gemma3n_mm.py builds through
// AutoModel.from_config): the subsampling, then per conformer block two feed-forwards (4 x width,
// pre and post RMSNorm), attention (per_dim_scale of one head's width, the relative position
// projection, q/k/v, post and its norm), the light conv (linear_start to 2 x width, a depthwise
// conv of conf_conv_kernel_size, its norm, linear_end) and the block's norm; no biases. Then
// embed_audio, the embedder into the language model.
void add_gemma3n_audio(Builder& b, const ModelSpec& m) {
  const AudioConfig& a = *m.audio;
  const std::int64_t H = a.d_model, heads = a.heads > 0 ? a.heads : 8, K = a.conv_kernel > 0 ? a.conv_kernel : 5;
  const std::string p = "audio_tower.";
  add_gemma3n_subsampling(b, p + "subsample_conv_projection.", a);
  for (int i = 0; i < a.layers; ++i) {
    const std::string l = p + "conformer." + std::to_string(i) + ".";
    for (const char* ffw : {"ffw_layer_start.", "ffw_layer_end."}) {
      b.dense(l + ffw + "pre_layer_norm.weight", {H});
      b.dense(l + ffw + "ffw_layer_1.weight", {4 * H, H});
      b.dense(l + ffw + "ffw_layer_2.weight", {H, 4 * H});
      b.dense(l + ffw + "post_layer_norm.weight", {H});
    }
    b.dense(l + "attention.pre_attn_norm.weight", {H});
    b.dense(l + "attention.attn.per_dim_scale", {H / heads});
    for (const char* proj : {"relative_position_embedding.pos_proj", "q_proj", "k_proj", "v_proj"})
      b.dense(l + "attention.attn." + proj + ".weight", {H, H});
    b.dense(l + "attention.post.weight", {H, H});
    b.dense(l + "attention.post_norm.weight", {H});
    b.dense(l + "lconv1d.pre_layer_norm.weight", {H});
    b.dense(l + "lconv1d.linear_start.weight", {2 * H, H});
    b.dense(l + "lconv1d.depthwise_conv1d.weight", {H, 1, K});
    b.dense(l + "lconv1d.conv_norm.weight", {H});
    b.dense(l + "lconv1d.linear_end.weight", {H, H});
    b.dense(l + "norm.weight", {H});
  }
  add_gemma3n_embedder(b, "embed_audio.", a.vocab_size > 0 ? a.vocab_size : 128, H, m.hidden_size);
}

// Gemma 4's audio encoder (transformers' Gemma4AudioModel, which gemma4_mm.py builds through
// AutoModel.from_config): the subsampling (two bias-free 3 x 3 stride-2 convs, each with a bias-free
// LayerNorm, then input_proj_linear from channels[0] / 4 x channels[1] to the width); per conformer
// block two feed-forwards (4 x width, pre and post RMSNorm), attention (q, k, v, post, the relative
// position projection, per_dim_scale of one head's width), the light conv (linear_start to 2 x
// width, a depthwise conv of conv_kernel_size, two RMSNorms, linear_end) and three block norms;
// output_proj to output_proj_dims with a bias. Then embed_audio (Gemma4MultimodalEmbedder): one
// projection from output_proj_dims into the language model, its norm without a weight. The
// clippable linears' four scalar bounds are left out (16 bytes each).
void add_gemma4_audio(Builder& b, const ModelSpec& m) {
  const AudioConfig& a = *m.audio;
  const std::int64_t H = a.d_model, heads = a.heads > 0 ? a.heads : 8, K = a.conv_kernel > 0 ? a.conv_kernel : 5;
  const std::int64_t c0 = a.subsample_channels.size() == 2 ? a.subsample_channels[0] : 128;
  const std::int64_t c1 = a.subsample_channels.size() == 2 ? a.subsample_channels[1] : 32;
  const std::int64_t out = a.output_dim > 0 ? a.output_dim : 1536;
  const std::string p = "audio_tower.";
  b.dense(p + "subsample_conv_projection.layer0.conv.weight", {c0, 1, 3, 3});
  b.dense(p + "subsample_conv_projection.layer0.norm.weight", {c0});
  b.dense(p + "subsample_conv_projection.layer1.conv.weight", {c1, c0, 3, 3});
  b.dense(p + "subsample_conv_projection.layer1.norm.weight", {c1});
  b.dense(p + "subsample_conv_projection.input_proj_linear.weight", {H, c0 / 4 * c1});
  for (int i = 0; i < a.layers; ++i) {
    const std::string l = p + "layers." + std::to_string(i) + ".";
    for (const char* ffw : {"feed_forward1.", "feed_forward2."}) {
      b.dense(l + ffw + "ffw_layer_1.linear.weight", {4 * H, H});
      b.dense(l + ffw + "ffw_layer_2.linear.weight", {H, 4 * H});
      b.dense(l + ffw + "pre_layer_norm.weight", {H});
      b.dense(l + ffw + "post_layer_norm.weight", {H});
    }
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "post"}) b.dense(l + "self_attn." + proj + ".linear.weight", {H, H});
    b.dense(l + "self_attn.relative_k_proj.weight", {H, H});
    b.dense(l + "self_attn.per_dim_scale", {H / heads});
    b.dense(l + "lconv1d.linear_start.linear.weight", {2 * H, H});
    b.dense(l + "lconv1d.linear_end.linear.weight", {H, H});
    b.dense(l + "lconv1d.depthwise_conv1d.weight", {H, 1, K});
    for (const char* norm : {"lconv1d.pre_layer_norm", "lconv1d.conv_norm", "norm_pre_attn", "norm_post_attn", "norm_out"})
      b.dense(l + norm + ".weight", {H});
  }
  linear_bias(b, p + "output_proj", out, H);
  b.dense("embed_audio.embedding_projection.weight", {m.hidden_size, out});
}

// Phi-4-multimodal's subsampling (phi4mm_utils.py NemoConvSubsampling, ReLU between convs): the
// first 3 x 3 conv from one channel, then per further stride-2 stage a depthwise 3 x 3 and a
// pointwise conv ("dw_striding") or a full 3 x 3 conv ("striding"), all biased; then `out` from
// channels x the remaining feature width (calc_length: (L + padding - 3) / 2 + 1 per stage, padding
// 2, or 3 when causal) to attention_dim. The release: 80 features -> 40 -> 20 -> 10, out 1024 x 10240.
void add_nemo_subsampling(Builder& b, const std::string& p, const ConformerConfig& x, std::int64_t D) {
  const std::int64_t C = x.conv_channels;
  const int stages = std::bit_width(static_cast<unsigned>(x.time_reduction)) - 1;  // log2; time_reduction is 2 to 65536
  b.dense(p + "conv.0.weight", {C, 1, 3, 3});
  b.dense(p + "conv.0.bias", {C});
  for (int j = 0; j + 1 < stages; ++j) {
    if (x.depthwise_subsampling) {
      linear_bias(b, p + "conv." + std::to_string(3 * j + 2), C, 9);  // [C, 1, 3, 3]
      linear_bias(b, p + "conv." + std::to_string(3 * j + 3), C, C);  // [C, C, 1, 1]
    } else {
      linear_bias(b, p + "conv." + std::to_string(2 * (j + 1)), C, C * 9);  // [C, C, 3, 3]
    }
  }
  std::int64_t width = x.input_size;
  for (int i = 0; i < stages; ++i) width = std::max<std::int64_t>(1, (width + (x.causal_subsampling ? 3 : 2) - 3) / 2 + 1);
  linear_bias(b, p + "out", D, C * width);
}

// One ConformerEncoderLayer (phi4mm_utils.py): two GLU feed-forwards (LayerNorm, GLULinear to 2 x
// linear_units, Linear back), grouped multi-head attention with biased q/k/v/out, the conv module
// (LayerNorm; the GLU pointwise conv to 2 x ext_pw_out_channel with its b1/b2, the separate
// ext_pw conv and ln1 when its width differs; the depthwise separable conv and ln2; batch norm when
// set) and two LayerNorms.
void add_conformer_block(Builder& b, const std::string& l, const ConformerConfig& x, std::int64_t D, std::int64_t F) {
  const std::int64_t kv = D / x.attention_group, E = x.ext_pw_out_channel, S = x.depthwise_out, DM = D * x.depthwise_multiplier;
  for (const char* ff : {"feed_forward_in.", "feed_forward_out."}) {
    layer_norm(b, l + ff + "layer_norm", D);
    linear_bias(b, l + ff + "net.0.linear", 2 * F, D, x.bias_in_glu);
    linear_bias(b, l + ff + "net.2", D, F);
  }
  linear_bias(b, l + "self_attn.linear_q", D, D);
  linear_bias(b, l + "self_attn.linear_k", kv, D);
  linear_bias(b, l + "self_attn.linear_v", kv, D);
  linear_bias(b, l + "self_attn.linear_out", D, kv);
  const std::string c = l + "conv.";
  layer_norm(b, c + "layer_norm", D);
  if (E != 0) {
    linear_bias(b, c + "glu.ext_pw_conv_1d", 2 * E, D * x.ext_pw_kernel_size);
    if (x.bias_in_glu) {
      b.dense(c + "glu.b1", {1, E, 1});
      b.dense(c + "glu.b2", {1, E, 1});
    }
    linear_bias(b, c + "ext_pw_conv_1d", E, D * x.ext_pw_kernel_size);
    if (E != D) linear_bias(b, c + "ln1", D, E);
  } else {
    b.dense(c + "pw_conv_simplify_w", {3});
    b.dense(c + "pw_conv_simplify_b", {3});
  }
  linear_bias(b, c + "dw_sep_conv_1d.dw_conv", DM, x.kernel_size);
  if (S != 0) linear_bias(b, c + "dw_sep_conv_1d.pw_conv", S, DM);
  if (S != 0 && S != D) linear_bias(b, c + "ln2", D, S);
  else if (S == 0 && x.depthwise_multiplier != 1) linear_bias(b, c + "ln2", D, DM);
  if (x.batch_norm)
    for (const char* t : {"weight", "bias", "running_mean", "running_var"}) b.dense(c + "bn_layer." + t, {D});
  layer_norm(b, l + "layer_norm_att", D);
  layer_norm(b, l + "layer_norm", D);
}

// Phi-4-multimodal's speech encoder and its projections (phi4mm_audio.py AudioEmbedding): the
// global mean / inverse deviation of the input features, the subsampling, the T5 relative bias
// table (2 x max distance rows unless symmetric, heads / group columns), the blocks; then the
// speech and vision-mode projections ("mlp": Linear to the language model's width, GELU, Linear;
// "linear": one Linear). For the release 441,238,304 encoder parameters and 2 x 12,589,056.
void add_phi4mm_audio(Builder& b, const ModelSpec& m) {
  const AudioConfig& a = *m.audio;
  const ConformerConfig& x = *a.conformer;
  // laid_out holds only where attention_heads and linear_units are written (read_phi4mm_audio).
  const std::int64_t D = a.d_model, F = a.ffn, H = a.heads, L = m.hidden_size;
  const std::string p = "model.embed_tokens_extend.audio_embed.";
  b.dense(p + "encoder.encoder_embedding.global_mean", {x.embedding_input});
  b.dense(p + "encoder.encoder_embedding.global_invstd", {x.embedding_input});
  add_nemo_subsampling(b, p + "encoder.embed.", x, D);
  b.dense(p + "encoder.relative_attention_bias_layer.bias_values.weight",
          {std::int64_t{x.t5_max_distance} * (x.t5_symmetric ? 1 : 2), H / x.attention_group});
  for (int i = 0; i < a.layers; ++i) add_conformer_block(b, p + "encoder.encoders." + std::to_string(i) + ".", x, D, F);
  const std::int64_t in = D * x.downsample_rate;
  if (!x.mlp_projection) return linear_bias(b, p + "audio_projection", L, in);
  for (const char* mode : {"speech", "vision"}) {
    linear_bias(b, p + "audio_projection." + mode + ".0", L, in);
    linear_bias(b, p + "audio_projection." + mode + ".2", L, L);
  }
}

// MiniCPM-o's audio encoder (minicpmo.py MiniCPMWhisperEncoder: transformers' WhisperEncoder over
// audio_config) and audio_projection_layer (MultiModalProjector: linear1 from encoder_ffn_dim / 4
// to the language model's width, ReLU, linear2; both biased): conv1 over the mel bins and conv2
// (kernel 3, biased), the position table of max_source_positions rows, the encoder layers
// (Whisper's: k_proj without bias) and the closing LayerNorm.
void add_minicpmo_audio(Builder& b, const ModelSpec& m) {
  const AudioConfig& a = *m.audio;
  // Unwritten sizes take WhisperConfig's defaults (80 mel bins, 1,500 positions); every Whisper
  // release's encoder_ffn_dim is 4 x d_model.
  const std::int64_t d = a.d_model, mel = a.num_mel_bins > 0 ? a.num_mel_bins : 80, ffn = a.ffn > 0 ? a.ffn : 4 * d;
  b.dense("apm.conv1.weight", {d, mel, 3});
  b.dense("apm.conv1.bias", {d});
  b.dense("apm.conv2.weight", {d, d, 3});
  b.dense("apm.conv2.bias", {d});
  b.dense("apm.embed_positions.weight", {a.max_source_positions > 0 ? a.max_source_positions : 1500, d});
  audio_encoder_layers(b, "apm.", a, ffn, false);
  layer_norm(b, "apm.layer_norm", d);
  linear_bias(b, "audio_projection_layer.linear1", m.hidden_size, ffn / 4);
  linear_bias(b, "audio_projection_layer.linear2", m.hidden_size, m.hidden_size);
}

// Whisper's encoder as the audio LMs build it (transformers' WhisperEncoder, Qwen2AudioEncoder,
// VoxtralEncoder): conv1 over the mel bins and conv2 (kernel 3, biased), the position table of
// max_source_positions rows (in the checkpoint, though not trained), the encoder layers (k_proj
// without bias) and the closing layer_norm.
void add_whisper_encoder(Builder& b, const AudioConfig& a, const std::string& p) {
  const std::int64_t d = a.d_model, mel = a.num_mel_bins > 0 ? a.num_mel_bins : 128, ffn = a.ffn > 0 ? a.ffn : 4 * d;
  b.dense(p + "conv1.weight", {d, mel, 3});
  b.dense(p + "conv1.bias", {d});
  b.dense(p + "conv2.weight", {d, d, 3});
  b.dense(p + "conv2.bias", {d});
  b.dense(p + "embed_positions.weight", {a.max_source_positions > 0 ? a.max_source_positions : 1500, d});
  audio_encoder_layers(b, p, a, ffn, false);
  layer_norm(b, p + "layer_norm", d);
}

// Qwen2-Audio (qwen2_audio.py): the Whisper encoder (its avg_pooler has no parameters) and
// multi_modal_projector, one biased linear from d_model to the language model's width.
void add_qwen2_audio(Builder& b, const ModelSpec& m) {
  add_whisper_encoder(b, *m.audio, "audio_tower.");
  linear_bias(b, "multi_modal_projector.linear", m.hidden_size, m.audio->d_model);
}

// An integer the config writes at its top level, within [1, most]; `fallback` when absent or out
// of range (the config class's default).
std::int64_t top_level_int(const ModelSpec& m, const char* key, std::int64_t fallback, std::int64_t most) {
  if (!m.raw_config.is_object()) return fallback;
  auto it = m.raw_config.find(key);
  if (it == m.raw_config.end() || !it->is_number_integer()) return fallback;
  const auto v = it->get<std::int64_t>();
  return v >= 1 && v <= most ? v : fallback;
}

// Ultravox's projector (ultravox.py UltravoxFeedForwardProjector, UltravoxProjector before it) from
// UltravoxConfig's top-level settings (vllm/transformers_utils/configs/ultravox.py defaults:
// hidden_size 4096, stack_factor 8, projector_act "swiglu", projector_ln_mid false): ln_pre, an
// RMSNorm over the stacked width d_model x stack_factor; linear_1 to hidden_size; SwiGLU halves
// it; linear_2 to the language model's width (neither linear biased); one RMSNorm, ln_mid over the
// halved width (projector_ln_mid, the v0.5 releases) or ln_post over the output. Later releases'
// transformer projector (num_projector_layers > 0) is counted from safetensors only.
void add_ultravox_projector(Builder& b, const ModelSpec& m) {
  if (top_level_int(m, "num_projector_layers", 0, 1 << 10) > 0) return;
  const std::int64_t in = m.audio->d_model * top_level_int(m, "stack_factor", 8, 64);
  const std::int64_t hidden = top_level_int(m, "hidden_size", 4096, 1 << 17);
  auto act = m.raw_config.is_object() ? m.raw_config.find("projector_act") : m.raw_config.end();
  const bool swiglu = !m.raw_config.is_object() || act == m.raw_config.end() || !act->is_string() || *act == "swiglu";
  auto ln = m.raw_config.is_object() ? m.raw_config.find("projector_ln_mid") : m.raw_config.end();
  const bool ln_mid = m.raw_config.is_object() && ln != m.raw_config.end() && ln->is_boolean() && ln->get<bool>();
  const std::int64_t mid = swiglu ? hidden / 2 : hidden;
  b.dense("multi_modal_projector.ln_pre.weight", {in});
  linear_bias(b, "multi_modal_projector.linear_1", hidden, in, false);
  linear_bias(b, "multi_modal_projector.linear_2", m.hidden_size, mid, false);
  if (ln_mid) b.dense("multi_modal_projector.ln_mid.weight", {mid});
  else b.dense("multi_modal_projector.ln_post.weight", {m.hidden_size});
}

// Voxtral's adapter (voxtral.py AudioLanguageAdapter, w_in and w_out; laid out under the names of
// transformers' VoxtralMultiModalProjector, linear_1 and linear_2): from the encoder's
// intermediate_size (d_model x downsample_factor 4, four frames stacked) to the language model's
// width, GELU, then at that width; neither biased.
void add_voxtral_projector(Builder& b, const ModelSpec& m) {
  const std::int64_t in = m.audio->ffn > 0 ? m.audio->ffn : 4 * static_cast<std::int64_t>(m.audio->d_model);
  linear_bias(b, "multi_modal_projector.linear_1", m.hidden_size, in, false);
  linear_bias(b, "multi_modal_projector.linear_2", m.hidden_size, m.hidden_size, false);
}

// The audio encoders laid out here, by audio_config.model_type; another type is counted only
// from a checkpoint's own safetensors headers.
void add_audio(Builder& b, const ModelSpec& m) {
  if (!m.audio || m.audio->layers <= 0 || m.audio->d_model <= 0) return;
  if (m.audio->model_type == "qwen3_omni_moe_audio_encoder") add_qwen3_omni_audio(b, m);
  else if (m.audio->model_type == "qwen2_5_omni_audio_encoder") add_qwen2_5_omni_audio(b, m);
  else if (m.audio->model_type == "gemma3n_audio") add_gemma3n_audio(b, m);
  else if (m.audio->model_type == "gemma4_audio") add_gemma4_audio(b, m);
  else if (m.audio->model_type == "qwen2_audio_encoder") add_qwen2_audio(b, m);
  // Ultravox (audio_config a Whisper config) and Voxtral (voxtral_encoder): the Whisper encoder and
  // each one's projector.
  else if ((m.audio->model_type == "whisper" && m.architecture != "MiniCPMO") || m.audio->model_type == "voxtral_encoder") {
    add_whisper_encoder(b, *m.audio, "audio_tower.");
    if (m.architecture == "UltravoxModel") add_ultravox_projector(b, m);
    else if (m.audio->model_type == "voxtral_encoder") add_voxtral_projector(b, m);
  }
  else if (m.architecture == "MiniCPMO" && (m.audio->model_type == "whisper" || m.audio->model_type.empty())) add_minicpmo_audio(b, m);
  else if (m.audio->model_type == "phi4mm_conformer" && m.audio->conformer && m.audio->conformer->laid_out) add_phi4mm_audio(b, m);
}

}  // namespace

// Gemma 4 / 3n per-layer inputs (gemma4.py, gemma3n.py): a second embedding table of
// vocab_size_per_layer_input × (layers × hidden_size_per_layer_input), the projection of the
// hidden state to the same width and its norm, and per layer an input gate, a projection back
// to the hidden size and a norm.
void add_per_layer_inputs(Builder& b, const ModelSpec& m, const std::string& root) {
  const std::int64_t H = m.hidden_size, P = m.hidden_size_per_layer_input, L = m.num_layers;
  b.dense(root + "embed_tokens_per_layer.weight", {m.vocab_size_per_layer_input, L * P});
  b.dense(root + "per_layer_model_projection.weight", {L * P, H});
  b.dense(root + "per_layer_projection_norm.weight", {P});
  for (int i = 0; i < m.num_layers; ++i) {
    const std::string p = root + "layers." + std::to_string(i) + ".";
    b.dense(p + "per_layer_input_gate.weight", {P, H});
    b.dense(p + "per_layer_projection.weight", {H, P});
    b.dense(p + "post_per_layer_input_norm.weight", {H});
  }
}

bool is_moe_layer(const ModelSpec& m, int layer) {
  if (!m.moe || m.moe->num_experts <= 0) return false;
  if (m.hybrid && !m.hybrid->layer_pattern.empty())
    return layer >= 0 && layer < static_cast<int>(m.hybrid->layer_pattern.size()) && m.hybrid->layer_pattern[static_cast<std::size_t>(layer)] == 'E';
  const auto& x = *m.moe;
  if (layer < x.first_k_dense_replace) return false;
  if (std::find(x.mlp_only_layers.begin(), x.mlp_only_layers.end(), layer) != x.mlp_only_layers.end()) return false;
  // Qwen-MoE decoder_sparse_step and Llama 4 interleave_moe_layer_step: (i + 1) % step == 0.
  return x.moe_layer_freq <= 1 || (layer + 1) % x.moe_layer_freq == 0;
}

// Falcon (RWForCausalLM / FalconForCausalLM): fused query_key_value, a 4h MLP without gate,
// transformer.h.N names. Old-format 7B shares one layer norm; new_decoder_architecture (40B)
// has ln_attn and ln_mlp.
WeightsInventory synthesize_falcon(const ModelSpec& m) {
  Builder b(m);
  const std::int64_t H = m.hidden_size, hd = m.head_dim, I = m.intermediate_size;
  b.dense("transformer.word_embeddings.weight", {m.vocab_size, H});
  bool new_arch = m.num_kv_heads > 1;
  for (int i = 0; i < m.num_layers; ++i) {
    std::string p = "transformer.h." + std::to_string(i) + ".";
    b.linear(p + "self_attention.query_key_value", (m.num_attention_heads + 2 * m.num_kv_heads) * hd, H);
    b.linear(p + "self_attention.dense", H, m.num_attention_heads * hd);
    b.linear(p + "mlp.dense_h_to_4h", I, H);
    b.linear(p + "mlp.dense_4h_to_h", H, I);
    for (const char* n : new_arch ? std::vector<const char*>{"ln_attn", "ln_mlp"} : std::vector<const char*>{"input_layernorm"}) {
      b.dense(p + n + ".weight", {H});
      b.dense(p + n + ".bias", {H});
    }
  }
  b.dense("transformer.ln_f.weight", {H});
  b.dense("transformer.ln_f.bias", {H});
  if (!m.tie_word_embeddings) b.dense("lm_head.weight", {m.vocab_size, H});
  return b.take();
}

namespace model_detail {

std::string glob_to_regex(std::string_view glob) {
  std::string re;
  for (char c : glob) re += c == '*' ? std::string(".*") : c == '.' ? std::string("\\.") : std::string(1, c);
  return re;
}

}  // namespace model_detail

namespace {

// transformers' headless decoder classes (AutoModel: the layers and the final norm, no LM head),
// which vLLM's registry serves as embedding models (registry.py _EMBEDDING_MODELS: "LlamaModel",
// "MistralModel", "Qwen2Model", "Gemma2Model", "Gemma3TextModel", "LlamaBidirectionalModel"). Their
// checkpoints hold no lm_head, and vLLM's pooling adapter (adapters.py _create_pooling_model_cls:
// "These are not used in pooling models") deletes the one its generative class would build.
bool headless_decoder(const std::string& architecture) {
  static const char* k_classes[] = {"LlamaModel", "MistralModel", "Qwen2Model", "Gemma2Model", "Gemma3TextModel",
                                    "LlamaBidirectionalModel"};
  return std::find(std::begin(k_classes), std::end(k_classes), architecture) != std::end(k_classes);
}

}  // namespace

WeightsInventory synthesize_weights(const ModelSpec& m) {
  if (m.architecture == "RWForCausalLM" || m.architecture == "FalconForCausalLM" || m.model_type == "falcon")
    return synthesize_falcon(m);
  Builder b(m);
  const std::int64_t H = m.hidden_size, V = m.vocab_size;
  const std::string& t = m.model_type;
  const bool nemotron = t == "nemotron_h";
  const bool wrapped = !m.raw_config.is_null() && m.architecture.find("ForConditionalGeneration") != std::string::npos &&
                       m.architecture.rfind("Qwen2", 0) != 0;
  const std::string root = nemotron ? "backbone." : wrapped ? "language_model.model." : "model.";
  const std::string lm_head = wrapped ? "language_model.lm_head.weight" : "lm_head.weight";

  b.dense(root + (nemotron ? "embeddings.weight" : "embed_tokens.weight"), {V, H});
  if (m.hidden_size_per_layer_input > 0) add_per_layer_inputs(b, m, root);
  for (int i = 0; i < m.num_layers; ++i) {
    std::string p = root + "layers." + std::to_string(i) + ".";
    LayerKind kind = m.layer_kind(i);
    if (nemotron) {
      b.dense(p + "norm.weight", {H});
      char c = m.hybrid && i < static_cast<int>(m.hybrid->layer_pattern.size()) ? m.hybrid->layer_pattern[static_cast<std::size_t>(i)] : '*';
      if (c == 'M') add_mamba(b, m, p + "mixer.");
      else if (c == '*') add_attention(b, m, p + "mixer.", false);
      else if (c == 'E' && m.moe) add_moe(b, m, p);  // an 'E' layer without MoE fields has no experts
      else {
        b.linear(p + "mixer.up_proj", m.intermediate_size, H);
        b.linear(p + "mixer.down_proj", H, m.intermediate_size);
      }
      continue;
    }
    switch (kind) {
      case LayerKind::mamba:
        if (m.hybrid && m.hybrid->short_conv) add_short_conv(b, m, p + "conv.");
        else add_mamba(b, m, p + "mamba.");
        break;
      case LayerKind::linear_attention: add_gated_deltanet(b, m, p + "linear_attn."); break;
      case LayerKind::no_attention: break;
      default: add_attention(b, m, p, kind == LayerKind::cross_attention, kind); break;
    }
    if (kind == LayerKind::cross_attention) {
      b.dense(p + "cross_attn_attn_gate", {1});
      b.dense(p + "cross_attn_mlp_gate", {1});
    }
    // MLP
    if (is_moe_layer(m, i)) {
      add_moe(b, m, p);
      if (m.moe->dense_mlp_in_every_layer) add_gated_mlp(b, p + "mlp.", H, m.moe->dense_intermediate_size);
    } else {
      std::int64_t I = m.moe ? m.moe->dense_intermediate_size : m.intermediate_size;
      if (m.double_wide_mlp && i >= m.num_layers - m.num_kv_shared_layers) I *= 2;
      std::string mlp = p + (starts_with(t, "llama4") ? "feed_forward." : "mlp.");
      if (t == "phi3") {
        b.linear(mlp + "gate_up_proj", 2 * I, H);
        b.linear(mlp + "down_proj", H, I);
      } else if (t == "opt" || t == "phi") {
        std::string f = t == "opt" ? p : mlp;  // OPT keeps fc1/fc2 at the layer level
        b.linear(f + "fc1", I, H);
        b.dense(f + "fc1.bias", {I});
        b.linear(f + "fc2", H, I);
        b.dense(f + "fc2.bias", {H});
      } else {
        add_gated_mlp(b, mlp, H, I);
      }
    }
    // Norms: Gemma 2/3 add pre/post feed-forward norms; OLMo 2 puts its norms after the blocks.
    if (t != "olmo2") b.dense(p + "input_layernorm.weight", {H});
    b.dense(p + "post_attention_layernorm.weight", {H});
    if (starts_with(t, "gemma2") || starts_with(t, "gemma3") || t == "olmo2") {
      if (t != "olmo2") b.dense(p + "pre_feedforward_layernorm.weight", {H});
      b.dense(p + "post_feedforward_layernorm.weight", {H});
    }
  }
  b.dense(root + (nemotron ? "norm_f.weight" : "norm.weight"), {H});
  if (!m.tie_word_embeddings && !headless_decoder(m.architecture)) {
    bool q = m.quantization && m.quantization->lm_head_quantized;
    if (q) b.linear(lm_head.substr(0, lm_head.size() - 7), V, H);
    else b.dense(lm_head, {V, H});
  }
  if (m.vision) add_vision(b, m);
  add_audio(b, m);
  return b.take();
}

std::int64_t parameter_count(const ModelSpec& model) {
  WeightsInventory synthesized;
  const WeightsInventory* inv = model.weights ? &*model.weights : nullptr;
  if (!inv) {
    synthesized = synthesize_weights(model);
    inv = &synthesized;
  }
  std::int64_t total = 0;
  for (const auto& t : inv->tensors) {
    const std::string& n = t.name;
    // Quantization side tensors hold no parameters of the model.
    if (n.find("scale") != std::string::npos || n.find("qzeros") != std::string::npos || n.find("g_idx") != std::string::npos ||
        n.find("weight_shape") != std::string::npos || n.find("absmax") != std::string::npos ||
        n.find("zero_point") != std::string::npos)
      continue;
    std::int64_t elems = 1;
    for (auto d : t.shape) elems *= d;
    // Packed containers: an I32 qweight / weight_packed holds 8 4-bit values; U8 fp4 blocks hold 2.
    if (t.dtype == "I32" && (n.find("qweight") != std::string::npos || n.find("weight_packed") != std::string::npos)) elems *= 8;
    else if (t.dtype == "U8" && (n.find("_blocks") != std::string::npos || n.find(".weight") != std::string::npos)) elems *= 2;
    total += elems;
  }
  return total;
}

}  // namespace headroom
