#include "engine/ovis25_vision.h"

#include <algorithm>
#include <string>

#include "engine/qwen_resize.h"

namespace headroom::engine {

namespace {

constexpr std::int64_t k_dummy_side = 1792;         // get_image_size_with_most_features
constexpr double k_min_pixels = 448.0 * 448.0;      // processors/ovis2_5.py MIN_PIXELS
constexpr double k_max_pixels = 1792.0 * 1792.0;    // processors/ovis2_5.py MAX_PIXELS
constexpr std::int64_t k_indicators = 2;            // the image start and end embeddings

std::int64_t patch_of(const VisionConfig& v) { return v.patch_size > 0 ? v.patch_size : 16; }
std::int64_t stride_of(const VisionConfig& v) { return v.spatial_merge_size > 0 ? v.spatial_merge_size : 2; }

// The dummy's sides after the processor's smart_resize (Qwen2-VL's, called with factor = patch ×
// hidden_stride and the processor's pixel bounds; --mm-processor-kwargs may set them, bounded here
// to what a 1792² image can reach).
ResizedSides resized_dummy(const VisionConfig& v, const VllmFlags& flags, std::string& source) {
  const double factor = static_cast<double>(patch_of(v) * stride_of(v));
  double max_pixels = k_max_pixels, min_pixels = k_min_pixels;
  source = "1792x1792 pixels (ovis2_5.py's largest image)";
  if (auto kw = mm_processor_kwarg(flags, "max_pixels"); kw && *kw > 0) {
    max_pixels = std::min(static_cast<double>(*kw), k_max_pixels);
    source += ", max_pixels " + std::to_string(static_cast<std::int64_t>(max_pixels)) + " (--mm-processor-kwargs)";
  }
  if (auto kw = mm_processor_kwarg(flags, "min_pixels"); kw && *kw > 0) min_pixels = std::min(static_cast<double>(*kw), max_pixels);
  const double side = static_cast<double>(k_dummy_side);
  return qwen_smart_resize(side, side, factor, min_pixels, max_pixels);
}

}  // namespace

EncoderItem ovis25_image_item(const ModelSpec& model, const VllmFlags& flags) {
  EncoderItem item;
  if (!model.vision) return item;
  const VisionConfig& v = *model.vision;
  const ResizedSides r = resized_dummy(v, flags, item.source);
  const std::int64_t patch = patch_of(v), stride = stride_of(v);
  item.modality = "image";
  item.patches = static_cast<std::int64_t>(r.height / static_cast<double>(patch)) * static_cast<std::int64_t>(r.width / static_cast<double>(patch));
  item.tokens = item.patches / (stride * stride) + k_indicators;
  return item;
}

std::optional<EncoderItem> ovis25_video_item(const ModelSpec& model, const VllmFlags& flags, std::int64_t max_model_len) {
  if (mm_limit(flags, "video") == 0) return std::nullopt;
  const EncoderItem image = ovis25_image_item(model, flags);
  if (image.patches <= 0) return std::nullopt;
  // get_num_image_tokens counts the patches of the hard-coded 1792² size per frame (no resize);
  // the frames fill max_model_len with them and are then processed at the resized size.
  const std::int64_t grid = k_dummy_side / patch_of(*model.vision);
  const std::int64_t frames = std::min<std::int64_t>(max_model_len / (grid * grid), 1 << 16);
  if (frames < 2) return std::nullopt;
  const std::int64_t stride = stride_of(*model.vision);
  EncoderItem video;
  video.modality = "video";
  video.patches = frames * image.patches;
  video.attention_span = image.patches;
  video.tokens = video.patches / (stride * stride) + k_indicators;
  video.source = std::to_string(frames) + " frames of " + image.source;
  return video;
}

double ovis25_head_bytes_per_token(const ModelSpec& model, double dtype_bytes) {
  const double vocab = model.vision && model.vision->visual_vocab_size > 4 ? model.vision->visual_vocab_size : 65536;
  return (vocab - 4.0) * (2.0 * dtype_bytes + 4.0);
}

}  // namespace headroom::engine
