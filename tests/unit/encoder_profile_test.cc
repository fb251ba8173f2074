// The multimodal encoder's profile pass (src/engine/encoder_profile.cc): the dummy batch vLLM
// builds and when it builds none.
#include <algorithm>
#include <initializer_list>

#include <gtest/gtest.h>

#include "engine/encoder_profile.h"
#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_engine.h"
#include "unit/engine_test_support.h"
#include "unit/vision_configs.h"

namespace headroom {
namespace {

using test_support::model;

ResolvedSettings settings(int max_num_batched_tokens, int max_num_seqs = 256, std::int64_t max_model_len = 32768) {
  ResolvedSettings s;
  s.max_num_batched_tokens = max_num_batched_tokens;
  s.max_num_seqs = max_num_seqs;
  s.max_model_len = max_model_len;
  return s;
}

// vLLM logs for Qwen2.5-VL at its default processor: "Encoder cache will be initialized with a
// budget of 16384 tokens, and profiled with 1 image items of the maximum feature size." (the
// 3584 x 3584 image of max_pixels 12845056: 65536 patches of 14 x 14, merged 2 x 2).
// The sized batch of a profile: one item's embeddings and patches, the items, the encoder peak.
void expect_sized(const engine::EncoderProfile& p, std::int64_t tokens, std::int64_t patches, int items, Bytes peak) {
  EXPECT_FALSE(p.family_unsized);
  EXPECT_EQ(p.item.tokens, tokens);
  EXPECT_EQ(p.item.patches, patches);
  EXPECT_EQ(p.items, items);
  EXPECT_EQ(p.encoder_peak, peak);
}

// An audio pass's dummy batch: one item's embeddings and encoder positions, the budget, the items.
void expect_audio_batch(const engine::EncoderProfile& p, std::int64_t tokens, std::int64_t positions, std::int64_t budget,
                        int items) {
  EXPECT_EQ(p.item.modality, "audio");
  EXPECT_EQ(p.item.tokens, tokens);
  EXPECT_EQ(p.item.patches, positions);
  EXPECT_EQ(p.encoder_budget, budget);
  EXPECT_EQ(p.items, items);
}

// The profile at 8,192 batched tokens (v0.19) with the given modalities limited to 0.
engine::EncoderProfile profile_without(const ModelSpec& m, std::initializer_list<const char*> off) {
  VllmFlags f;
  for (const char* modality : off) f.limit_mm_per_prompt[modality] = 0;
  return engine::encoder_profile(m, f, settings(8192), {0, 19, 0}, 2.0, {});
}

// Qwen/Qwen2-Audio-7B-Instruct's config (Whisper-large-v3's encoder: 32 layers of 1,280, FFN
// 5,120, 20 heads, 1,500 positions). qwen2_audio.py: the dummy clip is chunk_length (30 s) x
// sampling_rate samples, 3,000 mel frames; the encoder runs 1,500 positions per clip and hands
// (1,500 - 2) / 2 + 1 = 750 embeddings on (get_mm_max_tokens_per_item). vLLM's budget is
// max_num_batched_tokens, so it profiles 8,192 / 750 = 10 clips (2,048: 2). The peak holds at least
// one layer's fc1 output and GELU for every clip, and stays below what a materialised attention
// matrix (20 heads x 1,500^2 per clip) would add, which neither SDPA nor flash attention keeps.
TEST(EncoderProfile, Qwen2AudioProfilesItsDummy30SecondClips) {
  auto m = parse_model_config_text(test_support::k_qwen2_audio_7b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const auto p = engine::encoder_profile(*m, {}, settings(8192, 256, 8192), {0, 11, 0}, 2.0, {});
  expect_audio_batch(p, 750, 1500, 8192, 10);
  EXPECT_GT(p.encoder_peak, Bytes{10} * 1500 * 2 * 5120 * 2);
  EXPECT_LT(p.encoder_peak, Bytes{10} * 20 * 1500 * 1500 * 2);
  EXPECT_EQ(engine::encoder_profile(*m, {}, settings(2048, 256, 8192), {0, 11, 0}, 2.0, {}).items, 2);
  // No pass: audio limited to 0 (text-only), --skip-mm-profiling, or the V0 engine.
  VllmFlags off;
  off.limit_mm_per_prompt["audio"] = 0;
  EXPECT_EQ(engine::encoder_profile(*m, off, settings(8192), {0, 11, 0}, 2.0, {}).items, 0);
  VllmFlags skip;
  skip.skip_mm_profiling = true;
  EXPECT_EQ(engine::encoder_profile(*m, skip, settings(8192), {0, 11, 0}, 2.0, {}).items, 0);
  EXPECT_EQ(engine::encoder_profile(*m, {}, settings(8192), {0, 6, 4}, 2.0, {}).items, 0);
  EXPECT_TRUE(engine::audio_pass_sized(*m, {0, 11, 0}));
}

// Qwen3-Omni-30B-A3B's thinker with images and video limited to 0 (qwen3_omni_moe_thinker.py):
// the dummy clip is 30 s, 3,000 mel frames; the budget counts Qwen2-Audio's 750 tokens a clip
// (Qwen2AudioProcessingInfo.get_mm_max_tokens_per_item, first among the thinker's processing-info
// bases), so 8,192 batched tokens hold 10 clips. Qwen3OmniMoeAudioEncoder hands over 390 embeddings
// a clip (_get_feat_extract_output_lengths(3000) = 30 x 13) and convolves the clips' 100-frame
// chunks (2 x n_window) conv_chunksize = 500 at a time: conv2d1's output and its GELU are 480
// channels x 64 mel rows x 50 frames in bfloat16 each, so 10 clips' 300 chunks peak at
// 2 x 300 x 3,072,000 bytes; 43 clips (32,768 tokens) convolve 500 of their 1,290 chunks at once.
TEST(EncoderProfile, Qwen3OmniConvolvesItsDummyClipsInChunks) {
  auto m = parse_model_config_text(test_support::k_qwen3_omni_30b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  VllmFlags audio_only;
  audio_only.limit_mm_per_prompt = {{"image", 0}, {"video", 0}};
  const auto p = engine::encoder_profile(*m, audio_only, settings(8192), {0, 19, 0}, 2.0, {});
  expect_audio_batch(p, 390, 390, 8192, 10);
  const Bytes conv1 = Bytes{480} * 64 * 50 * 2;
  EXPECT_GE(p.encoder_peak, Bytes{2} * 300 * conv1);
  EXPECT_LT(p.encoder_peak, Bytes{2} * 300 * conv1 + Bytes{100} * 1000 * 1000);
  // The other reading budgets the clip's own 390 tokens: 21 clips, 630 chunks, 500 convolved at once.
  EXPECT_GE(p.encoder_peak + p.other_reading, Bytes{2} * 500 * conv1);
  EXPECT_LT(p.encoder_peak + p.other_reading, Bytes{2} * 500 * conv1 + Bytes{200} * 1000 * 1000);
  const auto wide = engine::encoder_profile(*m, audio_only, settings(32768), {0, 19, 0}, 2.0, {});
  EXPECT_EQ(wide.items, 43);
  EXPECT_GE(wide.encoder_peak, Bytes{2} * 500 * conv1);
  EXPECT_LT(wide.encoder_peak, Bytes{2} * 500 * conv1 + Bytes{400} * 1000 * 1000);
  EXPECT_TRUE(engine::audio_pass_sized(*m, {0, 19, 0}));
  // Two clips a prompt still batch 10 (MultiModalBudget: the limit counts per prompt, times
  // max_num_seqs); audio at 0 is text only.
  audio_only.limit_mm_per_prompt["audio"] = 2;
  EXPECT_EQ(engine::encoder_profile(*m, audio_only, settings(8192), {0, 19, 0}, 2.0, {}).items, 10);
  audio_only.limit_mm_per_prompt["audio"] = 0;
  EXPECT_EQ(engine::encoder_profile(*m, audio_only, settings(8192), {0, 19, 0}, 2.0, {}).items, 0);
}

// MiniCPM-o 2.6: MiniCPM-V 2.6's config with the release's Whisper-medium audio_config (24 layers
// of 1,024, FFN 4,096, 16 heads, 80 mel bins) and audio_pool_step 2. minicpmo.py: the dummy audio
// is 30 one-second chunks, (50 - 2) / 2 + 1 = 25 tokens each, 750 a clip (at pool step 5, MiniCPM-o
// 4.5's, 10 each, 300). vLLM profiles the modality with the most tokens per item: the 16-frame
// dummy video (1,024) by default, the clip (750) over an image (10 slices x 64 = 640) once video is
// limited to 0. get_audio_hidden_states encodes the 10 clips of 8,192 batched tokens at 1,500
// positions each, under a bool and a bfloat16 [10, 1, 1,500, 1,500] mask, and WhisperEncoder keeps
// all 25 hidden states (24 layers' inputs and the output) of [10, 1,500, 1,024]; eager attention
// would add 16 heads' scores and softmax, 2 x 10 x 16 x 1,500^2 x 2 bytes.
TEST(EncoderProfile, MiniCpmOProfilesItsClipsWhenTheyOutrankAnImage) {
  std::string config = test_support::k_minicpm_v_2_6;
  config.replace(config.find("\"MiniCPMV\""), 10, "\"MiniCPMO\"");
  config.insert(config.rfind('}'), R"(, "audio_pool_step": 2, "audio_config": {"model_type": "whisper", "d_model": 1024,
      "encoder_layers": 24, "encoder_attention_heads": 16, "encoder_ffn_dim": 4096, "num_mel_bins": 80, "max_source_positions": 1500})");
  auto m = parse_model_config_text(config, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(profile_without(*m, {}).item.modality, "video");
  const auto p = profile_without(*m, {"video"});
  expect_audio_batch(p, 750, 1500, 8192, 10);
  const Bytes states = Bytes{25} * 10 * 1500 * 1024 * 2, mask = Bytes{10} * 1500 * 1500 * 3;
  EXPECT_GE(p.encoder_peak, states + mask);
  EXPECT_LE(p.encoder_peak, states + mask + Bytes{10} * 1500 * (2 * 1024 + 2 * 4096) * 2 + Bytes{10} * 80 * 3000 * 6);
  EXPECT_EQ(p.other_reading, Bytes{2} * 10 * 16 * 1500 * 1500 * 2);
  EXPECT_TRUE(engine::audio_pass_sized(*m, {0, 19, 0}));
  // Audio at 0 leaves the image; at pool step 5 the clip's 300 tokens do not outrank it.
  EXPECT_EQ(profile_without(*m, {"video", "audio"}).item.modality, "image");
  config.replace(config.find("\"audio_pool_step\": 2"), 20, "\"audio_pool_step\": 5");
  auto m45 = parse_model_config_text(config, "config.json");
  ASSERT_TRUE(m45) << m45.error().message;
  EXPECT_EQ(profile_without(*m45, {"video"}).item.modality, "image");
  EXPECT_EQ(profile_without(*m45, {"video", "image"}).item.tokens, 300);
}

// Phi-4-multimodal (phi4mm.py) with images limited to 0: the dummy clip is 241,000 samples,
// (241,000 - 400) / 160 + 1 = 1,504 frames of 80 features (get_audio_num_frames), 1,504 / 8 = 188
// tokens (_compute_audio_embed_size at compression 8, downsample 1), so 8,192 batched tokens hold
// 43 clips. _process_audio_input encodes them one at a time; the release's NeMo dw_striding
// subsampling opens with a Conv2d from 1 to 1,024 channels at stride 2 and a ReLU, each
// [1,024, 752, 40] in bfloat16: 2 x 61,603,840 bytes, beside all 43 clips' float32 features.
// With images allowed the image (far more tokens) is profiled.
TEST(EncoderProfile, Phi4MultimodalEncodesItsClipsOneAtATime) {
  auto m = parse_model_config_text(test_support::k_phi4_multimodal, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const auto p = profile_without(*m, {"image"});
  expect_audio_batch(p, 188, 188, 8192, 43);
  const Bytes first_stage = Bytes{2} * 1024 * 752 * 40 * 2, features = Bytes{43} * 1504 * 80 * 4;
  EXPECT_GE(p.encoder_peak, first_stage + features);
  EXPECT_LT(p.encoder_peak, first_stage + features + Bytes{64} * 1000 * 1000);
  EXPECT_TRUE(engine::audio_pass_sized(*m, {0, 19, 0}));
  EXPECT_EQ(profile_without(*m, {}).item.modality, "image");
}

// An Ultravox v0.5 config (Whisper-large-v3-turbo's encoder: 32 layers of 1,280, FFN 5,120;
// stack_factor 8; Llama-3.1-8B's 4,096-wide language model). ultravox.py (v0.11 on): the dummy
// audio is 16 x 30 s, split into 16 chunks of 1,500 encoder positions and ceil(1,500 / 8) = 188
// embeddings each: 3,008 per item. vLLM's budget is max(max_num_batched_tokens, 3,008): one item
// at 2,048, two at 8,192. The encoder runs 16 chunks at a time, so the peak holds one layer's fc1
// output and GELU for 16 chunks, and a second item adds its mel features and embeddings but not a
// second batch of activations.
TEST(EncoderProfile, UltravoxProfilesSixteenChunksAtATime) {
  auto m = parse_model_config_text(test_support::k_ultravox_v05_8b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const auto one = engine::encoder_profile(*m, {}, settings(2048), {0, 11, 0}, 2.0, {});
  expect_audio_batch(one, 3008, 24000, 3008, 1);
  const Bytes batch_layer = Bytes{16} * 1500 * 2 * 5120 * 2;
  EXPECT_GT(one.encoder_peak, batch_layer);
  const auto two = engine::encoder_profile(*m, {}, settings(8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(two.items, 2);
  EXPECT_GT(two.encoder_peak, one.encoder_peak);
  EXPECT_LT(two.encoder_peak - one.encoder_peak, batch_layer);
  EXPECT_TRUE(engine::audio_pass_sized(*m, {0, 11, 0}));
  // Before v0.11 the file is not checked: no pass is sized and the range keeps its allowance.
  EXPECT_EQ(engine::encoder_profile(*m, {}, settings(2048), {0, 10, 2}, 2.0, {}).items, 0);
  EXPECT_FALSE(engine::audio_pass_sized(*m, {0, 10, 2}));
}

// Voxtral Mini's config (its Whisper encoder: 32 layers of 1,280, 20 heads, 1,500 positions).
// voxtral.py (the file read, v0.15 on): the dummy audio is max_model_len tokens of audio, padded
// to 30 s chunks of 375 tokens: at 32,768, ceil(32,768 / 375) = 88 chunks, 33,000 tokens and
// 132,000 encoder positions, one item (the budget is max_model_len). VoxtralEncoderModel runs every
// chunk at once, so the peak holds one layer's fc1 output and GELU for all 88 chunks; at 8,192 it
// is 22 chunks.
TEST(EncoderProfile, VoxtralEncodesEveryChunkOfItsMaxModelLenDummyAtOnce) {
  auto m = parse_model_config_text(R"({"architectures": ["VoxtralForConditionalGeneration"], "model_type": "voxtral",
    "audio_config": {"model_type": "voxtral_encoder", "hidden_size": 1280, "intermediate_size": 5120, "num_hidden_layers": 32,
      "num_attention_heads": 20, "num_mel_bins": 128, "max_source_positions": 1500},
    "text_config": {"model_type": "llama", "hidden_size": 3072, "intermediate_size": 8192, "num_attention_heads": 32,
      "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 30, "vocab_size": 131072, "max_position_embeddings": 131072}})",
                                   "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const auto p = engine::encoder_profile(*m, {}, settings(2048, 256, 32768), {0, 15, 0}, 2.0, {});
  expect_audio_batch(p, 33000, 132000, 32768, 1);
  EXPECT_GT(p.encoder_peak, Bytes{88} * 1500 * 2 * 5120 * 2);
  const auto shorter = engine::encoder_profile(*m, {}, settings(2048, 256, 8192), {0, 15, 0}, 2.0, {});
  EXPECT_EQ(shorter.item.patches, 22 * 1500);
  EXPECT_LT(shorter.encoder_peak, p.encoder_peak / 3);
  EXPECT_TRUE(engine::audio_pass_sized(*m, {0, 15, 0}));
  EXPECT_EQ(engine::encoder_profile(*m, {}, settings(2048, 256, 32768), {0, 14, 0}, 2.0, {}).items, 0);
  EXPECT_FALSE(engine::audio_pass_sized(*m, {0, 14, 0}));
  // A hostile config's 3 positions per chunk (under the 4 x downsampling) sizes a pass, no division by zero.
  m->audio->max_source_positions = 3;
  EXPECT_EQ(engine::encoder_profile(*m, {}, settings(2048, 256, 32768), {0, 15, 0}, 2.0, {}).items, 1);
}

// Qwen2.5-Omni with images and video limited to 0: vLLM profiles the audio encoder on the thinker's
// dummy clip, min(chunk_length, 30) s: 3,000 mel frames, 1,500 positions, 750 embeddings, 10 clips
// at a budget of 8,192. transformers' Qwen2_5OmniAudioEncoder attends within 100-position chunks
// but, outside flash-attention-2, builds one additive mask over the whole batch: 15,000² x 2 bytes.
// With images allowed the image is what vLLM profiles.
TEST(EncoderProfile, Qwen25OmniProfilesItsAudioWhenImagesAndVideoAreOff) {
  auto m = parse_model_config_text(test_support::k_qwen2_5_omni_7b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  VllmFlags audio_only;
  audio_only.limit_mm_per_prompt["image"] = 0;
  audio_only.limit_mm_per_prompt["video"] = 0;
  const auto p = engine::encoder_profile(*m, audio_only, settings(8192, 256, 8192), {0, 11, 0}, 2.0, {});
  expect_audio_batch(p, 750, 1500, 8192, 10);
  EXPECT_GT(p.encoder_peak, Bytes{15000} * 15000 * 2 + Bytes{15000} * 2 * 5120 * 2);
  EXPECT_TRUE(engine::audio_pass_sized(*m, {0, 11, 0}));
  EXPECT_EQ(engine::encoder_profile(*m, {}, settings(8192, 256, 8192), {0, 11, 0}, 2.0, {}).item.modality, "image");
}

TEST(EncoderProfile, Qwen25VlProfilesOneLargestImage) {
  // At max_model_len 16384 the dummy video is one image's worth (two frames, one temporal slice):
  // vLLM profiles the image (qwen2_vl_video.h for longer lengths).
  auto p = engine::encoder_profile(model("Qwen/Qwen2.5-VL-7B-Instruct"), {}, settings(8192, 256, 16384), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(p.item.modality, "image");
  EXPECT_EQ(p.item.tokens, 16384);
  EXPECT_EQ(p.item.patches, 65536);
  EXPECT_EQ(p.encoder_budget, 16384);
  EXPECT_EQ(p.items, 1);
  EXPECT_GT(p.encoder_peak, 0);
}

// Qwen3-VL's encoder output is the merged features and one copy per deepstack level side by side
// (qwen3_vl.py: out_hidden_size × (1 + len(deepstack_visual_indexes)), 2048 × 4 for the 30B-A3B),
// and the encoder cache holds it through the language model's dummy run: one 16,384-token image
// (the v0.13 H100 NVL log: "budget 16384 tokens, 1 image item") caches 16,384 × 8,192 × 2 bytes.
TEST(EncoderProfile, Qwen3VlCachesItsDeepstackFeaturesToo) {
  const ModelSpec m = model("Qwen/Qwen3-VL-30B-A3B-Instruct");
  ASSERT_TRUE(m.vision);
  ASSERT_EQ(m.vision->deepstack_layers, 3);
  auto p = engine::encoder_profile(m, {}, settings(8192), {0, 13, 0}, 2.0, {});
  EXPECT_EQ(p.items, 1);
  EXPECT_EQ(p.item.tokens, 16384);
  EXPECT_EQ(p.cached_outputs, Bytes{16384} * 2048 * 4 * 2);
}

// Before v0.13 vLLM's qwen3_vl.py counted 12.5 tokens per video embedding, so the video
// outranked the image: vLLM 0.11.0 logged for Qwen3-VL-30B-A3B at max_model_len 65536 "Encoder
// cache will be initialized with a budget of 153600 tokens, and profiled with 1 video items".
// The dummy video is 24,576 frames (the cap) shrunk to 32 × 32 pixels by the 25,165,824-pixel
// video budget: 12,288 embeddings. In v0.11 profile_run padded the item's output to the whole
// budget and kept the output too; v0.12 padded it to the item's 153,600 tokens; from v0.13 the
// budget counts embeddings and the image (16,384, the v0.13.0 log) is profiled.
TEST(EncoderProfile, Qwen3VlBeforeV013ProfilesTheVideoAndPadsItsOutput) {
  const ModelSpec m = model("Qwen/Qwen3-VL-30B-A3B-Instruct");
  const Bytes row = Bytes{2048} * 4 * 2;  // out_hidden_size × (1 + 3 deepstack levels), bf16
  auto v011 = engine::encoder_profile(m, {}, settings(8192, 256, 65536), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(v011.item.modality, "video");
  EXPECT_EQ(v011.encoder_budget, 153600);
  EXPECT_EQ(v011.items, 1);
  EXPECT_EQ(v011.item.tokens, 12288);
  EXPECT_EQ(v011.item.patches, 12288 * 4);
  EXPECT_EQ(v011.cached_outputs, (153600 + 12288) * row);
  auto v012 = engine::encoder_profile(m, {}, settings(2048, 256, 65536), {0, 12, 0}, 2.0, {});
  EXPECT_EQ(v012.encoder_budget, 153600);
  EXPECT_EQ(v012.cached_outputs, (153600 + 12288) * row);
  auto v013 = engine::encoder_profile(m, {}, settings(8192, 256, 65536), {0, 13, 0}, 2.0, {});
  EXPECT_EQ(v013.item.modality, "image");
  EXPECT_EQ(v013.encoder_budget, 16384);
  EXPECT_EQ(v013.cached_outputs, 16384 * row);
  // Video off: the image again, as vLLM picks among the modalities left.
  VllmFlags images_only;
  images_only.limit_mm_per_prompt = {{"video", 0}};
  EXPECT_EQ(engine::encoder_profile(m, images_only, settings(8192, 256, 65536), {0, 11, 0}, 2.0, {}).item.modality, "image");
  // Below max_model_len 16,200 vLLM's frame search stops at 2 frames of 3520 × 3520 pixels.
  auto short_context = engine::encoder_profile(m, {}, settings(8192, 256, 8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(short_context.item.tokens, 12100);
  EXPECT_EQ(short_context.encoder_budget, 151250);
}

// #25810 (v0.11) padded every dummy item to the encoder budget, which #29386 took back to the
// item's own tokens ("OOM when profiling multimodal model with multiple images", vLLM 0.11.0):
// Gemma 3's 32 images of 256 tokens under an 8,192-token budget.
TEST(EncoderProfile, V011PadsEveryItemToTheBudget) {
  const ModelSpec m = model("google/gemma-3-12b-it");
  const Bytes row = Bytes{m.hidden_size} * 2;
  auto v011 = engine::encoder_profile(m, {}, settings(8192), {0, 11, 2}, 2.0, {});
  EXPECT_EQ(v011.items, 32);
  EXPECT_EQ(v011.cached_outputs, 32 * (8192 + 256) * row);
  auto v012 = engine::encoder_profile(m, {}, settings(8192), {0, 12, 0}, 2.0, {});
  EXPECT_EQ(v012.cached_outputs, 32 * 256 * row);
}

// Llama 4 (mllama4.py): the largest image is one 336-pixel tile wide and max_patches (16) tiles
// tall, cut into 16 tiles and a global one; each tile is 24 × 24 patches and a class token in the
// encoder and 144 tokens (576 / (1 / 0.5²)) in the language model.
TEST(EncoderProfile, Llama4ProfilesSeventeenTiles) {
  auto p = engine::encoder_profile(model("meta-llama/Llama-4-Scout-17B-16E-Instruct"), {}, settings(8192), {0, 19, 0}, 2.0, {});
  EXPECT_EQ(p.item.tokens, 17 * 144);
  EXPECT_EQ(p.item.patches, 17 * 577);
  EXPECT_EQ(p.items, 8192 / (17 * 144));
}

// Aya Vision (aya_vision.py, transformers' GotOcr2 tiling): the dummy image is 364 x 12 pixels
// square; get_optimal_tiled_canvas gives it the 3 x 3 grid (the largest square grid within
// max_patches 12) and get_num_patches adds the thumbnail: 10 tiles of 26² = 676 patches, each its
// own sequence in SigLIP, and 13² = 169 embeddings per tile after the 2 x 2 pixel shuffle (1,690).
// An 8,192-token budget fits 4 such images. max_patches 4 (preprocessor_config.json, or
// --mm-processor-kwargs, with which vLLM builds the image processor) gives the 2 x 2 grid and the
// thumbnail; max_patches 1 one tile and no thumbnail.
TEST(EncoderProfile, AyaVisionProfilesTenTilesPerImage) {
  auto m = parse_model_config_text(test_support::k_aya_vision_8b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  auto p = engine::encoder_profile(*m, {}, settings(8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(p.item.modality, "image");
  EXPECT_EQ(p.item.patches, 6760);
  EXPECT_EQ(p.item.attention_span, 676);
  EXPECT_EQ(p.item.tokens, 1690);
  EXPECT_EQ(p.items, 4);
  m->vision->max_tiles = 4;
  auto four = engine::encoder_profile(*m, {}, settings(8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(four.item.patches, 5 * 676);
  EXPECT_EQ(four.item.tokens, 5 * 169);
  VllmFlags one;
  one.mm_processor_kwargs = R"({"max_patches": 1})";
  auto single = engine::encoder_profile(*m, one, settings(8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(single.item.patches, 676);
  EXPECT_EQ(single.item.tokens, 169);
}

// MiniCPM-V 2.6 (minicpmv.py, the release's image processor). The dummy image is 448 x 4032
// (max_slice_num absent: 9); slice_image makes one column of 9 crops of 448² (32² = 1,024 patches)
// and the source image resized to 154 x 1344 (find_best_resize: int(448 x 3) = 1344 tall,
// int(1344 / 9) = 149 wide, rounded to 11 patches: 1,056). The tower sees 10 slices padded to 1,056
// and the resampler hands on 64 per slice: 640. The dummy video is 16 frames (the cap, for any
// max_model_len from 640 + 16 x 64) of one 448² slice each: 1,024 embeddings, so vLLM profiles
// video, 8 videos in an 8,192-token budget. From v0.13 the budget counts embeddings; before, the
// placeholders (image id 3, <image>/</image> around each slice's 64, 8 newlines: 671; 66 per
// frame: 1,056), so 7 videos. With video at 0: 12 images.
TEST(EncoderProfile, MiniCpmVProfilesSixteenFrameVideosOrTenSliceImages) {
  auto m = parse_model_config_text(test_support::k_minicpm_v_2_6, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  auto video = engine::encoder_profile(*m, {}, settings(8192), {0, 13, 0}, 2.0, {});
  EXPECT_EQ(video.item.modality, "video");
  EXPECT_EQ(video.item.patches, 16 * 1024);
  EXPECT_EQ(video.item.attention_span, 1024);
  EXPECT_EQ(video.item.tokens, 1024);
  EXPECT_EQ(video.items, 8);
  auto v011 = engine::encoder_profile(*m, {}, settings(8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(v011.item.budget_tokens, 1056);
  EXPECT_EQ(v011.items, 7);
  VllmFlags images;
  images.limit_mm_per_prompt["video"] = 0;
  auto image = engine::encoder_profile(*m, images, settings(8192), {0, 13, 0}, 2.0, {});
  EXPECT_EQ(image.item.modality, "image");
  EXPECT_EQ(image.item.patches, 10 * 1056);
  EXPECT_EQ(image.item.attention_span, 1056);
  EXPECT_EQ(image.item.tokens, 640);
  EXPECT_EQ(image.items, 12);
  auto image011 = engine::encoder_profile(*m, images, settings(8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(image011.item.budget_tokens, 671);
  // A release without video (MiniCPM-Llama3-V 2.5 writes version 2.5, query_num 96) profiles images.
  m->vision->family_version = 2.5;
  m->vision->resampler_queries = 96;
  auto v25 = engine::encoder_profile(*m, {}, settings(8192), {0, 13, 0}, 2.0, {});
  EXPECT_EQ(v25.item.modality, "image");
  EXPECT_EQ(v25.item.tokens, 960);
}

// A hostile MiniCPM-V config (65,536-pixel slices of 1-pixel patches and a tower 2^20 wide, each
// within the bound read at the edge) gives a dummy item of 4.4 trillion patches of 8 MiB each: its
// bytes are clamped before they become integers (1e18), where they overflowed before.
TEST(EncoderProfile, HostileSliceSizesAreClampedNotOverflowed) {
  auto m = parse_model_config_text(R"({"architectures": ["MiniCPMV"], "model_type": "minicpmv", "version": 2.6,
    "hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28, "num_key_value_heads": 4,
    "num_hidden_layers": 28, "vocab_size": 151666, "max_position_embeddings": 32768,
    "image_size": 65536, "query_num": 64, "max_slice_num": 1024,
    "vision_config": {"hidden_size": 1048576, "image_size": 980, "intermediate_size": 1048576, "model_type": "siglip",
      "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 1}})",
                                   "config.json");
  ASSERT_TRUE(m) << m.error().message;
  VllmFlags images;
  images.limit_mm_per_prompt["video"] = 0;
  auto p = engine::encoder_profile(*m, images, settings(8192), {0, 13, 0}, 2.0, {});
  EXPECT_EQ(p.item.modality, "image");
  EXPECT_GT(p.encoder_peak, 0);
  EXPECT_LE(static_cast<double>(p.encoder_peak), 1e18);
  EXPECT_LE(static_cast<double>(p.cached_outputs), 1e18);
}

// LLaVA-NeXT-Video-7B (llava_next_video.py): video only; a frame is CLIP's 24² patches and the
// class token, pooled at spatial_pool_stride 2 to 12² = 144 tokens; the dummy video has the most
// frames within max_model_len: 4096 / 144 = 28 frames, 4,032 tokens and 28 x 577 patches, 2 such
// videos in an 8,192-token budget. Before v0.11 the profiled dummy was built at
// max_num_batched_tokens (2048: 14 frames) while the budget still counts 4,032 per video.
TEST(EncoderProfile, LlavaNextVideoProfilesAsManyPooledFramesAsFit) {
  auto m = parse_model_config_text(R"({"architectures": ["LlavaNextVideoForConditionalGeneration"],
    "model_type": "llava_next_video", "spatial_pool_stride": 2, "spatial_pool_mode": "average", "torch_dtype": "bfloat16",
    "vision_feature_layer": -2, "vision_feature_select_strategy": "default", "image_grid_pinpoints": [[336, 672]],
    "text_config": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32,
      "num_key_value_heads": 32, "num_hidden_layers": 32, "vocab_size": 32064, "max_position_embeddings": 4096},
    "vision_config": {"model_type": "clip_vision_model", "hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
      "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": 14, "projection_dim": 768}})",
                                   "config.json");
  ASSERT_TRUE(m) << m.error().message;
  auto v011 = engine::encoder_profile(*m, {}, settings(8192, 256, 4096), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(v011.item.modality, "video");
  EXPECT_EQ(v011.item.tokens, 28 * 144);
  EXPECT_EQ(v011.item.patches, 28 * 577);
  EXPECT_EQ(v011.item.attention_span, 577);
  EXPECT_EQ(v011.items, 2);
  auto v010 = engine::encoder_profile(*m, {}, settings(2048, 256, 4096), {0, 10, 1}, 2.0, {});
  EXPECT_EQ(v010.item.patches, 14 * 577);
  EXPECT_EQ(v010.item.budget_tokens, 28 * 144);
  EXPECT_EQ(v010.items, 1);
  VllmFlags off;
  off.limit_mm_per_prompt["video"] = 0;
  EXPECT_EQ(engine::encoder_profile(*m, off, settings(8192, 256, 4096), {0, 11, 0}, 2.0, {}).items, 0);
}

// GLM-4.1V (glm4_1v.py with transformers' Glm4v processors; patch 14, merge 2, temporal 2).
// v0.14-v0.15: the dummy image is the square _get_vision_info gives at 16 frames under 47,040,000
// pixels, 1708² (61 x 28), which the image processor keeps (2 x 1708² is under 9,633,792):
// 122² = 14,884 patches, 3,721 tokens; vLLM's estimate for it counts 16 frames under 9,633,792,
// 5,832. At max_model_len 65536 the video's room (65536 - 5832) holds the 600-frame cap (the token
// curve peaks at 33,489), and the video processor resizes 600 frames of 1708² into 47,040,000
// pixels: sqrt(47,040,000 / 600) = 280, grid (300, 20, 20), 120,000 patches, 30,000 tokens, one
// per 30,000-token budget. At 8192 the video's room (2,360) holds no frame, so its dummy is two
// frames, 3,721 tokens like the image: vLLM's tie-break decides, and the video it would profile
// alone at 8192 (4 frames kept at 1708²: grid (2, 122, 122), 29,768 patches) is the other reading.
// From v0.16 (#34483) the image is the square at one frame under 9,633,792: 2184², 24,336 patches,
// 6,084 tokens. From v0.26 (#48729) the frame search takes the most tokens within the room, over
// 2 to 600 frames, under the video processor's own budget: at 65536 that is 11 frames (31,974
// tokens; 9 frames give 30,420 and 10 only 29,645, the curve is not monotonic), resized to 2044²
// (grid (6, 146, 146): 127,896 patches, 21,316 per frame pair) — the 11 frames #48729's startup
// table reports for GLM-4.1V-9B-Thinking. At 16384 the budget's room (10,300) holds only the
// 2-frame video, tied with the image: the image is the estimate, and the video vLLM would build
// alone at 16384 (3 frames, grid (2, 156, 156), 48,672 patches) the other reading. Before v0.14
// the pass is not sized.
TEST(EncoderProfile, Glm4vProfilesItsVideoOrImageByRelease) {
  auto m = parse_model_config_text(test_support::k_glm_4_1v, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  auto longest = engine::encoder_profile(*m, {}, settings(8192, 256, 65536), {0, 14, 0}, 2.0, {});
  EXPECT_EQ(longest.item.modality, "video");
  EXPECT_EQ(longest.item.patches, 120000);
  EXPECT_EQ(longest.item.tokens, 30000);
  EXPECT_EQ(longest.item.attention_span, 400);
  EXPECT_EQ(longest.items, 1);
  auto tie = engine::encoder_profile(*m, {}, settings(8192, 256, 8192), {0, 14, 0}, 2.0, {});
  EXPECT_EQ(tie.item.modality, "image");
  EXPECT_EQ(tie.item.patches, 14884);
  EXPECT_EQ(tie.item.tokens, 3721);
  EXPECT_EQ(tie.items, 2);
  EXPECT_NEAR(static_cast<double>(tie.other_reading), static_cast<double>(tie.encoder_peak) * (29768.0 / 14884 - 1), 4.0);
  auto v016 = engine::encoder_profile(*m, {}, settings(8192, 256, 8192), {0, 16, 0}, 2.0, {});
  EXPECT_EQ(v016.item.patches, 24336);
  EXPECT_EQ(v016.item.tokens, 6084);
  EXPECT_EQ(v016.items, 1);
  EXPECT_EQ(v016.other_reading, 0);
  VllmFlags images;
  images.limit_mm_per_prompt["video"] = 0;
  EXPECT_EQ(engine::encoder_profile(*m, images, settings(8192, 256, 65536), {0, 14, 0}, 2.0, {}).item.patches, 14884);
  EXPECT_TRUE(engine::encoder_profile(*m, {}, settings(8192, 256, 65536), {0, 13, 0}, 2.0, {}).family_unsized);
  auto v026 = engine::encoder_profile(*m, {}, settings(8192, 256, 65536), {0, 26, 0}, 2.0, {});
  EXPECT_FALSE(v026.family_unsized);
  EXPECT_EQ(v026.item.modality, "video");
  EXPECT_EQ(v026.item.tokens, 31974);
  EXPECT_EQ(v026.item.patches, 127896);
  EXPECT_EQ(v026.item.attention_span, 21316);
  auto v026_tie = engine::encoder_profile(*m, {}, settings(8192, 256, 16384), {0, 26, 0}, 2.0, {});
  EXPECT_EQ(v026_tie.item.modality, "image");
  EXPECT_NEAR(static_cast<double>(v026_tie.other_reading), static_cast<double>(v026_tie.encoder_peak) * (48672.0 / 24336 - 1), 4.0);
}

// GLM-4.6V-Flash writes a video budget of 100,352,000 pixels (video_preprocessor_config.json); from
// v0.26 the search uses it: at 131072 the most tokens come at 21 frames of 2184² (grid (11, 156,
// 156): 267,696 patches, 66,924 tokens), the 21 frames #48729 reports for that model.
TEST(EncoderProfile, Glm46vFlashSearchesUnderItsOwnVideoBudget) {
  auto m = parse_model_config_text(test_support::k_glm_4_1v, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  m->vision->video_max_pixels = 100352000;
  auto p = engine::encoder_profile(*m, {}, settings(8192, 256, 131072), {0, 26, 0}, 2.0, {});
  EXPECT_EQ(p.item.modality, "video");
  EXPECT_EQ(p.item.tokens, 66924);
  EXPECT_EQ(p.item.patches, 267696);
}

// Idefics3 (idefics3.py): the 364² dummy is scaled to the processor's 1456-pixel longest edge and
// split into 4 x 4 tiles of 364² and the global image: 17 SigLIP sequences of 26² = 676 patches,
// 169 embeddings each after the 2 x 2 pixel shuffle (2,873 per image): 2 images in an 8,192-token
// budget, 5 in 16,384. SmolVLM writes scale_factor 3 over 384-pixel tiles: 27² = 729 patches, 81
// embeddings per tile, 1,377 per image.
TEST(EncoderProfile, Idefics3AndSmolVlmProfileSeventeenTiles) {
  auto m = parse_model_config_text(test_support::k_idefics3_8b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  auto p = engine::encoder_profile(*m, {}, settings(8192), {0, 13, 0}, 2.0, {});
  EXPECT_EQ(p.item.patches, 17 * 676);
  EXPECT_EQ(p.item.attention_span, 676);
  EXPECT_EQ(p.item.tokens, 2873);
  EXPECT_EQ(p.items, 2);
  EXPECT_EQ(engine::encoder_profile(*m, {}, settings(16384), {0, 13, 0}, 2.0, {}).items, 5);
  m->architecture = "SmolVLMForConditionalGeneration";
  m->vision->image_size = 384;
  m->vision->pixel_shuffle_ratio = 1.0 / 3;
  auto smol = engine::encoder_profile(*m, {}, settings(8192), {0, 13, 0}, 2.0, {});
  EXPECT_EQ(smol.item.patches, 17 * 729);
  EXPECT_EQ(smol.item.tokens, 1377);
  EXPECT_EQ(smol.items, 5);
}

// PaddleOCR-VL (paddleocr_vl.py): the dummy is Qwen2-VL's smart_resize square under the release's
// max_pixels 2,822,400 (60 x 28 = 1680 pixels: 120² = 14,400 patches, 3,600 tokens after the 2 x 2
// merge): 2 images in an 8,192-token budget, 4 in 16,384. encode_image runs one image per call, so
// the peak is one image's whatever the batch.
TEST(EncoderProfile, PaddleOcrVlEncodesOneImageAtATime) {
  auto m = parse_model_config_text(test_support::k_paddleocr_vl, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  auto two = engine::encoder_profile(*m, {}, settings(8192), {0, 13, 0}, 2.0, {});
  EXPECT_EQ(two.item.modality, "image");
  EXPECT_EQ(two.item.patches, 14400);
  EXPECT_EQ(two.item.tokens, 3600);
  EXPECT_EQ(two.items, 2);
  auto four = engine::encoder_profile(*m, {}, settings(16384), {0, 13, 0}, 2.0, {});
  EXPECT_EQ(four.items, 4);
  EXPECT_EQ(four.encoder_peak, two.encoder_peak);
  EXPECT_EQ(four.units_per_forward, 1);
}

// Phi-4-multimodal (phi4mm.py; its config has no vision_config: the SigLIP-so400m settings are
// fixed in the model file, the crops the size of embd_layer.image_embd_layer.crop_size). The dummy
// image is 448 wide and dynamic_hd (36 in the release's preprocessor_config.json) crops tall: SigLIP
// encodes 36 + 1 crops of 32² = 1,024 patches (37,888), and _compute_num_image_tokens gives
// 37 × 16² + 1 + 37 × 16 = 10,065 embeddings: one image, the budget raised to it at 8,192 tokens.
// dynamic_hd 16 (vLLM's examples pass it in mm_processor_kwargs): 17 crops, 4,625 embeddings.
// Before v0.9 the first phi4mm.py hard-coded DYNAMIC_HD = 16 (a 448 x 7168 dummy) and chose
// images over audio by their tokens (4,625 against 188): 17 crops. Images limited to 0 leave the speech encoder (its audio_processor is read), so the
// model is not text-only until audio is limited to 0 too.
TEST(EncoderProfile, Phi4MultimodalProfilesThirtySevenCropsOfOneImage) {
  auto m = parse_model_config_text(test_support::k_phi4_multimodal, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->vision && m->audio);
  EXPECT_EQ(m->vision->depth, 26);
  EXPECT_EQ(m->audio->layers, 24);
  auto p = engine::encoder_profile(*m, {}, settings(8192), {0, 10, 1}, 2.0, {});
  EXPECT_EQ(p.item.modality, "image");
  EXPECT_EQ(p.item.patches, 37888);
  EXPECT_EQ(p.item.attention_span, 1024);
  EXPECT_EQ(p.item.tokens, 10065);
  EXPECT_EQ(p.items, 1);
  EXPECT_GT(p.encoder_peak, 0);
  VllmFlags sixteen;
  sixteen.mm_processor_kwargs = R"({"dynamic_hd": 16})";
  auto q = engine::encoder_profile(*m, sixteen, settings(8192), {0, 10, 1}, 2.0, {});
  EXPECT_EQ(q.item.patches, 17408);
  EXPECT_EQ(q.item.tokens, 4625);
  auto first = engine::encoder_profile(*m, {}, settings(8192), {0, 8, 5}, 2.0, {});
  EXPECT_FALSE(first.family_unsized);
  EXPECT_EQ(first.item.patches, 17408);
  EXPECT_EQ(first.item.tokens, 4625);
  VllmFlags no_images;
  no_images.limit_mm_per_prompt = {{"image", 0}};
  EXPECT_FALSE(engine::text_only_mode(*m, no_images));
  no_images.limit_mm_per_prompt["audio"] = 0;
  EXPECT_TRUE(engine::text_only_mode(*m, no_images));
  // Weights derived from this config lay the speech encoder out; a config whose subsampling is a
  // Conv1d stack (not laid out) says the encoder is left out.
  GpuSetup g;
  g.gpu = *GpuCatalog::builtin().find("RTX 4090");
  const auto says_left_out = [&](const ModelSpec& spec) {
    auto pred = predict(spec, g, {}, VllmVersion{0, 10, 1});
    EXPECT_TRUE(pred) << pred.error().message;  // a failed prediction must not pass as "no note"
    return pred && std::any_of(pred->notes.begin(), pred->notes.end(),
                               [](const std::string& n) { return n.find("speech encoder") != std::string::npos; });
  };
  EXPECT_FALSE(says_left_out(*m));
  ModelSpec conv1d = *m;
  conv1d.audio->conformer->laid_out = false;
  EXPECT_TRUE(says_left_out(conv1d));
}

// DeepSeek-OCR (deepseek_ocr.py, fixed processor settings): the 1280² dummy is 2 x 2 tiles of 640²
// and a 1024² global view: SAM sees 64² + 4 x 40² = 10,496 patches, and the image hands on 16 x 17
// + 20 x 21 + 1 = 693 embeddings; 11 images in an 8,192-token budget at max_model_len 8192. The
// images are encoded one at a time, so the peak does not grow with the batch.
TEST(EncoderProfile, DeepseekOcrEncodesOneImageOfTilesAtATime) {
  auto m = parse_model_config_text(test_support::k_deepseek_ocr, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  auto p = engine::encoder_profile(*m, {}, settings(8192, 256, 8192), {0, 13, 0}, 2.0, {});
  EXPECT_EQ(p.item.patches, 10496);
  EXPECT_EQ(p.item.tokens, 693);
  EXPECT_EQ(p.items, 11);
  EXPECT_GT(p.encoder_peak, 0);
  EXPECT_EQ(engine::encoder_profile(*m, {}, settings(16384, 256, 16384), {0, 13, 0}, 2.0, {}).encoder_peak, p.encoder_peak);
}

// Gemma 3n (gemma3n_mm.py): 256 tokens per image against 188 per audio clip, so images are
// profiled: 32 in an 8,192-token budget, 8 in 2,048, all through timm's MobileNetV5 in one call, so
// the peak grows with the batch (the 768² image size is the processor's, which the config does not
// state). Per image it is taken at stage 1's first expansion: 768 channels at 192² twice and the
// 128-channel input, and the pixels (2 x (2 x 768 x 192² + 128 x 192² + 3 x 768²) bytes in bf16).
TEST(EncoderProfile, Gemma3nProfilesItsImagesThroughMobileNetInOneCall) {
  auto m = parse_model_config_text(R"({"architectures": ["Gemma3nForConditionalGeneration"], "model_type": "gemma3n",
    "text_config": {"model_type": "gemma3n_text", "hidden_size": 2048, "intermediate_size": 8192, "num_attention_heads": 8,
      "num_key_value_heads": 2, "head_dim": 256, "num_hidden_layers": 30, "vocab_size": 262400,
      "max_position_embeddings": 32768},
    "vision_config": {"model_type": "gemma3n_vision", "architecture": "mobilenetv5_300m_enc", "hidden_size": 2048}})",
                                   "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->image_size, 768);
  auto p = engine::encoder_profile(*m, {}, settings(8192), {0, 13, 0}, 2.0, {});
  EXPECT_EQ(p.item.tokens, 256);
  EXPECT_EQ(p.items, 32);
  const double per_image = 2.0 * (2.0 * 768 * 192 * 192 + 128.0 * 192 * 192 + 3.0 * 768 * 768);
  EXPECT_NEAR(static_cast<double>(p.encoder_peak), 32 * per_image, 64.0);
  EXPECT_EQ(engine::encoder_profile(*m, {}, settings(2048), {0, 13, 0}, 2.0, {}).items, 8);
}

// Kimi-VL (kimi_vl.py): the 1024 × 1024 dummy image has 73² patches of 14 pixels, over the 4,096
// in_token_limit, so it is scaled to 897 pixels, padded to 924 (whole 2 × 2 kernels of 14) and
// merged to 33 × 33 tokens.
TEST(EncoderProfile, KimiVlScalesItsDummyImageUnderTheTokenLimit) {
  auto p = engine::encoder_profile(model("moonshotai/Kimi-VL-A3B-Instruct"), {}, settings(8192), {0, 19, 0}, 2.0, {});
  EXPECT_EQ(p.item.tokens, 33 * 33);
  EXPECT_EQ(p.item.patches, 66 * 66);
  EXPECT_EQ(p.items, 8192 / (33 * 33));
}

// Kimi-K2.5 (kimi_k25.py with the release's media_utils.navit_resize_image): the 3000 x 3000 dummy
// image has 214² patches of 14, so it is scaled by sqrt(16384 / 214²) to 1794 pixels, padded to
// 1820 (whole 2 x 2 kernels of 14): 130² = 16,900 patches, 4,225 tokens of the one modality
// "vision_chunk". An 8,192-token budget holds one, 16,384 three.
TEST(EncoderProfile, KimiK25ScalesItsDummyImageUnderItsPatchLimit) {
  auto m = parse_model_config(nlohmann::json::parse(R"({
    "architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25",
    "text_config": {"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61,
                    "num_attention_heads": 64, "intermediate_size": 18432, "vocab_size": 163840},
    "vision_config": {"vt_num_hidden_layers": 27, "vt_hidden_size": 1152, "vt_intermediate_size": 4304,
                      "vt_num_attention_heads": 16, "patch_size": 14, "merge_kernel_size": [2, 2]}})"),
                              "config.json");
  ASSERT_TRUE(m) << m.error().to_string();
  auto one = engine::encoder_profile(*m, {}, settings(8192), {0, 17, 0}, 2.0, {});
  EXPECT_EQ(one.item.modality, "vision_chunk");
  EXPECT_EQ(one.item.patches, 16900);
  EXPECT_EQ(one.item.tokens, 4225);
  EXPECT_EQ(one.items, 1);
  EXPECT_EQ(engine::encoder_profile(*m, {}, settings(16384), {0, 17, 0}, 2.0, {}).items, 3);
}

// --limit-mm-per-prompt '{"image": {"count": 1, "width": 1024, "height": 1024}}' (v0.11+): vLLM
// builds the dummy at 1024 x 1024 (under the largest 3584) and the processor resizes it to
// multiples of 28 (smart_resize: round(1024 / 28) = 37 -> 1036), 74 x 74 patches, 1,369 tokens;
// the item still counts the largest image's 16,384 tokens against the budget, and v0.11 pads its
// output to that budget.
TEST(EncoderProfile, LimitMmPerPromptSizesTheDummyImage) {
  VllmFlags f;
  f.limit_mm_per_prompt = {{"image", 1}};
  f.mm_dummy_sizes["image"] = {1024, 1024, 0};
  f.limit_mm_per_prompt["video"] = 0;  // else the dummy video outranks the image at 32768 (qwen2_vl_video.h)
  const ModelSpec m = model("Qwen/Qwen2.5-VL-7B-Instruct");
  auto p = engine::encoder_profile(m, f, settings(8192), {0, 19, 0}, 2.0, {});
  EXPECT_EQ(p.item.patches, 74 * 74);
  EXPECT_EQ(p.item.tokens, 1369);
  EXPECT_EQ(p.encoder_budget, 16384);
  EXPECT_EQ(p.items, 1);
  EXPECT_EQ(p.cached_outputs, Bytes{1369} * m.hidden_size * 2);
  auto v011 = engine::encoder_profile(m, f, settings(8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(v011.cached_outputs, Bytes{16384 + 1369} * m.hidden_size * 2);
  auto v010 = engine::encoder_profile(m, f, settings(8192), {0, 10, 1}, 2.0, {});
  EXPECT_EQ(v010.item.tokens, 16384);  // before v0.11 the sizes are not read
}

// compute_mm_encoder_budget: a larger max_num_batched_tokens fits more items per batch (images at
// max_model_len 16384, where the dummy video is no larger than one).
TEST(EncoderProfile, BudgetOfMoreTokensBatchesMoreItems) {
  auto p = engine::encoder_profile(model("Qwen/Qwen2.5-VL-7B-Instruct"), {}, settings(65536, 256, 16384), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(p.encoder_budget, 65536);
  EXPECT_EQ(p.items, 4);
}

// --mm-processor-kwargs '{"max_pixels": 1003520}' (1280 x 28 x 28): a 980 x 980 image,
// 35 x 35 merged tokens.
TEST(EncoderProfile, ProcessorKwargsShrinkTheLargestImage) {
  VllmFlags f;
  f.mm_processor_kwargs = R"({"max_pixels": 1003520})";
  f.limit_mm_per_prompt["video"] = 0;
  auto p = engine::encoder_profile(model("Qwen/Qwen2.5-VL-7B-Instruct"), f, settings(8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(p.item.tokens, 35 * 35);
  EXPECT_EQ(p.items, 8192 / (35 * 35));
  // With video allowed the dummy video's frames are that image too: 1,225 tokens each temporal
  // slice, and 32768 / 1225 = 26 slices capped at 14 frames = 7 slices, 8,575 tokens.
  f.limit_mm_per_prompt.erase("video");
  auto video = engine::encoder_profile(model("Qwen/Qwen2.5-VL-7B-Instruct"), f, settings(8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(video.item.modality, "video");
  EXPECT_EQ(video.item.tokens, 7 * 35 * 35);
}

// qwen2_vl.py from v0.11: the profile run's dummy video ({video: 1}) is min(max(2 floor(L / T), 1), 14)
// frames at the largest image's 3584 x 3584 (T = 16,384 tokens, 65,536 patches per temporal slice
// of 2 frames); the video vLLM budgets (budget.py: mm_counts {image: 1, video: 1}) has L less one
// image (get_num_frames_with_most_features), whatever --limit-mm-per-prompt's counts. At
// max_model_len 128000 the budget counts (128000 − 16384) / 16384 = 6 slices, 12 frames, 98,304
// tokens, more than the image, so the video is profiled: 14 frames, 7 slices, 114,688 tokens and
// 458,752 patches, attention within each slice. (A 2026 vLLM log of a 7B Qwen2.5-VL-sized model
// reads "budget of 114688 tokens": 7 slices of room, so a max_model_len of at least 131,072 or
// images off there.) At 49152: a budget of 2 slices, a run of 6 frames, 3 slices. At 32768 the
// budget's video (1 slice) ties with the image: the image is the estimate and the 2-slice video
// the range's other reading. Before v0.11 (#25553) the run's video came from
// max_num_batched_tokens, and the image stays. A video num_frames of 4 shrinks what runs (2 slices)
// but not what vLLM budgets; with images off the video is profiled even at one slice.
TEST(EncoderProfile, Qwen25VlProfilesItsDummyVideoAtLongContexts) {
  const ModelSpec m = model("Qwen/Qwen2.5-VL-7B-Instruct");
  auto p = engine::encoder_profile(m, {}, settings(8192, 256, 128000), {0, 19, 0}, 2.0, {});
  EXPECT_EQ(p.item.modality, "video");
  EXPECT_EQ(p.item.budget_tokens, 98304);
  EXPECT_EQ(p.item.tokens, 114688);
  EXPECT_EQ(p.item.patches, 458752);
  EXPECT_EQ(p.item.attention_span, 65536);
  EXPECT_EQ(p.encoder_budget, 98304);
  EXPECT_EQ(p.items, 1);
  auto image = engine::encoder_profile(m, {}, settings(8192, 256, 16384), {0, 19, 0}, 2.0, {});
  EXPECT_GT(p.encoder_peak, 5 * image.encoder_peak);
  EXPECT_EQ(engine::encoder_profile(m, {}, settings(8192, 256, 49152), {0, 19, 0}, 2.0, {}).item.tokens, 3 * 16384);
  auto tied = engine::encoder_profile(m, {}, settings(8192, 256, 32768), {0, 19, 0}, 2.0, {});
  EXPECT_EQ(tied.item.modality, "image");
  EXPECT_GT(tied.other_reading, tied.encoder_peak / 2);
  EXPECT_NE(tied.other_reading_why.find("4 frames"), std::string::npos) << tied.other_reading_why;
  EXPECT_EQ(engine::encoder_profile(m, {}, settings(8192, 256, 128000), {0, 10, 1}, 2.0, {}).item.modality, "image");
  VllmFlags four;
  four.limit_mm_per_prompt["video"] = 1;
  four.mm_dummy_sizes["video"] = {0, 0, 4};
  auto shrunk = engine::encoder_profile(m, four, settings(8192, 256, 128000), {0, 19, 0}, 2.0, {});
  EXPECT_EQ(shrunk.item.patches, 2 * 65536);
  EXPECT_EQ(shrunk.item.budget_tokens, 98304);
  VllmFlags no_images;
  no_images.limit_mm_per_prompt["image"] = 0;
  auto videos_only = engine::encoder_profile(m, no_images, settings(8192, 256, 16384), {0, 19, 0}, 2.0, {});
  EXPECT_EQ(videos_only.item.modality, "video");
  EXPECT_EQ(videos_only.item.patches, 65536);
}

// "All non-text modalities supported by the model have been explicitly disabled via
// limit_mm_per_prompt. Encoder cache will not be initialized." (compute_mm_encoder_budget)
TEST(EncoderProfile, EveryModalityAtZeroSkipsThePass) {
  VllmFlags f;
  f.limit_mm_per_prompt = {{"image", 0}, {"video", 0}};
  const ModelSpec m = model("Qwen/Qwen2.5-VL-7B-Instruct");
  auto p = engine::encoder_profile(m, f, settings(8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(p.items, 0);
  EXPECT_EQ(p.encoder_peak, 0);
  EXPECT_TRUE(engine::skips_tower_weights(m, f, {0, 10, 1}));
  EXPECT_FALSE(engine::skips_tower_weights(m, f, {0, 10, 0}));  // before #22299 the tower still loads
  VllmFlags only_images;
  only_images.limit_mm_per_prompt = {{"image", 0}};
  EXPECT_FALSE(engine::text_only_mode(m, only_images));  // video stays on
}

TEST(EncoderProfile, SkipMmProfilingAndTextModelsHaveNoPass) {
  VllmFlags f;
  f.skip_mm_profiling = true;
  EXPECT_EQ(engine::encoder_profile(model("Qwen/Qwen2.5-VL-7B-Instruct"), f, settings(8192), {0, 11, 0}, 2.0, {}).items, 0);
  EXPECT_EQ(engine::encoder_profile(model("Qwen/Qwen3-8B"), {}, settings(8192), {0, 11, 0}, 2.0, {}).skipped_because,
            "no vision tower");
}

// Gemma 3's SigLIP tower takes 896 x 896 images (64 x 64 patches of 14) and hands 256 pooled
// tokens on (gemma3_mm.py): 8192 // 256 = 32 items fill the budget.
TEST(EncoderProfile, FixedSizeTowerBatchesByItsTokens) {
  auto p = engine::encoder_profile(model("google/gemma-3-12b-it"), {}, settings(8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(p.item.patches, 4096);
  EXPECT_EQ(p.item.tokens, 256);
  EXPECT_EQ(p.items, 32);
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

// predict() charges the pass (stage_profile.cc profile_encoder). dots.ocr on an L4, vLLM v0.10.0,
// max_model_len 131072, max_num_batched_tokens 2048, utilization 0.95 (calibration row
// wild-l4-dotsocr-131k-gmu095-v0100) logged "Available KV cache memory: 12.20 GiB"; the printed KV
// range holds it, and the activation is at least the encoder's modelled peak.
TEST(EncoderProfile, PredictChargesThePassAndItsRangeHoldsTheLoggedKv) {
  ModelSpec m = test_support::model("rednote-hilab/dots.ocr");
  VllmFlags f;
  f.max_model_len = 131072;
  f.max_num_batched_tokens = 2048;
  f.gpu_memory_utilization = 0.95;
  const VllmVersion v{0, 10, 0};
  Prediction p = test_support::run(m, test_support::gpus("L4"), f, v);
  auto pass = engine::encoder_profile(m, f, p.settings, v, 2.0, {});
  ASSERT_GT(pass.items, 0);
  EXPECT_GE(p.memory.activation_peak, pass.encoder_peak);
  ASSERT_TRUE(p.uncertainty.has_value());
  EXPECT_LE(to_gib(p.uncertainty->kv_cache_low), 12.20);
  EXPECT_GE(to_gib(p.uncertainty->kv_cache_high), 12.20);
}

// Text-only mode from v0.10.1: no encoder pass, no encoder cache and no tower weights, so the
// activation and the weights are both lower than with images allowed.
TEST(EncoderProfile, TextOnlyModeChargesNoPassAndLoadsNoTower) {
  ModelSpec m = test_support::model("Qwen/Qwen2.5-VL-7B-Instruct");
  VllmFlags with_images, text_only;
  text_only.language_model_only = true;
  const VllmVersion v{0, 11, 0};
  Prediction a = test_support::run(m, test_support::gpus("H100"), with_images, v);
  Prediction b = test_support::run(m, test_support::gpus("H100"), text_only, v);
  EXPECT_LT(b.memory.weights, a.memory.weights);
  EXPECT_LT(b.memory.activation_peak, a.memory.activation_peak);
  // No pass runs, so the range allows nothing for one (on an L4 it still prints for the GPU).
  auto vision_reason = [](const Prediction& p) {
    if (!p.uncertainty) return false;
    for (const auto& r : p.uncertainty->reasons)
      if (r.find("vision encoder") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(vision_reason(test_support::run(m, test_support::gpus("L4"), with_images, v)));
  EXPECT_FALSE(vision_reason(test_support::run(m, test_support::gpus("L4"), text_only, v)));
  VllmFlags skipped;
  skipped.skip_mm_profiling = true;
  EXPECT_FALSE(vision_reason(test_support::run(m, test_support::gpus("L4"), skipped, v)));
}

// --kv-cache-memory-bytes: the KV cache is the reserved size, so no range is printed.
TEST(EncoderProfile, ReservedKvCacheHasNoRange) {
  ModelSpec m = test_support::model("rednote-hilab/dots.ocr");
  VllmFlags f;
  f.kv_cache_memory_bytes = from_gib(4.0);
  Prediction p = test_support::run(m, test_support::gpus("L4"), f, VllmVersion{0, 10, 0});
  EXPECT_FALSE(p.uncertainty.has_value());
}

// Gemma 4 (gemma4_mm.py): get_mm_max_tokens_per_item budgets a video at 32 frames x (70 + 2 + 6)
// = 2496 tokens and an image at default_output_length (280), so vLLM profiles
// floor(8192 / 2496) = 3 videos. Each frame is a 224 x 224 dummy resized to 8 x 8 pooled cells
// (64 embeddings) and padded to 70 x 3 x 3 = 630 patches; an image to 16 x 16 (256) and 2520.
TEST(EncoderProfile, Gemma4ProfilesVideoUnlessVideoIsOff) {
  ModelSpec m = model("nvidia/Gemma-4-31B-IT-NVFP4");
  auto p = engine::encoder_profile(m, {}, settings(8192), {0, 20, 0}, 2.0, {});
  EXPECT_EQ(p.item.modality, "video");
  EXPECT_EQ(p.items, 3);
  EXPECT_EQ(p.encoder_budget, 8192);
  EXPECT_EQ(p.item.tokens, 32 * 64);
  EXPECT_EQ(p.item.budget_tokens, 2496);
  EXPECT_EQ(p.item.attention_span, 630);
  EXPECT_EQ(p.units_per_forward, 1);  // before v0.22 the model encodes one frame per call
  VllmFlags no_video;
  no_video.limit_mm_per_prompt["video"] = 0;
  auto images = engine::encoder_profile(m, no_video, settings(8192), {0, 20, 0}, 2.0, {});
  EXPECT_EQ(images.item.modality, "image");
  EXPECT_EQ(images.items, 8192 / 280);
  EXPECT_EQ(images.item.tokens, 256);
  EXPECT_EQ(images.item.attention_span, 2520);
  VllmFlags off = no_video;
  off.limit_mm_per_prompt["image"] = 0;
  EXPECT_EQ(engine::encoder_profile(m, off, settings(8192), {0, 20, 0}, 2.0, {}).items, 0);
}

// From v0.22 gemma4_mm.py encodes in chunks: _encoder_chunk's budget min(free / 2, total / 10)
// over 630 x 4 x 10240 x 8 = 206,438,400 bytes per frame. On 80 GiB with 40 GiB free: 8 GiB / that
// = 41 frames of the batch's 96. transformers' one-hot of those positions is the other reading.
TEST(EncoderProfile, Gemma4ChunksFramesFromV022) {
  ModelSpec m = model("nvidia/Gemma-4-31B-IT-NVFP4");
  const engine::EncoderDevice device{from_gib(80.0), from_gib(40.0)};
  auto p = engine::encoder_profile(m, {}, settings(8192), {0, 22, 0}, 2.0, device);
  EXPECT_EQ(p.units_per_forward, 41);
  // int64 x and y one-hots over 10240 rows and their bf16 cast, per patch.
  EXPECT_EQ(p.other_reading, static_cast<Bytes>(41) * 630 * 2 * 10240 * (8 + 2));
  const engine::EncoderDevice small{from_gib(24.0), from_gib(4.0)};  // free / 2 = 2 GiB < total / 10
  EXPECT_EQ(engine::encoder_profile(m, {}, settings(8192), {0, 22, 0}, 2.0, small).units_per_forward,
            static_cast<std::int64_t>(from_gib(2.0) / 206'438'400));
}


// dots.ocr through its release's vLLM plugin (before v0.11): a block is widest while k's rotary runs
// in float32. Per patch (hidden 1536, 12 heads of 128, MLP 4224): 6 x 1536 bf16 + 4 x 1536 float32
// + cos/sin 2 x 128 float32 = 44,032 bytes (the gated MLP's moment is 31,488), plus the float32 and
// bf16 pixels (588 x 6), the zeroed output (1536 x 2 / 4) and the rotary table (64 x 4): 48,584
// bytes for each of the dummy image's 57,600 patches.
TEST(EncoderProfile, DotsOcrPluginPeaksOnTheFloatRotary) {
  ModelSpec m = test_support::model("rednote-hilab/dots.ocr");
  auto v010 = engine::encoder_profile(m, {}, settings(2048, 256, 131072), {0, 10, 0}, 2.0, {});
  ASSERT_EQ(v010.item.patches, 57600);
  EXPECT_EQ(v010.encoder_peak, static_cast<Bytes>(57600) * 48584);
  auto v011 = engine::encoder_profile(m, {}, settings(2048, 256, 131072), {0, 11, 0}, 2.0, {});
  EXPECT_LT(v011.encoder_peak, v010.encoder_peak);  // vLLM's own dots_ocr.py: the estimate from the widths
}

// Ovis2.5-9B (ovis2_5.py, processors/ovis2_5.py, siglip2navit.py): the dummy image is the
// hard-coded 1792², which smart_resize (factor 16 × 2) keeps: 112² = 12,544 patches, 3,136 merged
// tokens and 2 indicators = 3,138 embeddings; 8,192 // 3,138 = 2 images per batch. Per patch the
// NaViT block is widest in its MLP: 2 × 1152 + 2 × 4304 = 10,912 values, plus the 3 × 16² pixels:
// 11,680 × 2 bytes = 23,360 (293,027,840 per image). The head's softmax holds the bf16 logits,
// their fp32 softmax and its bf16 cast over 65,532 columns: 8 bytes each, 524,256 per token,
// 1,644,066,816 per image, which sets the peak: 3,288,133,632 for the two. At max_model_len 40,960
// the dummy video fills it with 40,960 // 12,544 = 3 frames: 37,632 patches, 9,408 tokens,
// 4,932,200,448 bytes, 1,644,066,816 more than the two images: the other reading.
TEST(EncoderProfile, Ovis25HeadSoftmaxSetsThePeak) {
  auto m = parse_model_config_text(test_support::k_ovis25_9b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  auto p = engine::encoder_profile(*m, {}, settings(8192, 256, 8192), {0, 11, 0}, 2.0, {});
  EXPECT_FALSE(p.family_unsized);
  EXPECT_EQ(p.item.modality, "image");
  EXPECT_EQ(p.item.patches, 12544);
  EXPECT_EQ(p.item.tokens, 3138);
  EXPECT_EQ(p.items, 2);
  EXPECT_EQ(p.encoder_peak, Bytes{3'288'133'632});
  EXPECT_EQ(p.other_reading, 0);
  auto longer = engine::encoder_profile(*m, {}, settings(8192, 256, 40960), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(longer.encoder_peak, Bytes{3'288'133'632});
  EXPECT_EQ(longer.other_reading, Bytes{1'644'066'816});
  EXPECT_NE(longer.other_reading_why.find("3 frames"), std::string::npos) << longer.other_reading_why;
  VllmFlags no_video;
  no_video.limit_mm_per_prompt = {{"video", 0}};
  EXPECT_EQ(engine::encoder_profile(*m, no_video, settings(8192, 256, 40960), {0, 11, 0}, 2.0, {}).other_reading, 0);
  // max_pixels 896² halves each side: 56² = 3,136 patches, 784 tokens + 2.
  VllmFlags smaller;
  smaller.mm_processor_kwargs = R"({"max_pixels": 802816})";
  auto s = engine::encoder_profile(*m, smaller, settings(8192, 256, 8192), {0, 11, 0}, 2.0, {});
  EXPECT_EQ(s.item.patches, 3136);
  EXPECT_EQ(s.item.tokens, 786);
}

// Gemma 4 12B (gemma4_unified.py) has no vision tower: 48² patches are projected straight into the
// language model, one image or frame per call. vLLM profiles the video (32 frames × (70 + 8) =
// 2,496 budgeted tokens against an image's 280); each frame is 70 rows of 64 real soft tokens:
// 2,240 rows, 2,048 embeddings. A call holds per row the float32 48² × 3 = 6,912 pixels, their
// bf16 cast and LayerNorm (8 bytes each, 55,296) and five rows of 3,840 in bf16 (38,400): 93,696
// bytes × 70 rows = 6,558,720, plus the video's concatenated output (2,048 × 3,840 × 2 =
// 15,728,640): 22,287,360. With video off the 280-token image fills 256 rows (224² at 48-pixel
// patches, resized by the processor); max_soft_tokens 1120 fills 1,089.
TEST(EncoderProfile, Gemma4UnifiedProjectsPatchesWithoutATower) {
  const ModelSpec m = model("google/gemma-4-12B-it");
  auto p = engine::encoder_profile(m, {}, settings(2048, 256, 8192), {0, 25, 1}, 2.0, {});
  EXPECT_FALSE(p.family_unsized);
  EXPECT_EQ(p.item.modality, "video");
  EXPECT_EQ(p.item.patches, 2240);
  EXPECT_EQ(p.item.tokens, 2048);
  EXPECT_EQ(p.item.budget_tokens, 2496);
  EXPECT_EQ(p.items, 1);
  EXPECT_EQ(p.encoder_peak, Bytes{22'287'360});
  VllmFlags images;
  images.limit_mm_per_prompt = {{"video", 0}};
  auto i = engine::encoder_profile(m, images, settings(8192, 256, 8192), {0, 25, 1}, 2.0, {});
  EXPECT_EQ(i.item.modality, "image");
  EXPECT_EQ(i.item.budget_tokens, 280);
  EXPECT_EQ(i.item.tokens, 256);
  images.mm_processor_kwargs = R"({"max_soft_tokens": 1120})";
  EXPECT_EQ(engine::encoder_profile(m, images, settings(8192, 256, 8192), {0, 25, 1}, 2.0, {}).item.tokens, 1089);
  // Text-only mode keeps the embedders: vLLM builds them outside the tower marker.
  VllmFlags text_only;
  text_only.language_model_only = true;
  EXPECT_FALSE(engine::skips_tower_weights(m, text_only, {0, 25, 1}));
}

// Keye-VL (keye.py) sizes its dummy as Qwen2-VL does, from the release processor's max_pixels
// 1,003,520: a 980² square (35 × 28), 70² = 4,900 patches of 14², 1,225 tokens after the 2 × 2
// merge; 8,192 // 1,225 = 6 images in one packed call. Its processing info takes
// temporal_patch_size 1 whatever the config writes, so a patch carries 3 × 14² pixels: the plain
// SigLIP MLP's 2 × 1,152 + 2 × 4,304 = 10,912 values plus 588, 23,000 bytes in bf16.
TEST(EncoderProfile, KeyeVlSizesItsDummyAsQwen2VlDoes) {
  auto m = parse_model_config_text(test_support::k_keye_vl_8b_preview, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  expect_sized(engine::encoder_profile(*m, {}, settings(8192, 256, 40960), {0, 11, 0}, 2.0, {}), 1225, 4900, 6,
               Bytes{6} * 4900 * 23000);
}

// DeepSeek-VL2 (deepseek_vl2.py): the candidate with the most tokens is 384 wide and 3456 tall
// (9 × 1 tiles: 210 + 1 + 126 × 15 = 2,101 tokens, against 3 × 3's 42 × 43 + 211 = 2,017); its 9
// tiles and the global view are 384², which timm pads to 392²: 10 × 784 patches in one call;
// 8,192 // 2,101 = 3 images. timm's so400m block is widest in its plain MLP (2 × 1152 + 2 × 4304)
// beside the 3 × 14² pixels: 11,500 values, 23,000 bytes per patch on every rank.
TEST(EncoderProfile, DeepseekVl2ProfilesItsTallestCandidate) {
  auto m = parse_model_config_text(test_support::k_deepseek_vl2_tiny, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->vision);
  expect_sized(engine::encoder_profile(*m, {}, settings(8192, 256, 4096), {0, 11, 0}, 2.0, {}), 2101, 7840, 3,
               Bytes{3} * 7840 * 23000);
  // A hostile candidate list is refused with its key.
  std::string hostile = test_support::k_deepseek_vl2_tiny;
  hostile.replace(hostile.find("[3456, 384]]"), 12, "[3456, 99999999]]");
  auto refused = parse_model_config_text(hostile, "config.json");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("candidate_resolutions"), std::string::npos) << refused.error().message;
}

// Molmo's dummy (molmo.py get_image_size_with_most_features at max_crops 12): one column of 12
// crops and the global image, 13 × (24² + 1) patches through the ViT, 144 + 12 × 100 = 1,344
// embeddings. At 8192 batched tokens 8192 // 1344 = 6 images, all crops in one ViT call, which
// holds its 23 block outputs: per patch 2 × (23 × 1024 + 2 × 4096 + 2 × 1024) bytes. With
// --mm-processor-kwargs max_crops 4: 5 crops, 144 + 12 × 36 = 576 embeddings.
TEST(EncoderProfile, MolmoTilesItsTallDummyIntoCrops) {
  auto m = parse_model_config_text(test_support::k_molmo_7b_d, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  expect_sized(engine::encoder_profile(*m, {}, settings(8192, 256, 4096), {0, 19, 0}, 2.0, {}), 1344, 13 * 577, 6,
               Bytes{6} * 13 * 577 * 2 * (23 * 1024 + 2 * 4096 + 2 * 1024));
  VllmFlags four;
  four.mm_processor_kwargs = R"({"max_crops": 4})";
  auto q = engine::encoder_profile(*m, four, settings(8192, 256, 4096), {0, 19, 0}, 2.0, {});
  EXPECT_EQ(q.item.tokens, 576);
  EXPECT_EQ(q.item.patches, 5 * 577);
}

}  // namespace
}  // namespace headroom
