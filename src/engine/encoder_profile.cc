#include "engine/encoder_profile.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "engine/gemma4_vision.h"
#include "engine/glm4v_vision.h"
#include "engine/minicpmv_slices.h"
#include "engine/ovis25_vision.h"
#include "engine/qwen2_vl_video.h"
#include "engine/qwen3_vl_video.h"
#include "engine/qwen_resize.h"
#include "engine/tiled_encoder_items.h"

#include "util/json_file.h"
#include "util/strings.h"

namespace headroom::engine {

namespace {

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Byte figures are clamped here, far beyond any GPU, before they become integers: a hostile
// config's tower (a 65,536-pixel slice of 1-pixel patches) must not overflow the conversion.
constexpr double k_most_bytes = 1e18;

enum class Family { none, qwen_dynamic, siglip_fixed, clip_fixed, llava_anyres, phi3v_crops, phi4mm_crops, pixtral, llama4_tiles, internvl_tiles, moonvit, gemma4, mllama_v0, aya_tiles, minicpmv_slices, llava_next_video, glm4v, idefics3_tiles, deepseek_ocr, deepseek_vl2, gemma3n, ovis25, gemma4_unified, molmo_crops, unsized };

Family family_of(const ModelSpec& m) {
  if (m.vision && m.architecture == "DeepseekOCRForCausalLM") return Family::deepseek_ocr;  // its config gives no widths
  if (m.vision && m.vision->model_type == "gemma3n_vision") return Family::gemma3n;         // a timm CNN, no widths
  if (m.vision && m.vision->model_type == "gemma4_unified_vision") return Family::gemma4_unified;  // no tower
  if (m.vision && m.vision->model_type == "deepseek_vl2_siglip") return Family::deepseek_vl2;
  if (m.vision && m.vision->model_type == "molmo_vit") return Family::molmo_crops;
  if (!m.vision || m.vision->depth <= 0 || m.vision->hidden_size <= 0) return Family::none;
  const std::string& a = m.architecture;
  const std::string& vt = m.vision->model_type;
  if (has(a, "Qwen2VL") || has(a, "Qwen2_5_VL") || has(a, "Qwen3VL") || has(a, "Qwen3_5") || has(a, "DotsOCR") ||
      has(a, "Qwen2_5Omni") || has(a, "Qwen3Omni") || has(a, "PaddleOCRVL") || a.starts_with("Keye") || vt.starts_with("qwen") ||
      vt == "dots_vit")
    return Family::qwen_dynamic;
  if (has(a, "Phi3VForCausalLM")) return Family::phi3v_crops;
  if (a == "Phi4MMForCausalLM") return Family::phi4mm_crops;
  if (has(a, "Mllama") || vt == "mllama_vision_model") return Family::mllama_v0;
  if (has(a, "LlavaNextVideo")) return Family::llava_next_video;
  if (has(a, "LlavaNext") || has(a, "LlavaOnevision")) return Family::llava_anyres;
  if (has(a, "AyaVision")) return Family::aya_tiles;
  if (a.starts_with("Glm4v") || vt.starts_with("glm4v")) return Family::glm4v;
  if (a.starts_with("Idefics3") || a.starts_with("SmolVLM")) return Family::idefics3_tiles;
  if (a == "MiniCPMV" || a == "MiniCPMO" || m.vision->resampler_queries > 0) return Family::minicpmv_slices;
  // Gemma 3 pools its SigLIP patches to 256 tokens (gemma3_mm.py); PaliGemma hands every patch on
  // (paligemma.py: the SigLIP encoder info's (image_size / patch)² tokens). Other SigLIP towers
  // (MiniMax-VL-01's, ...) are not sized.
  if (has(a, "Gemma3ForConditionalGeneration")) return Family::siglip_fixed;
  if (has(a, "PaliGemma")) return Family::clip_fixed;
  // Pixtral-12B in transformers' layout is a LlavaForConditionalGeneration over a pixtral tower.
  if (has(a, "Mistral3") || has(a, "Pixtral") || vt == "pixtral") return Family::pixtral;
  if (has(a, "Llava") || vt == "clip_vision_model") return Family::clip_fixed;
  if (has(a, "Llama4ForConditionalGeneration") || vt == "llama4_vision_model") return Family::llama4_tiles;
  if (has(a, "InternVLChatModel") || vt == "intern_vit_6b" || has(a, "InternVLForConditionalGeneration") ||
      has(a, "InternS1ForConditionalGeneration") || vt == "internvl_vision" || vt == "interns1_vision")
    return Family::internvl_tiles;
  if (has(a, "KimiVL") || has(a, "KimiK25") || vt == "moonvit") return Family::moonvit;
  if (has(a, "Gemma4ForConditionalGeneration") || vt == "gemma4_vision") return Family::gemma4;
  if (a == "Ovis2_5") return Family::ovis25;
  return Family::unsized;
}

// The Qwen-VL processors' default largest image, in pixels, from each release's
// preprocessor_config.json: Qwen2-VL and Qwen2.5-VL max_pixels 12845056 (= 16384 tokens of
// 28 × 28 pixels), Qwen3-VL and Qwen3.5 size.longest_edge 16777216 (16384 tokens of 32 × 32),
// dots.ocr max_pixels 11289600; Qwen3-Omni keeps Qwen2-VL's image processor and max_pixels
// 12845056 with 32 × 32-pixel tokens (12,544).
std::int64_t qwen_default_max_pixels(const ModelSpec& m) {
  const std::string& a = m.architecture;
  // Keye-VL (keye.py: min/max_pixels from the release's image processor, no vLLM default):
  // Keye-VL-8B-Preview's preprocessor_config.json writes max_pixels 1,003,520 (1,280 tokens of
  // 28 × 28), the remote processor's default too.
  if (a.starts_with("Keye")) return 1'003'520;
  // PaddleOCR-VL's release: max_pixels 2,822,400 (3,600 tokens of 28 × 28; paddleocr_vl.py sizes
  // its dummy with Qwen2-VL's smart_resize under it).
  if (has(a, "PaddleOCRVL")) return 2'822'400;
  if (has(a, "DotsOCR") || m.vision->model_type == "dots_vit") return 11'289'600;
  if (has(a, "Qwen3Omni") || m.vision->model_type.starts_with("qwen3_omni")) return 12'845'056;
  if (has(a, "Qwen3") || m.vision->model_type.starts_with("qwen3")) return 16'777'216;
  return 12'845'056;
}

// --mm-processor-kwargs max_pixels, or size.longest_edge (Qwen3-VL's processor); 0 when absent.
std::int64_t processor_max_pixels(const VllmFlags& flags) {
  if (auto v = mm_processor_kwarg(flags, "max_pixels")) return *v;
  return mm_processor_kwarg(flags, "size", "longest_edge").value_or(0);
}

// qwen2_vl.py get_image_size_with_most_features: smart_resize of a 9999999-pixel square under
// max_pixels keeps the square and floors its side to a multiple of patch × merge.
EncoderItem qwen_item(const ModelSpec& m, const VllmFlags& flags) {
  const auto& v = *m.vision;
  const std::int64_t patch = v.patch_size > 0 ? v.patch_size : 14, merge = v.spatial_merge_size > 0 ? v.spatial_merge_size : 2;
  std::int64_t max_pixels = processor_max_pixels(flags);
  std::string source = "--mm-processor-kwargs";
  if (max_pixels <= 0 && v.max_pixels > 0) {
    max_pixels = v.max_pixels;
    source = v.processor_source.empty() ? "the processor config's max_pixels" : v.processor_source;
  }
  if (max_pixels <= 0) {
    max_pixels = qwen_default_max_pixels(m);
    source = "the release's preprocessor_config.json default";
  }
  const std::int64_t factor = patch * merge;
  const auto side = static_cast<std::int64_t>(std::floor(std::sqrt(static_cast<double>(max_pixels)) / static_cast<double>(factor))) * factor;
  EncoderItem item;
  item.modality = "image";
  item.patches = (side / patch) * (side / patch);
  item.tokens = item.patches / (merge * merge);
  item.source = std::to_string(side) + "x" + std::to_string(side) + " pixels (" + source + ")";
  return item;
}

// From v0.11 --limit-mm-per-prompt may give the dummy image's width and height; vLLM builds the
// dummy at the smaller of them and the processor's largest (multimodal/processing.py
// _get_dummy_images: "override ... exceeds model's maximum width, will be ignored") and the
// processor resizes it (transformers qwen2_vl smart_resize: sides rounded to patch × merge, scaled
// into min_pixels..max_pixels). vLLM still budgets the largest image's tokens for the item.
EncoderItem qwen_sized_dummy(const ModelSpec& m, const VllmFlags& flags, const VllmVersion& version, const EncoderItem& largest,
                             std::int64_t side) {
  auto it = flags.mm_dummy_sizes.find("image");
  if (version < VllmVersion{0, 11} || it == flags.mm_dummy_sizes.end() || (it->second.width <= 0 && it->second.height <= 0))
    return largest;
  const auto& v = *m.vision;
  const std::int64_t patch = v.patch_size > 0 ? v.patch_size : 14, merge = v.spatial_merge_size > 0 ? v.spatial_merge_size : 2;
  const std::int64_t factor = patch * merge;
  const double w = static_cast<double>(it->second.width > 0 ? std::min<std::int64_t>(side, it->second.width) : side);
  const double h = static_cast<double>(it->second.height > 0 ? std::min<std::int64_t>(side, it->second.height) : side);
  const double max_pixels = static_cast<double>(side) * static_cast<double>(side);
  const double min_pixels = static_cast<double>(v.min_pixels > 0 ? v.min_pixels : (qwen_default_max_pixels(m) == 16'777'216 ? 65536 : 3136));
  const ResizedSides r = qwen_smart_resize(h, w, static_cast<double>(factor), min_pixels, max_pixels);
  const double h_bar = r.height, w_bar = r.width;
  EncoderItem item = largest;
  item.budget_tokens = largest.tokens;
  item.patches = static_cast<std::int64_t>(h_bar / patch) * static_cast<std::int64_t>(w_bar / patch);
  item.tokens = item.patches / (merge * merge);
  item.source = std::to_string(static_cast<std::int64_t>(w)) + "x" + std::to_string(static_cast<std::int64_t>(h)) +
                " pixels (--limit-mm-per-prompt's image width and height), resized to " +
                std::to_string(static_cast<std::int64_t>(w_bar)) + "x" + std::to_string(static_cast<std::int64_t>(h_bar));
  return item;
}

// Fixed-size towers: one image is (image_size / patch)² patches. Gemma 3 pools them to
// mm_tokens_per_image (256, gemma3_mm.py); LLaVA adds CLIP's class token and hands every patch on
// (llava.py), as PaliGemma does with SigLIP's (paligemma.py); Mistral 3 merges 2 × 2 patches and
// adds one break token per row (pixtral.py).
EncoderItem fixed_item(const ModelSpec& m, Family family) {
  const auto& v = *m.vision;
  EncoderItem item;
  if (v.image_size <= 0 || v.patch_size <= 0) return item;
  const std::int64_t side = v.image_size / v.patch_size;
  item.modality = "image";
  item.patches = side * side;
  item.source = std::to_string(v.image_size) + "x" + std::to_string(v.image_size) + " pixels (the vision config's image_size)";
  if (family == Family::siglip_fixed) item.tokens = 256;
  if (family == Family::clip_fixed) {
    item.patches += class_tokens(v);
    item.tokens = side * side;
  }
  if (family == Family::pixtral) {
    // Mistral 3 merges 2 x 2 patches (its config's spatial_merge_size); Pixtral-12B in the LLaVA
    // layout has no merger (llava.py PixtralHFEncoderInfo: getattr(hf_config, "spatial_merge_size", 1)).
    const int merge = v.spatial_merge_size > 0 ? v.spatial_merge_size : has(m.architecture, "Llava") ? 1 : 2;
    const std::int64_t merged = side / merge;
    item.tokens = merged * merged + merged;
  }
  return item;
}

// Bytes per patch alive at the encoder's peak on one rank. Each block's widest moment, in eager
// PyTorch: the residual stream and the normed input (2h) stay alive while the MLP holds fc1's
// output and its activation (2I, plain fc1/fc2: siglip.py, clip.py, qwen2_vl.py, qwen3_vl.py) or
// the fused gate/up output and the gated product (3I: qwen2_5_vl.py, dots_ocr.py, pixtral.py);
// attention holds q, k, v and their rotated copies (5h). TP shards the intermediate widths
// (ColumnParallelLinear), not the residual. Besides: the dummy pixel values (3 × frames × patch²
// per patch) for the whole pass. An estimate: the allocator's rounding and the kernels'
// workspaces are not in it.
double peak_bytes_per_patch(const ModelSpec& m, Family family, int tp, bool data_parallel_encoder, double dtype_bytes) {
  const auto& v = *m.vision;
  const double h = v.hidden_size, I = v.intermediate_size > 0 ? v.intermediate_size : 4.0 * h;
  const bool gated = has(m.architecture, "Qwen2_5_VL") || has(m.architecture, "DotsOCR") || family == Family::pixtral ||
                     family == Family::gemma4 || family == Family::glm4v;
  // MoonViT's linears are not split by TP (kimi_vl.py: "We only do sharding for language model and
  // not vision model for now"), nor Gemma 4's (transformers' module; replaced by vLLM's parallel
  // layers in #43798, June 2026, not modelled).
  // DeepSeek-VL2's timm tower is plain torch modules (deepseek_vl2.py; late 2026 releases split its
  // MLP by TP, not followed: the estimate keeps the whole tower on each rank).
  const bool replicated = data_parallel_encoder || family == Family::moonvit || family == Family::gemma4 || family == Family::deepseek_vl2;
  const double shard = replicated ? 1.0 : static_cast<double>(std::max(1, tp));
  const double mlp = 2.0 * h + (gated ? 3.0 : 2.0) * I / shard;
  const double attention = 2.0 * h + 5.0 * h / shard;
  const double patch = v.patch_size > 0 ? v.patch_size : 14;
  const double frames =
      family == Family::qwen_dynamic || family == Family::glm4v ? (v.temporal_patch_size > 0 ? v.temporal_patch_size : 2) : 1;
  const double pixels = 3.0 * frames * patch * patch;
  return dtype_bytes * (std::max(mlp, attention) + pixels);
}

// dots.ocr before vLLM's own dots_ocr.py (taken as first in v0.11) ran through the release's
// plugin (modeling_dots_ocr_vllm.py over transformers' DotsVisionTransformer, one flash-attn varlen
// sequence per image). Its rotary embedding works in float32 on q, then k: a block is widest while
// k rotates, holding the residual, the normed input, the qkv output and the rotated q (6h in the
// model's dtype), k's float copy and three float temporaries (x cos, rotate_half's cat, x sin: 4h
// in float32) and the float cos/sin (2 x head_dim). Throughout the pass the plugin also keeps the
// float32 dummy pixels beside their cast, the zeroed output (out_hidden / merge² per patch) and the
// float rotary table (head_dim / 2 per patch).
double dots_plugin_bytes_per_patch(const ModelSpec& m, double dtype_bytes) {
  const auto& v = *m.vision;
  const double h = v.hidden_size, I = v.intermediate_size > 0 ? v.intermediate_size : 4.0 * h;
  const double head = v.num_heads > 0 ? h / v.num_heads : 128.0;
  const double patch = v.patch_size > 0 ? v.patch_size : 14, merge = v.spatial_merge_size > 0 ? v.spatial_merge_size : 2;
  const double mlp = dtype_bytes * (2.0 * h + 3.0 * I);
  const double rotary = dtype_bytes * 6.0 * h + 4.0 * 4.0 * h + 4.0 * 2.0 * head;
  const double pixels = 3.0 * patch * patch * (4.0 + dtype_bytes);
  const double out = (v.out_hidden_size > 0 ? v.out_hidden_size : m.hidden_size) * dtype_bytes / (merge * merge);
  return std::max(mlp, rotary) + pixels + out + 4.0 * head / 2.0;
}

// How many dummy items vLLM batches: v1/worker/utils.py MultiModalBudget.get_max_items, with the
// budget of encoder_cache_manager.py compute_mm_encoder_budget (max_num_batched_tokens, raised to
// one item's tokens when an item is larger).
int dummy_items(const EncoderItem& item, int limit_per_prompt, const ResolvedSettings& s, std::int64_t& budget) {
  const std::int64_t per_item = std::max<std::int64_t>(1, item.budget_tokens > 0 ? item.budget_tokens : item.tokens);
  budget = std::max<std::int64_t>(s.max_num_batched_tokens, per_item);
  const std::int64_t by_encoder = budget / per_item;
  const std::int64_t per_prompt = std::max<std::int64_t>(1, std::min<std::int64_t>(limit_per_prompt, s.max_model_len / per_item));
  std::int64_t reqs = s.max_num_seqs;
  if (!s.enable_chunked_prefill) reqs = std::min<std::int64_t>(reqs, s.max_num_batched_tokens / per_item);
  return static_cast<int>(std::max<std::int64_t>(1, std::min(by_encoder, reqs * per_prompt)));
}

// Rows of the encoder cache per dummy item while the language model's dummy run holds it
// (gpu_model_runner.py profile_run). From v0.11 (#25810) an item shorter than the encoder budget
// was padded to the whole budget with zeros; #29386 (merged late November 2025, taken as first in
// v0.12) padded it only to the modality's max tokens per item; from v0.13 (#30475) the budget
// counts embeddings only and nothing is padded. While padding, the loop variable still holds the
// encoder's own output (a view of one tensor for the Qwen-VL towers), so it stays alive as well.
std::int64_t cached_rows_per_item(const EncoderProfile& p, const VllmVersion& version) {
  const std::int64_t embeds = p.item.tokens;
  std::int64_t padded = embeds;
  if (version.is_v1_engine() && !(version < VllmVersion{0, 11}) && version < VllmVersion{0, 12})
    padded = std::max(embeds, p.encoder_budget);
  else if (version.is_v1_engine() && !(version < VllmVersion{0, 12}) && version < VllmVersion{0, 13})
    padded = std::max(embeds, p.item.budget_tokens);
  return padded > embeds ? padded + embeds : embeds;
}

// The largest input vLLM profiles a Qwen-VL model with: its largest image, or its video when video
// is allowed and counts more tokens (Qwen2-VL / Qwen2.5-VL from v0.11 once max_model_len holds two
// images, qwen2_vl_video.h; Qwen3-VL before v0.13, qwen3_vl_video.h); the video when images are off.
EncoderItem qwen_profiled_item(const ModelSpec& m, const VllmFlags& flags, const ResolvedSettings& s, const VllmVersion& version) {
  const EncoderItem largest = qwen_item(m, flags);
  // get_image_size_with_most_features is a square (qwen_item), `side` pixels wide.
  const std::int64_t patch = m.vision->patch_size > 0 ? m.vision->patch_size : 14;
  const auto side = static_cast<std::int64_t>(std::lround(std::sqrt(static_cast<double>(largest.patches)))) * patch;
  const EncoderItem image = qwen_sized_dummy(m, flags, version, largest, side);
  if (mm_limit(flags, "video") > 0) {
    auto video = qwen3_vl_profiled_video(m, version, s.max_model_len, side);
    if (!video) video = qwen2_vl_profiled_video(m, flags, version, s.max_model_len, largest);
    if (video && (mm_limit(flags, "image") == 0 || video->budget_tokens > std::max(image.tokens, image.budget_tokens)))
      return *video;
  }
  return image;
}

// Gemma 4 encodes its dummy batch a frame or image at a time, or in chunks from v0.22
// (gemma4_vision.cc), so its peak is one forward's; the position one-hot of transformers before
// #46176 adds to it where the estimate takes it, and is the range's other reading where not.
void gemma4_peak(EncoderProfile& p, const VllmVersion& version, const EncoderDevice& device, double per_patch,
                 double dtype_bytes) {
  const std::int64_t units = gemma4_units_per_forward(p.item, p.items, version, device.total, device.free);
  const Bytes one_hot = gemma4_position_one_hot_bytes(p.item, units, dtype_bytes);
  p.encoder_peak = static_cast<Bytes>(static_cast<double>(units) * static_cast<double>(p.item.attention_span) * per_patch);
  if (gemma4_one_hot_in_estimate(version)) {
    p.encoder_peak += one_hot;
  } else {
    p.other_reading = one_hot;
    p.other_reading_why = "with a transformers release from before its #46176 (late May 2026), Gemma 4's vision embedder one-hots "
                          "every patch's position over 10,240 rows: " + std::to_string(units) + " " +
                          (p.item.modality == "video" ? "frame(s)" : "image(s)") + " per encoder call would take " +
                          util::fixed(to_gib(one_hot), 2) + " GiB more";
  }
  p.units_per_forward = units;
}

// GLM-4.xV where the image and the video count the same tokens: vLLM's tie-break between the
// modalities changed over the releases headroom follows, so the other modality's pass, when it is
// larger, is the range's other reading. `per_patch_per_item` is the peak bytes per patch of one
// item on this rank.
void glm4v_tied_reading(EncoderProfile& p, const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& s,
                        const VllmVersion& version, double per_patch_per_item) {
  const auto tied = glm4v_profiled_items(model, flags, s.max_model_len, version).tied;
  if (!tied) return;
  const auto other = static_cast<Bytes>(
      std::min(static_cast<double>(p.items) * static_cast<double>(tied->patches) * per_patch_per_item, k_most_bytes));
  if (other <= p.encoder_peak) return;
  p.other_reading = other - p.encoder_peak;
  p.other_reading_why = "GLM-4.xV's dummy image and video count the same tokens here and vLLM's tie-break between them "
                        "changed over these releases: profiling the " + tied->source + " would take " +
                        util::fixed(to_gib(p.other_reading), 2) + " GiB more";
}

// Qwen2-VL-style towers whose budgeted video ties with the image (max_model_len from two up to
// three images' tokens with images on: the budget's video has max_model_len less one image).
// budget.py orders the modalities by iterating a set of their names, so which one
// get_modality_with_max_tokens returns on a tie depends on Python's string hashing, different in
// each process: the image is the estimate, and the dummy video vLLM would then build (all of
// max_model_len, {video: 1}), when its pass is larger, the range's other reading.
void qwen_tied_video_reading(EncoderProfile& p, const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& s,
                             const VllmVersion& version, double per_patch) {
  if (p.item.modality != "image" || mm_limit(flags, "video") == 0) return;
  const auto video = qwen2_vl_profiled_video(model, flags, version, s.max_model_len, qwen_item(model, flags));
  if (!video || video->budget_tokens != std::max(p.item.tokens, p.item.budget_tokens)) return;
  const auto other = static_cast<Bytes>(std::min(static_cast<double>(video->patches) * per_patch, k_most_bytes));
  if (other <= p.encoder_peak) return;
  p.other_reading = other - p.encoder_peak;
  p.other_reading_why = "the dummy image and the video vLLM budgets count the same tokens here, and which one it profiles "
                        "depends on the order Python's string hashing gives the modalities: profiling the " +
                        video->source + " would take " + util::fixed(to_gib(p.other_reading), 2) + " GiB more";
}

// DeepSeek-VL2's dummy image (deepseek_vl2.py): the candidate resolution with the most tokens
// (VisionConfig::tile_rows × tile_cols of 384² tiles, 9 × 1 in the release) is cut into its local
// tiles and a global view, all encoded in one call; timm pads each 384² tile to 392² (28² = 784
// patches of 14²). Tokens: the global view's 14 × 15, the separator and (rows × 14) × (cols × 14 + 1).
EncoderItem deepseek_vl2_item(const ModelSpec& m) {
  const auto& v = *m.vision;
  EncoderItem item;
  const std::int64_t rows = std::max(1, v.tile_rows), cols = std::max(1, v.tile_cols), side = (v.image_size + v.patch_size - 1) / v.patch_size;
  item.modality = "image";
  item.attention_span = side * side;
  item.patches = (1 + rows * cols) * item.attention_span;
  item.tokens = 14 * 15 + 1 + (rows * 14) * (cols * 14 + 1);
  item.source = std::to_string(cols * 384) + "x" + std::to_string(rows * 384) + " pixels: " + std::to_string(rows * cols) +
                " tiles of 384² and the global view (the config's candidate_resolutions)";
  return item;
}

// Gemma 4 12B's dummy item (gemma4_unified.py get_mm_max_tokens_per_item, Gemma 4's dummy
// builder): vLLM profiles the modality with the most tokens per item, the video unless it is
// limited to 0: 32 frames budgeted at 70 soft tokens and 8 markers each (2,496 tokens), each frame
// a 224² image of 64 real soft tokens in 70 rows. An image is budgeted at max_soft_tokens
// (--mm-processor-kwargs, one of 70/140/280/560/1120; else the config's, else 280) and the 224²
// dummy fills 64/121/256/529/1,089 of those rows. A row is one merged 48² patch: no tower runs.
EncoderItem gemma4_unified_item(const ModelSpec& m, const VllmFlags& flags) {
  EncoderItem item;
  if (mm_limit(flags, "video") > 0) {
    item.modality = "video";
    item.patches = 32 * 70;
    item.attention_span = 70;
    item.tokens = 32 * 64;
    item.budget_tokens = 32 * (70 + 2 + 6);
    item.source = "32 frames of 224x224 pixels, 70 soft tokens each (Gemma 4's dummy video)";
    return item;
  }
  static constexpr std::array<std::array<int, 2>, 5> k_real{{{70, 64}, {140, 121}, {280, 256}, {560, 529}, {1120, 1089}}};
  std::int64_t budget = m.vision->soft_tokens_per_image > 0 ? m.vision->soft_tokens_per_image : 280;
  if (auto kw = mm_processor_kwarg(flags, "max_soft_tokens"))
    if (std::any_of(k_real.begin(), k_real.end(), [&](const auto& r) { return r[0] == *kw; })) budget = *kw;
  item.modality = "image";
  item.patches = budget;
  item.budget_tokens = budget;
  item.tokens = budget;
  for (const auto& r : k_real)
    if (r[0] == budget) item.tokens = r[1];
  item.source = "224x224 pixels in " + std::to_string(budget) + " soft-token rows (Gemma 4's dummy image)";
  return item;
}

// One call's peak of Gemma 4 12B's embedders, one image or frame at a time: per row the float32
// pixels of a (patch × pooling)² × 3 patch, their cast and LayerNorm, then about four rows of
// mm_embed_dim (projection, LayerNorm, positions, their norm) and the projected row; a video's
// frames are concatenated, so its output is briefly there twice.
double gemma4_unified_call_bytes(const ModelSpec& m, const EncoderItem& item, double dtype_bytes) {
  const auto& v = *m.vision;
  const double side = static_cast<double>(v.patch_size > 0 ? v.patch_size : 16) * (v.pooling_kernel_size > 0 ? v.pooling_kernel_size : 3);
  const double pixels = side * side * 3.0;
  const double row = pixels * (4.0 + 2.0 * dtype_bytes) + (4.0 * v.hidden_size + m.hidden_size) * dtype_bytes;
  const double rows = item.attention_span > 0 ? item.attention_span : item.patches;
  const double concatenated = item.modality == "video" ? static_cast<double>(item.tokens) * m.hidden_size * dtype_bytes : 0.0;
  return rows * row + concatenated;
}

// Ovis2.5 runs the NaViT tower, then its visual head, over the rank's whole batch (ovis2_5.py
// _process_visual_input: one packed call); the peak is the larger of the two. The video vLLM may
// profile instead (ovis25_vision.h) is the range's other reading where it would take more: which
// modality vLLM picks there, and how many frames its dummy gets, changed over the releases.
void ovis25_peak(EncoderProfile& p, const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& s,
                 double per_patch, double items_on_rank, double dtype_bytes) {
  const double head = ovis25_head_bytes_per_token(model, dtype_bytes);
  auto peak = [&](const EncoderItem& item) {
    return std::max(static_cast<double>(item.patches) * per_patch, static_cast<double>(item.tokens - 2) * head);
  };
  p.encoder_peak = static_cast<Bytes>(std::min(items_on_rank * peak(p.item), k_most_bytes));
  if (p.item.modality != "image") return;
  const auto video = ovis25_video_item(model, flags, s.max_model_len);
  if (!video) return;
  const double more = std::min(peak(*video), k_most_bytes) - static_cast<double>(p.encoder_peak);
  if (more <= 0) return;
  p.other_reading = static_cast<Bytes>(more);
  p.other_reading_why = "Ovis2.5 may profile its dummy video instead of the image (" + video->source +
                        "; the modality vLLM picks and the frames it builds changed over its releases): " +
                        util::fixed(to_gib(p.other_reading), 2) + " GiB more";
}

// Towers that take video as well as images: the Qwen-VL family, Gemma 4, LLaVA-OneVision,
// LLaVA-NeXT-Video (llava_onevision.py / llava_next_video.py get_supported_mm_limits), Ovis2.5
// (ovis2_5.py: one video per prompt), MiniCPM-V from 2.6 (minicpmv.py) and InternVL on the language
// models whose tokenizer has a video token (internvl.py get_video_token).
bool takes_video(const ModelSpec& model) {
  const Family f = family_of(model);
  return (f == Family::qwen_dynamic && !has(model.architecture, "PaddleOCRVL")) || f == Family::gemma4 ||
         has(model.architecture, "LlavaOnevision") ||
         has(model.architecture, "LlavaNextVideo") || f == Family::glm4v || model.architecture == "Ovis2_5" ||
         (f == Family::minicpmv_slices && minicpmv_takes_video(*model.vision)) ||
         (f == Family::internvl_tiles && internvl_takes_video(model, VllmVersion{0, 11}));
}

}  // namespace

int mm_limit(const VllmFlags& flags, const std::string& modality) {
  auto it = flags.limit_mm_per_prompt.find(modality);
  // vLLM's default limit per modality in the V1 profiler (config/multimodal.py): 999.
  return it == flags.limit_mm_per_prompt.end() ? 999 : it->second;
}

bool text_only_mode(const ModelSpec& model, const VllmFlags& flags) {
  if (!model.vision && !model.audio) return false;
  if (flags.language_model_only) return true;
  if (flags.limit_mm_per_prompt.empty()) return false;
  for (const char* modality : {"image", "video", "audio"}) {
    auto it = flags.limit_mm_per_prompt.find(modality);
    if (it == flags.limit_mm_per_prompt.end() || it->second > 0) {
      // An unnamed modality keeps its default limit unless the model has no such input: towers
      // take images (and video where takes_video says so), audio only where an audio encoder is
      // read (the omni models).
      if (std::string(modality) == "audio" && !model.audio) continue;
      if (std::string(modality) != "audio" && !model.vision) continue;  // an audio-only model (Qwen2-Audio)
      if (std::string(modality) == "video" && !takes_video(model)) continue;
      return false;
    }
  }
  return true;
}

bool skips_tower_weights(const ModelSpec& model, const VllmFlags& flags, const VllmVersion& version) {
  // An audio-only model (Qwen2-Audio) drops its tower only through the per-modality marking of
  // v0.15 (skips_one_tower); #22299's text-only skip is taken as the vision models'.
  if (!model.vision) return false;
  // Gemma 4 12B builds its embedders outside _mark_tower_model (gemma4_unified.py), so vLLM
  // loads them in text-only mode too.
  if (family_of(model) == Family::gemma4_unified) return false;
  // molmo.py builds its vision backbone unconditionally in every version read (no text-only check);
  // so does phi4mm.py its vision encoder and embed_tokens_extend (every stored version, the first
  // of v0.8 to the 2026 one with embed_multimodal).
  if (family_of(model) == Family::molmo_crops || family_of(model) == Family::phi4mm_crops) return false;
  if (family_of(model) == Family::gemma3n) return text_only_mode(model, flags) && marks_towers_per_modality(version);
  return text_only_mode(model, flags) && !(version < VllmVersion{0, 10, 1});
}

bool marks_towers_per_modality(const VllmVersion& version) { return !(version < VllmVersion{0, 15}); }

bool skips_one_tower(const ModelSpec& model, const VllmFlags& flags, const VllmVersion& version, const std::string& modality) {
  // Gemma 3n marks both towers; minicpmo.py its Whisper encoder (_mark_tower_model(vllm_config,
  // "audio")) in the same change.
  // qwen2_audio.py builds its audio_tower and multi_modal_projector under
  // _mark_tower_model(vllm_config, "audio") in 2026 code; taken from the same change.
  // gemma4_mm.py marks its audio tower (_mark_tower_model(vllm_config, "audio")) and its vision
  // tower for images and video together ({"image", "video"}): that one goes when both are 0.
  const bool gemma4 = model.architecture == "Gemma4ForConditionalGeneration" && family_of(model) == Family::gemma4;
  const bool audio_marked =
      model.architecture == "MiniCPMO" || model.architecture == "Qwen2AudioForConditionalGeneration" || gemma4;
  const bool marked = (model.vision && (family_of(model) == Family::gemma3n || gemma4)) || (audio_marked && modality == "audio");
  if (!marked || !marks_towers_per_modality(version) || (modality == "audio" && !model.audio)) return false;
  if (gemma4 && modality == "image") return flags.language_model_only || (mm_limit(flags, "image") == 0 && mm_limit(flags, "video") == 0);
  return flags.language_model_only || mm_limit(flags, modality) == 0;
}

namespace {

// The largest item of a sized family, as its processing info builds it.
EncoderItem sized_item(const ModelSpec& model, Family family, const VllmFlags& flags, const ResolvedSettings& settings,
                       const VllmVersion& version) {
  return family == Family::qwen_dynamic     ? qwen_profiled_item(model, flags, settings, version)
         : family == Family::llama4_tiles   ? llama4_item(model)
         : family == Family::internvl_tiles ? internvl_profiled_item(model, flags, settings, version)
         : family == Family::llava_anyres   ? llava_anyres_item(model)
         : family == Family::phi3v_crops    ? phi3v_item(model, flags)
         : family == Family::phi4mm_crops   ? phi4mm_item(model, flags, version < VllmVersion{0, 9})
         : family == Family::moonvit        ? moonvit_item(model)
         : family == Family::gemma4         ? gemma4_profiled_item(model, flags, version)
         : family == Family::aya_tiles      ? aya_item(model, flags)
         : family == Family::minicpmv_slices ? minicpmv_profiled_item(model, flags, settings.max_model_len, version)
         : family == Family::llava_next_video ? llava_next_video_item(model, settings, version)
         : family == Family::glm4v          ? glm4v_profiled_items(model, flags, settings.max_model_len, version).item
         : family == Family::idefics3_tiles ? idefics3_item(model)
         : family == Family::deepseek_ocr   ? deepseek_ocr_item()
         : family == Family::gemma3n        ? gemma3n_item(model)
         : family == Family::ovis25         ? ovis25_image_item(model, flags)
         : family == Family::gemma4_unified ? gemma4_unified_item(model, flags)
         : family == Family::deepseek_vl2   ? deepseek_vl2_item(model)
         : family == Family::molmo_crops    ? molmo_item(model, flags)
                                            : fixed_item(model, family);
}

// Llama 3.2 Vision runs on the V0 engine only (SupportsV0Only; the V1 oracle of v0.8-v0.10 falls
// back, and vLLM dropped it with V0). enc_dec_model_runner.py profile_run builds max_num_seqs dummy
// sequences, each with its encoder dummy data (the image limit per prompt, 1 by default in V0,
// of max_num_tiles 560² tiles), and runs them as one batch: the vision encoder sees every image at
// once and nothing caps it by max_num_batched_tokens, so the peak grows with max_num_seqs (a
// --max-model-len of 32 does not help). Per image, MllamaVisionModel.forward holds at its torch.cat:
// the [L, L] aspect-ratio attention mask (L = tiles × patches padded to a multiple of 8), the
// local encoder's intermediate hidden states (a tuple kept alive by `output`) and their stacked
// copy, the final hidden state and its sliced copy, the sliced intermediate states and the
// concatenation of tiles × patches × vision_output_dim; the projected cross-attention states
// (tiles × patches × hidden_size) stay through the language model's pass.
EncoderProfile mllama_v0_profile(const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& s, double dtype_bytes) {
  const VisionConfig& v = *model.vision;
  EncoderProfile p;
  const std::int64_t tiles = v.max_tiles > 0 ? v.max_tiles : 4, patch = v.patch_size > 0 ? v.patch_size : 14;
  const std::int64_t positions = (v.image_size / patch) * (v.image_size / patch) + 1;  // the class token
  const std::int64_t L = tiles * ((positions + 7) / 8 * 8), h = v.hidden_size, P = tiles * positions;
  const std::int64_t out = v.out_hidden_size > 0 ? v.out_hidden_size : 6 * h;  // vision_output_dim
  const double states = static_cast<double>(out / h - 1);                     // intermediate_layers_indices
  const double per_image = dtype_bytes * (static_cast<double>(L) * L + 2.0 * states * L * h + 2.0 * L * h + states * P * h +
                                          static_cast<double>(P) * out);
  auto it = flags.limit_mm_per_prompt.find("image");
  const int per_seq = it == flags.limit_mm_per_prompt.end() ? 1 : it->second;
  p.items = static_cast<int>(std::min<std::int64_t>(s.max_num_seqs * std::max(0, per_seq), 1 << 20));
  p.item = {"image", L, P, 0, 0,
            std::to_string(tiles) + " tiles of " + std::to_string(v.image_size) + "² per image, " +
                std::to_string(per_seq) + " per dummy sequence"};
  // Clamped far beyond any GPU (a hostile config's batch must not overflow the conversion).
  p.encoder_peak = static_cast<Bytes>(std::min(per_image * p.items, k_most_bytes));
  p.cached_outputs = static_cast<Bytes>(std::min(dtype_bytes * static_cast<double>(P) * model.hidden_size * p.items, k_most_bytes));
  p.explanation = "encoder profile (V0, encoder-decoder): " + std::to_string(s.max_num_seqs) + " dummy sequences with " +
                  std::to_string(p.items) + " image(s) of " + std::to_string(P) + " patches in one batch; peak " +
                  util::fixed(to_gib(p.encoder_peak), 2) + " GiB estimated from mllama.py's tensors (" +
                  util::fixed(per_image / (1 << 20), 0) + " MiB per image), which --max-num-seqs scales";
  return p;
}

// Whether headroom sizes the family's dummy batch on this version: not the unsized towers, not
// Llama 3.2 Vision (V0's own pass), GLM-4.xV only within its releases (glm4v_vision.cc).
// Phi-4-multimodal's first phi4mm.py (16 crops, phi4mm_item) is taken as the file before v0.9,
// the processor-based one from v0.9; the release that switched is not pinned down.
bool family_sized(Family family, const VllmVersion& version) {
  if (family == Family::unsized || family == Family::mllama_v0) return false;
  if (family == Family::glm4v) return glm4v_sized(version);
  return true;
}

// Qwen2-Audio (qwen2_audio.py): the dummy clip is the feature extractor's chunk_length x
// sampling_rate samples (30 s at 16 kHz: 3,000 mel frames of hop 160). The Whisper-style encoder's
// conv2 (stride 2) turns them into max_source_positions (1,500) positions, every clip at its full
// length (the mel input is padded to 30 s), and its avg_pooler (stride 2) into (1,500 - 2) / 2 + 1
// = 750 embeddings (get_mm_max_tokens_per_item). A layer holds the residual and its normed copy
// (2d) beside fc1's output and its GELU (2F), or q, k, v and the attention output (4d: no rotary;
// SDPA with a mask, or vLLM's own encoder's flash attention, keeps no positions-squared scores);
// the conv stage's two outputs at 3,000 frames (4d per position) stay below both. Besides, for the whole pass:
// the clip's float32 mel features (2 frames of num_mel_bins per position) and the additive mask
// qwen2_audio.py builds for transformers' Qwen2AudioEncoder, positions^2 in the model dtype per
// clip (vLLM's own Whisper encoder of late 2026 takes none: at most 10 % of the estimate). The
// tower's linears are plain nn.Linear there, so each TP rank runs the whole batch unsplit.
bool qwen2_audio_tower(const ModelSpec& model) { return model.audio && model.audio->model_type == "qwen2_audio_encoder"; }

// One encoder position's live bytes in a Whisper-style layer: the residual and its normed copy (2d)
// beside fc1's output and its GELU (2F), or q, k, v and the attention output with the residual (6d).
double whisper_position_bytes(const AudioConfig& a, double dtype_bytes) {
  const double d = a.d_model, ffn = a.ffn > 0 ? a.ffn : 4.0 * d;
  return dtype_bytes * std::max(2.0 * d + 2.0 * ffn, 6.0 * d);
}

// An audio pass's peak, the encoder cache it fills, and its line for the report.
void finish_audio_profile(EncoderProfile& p, const ModelSpec& model, const VllmVersion& version, double peak,
                          const std::string& how, double dtype_bytes) {
  p.encoder_peak = static_cast<Bytes>(std::min(peak, k_most_bytes));
  const double rows = static_cast<double>(cached_rows_per_item(p, version));
  p.cached_outputs = static_cast<Bytes>(std::min(p.items * rows * model.hidden_size * dtype_bytes, k_most_bytes));
  p.explanation = "encoder profile: " + std::to_string(p.items) + " audio item(s) of " + std::to_string(p.item.tokens) +
                  " embeddings (" + p.item.source + ")" + how + ", budget " + std::to_string(p.encoder_budget) +
                  " tokens; peak " + util::fixed(to_gib(p.encoder_peak), 2) + " GiB estimated from the audio tower's widths";
}

// Qwen2.5-Omni's thinker profiles the same 30 s clip when images and video are limited to 0
// (qwen2_5_omni_thinker.py: min(chunk_length, 30) x sampling_rate samples; (1,500 - 2) / 2 + 1 =
// 750 embeddings) through transformers' Qwen2_5OmniAudioEncoder: 2 x n_window-frame chunks of
// 100 positions, attention within each chunk, but outside flash-attention-2 one additive mask of
// the whole batch's positions squared in the model dtype (_prepare_attention_mask).
bool qwen2_5_omni_audio_tower(const ModelSpec& model) {
  return model.audio && model.audio->model_type == "qwen2_5_omni_audio_encoder";
}

EncoderProfile qwen2_audio_profile(const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& s,
                                   const VllmVersion& version, double dtype_bytes) {
  EncoderProfile p;
  const AudioConfig& a = *model.audio;
  const std::int64_t positions = a.max_source_positions > 0 ? a.max_source_positions : 1500;
  p.item.modality = "audio";
  p.item.patches = positions;
  p.item.tokens = (positions - 2) / 2 + 1;
  p.item.attention_span = positions;
  p.item.source = std::to_string(positions) +
                  " encoder positions, a 30 s dummy clip, 3,000 mel frames (the feature extractor's chunk_length x sampling_rate)";
  p.items = dummy_items(p.item, mm_limit(flags, "audio"), s, p.encoder_budget);
  const double n = static_cast<double>(positions);
  const double per_position = whisper_position_bytes(a, dtype_bytes) + 4.0 * 2.0 * std::max(1, a.num_mel_bins);
  const bool omni = qwen2_5_omni_audio_tower(model);
  const double mask = omni ? dtype_bytes * (p.items * n) * (p.items * n) : p.items * dtype_bytes * n * n;
  finish_audio_profile(p, model, version, p.items * n * per_position + mask,
                       omni ? ", under one additive mask of the whole batch's positions" : "", dtype_bytes);
  return p;
}

// Qwen3-Omni's thinker profiles its audio encoder when images and video are limited to 0
// (qwen3_omni_moe_thinker.py). The dummy clip is Qwen2.5-Omni's (the thinker reuses
// Qwen2_5OmniThinkerDummyInputsBuilder): min(chunk_length, 30) s at 16 kHz, 3,000 mel frames. The
// budget counts 750 tokens a clip, Qwen2-Audio's count (Qwen3OmniMoeThinkerProcessingInfo takes
// get_mm_max_tokens_per_item from Qwen2AudioProcessingInfo, first among its bases); the encoder
// hands over 390 (its _get_feat_extract_output_lengths: 13 per 100 frames). Qwen3OmniMoeAudioEncoder
// (transformers', and vLLM's own from 2026) cuts the mel frames into chunks of 2 x n_window and runs
// three stride-2 3x3 convolutions of downsample_hidden_size channels on at most conv_chunksize chunks
// at a time, each followed by GELU: the first convolution's output and its GELU, at half the mel bins
// and half the chunk's frames, are the pass's peak. The layers after them attend within windows of
// n_window_infer frames (104 positions), so no positions-squared term counts.
bool qwen3_omni_audio_tower(const ModelSpec& model) {
  return model.audio && model.audio->model_type == "qwen3_omni_moe_audio_encoder" && model.audio->d_model > 0;
}

EncoderProfile qwen3_omni_audio_profile(const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& s,
                                        const VllmVersion& version, double dtype_bytes) {
  EncoderProfile p;
  const AudioConfig& a = *model.audio;
  // Qwen3OmniMoeAudioEncoderConfig's defaults where the config leaves them out.
  const std::int64_t chunk_frames = 2 * static_cast<std::int64_t>(a.n_window > 0 ? a.n_window : 100);
  const std::int64_t per_call = a.conv_chunksize > 0 ? a.conv_chunksize : 500;
  const std::int64_t channels = a.downsample_hidden_size > 0 ? a.downsample_hidden_size : 480;
  const std::int64_t mel = std::max(1, a.num_mel_bins > 0 ? a.num_mel_bins : 128);
  const std::int64_t frames = 3000, chunks_per_clip = (frames + chunk_frames - 1) / chunk_frames;
  auto halved = [](std::int64_t n) { return (n + 1) / 2; };  // a 3x3 convolution, stride 2, padding 1
  const std::int64_t per_chunk_out = halved(halved(halved(chunk_frames)));
  p.item.modality = "audio";
  p.item.patches = chunks_per_clip * per_chunk_out;
  p.item.tokens = (frames / 100) * 13 + ((frames % 100) > 0 ? halved(halved(halved(frames % 100))) : 0);
  p.item.budget_tokens = 750;
  p.item.attention_span = per_chunk_out;
  p.item.source = "a 30 s dummy clip, 3,000 mel frames in " + std::to_string(chunks_per_clip) + " chunks of " +
                  std::to_string(chunk_frames) + " (qwen3_omni_moe_thinker.py); 750 tokens budgeted (Qwen2AudioProcessingInfo)";
  p.items = dummy_items(p.item, mm_limit(flags, "audio"), s, p.encoder_budget);
  const double first_conv = static_cast<double>(channels * halved(mel) * halved(chunk_frames)) * dtype_bytes;
  const auto peak = [&](double clips) {
    const double chunks = clips * chunks_per_clip;
    const double conv_stage = 2.0 * std::min(chunks, static_cast<double>(per_call)) * first_conv;
    const double conv_kept = chunks * static_cast<double>(channels * halved(halved(halved(mel))) * per_chunk_out) * dtype_bytes;
    const double layers = clips * static_cast<double>(p.item.patches) * whisper_position_bytes(a, dtype_bytes);
    return std::max(conv_stage + conv_kept, layers) + clips * static_cast<double>(mel * frames) * (4.0 + dtype_bytes);
  };
  const double chunks = static_cast<double>(p.items) * chunks_per_clip;
  finish_audio_profile(p, model, version, peak(p.items),
                       ", convolved " + std::to_string(static_cast<std::int64_t>(std::min(chunks, static_cast<double>(per_call)))) +
                           " chunks at a time",
                       dtype_bytes);
  // 2026 releases give the thinker's processing info a get_mm_max_tokens_per_item of its own, whose
  // body the files read do not show: budgeted at the clip's own 390 tokens, more clips fit.
  EncoderItem own = p.item;
  own.budget_tokens = 0;
  std::int64_t own_budget = 0;
  const int own_items = dummy_items(own, mm_limit(flags, "audio"), s, own_budget);
  p.other_reading = static_cast<Bytes>(std::clamp(peak(own_items) - peak(p.items), 0.0, k_most_bytes));
  p.other_reading_why = "a release whose Qwen3-Omni processing info budgets the clip's own " + std::to_string(p.item.tokens) +
                        " tokens profiles " + std::to_string(own_items) + " clips: " + util::fixed(to_gib(p.other_reading), 2) +
                        " GiB more";
  return p;
}

// MiniCPM-o (minicpmo.py): the dummy audio is get_max_audio_chunks_with_most_features() = 30
// one-second chunks at 16 kHz, 3,000 mel frames; its tokens are 30 x get_max_audio_tokens_per_chunk,
// ((100 - 1) / 2 + 1 - pool) / pool + 1 per chunk (audio_pool_step: 2 for 2.6, 750 tokens; 5 for
// 4.5, 300). get_audio_hidden_states runs the whole batch through transformers' WhisperEncoder
// (MiniCPMWhisperEncoder) at (3,000 - 1) / 2 + 1 = 1,500 positions a clip, under a [B, 1, 1,500,
// 1,500] mask built as a bool and then in the model dtype, and the encoder keeps every layer's input
// (encoder_states: layers + 1 hidden states) until it returns. Its WhisperAttention runs SDPA over
// that mask, or eager attention, which holds the heads' scores and their softmax in the model dtype:
// which one depends on the transformers release, so eager is the other reading.
bool minicpmo_audio(const ModelSpec& model) {
  return model.architecture == "MiniCPMO" && model.audio && model.audio->d_model > 0 && model.audio->layers > 0;
}

EncoderItem minicpmo_audio_item(const ModelSpec& model) {
  const std::int64_t pool = model.audio->pool_step > 0 ? model.audio->pool_step : 2;
  const std::int64_t per_chunk = std::max<std::int64_t>(1, (50 - pool) / pool + 1);  // a pool wider than a chunk: one
  EncoderItem item;
  item.modality = "audio";
  item.tokens = 30 * per_chunk;
  item.patches = (3000 - 1) / 2 + 1;
  item.attention_span = item.patches;
  item.source = "a 30 s dummy clip (30 one-second chunks of " + std::to_string(per_chunk) + " tokens at audio_pool_step " +
                std::to_string(pool) + "), 3,000 mel frames, 1,500 encoder positions";
  return item;
}

EncoderProfile minicpmo_audio_profile(const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& s,
                                      const VllmVersion& version, double dtype_bytes) {
  EncoderProfile p;
  const AudioConfig& a = *model.audio;
  p.item = minicpmo_audio_item(model);
  p.items = dummy_items(p.item, mm_limit(flags, "audio"), s, p.encoder_budget);
  const double n = static_cast<double>(p.item.patches), items = p.items;
  const double mel = items * std::max(1, a.num_mel_bins) * 3000.0 * (4.0 + dtype_bytes);  // float32, then cast
  const double mask = items * n * n * (1.0 + dtype_bytes);
  const double states = (a.layers + 1.0) * items * n * a.d_model * dtype_bytes;
  const double layer = items * n * whisper_position_bytes(a, dtype_bytes);
  finish_audio_profile(p, model, version, mel + mask + states + layer, ", every layer's hidden states kept", dtype_bytes);
  const double eager = 2.0 * items * std::max(1, a.heads) * n * n * dtype_bytes;
  p.other_reading = static_cast<Bytes>(std::min(eager, k_most_bytes));
  p.other_reading_why = "MiniCPM-o's Whisper encoder under eager attention (the transformers release decides it) holds " +
                        std::to_string(p.items) + " clip(s)' attention scores and their softmax: " +
                        util::fixed(to_gib(p.other_reading), 2) + " GiB more";
  return p;
}

// Phi-4-multimodal (phi4mm.py): the dummy audio is _AUDIO_MAX_SOUNDFILE_SIZE = 241,000 samples at
// 16 kHz, (241,000 - 400) / 160 + 1 = 1,504 frames of input_size (80) features
// (get_audio_num_frames), and ceil(frames / compression) / downsample tokens
// (_compute_audio_embed_size; the feature extractor's audio_compression_rate is the encoder's
// time_reduction, 8: 188 tokens). vLLM profiles it only with images limited to 0 (an image counts
// far more). _process_audio_input runs the clips one at a time (a list of audio_embed calls): the
// peak is one clip's first subsampling stage (NeMo's dw_striding or striding Conv2d from 1 to
// conv_channels at stride 2, then ReLU: both outputs at half the frames and half the features)
// beside every clip's float32 features and the embeddings of the clips before it. The Conformer
// blocks after it run on frames / 8 positions and stay below that.
bool phi4mm_audio(const ModelSpec& model) {
  return model.audio && model.audio->model_type == "phi4mm_conformer" && model.audio->conformer && model.audio->d_model > 0;
}

EncoderProfile phi4mm_audio_profile(const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& s,
                                    const VllmVersion& version, double dtype_bytes) {
  EncoderProfile p;
  const ConformerConfig& x = *model.audio->conformer;
  const std::int64_t frames = (241000 - 400) / 160 + 1, features = std::max(1, x.input_size);
  const std::int64_t rate = std::max(2, x.time_reduction), down = std::max(1, x.downsample_rate);
  const std::int64_t compressed = (frames + rate - 1) / rate;
  p.item.modality = "audio";
  p.item.tokens = (compressed + down - 1) / down;
  p.item.patches = compressed;
  p.item.attention_span = compressed;
  p.item.source = "the 241,000-sample dummy clip (phi4mm.py), " + std::to_string(frames) + " frames of " +
                  std::to_string(features) + " features";
  p.items = dummy_items(p.item, mm_limit(flags, "audio"), s, p.encoder_budget);
  const double first_stage = 2.0 * std::max(1, x.conv_channels) * static_cast<double>((frames + 1) / 2) *
                             static_cast<double>((features + 1) / 2) * dtype_bytes;
  const double inputs = p.items * static_cast<double>(frames * features) * 4.0 + static_cast<double>(frames * features) * dtype_bytes;
  const double earlier = (p.items - 1.0) * static_cast<double>(p.item.tokens) * model.hidden_size * dtype_bytes;
  finish_audio_profile(p, model, version, first_stage + inputs + earlier, ", one clip at a time", dtype_bytes);
  return p;
}

// The audio batch where vLLM profiles it instead of the vision item: Phi-4-multimodal's with images
// limited to 0; MiniCPM-o's with images and video limited to 0, or where its tokens are above those
// of the vision item (2.6's 750 against 640 for an image, with video limited to 0).
std::optional<EncoderProfile> audio_outranks(const ModelSpec& model, const VllmFlags& flags, const EncoderItem& vision,
                                             const ResolvedSettings& s, const VllmVersion& version, double dtype_bytes) {
  if (phi4mm_audio(model) && mm_limit(flags, "audio") > 0 && mm_limit(flags, "image") == 0)
    return phi4mm_audio_profile(model, flags, s, version, dtype_bytes);
  if (!minicpmo_audio(model) || mm_limit(flags, "audio") == 0) return std::nullopt;
  const bool vision_off = mm_limit(flags, "image") == 0 && mm_limit(flags, "video") == 0;
  const EncoderItem audio = minicpmo_audio_item(model);
  if (!vision_off && audio.tokens <= std::max(vision.tokens, vision.budget_tokens)) return std::nullopt;
  return minicpmo_audio_profile(model, flags, s, version, dtype_bytes);
}

// Ultravox (ultravox.py, in the files read from v0.11 on; earlier releases are not checked): the
// dummy audio is chunk_length x sampling_rate x _MAX_ENCODER_BATCH_SIZE samples (16 x 30 s), which
// the processor splits into 16 chunks of 3,000 mel frames; each gives the Whisper encoder
// max_source_positions (1,500) positions and the projector ceil(1,500 / stack_factor) embeddings
// (188: _get_max_tokens_per_chunk), 3,008 per item. _audio_features_to_embeddings runs the chunks
// 16 at a time, so one batch of 16 chunks sets the encoder's peak (the per-position widths as for
// Qwen2-Audio; its attention is SDPA over a [B, 1, 1, T] padding mask, or varlen attention in the
// later file: no positions-squared term), beside what the whole pass holds: every item's mel
// features (float32 from the processor and their copy in the model dtype) and the embeddings of
// the batches done, kept in a list and concatenated.
constexpr int k_ultravox_chunks = 16;  // ultravox.py _MAX_ENCODER_BATCH_SIZE

bool ultravox_tower(const ModelSpec& model, const VllmVersion& version) {
  return model.architecture == "UltravoxModel" && model.audio && model.audio->d_model > 0 && !(version < VllmVersion{0, 11});
}

// UltravoxConfig.stack_factor (default 8), bounded.
std::int64_t ultravox_stack_factor(const ModelSpec& model) {
  if (!model.raw_config.is_object()) return 8;
  auto it = model.raw_config.find("stack_factor");
  if (it == model.raw_config.end() || !it->is_number_integer()) return 8;
  const auto v = it->get<std::int64_t>();
  return v >= 1 && v <= 64 ? v : 8;
}

EncoderProfile ultravox_profile(const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& s,
                                const VllmVersion& version, double dtype_bytes) {
  EncoderProfile p;
  const AudioConfig& a = *model.audio;
  const std::int64_t positions = a.max_source_positions > 0 ? a.max_source_positions : 1500;
  const std::int64_t per_chunk = (positions + ultravox_stack_factor(model) - 1) / ultravox_stack_factor(model);
  p.item.modality = "audio";
  p.item.patches = k_ultravox_chunks * positions;
  p.item.tokens = k_ultravox_chunks * per_chunk;
  p.item.attention_span = positions;
  p.item.source = "a 480 s dummy clip: 16 chunks of 30 s (chunk_length x sampling_rate x _MAX_ENCODER_BATCH_SIZE)";
  p.items = dummy_items(p.item, mm_limit(flags, "audio"), s, p.encoder_budget);
  const double n = static_cast<double>(positions);
  const double mel_bins = std::max(1, a.num_mel_bins), chunks = static_cast<double>(p.items) * k_ultravox_chunks;
  const double batch = k_ultravox_chunks * n * whisper_position_bytes(a, dtype_bytes);
  const double mel = chunks * 2.0 * n * mel_bins * (4.0 + dtype_bytes);
  const double out = 2.0 * p.items * static_cast<double>(p.item.tokens) * model.hidden_size * dtype_bytes;
  finish_audio_profile(p, model, version, batch + mel + out, ", encoded 16 chunks at a time", dtype_bytes);
  return p;
}

// Voxtral (voxtral.py in the file read, which marks its towers per modality: taken from v0.15;
// earlier releases not checked): the dummy audio is max_model_len tokens of audio
// (get_max_audio_tokens; sampling_rate / frame_rate samples per token), which mistral_common pads
// to whole 30 s chunks of 375 tokens (1,500 encoder positions, downsampled 4 x). The budget is
// max(max_num_batched_tokens, max_model_len): one item. VoxtralEncoderModel computes the mel
// spectrogram on the GPU (a float32 STFT of the whole waveform), stacks every chunk and runs the
// Whisper encoder on all of them at once, so its peak is every chunk's positions at Qwen2-Audio's
// per-position widths, or the STFT stage where that is larger; the stacked features stay alive.
bool voxtral_tower(const ModelSpec& model, const VllmVersion& version) {
  return model.audio && model.audio->model_type == "voxtral_encoder" && model.audio->d_model > 0 &&
         !(version < VllmVersion{0, 15});
}

EncoderProfile voxtral_profile(const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& s,
                               const VllmVersion& version, double dtype_bytes) {
  EncoderProfile p;
  const AudioConfig& a = *model.audio;
  const std::int64_t positions = a.max_source_positions > 0 ? a.max_source_positions : 1500;
  const std::int64_t per_chunk = std::max<std::int64_t>(1, positions / 4);  // a hostile max_source_positions < 4 too
  const std::int64_t chunks = std::max<std::int64_t>(1, (s.max_model_len + per_chunk - 1) / per_chunk);
  p.item.modality = "audio";
  p.item.patches = chunks * positions;
  p.item.tokens = chunks * per_chunk;
  p.item.budget_tokens = s.max_model_len;
  p.item.attention_span = positions;
  p.item.source = "max_model_len tokens of dummy audio (get_max_audio_tokens) in " + std::to_string(chunks) + " chunks of 30 s";
  p.items = dummy_items(p.item, mm_limit(flags, "audio"), s, p.encoder_budget);
  const double n = static_cast<double>(positions);
  const double mel_bins = std::max(1, a.num_mel_bins), c = static_cast<double>(chunks) * p.items;
  const double frames = c * 2.0 * n, samples = frames * 160.0;  // hop 160 at 16 kHz
  // The STFT stage: the float32 waveform, the complex64 STFT over 201 bins, its float32 magnitudes
  // and the mel spectrogram; then the stacked chunks in the model dtype, which the encoder keeps.
  const double stft = 4.0 * samples + frames * 201.0 * (8.0 + 4.0) + frames * mel_bins * 4.0;
  const double features = frames * mel_bins * dtype_bytes;
  const double encoder = c * n * whisper_position_bytes(a, dtype_bytes);
  finish_audio_profile(p, model, version, std::max(stft, features + encoder), ", every chunk encoded at once", dtype_bytes);
  return p;
}

}  // namespace

bool audio_pass_sized(const ModelSpec& model, const VllmVersion& version) {
  return qwen2_audio_tower(model) || qwen2_5_omni_audio_tower(model) || qwen3_omni_audio_tower(model) || minicpmo_audio(model) ||
         phi4mm_audio(model) ||
         ultravox_tower(model, version) || voxtral_tower(model, version) ||
         (model.audio && model.audio->model_type == "gemma4_audio");
}

std::optional<EncoderItem> largest_mm_item(const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& settings,
                                           const VllmVersion& version) {
  const Family family = family_of(model);
  if (family == Family::none || !family_sized(family, version)) return std::nullopt;
  EncoderItem item = sized_item(model, family, flags, settings, version);
  if (item.patches <= 0 || item.tokens <= 0 || mm_limit(flags, item.modality) == 0) return std::nullopt;
  return item;
}

EncoderProfile encoder_profile(const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& settings,
                               const VllmVersion& version, double dtype_bytes, const EncoderDevice& device) {
  EncoderProfile p;
  auto skipped = [](std::string why) {
    EncoderProfile none;
    none.skipped_because = std::move(why);
    return none;
  };
  const Family family = family_of(model);
  const bool qwen2_audio = family == Family::none && qwen2_audio_tower(model);
  const bool ultravox = family == Family::none && ultravox_tower(model, version);
  const bool voxtral = family == Family::none && voxtral_tower(model, version);
  if (family == Family::none && !qwen2_audio && !ultravox && !voxtral) return skipped("no vision tower");
  if (text_only_mode(model, flags))
    return skipped("every modality is limited to 0: vLLM builds no encoder budget and skips the pass");
  if (family == Family::mllama_v0 && !version.is_v1_engine()) return mllama_v0_profile(model, flags, settings, dtype_bytes);
  if (!version.is_v1_engine()) return skipped("the V0 engine profiles the encoder inside its dummy sequences (not modelled)");
  if (flags.skip_mm_profiling) return skipped("--skip-mm-profiling");
  if (qwen2_audio) return qwen2_audio_profile(model, flags, settings, version, dtype_bytes);
  if (ultravox) return ultravox_profile(model, flags, settings, version, dtype_bytes);
  if (voxtral) return voxtral_profile(model, flags, settings, version, dtype_bytes);
  if (!family_sized(family, version)) {
    EncoderProfile none = skipped("the largest input of " + model.architecture + "'s processor is not modelled");
    none.family_unsized = true;
    return none;
  }
  p.item = sized_item(model, family, flags, settings, version);
  if (auto audio = audio_outranks(model, flags, p.item, settings, version, dtype_bytes)) return *audio;
  if (p.item.patches <= 0 || p.item.tokens <= 0) return skipped("the vision config gives no image or patch size");
  if (mm_limit(flags, "image") == 0 && p.item.modality == "image") {
    // Images off and video on (Qwen-VL before v0.11): vLLM profiles video, whose largest item is
    // not sized here; with video off too an omni model's audio encoder is what it profiles.
    if (mm_limit(flags, "video") == 0 && qwen2_5_omni_audio_tower(model))
      return qwen2_audio_profile(model, flags, settings, version, dtype_bytes);
    if (mm_limit(flags, "video") == 0 && qwen3_omni_audio_tower(model))
      return qwen3_omni_audio_profile(model, flags, settings, version, dtype_bytes);
    if (mm_limit(flags, "video") == 0 && model.audio)
      return skipped("images and video are limited to 0: vLLM profiles the audio encoder, which headroom does not size");
    return skipped("images are limited to 0 and the largest video item is not modelled");
  }
  if (mm_limit(flags, p.item.modality) == 0)
    return skipped("the only modality the model takes (" + p.item.modality + ") is limited to 0: vLLM skips the pass");
  p.items = dummy_items(p.item, mm_limit(flags, p.item.modality), settings, p.encoder_budget);
  const bool dp_encoder = flags.mm_encoder_tp_mode && *flags.mm_encoder_tp_mode == "data";
  const int tp = std::max(1, settings.tensor_parallel_size);
  // --mm-encoder-tp-mode data: each rank runs its share of the items on a full copy of the encoder.
  const double items_on_rank = dp_encoder ? std::ceil(static_cast<double>(p.items) / tp) : p.items;
  const bool dots_plugin = has(model.architecture, "DotsOCR") && version < VllmVersion{0, 11};
  const double per_patch = dots_plugin                     ? dots_plugin_bytes_per_patch(model, dtype_bytes)
                           : family == Family::molmo_crops ? molmo_bytes_per_patch(model, dp_encoder ? 1 : tp, dtype_bytes)
                                                           : peak_bytes_per_patch(model, family, tp, dp_encoder, dtype_bytes);
  // One item's share of the peak: the tower's widths over its patches, or, for the towers whose
  // peak is not per patch, their own estimate (Gemma 3n's MobileNetV5, DeepSeek-OCR's SAM mask).
  const double per_item = family == Family::gemma3n        ? gemma3n_image_peak(dtype_bytes)
                          : family == Family::gemma4_unified ? gemma4_unified_call_bytes(model, p.item, dtype_bytes)
                          : family == Family::deepseek_ocr ? deepseek_ocr_image_peak(dtype_bytes)
                                                           : static_cast<double>(p.item.patches) * per_patch;
  // deepseek_ocr.py, paddleocr_vl.py (encode_image) and gemma4_unified.py loop over the images (or
  // frames), one per encoder call; the others encode the rank's whole batch at once.
  const bool one_per_call = family == Family::deepseek_ocr || family == Family::gemma4_unified || has(model.architecture, "PaddleOCRVL");
  if (one_per_call) p.units_per_forward = 1;
  p.encoder_peak = static_cast<Bytes>(std::min((one_per_call ? 1.0 : items_on_rank) * per_item, k_most_bytes));
  if (family == Family::gemma4) gemma4_peak(p, version, device, per_patch, dtype_bytes);
  if (family == Family::ovis25) ovis25_peak(p, model, flags, settings, per_patch, items_on_rank, dtype_bytes);
  if (family == Family::glm4v) glm4v_tied_reading(p, model, flags, settings, version, items_on_rank / p.items * per_patch);
  if (family == Family::qwen_dynamic) qwen_tied_video_reading(p, model, flags, settings, version, per_patch);
  // Qwen3-VL hands the language model each token's merged features and one more copy per
  // deepstack level, concatenated (qwen3_vl.py Qwen3_VisionTransformer.forward: torch.cat of the
  // merger's output and deepstack_feature_lists; out_hidden_size × (1 + len(deepstack_visual_indexes))),
  // and the encoder cache holds them whole.
  const double out = (model.hidden_size > 0 ? model.hidden_size : model.vision->out_hidden_size) *
                     (1.0 + std::max(0, model.vision->deepstack_layers));
  const std::int64_t rows = cached_rows_per_item(p, version);
  p.cached_outputs = static_cast<Bytes>(std::min(static_cast<double>(p.items) * static_cast<double>(rows) * out * dtype_bytes, k_most_bytes));
  p.explanation = "encoder profile: " + std::to_string(p.items) + " " + p.item.modality + " item(s) of " +
                  std::to_string(p.item.tokens) + " embeddings (" + std::to_string(p.item.patches) + " patches, " +
                  p.item.source + "), budget " + std::to_string(p.encoder_budget) + " tokens; " +
                  (p.units_per_forward > 0 ? std::to_string(p.units_per_forward) + " " + (p.item.modality == "video" ? "frame(s)" : "image(s)") +
                                                 " per encoder call; "
                                           : std::string()) +
                  "peak " +
                  util::fixed(to_gib(p.encoder_peak), 2) + " GiB estimated from the tower's widths";
  if (rows > p.item.tokens)
    p.explanation += "; the encoder cache holds each output padded to " + std::to_string(rows - p.item.tokens) +
                     " rows and the output itself (" + util::fixed(to_gib(p.cached_outputs), 2) + " GiB)";
  return p;
}

std::optional<std::int64_t> mm_processor_kwarg(const VllmFlags& flags, const char* key, const char* inner) {
  if (flags.mm_processor_kwargs.empty()) return std::nullopt;
  auto j = util::parse_json(flags.mm_processor_kwargs, "--mm-processor-kwargs");
  if (!j || !j->is_object()) return std::nullopt;
  auto it = j->find(key);
  if (it == j->end()) return std::nullopt;
  const nlohmann::json* v = &*it;
  if (inner) {
    if (!v->is_object()) return std::nullopt;
    auto in = v->find(inner);
    if (in == v->end()) return std::nullopt;
    v = &*in;
  }
  if (!v->is_number_integer()) return std::nullopt;
  return v->get<std::int64_t>();
}

}  // namespace headroom::engine
