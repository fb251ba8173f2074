#include "engine/tiled_encoder_items.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace headroom::engine {

namespace {

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// The most tiles (crops, patches) the processor cuts one image into, and where that number came
// from: --mm-processor-kwargs `key` (vLLM builds the processor with them), else the value read
// from the model's files (`read`, 0 when none; `read_from` says which), else the release default.
struct TileCount {
  std::int64_t count = 0;
  std::string source;
};
TileCount tile_count(const VllmFlags& flags, const char* key, int read, std::string read_from, std::int64_t fallback,
                     std::string fallback_source) {
  if (auto kw = mm_processor_kwarg(flags, key); kw && *kw >= 1 && *kw <= 1024) return {*kw, std::string("--mm-processor-kwargs ") + key};
  if (read > 0) return {read, std::move(read_from)};
  return {fallback, std::move(fallback_source)};
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

}  // namespace

// Patches the tower adds to each image or tile besides its patches: CLIP's class token (clip.py);
// SigLIP has none (siglip.py).
std::int64_t class_tokens(const VisionConfig& v) { return v.model_type == "siglip_vision_model" ? 0 : 1; }

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
  const auto [crops, source] = tile_count(flags, "num_crops", v.max_tiles, v.processor_source + " num_crops", 16,
                                          "Phi-3-vision's num_crops (16), the larger release's");
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

// Phi-4-multimodal (phi4mm.py): get_image_size_with_most_features is one crop wide and dynamic_hd
// crops tall (the processor's dynamic_hd: 36 in the release's preprocessor_config.json,
// --mm-processor-kwargs dynamic_hd overrides it). _find_target_aspect_ratio keeps that 1 × dynamic_hd
// grid, and SigLIP encodes the grid's crops and the global image, (image_size / patch)² patches
// each, attending within a crop. _compute_num_image_tokens after the 2 × 2 average pool: the
// global image's c² tokens and c newlines, a separator, and the grid's c² tokens per crop with c
// newlines per crop row, where c = image_size / patch / 2 (10,065 tokens at 36 crops of 448).
// Before v0.9 the first phi4mm.py hard-coded DYNAMIC_HD = 16 whatever the processor wrote: its
// dummy image is 448 x 7168 (17 crops, 4,625 tokens), and dummy_data_for_phi4mm took images over
// audio whenever they had more tokens (188 per audio clip).
EncoderItem phi4mm_item(const ModelSpec& m, const VllmFlags& flags, bool first_phi4mm) {
  EncoderItem item;
  const auto& v = *m.vision;
  if (v.image_size <= 0 || v.patch_size <= 0) return item;
  const auto [crops, source] =
      first_phi4mm ? TileCount{16, "the first phi4mm.py's DYNAMIC_HD (16)"}
                   : tile_count(flags, "dynamic_hd", v.max_tiles, v.processor_source + " dynamic_hd", 36, "the release's dynamic_hd (36)");
  const std::int64_t side = v.image_size / v.patch_size, c = side / 2;
  item.modality = "image";
  item.tokens = (crops + 1) * c * c + 1 + (crops + 1) * c;
  item.attention_span = side * side;
  item.patches = (crops + 1) * item.attention_span;
  item.source = std::to_string(v.image_size) + "x" + std::to_string(v.image_size * crops) + " pixels, " +
                std::to_string(crops) + " crops of " + std::to_string(v.image_size) + " and the global image (" + source + ")";
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
  // InternVL's released configs: 12.
  const auto [blocks, source] = tile_count(flags, "max_dynamic_patch", v.max_tiles, "the config's max_dynamic_patch", 12,
                                           "InternVL's default max_dynamic_patch");
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

// InternVL's dummy video (internvl.py InternVLProcessingInfo, InternVLDummyInputsBuilder): only
// where the language model's tokenizer has a video token (get_video_token: text model_type qwen2,
// qwen3, qwen3_moe, gpt_oss; #18499, taken as v0.9, added it for the Qwen2.5 backbones, the others
// are taken from v0.11, the first stored code read with them). Every frame is one image_size² tile
// (InternVLVideoProcessor: no dynamic tiling) of image_seq_length = (side / patch)² × ratio²
// embeddings, and get_num_frames_with_most_features gives (seq_len − the image's tokens × images) /
// image_seq_length frames, at least 1, with no cap. vLLM's budget sizes both active modalities
// together (one of each) at max_model_len; the profile run builds the video alone ({video: 1}) at
// max_model_len from v0.11 (#25553) and at max_num_batched_tokens before, and encodes its frames
// in one extract_feature call.
bool internvl_takes_video(const ModelSpec& m, const VllmVersion& version) {
  // interns1.py (the transformers layout) supports video whatever the language model
  // (get_supported_mm_limits: image and video), the same frames; taken from v0.11.
  const std::string& a = m.architecture;
  if (a == "InternVLForConditionalGeneration" || a == "InternS1ForConditionalGeneration") return !(version < VllmVersion{0, 11});
  const std::string& t = m.model_type;
  if (t == "qwen2") return !(version < VllmVersion{0, 9});
  return (t == "qwen3" || t == "qwen3_moe" || t == "gpt_oss") && !(version < VllmVersion{0, 11});
}

EncoderItem internvl_profiled_item(const ModelSpec& m, const VllmFlags& flags, const ResolvedSettings& s,
                                   const VllmVersion& version) {
  const EncoderItem image = internvl_item(m, flags);
  const auto& v = *m.vision;
  if (image.tokens <= 0 || !version.is_v1_engine() || !internvl_takes_video(m, version) || mm_limit(flags, "video") == 0)
    return image;
  const std::int64_t side = v.image_size / v.patch_size;
  const double ratio = v.pixel_shuffle_ratio > 0 ? v.pixel_shuffle_ratio : 0.5;
  const auto per_frame = static_cast<std::int64_t>(static_cast<double>(side * side) * ratio * ratio);
  if (per_frame <= 0) return image;
  const bool images_on = mm_limit(flags, "image") > 0;
  const std::int64_t budget_frames = std::max<std::int64_t>((s.max_model_len - (images_on ? image.tokens : 0)) / per_frame, 1);
  if (images_on && budget_frames * per_frame <= image.tokens) return image;
  const bool from_batch = version < VllmVersion{0, 11};
  std::int64_t frames = std::max<std::int64_t>((from_batch ? s.max_num_batched_tokens : s.max_model_len) / per_frame, 1);
  auto size = flags.mm_dummy_sizes.find("video");
  const bool limited = size != flags.mm_dummy_sizes.end() && size->second.num_frames > 0 && size->second.num_frames < frames;
  if (limited) frames = size->second.num_frames;
  EncoderItem item;
  item.modality = "video";
  item.attention_span = side * side + class_tokens(v);
  item.patches = frames * item.attention_span;
  item.tokens = frames * per_frame;
  item.budget_tokens = budget_frames * per_frame;
  item.source = std::to_string(frames) + " frames of " + std::to_string(v.image_size) + "², one tile each (internvl.py: the most " +
                std::to_string(per_frame) + "-embedding frames within " +
                (limited ? std::string("--limit-mm-per-prompt's num_frames") : from_batch ? "max_num_batched_tokens" : "max_model_len") +
                ")";
  return item;
}

// Molmo (molmo.py MolmoProcessingInfo): get_image_size_with_most_features takes, among the tilings
// of at most max_crops crops, the one with the most embeddings: one column of max_crops rows (a
// 336 × 4032 dummy at max_crops 12). Crops overlap by the processor's margins (4 patches each
// side), so a column of n crops spans (24 − 8) × n + 8 patches (get_patches_grid_size), and the
// 2 × 2 pooling hands on ceil(span / 2) rows of 12: the embeddings grow fastest along one side.
// The ViT sees those crops and the global image, each its 24² patches and a class token
// (attention within each crop); the pooling gives the global image 144 embeddings and the tiles
// 12 × (8 × n + 4) (1,344 in all at 12 rows; the column and image start/end tokens of the prompt
// are not embeddings and not budgeted).
EncoderItem molmo_item(const ModelSpec& m, const VllmFlags& flags) {
  const auto& v = *m.vision;
  EncoderItem item;
  if (v.image_size <= 0 || v.patch_size <= 0) return item;
  const auto [rows, source] = tile_count(flags, "max_crops", v.max_tiles, "max_crops", 12, "the release's max_crops (12)");
  constexpr std::int64_t k_margins = 4 + 4;  // overlap_margins, in patches
  const std::int64_t side = v.image_size / v.patch_size, pooled = (side + 1) / 2;
  const std::int64_t span = (side - k_margins) * rows + k_margins;
  item.modality = "image";
  item.attention_span = side * side + 1;
  item.patches = (rows + 1) * item.attention_span;
  item.tokens = pooled * pooled + pooled * ((span + 1) / 2);
  item.source = std::to_string(rows) + " crops of " + std::to_string(v.image_size) + "x" + std::to_string(v.image_size) +
                " pixels and the global image (" + source + ")";
  return item;
}

// Molmo's ViT keeps every block's output (BlockCollection returns all of them, for the two layers
// the pooling reads) until the pass ends: per patch, depth hidden-width outputs beside the last
// block's MLP (its w1 output and activation, split by TP) and two more hidden-width buffers.
double molmo_bytes_per_patch(const ModelSpec& m, int tp, double dtype_bytes) {
  const auto& v = *m.vision;
  return dtype_bytes * (static_cast<double>(v.depth) * v.hidden_size + 2.0 * v.intermediate_size / std::max(1, tp) +
                        2.0 * v.hidden_size);
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
  // GotOcr2ImageProcessor's and Aya's default: 12.
  const auto [max_patches, source] = tile_count(flags, "max_patches", v.max_tiles, v.processor_source + " max_patches", 12,
                                                "the image processor's default max_patches");
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

// Gemma 3n (gemma3n_mm.py): TOKENS_PER_IMAGE 256 against TOKENS_PER_AUDIO 188, so vLLM profiles
// images, as many as the budget holds (32 at 8,192 tokens), built at the image processor's
// 768 × 768 and run through the vision tower in one call (timm's mobilenetv5_300m_enc through
// TimmWrapperModel). The image counts as 48² cells of 16 pixels here (the fusion adapter's grid
// before its pooling to 16²).
EncoderItem gemma3n_item(const ModelSpec& m) {
  const std::int64_t side = m.vision && m.vision->image_size > 0 ? m.vision->image_size : 768;
  EncoderItem item;
  item.modality = "image";
  item.patches = (side / 16) * (side / 16);
  item.tokens = 256;
  item.source = std::to_string(side) + "x" + std::to_string(side) + " pixels (the image processor's size), MobileNetV5";
  return item;
}

// MobileNetV5-300M's widest moment for one 768² image: stage 1's first universal inverted residual
// expands stage 0's 128 channels at 192² by 6 to 768; the expansion convolution's output and its
// normalised copy (timm's norm layers return new tensors) are alive beside the block's input, and
// the dummy pixels stay for the whole call. An estimate from the architecture's shapes: cuDNN's
// workspace and the attention blocks of stages 2 and 3 (smaller per image) are not in it.
double gemma3n_image_peak(double dtype_bytes) {
  const double expansion = 768.0 * 192 * 192, input = 128.0 * 192 * 192, pixels = 3.0 * 768 * 768;
  return dtype_bytes * (2.0 * expansion + input + pixels);
}

}  // namespace headroom::engine
