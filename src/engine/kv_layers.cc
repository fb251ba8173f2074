#include "engine/kv_layers.h"

#include <algorithm>

#include "engine/weights.h"

namespace headroom::engine {

namespace {

bool is_state_kind(LayerKind k) {
  return k == LayerKind::mamba || k == LayerKind::linear_attention || k == LayerKind::kda_attention;
}

}  // namespace

KvQuant kv_quant_for(const std::string& kv_cache_dtype) {
  if (kv_cache_dtype == "int8_per_token_head" || kv_cache_dtype == "fp8_per_token_head") return KvQuant::per_token_head;
  if (kv_cache_dtype == "nvfp4" || kv_cache_dtype == "nvfp4_4over6") return KvQuant::nvfp4;
  return KvQuant::none;
}

Bytes mamba_state_bytes(const ModelSpec& model, LayerKind kind, int tp, double dtype_bytes) {
  if (!model.hybrid) return 0;
  const HybridConfig& h = *model.hybrid;
  const double ssm_bytes = h.mamba_ssm_cache_dtype.empty() ? dtype_bytes : dtype_bytes_or(h.mamba_ssm_cache_dtype, dtype_bytes);
  if (kind == LayerKind::kda_attention) {
    // Kimi Delta Attention (mamba_utils.py kda_state_shape / kda_state_dtype): short-conv states
    // for q, k and v ((3·H·d)/tp, K−1) in the model dtype, recurrent (H/tp, d, d) in float32.
    const double hd = static_cast<double>(h.kda_num_heads) * h.kda_head_dim;
    double conv = 3.0 * hd / tp * std::max(0, h.kda_conv_kernel - 1) * dtype_bytes;
    double recurrent = static_cast<double>(h.kda_num_heads) / tp * h.kda_head_dim * h.kda_head_dim * 4.0;
    return static_cast<Bytes>(conv + recurrent);
  }
  if (kind == LayerKind::linear_attention) {
    // Gated DeltaNet (mamba_utils.py): conv ((2·Hk·dk + Hv·dv)/tp, K−1), ssm (Hv/tp, dv, dk).
    double conv = static_cast<double>(2 * h.linear_num_key_heads * h.linear_key_head_dim +
                                      h.linear_num_value_heads * h.linear_value_head_dim) /
                  tp * std::max(0, h.linear_conv_kernel_dim - 1) * dtype_bytes;
    double ssm = static_cast<double>(h.linear_num_value_heads) / tp * h.linear_value_head_dim * h.linear_key_head_dim *
                 ssm_bytes;
    return static_cast<Bytes>(conv + ssm);
  }
  // Mamba-2: conv ((I + 2·G'·N)/tp, K−1), ssm (H/tp, P, N), G' = groups padded to a multiple of tp.
  int inter = h.mamba_intermediate_size > 0 ? h.mamba_intermediate_size : h.mamba_num_heads * h.mamba_head_dim;
  int groups = h.n_groups;
  if (groups % tp != 0) groups = static_cast<int>(round_up(groups, tp));
  double conv = static_cast<double>(inter + 2 * groups * h.ssm_state_size) / tp * std::max(0, h.conv_kernel - 1) * dtype_bytes;
  double ssm = static_cast<double>(h.mamba_num_heads) / tp * h.mamba_head_dim * h.ssm_state_size * ssm_bytes;
  return static_cast<Bytes>(conv + ssm);
}

KvLayers build_kv_layers(const ModelSpec& model, const KvLayerInputs& in) {
  if (model.mla && !model.mla->compress_ratios.empty()) return build_deepseek_v4_layers(model, in);
  KvLayers out;
  const int tp = std::max(1, in.tensor_parallel_size);
  LayerKvSpec attn;
  attn.block_size = in.block_size;
  attn.element_bytes = in.kv_element_bytes;
  attn.quant = kv_quant_for(in.kv_cache_dtype);
  if (model.mla) {
    // MLA stores the compressed latent + rope part once per token, not split by TP.
    attn.type = KvSpecType::mla;
    attn.num_kv_heads = 1;
    attn.head_size = model.mla->kv_lora_rank + model.mla->qk_rope_head_dim;
    // MLAAttentionSpec.real_page_size_bytes: fp8_ds_mla packs 656 bytes per token (512 fp8 NoPE +
    // 16 scale bytes + 128 bf16 RoPE bytes; kv_cache_interface.py, flashmla_sparse.py).
    if (in.kv_cache_dtype == "fp8_ds_mla") attn.state_content_bytes = 656;
  } else {
    attn.num_kv_heads = std::max(1, model.num_kv_heads / tp);
    attn.head_size = model.head_dim;
    attn.head_size_v = model.v_head_dim;
  }
  // Attention layers of one kind with their own KV shape (Gemma 4 global, MiMo-V2 sliding).
  auto shaped = [&](const std::optional<AttentionShape>& shape) {
    LayerKvSpec s = attn;
    if (shape && !model.mla) {
      s.num_kv_heads = std::max(1, shape->num_kv_heads / tp);
      s.head_size = shape->head_dim;
      s.head_size_v = shape->v_head_dim;
    }
    return s;
  };
  const LayerKvSpec full_attn = shaped(model.full_attention_shape);
  const LayerKvSpec sliding_attn = shaped(model.sliding_attention_shape);
  // Gemma 4 / 3n: the last num_kv_shared_layers layers read an earlier layer's cache and get no
  // spec of their own (kv_sharing_target_layer_name, gemma4.py).
  const int first_shared = model.num_kv_shared_layers > 0 ? model.num_layers - model.num_kv_shared_layers : model.num_layers;
  // Hybrid Mamba models: the attention block is raised until its page holds one Mamba state
  // (platforms/interface.py _align_hybrid_block_size).
  Bytes mamba_page = 0;
  for (int i = in.first_layer; i < in.end_layer; ++i) {
    LayerKind k = model.layer_kind(i);
    if (is_state_kind(k)) {
      mamba_page = std::max(mamba_page, mamba_state_bytes(model, k, tp, in.model_dtype_bytes));
    }
  }
  if (mamba_page == 0) {
    for (int i = 0; i < model.num_layers; ++i) {
      LayerKind k = model.layer_kind(i);
      if (is_state_kind(k))
        mamba_page = std::max(mamba_page, mamba_state_bytes(model, k, tp, in.model_dtype_bytes));
    }
  }
  if (mamba_page > 0) {
    LayerKvSpec one = full_attn;
    one.block_size = 1;
    Bytes a1 = one.page_bytes();
    int kernel = std::max(16, in.block_size);
    if (a1 > 0) {
      std::int64_t bs = kernel * ceil_div(mamba_page, kernel * a1);
      if (bs > attn.block_size) {
        attn.block_size = static_cast<int>(bs);
        out.notes.push_back("attention block size raised to " + std::to_string(bs) +
                            " tokens so a page holds one Mamba state");
      }
      mamba_page = attn.block_size * a1;  // the Mamba page is padded to exactly the attention page
    }
  }
  out.attention_block_size = attn.block_size;
  for (int i = in.first_layer; i < in.end_layer; ++i) {
    LayerKind k = model.layer_kind(i);
    if (i >= first_shared && k != LayerKind::mamba && k != LayerKind::no_attention && !is_state_kind(k)) continue;
    LayerKvSpec s = k == LayerKind::sliding_attention ? sliding_attn : full_attn;
    s.block_size = attn.block_size;
    switch (k) {
      case LayerKind::full_attention: break;
      case LayerKind::sliding_attention:
        if (in.hybrid_manager && model.sliding_window && *model.sliding_window > 0) {
          s.type = KvSpecType::sliding_window;
          s.sliding_window = *model.sliding_window;
        }
        break;
      case LayerKind::chunked_attention:
        if (in.hybrid_manager && model.attention_chunk_size) {
          s.type = KvSpecType::chunked_local;
          s.attention_chunk_size = *model.attention_chunk_size;
        }
        break;
      case LayerKind::cross_attention:
        // Without the hybrid manager (V0's CacheEngine) a cross-attention layer gets the same
        // per-layer cache as the others: one page of every layer per block.
        if (in.hybrid_manager) {
          s.type = KvSpecType::cross_attention;
          s.max_encoder_tokens = in.max_encoder_tokens;
        }
        break;
      case LayerKind::mamba:
      case LayerKind::linear_attention:
      case LayerKind::kda_attention:
        s = LayerKvSpec{};
        s.type = KvSpecType::mamba;
        s.block_size = attn.block_size;
        s.mamba_state_bytes = mamba_state_bytes(model, k, tp, in.model_dtype_bytes);
        s.page_size_padded = mamba_page;
        s.mamba_pages_per_request = in.mamba_pages_per_request;
        break;
      case LayerKind::no_attention: continue;
    }
    out.specs.push_back(s);
    // DeepSeek Sparse Attention: the layer's indexer keys are a second MLA-style cache.
    if (k == LayerKind::full_attention && model.mla && has_indexer_cache(model, i))
      out.specs.push_back(indexer_spec(model, attn.block_size));
  }
  return out;
}

}  // namespace headroom::engine
