// The largest dummy item of the multimodal families whose processors cut an image into tiles,
// crops or slices of a fixed size, or take fixed-size frames, as each vLLM model file builds it
// (get_image_size_with_most_features and the processor it runs the dummy through). The profile
// pass around them is encoder_profile.cc's.
#pragma once

#include <cstdint>

#include "engine/encoder_profile.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// Patches the tower adds to each image or tile besides its patches (CLIP's class token).
std::int64_t class_tokens(const VisionConfig& v);

EncoderItem llava_anyres_item(const ModelSpec& m);                               // LLaVA-NeXT, OneVision
EncoderItem phi3v_item(const ModelSpec& m, const VllmFlags& flags);              // Phi-3(.5)-vision
EncoderItem phi4mm_item(const ModelSpec& m, const VllmFlags& flags, bool first_phi4mm);             // Phi-4-multimodal
EncoderItem llama4_item(const ModelSpec& m);                                     // Llama 4
EncoderItem internvl_item(const ModelSpec& m, const VllmFlags& flags);           // InternVL
// InternVL's image, or from v0.9 its dummy video where the language model takes video and the
// video's frames outnumber the image's embeddings.
EncoderItem internvl_profiled_item(const ModelSpec& m, const VllmFlags& flags, const ResolvedSettings& s,
                                   const VllmVersion& version);
bool internvl_takes_video(const ModelSpec& m, const VllmVersion& version);
EncoderItem aya_item(const ModelSpec& m, const VllmFlags& flags);                // Aya Vision
EncoderItem molmo_item(const ModelSpec& m, const VllmFlags& flags);              // Molmo
// Molmo's ViT holds every block's output to the end of the pass: its peak bytes per patch.
double molmo_bytes_per_patch(const ModelSpec& m, int tp, double dtype_bytes);
EncoderItem llava_next_video_item(const ModelSpec& m, const ResolvedSettings& s, const VllmVersion& version);
EncoderItem idefics3_item(const ModelSpec& m);                                   // Idefics3, SmolVLM
EncoderItem deepseek_ocr_item();                                                 // DeepSeek-OCR
EncoderItem moonvit_item(const ModelSpec& m);                                    // Kimi-VL, Kimi-K2.5

// DeepSeek-OCR encodes its images one at a time: the peak bytes of one image's pass.
double deepseek_ocr_image_peak(double dtype_bytes);

// Gemma 3n (gemma3n_mm.py): a 768² image of 256 tokens through timm's MobileNetV5, and what one
// image adds to the batch's peak (the batch runs in one call).
EncoderItem gemma3n_item(const ModelSpec& m);
double gemma3n_image_peak(double dtype_bytes);

}  // namespace headroom::engine
