// parse_model_config: a Hugging Face config.json → ModelSpec, the way vLLM's ModelConfig reads it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>

#include "model/model_internal.h"
#include "util/json_file.h"
#include "util/strings.h"

namespace headroom {

namespace model_detail {

namespace {

// transformers Gemma3TextConfig defaults (transformers 4.50+ configuration_gemma3.py). The released
// Gemma 3 4B/27B configs omit these keys in text_config, so transformers (and vLLM) use them.
const nlohmann::json& gemma3_text_defaults() {
  static const nlohmann::json k_defaults = {
      {"vocab_size", 262208},         {"hidden_size", 2304},          {"intermediate_size", 9216},
      {"num_hidden_layers", 26},      {"num_attention_heads", 8},     {"num_key_value_heads", 4},
      {"head_dim", 256},              {"max_position_embeddings", 131072},
      {"sliding_window", 4096},       {"sliding_window_pattern", 6},
  };
  return k_defaults;
}

// transformers' config class defaults for the language models that multimodal wrappers name in a
// compact text_config: llava-hf's LLaVA-1.5 and LLaVA-NeXT configs write only what differs from
// LlamaConfig (configuration_llama.py) or MistralConfig (configuration_mistral.py). Only the sizes
// are filled, where the sub-config leaves them out: the catalogue's lines drop the keys a config
// writes as null (Mistral-Small-3.1's sliding_window), so a default for such a key would override
// what the config says; for those keys the reading without them stays (no window; a Llama's KV
// heads, absent, are its attention heads, as LlamaConfig makes them).
const nlohmann::json* wrapped_text_defaults(const std::string& model_type) {
  static const nlohmann::json k_llama = {
      {"vocab_size", 32000},     {"hidden_size", 4096},         {"intermediate_size", 11008},
      {"num_hidden_layers", 32}, {"num_attention_heads", 32},
  };
  static const nlohmann::json k_mistral = {
      {"vocab_size", 32000},     {"hidden_size", 4096},         {"intermediate_size", 14336},
      {"num_hidden_layers", 32}, {"num_attention_heads", 32},   {"num_key_value_heads", 8},
  };
  if (model_type == "llama") return &k_llama;
  if (model_type == "mistral") return &k_mistral;
  return nullptr;
}

// A number within [min, max] (finite): numbers read from a config are checked before any
// arithmetic uses them. Out of range: `origin:line:col: expected "key" between min and max, got VALUE`.
Result<std::optional<double>> get_number_in(const ConfigReader& c, const std::string& key, double min, double max) {
  auto v = c.get_number(key);
  if (!v || !*v) return v;
  const double d = **v;
  if (std::isfinite(d) && d >= min && d <= max) return v;
  auto shown = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return std::string(buf);
  };
  return tl::unexpected(Error{ErrorCode::parse_error,
                              "expected \"" + c.display(key) + "\" between " + shown(min) + " and " + shown(max) + ", got " +
                                  c.json().at(key).dump(),
                              c.where(key)});
}

// Length keys vLLM considers, in its order (vllm/config/model.py _get_and_verify_max_len).
const std::vector<std::string> k_max_length_keys = {
    "max_position_embeddings", "n_positions",       "max_seq_len",        "seq_length", "model_max_length",
    "max_target_positions",    "max_sequence_length", "max_seq_length", "seq_len"};

// partial_rotary_factor at the text config's top level, or (transformers v5) inside its
// rope_parameters, as Qwen3.5 writes it; 1 when absent.
Result<double> read_partial_rotary_factor(const ConfigReader& text) {
  HR_TRY(own, get_number_in(text, "partial_rotary_factor", 0.0, 1.0));
  if (own) return *own;
  if (auto rp = text.child("rope_parameters")) {
    HR_TRY(nested, get_number_in(*rp, "partial_rotary_factor", 0.0, 1.0));
    if (nested) return *nested;
  }
  return 1.0;
}

Result<std::optional<RopeScaling>> read_rope_scaling(const ConfigReader& text) {
  auto rs = text.child("rope_scaling");
  if (!rs) {
    if (text.has("rope_scaling") && !text.json().at("rope_scaling").is_object())
      return tl::unexpected(text.type_error("rope_scaling", "object"));
    // transformers v5 writes rope_parameters; only the single-type form carries a scaling.
    rs = text.child("rope_parameters");
    if (!rs || !rs->has("rope_type")) return std::optional<RopeScaling>{};
  }
  RopeScaling r;
  HR_TRY(type, rs->get_string("rope_type"));
  if (!type) {
    HR_TRY(legacy, rs->get_string("type"));
    type = legacy;
  }
  r.type = type.value_or("default");
  // No published RoPE scaling stretches a model by more than 64x (yarn factors of 4-40, longrope's
  // 32); 1,024 leaves room while keeping the derived length within 64-bit arithmetic.
  HR_TRY(factor, get_number_in(*rs, "factor", 0.0, 1024.0));
  r.factor = factor.value_or(1.0);
  HR_TRY(orig, rs->get_int("original_max_position_embeddings"));
  r.original_max_position_embeddings = orig;
  r.mrope_sections = rs->has("mrope_section");
  return std::optional<RopeScaling>(r);
}

// InternVL's and Intern-S1's transformers layout (InternVLForConditionalGeneration,
// InternS1ForConditionalGeneration: vLLM's interns1.py).
bool is_internvl_hf_vision(const std::string& vision_model_type) {
  return vision_model_type == "internvl_vision" || vision_model_type == "interns1_vision";
}

// A side written as one integer or, in transformers' newer vision configs (InternVL's and
// Intern-S1's -hf releases: "image_size": [448, 448], "patch_size": [14, 14]), as [height, width]:
// the larger side, which is what a square dummy image takes. Bounded (0 to 2^20 pixels) before
// the narrowing to int that the vision sizes take.
Result<std::optional<std::int64_t>> get_side(const ConfigReader& c, const std::string& key) {
  std::optional<std::int64_t> side;
  if (!c.has(key) || !c.json().at(key).is_array()) {
    HR_TRY(one, c.get_int(key));
    side = one;
  } else {
    HR_TRY(sides, c.get_int_list(key));
    if (!sides || sides->empty() || sides->size() > 2) return tl::unexpected(c.type_error(key, "an integer or [height, width]"));
    side = *std::max_element(sides->begin(), sides->end());
  }
  if (side && (*side < 0 || *side > (1 << 20))) return tl::unexpected(c.type_error(key, "a side of 0 to 1,048,576 pixels"));
  return side;
}

// InternVL (internvl_chat): the tiling beside vision_config (max_dynamic_patch, use_thumbnail,
// downsample_ratio, force_image_size) and InternViT's layer options inside it.
Result<bool> read_internvl_tiling(const ConfigReader& top, const ConfigReader& vc, VisionConfig& v) {
  HR_TRY(tiles, get_number_in(top, "max_dynamic_patch", 1.0, 1024.0));
  HR_TRY(thumbnail, top.get_bool("use_thumbnail"));
  HR_TRY(downsample, get_number_in(top, "downsample_ratio", 0.0, 1.0));
  HR_TRY(forced, get_number_in(top, "force_image_size", 1.0, 65536.0));  // bounded before the int cast
  HR_TRY(qkv_bias, vc.get_bool("qkv_bias"));
  HR_TRY(qk_normalization, vc.get_bool("qk_normalization"));
  HR_TRY(use_qk_norm, vc.get_bool("use_qk_norm"));  // the -hf layout (InternVLVisionConfig)
  const std::optional<bool> qk_norm = qk_normalization ? qk_normalization : use_qk_norm;
  HR_TRY(norm, vc.get_string("norm_type"));
  if (tiles) v.max_tiles = static_cast<int>(*tiles);
  if (thumbnail) v.thumbnail_tile = *thumbnail;
  // The -hf layout writes no use_thumbnail: vLLM's interns1.py takes the image processor's
  // crop_to_patches for it (preprocessor_config.json, not read here); taken as true, as the chat
  // releases write use_thumbnail.
  if (!thumbnail && is_internvl_hf_vision(v.model_type)) v.thumbnail_tile = true;
  if (downsample && v.pixel_shuffle_ratio == 0) v.pixel_shuffle_ratio = *downsample;
  if (forced) v.image_size = static_cast<int>(*forced);
  if (qkv_bias) v.qkv_bias = *qkv_bias;
  if (qk_norm) v.qk_norm = *qk_norm;
  if (norm) v.rms_norm = *norm == "rms_norm";
  return true;
}

// Aya Vision (aya_vision.py AyaVisionMultiModalProjector): beside vision_config, downsample_factor
// (the pixel shuffle's factor per side: 2 x 2 patches into one embedding) and
// alignment_intermediate_size (the SwiGLU projector's width).
Result<bool> read_aya_projector(const ConfigReader& top, VisionConfig& v) {
  HR_TRY(factor, get_number_in(top, "downsample_factor", 1.0, 64.0));
  HR_TRY(width, top.get_int("alignment_intermediate_size"));
  if (factor && v.pixel_shuffle_ratio == 0) v.pixel_shuffle_ratio = 1.0 / *factor;
  if (width) v.projector_intermediate_size = static_cast<int>(std::clamp<std::int64_t>(*width, 0, 1 << 24));
  return true;
}

// MiniCPM-V / MiniCPM-o: beside vision_config, query_num (the resampler's queries per slice),
// image_size (the slice side), max_slice_num and version. Read only where query_num is written:
// other configs' top-level image_size means something else.
Result<bool> read_minicpmv_slices(const ConfigReader& top, VisionConfig& v) {
  HR_TRY(queries, get_number_in(top, "query_num", 1.0, 4096.0));
  if (!queries) return false;
  HR_TRY(side, get_number_in(top, "image_size", 14.0, 65536.0));
  HR_TRY(slices, get_number_in(top, "max_slice_num", 1.0, 1024.0));
  HR_TRY(version, get_number_in(top, "version", 0.0, 1000.0));
  v.resampler_queries = static_cast<int>(*queries);
  if (side) v.slice_size = static_cast<int>(*side);
  if (slices) v.max_slices = static_cast<int>(*slices);
  if (version) v.family_version = *version;
  return true;
}

// LLaVA-NeXT / OneVision: image_grid_pinpoints beside vision_config, a list of [height, width]
// canvases. Published lists have 5 (LLaVA-NeXT 1.6) to 36 (OneVision) entries of 336-2304 pixels;
// more than 1,024 entries or a side outside 1-65,536 is refused rather than iterated.
Result<bool> read_llava_anyres(const ConfigReader& top, VisionConfig& v) {
  HR_TRY(strategy, top.get_string("vision_feature_select_strategy"));
  if (strategy) v.feature_select_strategy = *strategy;
  if (!top.has("image_grid_pinpoints")) return true;
  const auto& list = top.json().at("image_grid_pinpoints");
  if (!list.is_array() || list.size() > 1024)
    return tl::unexpected(top.type_error("image_grid_pinpoints", "list of at most 1,024 [height, width] pairs"));
  for (const auto& pair : list) {
    const bool ok = pair.is_array() && pair.size() == 2 && pair[0].is_number_integer() && pair[1].is_number_integer() &&
                    pair[0].get<std::int64_t>() >= 1 && pair[0].get<std::int64_t>() <= 65536 &&
                    pair[1].get<std::int64_t>() >= 1 && pair[1].get<std::int64_t>() <= 65536;
    if (!ok) return tl::unexpected(top.type_error("image_grid_pinpoints", "[height, width] pairs of 1-65536 pixels"));
    v.grid_pinpoints.push_back({pair[0].get<int>(), pair[1].get<int>()});
  }
  return true;
}

// Whether config.json's architectures list names `name` (model files that vLLM picks by class and
// that build their towers from fixed settings rather than from a vision_config).
Result<bool> lists_architecture(const ConfigReader& top, const char* name) {
  HR_TRY(archs, top.get_string_list("architectures"));
  return archs && std::find(archs->begin(), archs->end(), name) != archs->end();
}

// CLIP ViT-L/14-336's widths (1024 wide, MLP 4096, 16 heads, 14-pixel patches of 336² images), for
// the model files that build it from fixed settings (Phi-3-vision, Molmo) at their own depth.
VisionConfig clip_vit_l14_336(std::string type, int depth) {
  VisionConfig v;
  v.model_type = std::move(type);
  v.hidden_size = 1024;
  v.intermediate_size = 4096;
  v.num_heads = 16;
  v.image_size = 336;
  v.patch_size = 14;
  v.depth = depth;
  return v;
}

// Phi-3-vision and Phi-3.5-vision (Phi3VForCausalLM) write no vision_config: phi3v.py builds
// CLIP_VIT_LARGE_PATCH14_336_CONFIG (1024 wide, 4096 MLP, 16 heads, 336-pixel images of 14-pixel
// patches) up to img_processor.layer_idx (-2 by default: 23 of its 24 layers), and projects the
// 2 x 2-merged features (image_dim_out x 4) into the language model.
Result<std::optional<VisionConfig>> read_phi3v_vision(const ConfigReader& top) {
  auto ip = top.child("img_processor");
  HR_TRY(phi3v, lists_architecture(top, "Phi3VForCausalLM"));
  if (!ip || !phi3v) return std::optional<VisionConfig>{};
  HR_TRY(layer_idx, get_number_in(*ip, "layer_idx", -24.0, 23.0));
  HR_TRY(dim_out, get_number_in(*ip, "image_dim_out", 1.0, 65536.0));
  const int idx = static_cast<int>(layer_idx.value_or(-2.0));
  VisionConfig v = clip_vit_l14_336("clip_vision_model", idx < 0 ? 24 + idx + 1 : idx + 1);
  v.out_hidden_size = static_cast<int>(dim_out.value_or(1024.0));
  return std::optional<VisionConfig>(v);
}

// Phi-4-multimodal (Phi4MMForCausalLM, the release's own config) writes no vision_config: phi4mm.py
// builds its image encoder from fixed settings (VISION_ENCODER_TO_PROCESSING_CONFIG and
// get_navit_vision_model: SigLIP-so400m-patch14-448, hidden 1152, MLP 4304, 16 heads, 27 layers of
// which layer_idx -2 keeps 26), its crops the size of embd_layer.image_embd_layer.crop_size (448).
Result<bool> is_phi4mm(const ConfigReader& top) {
  return lists_architecture(top, "Phi4MMForCausalLM");
}

// SigLIP-so400m's widths (1152 wide, MLP 4304, 16 heads, 14-pixel patches), for the model files
// that build it from fixed settings rather than from their config.
VisionConfig siglip_so400m(std::string type, int depth, int image_size) {
  VisionConfig v;
  v.model_type = std::move(type);
  v.hidden_size = 1152;
  v.intermediate_size = 4304;
  v.num_heads = 16;
  v.depth = depth;
  v.patch_size = 14;
  v.image_size = image_size;
  return v;
}

Result<std::optional<VisionConfig>> read_phi4mm_vision(const ConfigReader& top) {
  HR_TRY(phi4mm, is_phi4mm(top));
  if (!phi4mm) return std::optional<VisionConfig>{};
  VisionConfig v = siglip_so400m("phi4mm_siglip", 26, 448);
  if (auto embd = top.child("embd_layer")) {
    if (auto image = embd->child("image_embd_layer")) {
      HR_TRY(crop, get_number_in(*image, "crop_size", 14.0, 4096.0));
      if (crop) v.image_size = static_cast<int>(*crop);
    }
  }
  return std::optional<VisionConfig>(v);
}

// Qwen2-VL's first releases wrote a compact vision_config (hidden_size, in_chans,
// spatial_patch_size); transformers' Qwen2VLVisionConfig fills the rest with its defaults
// (configuration_qwen2_vl.py: depth 32, embed_dim 1280, hidden_size 3584, mlp_ratio 4, num_heads 16,
// patch_size 14, spatial_merge_size 2, temporal_patch_size 2), the one tower every Qwen2-VL size
// shares, and vLLM builds it from that config (qwen2_vl.py).
Result<bool> is_qwen2_vl(const ConfigReader& top, const ConfigReader& vc) {
  HR_TRY(top_type, top.get_string("model_type"));
  HR_TRY(type, vc.get_string("model_type"));
  return (top_type && *top_type == "qwen2_vl") || (type && *type == "qwen2_vl");
}

// transformers' PixtralVisionConfig (configuration_pixtral.py) for what a vision_config of
// model_type "pixtral" leaves out: mistral-community/pixtral-12b writes only its head_dim, image
// and patch sizes and rope_theta.
void fill_pixtral_defaults(VisionConfig& v) {
  if (v.hidden_size == 0) v.hidden_size = 1024;
  if (v.intermediate_size == 0) v.intermediate_size = 4096;
  if (v.depth == 0) v.depth = 24;
  if (v.num_heads == 0) v.num_heads = 16;
  if (v.image_size == 0) v.image_size = 1024;
  if (v.patch_size == 0) v.patch_size = 16;
}

void fill_qwen2_vl_defaults(VisionConfig& v) {
  if (v.depth == 0) v.depth = 32;
  if (v.num_heads == 0) v.num_heads = 16;
  if (v.patch_size == 0) v.patch_size = 14;
  if (v.spatial_merge_size == 0) v.spatial_merge_size = 2;
  if (v.temporal_patch_size == 0) v.temporal_patch_size = 2;
  if (v.out_hidden_size == 0) v.out_hidden_size = 3584;
}

// Llama 3.2 Vision (mllama_vision_model): the global encoder's depth, tiles per image and the
// aspect-ratio ids, each with transformers' MllamaVisionConfig default (num_global_layers 8,
// max_num_tiles 4, 8 supported_aspect_ratios) when the config leaves it out.
Result<bool> read_mllama_tiling(const ConfigReader& vc, VisionConfig& v) {
  if (v.model_type != "mllama_vision_model") return false;
  // Bounds far above the release's (8 global layers, 4 tiles of 40 x 40 patches) that keep the
  // tile tables' and the profile's arithmetic within 64 bits.
  HR_TRY(global, get_number_in(vc, "num_global_layers", 0.0, 1024.0));
  HR_TRY(tiles, get_number_in(vc, "max_num_tiles", 1.0, 64.0));
  const int patch = v.patch_size > 0 ? v.patch_size : 14;
  if (v.image_size / patch > 1024)
    return tl::unexpected(vc.type_error("image_size", "at most 1,024 patches per side (image_size / patch_size)"));
  v.global_layers = static_cast<int>(global.value_or(8.0));
  v.max_tiles = static_cast<int>(tiles.value_or(4.0));
  v.aspect_ratio_ids = 8;
  if (auto it = vc.json().find("supported_aspect_ratios"); it != vc.json().end()) {
    if (!it->is_array() || it->size() > 1024)
      return tl::unexpected(vc.type_error("supported_aspect_ratios", "list of at most 1,024 [rows, columns] pairs"));
    v.aspect_ratio_ids = static_cast<int>(it->size());
  }
  return true;
}

// Ovis2.5 (Ovis2_5, ovis2_5.py): its SigLIP2-NaViT tower is vit_config, which merges
// hidden_stride² patches into one visual token, and visual_vocab_size beside it sizes the visual
// head (hidden × hidden_stride² → visual_vocab_size − 4 indicators) and the visual embedding table.
Result<bool> is_ovis2_5(const ConfigReader& top) {
  return lists_architecture(top, "Ovis2_5");
}

Result<bool> read_ovis_fields(const ConfigReader& top, const ConfigReader& vc, VisionConfig& v) {
  HR_TRY(ovis, is_ovis2_5(top));
  if (!ovis) return false;
  HR_TRY(stride, get_number_in(vc, "hidden_stride", 1.0, 64.0));
  HR_TRY(vocab, get_number_in(top, "visual_vocab_size", 5.0, 1 << 22));
  if (v.spatial_merge_size == 0) v.spatial_merge_size = static_cast<int>(stride.value_or(2.0));
  v.visual_vocab_size = static_cast<int>(vocab.value_or(65536.0));
  return true;
}

// Gemma 4 12B's encoder-free vision (gemma4_unified.py Gemma4UnifiedVisionEmbedder): no tower,
// a patch projection of (patch_size × pooling_kernel_size)² × 3 pixels to mm_embed_dim, a
// positional table of mm_posemb_size × 2 rows and the embedder into the language model from
// output_proj_dims. Absent keys take transformers' Gemma4UnifiedVisionConfig defaults (3840,
// 1120, mm_embed_dim): with embed_audio's 640 → 3840 they come within 256 parameters of the
// multimodal share of the release's safetensors count (data/models.jsonl's note). Kept in
// hidden_size, num_position_embeddings and out_hidden_size; depth stays 0.
Result<bool> read_gemma4_unified_embedder(const ConfigReader& vc, VisionConfig& v) {
  HR_TRY(dim, get_number_in(vc, "mm_embed_dim", 1.0, 1 << 16));
  HR_TRY(posemb, get_number_in(vc, "mm_posemb_size", 1.0, 1 << 20));
  HR_TRY(proj, get_number_in(vc, "output_proj_dims", 1.0, 1 << 16));
  v.hidden_size = static_cast<int>(dim.value_or(3840.0));
  v.num_position_embeddings = static_cast<int>(posemb.value_or(1120.0));
  v.out_hidden_size = static_cast<int>(proj.value_or(static_cast<double>(v.hidden_size)));
  return true;
}

// DeepSeek-VL2 (deepseek_vl2.py): vLLM builds timm's vit_so400m_patch14_siglip_384 whatever
// vision_config writes (width 1152, 27 blocks, MLP 4304, 16 heads, 14-pixel patches, 384² tiles),
// with the MlpProjector to projector_config.n_embed (downsample_ratio 2). The dummy image is the
// candidate resolution with the most tokens (ProcessingInfo.get_image_size_with_most_features):
// a global view of 14 × 15 tokens, the separator, and (rows × 14) × (cols × 14 + 1) local tokens.
Result<bool> is_deepseek_vl2(const ConfigReader& top) {
  return lists_architecture(top, "DeepseekVLV2ForCausalLM");
}

Result<std::optional<VisionConfig>> read_deepseek_vl2_vision(const ConfigReader& top) {
  VisionConfig v = siglip_so400m("deepseek_vl2_siglip", 27, 384);
  v.spatial_merge_size = 2;
  v.tile_rows = v.tile_cols = 1;  // DeepseekVLV2Config's default candidate_resolutions ((384, 384),)
  if (auto projector = top.child("projector_config")) {
    HR_TRY(embed, get_number_in(*projector, "n_embed", 1.0, 1 << 16));
    if (embed) v.out_hidden_size = static_cast<int>(*embed);
  }
  // Candidates are [height, width] pairs of whole 384² tiles; bounded far above the release's
  // (23 candidates of at most 9 tiles) so the token arithmetic stays small.
  auto it = top.json().find("candidate_resolutions");
  if (it == top.json().end()) return std::optional<VisionConfig>(v);
  const auto refused = [&] {
    return tl::unexpected(top.type_error("candidate_resolutions", "a list of at most 256 [height, width] pairs of 384 to 24,576 pixels"));
  };
  if (!it->is_array() || it->size() > 256) return refused();
  std::int64_t best = -1;
  for (const auto& pair : *it) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer() || !pair[1].is_number_integer()) return refused();
    const std::int64_t h = pair[0].get<std::int64_t>(), w = pair[1].get<std::int64_t>();
    if (h < 384 || w < 384 || h > 384 * 64 || w > 384 * 64) return refused();
    const std::int64_t rows = h / 384, cols = w / 384, tokens = (rows * 14) * (cols * 14 + 1);
    if (tokens > best) {
      best = tokens;
      v.tile_rows = static_cast<int>(rows);
      v.tile_cols = static_cast<int>(cols);
    }
  }
  return std::optional<VisionConfig>(v);
}

