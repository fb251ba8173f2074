#include "engine/weights.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "engine/bounded_memo.h"
#include "util/strings.h"

namespace headroom::engine {

namespace {

// How vLLM's parallel layers split a tensor across TP ranks (model_executor/layers/linear.py,
// vocab_parallel_embedding.py, fused_moe).
enum class Shard { replicated, column, row, row_bias, vocab, kv_heads, qkv_fused, expert };

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// Compares the last character before the rest: most names end otherwise, and this runs for every
// tensor of a checkpoint against dozens of suffixes.
bool ends_with_any(std::string_view s, std::initializer_list<std::string_view> suffixes) {
  if (s.empty()) return false;
  for (auto x : suffixes)
    if (x.size() <= s.size() && x.back() == s.back() && s.ends_with(x)) return true;
  return false;
}

// The module part of a parameter name: "model.layers.3.mlp.down_proj" for
// "model.layers.3.mlp.down_proj.weight_scale".
std::string_view module_of(std::string_view name) {
  auto dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(0, dot);
}

std::string_view leaf_of(std::string_view name) {
  auto dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

bool is_vision(std::string_view n) {
  // Encoder towers and projectors by the names vLLM's model files give them: Qwen-VL / Omni
  // (visual., audio_tower), LLaVA / Gemma 3 / Mistral 3 / Llama 4 (vision_tower, vision_model,
  // multi_modal_projector), Gemma 3n (embed_vision, embed_audio, audio_tower), InternVL (mlp1.),
  // MiniCPM-V (vpm., resampler.), Phi-3.5-vision and Phi-4-multimodal (img_processor,
  // embed_tokens_extend), GLM-4.xV (vision.), Idefics3 / SmolVLM (connector.modality_projection),
  // PaddleOCR-VL (mlp_AR.), DeepSeek-OCR / DeepSeek-VL2 (sam_model., projector.layers, view_seperator,
  // vision.), Ovis2.5 (visual_tokenizer., vte.), Molmo (vision_backbone.: its resblocks.N are not
  // decoder layers).
  for (auto p : {"vision_tower", "visual.", "vision_model", "multi_modal_projector", "mm_projector", "vision_encoder",
                 "image_newline", "audio_tower", "patch_merger", "vision_embed", "vision_language_adapter",
                 "embed_vision", "vision_projection", "embed_audio", "audio_model", "vpm.", "resampler.",
                 "img_processor", "embed_tokens_extend", "transformer.vision.", "connector.modality_projection",
                 "mlp_AR.", "sam_model.", "projector.layers", "view_seperator", "visual_tokenizer.", "vision_backbone."})
    if (contains(n, p)) return true;
  // Ovis2.5's visual embedding table; DeepSeek-VL2's timm tower (vision.blocks.N: not decoder layers);
  // MiniCPM-o's Whisper encoder and its projection (apm.layers.N: not decoder layers).
  return n.starts_with("vte.") || n.starts_with("vision.") || n.starts_with("apm.") || n.starts_with("audio_projection_layer.");
}

Shard classify(std::string_view name, const std::vector<std::int64_t>& shape) {
  std::string_view mod = module_of(name);
  std::string_view leaf = leaf_of(name);
  const bool is_bias = leaf == "bias";
  // Llama 3.2 Vision's position and tile tables are plain nn.Embedding (mllama.py): whole on every
  // rank, rows not padded.
  if (contains(name, "positional_embedding.")) return Shard::replicated;
  // Gemma 3n's towers are transformers' and timm's modules (gemma3n_mm.py AutoModel.from_config),
  // not vLLM's parallel layers: whole on every rank.
  // So are Phi-4-multimodal's speech encoder and projections (phi4mm_utils.py's nn.Linear / Conv),
  // and MiniCPM-o's (minicpmo.py: MiniCPMWhisperEncoder is transformers' WhisperEncoder; its
  // MultiModalProjector is two nn.Linear).
  // Gemma 4's audio tower too (gemma4_mm.py: AutoModel.from_config, its nn.Linear layers replaced by
  // ReplicatedLinear through recursive_replace_linear): audio_tower.layers.N.feed_forward1 ... and
  // audio_tower.output_proj.
  if (contains(name, "audio_tower.conformer.") || contains(name, "audio_tower.subsample_conv_projection.") ||
      (contains(name, "audio_tower.layers.") &&
       (contains(name, ".feed_forward") || contains(name, ".lconv1d.") || contains(name, ".self_attn.") ||
        contains(name, ".norm_pre_attn") || contains(name, ".norm_post_attn") || contains(name, ".norm_out"))) ||
      contains(name, "audio_tower.output_proj.") ||
      contains(name, "timm_model.") || contains(name, "audio_embed.encoder.") || contains(name, "audio_embed.audio_projection") ||
      name.starts_with("apm.") || name.starts_with("audio_projection_layer."))
    return Shard::replicated;
  // Phi-4-multimodal's towers live under embed_tokens_extend: they are not the vocabulary table.
  const bool vocab_table = contains(name, "embed_tokens") && !contains(name, "embed_tokens_extend");
  if (vocab_table || contains(name, "word_embeddings") || ends_with_any(mod, {"wte", "tok_embeddings", "embedding"}) ||
      contains(mod, "lm_head") || mod.ends_with("output") || contains(name, "embed_out"))
    return Shard::vocab;
  const bool row_module =
      ends_with_any(mod, {"o_proj", "down_proj", "dense", "c_proj", "fc2", "out_proj", "w2", "dense_4h_to_h", "wo"});
  if (shape.size() <= 1 && !contains(mod, "experts")) {
    if (is_bias) {
      if (row_module) return Shard::row_bias;  // row-parallel bias is replicated
    } else if (ends_with_any(mod, {"mixer", "linear_attn"}) && (leaf == "A_log" || leaf == "D" || leaf == "dt_bias")) {
      return Shard::column;  // per-head Mamba / GDN parameters
    } else if (leaf == "weight") {
      return Shard::replicated;  // norms
    }
    // Quantisation sidecars (weight_scale, input_scale, ...) follow their module below.
  }
  if (contains(mod, "experts") && !contains(mod, "shared_expert")) return Shard::expert;
  // MoE routers and MLA down-projections are ReplicatedLinear.
  if (ends_with_any(mod, {".gate", "router", "q_a_proj", "kv_a_proj_with_mqa", "fused_qkv_a_proj", "shared_expert_gate",
                          "e_score_correction", "indexer.weights_proj"}))
    return Shard::replicated;
  if (ends_with_any(mod, {"k_proj", "v_proj"})) return Shard::kv_heads;
  if (ends_with_any(mod, {"qkv_proj", "query_key_value", "c_attn", "Wqkv", "attn.qkv", "self_attn.qkv"})) return Shard::qkv_fused;
  if (row_module) return is_bias ? Shard::row_bias : Shard::row;
  if (ends_with_any(mod, {"q_proj", "q_b_proj", "kv_b_proj", "gate_proj", "up_proj", "gate_up_proj", "w1", "w3", "fc1",
                          "dense_h_to_4h", "in_proj", "in_proj_qkvz", "in_proj_ba", "conv1d", "c_fc", "wq"}))
    return Shard::column;
  if (contains(mod, "mixer.norm") || contains(mod, "linear_attn.norm")) return Shard::column;
  return shape.size() >= 2 ? Shard::column : Shard::replicated;
}

// The language-model layer a tensor belongs to ("model.layers.3.mlp..." → 3); nullopt for
// tensors outside the layers and for a tower's own layers. `memo` remembers the tower check of
// the last name's prefix: a checkpoint's tensors share a handful of prefixes.
struct PrefixMemo {
  std::string_view prefix;
  bool vision = false;
};

std::optional<int> layer_index(std::string_view name, PrefixMemo* memo = nullptr) {
  const auto number = find_layer_number(name);
  if (!number) return std::nullopt;
  // Only the language model's layers count for pipeline stages.
  const std::string_view prefix = name.substr(0, number->key + 1);
  bool vision = false;
  if (memo && memo->prefix == prefix) {
    vision = memo->vision;
  } else {
    vision = is_vision(prefix);
    if (memo) *memo = PrefixMemo{prefix, vision};
  }
  if (vision) return std::nullopt;
  return number->layer;
}

// Tensors of Phi-4-multimodal's release checkpoint that phi4mm.py does not load: the vision and
// speech LoRA adapters beside each base layer (AutoWeightsLoader(skip_substrs=["lora"]); they are
// served through --enable-lora), and the SigLIP layers and post-LayerNorm it does not build (26 of
// 27 layers for layer_idx −2, require_post_norm=False; the tower's load_weights "omit[s] layers
// when num_hidden_layers_override is set" and post_layernorm when it is None).
// Gemma 4's full-attention layers with attention_k_eq_v have no v_proj in the checkpoint; vLLM's
// QKVParallelLinear keeps the V slot and loads k_proj into it as well (gemma4.py Gemma4Attention:
// "k_eq_v layers load K weights into both K and V slots"), so k_proj's tensors are on the GPU twice.
bool k_fills_v(const ModelSpec& model, int layer, std::string_view name) {
  return model.full_attention_shape && model.full_attention_shape->v_from_k &&
         model.layer_kind(layer) == LayerKind::full_attention && contains(name, "self_attn.k_proj.");
}

// The share of a layer's K/V projections one TP rank holds: its KV heads split over the ranks, or
// replicated on each when there are fewer heads than ranks (QKVParallelLinear's
// num_kv_head_replicas). Layers with their own shape (Gemma 4's full-attention layers, MiMo-V2's
// sliding ones) count their own heads.
double layer_kv_fraction(const ModelSpec& model, int layer, int tp) {
  const LayerKind kind = model.layer_kind(layer);
  const auto& own = kind == LayerKind::full_attention      ? model.full_attention_shape
                    : kind == LayerKind::sliding_attention ? model.sliding_attention_shape
                                                           : std::optional<AttentionShape>{};
  const int heads = own && own->num_kv_heads > 0 ? own->num_kv_heads : std::max(1, model.num_kv_heads);
  return 1.0 / std::min(tp, heads);
}

bool phi4mm_not_loaded(std::string_view name, const ModelSpec& model) {
  if (contains(name, "lora")) return true;
  const auto at = name.find("img_processor.");
  if (at == std::string_view::npos || !model.vision) return false;
  const std::string_view rest = name.substr(at + std::string_view("img_processor.").size());
  if (rest.starts_with("post_layernorm.")) return true;
  if (!rest.starts_with("encoder.layers.")) return false;
  const auto number = find_layer_number(rest);
  return number && number->layer >= model.vision->depth;
}

bool is_float_dtype(const std::string& dtype) {
  return dtype == "BF16" || dtype == "F16" || dtype == "F32" || dtype == "F64";
}

bool is_scale_like(std::string_view name) {
  std::string_view leaf = leaf_of(name);
  return contains(leaf, "scale") || leaf == "absmax" || leaf == "g_idx" || contains(leaf, "zero") || leaf == "weight_shape";
}

// Linear weights that online quantisation (--quantization fp8 / bitsandbytes) converts.
bool is_quantizable_linear(std::string_view name, const std::vector<std::int64_t>& shape) {
  if (shape.size() < 2 || leaf_of(name) != "weight") return false;
  if (is_vision(name)) return false;
  std::string_view mod = module_of(name);
  if (contains(mod, "embed") || contains(mod, "lm_head") || ends_with_any(mod, {".gate", "router"})) return false;
  return layer_index(name).has_value();
}

}  // namespace

std::optional<LayerNumber> find_layer_number(std::string_view name) {
  for (std::string_view key : {".layers.", ".h.", ".blocks.", ".layer."}) {
    const auto pos = name.find(key);
    if (pos == std::string_view::npos) continue;
    const std::size_t begin = pos + key.size();
    std::size_t end = begin;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    if (end == begin) continue;
    int layer = 0;
    if (std::from_chars(name.data() + begin, name.data() + end, layer).ec != std::errc())
      layer = std::numeric_limits<int>::max();
    return LayerNumber{layer, pos, begin, end};
  }
  return std::nullopt;
}

double dtype_bytes(const std::string& dtype_in) {
  std::string d = util::to_lower(dtype_in);
  if (d == "bf16" || d == "bfloat16" || d == "f16" || d == "float16" || d == "half" || d == "i16" || d == "u16") return 2;
  if (d == "f32" || d == "float32" || d == "float" || d == "i32" || d == "u32") return 4;
  if (d == "f64" || d == "i64" || d == "u64" || d == "float64") return 8;
  if (d == "i8" || d == "u8" || d == "bool" || d.starts_with("f8") || d.starts_with("fp8") || d == "int8") return 1;
  if (d == "f4" || d == "fp4" || d == "f4_e2m1") return 0.5;
  return 0;
}

double dtype_bytes_or(const std::string& dtype, double fallback) {
  double b = dtype_bytes(dtype);
  return b > 0 ? b : fallback;
}

std::optional<std::vector<int>> parse_pp_layer_partition(const std::string& text) {
  std::vector<int> out;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    std::string item = util::trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    std::string digits;
    std::size_t i = 0;
    bool negative = false;
    if (i < item.size() && (item[i] == '+' || item[i] == '-')) negative = item[i++] == '-';
    for (; i < item.size(); ++i) {
      const char c = item[i];
      if (c >= '0' && c <= '9') digits += c;
      else if (c == '_' && !digits.empty() && i + 1 < item.size() && item[i + 1] >= '0' && item[i + 1] <= '9') continue;
      else return std::nullopt;
    }
    if (digits.empty() || digits.size() > 9) return std::nullopt;
    const int n = std::stoi(digits);
    out.push_back(negative ? -n : n);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<std::pair<int, int>> pp_layer_ranges(int num_layers, int pp, const std::vector<int>& partition) {
  if (!partition.empty() && static_cast<int>(partition.size()) == pp) {
    std::vector<std::pair<int, int>> out;
    int start = 0;
    for (int c : partition) {
      out.emplace_back(start, start + c);
      start += c;
    }
    return out;
  }
  std::vector<int> counts(static_cast<std::size_t>(pp), num_layers / pp);
  int remainder = num_layers % pp;
  // The remainder goes to stages pp-2, pp-3, ... (all but the last, from the back).
  for (int s = pp - 2; remainder > 0 && s >= 0; --s, --remainder) counts[static_cast<std::size_t>(s)]++;
  if (remainder > 0) counts[static_cast<std::size_t>(pp - 1)] += remainder;  // pp == 1
  std::vector<std::pair<int, int>> out;
  int start = 0;
  for (int c : counts) {
    out.emplace_back(start, start + c);
    start += c;
  }
  return out;
}

namespace {

// Rotary cos/sin caches (rotary_embedding/: get_rope keeps one module per distinct configuration,
// shared by the layers that use it, on every rank; base.py builds [max_position, rotary_dim] in
// float32 and keeps it in the model dtype; linear / dynamic / YaRN scaling multiply the rows by the
// factor; M-RoPE by 4 from v0.7.2, WeightPlan::rope_cache_positions_factor). Models with a rope per
// layer type build one more table:
// - Gemma 3 and 3n (gemma3.py): sliding layers use rope_local_base_freq without scaling, global
//   layers the config's rope: [max_position, head_dim] beside the scaled table (#33911 logs the
//   global one's 1,048,576 rows for Gemma 3's linear factor 8).
// - Gemma 4 (gemma4.py): sliding layers [max_position, head_dim]; full-attention layers' proportional
//   rope (gemma4_rope.py) is as wide as global_head_dim, whatever its partial_rotary_factor.
Bytes rope_cache_bytes(const ModelSpec& model, const WeightPlan& plan, double target_bytes) {
  if (model.max_position_embeddings <= 0) return 0;
  const int rotary_dim = model.mla ? model.mla->qk_rope_head_dim : model.head_dim;
  std::int64_t max_pos = model.max_position_embeddings;
  if (model.rope_scaling && (model.rope_scaling->type == "yarn" || model.rope_scaling->type == "linear" ||
                             model.rope_scaling->type == "dynamic")) {
    std::int64_t base = model.rope_scaling->original_max_position_embeddings.value_or(max_pos);
    max_pos = static_cast<std::int64_t>(static_cast<double>(base) * model.rope_scaling->factor);
  }
  max_pos *= std::max(1, plan.rope_cache_positions_factor);
  double rows_x_width = static_cast<double>(max_pos) * rotary_dim * model.partial_rotary_factor;
  const std::string& type = model.model_type;
  if (type.starts_with("gemma3")) {
    rows_x_width += static_cast<double>(model.max_position_embeddings) * model.head_dim;
  } else if (type.starts_with("gemma4") && model.full_attention_shape && model.full_attention_shape->head_dim > 0) {
    rows_x_width += static_cast<double>(model.max_position_embeddings) * model.full_attention_shape->head_dim;
  }
  return static_cast<Bytes>(rows_x_width * target_bytes);
}

// ROCm, unquantized fused MoE (layers/fused_moe UnquantizedFusedMoEMethod._maybe_pad_weight, #14454,
// VLLM_ROCM_MOE_PADDING on by default): after loading, w13 [E, 2I, H] and w2 [E, H, I] are padded
// by 256 bytes at the end of each row whose length in bytes is a multiple of 512, and sliced back;
// the slice keeps the padded storage. w13's rows are the hidden size, w2's the per-rank expert
// width. The factor by which one expert tensor grows.
double rocm_moe_row_factor(const ModelSpec& model, const WeightPlan& plan, std::string_view name, double element_bytes) {
  if (!plan.rocm_moe_padding || !model.moe || element_bytes <= 0) return 1.0;
  const bool down = contains(name, "down_proj") || contains(name, ".w2");
  const int split = plan.expert_parallel_size > 1 ? 1 : std::max(1, plan.tensor_parallel_size);
  const double row = element_bytes * (down ? model.moe->moe_intermediate_size / split : model.hidden_size);
  if (row <= 0 || std::fmod(row, 512.0) != 0) return 1.0;
  return (row + 256.0) / row;
}

// Tensors a checkpoint holds that vLLM's model class does not load here.
bool not_loaded(std::string_view name, const ModelSpec& model, const WeightPlan& plan) {
  // Omni checkpoints: vLLM serves the thinker (Qwen3OmniMoeThinkerForConditionalGeneration,
  // Qwen2_5OmniThinkerForConditionalGeneration), whose loader skips the talker's and the
  // speech decoder's weights.
  if (name.starts_with("talker.") || name.starts_with("code2wav.") || name.starts_with("token2wav.")) return true;
  if (model.architecture == "Phi4MMForCausalLM" && phi4mm_not_loaded(name, model)) return true;
  // Ultravox: a Whisper checkpoint's decoder and proj_out are not loaded (ultravox.py's
  // hf_to_vllm_mapper maps only audio_tower.model.encoder.).
  if (model.architecture == "UltravoxModel" &&
      ((name.starts_with("audio_tower.model.") && !name.starts_with("audio_tower.model.encoder.")) ||
       name.starts_with("audio_tower.proj_out.")))
    return true;
  // MiniCPM-o's speech decoder: minicpmo.py loads with AutoWeightsLoader(skip_prefixes=["tts"]).
  if (model.architecture == "MiniCPMO" && name.starts_with("tts.")) return true;
  // Text-only mode: every modality limited to 0 (or --language-model-only) from v0.10.1 on, the
  // model classes leave their towers unbuilt and skip their weights (#22299).
  if (plan.skip_mm_towers && (is_vision(name) || name.starts_with("mlp1."))) return true;
  if (plan.skip_image_tower && (contains(name, "vision_tower.") || contains(name, "embed_vision."))) return true;
  // The pooling runner's adapter deletes the generative class's LM head (adapters.py).
  if (plan.pooling_runner && (name.starts_with("lm_head.") || name.starts_with("language_model.lm_head."))) return true;
  // Qwen2-Audio's multi_modal_projector is its audio tower's; so is Ultravox's (ultravox.py builds
  // it inside _mark_tower_model(vllm_config, "audio")).
  const bool audio_projector = model.architecture == "Qwen2AudioForConditionalGeneration" || model.architecture == "UltravoxModel";
  return plan.skip_audio_tower &&
         (contains(name, "audio_tower.") || contains(name, "embed_audio.") || name.starts_with("apm.") ||
          name.starts_with("audio_projection_layer.") || (audio_projector && name.starts_with("multi_modal_projector.")));
}

}  // namespace

std::vector<StageWeights> stage_weights(const ModelSpec& model, const WeightsInventory& inventory, const WeightPlan& plan) {
  const int tp = std::max(1, plan.tensor_parallel_size);
  const int pp = std::max(1, plan.pipeline_parallel_size);
  const int ep = std::max(1, plan.expert_parallel_size);
  const double target_bytes = dtype_bytes(plan.dtype.empty() ? "bfloat16" : plan.dtype);
  auto ranges = pp_layer_ranges(model.num_layers, pp, plan.layer_partition);
  std::vector<StageWeights> stages(static_cast<std::size_t>(pp));
  for (int s = 0; s < pp; ++s) {
    stages[static_cast<std::size_t>(s)].first_layer = ranges[static_cast<std::size_t>(s)].first;
    stages[static_cast<std::size_t>(s)].end_layer = ranges[static_cast<std::size_t>(s)].second;
  }
  const int total_kv = std::max(1, model.num_kv_heads);
  const double kv_fraction = 1.0 / std::min(tp, total_kv);
  const double q_dims = static_cast<double>(model.num_attention_heads) * model.head_dim;
  const double kv_dims = 2.0 * total_kv * model.head_dim;
  // MXFP4 MoE kernels pad the expert matrices after loading (model_executor/layers/quantization/
  // mxfp4.py, memory model §4.3): Marlin on Ampere pads hidden to 256 and the per-rank intermediate
  // to 128; Hopper's Triton kernels pad hidden to 256; Blackwell's TRT-LLM kernels pad both to 256.
  double mxfp4_expert_factor = 1.0;
  if (model.quantization && model.quantization->method == "mxfp4" && model.moe && model.moe->moe_intermediate_size > 0) {
    const std::string& arch = plan.gpu_architecture;
    const std::int64_t h = model.hidden_size, inter = model.moe->moe_intermediate_size / (ep > 1 ? 1 : tp);
    std::int64_t h_pad = round_up(h, 256), i_pad = inter;
    if (arch == "Ampere" || arch == "Ada" || arch == "Turing") i_pad = round_up(inter, 128);
    else if (arch == "Blackwell") i_pad = round_up(inter, 256);
    mxfp4_expert_factor = static_cast<double>(h_pad * i_pad) / static_cast<double>(h * inter);
  }
  bool has_lm_head = false;
  std::vector<double> stage_bytes(static_cast<std::size_t>(pp), 0.0);
  std::vector<double> stage_layer_bytes(static_cast<std::size_t>(pp), 0.0);
  std::vector<double> stage_tower_bytes(static_cast<std::size_t>(pp), 0.0);
  double embedding_rank_bytes = 0;

  PrefixMemo prefixes;
  for (const auto& t : inventory.tensors) {
    std::string_view name = t.name;
    auto layer = layer_index(name, &prefixes);
    // MTP / next-token-prediction layers beyond num_hidden_layers are not loaded without a
    // speculative config (deepseek_v2.py skips them).
    if (layer && *layer >= model.num_layers) continue;
    if (contains(name, "mtp.") || contains(name, "nextn")) continue;
    if (not_loaded(name, model, plan)) continue;
    double bytes = static_cast<double>(t.bytes);
    std::int64_t elements = 1;
    for (auto d : t.shape) elements *= d;
    // dtype conversion at load: floating-point parameters become the model dtype; quantised data
    // and scales keep their storage type.
    if (is_float_dtype(t.dtype) && !is_scale_like(name) && target_bytes > 0) {
      bytes = static_cast<double>(elements) * target_bytes;
      if (plan.online_quantization == "fp8" && is_quantizable_linear(name, t.shape)) bytes = static_cast<double>(elements);
      // bitsandbytes NF4: 4 bits per weight + one fp32 absmax per 64 weights.
      if (plan.online_quantization == "bitsandbytes" && is_quantizable_linear(name, t.shape))
        bytes = static_cast<double>(elements) * (0.5 + 4.0 / 64.0);
    }
    // (A synthesised inventory already holds the V slot, synthesize_weights.cc.)
    if (inventory.exact && layer && k_fills_v(model, *layer, name)) bytes *= 2;
    Shard shard = classify(name, t.shape);
    double per_rank = bytes;
    switch (shard) {
      case Shard::replicated:
      case Shard::row_bias: break;
      case Shard::column:
      case Shard::row: per_rank = bytes / tp; break;
      case Shard::kv_heads: per_rank = bytes * (layer ? layer_kv_fraction(model, *layer, tp) : kv_fraction); break;
      case Shard::qkv_fused:
        per_rank = bytes * (q_dims / (q_dims + kv_dims)) / tp + bytes * (kv_dims / (q_dims + kv_dims)) * kv_fraction;
        break;
      case Shard::expert:
        per_rank = (ep > 1 ? bytes / ep : bytes / tp) * mxfp4_expert_factor;
        if (is_float_dtype(t.dtype)) per_rank *= rocm_moe_row_factor(model, plan, name, target_bytes);
        break;
      case Shard::vocab: {
        // Rows padded to a multiple of 64 globally, then split across TP ranks.
        std::int64_t rows = t.shape.empty() ? 1 : t.shape[0];
        double padded = static_cast<double>(round_up(rows, 64)) / static_cast<double>(rows);
        per_rank = bytes * padded / tp;
        break;
      }
    }
    bool is_head = contains(module_of(name), "lm_head") || module_of(name).ends_with("output") || contains(name, "embed_out");
    if (is_head) has_lm_head = true;
    if (shard == Shard::vocab && !is_head) embedding_rank_bytes += per_rank;
    int stage = 0;
    if (layer) {
      for (int s = 0; s < pp; ++s)
        if (*layer >= ranges[static_cast<std::size_t>(s)].first && *layer < ranges[static_cast<std::size_t>(s)].second) stage = s;
    } else if (is_head || (contains(name, "norm") && !is_vision(name) && !contains(name, "embed"))) {
      stage = pp - 1;  // final norm and LM head live on the last stage
    }
    stage_bytes[static_cast<std::size_t>(stage)] += per_rank;
    if (layer) stage_layer_bytes[static_cast<std::size_t>(stage)] += per_rank;
    if (is_vision(name) || name.starts_with("mlp1.")) stage_tower_bytes[static_cast<std::size_t>(stage)] += per_rank;
  }
  // Tied embeddings with PP > 1: the last stage loads its own LM head from the embedding.
  if (!has_lm_head && pp > 1) stage_bytes[static_cast<std::size_t>(pp - 1)] += embedding_rank_bytes;

  const Bytes rope = rope_cache_bytes(model, plan, target_bytes);
  for (int s = 0; s < pp; ++s) {
    stages[static_cast<std::size_t>(s)].rope_cache = rope;
    stages[static_cast<std::size_t>(s)].bytes = static_cast<Bytes>(std::llround(stage_bytes[static_cast<std::size_t>(s)])) + rope;
    stages[static_cast<std::size_t>(s)].layer_bytes = static_cast<Bytes>(std::llround(stage_layer_bytes[static_cast<std::size_t>(s)]));
    stages[static_cast<std::size_t>(s)].tower_bytes = static_cast<Bytes>(std::llround(stage_tower_bytes[static_cast<std::size_t>(s)]));
  }
  return stages;
}

namespace {

// The weights under the other reading of a guessed method, less those under the guess.
Bytes other_reading_extra_bytes(const ModelSpec& model, const WeightPlan& plan) {
  ModelSpec other = model;
  for (const char* kept : {"self_attn", "shared_expert", "shared_experts"}) other.quantization->ignored_modules.push_back(kept);
  const Bytes guessed = stage_weights(model, synthesize_weights(model), plan).front().bytes;
  const Bytes alternative = stage_weights(other, synthesize_weights(other), plan).front().bytes;
  return std::max<Bytes>(0, alternative - guessed);
}

}  // namespace

Bytes guessed_quantization_extra_bytes(const ModelSpec& model, const WeightPlan& plan) {
  if (!model.quantization || model.weights) return 0;
  if (model.quantization->guessed_from.empty() && model.quantization->ignore_entries_unaccounted <= 0) return 0;
  // Two synthesised inventories per call, for a layout searches predict many times.
  static BoundedMemo<Bytes> memo(256);
  return memo.get(model_plan_key(model, plan), [&] { return other_reading_extra_bytes(model, plan); });
}

std::string model_plan_key(const ModelSpec& model, const WeightPlan& plan) {
  std::string partition;
  for (int n : plan.layer_partition) partition += std::to_string(n) + ',';
  return model.id + '\n' + model.location + '\n' + std::string(to_string(model.source)) + '\n' +
         std::to_string(model.weights ? model.weights->total_bytes : -1) + '\n' +
         std::to_string(model.weights ? model.weights->tensors.size() : 0) + '\n' + std::to_string(plan.tensor_parallel_size) +
         '/' + std::to_string(plan.pipeline_parallel_size) + '/' + std::to_string(plan.expert_parallel_size) + '/' +
         plan.dtype + '/' + plan.online_quantization + '/' + plan.gpu_architecture + '/' + partition + '/' +
         std::to_string(model.num_layers) + '/' + std::to_string(model.hidden_size) + '/' +
         (model.quantization ? model.quantization->method : std::string()) + (plan.skip_mm_towers ? "/text-only" : "") +
         (plan.skip_image_tower ? "/no-image-tower" : "") + (plan.skip_audio_tower ? "/no-audio-tower" : "") +
         (plan.pooling_runner ? "/pooling" : "") +
         "/rope" + std::to_string(plan.rope_cache_positions_factor) + (plan.rocm_moe_padding ? "/rocm-moe-padding" : "") +
         // The rotary cache's rows follow the length limit and its scaling, which --hf-overrides changes.
         "/positions" + std::to_string(model.max_position_embeddings) +
         (model.rope_scaling ? "/" + model.rope_scaling->type + util::fixed(model.rope_scaling->factor, 6) + "/" +
                                   std::to_string(model.rope_scaling->original_max_position_embeddings.value_or(0))
                             : std::string());
}

Bytes load_buffers(const ModelSpec& model, int max_num_batched_tokens, const std::string& dtype) {
  if (max_num_batched_tokens <= 0) return 0;
  const double tokens = max_num_batched_tokens, bytes = dtype_bytes(dtype.empty() ? "bfloat16" : dtype);
  double total = 0;
  if (model.vision && model.vision->deepstack_layers > 0)
    total += static_cast<double>(model.vision->deepstack_layers) * tokens * static_cast<double>(model.hidden_size) * bytes;
  // Gemma 3n and Gemma 4's multimodal wrappers pre-allocate the per-layer embeddings "for CUDA
  // graph compatibility" (gemma3n_mm.py, gemma4_mm.py: per_layer_embeddings = torch.zeros(
  // max_num_batched_tokens, num_hidden_layers, hidden_size_per_layer_input), model dtype), also
  // when only the language model runs.
  const std::string& a = model.architecture;
  if (model.hidden_size_per_layer_input > 0 && contains(a, "ForConditionalGeneration") &&
      (contains(a, "Gemma3n") || contains(a, "Gemma4")))
    total += tokens * model.num_layers * static_cast<double>(model.hidden_size_per_layer_input) * bytes;
  return static_cast<Bytes>(total);
}

bool uses_mrope(const ModelSpec& model) {
  if (model.rope_scaling && (model.rope_scaling->mrope_sections || model.rope_scaling->type == "mrope")) return true;
  const std::string& a = model.architecture;
  if (!model.vision || !contains(a, "ForConditionalGeneration")) return false;
  for (const char* family : {"Qwen2VL", "Qwen2_5_VL", "Qwen3VL", "Qwen2_5Omni", "Qwen3Omni", "Qwen3_5"})
    if (contains(a, family)) return true;
  return false;
}

int mrope_cache_factor(const ModelSpec& model, const VllmVersion& version) {
  return uses_mrope(model) && !(version < VllmVersion{0, 7, 2}) ? 4 : 1;
}

}  // namespace headroom::engine
