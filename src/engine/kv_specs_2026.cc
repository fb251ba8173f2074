// KV specs of the 2026 sparse-attention models: the DeepSeek Sparse Attention indexer cache
// (DeepSeek-V3.2, GLM-5) and DeepSeek-V4's compressed MLA layout.
#include <algorithm>

#include "engine/kv_layers.h"

namespace headroom::engine {

namespace {

// vLLM's indexer keeps fp8 keys with one fp32 scale per quant block of 128 values
// (vllm/model_executor/models/deepseek_v2.py, Indexer.__init__: head_dim + head_dim // 128 * 4,
// dtype uint8; DeepseekV32IndexerCache.get_kv_cache_spec returns an MLAAttentionSpec).
constexpr int k_indexer_quant_block = 128;
// DeepSeek-V4 (vllm/models/deepseek_v4/attention.py, main 2026-08): the compressed MLA caches use
// block_size 256 logical tokens, fp8_ds_mla rows of 584 bytes (448 B NoPE + 128 B RoPE + 8 B
// scales) padded to a multiple of 576 bytes; the sliding-window cache (DeepseekV4SWACache) uses
// block_size 64 with the same rows and window sliding_window (128). The compressor state caches
// (compressor.py) are sliding-window MLA specs of their own.
constexpr int k_v4_block_size = 256;
constexpr int k_v4_swa_block_size = 64;
constexpr int k_v4_row_bytes = 584;
constexpr int k_v4_alignment = 576;
// Without fp8_ds_mla the MLA pages are aligned to 512 bytes (attention.py: alignment 576 for
// fp8_ds_mla, else 512); the compressor states are not aligned then.
constexpr int k_v4_plain_alignment = 512;
// compressor.py CompressorStateCache: "C4 compressor block shape [4, 2*512*2*4] -> block_size = 4",
// "C128 compressor block shape [8, 512*2*4] -> block_size = 8".
constexpr int k_v4_state_block_c4 = 4;
constexpr int k_v4_state_block_c128 = 8;

}  // namespace

bool has_indexer_cache(const ModelSpec& model, int i) {
  if (!model.mla || model.mla->index_head_dim <= 0) return false;
  const auto& cached = model.mla->indexer_cached;
  return cached.empty() || (i < static_cast<int>(cached.size()) && cached[static_cast<std::size_t>(i)]);
}

// MXFP4: 32 values share one ue8m0 scale byte.
constexpr int k_mxfp4_block = 32;

LayerKvSpec indexer_spec(const ModelSpec& model, int block_size) {
  LayerKvSpec s;
  s.type = KvSpecType::mla;
  s.latent = true;
  s.block_size = block_size;
  s.num_kv_heads = 1;
  const int d = model.mla ? model.mla->index_head_dim : 0;
  s.head_size = d + d / k_indexer_quant_block * 4;
  s.element_bytes = 1;
  return s;
}

KvLayers build_deepseek_v4_layers(const ModelSpec& model, const KvLayerInputs& in) {
  KvLayers out;
  out.layer_tuples = true;
  out.attention_block_size = k_v4_block_size;
  // DeepSeek-V4 on CUDA always stores fp8_ds_mla (attention.py converts any fp8 request and
  // rejects other dtypes); the bf16 layout is the FlashInfer path, rows of 512 × 2 bytes.
  const bool packed = in.kv_cache_dtype == "auto" || in.kv_cache_dtype.starts_with("fp8");
  const int alignment = packed ? k_v4_alignment : k_v4_plain_alignment;
  const int head = model.mla->kv_lora_rank + model.mla->qk_rope_head_dim;  // 512
  auto row = [&](LayerKvSpec& s) {
    s.latent = true;
    s.num_kv_heads = 1;
    s.head_size = head;
    s.alignment = alignment;
    if (packed) s.state_content_bytes = k_v4_row_bytes;
    else s.element_bytes = 2;
  };
  // CompressorStateCache (compressor.py): float32 kv and score states, 2 × coff × head_dim values
  // per token (coff = 2 with the overlapping ratio-4 windows, 1 for ratio 128), block 4 (ratio 4)
  // or 8 (ratio 128), window coff × ratio, padded to 576 bytes only with fp8_ds_mla.
  auto state = [&](int ratio, int head_dim) {
    const int coff = ratio == 4 ? 2 : 1;
    LayerKvSpec s;
    s.type = KvSpecType::sliding_window;
    s.latent = true;
    s.num_kv_heads = 1;
    s.head_size = 2 * coff * head_dim;
    s.element_bytes = 4;
    s.block_size = ratio == 4 ? k_v4_state_block_c4 : k_v4_state_block_c128;
    s.sliding_window = coff * ratio;
    s.alignment = packed ? k_v4_alignment : 0;
    return s;
  };
  for (int i = in.first_layer; i < in.end_layer; ++i) {
    LayerKvSpec swa;
    swa.type = KvSpecType::sliding_window;
    swa.block_size = k_v4_swa_block_size;
    swa.sliding_window = model.sliding_window.value_or(128);
    row(swa);
    out.specs.push_back(swa);
    const int ratio = model.mla->compress_ratios[static_cast<std::size_t>(i)];
    if (ratio <= 1) continue;  // sliding-window-only layer
    LayerKvSpec main;
    main.type = KvSpecType::mla;
    main.block_size = k_v4_block_size;
    main.compress_ratio = ratio;
    row(main);
    out.specs.push_back(main);
    out.specs.push_back(state(ratio, head));
    if (ratio == 4 && model.mla->index_head_dim > 0) {
      // DeepseekV4IndexerCache: the compressed indexer keys (fp8 rows of index_head_dim + 4 scale
      // bytes per 128; with --attention-config use_fp4_indexer_cache, MXFP4 rows of index_head_dim / 2
      // packed bytes + one ue8m0 scale byte per 32 values, 68 bytes at 128, #48993), same compress
      // ratio and alignment, with its own compressor state.
      LayerKvSpec idx = indexer_spec(model, k_v4_block_size);
      if (in.fp4_indexer_cache) {
        const int d = model.mla->index_head_dim;
        idx.head_size = d / 2 + d / k_mxfp4_block;
      }
      idx.compress_ratio = ratio;
      idx.alignment = alignment;
      out.specs.push_back(idx);
      out.specs.push_back(state(ratio, model.mla->index_head_dim));
    }
  }
  out.notes.push_back("DeepSeek-V4 layout: sliding-window MLA on every layer, compressed MLA (ratio 4 with an indexer, "
                      "ratio 128) and their float32 compressor states, packed into one block per layer tuple");
  if (in.fp4_indexer_cache)
    out.notes.push_back("indexer keys in MXFP4 rows (attention_config.use_fp4_indexer_cache): " +
                        std::to_string(model.mla->index_head_dim / 2 + model.mla->index_head_dim / k_mxfp4_block) +
                        " bytes per token instead of " +
                        std::to_string(model.mla->index_head_dim + model.mla->index_head_dim / k_indexer_quant_block * 4));
  return out;
}

}  // namespace headroom::engine