// Molmo (molmo.py MolmoForCausalLM): vLLM builds VisionBackboneConfig() with its defaults
// whatever config.json writes: a CLIP ViT-L/14-336 cut to 23 blocks (width 1024, MLP 4096, 16
// heads, 14-pixel patches of 336² crops), a 2 × 2 attention pooling over two of its layers, and a
// SwiGLU projector to the language model. The image processor tiles an image into up to max_crops
// (12 in the releases) overlapping crops and a global one.
Result<bool> is_molmo(const ConfigReader& top) {
  return lists_architecture(top, "MolmoForCausalLM");
}

VisionConfig molmo_vision() {
  VisionConfig v = clip_vit_l14_336("molmo_vit", 23);
  v.spatial_merge_size = 2;
  v.max_tiles = 12;
  v.thumbnail_tile = true;
  return v;
}

Result<std::optional<VisionConfig>> read_vision(const ConfigReader& top) {
  HR_TRY(molmo, is_molmo(top));
  if (molmo) return std::optional<VisionConfig>(molmo_vision());
  HR_TRY(deepseek_vl2, is_deepseek_vl2(top));
  if (deepseek_vl2) return read_deepseek_vl2_vision(top);
  auto vc = top.child("vision_config");
  if (!vc) {
    HR_TRY(ovis, is_ovis2_5(top));
    if (ovis) vc = top.child("vit_config");
  }
  if (!vc) {
    HR_TRY(phi3v, read_phi3v_vision(top));
    if (phi3v) return phi3v;
    return read_phi4mm_vision(top);
  }
  HR_TRY(qwen2_vl, is_qwen2_vl(top, *vc));
  VisionConfig v;
  // Kimi-K2.5 writes its MoonViT sizes with a vt_ prefix.
  HR_TRY(depth, vc->first_int({"depth", "num_hidden_layers", "num_layers", "vt_num_hidden_layers"}));
  HR_TRY(heads, vc->first_int({"num_heads", "num_attention_heads", "vt_num_attention_heads"}));
  HR_TRY(image, get_side(*vc, "image_size"));
  HR_TRY(patch_side, get_side(*vc, "patch_size"));
  HR_TRY(spatial_patch, vc->get_int("spatial_patch_size"));
  const std::optional<std::int64_t> patch = patch_side ? patch_side : spatial_patch;
  HR_TRY(inter, vc->first_int({"intermediate_size", "vt_intermediate_size"}));
  HR_TRY(out, vc->first_int({"out_hidden_size", "vision_output_dim", "projection_dim"}));
  HR_TRY(written_embed, vc->get_int("embed_dim"));
  std::optional<std::int64_t> embed = written_embed;
  if (!embed && qwen2_vl) embed = 1280;
  HR_TRY(hidden, vc->first_int({"hidden_size", "vt_hidden_size"}));
  HR_TRY(type, vc->get_string("model_type"));
  HR_TRY(temporal, vc->get_int("temporal_patch_size"));
  HR_TRY(merge, vc->get_int("spatial_merge_size"));
  HR_TRY(top_merge, top.get_int("spatial_merge_size"));  // Mistral 3 writes it beside vision_config
  HR_TRY(kernel, vc->get_int_list("merge_kernel_size"));   // MoonViT: [2, 2]
  HR_TRY(npos, vc->get_int("num_position_embeddings"));
  HR_TRY(deepstack, vc->get_int_list("deepstack_visual_indexes"));
  HR_TRY(pin, vc->get_int("projector_input_dim"));
  HR_TRY(pout, vc->get_int("projector_output_dim"));
  HR_TRY(shuffle, get_number_in(*vc, "pixel_shuffle_ratio", 0.0, 1.0));
  HR_TRY(pooling, vc->get_int("pooling_kernel_size"));                 // Gemma 4
  HR_TRY(pool_stride, top.get_int("spatial_pool_stride"));             // LLaVA-NeXT-Video, beside vision_config
  HR_TRY(soft, vc->first_int({"default_output_length", "vision_soft_tokens_per_image"}));  // Gemma 4
  HR_TRY(top_soft, top.get_int("vision_soft_tokens_per_image"));       // Gemma 4, beside vision_config
  if (type) v.model_type = *type;
  if (depth) v.depth = static_cast<int>(depth->second);
  if (heads) v.num_heads = static_cast<int>(heads->second);
  if (image) v.image_size = static_cast<int>(*image);
  if (patch) v.patch_size = static_cast<int>(*patch);
  if (out) v.out_hidden_size = static_cast<int>(out->second);
  if (temporal) v.temporal_patch_size = static_cast<int>(*temporal);
  if (merge) v.spatial_merge_size = static_cast<int>(*merge);
  else if (top_merge) v.spatial_merge_size = static_cast<int>(*top_merge);
  else if (kernel && kernel->size() == 2 && (*kernel)[0] == (*kernel)[1]) v.spatial_merge_size = static_cast<int>((*kernel)[0]);
  if (npos) v.num_position_embeddings = static_cast<int>(*npos);
  if (deepstack) v.deepstack_layers = static_cast<int>(deepstack->size());
  if (pin) v.projector_input_dim = static_cast<int>(*pin);
  if (pout) v.projector_output_dim = static_cast<int>(*pout);
  if (shuffle) v.pixel_shuffle_ratio = *shuffle;
  if (pooling) v.pooling_kernel_size = static_cast<int>(*pooling);
  else if (pool_stride) v.pooling_kernel_size = static_cast<int>(std::clamp<std::int64_t>(*pool_stride, 0, 1 << 16));
  if (soft) v.soft_tokens_per_image = static_cast<int>(soft->second);
  else if (top_soft) v.soft_tokens_per_image = static_cast<int>(*top_soft);
  if (embed) {
    // Qwen2-VL: embed_dim is the tower width, hidden_size its output, MLP = embed_dim × mlp_ratio.
    v.hidden_size = static_cast<int>(*embed);
    if (hidden && !out) v.out_hidden_size = static_cast<int>(hidden->second);
    HR_TRY(ratio, get_number_in(*vc, "mlp_ratio", 0.0, 64.0));
    v.intermediate_size = inter ? static_cast<int>(inter->second) : static_cast<int>(*embed * ratio.value_or(4.0));
  } else {
    if (hidden) v.hidden_size = static_cast<int>(hidden->second);
    if (inter) v.intermediate_size = static_cast<int>(inter->second);
  }
  if (qwen2_vl) fill_qwen2_vl_defaults(v);
  if (v.model_type == "pixtral") fill_pixtral_defaults(v);
  // GLM-4.xV (Glm4vVisionConfig): attention_bias on the fused qkv, false unless written.
  HR_TRY(attention_bias, vc->get_bool("attention_bias"));
  HR_TRY(archs, top.get_string_list("architectures"));
  const bool glm4v = archs && !archs->empty() && archs->front().starts_with("Glm4v");
  if (attention_bias) v.qkv_bias = *attention_bias;
  else if (glm4v) v.qkv_bias = false;
  // Keye-VL's processing info takes temporal_patch_size 1 whatever its config writes (keye.py).
  if (archs && !archs->empty() && archs->front().starts_with("Keye")) v.temporal_patch_size = 1;
  // Gemma 3n's vision_config names a timm MobileNetV5 and no image size; its image processor's size
  // is 768 × 768 in the releases (transformers' convert_gemma3n_weights.py), the only size it takes.
  if (v.model_type == "gemma3n_vision" && v.image_size == 0) v.image_size = 768;
  if (v.model_type == "gemma3n_vision") {
    HR_TRY(timm, vc->get_string("architecture"));
    HR_TRY(vocab, get_number_in(*vc, "vocab_size", 0.0, 1 << 20));
    v.timm_architecture = timm.value_or("");
    v.timm_model_args = vc->has("model_args");
    if (vocab) v.embedder_vocab = static_cast<int>(*vocab);
  }
  if (v.model_type == "gemma4_unified_vision") {
    if (auto unified = read_gemma4_unified_embedder(*vc, v); !unified) return tl::unexpected(unified.error());
  }
  // Idefics3 / SmolVLM (idefics3.py Idefics3Connector): scale_factor beside vision_config, the pixel
  // shuffle's factor per side (Idefics3Config's default 2; the SmolVLM releases write 3).
  const bool idefics3 = archs && !archs->empty() && (archs->front().starts_with("Idefics3") || archs->front().starts_with("SmolVLM"));
  if (idefics3) {
    HR_TRY(scale, get_number_in(top, "scale_factor", 1.0, 64.0));
    v.pixel_shuffle_ratio = 1.0 / scale.value_or(2.0);
  }
  HR_TRY(internvl, read_internvl_tiling(top, *vc, v));
  (void)internvl;
  HR_TRY(anyres, read_llava_anyres(top, v));
  HR_TRY(mllama, read_mllama_tiling(*vc, v));
  HR_TRY(aya, read_aya_projector(top, v));
  HR_TRY(minicpmv, read_minicpmv_slices(top, v));
  HR_TRY(ovis, read_ovis_fields(top, *vc, v));
  (void)anyres, (void)mllama, (void)aya, (void)minicpmv, (void)ovis;
  return std::optional<VisionConfig>(v);
}

