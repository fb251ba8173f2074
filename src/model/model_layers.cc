// Per-layer structure of a config.json: attention kinds (sliding, chunked, cross, Mamba, linear),
// MoE placement, MLA and hybrid state sizes.
#include <algorithm>
#include <cmath>

#include "model/model_internal.h"

namespace headroom::model_detail {

namespace {

std::optional<LayerKind> kind_from_name(std::string_view s) {
  // GLM-5.x writes "deepseek_sparse_attention": MLA with a DSA indexer attends to every token.
  if (s == "full_attention" || s == "attention" || s == "global" || s == "deepseek_sparse_attention")
    return LayerKind::full_attention;
  if (s == "sliding_attention" || s == "local" || s == "sliding") return LayerKind::sliding_attention;
  if (s == "chunked_attention") return LayerKind::chunked_attention;
  if (s == "cross_attention") return LayerKind::cross_attention;
  if (s == "linear_attention") return LayerKind::linear_attention;
  if (s == "mamba" || s == "mamba2") return LayerKind::mamba;
  // LFM2's short convolutions: a state per request like Mamba's (read_lfm2 sizes it).
  if (s == "conv") return LayerKind::mamba;
  // Nemotron-3 Ultra layers_block_type: MLP / MoE layers hold no cache.
  if (s == "moe" || s == "mlp") return LayerKind::no_attention;
  return std::nullopt;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

Result<bool> read_layer_kinds(const ConfigReader& t, ModelSpec& spec) {
  const int n = spec.num_layers;
  const std::string& type = spec.model_type;
  HR_TRY(window, t.get_int("sliding_window"));
  // null or 0 turns the window off (vLLM treats sliding_window: 0 as disabled).
  if (window && *window > 0) spec.sliding_window = static_cast<int>(*window);

  std::vector<LayerKind> kinds;
  HR_TRY(special, read_layer_kinds_2026(t, spec, kinds));
  if (special) {
    // MiMo-V2 hybrid_layer_pattern or Kimi linear_attn_config: read by model_layers_2026.cc.
  } else if (t.has("hybrid_override_pattern")) {
    // Nemotron-H: one character per layer.
    const std::string& p = spec.hybrid->layer_pattern;
    if (static_cast<int>(p.size()) != n)
      return make_error(ErrorCode::parse_error,
                        "expected " + std::to_string(n) + " characters in \"hybrid_override_pattern\" (one per layer), got " +
                            std::to_string(p.size()),
                        t.where("hybrid_override_pattern"));
    for (char c : p) {
      switch (c) {
        case 'M': kinds.push_back(LayerKind::mamba); break;
        case '*': kinds.push_back(LayerKind::full_attention); break;
        case '-':
        case 'E': kinds.push_back(LayerKind::no_attention); break;
        default:
          return make_error(ErrorCode::parse_error,
                            std::string("expected M, *, - or E in \"hybrid_override_pattern\", got '") + c + "'",
                            t.where("hybrid_override_pattern"));
      }
    }
  } else if (t.has("layer_types") || t.has("layers_block_type")) {
    std::string key = t.has("layer_types") ? "layer_types" : "layers_block_type";
    HR_TRY(names, t.get_string_list(key));
    if (static_cast<int>(names->size()) != n)
      return make_error(ErrorCode::parse_error,
                        "expected " + std::to_string(n) + " entries in \"" + t.display(key) + "\" (one per layer), got " +
                            std::to_string(names->size()),
                        t.where(key));
    for (const auto& s : *names) {
      auto k = kind_from_name(s);
      if (!k) return make_error(ErrorCode::unsupported, "unknown layer type \"" + s + "\" in \"" + t.display(key) + "\"", t.where(key));
      kinds.push_back(*k);
    }
  } else if (t.has("full_attention_interval")) {
    // Qwen3-Next: every Nth layer is full attention, the others Gated DeltaNet.
    HR_TRY(every, t.get_int("full_attention_interval"));
    if (*every <= 0) return make_error(ErrorCode::parse_error, "expected a positive \"full_attention_interval\"", t.where("full_attention_interval"));
    for (int i = 0; i < n; ++i)
      kinds.push_back((i + 1) % *every == 0 ? LayerKind::full_attention : LayerKind::linear_attention);
  } else if (t.has("cross_attention_layers")) {
    HR_TRY(cross, t.get_int_list("cross_attention_layers"));
    kinds.assign(static_cast<std::size_t>(n), LayerKind::full_attention);
    for (auto i : *cross) {
      if (i < 0 || i >= n)
        return make_error(ErrorCode::parse_error,
                          "expected \"cross_attention_layers\" indices below " + std::to_string(n) + ", got " + std::to_string(i),
                          t.where("cross_attention_layers"));
      kinds[static_cast<std::size_t>(i)] = LayerKind::cross_attention;
    }
  } else if (t.has("attention_chunk_size")) {
    // Llama 4 (vllm/model_executor/models/llama4.py): RoPE layers use chunked local attention,
    // NoPE layers (no_rope_layers[i] == 0) attend globally. transformers' default no_rope_layers
    // makes every 4th layer NoPE.
    HR_TRY(chunk, t.get_int("attention_chunk_size"));
    spec.attention_chunk_size = static_cast<int>(*chunk);
    HR_TRY(rope_layers, t.get_int_list("no_rope_layers"));
    HR_TRY(interval, t.get_int("no_rope_layer_interval"));
    std::int64_t every = interval.value_or(4);
    for (int i = 0; i < n; ++i) {
      bool uses_rope = rope_layers && i < static_cast<int>(rope_layers->size()) ? (*rope_layers)[static_cast<std::size_t>(i)] != 0
                                                                               : (i + 1) % every != 0;
      kinds.push_back(uses_rope ? LayerKind::chunked_attention : LayerKind::full_attention);
    }
  } else if (type == "gemma2") {
    // Gemma 2 configs carry no pattern key; vLLM (gemma2.py) slides on even-index layers.
    if (spec.sliding_window)
      for (int i = 0; i < n; ++i) kinds.push_back(i % 2 == 0 ? LayerKind::sliding_attention : LayerKind::full_attention);
  } else if (type == "gemma3_text" || type == "gemma3" || t.has("sliding_window_pattern")) {
    // Gemma 3: every Nth layer is global (transformers Gemma3TextConfig, default N = 6).
    HR_TRY(pattern, t.get_int("sliding_window_pattern"));
    std::int64_t every = pattern.value_or(6);
    if (spec.sliding_window && every > 0)
      for (int i = 0; i < n; ++i)
        kinds.push_back((i + 1) % every == 0 ? LayerKind::full_attention : LayerKind::sliding_attention);
  } else if (starts_with(type, "qwen2") || starts_with(type, "qwen3") || t.has("use_sliding_window")) {
    // Qwen2/Qwen3 (transformers Qwen2Config.layer_types): the window is only used when
    // use_sliding_window is true, on layers at index >= max_window_layers.
    HR_TRY(use, t.get_bool("use_sliding_window"));
    if (!use.value_or(false)) {
      spec.sliding_window.reset();
    } else if (spec.sliding_window) {
      HR_TRY(max_window_layers, t.get_int("max_window_layers"));
      std::int64_t first = max_window_layers.value_or(0);
      for (int i = 0; i < n; ++i) kinds.push_back(i >= first ? LayerKind::sliding_attention : LayerKind::full_attention);
    }
  } else if (spec.sliding_window) {
    // Mistral style: one window on every layer.
    kinds.assign(static_cast<std::size_t>(n), LayerKind::sliding_attention);
  }

  if (kinds.empty() && spec.hybrid && (spec.hybrid->mamba_num_heads > 0 || spec.hybrid->linear_num_value_heads > 0))
    return make_error(ErrorCode::unsupported,
                      "not modelled yet: the layer layout of this hybrid model (expected hybrid_override_pattern, "
                      "layers_block_type, layer_types or full_attention_interval)",
                      t.origin());
  bool any_sliding = std::any_of(kinds.begin(), kinds.end(), [](LayerKind k) { return k == LayerKind::sliding_attention; });
  if (any_sliding && !spec.sliding_window)
    return make_error(ErrorCode::parse_error, "layers use sliding attention but \"sliding_window\" is not set", t.origin());
  bool all_full = std::all_of(kinds.begin(), kinds.end(), [](LayerKind k) { return k == LayerKind::full_attention; });
  if (all_full) kinds.clear();
  spec.layer_kinds = std::move(kinds);
  return true;
}

Result<bool> read_moe(const ConfigReader& t, ModelSpec& spec) {
  HR_TRY(experts, t.first_int({"num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"}));
  if (!experts || experts->second <= 0) return false;
  MoeConfig m;
  m.num_experts = static_cast<int>(experts->second);
  HR_TRY(topk, t.first_int({"num_experts_per_tok", "experts_per_token", "top_k_experts", "moe_topk", "num_experts_per_token", "moe_k"}));
  if (topk) m.experts_per_token = static_cast<int>(topk->second);
  HR_TRY(moe_inter, t.first_int({"moe_intermediate_size", "expert_intermediate_size"}));
  // Mixtral, gpt-oss and Llama 4 size the experts with intermediate_size.
  m.moe_intermediate_size = moe_inter ? static_cast<int>(moe_inter->second) : spec.intermediate_size;
  HR_TRY(shared, t.first_int({"n_shared_experts", "num_shared_experts"}));
  if (shared) m.num_shared_experts = static_cast<int>(shared->second);
  HR_TRY(shared_width, t.first_int({"shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"}));
  if (shared_width) m.shared_expert_intermediate_size = static_cast<int>(shared_width->second);
  HR_TRY(expert_dtype, t.get_string("expert_dtype"));
  m.routed_experts_fp4 = expert_dtype && *expert_dtype == "fp4";
  // LFM2-MoE (Lfm2MoeConfig) names it num_dense_layers: its first layers keep a dense MLP.
  HR_TRY(first_dense, t.first_int({"first_k_dense_replace", "num_dense_layers"}));
  if (first_dense) m.first_k_dense_replace = static_cast<int>(first_dense->second);
  const bool freq_is_list = t.has("moe_layer_freq") && t.json().at("moe_layer_freq").is_array();
  if (freq_is_list) {
    // MiMo-V2-Flash writes moe_layer_freq as one 0/1 per layer: 0 marks a dense layer.
    HR_TRY(flags, t.get_int_list("moe_layer_freq"));
    for (std::size_t i = 0; i < flags->size(); ++i)
      if ((*flags)[i] == 0) m.mlp_only_layers.push_back(static_cast<int>(i));
  } else {
    HR_TRY(freq, t.first_int({"moe_layer_freq", "decoder_sparse_step", "interleave_moe_layer_step"}));
    if (freq && freq->second > 0) m.moe_layer_freq = static_cast<int>(freq->second);
  }
  HR_TRY(mlp_only, t.get_int_list("mlp_only_layers"));
  if (mlp_only)
    for (auto i : *mlp_only) m.mlp_only_layers.push_back(static_cast<int>(i));
  HR_TRY(dense, t.get_int("intermediate_size_mlp"));
  m.dense_intermediate_size = dense ? static_cast<int>(*dense) : spec.intermediate_size;
  HR_TRY(mtp, t.get_int("num_nextn_predict_layers"));
  if (mtp) m.num_nextn_predict_layers = static_cast<int>(*mtp);
  HR_TRY(dense_beside, t.get_bool("enable_moe_block"));
  m.dense_mlp_in_every_layer = dense_beside.value_or(false);
  if (spec.model_type == "llama4_text" || spec.model_type == "llama4") {
    // Llama 4 MoE layers carry one shared expert as wide as the routed ones.
    if (!shared) m.num_shared_experts = 1;
  }
  spec.moe = m;
  return true;
}

Result<bool> read_mla(const ConfigReader& t, ModelSpec& spec) {
  HR_TRY(rank, t.get_int("kv_lora_rank"));
  if (!rank || *rank <= 0) return false;
  MlaConfig m;
  m.kv_lora_rank = static_cast<int>(*rank);
  HR_TRY(q_rank, t.get_int("q_lora_rank"));
  m.q_lora_rank = static_cast<int>(q_rank.value_or(0));
  HR_TRY(rope, t.get_int("qk_rope_head_dim"));
  HR_TRY(nope, t.get_int("qk_nope_head_dim"));
  HR_TRY(v, t.get_int("v_head_dim"));
  if (!rope) return tl::unexpected(t.missing({"qk_rope_head_dim"}));
  if (!nope) return tl::unexpected(t.missing({"qk_nope_head_dim"}));
  m.qk_rope_head_dim = static_cast<int>(*rope);
  m.qk_nope_head_dim = static_cast<int>(*nope);
  m.v_head_dim = static_cast<int>(v.value_or(*nope));
  spec.mla = m;
  return true;
}

// LFM2 (lfm2.py, transformers' Lfm2Config): short-convolution layers (ShortConv: in_proj to 3 ×
// conv_dim, a depthwise kernel of conv_L_cache, out_proj) among attention layers, and an MLP whose
// width block_auto_adjust_ff_dim reshapes as Lfm2MLP does: int(2 × I / 3), times
// block_ffn_dim_multiplier, rounded up to block_multiple_of. The convolution's state per request
// is (conv_L_cache − 1) × conv_dim / tp in the model dtype (mamba_utils.py short_conv_state_shape
// and short_conv_state_dtype).
Result<bool> read_lfm2(const ConfigReader& t, ModelSpec& spec) {
  HR_TRY(kernel, t.get_int("conv_L_cache"));
  HR_TRY(conv_dim, t.get_int("conv_dim"));
  HR_TRY(bias, t.get_bool("conv_bias"));
  HR_TRY(adjust, t.get_bool("block_auto_adjust_ff_dim"));
  HR_TRY(multiple, t.get_int("block_multiple_of"));
  HR_TRY(multiplier, t.get_number("block_ffn_dim_multiplier"));
  HR_TRY(ff_dim, t.get_int("block_ff_dim"));
  const std::int64_t k = kernel.value_or(3), dim = conv_dim.value_or(spec.hidden_size);
  if (k < 1 || k > 64 || dim < 1 || dim > (1 << 20))
    return make_error(ErrorCode::parse_error, "expected conv_L_cache in 1..64 and conv_dim in 1..2^20", t.where("conv_L_cache"));
  HybridConfig h;
  h.short_conv = true;
  h.conv_bias = bias.value_or(false);
  h.conv_kernel = static_cast<int>(k);
  h.mamba_intermediate_size = static_cast<int>(dim);
  spec.hybrid = h;
  if (!t.has("intermediate_size") && ff_dim) spec.intermediate_size = static_cast<int>(std::clamp<std::int64_t>(*ff_dim, 1, 1 << 24));
  // Lfm2MoeMLP takes intermediate_size as written (lfm2_moe.py); only Lfm2MLP reshapes it.
  if (adjust.value_or(false) && spec.model_type == "lfm2") {
    const std::int64_t m = std::clamp<std::int64_t>(multiple.value_or(256), 1, 1 << 16);
    auto width = static_cast<std::int64_t>(2.0 * spec.intermediate_size / 3.0);
    if (multiplier && std::isfinite(*multiplier) && *multiplier > 0 && *multiplier < 64)
      width = static_cast<std::int64_t>(*multiplier * static_cast<double>(width));
    spec.intermediate_size = static_cast<int>(m * ((width + m - 1) / m));
  }
  return true;
}

Result<bool> read_hybrid(const ConfigReader& t, ModelSpec& spec) {
  if (spec.model_type == "lfm2" || spec.model_type == "lfm2_moe") return read_lfm2(t, spec);
  HybridConfig h;
  bool any = false;
  auto set = [&](int& field, const std::vector<std::string>& keys) -> Result<bool> {
    HR_TRY(v, t.first_int(keys));
    if (v) {
      field = static_cast<int>(v->second);
      any = true;
    }
    return true;
  };
  // Nemotron-H names first, then Granite 4 / Bamba (mamba_d_*) names.
  for (auto [field, keys] : std::vector<std::pair<int*, std::vector<std::string>>>{
           {&h.mamba_num_heads, {"mamba_num_heads", "mamba_n_heads"}},
           {&h.mamba_head_dim, {"mamba_head_dim", "mamba_d_head"}},
           {&h.ssm_state_size, {"ssm_state_size", "mamba_d_state", "state_size"}},
           {&h.n_groups, {"n_groups", "mamba_n_groups"}},
           {&h.conv_kernel, {"conv_kernel", "mamba_d_conv"}},
           {&h.mamba_expand, {"mamba_expand", "expand"}},
           {&h.chunk_size, {"chunk_size", "mamba_chunk_size"}},
           {&h.linear_num_key_heads, {"linear_num_key_heads"}},
           {&h.linear_num_value_heads, {"linear_num_value_heads"}},
           {&h.linear_key_head_dim, {"linear_key_head_dim"}},
           {&h.linear_value_head_dim, {"linear_value_head_dim"}},
           {&h.linear_conv_kernel_dim, {"linear_conv_kernel_dim"}},
           {&h.full_attention_interval, {"full_attention_interval"}},
       }) {
    HR_TRY(ok, set(*field, keys));
    (void)ok;
  }
  HR_TRY(pattern, t.get_string("hybrid_override_pattern"));
  if (pattern) {
    h.layer_pattern = *pattern;
    any = true;
  }
  HR_TRY(ssm_dtype, t.get_string("mamba_ssm_cache_dtype"));
  if (ssm_dtype) h.mamba_ssm_cache_dtype = *ssm_dtype;
  // Only Mamba / linear-attention models count as hybrids; a lone chunk_size is not enough.
  bool mamba = h.mamba_num_heads > 0 || h.ssm_state_size > 0 || !h.layer_pattern.empty();
  bool linear = h.linear_num_value_heads > 0 || h.full_attention_interval > 0;
  if (!any || (!mamba && !linear)) return false;
  if (mamba) {
    if (h.mamba_expand == 0) h.mamba_expand = 2;
    h.mamba_intermediate_size = (h.mamba_num_heads > 0 && h.mamba_head_dim > 0) ? h.mamba_num_heads * h.mamba_head_dim
                                                                              : h.mamba_expand * spec.hidden_size;
    if (h.mamba_head_dim == 0 && h.mamba_num_heads > 0) h.mamba_head_dim = h.mamba_intermediate_size / h.mamba_num_heads;
    if (h.n_groups == 0) h.n_groups = 1;
  }
  spec.hybrid = h;
  return true;
}

}  // namespace headroom::model_detail
