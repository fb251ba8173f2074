// Per-layer structure of the 2026 architectures: MiMo-V2 hybrid_layer_pattern, Kimi Delta
// Attention (linear_attn_config), Gemma 4 global heads and KV sharing, the DeepSeek Sparse
// Attention indexer (DeepSeek-V3.2, GLM-5) and DeepSeek-V4 compress ratios.
#include <algorithm>

#include "model/model_internal.h"

namespace headroom::model_detail {

Result<bool> read_layer_kinds_2026(const ConfigReader& t, ModelSpec& spec, std::vector<LayerKind>& kinds) {
  const int n = spec.num_layers;
  if (t.has("hybrid_layer_pattern")) {
    // MiMo-V2-Flash (vllm/model_executor/models/mimo_v2_flash.py): 1 = sliding window layer,
    // 0 = full attention. Its attention_chunk_size is the SWA kernel chunk, not Llama 4's
    // chunked local attention, so this branch comes first.
    HR_TRY(pattern, t.get_int_list("hybrid_layer_pattern"));
    if (static_cast<int>(pattern->size()) != n)
      return make_error(ErrorCode::parse_error,
                        "expected " + std::to_string(n) + " entries in \"" + t.display("hybrid_layer_pattern") +
                            "\" (one per layer), got " + std::to_string(pattern->size()),
                        t.where("hybrid_layer_pattern"));
    for (auto v : *pattern) kinds.push_back(v == 1 ? LayerKind::sliding_attention : LayerKind::full_attention);
    return true;
  }
  const bool lfm2 = spec.model_type == "lfm2" || spec.model_type == "lfm2_moe";
  if (lfm2 && !t.has("layer_types") && t.has("full_attn_idxs")) {
    // LFM2 / LFM2-MoE configs that list only their attention layers (0-based full_attn_idxs):
    // transformers' Lfm2Config derives layer_types from them, the others are short convolutions.
    HR_TRY(idxs, t.get_int_list("full_attn_idxs"));
    kinds.assign(static_cast<std::size_t>(n), LayerKind::mamba);
    for (auto i : *idxs) {
      if (i < 0 || i >= n)
        return make_error(ErrorCode::parse_error,
                          "expected \"" + t.display("full_attn_idxs") + "\" entries from 0 to " + std::to_string(n - 1) +
                              ", got " + std::to_string(i),
                          t.where("full_attn_idxs"));
      kinds[static_cast<std::size_t>(i)] = LayerKind::full_attention;
    }
    return true;
  }
  if (auto lac = t.child("linear_attn_config")) {
    // Kimi-Linear / Kimi K3 (vllm/model_executor/models/kimi_linear.py): kda_layers and
    // full_attn_layers list 1-based layer numbers; KDA layers keep a recurrent state.
    HR_TRY(kda, lac->get_int_list("kda_layers"));
    HR_TRY(heads, lac->get_int("num_heads"));
    HR_TRY(head_dim, lac->get_int("head_dim"));
    HR_TRY(conv, lac->get_int("short_conv_kernel_size"));
    if (!kda) return tl::unexpected(lac->missing({"kda_layers"}));
    if (!heads || !head_dim) return tl::unexpected(lac->missing({heads ? "head_dim" : "num_heads"}));
    kinds.assign(static_cast<std::size_t>(n), LayerKind::full_attention);
    for (auto one_based : *kda) {
      if (one_based < 1 || one_based > n)
        return make_error(ErrorCode::parse_error,
                          "expected \"" + lac->display("kda_layers") + "\" entries from 1 to " + std::to_string(n) +
                              ", got " + std::to_string(one_based),
                          lac->where("kda_layers"));
      kinds[static_cast<std::size_t>(one_based - 1)] = LayerKind::kda_attention;
    }
    if (!spec.hybrid) spec.hybrid = HybridConfig{};
    spec.hybrid->kda_num_heads = static_cast<int>(*heads);
    spec.hybrid->kda_head_dim = static_cast<int>(*head_dim);
    spec.hybrid->kda_conv_kernel = static_cast<int>(conv.value_or(4));
    return true;
  }
  return false;
}

// Gemma's text-config extras: per-layer embeddings, double-wide MLPs, and whether the model is a
// multimodal prefix-LM (use_bidirectional_attention "vision", read by vLLM's Gemma 4 convertor).
Result<void> read_gemma_text_extras(const ConfigReader& t, ModelSpec& spec) {
  // Gemma 4 / 3n per-layer embeddings (gemma4.py / gemma3n.py: embed_tokens_per_layer,
  // per_layer_model_projection, and per layer per_layer_input_gate / per_layer_projection), and
  // Gemma 4's double-wide MLPs on the KV-shared layers (Gemma4DecoderLayer: intermediate_size × 2
  // when use_double_wide_mlp and the layer is KV-shared).
  HR_TRY(ple_hidden, t.get_int("hidden_size_per_layer_input"));
  HR_TRY(ple_vocab, t.get_int("vocab_size_per_layer_input"));
  if (ple_hidden && *ple_hidden > 0 && *ple_hidden <= 65536) {
    spec.hidden_size_per_layer_input = static_cast<int>(*ple_hidden);
    spec.vocab_size_per_layer_input = ple_vocab && *ple_vocab > 0 ? std::min<std::int64_t>(*ple_vocab, std::int64_t{1} << 24) : spec.vocab_size;
  }
  HR_TRY(bidirectional, t.get_string("use_bidirectional_attention"));
  spec.mm_prefix_lm = bidirectional && *bidirectional == "vision";
  HR_TRY(double_wide, t.get_bool("use_double_wide_mlp"));
  spec.double_wide_mlp = double_wide.value_or(false) && spec.num_kv_shared_layers > 0;
  return {};
}

Result<bool> read_attention_2026(const ConfigReader& t, ModelSpec& spec) {
  // Caches whose sizes headroom does not know yet: an error names them rather than a prediction
  // that leaves them out.
  static const std::pair<const char*, const char*> k_unmodelled[] = {
      {"sparse_attention_config", "MiniMax M3 sparse attention (MSA) index caches"},
      {"indexer_kv_heads", "sparse GQA with an indexer (QSA) caches"},
      {"rswa_window", "reference sliding window (RSWA) caches"},
  };
  for (const auto& [key, what] : k_unmodelled)
    if (t.has(key)) return make_error(ErrorCode::unsupported, std::string("not modelled yet: ") + what, t.where(key));

  // Gemma 4 (vllm/model_executor/models/gemma4.py): full-attention layers use global_head_dim and,
  // with attention_k_eq_v, num_global_key_value_heads; K and V are still both cached.
  HR_TRY(global_head_dim, t.get_int("global_head_dim"));
  HR_TRY(global_kv, t.get_int("num_global_key_value_heads"));
  HR_TRY(k_eq_v, t.get_bool("attention_k_eq_v"));
  if (global_head_dim || (global_kv && k_eq_v.value_or(false))) {
    AttentionShape s;
    s.head_dim = static_cast<int>(global_head_dim.value_or(spec.head_dim));
    s.num_kv_heads = k_eq_v.value_or(false) && global_kv ? static_cast<int>(*global_kv) : spec.num_kv_heads;
    s.v_from_k = k_eq_v.value_or(false);
    spec.full_attention_shape = s;
  }
  HR_TRY(shared, t.get_int("num_kv_shared_layers"));
  if (shared && *shared > 0) {
    if (*shared >= spec.num_layers)
      return make_error(ErrorCode::parse_error,
                        "expected \"" + t.display("num_kv_shared_layers") + "\" below the layer count " +
                            std::to_string(spec.num_layers) + ", got " + std::to_string(*shared),
                        t.where("num_kv_shared_layers"));
    spec.num_kv_shared_layers = static_cast<int>(*shared);
  }
  if (auto extras = read_gemma_text_extras(t, spec); !extras) return tl::unexpected(extras.error());

  // MiMo-V2-Flash: K and V widths differ (head_dim 192, v_head_dim 128); the sliding layers have
  // their own head counts (swa_num_key_value_heads, swa_head_dim, swa_v_head_dim).
  HR_TRY(v_head_dim, t.get_int("v_head_dim"));
  if (v_head_dim && !spec.mla && *v_head_dim > 0 && *v_head_dim != spec.head_dim) spec.v_head_dim = static_cast<int>(*v_head_dim);
  HR_TRY(swa_kv, t.get_int("swa_num_key_value_heads"));
  if (swa_kv) {
    AttentionShape s;
    s.num_kv_heads = static_cast<int>(*swa_kv);
    HR_TRY(swa_head, t.get_int("swa_head_dim"));
    HR_TRY(swa_v, t.get_int("swa_v_head_dim"));
    s.head_dim = static_cast<int>(swa_head.value_or(spec.head_dim));
    s.v_head_dim = static_cast<int>(swa_v.value_or(0));
    spec.sliding_attention_shape = s;
  }

  // Qwen3.5 writes mamba_ssm_dtype; vLLM copies it into cache_config.mamba_ssm_cache_dtype when
  // that is "auto" (vllm/model_executor/models/config.py, Qwen3_5ForConditionalGenerationConfig).
  if (spec.hybrid && spec.hybrid->mamba_ssm_cache_dtype.empty()) {
    HR_TRY(ssm_dtype, t.get_string("mamba_ssm_dtype"));
    if (ssm_dtype) spec.hybrid->mamba_ssm_cache_dtype = *ssm_dtype;
  }

  if (spec.mla) {
    HR_TRY(index_dim, t.get_int("index_head_dim"));
    HR_TRY(index_heads, t.get_int("index_n_heads"));
    HR_TRY(index_topk, t.get_int("index_topk"));
    if (index_dim && *index_dim > 0) {
      spec.mla->index_head_dim = static_cast<int>(*index_dim);
      spec.mla->index_n_heads = static_cast<int>(index_heads.value_or(0));
      spec.mla->index_topk = static_cast<int>(index_topk.value_or(0));
      HR_TRY(types, t.get_string_list("indexer_types"));
      if (types) {
        if (static_cast<int>(types->size()) != spec.num_layers)
          return make_error(ErrorCode::parse_error,
                            "expected " + std::to_string(spec.num_layers) + " entries in \"" + t.display("indexer_types") +
                                "\" (one per layer), got " + std::to_string(types->size()),
                            t.where("indexer_types"));
        for (const auto& s : *types) spec.mla->indexer_cached.push_back(s != "shared");
      }
    }
    HR_TRY(ratios, t.get_int_list("compress_ratios"));
    if (ratios) {
      // The list may carry one more entry than layers (the MTP layer); only decoder layers count.
      if (static_cast<int>(ratios->size()) < spec.num_layers)
        return make_error(ErrorCode::parse_error,
                          "expected at least " + std::to_string(spec.num_layers) + " entries in \"" +
                              t.display("compress_ratios") + "\" (one per layer), got " + std::to_string(ratios->size()),
                          t.where("compress_ratios"));
      for (int i = 0; i < spec.num_layers; ++i) {
        auto r = (*ratios)[static_cast<std::size_t>(i)];
        if (r != 0 && r != 1 && r != 4 && r != 128)
          return make_error(ErrorCode::unsupported,
                            "not modelled yet: DeepSeek-V4 compress ratio " + std::to_string(r) +
                                " (vLLM knows 0, 1, 4 and 128)",
                            t.where("compress_ratios"));
        spec.mla->compress_ratios.push_back(static_cast<int>(r));
      }
    }
  } else if (t.has("compress_ratios") || (spec.model_type == "deepseek_v4")) {
    // DeepSeek-V4 writes no kv_lora_rank: its latent is head_dim (512) with a 64-wide RoPE part.
    HR_TRY(ratios, t.get_int_list("compress_ratios"));
    if (!ratios) return tl::unexpected(t.missing({"compress_ratios"}));
    MlaConfig m;
    HR_TRY(rope, t.get_int("qk_rope_head_dim"));
    HR_TRY(q_rank, t.get_int("q_lora_rank"));
    m.kv_lora_rank = spec.head_dim - static_cast<int>(rope.value_or(64));
    m.qk_rope_head_dim = static_cast<int>(rope.value_or(64));
    m.qk_nope_head_dim = m.kv_lora_rank;
    m.v_head_dim = spec.head_dim;
    m.q_lora_rank = static_cast<int>(q_rank.value_or(0));
    spec.mla = m;
    return read_attention_2026(t, spec);  // reads the ratios and the indexer into the new MlaConfig
  }
  return true;
}

}  // namespace headroom::model_detail