bool is_falcon(std::string_view model_type, std::string_view arch) {
  return model_type == "falcon" || model_type == "RefinedWeb" || model_type == "RefinedWebModel" ||
         arch == "RWForCausalLM" || arch == "FalconForCausalLM";
}

}  // namespace

// Sizes a real checkpoint can have: a hostile or corrupt config.json must get an error, not
// arithmetic that overflows later (weights are computed from these in 64-bit integers).
Result<bool> check_plausible(const ModelSpec& m, const std::string& origin) {
  struct Field {
    const char* name;
    std::int64_t value;
    std::int64_t max;
  };
  const std::int64_t k_dim = 1 << 20, k_count = 1 << 16;
  std::vector<Field> fields = {{"num_hidden_layers", m.num_layers, 1 << 14},
                               {"hidden_size", m.hidden_size, k_dim},
                               {"intermediate_size", m.intermediate_size, k_dim},
                               {"num_attention_heads", m.num_attention_heads, k_count},
                               {"num_key_value_heads", m.num_kv_heads, k_count},
                               {"head_dim", m.head_dim, k_count},
                               {"vocab_size", m.vocab_size, 1 << 24},
                               {"max_position_embeddings", m.max_position_embeddings, 1LL << 32}};
  if (m.moe) {
    fields.push_back({"num_experts", m.moe->num_experts, k_count});
    fields.push_back({"num_experts_per_tok", m.moe->experts_per_token, k_count});
    fields.push_back({"moe_intermediate_size", m.moe->moe_intermediate_size, k_dim});
    fields.push_back({"shared_expert_intermediate_size", m.moe->shared_expert_intermediate_size, k_dim});
    fields.push_back({"n_shared_experts", m.moe->num_shared_experts, k_count});
  }
  if (m.mla) {
    fields.push_back({"kv_lora_rank", m.mla->kv_lora_rank, k_dim});
    fields.push_back({"q_lora_rank", m.mla->q_lora_rank, k_dim});
    fields.push_back({"qk_rope_head_dim", m.mla->qk_rope_head_dim, k_count});
    fields.push_back({"qk_nope_head_dim", m.mla->qk_nope_head_dim, k_count});
    fields.push_back({"v_head_dim", m.mla->v_head_dim, k_count});
  }
  if (m.hybrid) {
    const HybridConfig& h = *m.hybrid;
    for (auto [name, value] : {std::pair<const char*, int>{"mamba_num_heads", h.mamba_num_heads},
                               {"mamba_head_dim", h.mamba_head_dim}, {"ssm_state_size", h.ssm_state_size},
                               {"n_groups", h.n_groups}, {"conv_kernel", h.conv_kernel},
                               {"mamba_intermediate_size", h.mamba_intermediate_size},
                               {"linear_num_key_heads", h.linear_num_key_heads},
                               {"linear_num_value_heads", h.linear_num_value_heads},
                               {"linear_key_head_dim", h.linear_key_head_dim},
                               {"linear_value_head_dim", h.linear_value_head_dim},
                               {"linear_conv_kernel_dim", h.linear_conv_kernel_dim}})
      fields.push_back({name, value, k_dim});
  }
  if (m.vision) {
    const VisionConfig& v = *m.vision;
    fields.push_back({"vision_config.depth", v.depth, 1 << 14});
    for (auto [name, value] : {std::pair<const char*, int>{"vision_config.hidden_size", v.hidden_size},
                               {"vision_config.intermediate_size", v.intermediate_size},
                               {"vision_config.out_hidden_size", v.out_hidden_size},
                               {"vision_config.projector_input_dim", v.projector_input_dim},
                               {"vision_config.projector_output_dim", v.projector_output_dim},
                               {"alignment_intermediate_size", v.projector_intermediate_size}})
      fields.push_back({name, value, k_dim});
    for (auto [name, value] : {std::pair<const char*, int>{"vision_config.image_size", v.image_size},
                               {"vision_config.patch_size", v.patch_size},
                               {"vision_config.temporal_patch_size", v.temporal_patch_size},
                               {"vision_config.spatial_merge_size", v.spatial_merge_size},
                               {"vision_config.deepstack_visual_indexes", v.deepstack_layers},
                               {"vision_config.num_position_embeddings", v.num_position_embeddings},
                               {"vision_config.pooling_kernel_size", v.pooling_kernel_size},
                               {"vision_config.default_output_length", v.soft_tokens_per_image}})
      fields.push_back({name, value, k_count});
    if (!(v.pixel_shuffle_ratio >= 0 && v.pixel_shuffle_ratio <= 1))
      return make_error(ErrorCode::parse_error,
                        "implausible \"vision_config.pixel_shuffle_ratio\": " + std::to_string(v.pixel_shuffle_ratio) +
                            " (expected 0 to 1)",
                        origin);
  }
  if (m.audio) {
    const AudioConfig& a = *m.audio;
    fields.push_back({"audio_config.encoder_layers", a.layers, 1 << 14});
    for (auto [name, value] : {std::pair<const char*, int>{"audio_config.d_model", a.d_model},
                               {"audio_config.encoder_ffn_dim", a.ffn},
                               {"audio_config.output_dim", a.output_dim}})
      fields.push_back({name, value, k_dim});
    for (auto [name, value] : {std::pair<const char*, int>{"audio_config.encoder_attention_heads", a.heads},
                               {"audio_config.num_mel_bins", a.num_mel_bins},
                               {"audio_config.downsample_hidden_size", a.downsample_hidden_size},
                               {"audio_config.n_window", a.n_window},
                               {"audio_config.conv_chunksize", a.conv_chunksize},
                               {"audio_config.conf_conv_kernel_size", a.conv_kernel}})
      fields.push_back({name, value, k_count});
    for (auto [name, value] : {std::pair<const char*, int>{"audio_config.vocab_size", a.vocab_size},
                               {"audio_config.max_source_positions", a.max_source_positions}})
      fields.push_back({name, value, k_dim});
  }
  if (m.rope_scaling) {
    // The length vLLM derives (base x factor) stays within the bound on max_position_embeddings.
    const auto& rs = *m.rope_scaling;
    const double base = static_cast<double>(std::max(m.max_position_embeddings, rs.original_max_position_embeddings.value_or(0)));
    if (base * rs.factor > static_cast<double>(1LL << 32))
      return make_error(ErrorCode::parse_error,
                        "implausible \"rope_scaling.factor\": " + util::fixed(rs.factor, 2) + " x " + std::to_string(
                            static_cast<std::int64_t>(base)) + " positions is more than 2^32 tokens",
                        origin);
  }
  if (auto it = m.raw_config.find("partial_rotary_factor"); m.raw_config.is_object() && it != m.raw_config.end() && it->is_number()) {
    const double partial = it->get<double>();
    if (!(partial >= 0 && partial <= 1))
      return make_error(ErrorCode::parse_error, "implausible \"partial_rotary_factor\": " + it->dump() + " (expected 0 to 1)",
                        origin);
  }
  if (m.quantization) {
    fields.push_back({"quantization_config.bits", m.quantization->bits, 64});
    // group_size is -1 for per-channel GPTQ; only its size is bounded.
    fields.push_back({"quantization_config.group_size", std::max(0, m.quantization->group_size), k_dim});
  }
  for (const auto& f : fields) {
    if (f.value < 0 || f.value > f.max)
      return make_error(ErrorCode::parse_error,
                        std::string("implausible \"") + f.name + "\": " + std::to_string(f.value) + " (expected 0 to " +
                            std::to_string(f.max) + ")",
                        origin);
  }
  return true;
}

