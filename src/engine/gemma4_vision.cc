#include "engine/gemma4_vision.h"

#include <algorithm>
#include <cmath>

namespace headroom::engine {

namespace {

// gemma4_mm.py (vLLM, May 2026): a video is budgeted at _VIDEO_MAX_FRAMES (32) frames of
// _VIDEO_MAX_SOFT_TOKENS (70) soft tokens plus 2 boundary and 6 timestamp tokens each
// (get_mm_max_tokens_per_item: 32 x 78 = 2496); an image at the vision config's
// default_output_length (280).
constexpr std::int64_t k_video_frames = 32;
constexpr std::int64_t k_frame_soft_tokens = 70;
constexpr std::int64_t k_frame_extra_tokens = 8;
constexpr std::int64_t k_default_image_soft_tokens = 280;
// The position table's rows (vision_config.position_embedding_size, 10240 in every release) that
// the embedder one-hots each patch's x and y over, and that gemma4_mm.py's _encoder_chunk prices
// at patches x 4 x 10240 x 8 bytes per item.
constexpr std::int64_t k_position_rows = 10240;

// --mm-processor-kwargs max_soft_tokens, where vLLM takes it (#41799: 70, 140, 280, 560 or 1120).
std::int64_t image_soft_tokens(const ModelSpec& m, const VllmFlags& flags) {
  const std::int64_t config = m.vision->soft_tokens_per_image > 0 ? m.vision->soft_tokens_per_image : k_default_image_soft_tokens;
  const auto v = mm_processor_kwarg(flags, "max_soft_tokens");
  for (std::int64_t allowed : {70, 140, 280, 560, 1120})
    if (v == allowed) return allowed;
  return config;
}

}  // namespace

// The dummy image and frames are 224 x 224 (the image processor sets no size). The processor
// resizes each to the largest grid of pooled patches under its soft-token cap, keeping the aspect
// (_compute_num_soft_tokens: 16 x 16 = 256 tokens at 280, 8 x 8 = 64 at 70), and pads its patches
// to cap x pooling_kernel² (2520 and 630): the encoder attends over the padded sequence.
EncoderItem gemma4_profiled_item(const ModelSpec& m, const VllmFlags& flags, const VllmVersion& version) {
  const std::int64_t pool = m.vision->pooling_kernel_size > 0 ? m.vision->pooling_kernel_size : 3;
  auto grid = [](std::int64_t cap) {
    const auto side = static_cast<std::int64_t>(std::floor(std::sqrt(static_cast<double>(cap))));
    return side * side;
  };
  EncoderItem item;
  auto video_limit = flags.limit_mm_per_prompt.find("video");
  if (video_limit == flags.limit_mm_per_prompt.end() || video_limit->second > 0) {
    std::int64_t frames = k_video_frames;
    // #41837 (May 2026, taken as first in v0.21): --limit-mm-per-prompt's video num_frames lowers it.
    if (auto s = flags.mm_dummy_sizes.find("video");
        !(version < VllmVersion{0, 21}) && s != flags.mm_dummy_sizes.end() && s->second.num_frames > 0)
      frames = std::min<std::int64_t>(frames, s->second.num_frames);
    item.modality = "video";
    item.attention_span = k_frame_soft_tokens * pool * pool;
    item.patches = frames * item.attention_span;
    item.tokens = frames * grid(k_frame_soft_tokens);
    item.budget_tokens = frames * (k_frame_soft_tokens + k_frame_extra_tokens);
    item.source = std::to_string(frames) + " frames of 224x224 pixels at " + std::to_string(k_frame_soft_tokens) +
                  " soft tokens (gemma4_mm.py's dummy video)";
    return item;
  }
  const std::int64_t cap = image_soft_tokens(m, flags);
  item.modality = "image";
  item.attention_span = cap * pool * pool;
  item.patches = item.attention_span;
  item.tokens = grid(cap);
  item.budget_tokens = cap;
  item.source = "224x224 pixels at " + std::to_string(cap) + " soft tokens (gemma4_mm.py's dummy image)";
  return item;
}

bool gemma4_prefix_lm(const ModelSpec& model, const VllmVersion& version) {
  return model.mm_prefix_lm && model.vision && model.architecture == "Gemma4ForConditionalGeneration" &&
         !(version < VllmVersion{0, 20});
}

std::int64_t gemma4_prefix_lm_batched_tokens(const ModelSpec& model, const VllmFlags& flags, const VllmVersion& version) {
  VllmFlags every_modality = flags;
  every_modality.limit_mm_per_prompt.erase("video");
  const EncoderItem video = gemma4_profiled_item(model, every_modality, version);
  every_modality.limit_mm_per_prompt["video"] = 0;
  const EncoderItem image = gemma4_profiled_item(model, every_modality, version);
  return std::max(video.budget_tokens, image.budget_tokens);
}

// Before #43169 (merged 2026-05-21, after v0.21 shipped; taken as first in v0.22) the model
// encoded one image or frame per call. From it, items are bucketed by patch count and encoded in
// chunks that #43296's _encoder_chunk sizes: a budget of min(free / 2, total / 10) bytes over
// patches x 4 x 10240 x 8 per item.
std::int64_t gemma4_units_per_forward(const EncoderItem& item, int items, const VllmVersion& version, Bytes device_total,
                                      Bytes device_free) {
  const std::int64_t span = std::max<std::int64_t>(1, item.attention_span);
  const std::int64_t units = std::max<std::int64_t>(1, static_cast<std::int64_t>(items) * (item.patches / span));
  if (version < VllmVersion{0, 22} || device_total <= 0 || device_free <= 0) return 1;
  const double budget = std::min(static_cast<double>(device_free) / 2.0, static_cast<double>(device_total) / 10.0);
  const double cost = static_cast<double>(span) * 4.0 * static_cast<double>(k_position_rows) * 8.0;
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(budget / cost), 1, units);
}

Bytes gemma4_position_one_hot_bytes(const EncoderItem& item, std::int64_t units, double dtype_bytes) {
  const double per_patch = 2.0 * static_cast<double>(k_position_rows) * (8.0 + dtype_bytes);
  return static_cast<Bytes>(static_cast<double>(units) * static_cast<double>(item.attention_span) * per_patch);
}

// transformers replaced the one-hot with an embedding lookup in #46176 (merged about 2026-05-24),
// days after vLLM began chunking; which transformers a v0.22+ install runs is not known here, so
// from v0.22 the estimate takes the lookup and the range the one-hot (uncertainty.cc).
bool gemma4_one_hot_in_estimate(const VllmVersion& version) { return version < VllmVersion{0, 22}; }

}  // namespace headroom::engine
