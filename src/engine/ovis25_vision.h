// Ovis2.5's dummy multimodal batch in vLLM's profile run (ovis2_5.py, its processor
// transformers_utils/processors/ovis2_5.py, siglip2navit.py): the largest image, the video that
// may be profiled instead, and the peak of its visual head.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/encoder_profile.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"

namespace headroom::engine {

// The dummy image: Ovis2_5ProcessingInfo.get_image_size_with_most_features is a hard-coded
// 1792 × 1792 ("max_pixels 1792 * 1792 hardcoded in original code"), which the processor's
// smart_resize (factor patch × hidden_stride = 32, min_pixels 448², max_pixels 1792², or
// --mm-processor-kwargs max_pixels / min_pixels) keeps or shrinks. 1792² is 112 × 112 = 12,544
// patches of 16², merged 2 × 2 into 3,136 visual tokens, plus the start and end indicators: 3,138
// embeddings (construct_visual_placeholders).
EncoderItem ovis25_image_item(const ModelSpec& model, const VllmFlags& flags);

// The dummy video vLLM may profile instead (get_supported_mm_limits: one video per prompt):
// get_num_frames_with_most_features fills the sequence with frames of the dummy image's size,
// counting get_num_image_tokens' patches of the 1792² size (not the merged tokens, not resized)
// per frame, so the video reaches max_model_len / 12,544 frames at 16-pixel patches. Each frame is its own attention sequence. nullopt when
// that is a single frame (then the video is no larger than the image) or video is limited to 0.
std::optional<EncoderItem> ovis25_video_item(const ModelSpec& model, const VllmFlags& flags, std::int64_t max_model_len);

// Bytes per visual token at the visual head's peak (ovis2_5.py VisualTokenizer.forward): the head
// (a bias-free linear to visual_vocab_size − 4, then a LayerNorm of that width) hands on its
// logits, and `torch.softmax(logits, dim=-1, dtype=torch.float32).to(logits.dtype)` holds the
// logits, their float32 softmax and its cast at once: (2 × dtype + 4) bytes per element. The
// head is a ReplicatedLinear, so TP does not split it.
double ovis25_head_bytes_per_token(const ModelSpec& model, double dtype_bytes);

}  // namespace headroom::engine