namespace {

// The sizes every model has: layers, widths, heads, KV heads, head size, vocabulary. Returns whether
// the config gave head_dim itself (MLA derives it otherwise).
Result<bool> read_dimensions(const ConfigReader& t, const std::string& origin, ModelSpec& spec) {
  HR_TRY(layers, t.first_int({"num_hidden_layers", "n_layer", "num_layers", "n_layers"}));
  if (!layers) return tl::unexpected(t.missing({"num_hidden_layers", "n_layer", "num_layers", "n_layers"}));
  HR_TRY(hidden, t.first_int({"hidden_size", "n_embd", "d_model", "model_dim", "dim"}));
  if (!hidden) return tl::unexpected(t.missing({"hidden_size", "n_embd", "d_model"}));
  HR_TRY(heads, t.first_int({"num_attention_heads", "n_head", "num_heads", "n_heads", "encoder_attention_heads"}));
  if (!heads) return tl::unexpected(t.missing({"num_attention_heads", "n_head", "num_heads"}));
  spec.num_layers = static_cast<int>(layers->second);
  spec.hidden_size = static_cast<int>(hidden->second);
  spec.num_attention_heads = static_cast<int>(heads->second);
  if (spec.num_layers <= 0 || spec.hidden_size <= 0 || spec.num_attention_heads <= 0)
    return make_error(ErrorCode::parse_error,
                      "expected positive layer, hidden and head counts, got " + std::to_string(spec.num_layers) +
                          ", " + std::to_string(spec.hidden_size) + " and " + std::to_string(spec.num_attention_heads),
                      origin);

  HR_TRY(inter, t.first_int({"intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size", "d_ff"}));
  // GPT-2 / Falcon style configs leave the MLP width out (n_inner: null): 4 × hidden, computed
  // wide: a hidden size past 2^29 would overflow it.
  const std::int64_t mlp = inter ? inter->second : 4 * static_cast<std::int64_t>(spec.hidden_size);
  if (mlp > std::numeric_limits<int>::max())
    return make_error(ErrorCode::parse_error,
                      "no intermediate_size, and 4 × hidden_size (" + std::to_string(spec.hidden_size) +
                          ") is past 2^31: give intermediate_size",
                      origin);
  spec.intermediate_size = static_cast<int>(mlp);

  HR_TRY(kv, t.first_int({"n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num",
                          "num_attention_groups"}));
  spec.num_kv_heads = kv ? static_cast<int>(kv->second) : spec.num_attention_heads;
  if (!kv && is_falcon(spec.model_type, spec.architecture)) {
    // vLLM ModelConfig.get_total_num_kv_heads: old-format Falcon with multi_query has one KV head.
    HR_TRY(new_arch, t.get_bool("new_decoder_architecture"));
    HR_TRY(mq, t.get_bool("multi_query"));
    if (!new_arch.value_or(false) && mq.value_or(true)) spec.num_kv_heads = 1;
  }

  HR_TRY(head_dim, t.first_int({"head_dim", "head_size", "attention_head_size"}));
  if (head_dim) spec.head_dim = static_cast<int>(head_dim->second);
  else spec.head_dim = spec.hidden_size / spec.num_attention_heads;

  HR_TRY(vocab, t.first_int({"vocab_size", "padded_vocab_size", "n_vocab"}));
  if (!vocab) return tl::unexpected(t.missing({"vocab_size", "padded_vocab_size"}));
  spec.vocab_size = vocab->second;

  return head_dim.has_value();
}

// The longest context: the smallest present length key; model_max_length overrides.
Result<bool> read_max_length(const ConfigReader& t, ModelSpec& spec) {
  // Max length: the smallest present key; model_max_length in the model config overrides.
  for (const auto& key : k_max_length_keys) {
    HR_TRY(v, t.get_int(key));
    if (v && (spec.max_length_key.empty() || *v < spec.max_position_embeddings)) {
      spec.max_position_embeddings = *v;
      spec.max_length_key = key;
    }
  }
  HR_TRY(mml, t.get_int("model_max_length"));
  if (mml) {
    spec.max_position_embeddings = *mml;
    spec.max_length_key = "model_max_length";
  }

  return true;
}

// dtype: config.dtype (transformers v5), torch_dtype, then the text and vision sub-configs.
Result<bool> read_dtype(const ConfigReader& top, const ConfigReader& text, ModelSpec& spec) {
  for (const ConfigReader* r : std::initializer_list<const ConfigReader*>{&top, &text}) {
    if (!spec.torch_dtype.empty()) break;
    for (const char* key : {"dtype", "torch_dtype"}) {
      HR_TRY(d, r->get_string(key));
      if (d) {
        spec.torch_dtype = *d;
        break;
      }
    }
  }
  if (spec.torch_dtype.empty()) {
    if (auto vc = top.child("vision_config")) {
      HR_TRY(d, vc->get_string("torch_dtype"));
      if (d) spec.torch_dtype = *d;
    }
  }

  return true;
}

// Whether the LM head shares the embedding: the wrapper's flag decides for a multimodal model.
Result<bool> read_tie_embeddings(const ConfigReader& top, const ConfigReader& text, bool wrapped, ModelSpec& spec) {
  HR_TRY(tie_text, text.get_bool("tie_word_embeddings"));
  HR_TRY(tie_top, top.get_bool("tie_word_embeddings"));
  if (tie_top && wrapped) spec.tie_word_embeddings = *tie_top;  // the wrapper's flag decides for the LM head
  else if (tie_text) spec.tie_word_embeddings = *tie_text;
  else if (tie_top) spec.tie_word_embeddings = *tie_top;
  else spec.tie_word_embeddings = default_tie_word_embeddings(spec.model_type, spec.architecture);

  return true;
}

// quantization_config, at the top level or in the text sub-config.
Result<bool> read_quantization(const ConfigReader& top, const ConfigReader& text, ModelSpec& spec) {
  for (const ConfigReader* r : std::initializer_list<const ConfigReader*>{&top, &text}) {
    if (auto q = r->child("quantization_config")) {
      HR_TRY(qc, read_quantization_config(*q));
      spec.quantization = std::move(qc);
      break;
    }
    if (r->has("quantization_config"))
      return tl::unexpected(r->type_error("quantization_config", "object"));
  }
  return true;
}

}  // namespace

