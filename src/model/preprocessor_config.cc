// preprocessor_config.json: the largest input a multimodal model's processor accepts, which is
// what vLLM's profile run builds its dummy item from (encoder_profile.cc). Only the keys the
// families headroom sizes use are read; a value out of range is an error naming the file and key.
#include <string>

#include "model/model_internal.h"

namespace headroom::model_detail {

namespace {

// The widest values any released processor writes, with room to spare: Qwen3-VL's video budget
// is 25,165,824 pixels, Llama 4's 16 tiles, Kimi-VL's 4,096 patches. Anything past these bounds is
// a broken or hostile file, and would make the encoder profile's arithmetic meaningless (the
// reader itself refuses integers from 2^31).
constexpr std::int64_t k_max_pixels = (std::int64_t{1} << 31) - 1;
constexpr std::int64_t k_max_tiles = 1024;
constexpr std::int64_t k_max_token_limit = std::int64_t{1} << 24;

Result<std::optional<std::int64_t>> bounded(const ConfigReader& r, const std::string& key, std::int64_t limit,
                                            const std::string& fix = "fix or remove preprocessor_config.json, or pass the "
                                                                     "size with --mm-processor-kwargs") {
  HR_TRY(v, r.get_int(key));
  if (v && (*v < 1 || *v > limit))
    return make_error(ErrorCode::parse_error,
                      r.display(key) + " is " + std::to_string(*v) + ", outside 1.." + std::to_string(limit) + ": " + fix,
                      r.where(key));
  return v;
}

// Qwen2-VL writes max_pixels / min_pixels at the top level (older releases) or in "size" as
// max_pixels / min_pixels; Qwen3-VL writes size.longest_edge / size.shortest_edge, which its
// processor reads as the pixel budget (qwen3_vl.py _get_vision_info: max_pixels =
// image_processor.size["longest_edge"]).
Result<void> read_pixel_budget(const ConfigReader& r, VisionConfig& v) {
  HR_TRY(top_max, bounded(r, "max_pixels", k_max_pixels));
  HR_TRY(top_min, bounded(r, "min_pixels", k_max_pixels));
  std::optional<std::int64_t> size_max, size_min;
  if (auto size = r.child("size")) {
    HR_TRY(mx, bounded(*size, "max_pixels", k_max_pixels));
    HR_TRY(mn, bounded(*size, "min_pixels", k_max_pixels));
    HR_TRY(longest, bounded(*size, "longest_edge", k_max_pixels));
    HR_TRY(shortest, bounded(*size, "shortest_edge", k_max_pixels));
    // longest_edge/shortest_edge are pixel counts only for the Qwen-VL processors; elsewhere
    // (SigLIP, CLIP) they are sides in pixels, which the fixed-size towers take from config.json.
    const bool pixel_budget = v.model_type.starts_with("qwen") || v.temporal_patch_size > 0;
    size_max = mx ? mx : (pixel_budget ? longest : std::nullopt);
    size_min = mn ? mn : (pixel_budget ? shortest : std::nullopt);
  }
  if (auto m = top_max ? top_max : size_max) v.max_pixels = *m;
  if (auto m = top_min ? top_min : size_min) v.min_pixels = *m;
  return {};
}

}  // namespace

Result<bool> apply_preprocessor_config(const nlohmann::json& j, const std::string& origin, ModelSpec& spec) {
  if (!spec.vision) return false;
  if (!j.is_object())
    return make_error(ErrorCode::parse_error, "preprocessor_config.json is " + json_kind(j) + ", not an object", origin);
  const ConfigReader r(j, origin);
  VisionConfig& v = *spec.vision;
  if (auto pixels = read_pixel_budget(r, v); !pixels) return tl::unexpected(pixels.error());
  // Llama 4: max_patches is the most 336-pixel tiles one image is cut into (mllama4.py
  // get_max_num_tiles reads image_processor.max_patches).
  HR_TRY(tiles, bounded(r, "max_patches", k_max_tiles));
  if (tiles) v.max_tiles = static_cast<int>(*tiles);
  // Phi-3(.5)-vision: num_crops is the most 336-pixel crops the HD transform makes of one image
  // (processing_phi3_v.py; the releases write 16 for Phi-3-vision, 4 for Phi-3.5-vision).
  HR_TRY(crops, bounded(r, "num_crops", k_max_tiles));
  if (crops) v.max_tiles = static_cast<int>(*crops);
  // Phi-4-multimodal: dynamic_hd is the most 448-pixel crops the HD transform makes of one image
  // (phi4mm.py get_dynamic_hd reads image_processor.dynamic_hd; the release writes 36).
  HR_TRY(dynamic_hd, bounded(r, "dynamic_hd", k_max_tiles));
  if (dynamic_hd) v.max_tiles = static_cast<int>(*dynamic_hd);
  // Kimi-VL's MoonViT: in_token_limit caps the patches of one image (kimi_vl.py get_num_image_tokens).
  HR_TRY(limit, bounded(r, "in_token_limit", k_max_token_limit));
  if (limit) v.in_token_limit = *limit;
  const bool read = v.max_pixels > 0 || v.min_pixels > 0 || tiles || crops || dynamic_hd || limit;
  if (read) v.processor_source = origin;
  return read;
}

Result<bool> apply_video_preprocessor_config(const nlohmann::json& j, const std::string& origin, ModelSpec& spec) {
  if (!spec.vision) return false;
  if (!j.is_object())
    return make_error(ErrorCode::parse_error, "video_preprocessor_config.json is " + json_kind(j) + ", not an object", origin);
  const ConfigReader r(j, origin);
  auto size = r.child("size");
  if (!size) return false;
  HR_TRY(longest, bounded(*size, "longest_edge", k_max_pixels, "fix or remove video_preprocessor_config.json"));
  if (!longest) return false;
  spec.vision->video_max_pixels = *longest;
  return true;
}

const std::vector<ProcessorConfigFile>& processor_configs() {
  static const std::vector<ProcessorConfigFile> k = {{"preprocessor_config.json", apply_preprocessor_config},
                                                     {"video_preprocessor_config.json", apply_video_preprocessor_config}};
  return k;
}

}  // namespace headroom::model_detail
