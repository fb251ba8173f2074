#include "engine/encoder_profile.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "engine/gemma4_vision.h"
#include "engine/glm4v_vision.h"
#include "engine/minicpmv_slices.h"
#include "engine/qwen3_vl_video.h"
#include "engine/qwen_resize.h"

#include "util/json_file.h"
#include "util/strings.h"

namespace headroom::engine {

namespace {

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Byte figures are clamped here, far beyond any GPU, before they become integers: a hostile
// config's tower (a 65,536-pixel slice of 1-pixel patches) must not overflow the conversion.
constexpr double k_most_bytes = 1e18;

enum class Family { none, qwen_dynamic, siglip_fixed, clip_fixed, llava_anyres, phi3v_crops, pixtral, llama4_tiles, internvl_tiles, moonvit, gemma4, mllama_v0, aya_tiles, minicpmv_slices, llava_next_video, glm4v, idefics3_tiles, deepseek_ocr, unsized };

Family family_of(const ModelSpec& m) {
  if (m.vision && m.architecture == "DeepseekOCRForCausalLM") return Family::deepseek_ocr;  // its config gives no widths
  if (!m.vision || m.vision->depth <= 0 || m.vision->hidden_size <= 0) return Family::none;
  const std::string& a = m.architecture;
  const std::string& vt = m.vision->model_type;
  if (has(a, "Qwen2VL") || has(a, "Qwen2_5_VL") || has(a, "Qwen3VL") || has(a, "Qwen3_5") || has(a, "DotsOCR") ||
      has(a, "Qwen2_5Omni") || has(a, "Qwen3Omni") || has(a, "PaddleOCRVL") || vt.starts_with("qwen") || vt == "dots_vit")
    return Family::qwen_dynamic;
  if (has(a, "Phi3VForCausalLM")) return Family::phi3v_crops;
  if (has(a, "Mllama") || vt == "mllama_vision_model") return Family::mllama_v0;
  if (has(a, "LlavaNextVideo")) return Family::llava_next_video;
  if (has(a, "LlavaNext") || has(a, "LlavaOnevision")) return Family::llava_anyres;
  if (has(a, "AyaVision")) return Family::aya_tiles;
  if (a.starts_with("Glm4v") || vt.starts_with("glm4v")) return Family::glm4v;
  if (a.starts_with("Idefics3") || a.starts_with("SmolVLM")) return Family::idefics3_tiles;
  if (a == "MiniCPMV" || a == "MiniCPMO" || m.vision->resampler_queries > 0) return Family::minicpmv_slices;
  // Gemma 3 pools its SigLIP patches to 256 tokens (gemma3_mm.py); PaliGemma hands every patch on
  // (paligemma.py: the SigLIP encoder info's (image_size / patch)² tokens). Other SigLIP towers
  // (Idefics3's splits, ...) are not sized.
  if (has(a, "Gemma3ForConditionalGeneration")) return Family::siglip_fixed;
  if (has(a, "PaliGemma")) return Family::clip_fixed;
  // Pixtral-12B in transformers' layout is a LlavaForConditionalGeneration over a pixtral tower.
  if (has(a, "Mistral3") || has(a, "Pixtral") || vt == "pixtral") return Family::pixtral;
  if (has(a, "Llava") || vt == "clip_vision_model") return Family::clip_fixed;
  if (has(a, "Llama4ForConditionalGeneration") || vt == "llama4_vision_model") return Family::llama4_tiles;
  if (has(a, "InternVLChatModel") || vt == "intern_vit_6b") return Family::internvl_tiles;
  if (has(a, "KimiVL") || has(a, "KimiK25") || vt == "moonvit") return Family::moonvit;
  if (has(a, "Gemma4ForConditionalGeneration") || vt == "gemma4_vision") return Family::gemma4;
  return Family::unsized;
}

// The Qwen-VL processors' default largest image, in pixels, from each release's
// preprocessor_config.json: Qwen2-VL and Qwen2.5-VL max_pixels 12845056 (= 16384 tokens of
// 28 × 28 pixels), Qwen3-VL and Qwen3.5 size.longest_edge 16777216 (16384 tokens of 32 × 32),
// dots.ocr max_pixels 11289600; Qwen3-Omni keeps Qwen2-VL's image processor and max_pixels
// 12845056 with 32 × 32-pixel tokens (12,544).
std::int64_t qwen_default_max_pixels(const ModelSpec& m) {
  const std::string& a = m.architecture;
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

// Patches the tower adds to each image or tile besides its patches: CLIP's class token (clip.py);
// SigLIP has none (siglip.py).
std::int64_t class_tokens(const VisionConfig& v) { return v.model_type == "siglip_vision_model" ? 0 : 1; }

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

// transformers' select_best_resolution (image_processing_utils.py), which get_anyres_image_grid_shape
// uses: the canvas that keeps the most of the image's pixels, then the one that wastes the fewest.
std::array<int, 2> best_canvas(std::int64_t height, std::int64_t width, const std::vector<std::array<int, 2>>& canvases) {
  std::array<int, 2> best{0, 0};
  std::int64_t most_kept = 0;
  double least_waste = 1e300;
  for (const auto& [h, w] : canvases) {
    const double scale = std::min(static_cast<double>(w) / static_cast<double>(width), static_cast<double>(h) / static_cast<double>(height));
    const auto kept = std::min(static_cast<std::int64_t>(static_cast<double>(width) * scale) *
                                   static_cast<std::int64_t>(static_cast<double>(height) * scale),
                               width * height);
    const double waste = static_cast<double>(h) * static_cast<double>(w) - static_cast<double>(kept);
    if (kept > most_kept || (kept == most_kept && waste < least_waste)) {
      best = {h, w};
      most_kept = kept;
      least_waste = waste;
    }
  }
  return best;
}

// The canvases when the config names none: llava-v1.6's five of one to three tiles, and
// OneVision's anyres_max_9 grid of 1-6 x 1-6 tiles (the released configs' image_grid_pinpoints).
std::vector<std::array<int, 2>> anyres_canvases(const VisionConfig& v, bool onevision) {
  if (!v.grid_pinpoints.empty()) return v.grid_pinpoints;
  const int s = v.image_size;
  if (!onevision) return {{s, 2 * s}, {2 * s, s}, {2 * s, 2 * s}, {3 * s, s}, {s, 3 * s}};
  std::vector<std::array<int, 2>> grid;
  for (int i = 1; i <= 6; ++i)
    for (int j = 1; j <= 6; ++j) grid.push_back({i * s, j * s});
  return grid;
}

// get_num_image_tokens' tiled part (llava_next.py _get_num_unpadded_features, and OneVision's
// override, which rounds to 7 places and then scales a grid of more than 1.1 x 9 tiles' features
// back): the unpadded features of the best canvas plus one newline per row.
std::int64_t anyres_unpadded_tokens(std::int64_t height, std::int64_t width, std::int64_t grid, std::int64_t rows, std::int64_t cols,
                                    bool onevision) {
  std::int64_t ch = grid * rows, cw = grid * cols;
  if (static_cast<double>(width) / static_cast<double>(height) > static_cast<double>(cw) / static_cast<double>(ch)) {
    const std::int64_t nh = onevision ? std::llround(static_cast<double>(height) * (static_cast<double>(cw) / static_cast<double>(width)) * 1e7) / 10'000'000
                                      : height * cw / width;
    ch -= 2 * ((ch - nh) / 2);
  } else {
    const std::int64_t nw = onevision ? std::llround(static_cast<double>(width) * (static_cast<double>(ch) / static_cast<double>(height)) * 1e7) / 10'000'000
                                      : width * ch / height;
    cw -= 2 * ((cw - nw) / 2);
  }
  if (onevision) {
    const double ratio = std::sqrt(static_cast<double>(ch * cw) / (9.0 * static_cast<double>(grid * grid)));
    if (ratio > 1.1) {
      ch = static_cast<std::int64_t>(std::floor(static_cast<double>(ch) / ratio));
      cw = static_cast<std::int64_t>(std::floor(static_cast<double>(cw) / ratio));
    }
  }
  return ch * cw + ch;
}

// LLaVA-NeXT (llava_next.py) and OneVision (llava_onevision.py): the dummy image is the pinpoint
// with the most tokens (NeXT) or OneVision's fixed 1153 x 944 (get_image_size_with_most_features,
// "found via processor tests"); the processor cuts its best canvas into tiles of image_size and
// adds the whole image as one more, each (image_size / patch)² patches (and CLIP's class token)
// in the tower. Tokens: the base tile's features (less the class token's under the "default"
// strategy) plus the unpadded tiled features and their newlines.
EncoderItem llava_anyres_item(const ModelSpec& m) {
  const auto& v = *m.vision;
  EncoderItem item;
  if (v.image_size <= 0 || v.patch_size <= 0) return item;
  const bool onevision = has(m.architecture, "LlavaOnevision");
  const std::int64_t grid = v.image_size / v.patch_size;
  const std::int64_t per_tile = grid * grid + class_tokens(v);
  const std::int64_t base = per_tile - (v.feature_select_strategy == "full" ? 0 : 1);
  const auto canvases = anyres_canvases(v, onevision);
  auto tokens_of = [&](std::int64_t h, std::int64_t w, std::array<int, 2>& canvas) {
    canvas = best_canvas(h, w, canvases);
    return base + anyres_unpadded_tokens(h, w, grid, canvas[0] / v.image_size, canvas[1] / v.image_size, onevision);
  };
  std::array<int, 2> canvas{0, 0}, image{0, 0};
  if (onevision) {
    image = {944, 1153};
    item.tokens = tokens_of(image[0], image[1], canvas);
  } else {
    for (const auto& [h, w] : canvases) {
      std::array<int, 2> c{0, 0};
      if (const std::int64_t t = tokens_of(h, w, c); t > item.tokens) {
        item.tokens = t;
        image = {h, w};
        canvas = c;
      }
    }
  }
  const std::int64_t tiles = static_cast<std::int64_t>(canvas[0] / v.image_size) * (canvas[1] / v.image_size) + 1;
  item.modality = "image";
  item.attention_span = per_tile;  // the tower attends within each tile
  item.patches = tiles * per_tile;
  item.source = std::to_string(image[1]) + "x" + std::to_string(image[0]) + " pixels, " + std::to_string(tiles) + " tiles of " +
                std::to_string(v.image_size) + " (" + (v.grid_pinpoints.empty() ? "the release's" : "the config's") +
                " image_grid_pinpoints)";
  return item;
}

// Phi-3(.5)-vision (phi3v.py): get_image_size_with_most_features is 50 x 8000 pixels (16:1). The
// processor's HD transform (processing_phi3_v.py calc_hd_transform_size) scales its long side to
// `scale` crops of 336, the most with scale x ceil(scale / ratio) <= num_crops, and pads the short
// side to one crop; calc_num_image_tokens_from_image_size counts (crops + 1) x 144 merged features,
// a separator and 12 newlines per crop row plus the global image's. The pixel values are padded to
// num_crops + 1 crops (pad_to_max_num_crops_tensor), each 24² patches and CLIP's class token.
EncoderItem phi3v_item(const ModelSpec& m, const VllmFlags& flags) {
  EncoderItem item;
  const auto& v = *m.vision;
  std::int64_t crops = v.max_tiles > 0 ? v.max_tiles : 16;
  std::string source = v.max_tiles > 0 ? v.processor_source + " num_crops" : "Phi-3-vision's num_crops (16), the larger release's";
  if (auto kw = mm_processor_kwarg(flags, "num_crops"); kw && *kw >= 1 && *kw <= 1024) {
    crops = *kw;
    source = "--mm-processor-kwargs num_crops";
  }
  const double ratio = 8000.0 / 50.0;
  std::int64_t scale = 1;
  while (static_cast<double>(scale) * std::ceil(static_cast<double>(scale) / ratio) <= static_cast<double>(crops)) ++scale;
  --scale;
  // The long side is `scale` crops; the short side, int(scale x 336 / ratio) pixels, pads up to whole crops.
  const std::int64_t rows = scale;
  const auto short_side = static_cast<std::int64_t>(static_cast<double>(scale * 336) / ratio);
  const std::int64_t cols = std::max<std::int64_t>(1, (short_side + 335) / 336);
  item.modality = "image";
  item.tokens = (rows * cols + 1) * 144 + 1 + (rows + 1) * 12;
  const std::int64_t side = v.patch_size > 0 ? v.image_size / v.patch_size : 24;  // 336 / 14 (read_phi3v_vision)
  item.attention_span = side * side + class_tokens(v);  // CLIP attends within each crop
  item.patches = (crops + 1) * item.attention_span;
  item.source = "50x8000 pixels, " + std::to_string(rows) + " crops of 336 and the global image, padded to " +
                std::to_string(crops + 1) + " (" + source + ")";
  return item;
}

// Llama 4 (mllama4.py): get_image_size_with_most_features is one tile wide and max_patches tiles
// tall (16 in Llama4ImageProcessorFast), which the processor cuts into that many 336-pixel tiles
// plus one global tile. Each tile is (image_size / patch)² patches and a class token in the
// encoder, and get_patch_per_chunk of them (the patches over 1 / pixel_shuffle_ratio²) in the
// language model.
EncoderItem llama4_item(const ModelSpec& m) {
  const auto& v = *m.vision;
  EncoderItem item;
  if (v.image_size <= 0 || v.patch_size <= 0 || v.pixel_shuffle_ratio <= 0) return item;
  const std::int64_t max_tiles = v.max_tiles > 0 ? v.max_tiles : 16;
  const std::int64_t tiles = max_tiles == 1 ? 1 : max_tiles + 1;
  const std::int64_t side = v.image_size / v.patch_size;
  const auto ds_ratio = static_cast<std::int64_t>(std::lround(1.0 / (v.pixel_shuffle_ratio * v.pixel_shuffle_ratio)));
  item.modality = "image";
  item.patches = tiles * (side * side + 1);
  item.attention_span = side * side + 1;  // Llama4VisionModel attends within each tile
  item.tokens = tiles * (side * side / std::max<std::int64_t>(1, ds_ratio));
  item.source = std::to_string(v.image_size) + "x" + std::to_string(max_tiles * v.image_size) + " pixels, " +
                std::to_string(tiles) + " tiles (" +
                (v.max_tiles > 0 ? v.processor_source + " max_patches" : "the image processor's default max_patches") + ")";
  return item;
}

// InternVL (internvl.py): get_image_size_with_most_features takes the tiling with the most tiles
// resolve_target_ratios allows, max_dynamic_patch of them (config or --mm-processor-kwargs), plus
// the thumbnail tile when use_thumbnail is set and there is more than one. Each tile is
// (image_size / patch)² patches and a class token in InternViT, which attends within the tile, and
// num_image_token = (image_size / patch)² × downsample_ratio² embeddings for the language model.
EncoderItem internvl_item(const ModelSpec& m, const VllmFlags& flags) {
  const auto& v = *m.vision;
  EncoderItem item;
  if (v.image_size <= 0 || v.patch_size <= 0) return item;
  std::int64_t blocks = v.max_tiles > 0 ? v.max_tiles : 12;  // InternVL's released configs: 12
  std::string source = v.max_tiles > 0 ? "the config's max_dynamic_patch" : "InternVL's default max_dynamic_patch";
  if (auto kw = mm_processor_kwarg(flags, "max_dynamic_patch"); kw && *kw >= 1 && *kw <= 1024) {
    blocks = *kw;
    source = "--mm-processor-kwargs max_dynamic_patch";
  }
  const std::int64_t tiles = blocks + (v.thumbnail_tile && blocks > 1 ? 1 : 0);
  const std::int64_t side = v.image_size / v.patch_size;
  const double ratio = v.pixel_shuffle_ratio > 0 ? v.pixel_shuffle_ratio : 0.5;
  item.modality = "image";
  item.attention_span = side * side + 1;
  item.patches = tiles * item.attention_span;
  item.tokens = tiles * static_cast<std::int64_t>(static_cast<double>(side * side) * ratio * ratio);
  item.source = std::to_string(tiles) + " tiles of " + std::to_string(v.image_size) + "x" + std::to_string(v.image_size) +
                " pixels (" + source + (tiles > blocks ? ", and the thumbnail" : "") + ")";
  return item;
}

// Aya Vision (aya_vision.py): get_image_size_with_most_features is a square of max_patches tiles
// per side (364 × 12 pixels at the release's preprocessor defaults). transformers' GotOcr2
// get_optimal_tiled_canvas gives a square image the largest square grid within max_patches (the
// ties of equal aspect ratio go to the later, larger grid when the image's area exceeds half of
// it), and get_num_patches adds the thumbnail tile when there is more than one: 3 × 3 + 1 = 10
// tiles at max_patches 12. SigLIP encodes every tile as its own (image_size / patch)² sequence and
// the pixel shuffle hands on (side × ratio)² embeddings per tile (169 at factor 2). Before v0.13
// vLLM budgets the placeholder's text markers too (about a dozen tokens more per image), which
// changes the items per batch only for budgets within a dozen tokens of a multiple of it.
EncoderItem aya_item(const ModelSpec& m, const VllmFlags& flags) {
  const auto& v = *m.vision;
  EncoderItem item;
  if (v.image_size <= 0 || v.patch_size <= 0) return item;
  std::int64_t max_patches = v.max_tiles > 0 ? v.max_tiles : 12;  // GotOcr2ImageProcessor's and Aya's default
  std::string source = v.max_tiles > 0 ? v.processor_source + " max_patches" : "the image processor's default max_patches";
  // vLLM builds the image processor with --mm-processor-kwargs, so max_patches there sets its attribute.
  if (auto kw = mm_processor_kwarg(flags, "max_patches"); kw && *kw >= 1 && *kw <= 1024) {
    max_patches = *kw;
    source = "--mm-processor-kwargs max_patches";
  }
  const auto grid = static_cast<std::int64_t>(std::floor(std::sqrt(static_cast<double>(max_patches))));
  const std::int64_t tiles = grid * grid + (grid * grid > 1 ? 1 : 0);
  const std::int64_t side = v.image_size / v.patch_size;
  const double ratio = v.pixel_shuffle_ratio > 0 ? v.pixel_shuffle_ratio : 0.5;
  const auto merged = static_cast<std::int64_t>(static_cast<double>(side) * ratio);
  item.modality = "image";
  item.attention_span = side * side;
  item.patches = tiles * item.attention_span;
  item.tokens = tiles * merged * merged;
  item.source = std::to_string(tiles) + " tiles of " + std::to_string(v.image_size) + "x" + std::to_string(v.image_size) +
                " pixels (a " + std::to_string(grid) + "x" + std::to_string(grid) + " grid and the thumbnail; " + source + ")";
  return item;
}

// LLaVA-NeXT-Video (llava_next_video.py) takes video only. Each frame is the tower's image_size²
// (CLIP: (image_size / patch)² patches and the class token, one sequence per frame), pooled by
// spatial_pool_stride to ceil(grid / stride)² tokens; the dummy video has as many frames as fit in
// seq_len (get_num_frames_with_most_features, no cap). vLLM budgets the item at max_model_len and,
// before v0.11 (#25553), builds the profiled dummy at max_num_batched_tokens instead.
EncoderItem llava_next_video_item(const ModelSpec& m, const ResolvedSettings& s, const VllmVersion& version) {
  const auto& v = *m.vision;
  EncoderItem item;
  if (v.image_size <= 0 || v.patch_size <= 0) return item;
  const std::int64_t grid = v.image_size / v.patch_size, stride = v.pooling_kernel_size > 0 ? v.pooling_kernel_size : 2;
  const std::int64_t pooled = (grid + stride - 1) / stride, frame_tokens = pooled * pooled;
  const auto frames_in = [&](std::int64_t seq_len) { return std::max<std::int64_t>(seq_len / frame_tokens, 1); };
  const std::int64_t budget_frames = frames_in(s.max_model_len);
  const std::int64_t frames = version.is_v1_engine() && version < VllmVersion{0, 11} ? frames_in(s.max_num_batched_tokens) : budget_frames;
  item.modality = "video";
  item.attention_span = grid * grid + class_tokens(v);
  item.patches = frames * item.attention_span;
  item.tokens = frames * frame_tokens;
  if (budget_frames > frames) item.budget_tokens = budget_frames * frame_tokens;
  item.source = std::to_string(frames) + " frames of " + std::to_string(v.image_size) + "² (the most " +
                std::to_string(frame_tokens) + "-token frames within " +
                (frames < budget_frames ? "max_num_batched_tokens" : "max_model_len") + ")";
  return item;
}

// Idefics3 and SmolVLM (idefics3.py, smolvlm.py): the dummy is a max_image_size square (the
// tower's image_size in every release: 364 or 384 or 512), which the processor scales so its
// longest edge is `size` (4 × max_image_size in every release) and splits into 4 × 4 tiles of
// max_image_size and the global image: 17 tiles, each its own SigLIP sequence of (tile / patch)²
// patches, pixel-shuffled by scale_factor to image_seq_len embeddings (169 on Idefics3-8B, 81 on
// SmolVLM). Before v0.13 some releases budget the placeholder's row/column markers too (tens to
// about 150 tokens more per image), which the items per batch rarely notice.
EncoderItem idefics3_item(const ModelSpec& m) {
  const auto& v = *m.vision;
  EncoderItem item;
  if (v.image_size <= 0 || v.patch_size <= 0) return item;
  constexpr std::int64_t k_grid = 4;  // size.longest_edge / max_image_size.longest_edge in the releases
  const std::int64_t tiles = k_grid * k_grid + 1, side = v.image_size / v.patch_size;
  const double ratio = v.pixel_shuffle_ratio > 0 ? v.pixel_shuffle_ratio : 0.5;
  item.modality = "image";
  item.attention_span = side * side;
  item.patches = tiles * item.attention_span;
  item.tokens = tiles * std::llround(static_cast<double>(side * side) * ratio * ratio);  // 1 / 3² is not exact
  item.source = std::to_string(tiles) + " tiles of " + std::to_string(v.image_size) + "² (4 x 4 and the global image)";
  return item;
}

// DeepSeek-OCR (deepseek_ocr.py and its processor, whose settings are hard-coded: base 1024,
// tiles of 640, crop mode, 2 to 6 crops): the 1280² dummy is cut into 2 × 2 tiles of 640² and a
// global view of 1024². SAM ViT-B (patch 16) sees 64² patches of the global view and 40² of each
// tile; its convolutions take them to 16² and 10² features, one embedding each, and a learned
// newline ends each row: 16 × 17 = 272 for the global view, 20 × 21 = 420 for the stitched tiles,
// and the view separator: 693 per image.
EncoderItem deepseek_ocr_item() {
  EncoderItem item;
  item.modality = "image";
  item.attention_span = 64 * 64;
  item.patches = 64 * 64 + 4 * 40 * 40;
  item.tokens = 16 * 17 + 20 * 21 + 1;
  item.source = "1280x1280 pixels: 2 x 2 tiles of 640² and the 1024² global view (the processor's fixed settings)";
  return item;
}

// The peak of one DeepSeek-OCR image, which deepseek_ocr.py encodes one at a time (the global view,
// then the image's tiles as one batch). SAM's global-attention blocks pass the decomposed
// relative-position bias to scaled_dot_product_attention as a [batch, 12 heads, N, N] mask in the
// model's dtype, beside the block's residual, normed input and MLP (2 × 768 + 2 × 3072 per patch):
// the global view (N 4096) holds 12 × 4096² of mask, the 4 tiles (N 1600) 4 × 12 × 1600². An
// estimate: the attention kernel's own workspace and CLIP-L's pass (257 or 101 tokens) are not in it.
double deepseek_ocr_image_peak(double dtype_bytes) {
  const auto view = [&](double batch, double n) { return dtype_bytes * batch * (12.0 * n * n + n * (2.0 * 768 + 2.0 * 3072)); };
  return std::max(view(1, 4096), view(4, 1600));
}

// Kimi-VL (kimi_vl.py): the dummy image is MaxImageTokenMeta's 1024 x 1024; get_num_image_tokens
// scales an image of more than in_token_limit patches (4096 by default) down to that many, pads
// it to whole merge kernels and merges 2 x 2 patches into one token. Kimi-K2.5 (kimi_k25.py,
// #33131, January 2026) builds a 3000 x 3000 dummy image and a 4-frame chunk of it, prices both
// with the release's media_tokens_calculator and profiles the larger: the image, which the
// release's navit_resize_image scales under in_patch_limit 16384 (int(3000 × sqrt(16384 / 214²))
// = 1794, the 512-patch side limit not binding) and pads to 1820: 130² patches, 4,225 tokens; the
// chunk's frames are limited to 4,096 patches each (1,089 tokens).
EncoderItem moonvit_item(const ModelSpec& m) {
  const auto& v = *m.vision;
  EncoderItem item;
  if (v.patch_size <= 0) return item;
  const std::int64_t patch = v.patch_size, kernel = v.spatial_merge_size > 0 ? v.spatial_merge_size : 2;
  const bool k25 = has(m.architecture, "KimiK25");
  const std::int64_t limit = v.in_token_limit > 0 ? v.in_token_limit : (k25 ? 16384 : 4096);
  const std::int64_t dummy = k25 ? 3000 : 1024;
  std::int64_t side = dummy;
  if ((side / patch) * (side / patch) > limit)
    side = static_cast<std::int64_t>(static_cast<double>(side) *
                                      std::sqrt(static_cast<double>(limit) / static_cast<double>((side / patch) * (side / patch))));
  const std::int64_t unit = kernel * patch, padded = (side + unit - 1) / unit * unit;
  item.modality = k25 ? "vision_chunk" : "image";  // Kimi-K2.5's one modality (images and video chunks)
  item.tokens = (padded / unit) * (padded / unit);
  item.patches = item.tokens * kernel * kernel;
  item.source = std::to_string(dummy) + "x" + std::to_string(dummy) + " pixels scaled to " + std::to_string(side) + "x" +
                std::to_string(side) + " under " +
                std::to_string(limit) + " patches (" +
                (v.in_token_limit > 0 ? v.processor_source + " in_token_limit" : "the image processor's default in_token_limit") + ")";
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
  const bool replicated = data_parallel_encoder || family == Family::moonvit || family == Family::gemma4;
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

// The largest input vLLM profiles a Qwen-VL model with: its largest image, or before v0.13
// Qwen3-VL's video when video is allowed, which then counts more tokens.
EncoderItem qwen_profiled_item(const ModelSpec& m, const VllmFlags& flags, const ResolvedSettings& s, const VllmVersion& version) {
  const EncoderItem largest = qwen_item(m, flags);
  // get_image_size_with_most_features is a square (qwen_item), `side` pixels wide.
  const std::int64_t patch = m.vision->patch_size > 0 ? m.vision->patch_size : 14;
  const auto side = static_cast<std::int64_t>(std::lround(std::sqrt(static_cast<double>(largest.patches)))) * patch;
  const EncoderItem image = qwen_sized_dummy(m, flags, version, largest, side);
  if (mm_limit(flags, "video") > 0)
    if (auto video = qwen3_vl_profiled_video(m, version, s.max_model_len, side);
        video && (mm_limit(flags, "image") == 0 || video->budget_tokens > std::max(image.tokens, image.budget_tokens)))
      return *video;
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

// Towers that take video as well as images: the Qwen-VL family, Gemma 4, LLaVA-OneVision,
// LLaVA-NeXT-Video (llava_onevision.py / llava_next_video.py get_supported_mm_limits) and MiniCPM-V
// from 2.6 (minicpmv.py).
bool takes_video(const ModelSpec& model) {
  const Family f = family_of(model);
  return (f == Family::qwen_dynamic && !has(model.architecture, "PaddleOCRVL")) || f == Family::gemma4 ||
         has(model.architecture, "LlavaOnevision") ||
         has(model.architecture, "LlavaNextVideo") || f == Family::glm4v ||
         (f == Family::minicpmv_slices && minicpmv_takes_video(*model.vision));
}

}  // namespace

int mm_limit(const VllmFlags& flags, const std::string& modality) {
  auto it = flags.limit_mm_per_prompt.find(modality);
  // vLLM's default limit per modality in the V1 profiler (config/multimodal.py): 999.
  return it == flags.limit_mm_per_prompt.end() ? 999 : it->second;
}

bool text_only_mode(const ModelSpec& model, const VllmFlags& flags) {
  if (!model.vision) return false;
  if (flags.language_model_only) return true;
  if (flags.limit_mm_per_prompt.empty()) return false;
  for (const char* modality : {"image", "video", "audio"}) {
    auto it = flags.limit_mm_per_prompt.find(modality);
    if (it == flags.limit_mm_per_prompt.end() || it->second > 0) {
      // An unnamed modality keeps its default limit unless the model has no such input: towers
      // take images (and video where takes_video says so), audio only where an audio encoder is
      // read (the omni models).
      if (std::string(modality) == "audio" && !model.audio) continue;
      if (std::string(modality) == "video" && !takes_video(model)) continue;
      return false;
    }
  }
  return true;
}

bool skips_tower_weights(const ModelSpec& model, const VllmFlags& flags, const VllmVersion& version) {
  return text_only_mode(model, flags) && !(version < VllmVersion{0, 10, 1});
}

namespace {

// The largest item of a sized family, as its processing info builds it.
EncoderItem sized_item(const ModelSpec& model, Family family, const VllmFlags& flags, const ResolvedSettings& settings,
                       const VllmVersion& version) {
  return family == Family::qwen_dynamic     ? qwen_profiled_item(model, flags, settings, version)
         : family == Family::llama4_tiles   ? llama4_item(model)
         : family == Family::internvl_tiles ? internvl_item(model, flags)
         : family == Family::llava_anyres   ? llava_anyres_item(model)
         : family == Family::phi3v_crops    ? phi3v_item(model, flags)
         : family == Family::moonvit        ? moonvit_item(model)
         : family == Family::gemma4         ? gemma4_profiled_item(model, flags, version)
         : family == Family::aya_tiles      ? aya_item(model, flags)
         : family == Family::minicpmv_slices ? minicpmv_profiled_item(model, flags, settings.max_model_len, version)
         : family == Family::llava_next_video ? llava_next_video_item(model, settings, version)
         : family == Family::glm4v          ? glm4v_profiled_items(model, flags, settings.max_model_len, version).item
         : family == Family::idefics3_tiles ? idefics3_item(model)
         : family == Family::deepseek_ocr   ? deepseek_ocr_item()
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

}  // namespace

std::optional<EncoderItem> largest_mm_item(const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& settings,
                                           const VllmVersion& version) {
  const Family family = family_of(model);
  if (family == Family::none || family == Family::unsized || family == Family::mllama_v0 ||
      (family == Family::glm4v && !glm4v_sized(version)))
    return std::nullopt;
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
  if (family == Family::none) return skipped("no vision tower");
  if (text_only_mode(model, flags))
    return skipped("every modality is limited to 0: vLLM builds no encoder budget and skips the pass");
  if (family == Family::mllama_v0 && !version.is_v1_engine()) return mllama_v0_profile(model, flags, settings, dtype_bytes);
  if (!version.is_v1_engine()) return skipped("the V0 engine profiles the encoder inside its dummy sequences (not modelled)");
  if (flags.skip_mm_profiling) return skipped("--skip-mm-profiling");
  if (family == Family::unsized || family == Family::mllama_v0 || (family == Family::glm4v && !glm4v_sized(version))) {
    EncoderProfile none = skipped("the largest input of " + model.architecture + "'s processor is not modelled");
    none.family_unsized = true;
    return none;
  }
  p.item = sized_item(model, family, flags, settings, version);
  if (p.item.patches <= 0 || p.item.tokens <= 0) return skipped("the vision config gives no image or patch size");
  if (mm_limit(flags, "image") == 0 && p.item.modality == "image") {
    // Images off, video on (Qwen-VL): vLLM profiles video; its largest item is not sized here.
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
  const double per_patch = dots_plugin ? dots_plugin_bytes_per_patch(model, dtype_bytes)
                                       : peak_bytes_per_patch(model, family, tp, dp_encoder, dtype_bytes);
  p.encoder_peak = static_cast<Bytes>(std::min(items_on_rank * static_cast<double>(p.item.patches) * per_patch, k_most_bytes));
  if (family == Family::gemma4) gemma4_peak(p, version, device, per_patch, dtype_bytes);
  if (family == Family::deepseek_ocr) {
    p.units_per_forward = 1;
    p.encoder_peak = static_cast<Bytes>(deepseek_ocr_image_peak(dtype_bytes));
  }
  if (has(model.architecture, "PaddleOCRVL")) {
    // paddleocr_vl.py encodes the batch an image at a time (encode_image per image, cu_seqlens of one).
    p.units_per_forward = 1;
    p.encoder_peak = static_cast<Bytes>(std::min(static_cast<double>(p.item.patches) * per_patch, k_most_bytes));
  }
  if (family == Family::glm4v) glm4v_tied_reading(p, model, flags, settings, version, items_on_rank / p.items * per_patch);
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