// Omni models (Qwen3-Omni, Qwen2.5-Omni) keep what vLLM serves in thinker_config: vLLM's
// registry maps their architecture to the thinker alone (Qwen3OmniMoeThinkerForConditionalGeneration),
// which loads the thinker's language model, vision and audio encoders, and no talker or code2wav.
// Its sub-configs are read as a multimodal wrapper's would be.
nlohmann::json hoist_thinker_config(const nlohmann::json& config) {
  auto thinker = config.find("thinker_config");
  if (thinker == config.end() || !thinker->is_object()) return config;
  nlohmann::json out = config;
  for (const char* key : {"text_config", "vision_config", "audio_config", "torch_dtype", "dtype", "tie_word_embeddings"})
    if (!out.contains(key) && thinker->contains(key)) out[key] = (*thinker)[key];
  return out;
}

// Phi-4-multimodal's Conformer (phi4mm_audio.py ConformerEncoder, phi4mm_utils.py) from
// audio_processor.config: the integers and flags its weights' shapes take, each bounded.
Result<void> read_conformer_fields(const ConfigReader& c, ConformerConfig& x) {
  const std::pair<const char*, int*> ints[] = {
      {"input_size", &x.input_size}, {"kernel_size", &x.kernel_size}, {"ext_pw_out_channel", &x.ext_pw_out_channel},
      {"ext_pw_kernel_size", &x.ext_pw_kernel_size}, {"depthwise_seperable_out_channel", &x.depthwise_out},
      {"depthwise_multiplier", &x.depthwise_multiplier}, {"attention_group_size", &x.attention_group},
      {"time_reduction", &x.time_reduction}};
  for (auto [key, into] : ints) {
    HR_TRY(v, get_number_in(c, key, 0.0, 65536.0));
    if (v) *into = static_cast<int>(*v);
  }
  for (auto [key, into] : {std::pair<const char*, bool*>{"bias_in_glu", &x.bias_in_glu}, {"batch_norm", &x.batch_norm}}) {
    HR_TRY(v, c.get_bool(key));
    if (v) *into = *v;
  }
  HR_TRY(linear_glu, c.get_bool("linear_glu_in_convm"));
  if (linear_glu.value_or(false) || x.attention_group < 1 || x.time_reduction < 2) x.laid_out = false;
  if (auto e = c.child("encoder_embedding_config")) {
    HR_TRY(v, get_number_in(*e, "input_size", 0.0, 65536.0));
    if (v) x.embedding_input = static_cast<int>(*v);
  }
  if (auto n = c.child("nemo_conv_settings")) {
    HR_TRY(channels, get_number_in(*n, "conv_channels", 1.0, 65536.0));
    HR_TRY(sub, n->get_string("subsampling"));
    HR_TRY(causal, n->get_bool("is_causal"));
    if (channels) x.conv_channels = static_cast<int>(*channels);
    if (sub && *sub != "dw_striding") {
      x.depthwise_subsampling = false;
      if (*sub != "striding") x.laid_out = false;  // the Conv1d stacks are not laid out
    }
    if (causal) x.causal_subsampling = *causal;
  }
  if (auto r = c.child("relative_attention_bias_args")) {
    HR_TRY(type, r->get_string("type"));
    HR_TRY(distance, get_number_in(*r, "t5_bias_max_distance", 1.0, 1 << 20));
    HR_TRY(symmetric, r->get_bool("t5_bias_symmetric"));
    if (type && *type != "t5") x.laid_out = false;
    if (distance) x.t5_max_distance = static_cast<int>(*distance);
    if (symmetric) x.t5_symmetric = *symmetric;
  }
  return {};
}

// Phi-4-multimodal's speech encoder (phi4mm_audio.py AudioEmbedding over a ConformerEncoder) from
// its config's audio_processor.config (attention_dim, attention_heads, num_blocks, linear_units and
// the layout's other fields) and embd_layer.audio_embd_layer (the projection into the language
// model).
Result<std::optional<AudioConfig>> read_phi4mm_audio(const ConfigReader& top) {
  HR_TRY(phi4mm, is_phi4mm(top));
  auto ap = top.child("audio_processor");
  if (!phi4mm || !ap) return std::optional<AudioConfig>{};
  AudioConfig a;
  a.model_type = "phi4mm_conformer";
  ConformerConfig x;
  if (auto c = ap->child("config")) {
    HR_TRY(dim, get_number_in(*c, "attention_dim", 1.0, 65536.0));
    HR_TRY(heads, get_number_in(*c, "attention_heads", 1.0, 1024.0));
    HR_TRY(blocks, get_number_in(*c, "num_blocks", 1.0, 1024.0));
    HR_TRY(units, get_number_in(*c, "linear_units", 1.0, 1 << 20));
    a.d_model = static_cast<int>(dim.value_or(0.0));
    a.heads = static_cast<int>(heads.value_or(0.0));
    a.layers = static_cast<int>(blocks.value_or(0.0));
    a.ffn = static_cast<int>(units.value_or(0.0));
    if (auto fields = read_conformer_fields(*c, x); !fields) return tl::unexpected(fields.error());
    if (a.ffn == 0 || a.heads == 0) x.laid_out = false;  // widths the layout needs are not written
  }
  if (auto embd = top.child("embd_layer"); embd) {
    if (auto audio = embd->child("audio_embd_layer")) {
      HR_TRY(projection, audio->get_string("projection_cls"));
      HR_TRY(rate, get_number_in(*audio, "downsample_rate", 1.0, 64.0));
      HR_TRY(qformer, audio->get_bool("use_qformer"));
      HR_TRY(conv_ds, audio->get_bool("use_conv_downsample"));
      x.mlp_projection = projection.value_or("mlp") == "mlp";
      if (projection && *projection != "mlp" && *projection != "linear") x.laid_out = false;
      if (rate) x.downsample_rate = static_cast<int>(*rate);
      if (qformer.value_or(false) || conv_ds.value_or(false)) x.laid_out = false;
    }
  }
  a.conformer = x;
  return std::optional<AudioConfig>(a);
}

// A list of [time, frequency] pairs (Gemma 3n's sscp_conv_kernel_size / sscp_conv_stride_size),
// each between 1 and 64.
Result<std::vector<std::array<int, 2>>> read_pairs(const ConfigReader& c, const std::string& key) {
  std::vector<std::array<int, 2>> out;
  if (!c.has(key)) return out;
  const auto& v = c.json().at(key);
  if (!v.is_array() || v.size() > 8) return tl::unexpected(c.type_error(key, "list of at most 8 [time, frequency] pairs"));
  for (const auto& pair : v) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer() || !pair[1].is_number_integer())
      return tl::unexpected(c.type_error(key, "list of [time, frequency] integer pairs"));
    const auto t = pair[0].get<std::int64_t>(), f = pair[1].get<std::int64_t>();
    if (t < 1 || t > 64 || f < 1 || f > 64) return tl::unexpected(c.type_error(key, "pairs of integers from 1 to 64"));
    out.push_back({static_cast<int>(t), static_cast<int>(f)});
  }
  return out;
}

// Gemma 3n's subsampling convolutions (Gemma3nAudioSubSampleConvProjection): channels, kernels and
// strides of its two conv blocks.
Result<void> read_gemma3n_subsampling(const ConfigReader& ac, AudioConfig& a) {
  HR_TRY(channels, ac.get_int_list("sscp_conv_channel_size"));
  if (channels) {
    if (channels->size() > 8) return tl::unexpected(ac.type_error("sscp_conv_channel_size", "list of at most 8 channel counts"));
    for (auto c : *channels) {
      if (c < 1 || c > 65536) return tl::unexpected(ac.type_error("sscp_conv_channel_size", "channel counts from 1 to 65536"));
      a.subsample_channels.push_back(static_cast<int>(c));
    }
  }
  HR_TRY(kernels, read_pairs(ac, "sscp_conv_kernel_size"));
  HR_TRY(strides, read_pairs(ac, "sscp_conv_stride_size"));
  a.subsample_kernels = std::move(kernels);
  a.subsample_strides = std::move(strides);
  return {};
}

// Gemma 4's audio encoder (transformers' Gemma4AudioConfig): its two subsampling convolutions'
// channels (subsampling_conv_channels), and the class defaults for what a config leaves out
// (hidden_size 1024, num_hidden_layers 12, num_attention_heads 8, conv_kernel_size 5, channels
// [128, 32], output_proj_dims 1536), which transformers fills in as it loads the config.
Result<void> read_gemma4_audio(const ConfigReader& ac, AudioConfig& a) {
  HR_TRY(channels, ac.get_int_list("subsampling_conv_channels"));
  if (channels) {
    if (channels->size() != 2) return tl::unexpected(ac.type_error("subsampling_conv_channels", "list of 2 channel counts"));
    for (auto c : *channels) {
      if (c < 1 || c > 65536) return tl::unexpected(ac.type_error("subsampling_conv_channels", "channel counts from 1 to 65536"));
      a.subsample_channels.push_back(static_cast<int>(c));
    }
  } else {
    a.subsample_channels = {128, 32};
  }
  if (a.d_model == 0) a.d_model = 1024;
  if (a.layers == 0) a.layers = 12;
  if (a.heads == 0) a.heads = 8;
  if (a.conv_kernel == 0) a.conv_kernel = 5;
  if (a.output_dim == 0) a.output_dim = 1536;
  return {};
}

// audio_config: sizes of the audio encoder, each bounded like the language model's.
Result<std::optional<AudioConfig>> read_audio(const ConfigReader& top) {
  auto ac = top.child("audio_config");
  if (!ac) return read_phi4mm_audio(top);
  AudioConfig a;
  HR_TRY(type, ac->get_string("model_type"));
  a.model_type = type.value_or("");
  struct Field {
    std::vector<std::string> keys;
    int* into;
  };
  // Gemma 3n's Gemma3nAudioConfig names them conf_num_hidden_layers, hidden_size,
  // conf_num_attention_heads and input_feat_size; Gemma 4's num_hidden_layers, hidden_size,
  // num_attention_heads, conv_kernel_size and output_proj_dims.
  for (const Field& f : {Field{{"encoder_layers", "num_hidden_layers", "conf_num_hidden_layers"}, &a.layers},
                         Field{{"d_model", "hidden_size"}, &a.d_model},
                         Field{{"encoder_attention_heads", "conf_num_attention_heads", "num_attention_heads"}, &a.heads},
                         Field{{"encoder_ffn_dim"}, &a.ffn},
                         Field{{"output_dim", "output_proj_dims"}, &a.output_dim},
                         Field{{"num_mel_bins", "input_feat_size"}, &a.num_mel_bins},
                         Field{{"downsample_hidden_size"}, &a.downsample_hidden_size},
                         Field{{"n_window"}, &a.n_window}, Field{{"conv_chunksize"}, &a.conv_chunksize},
                         Field{{"conf_conv_kernel_size", "conv_kernel_size"}, &a.conv_kernel}, Field{{"vocab_size"}, &a.vocab_size},
                         Field{{"max_source_positions"}, &a.max_source_positions}}) {
    for (const auto& key : f.keys) {
      HR_TRY(v, get_number_in(*ac, key, 0.0, 1 << 20));
      if (v) {
        *f.into = static_cast<int>(*v);
        break;
      }
    }
  }
  // MiniCPM-o pools the encoder's output by the top-level audio_pool_step (minicpmo.py).
  HR_TRY(pool_step, get_number_in(top, "audio_pool_step", 1.0, 1024.0));
  if (pool_step) a.pool_step = static_cast<int>(*pool_step);
  if (a.model_type == "gemma3n_audio")
    if (auto sub = read_gemma3n_subsampling(*ac, a); !sub) return tl::unexpected(sub.error());
  if (a.model_type == "gemma4_audio")
    if (auto sub = read_gemma4_audio(*ac, a); !sub) return tl::unexpected(sub.error());
  return std::optional<AudioConfig>(a);
}

Result<ModelSpec> parse_config(const nlohmann::json& original, const std::string& origin,
                               std::shared_ptr<const std::string> text_ptr) {
  if (!original.is_object())
    return make_error(ErrorCode::parse_error, "expected a JSON object, got " + json_kind(original), origin);
  const nlohmann::json config = hoist_thinker_config(original);
  if (auto shell = linked_repo_shell(config)) return std::move(*shell);
  std::shared_ptr<const KeyPositions> positions;
  if (text_ptr) positions = std::make_shared<KeyPositions>(scan_key_positions(*text_ptr));
  ConfigReader top(config, origin, "", text_ptr, positions);

  ModelSpec spec;
  spec.raw_config = config;
  HR_TRY(archs, top.get_string_list("architectures"));
  if (archs && !archs->empty()) spec.architecture = archs->front();
  HR_TRY(top_type, top.get_string("model_type"));

  // Multimodal wrappers keep the language model's fields in a sub-config.
  std::optional<ConfigReader> sub;
  const char* sub_key = "";
  for (const char* key : {"text_config", "llm_config", "language_config"}) {
    if ((sub = top.child(key))) {
      sub_key = key;
      break;
    }
  }
  const ConfigReader& text = sub ? *sub : top;
  HR_TRY(text_type, text.get_string("model_type"));
  spec.model_type = text_type.value_or(top_type.value_or(""));

  // Keys the config leaves out that transformers fills from its config class defaults.
  nlohmann::json with_defaults;
  std::optional<ConfigReader> defaulted;
  if (spec.model_type == "gemma3_text" || (spec.model_type == "gemma3" && sub)) {
    with_defaults = text.json();
    for (const auto& [k, v] : gemma3_text_defaults().items())
      if (!with_defaults.contains(k) || with_defaults[k].is_null()) with_defaults[k] = v;
    defaulted.emplace(with_defaults, origin, sub_key, text_ptr, positions);
  } else if (const nlohmann::json* defaults = sub ? wrapped_text_defaults(spec.model_type) : nullptr) {
    with_defaults = text.json();
    for (const auto& [k, v] : defaults->items())
      if (!with_defaults.contains(k)) with_defaults[k] = v;
    defaulted.emplace(with_defaults, origin, sub_key, text_ptr, positions);
  }
  const ConfigReader& t = defaulted ? *defaulted : text;

  HR_TRY(own_head_dim, read_dimensions(t, origin, spec));
  HR_TRY(lengths_ok, read_max_length(t, spec));
  HR_TRY(dtype_ok, read_dtype(top, text, spec));
  HR_TRY(rope, read_rope_scaling(t));
  spec.rope_scaling = rope;
  HR_TRY(partial, read_partial_rotary_factor(t));
  spec.partial_rotary_factor = partial;

  HR_TRY(tie_ok, read_tie_embeddings(top, text, sub.has_value(), spec));
  HR_TRY(mla_ok, read_mla(t, spec));
  if (spec.mla && !own_head_dim) spec.head_dim = spec.mla->qk_nope_head_dim + spec.mla->qk_rope_head_dim;
  HR_TRY(moe_ok, read_moe(t, spec));
  HR_TRY(hybrid_ok, read_hybrid(t, spec));
  HR_TRY(layers_ok, read_layer_kinds(t, spec));
  HR_TRY(attn2026_ok, read_attention_2026(t, spec));
  (void)mla_ok, (void)moe_ok, (void)hybrid_ok, (void)layers_ok, (void)attn2026_ok;

  HR_TRY(vision, read_vision(top));
  spec.vision = vision;
  // Molmo's intermediate_size is its fused ff_proj's width: molmo.py's LanguageModelMLP takes half
  // of it for each of gate and up (config.intermediate_size // 2).
  if (vision && vision->model_type == "molmo_vit") spec.intermediate_size /= 2;
  HR_TRY(audio, read_audio(top));
  spec.audio = audio;

  HR_TRY(enc_dec, top.get_bool("is_encoder_decoder"));
  // vLLM (v0.6–v0.10) runs Mllama as an encoder-decoder model: its cross-attention layers cache
  // the vision encoder's output.
  spec.is_encoder_decoder = enc_dec.value_or(false) || spec.architecture == "MllamaForConditionalGeneration";

  HR_TRY(plausible, check_plausible(spec, origin));
  (void)plausible;

  HR_TRY(quant_ok, read_quantization(top, text, spec));
  (void)lengths_ok, (void)dtype_ok, (void)tie_ok, (void)quant_ok;
  return spec;
}

bool default_tie_word_embeddings(std::string_view model_type, std::string_view architecture) {
  // A config without model_type: the language model's type from the architecture vLLM registers
  // it under (Kimi-VL builds its language model as DeepseekV2ForCausalLM from a DeepseekV3-style
  // text config, vllm/model_executor/models/kimi_vl.py).
  if (model_type.empty()) {
    static const std::vector<std::pair<std::string_view, std::string_view>> k_arch = {
        {"KimiVLForConditionalGeneration", "deepseek_v3"}, {"DeepseekV2ForCausalLM", "deepseek_v2"},
        {"DeepseekV3ForCausalLM", "deepseek_v3"},           {"LlamaForCausalLM", "llama"},
        {"MistralForCausalLM", "mistral"},                  {"Qwen2ForCausalLM", "qwen2"},
        {"Qwen3ForCausalLM", "qwen3"},                      {"LlavaForConditionalGeneration", "llama"},
    };
    for (const auto& [arch, type] : k_arch)
      if (arch == architecture) return default_tie_word_embeddings(type, {});
  }
  // transformers config class defaults (4.5x). PretrainedConfig defaults to true; most decoder-only
  // families override it to false. Types not listed keep the PretrainedConfig default.
  static const std::vector<std::pair<std::string_view, bool>> k_table = {
      {"llama", false},        {"mistral", false},      {"mixtral", false},      {"qwen2", false},
      {"qwen2_moe", false},    {"qwen3", false},        {"qwen3_moe", false},    {"qwen3_next", false},
      {"qwen2_vl", false},     {"qwen2_5_vl", false},   {"phi3", false},         {"phi", false},
      {"olmo2", false},        {"internlm2", false},    {"deepseek_v2", false},  {"deepseek_v3", false},
      // DeepSeek-VL2 / DeepSeek-OCR: vLLM's DeepseekVLV2Config builds the language model from
      // DeepseekV2Config (tie false; DeepSeek-OCR's checkpoint has its own lm_head.weight).
      {"deepseek_vl_v2", false},
      {"kimi_k2", false},      {"granite", false},      {"gpt_oss", false},      {"llama4_text", false},
      {"mllama_text_model", false}, {"nemotron_h", false}, {"yi", false},       {"exaone", false},
      {"gemma", true},         {"gemma2", true},        {"gemma3_text", true},   {"gemma3", true},
      {"cohere", true},        {"cohere2", true},       {"opt", true},           {"gpt2", true},
      {"falcon", true},        {"starcoder2", true},    {"gpt_neox", false},     {"bloom", true},
  };
  for (const auto& [type, tie] : k_table)
    if (type == model_type) return tie;
  return true;
}

}  // namespace model_detail

Result<std::optional<RopeScaling>> parse_rope_scaling(const nlohmann::json& holder, const std::string& origin) {
  if (!holder.is_object()) return make_error(ErrorCode::parse_error, "expected a JSON object", origin);
  return model_detail::read_rope_scaling(model_detail::ConfigReader(holder, origin));
}

Result<ModelSpec> parse_model_config(const nlohmann::json& config, const std::string& origin) {
  return model_detail::parse_config(config, origin, nullptr);
}

Result<ModelSpec> parse_model_config_text(std::string_view text, const std::string& origin) {
  auto json = util::parse_json(text, origin);
  if (!json) return tl::unexpected(json.error());
  return model_detail::parse_config(*json, origin, std::make_shared<const std::string>(text));
}

}  // namespace headroom
