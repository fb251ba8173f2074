// Towers with tiled inputs: InternVL's and LLaVA-NeXT / OneVision's profile passes as internvl.py,
// llava_next.py and llava_onevision.py build them, and a tower headroom does not size (Llama 3.2
// Vision), whose pass vLLM still runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/encoder_profile.h"
#include "headroom/model.h"
#include "unit/engine_test_support.h"

namespace headroom {
namespace {

// InternVL3-8B's config.json shape: llm_config for the language model, an InternViT tower.
constexpr const char* k_internvl = R"({"architectures": ["InternVLChatModel"], "model_type": "internvl_chat",
  "downsample_ratio": 0.5, "force_image_size": 448, "max_dynamic_patch": 12, "use_thumbnail": true, "torch_dtype": "bfloat16",
  "llm_config": {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
    "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28, "vocab_size": 151674,
    "max_position_embeddings": 32768, "rope_theta": 1000000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16"},
  "vision_config": {"architectures": ["InternVisionModel"], "model_type": "intern_vit_6b", "hidden_size": 1024, "image_size": 448,
    "intermediate_size": 4096, "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": 14, "qkv_bias": true}})";

// llava-hf/llava-v1.6-mistral-7b-hf's config.json shape: a CLIP ViT-L/14-336 tower, five pinpoints.
constexpr const char* k_llava_next = R"({"architectures": ["LlavaNextForConditionalGeneration"], "model_type": "llava_next",
  "image_grid_pinpoints": [[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]], "image_token_index": 32000,
  "projector_hidden_act": "gelu", "vision_feature_layer": -2, "vision_feature_select_strategy": "default", "torch_dtype": "float16",
  "text_config": {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 32064,
    "max_position_embeddings": 32768, "rope_theta": 1000000.0, "tie_word_embeddings": false},
  "vision_config": {"model_type": "clip_vision_model", "hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
    "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": 14, "projection_dim": 768}})";

// llava-hf/llava-onevision-qwen2-7b-ov-hf's shape: a SigLIP so400m tower, the "full" strategy,
// and no pinpoints written (the release's 6 x 6 grid of 384-pixel tiles applies).
constexpr const char* k_llava_onevision = R"({"architectures": ["LlavaOnevisionForConditionalGeneration"],
  "model_type": "llava_onevision", "vision_feature_layer": -1, "vision_feature_select_strategy": "full", "torch_dtype": "bfloat16",
  "text_config": {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
    "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28, "vocab_size": 152128,
    "max_position_embeddings": 32768, "rope_theta": 1000000.0, "tie_word_embeddings": false},
  "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152, "image_size": 384, "intermediate_size": 4304,
    "num_attention_heads": 16, "num_hidden_layers": 26, "patch_size": 14}})";

// The shape of one synthesised tensor (empty when there is none of that name).
std::vector<std::int64_t> tensor_shape(const WeightsInventory& inv, const std::string& name) {
  for (const auto& t : inv.tensors)
    if (t.name == name) return t.shape;
  return {};
}

bool notes(const Prediction& p, const std::string& part) {
  for (const auto& n : p.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

bool names(const Prediction& p, const std::string& part) {
  if (!p.uncertainty) return false;
  for (const auto& r : p.uncertainty->reasons)
    if (r.find(part) != std::string::npos) return true;
  return false;
}

// google/paligemma2-3b-pt-448's shape: a SigLIP tower at 448 pixels under a Gemma 2 model.
constexpr const char* k_paligemma = R"({"architectures": ["PaliGemmaForConditionalGeneration"], "model_type": "paligemma",
  "torch_dtype": "bfloat16", "text_config": {"model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "num_hidden_layers": 26, "vocab_size": 257216,
    "max_position_embeddings": 8192, "sliding_window": 4096},
  "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152, "image_size": 448, "intermediate_size": 4304,
    "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14, "projection_dim": 2304}})";

// The same shape under MiniMax-VL-01's architecture, whose dynamic-resolution SigLIP input headroom
// does not size.
std::string minimax_vl() {
  std::string config = k_paligemma;
  const std::string from = "PaliGemmaForConditionalGeneration";
  config.replace(config.find(from), from.size(), "MiniMaxVL01ForConditionalGeneration");
  return config;
}

// A tower whose largest input is not sized (MiniMax-VL-01's any-resolution tiles): its config has
// a fixed image size, but the range must still allow for the pass vLLM runs.
TEST(UnsizedTower, RangeAllowsThePassVllmRuns) {
  auto parsed = parse_model_config_text(minimax_vl(), "config.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  const ModelSpec m = *parsed;
  ASSERT_TRUE(m.vision);
  EXPECT_GT(m.vision->image_size, 0);
  const Prediction p = test_support::run(m, test_support::gpus("H100"), VllmFlags{});
  ASSERT_TRUE(p.uncertainty);
  EXPECT_TRUE(names(p, "the largest input of MiniMaxVL01ForConditionalGeneration's processor unsized"));
  // 3 GiB on the low side (the allowance for a pass that is not sized).
  EXPECT_GE(p.memory.kv_cache - p.uncertainty->kv_cache_low, from_gib(3.0));
  // Text-only (every modality at 0): vLLM runs no pass, so nothing is allowed for it.
  VllmFlags text_only;
  text_only.limit_mm_per_prompt["image"] = 0;
  EXPECT_FALSE(names(test_support::run(m, test_support::gpus("H100"), text_only), "processor unsized"));
}

// Llama 3.2 Vision runs on vLLM's V0 engine only. enc_dec_model_runner.py profile_run builds
// max_num_seqs dummy sequences with one image each (V0's limit of 1 per prompt), 4 tiles of 560², and
// encodes them in one batch. Per image mllama.py holds, at MllamaVisionModel.forward's torch.cat, in
// bf16: the aspect-ratio mask [L, L] with L = 4 × 1608 (1,601 positions padded to a multiple of 8),
// the 5 intermediate states (intermediate_layers_indices) as a tuple and stacked [2 × 5 × L × 1280],
// the final state and its sliced copy [2 × L × 1280], the sliced intermediate states
// [5 × 6,404 × 1280] and the concatenation [6,404 × 7,680]: 460,668,928 bytes.
// The failure report vllm-9630 (calibration/errors.jsonl; v0.6.3 on a 96 GB H100, utilization 0.9)
// OOMed in the profile run at the default 256 sequences even with --max-model-len 32, and passed it
// with --max-model-len 512 --max-num-seqs 128. The 94 GB H100 NVL stands in for that card here.
TEST(Mllama, V0ProfileEncodesOneImagePerDummySequence) {
  const ModelSpec m = test_support::model("meta-llama/Llama-3.2-11B-Vision-Instruct");
  const VllmVersion v063{0, 6, 3};
  VllmFlags report;
  report.max_model_len = 32;
  report.gpu_memory_utilization = 0.9;
  const Prediction oom = test_support::run(m, test_support::gpus("H100 NVL"), report, v063);
  EXPECT_FALSE(oom.starts);
  ASSERT_TRUE(oom.failure);
  EXPECT_EQ(oom.failure->error_class, "profile_run_oom");
  EXPECT_NEAR(static_cast<double>(oom.memory.activation_peak), 256.0 * 460668928.0, 1 << 20);
  report.max_model_len = 512;
  report.max_num_seqs = 128;
  const Prediction passed = test_support::run(m, test_support::gpus("H100 NVL"), report, v063);
  EXPECT_TRUE(passed.starts);
  EXPECT_NEAR(static_cast<double>(passed.memory.activation_peak), 128.0 * 460668928.0, 1 << 20);
  // V0's CacheEngine gives every one of the 40 layers (8 of them cross-attention) the same cache:
  // a 16-token block is 16 × 40 × 2 × 8 KV heads × 128 × 2 bytes.
  EXPECT_NEAR(static_cast<double>(passed.kv_cache_tokens), static_cast<double>(passed.memory.kv_cache) / (40.0 * 2 * 8 * 128 * 2), 16);
  // Text only: no images, no pass.
  VllmFlags text_only = report;
  text_only.limit_mm_per_prompt["image"] = 0;
  EXPECT_LT(test_support::run(m, test_support::gpus("H100 NVL"), text_only, v063).memory.activation_peak, from_gib(2.0));
}

// Llama 3.2 Vision's tile counts are bounded where they are read: the tile table and the profile's
// mask grow with tiles x (image_size / patch_size)^2.
TEST(Mllama, RefusesImplausibleTiles) {
  const std::string base = R"({"architectures": ["MllamaForConditionalGeneration"], "model_type": "mllama",
    "text_config": {"model_type": "mllama_text_model", "hidden_size": 4096, "intermediate_size": 14336,
      "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 40, "vocab_size": 128256,
      "max_position_embeddings": 131072, "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38]},
    "vision_config": {"model_type": "mllama_vision_model", "hidden_size": 1280, "intermediate_size": 5120,
      "num_attention_heads": 16, "num_hidden_layers": 32, "num_global_layers": 8, "image_size": 560, "patch_size": 14,
      "vision_output_dim": 7680, TILES}})";
  auto with = [&](const std::string& tiles) {
    std::string text = base;
    text.replace(text.find("TILES"), 5, tiles);
    return parse_model_config_text(text, "config.json");
  };
  auto ok = with(R"("max_num_tiles": 4)");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->vision->max_tiles, 4);
  auto many = with(R"("max_num_tiles": 100000)");
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().message.find("max_num_tiles"), std::string::npos) << many.error().message;
  auto ratios = with(R"("max_num_tiles": 4, "supported_aspect_ratios": 7)");
  ASSERT_FALSE(ratios);
  EXPECT_NE(ratios.error().message.find("supported_aspect_ratios"), std::string::npos) << ratios.error().message;
}

// The V1 oracle of v0.8-v0.10 (arg_utils.py: "No Mamba or Encoder-Decoder so far") sends Llama 3.2
// Vision to the V0 engine, naming model_config.architectures.
TEST(Mllama, V1OracleFallsBackToV0) {
  const ModelSpec m = test_support::model("meta-llama/Llama-3.2-11B-Vision-Instruct");
  VllmFlags f;
  f.max_num_seqs = 16;
  const Prediction p = test_support::run(m, test_support::gpus("H100"), f, VllmVersion{0, 10, 1});
  EXPECT_TRUE(notes(p, "\"['MllamaForConditionalGeneration'] is not supported by the V1 Engine. Falling back to V0.\""));
  EXPECT_NEAR(static_cast<double>(p.memory.activation_peak), 16.0 * 460668928.0, 1 << 20);
}

// vLLM removed Llama 3.2 Vision with the V0 engine: 0.10.2 is the last release that serves it
// (data/vllm_architectures.json previously_supported), later ones stop in ModelConfig with the
// registry's message.
TEST(Mllama, LaterReleasesRefuseTheArchitecture) {
  const ModelSpec m = test_support::model("meta-llama/Llama-3.2-11B-Vision-Instruct");
  VllmFlags f;
  f.max_num_seqs = 16;
  const Prediction refused = test_support::run(m, test_support::gpus("H100"), f, VllmVersion{0, 11, 0});
  ASSERT_TRUE(refused.failure);
  EXPECT_EQ(refused.failure->error_class, "architecture_unsupported");
  EXPECT_NE(refused.failure->message.find("Model architectures ['MllamaForConditionalGeneration'] are not supported for now."),
            std::string::npos);
  EXPECT_TRUE(test_support::run(m, test_support::gpus("H100"), f, VllmVersion{0, 10, 2}).starts);
}

// An H100's batch defaults (8,192 batched tokens, 256 sequences) at `max_model_len`.
ResolvedSettings h100_defaults_at(std::int64_t max_model_len) {
  ResolvedSettings s;
  s.max_model_len = max_model_len;
  s.max_num_batched_tokens = 8192;
  s.max_num_seqs = 256;
  return s;
}

// InternVL (internvl.py): get_image_size_with_most_features picks max_dynamic_patch tiles (12 in
// the config) plus the thumbnail: 13 tiles of 448 pixels, each 32 x 32 patches and a class token in
// InternViT and num_image_token = 32² × 0.5² = 256 embeddings, so 3,328 per image. The encoder
// budget is max(max_num_batched_tokens, 3328): 2 images at the H100's 8192, 1 at the L4's 2048.
// These images are what vLLM profiles with video off (this Qwen2 backbone takes video: below).
TEST(InternVl, ProfilesThirteenTilesPerImage) {
  auto m = parse_model_config_text(k_internvl, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->max_tiles, 12);
  EXPECT_TRUE(m->vision->thumbnail_tile);
  VllmFlags no_video;
  no_video.limit_mm_per_prompt["video"] = 0;
  const Prediction h100 = test_support::run(*m, test_support::gpus("H100"), no_video);
  EXPECT_TRUE(notes(h100, "2 dummy image(s) of 3,328 embeddings"));
  EXPECT_TRUE(notes(h100, "budget of 8192 tokens, and profiled with 2 image items"));
  const Prediction l4 = test_support::run(*m, test_support::gpus("L4"), no_video);
  EXPECT_TRUE(notes(l4, "budget of 3328 tokens, and profiled with 1 image items"));
  // --mm-processor-kwargs max_dynamic_patch 6: 7 tiles, 1,792 embeddings, 4 images in 8192.
  VllmFlags six = no_video;
  six.mm_processor_kwargs = R"({"max_dynamic_patch": 6})";
  EXPECT_TRUE(notes(test_support::run(*m, test_support::gpus("H100"), six), "4 dummy image(s) of 1,792 embeddings"));
  EXPECT_FALSE(h100.uncertainty && names(h100, "processor unsized"));
}

// InternVL with a Qwen2 language model takes video (internvl.py get_video_token: <|video_pad|>).
// Each frame is one 448² tile of 256 embeddings. vLLM's budget sizes one image and one video
// together at max_model_len: (32,768 − 3,328) / 256 = 115 frames, 29,440 tokens, more than the
// image's 3,328, so the video is what it profiles. The run builds the video alone at max_model_len
// (v0.11+): 32,768 / 256 = 128 frames, 32,768 embeddings, 128 × 1,025 = 131,200 patches in one call.
// Before v0.11 the run's video comes from max_num_batched_tokens (8,192 / 256 = 32 frames); before
// v0.9 (#18499) InternVL took no video. An InternLM2 language model has no video token.
TEST(InternVl, QwenBackbonesProfileTheDummyVideo) {
  auto m = parse_model_config_text(k_internvl, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->model_type, "qwen2");
  ResolvedSettings s = h100_defaults_at(32768);
  const auto p = engine::encoder_profile(*m, {}, s, {0, 19, 0}, 2.0, {});
  EXPECT_EQ(p.item.modality, "video");
  EXPECT_EQ(p.item.tokens, 32768);
  EXPECT_EQ(p.item.budget_tokens, 29440);
  EXPECT_EQ(p.item.patches, 131200);
  EXPECT_EQ(p.item.attention_span, 1025);
  EXPECT_EQ(p.items, 1);
  EXPECT_EQ(engine::encoder_profile(*m, {}, s, {0, 10, 1}, 2.0, {}).item.tokens, 32 * 256);
  EXPECT_EQ(engine::encoder_profile(*m, {}, s, {0, 8, 5}, 2.0, {}).item.modality, "image");
  // --limit-mm-per-prompt's video num_frames shrinks what runs.
  VllmFlags eight;
  eight.mm_dummy_sizes["video"] = {0, 0, 8};
  EXPECT_EQ(engine::encoder_profile(*m, eight, s, {0, 19, 0}, 2.0, {}).item.patches, 8 * 1025);
  // At a short context the image's 3,328 embeddings outnumber (4,096 − 3,328) / 256 = 3 frames.
  s.max_model_len = 4096;
  EXPECT_EQ(engine::encoder_profile(*m, {}, s, {0, 19, 0}, 2.0, {}).item.modality, "image");
  std::string internlm = k_internvl;
  internlm.replace(internlm.find("\"model_type\": \"qwen2\""), std::string("\"model_type\": \"qwen2\"").size(),
                   "\"model_type\": \"internlm2\"");
  auto lm2 = parse_model_config_text(internlm, "config.json");
  ASSERT_TRUE(lm2) << lm2.error().message;
  s.max_model_len = 32768;
  EXPECT_EQ(engine::encoder_profile(*lm2, {}, s, {0, 19, 0}, 2.0, {}).item.modality, "image");
}

// OpenGVLab/InternVL3-8B-hf's config.json shape: the transformers layout that vLLM serves with
// interns1.py, which writes the sides as [height, width] and use_qk_norm / attention_bias.
constexpr const char* k_internvl_hf = R"({"architectures": ["InternVLForConditionalGeneration"], "model_type": "internvl",
  "downsample_ratio": 0.5, "image_seq_length": 256, "vision_feature_layer": -1, "torch_dtype": "bfloat16",
  "text_config": {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
    "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28, "vocab_size": 151674,
    "max_position_embeddings": 32768, "rope_theta": 1000000.0, "tie_word_embeddings": false},
  "vision_config": {"model_type": "internvl_vision", "hidden_size": 1024, "image_size": [448, 448], "intermediate_size": 4096,
    "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": [14, 14], "attention_bias": true, "use_qk_norm": false,
    "norm_type": "layer_norm", "use_mean_pooling": true}})";

// The same model in the transformers layout is the same tower (InternS1VisionModel: q/k/v apart,
// lambda_1/lambda_2 for ls1/ls2, multi_modal_projector for mlp1: the same shapes) and the same
// dummy video (interns1.py get_num_frames_with_most_features, 448² frames of 256 embeddings).
// Before, its [448, 448] image_size refused the model.
TEST(InternVl, TheTransformersLayoutIsTheSameModel) {
  auto chat = parse_model_config_text(k_internvl, "config.json");
  auto hf = parse_model_config_text(k_internvl_hf, "config.json");
  ASSERT_TRUE(chat) << chat.error().message;
  ASSERT_TRUE(hf) << hf.error().message;
  ASSERT_TRUE(hf->vision);
  EXPECT_EQ(hf->vision->image_size, 448);
  EXPECT_EQ(hf->vision->patch_size, 14);
  EXPECT_TRUE(hf->vision->thumbnail_tile);
  EXPECT_EQ(synthesize_weights(*hf).total_bytes, synthesize_weights(*chat).total_bytes);
  ResolvedSettings s = h100_defaults_at(32768);
  const auto p = engine::encoder_profile(*hf, {}, s, {0, 19, 0}, 2.0, {});
  EXPECT_EQ(p.item.modality, "video");
  EXPECT_EQ(p.item.patches, 131200);
  VllmFlags no_video;
  no_video.limit_mm_per_prompt["video"] = 0;
  EXPECT_EQ(engine::encoder_profile(*hf, no_video, s, {0, 19, 0}, 2.0, {}).item.tokens, 3328);
  // A side list that is not [height, width] is refused with the key named.
  std::string three = k_internvl_hf;
  three.replace(three.find("[448, 448]"), 10, "[448, 448, 3]");
  auto refused = parse_model_config_text(three, "config.json");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("vision_config.image_size"), std::string::npos) << refused.error().message;
  // A side past 2^20 pixels is refused before it is narrowed to an int (2^32 + 448 would read as 448).
  std::string huge = k_internvl_hf;
  huge.replace(huge.find("[448, 448]"), 10, "[4294967744, 448]");
  EXPECT_FALSE(parse_model_config_text(huge, "config.json"));
  std::string huge_chat = k_internvl;
  huge_chat.replace(huge_chat.find("\"image_size\": 448"), 17, "\"image_size\": 4294967744");
  EXPECT_FALSE(parse_model_config_text(huge_chat, "config.json"));
}

// internvl.py's projector mlp1 (LayerNorm over 4 x 1024 pixel-shuffled features, 4096 -> 3584 ->
// 3584) and intern_vit.py's embeddings (class token, 1,025 learned positions).
TEST(InternVl, WeightsHaveTheProjectorAndTheClassToken) {
  auto m = parse_model_config_text(k_internvl, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const WeightsInventory inv = synthesize_weights(*m);
  auto shape_of = [&](const std::string& name) { return tensor_shape(inv, name); };
  EXPECT_EQ(shape_of("mlp1.0.weight"), (std::vector<std::int64_t>{4096}));
  EXPECT_EQ(shape_of("mlp1.1.weight"), (std::vector<std::int64_t>{3584, 4096}));
  EXPECT_EQ(shape_of("mlp1.3.weight"), (std::vector<std::int64_t>{3584, 3584}));
  EXPECT_EQ(shape_of("vision_model.embeddings.position_embedding"), (std::vector<std::int64_t>{1, 1025, 1024}));
  EXPECT_EQ(shape_of("vision_model.encoder.layers.23.attn.qkv.weight"), (std::vector<std::int64_t>{3072, 1024}));
  EXPECT_EQ(shape_of("vision_model.encoder.layers.23.ls2"), (std::vector<std::int64_t>{1024}));
  EXPECT_TRUE(shape_of("vision_model.encoder.layers.24.attn.qkv.weight").empty());
}

// LLaVA-NeXT (llava_next.py get_image_size_with_most_features): vLLM scores each pinpoint with
// get_num_image_tokens. 336 x 672: a 1 x 2 grid of 24 x 24 patches, 24 x 48 features + 24
// newlines + 576 base = 1,752; 672 x 336: 1,776; 672 x 672: 48 x 48 + 48 + 576 = 2,928; 1008 x 336:
// 2,376; 336 x 1008: 2,328. The dummy is 672 x 672: 4 tiles and the base image, 5 x (576 + CLIP's
// class token) = 2,885 patches. At the H100's 8192 batched tokens, 8192 / 2928 = 2 images.
TEST(LlavaNext, ProfilesTheLargestPinpoint) {
  auto m = parse_model_config_text(k_llava_next, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->grid_pinpoints.size(), 5u);
  EXPECT_EQ(m->vision->feature_select_strategy, "default");
  const Prediction h100 = test_support::run(*m, test_support::gpus("H100"), VllmFlags{});
  EXPECT_TRUE(notes(h100, "2 dummy image(s) of 2,928 embeddings"));
  EXPECT_TRUE(notes(h100, "budget of 8192 tokens, and profiled with 2 image items"));
  EXPECT_FALSE(h100.uncertainty && names(h100, "processor unsized"));
}

// LLaVA-OneVision (llava_onevision.py): the dummy image is 1153 x 944. select_best_resolution
// takes the 4 x 3-tile canvas (1536 x 1152, the smallest that keeps every pixel): 81 x 108
// features, unpadded to 81 x 98 (new width round(1153 x 81 / 944) = 98), sqrt(7938 / (9 x 729))
// = 1.0999, not above 1.1, so 7,938 + 81 newlines + 729 base = 8,748 tokens (more than a 16-frame
// video's 16 x 196 + 1 = 3,137, so the profile takes the image). One image fills the budget.
TEST(LlavaOnevision, ProfilesTheFixedDummyImage) {
  auto m = parse_model_config_text(k_llava_onevision, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->vision);
  EXPECT_TRUE(m->vision->grid_pinpoints.empty());
  const Prediction h100 = test_support::run(*m, test_support::gpus("H100"), VllmFlags{});
  EXPECT_TRUE(notes(h100, "1 dummy image(s) of 8,748 embeddings"));
  EXPECT_TRUE(notes(h100, "budget of 8748 tokens, and profiled with 1 image items"));
  // Images off leaves video, so the tower stays loaded; LLaVA-NeXT takes images only, so there the
  // same flag is vLLM's text-only mode, which skips loading the tower.
  VllmFlags no_images;
  no_images.limit_mm_per_prompt["image"] = 0;
  EXPECT_EQ(test_support::run(*m, test_support::gpus("H100"), no_images).memory.weights, h100.memory.weights);
  auto next = parse_model_config_text(k_llava_next, "config.json");
  ASSERT_TRUE(next);
  EXPECT_LT(test_support::run(*next, test_support::gpus("H100"), no_images).memory.weights,
            test_support::run(*next, test_support::gpus("H100"), VllmFlags{}).memory.weights);
}

// mistral-community/pixtral-12b: transformers' LLaVA layout over a Pixtral tower, with no
// spatial_merge_size anywhere, so PixtralHFEncoderInfo merges nothing: 1024 / 16 = 64 patches a
// side, 64 x 64 tokens plus a break token per row = 4,160, one image in the H100's 8192.
TEST(PixtralHf, HasNoPatchMerger) {
  auto m = parse_model_config_text(R"({"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
    "image_token_index": 10, "projector_hidden_act": "gelu", "vision_feature_layer": -1, "torch_dtype": "bfloat16",
    "text_config": {"model_type": "mistral", "hidden_size": 5120, "intermediate_size": 14336, "head_dim": 128,
      "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 40, "vocab_size": 131072,
      "max_position_embeddings": 1024000, "rope_theta": 1000000000.0},
    "vision_config": {"model_type": "pixtral", "hidden_size": 1024, "image_size": 1024, "intermediate_size": 4096,
      "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": 16, "head_dim": 64}})",
                                   "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const Prediction h100 = test_support::run(*m, test_support::gpus("H100"), VllmFlags{});
  EXPECT_TRUE(notes(h100, "1 dummy image(s) of 4,160 embeddings"));
}

// paligemma.py takes the SigLIP encoder info's tokens, (448 / 14)² = 1,024, one per patch, where
// Gemma 3 pools its 4,096 patches to 256. A SigLIP tower of another architecture (MiniMax-VL-01's
// tiles) is not sized, so the range allows for its pass instead of borrowing Gemma 3's 256.
TEST(SiglipTowers, PaliGemmaHandsEveryPatchOnAndOthersAreUnsized) {
  auto m = parse_model_config_text(k_paligemma, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const Prediction h100 = test_support::run(*m, test_support::gpus("H100"), VllmFlags{});
  EXPECT_TRUE(notes(h100, "dummy image(s) of 1,024 embeddings"));
  auto other = parse_model_config_text(minimax_vl(), "config.json");
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_TRUE(names(test_support::run(*other, test_support::gpus("H100"), VllmFlags{}),
                    "the largest input of MiniMaxVL01ForConditionalGeneration's processor unsized"));
}

// microsoft/Phi-3.5-vision-instruct's shape: no vision_config, an img_processor naming CLIP.
constexpr const char* k_phi3v = R"({"architectures": ["Phi3VForCausalLM"], "model_type": "phi3_v", "hidden_size": 3072,
  "intermediate_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 32, "num_hidden_layers": 32,
  "vocab_size": 32064, "max_position_embeddings": 131072, "rope_theta": 10000.0, "torch_dtype": "bfloat16",
  "embd_layer": {"embedding_cls": "image", "hd_transform_order": "sub_glb", "projection_cls": "mlp", "use_hd_transform": true,
    "with_learnable_separator": true},
  "img_processor": {"image_dim_out": 1024, "model_name": "openai/clip-vit-large-patch14-336", "name": "clip_vision_model",
    "num_img_tokens": 144}})";

// phi3v.py's dummy is 50 x 8000 pixels. processing_phi3_v.py calc_hd_transform_size: ratio 160, so
// the largest scale with scale x ceil(scale / 160) <= num_crops is num_crops itself; the image
// becomes num_crops crops by one, and calc_num_image_tokens_from_image_size gives
// (num_crops + 1) x 144 + 1 + (num_crops + 1) x 12: 2,653 for Phi-3-vision's 16 (taken when the
// processor config is not read), 781 for Phi-3.5-vision's 4. At the H100's 8192 batched tokens:
// 3 and 10 images. The pixel values are padded to num_crops + 1 crops of 577 CLIP patches.
TEST(Phi3Vision, ProfilesTheHdTransformsCrops) {
  auto m = parse_model_config_text(k_phi3v, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->depth, 23);  // layer_idx -2 by default
  const Prediction h100 = test_support::run(*m, test_support::gpus("H100"), VllmFlags{});
  EXPECT_TRUE(notes(h100, "3 dummy image(s) of 2,653 embeddings"));
  VllmFlags four;
  four.mm_processor_kwargs = R"({"num_crops": 4})";
  EXPECT_TRUE(notes(test_support::run(*m, test_support::gpus("H100"), four), "10 dummy image(s) of 781 embeddings"));
}

// phi3v.py Phi3HDImageEmbedding: the CLIP tower to its 23rd layer, the separators and img_projection.
TEST(Phi3Vision, WeightsHaveTheClipTowerAndTheProjection) {
  auto m = parse_model_config_text(k_phi3v, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const WeightsInventory inv = synthesize_weights(*m);
  auto shape_of = [&](const std::string& name) { return tensor_shape(inv, name); };
  EXPECT_EQ(shape_of("model.vision_embed_tokens.img_projection.0.weight"), (std::vector<std::int64_t>{3072, 4096}));
  EXPECT_EQ(shape_of("model.vision_embed_tokens.sub_GN"), (std::vector<std::int64_t>{1, 1, 1, 4096}));
  EXPECT_FALSE(shape_of("model.vision_embed_tokens.img_processor.vision_model.encoder.layers.22.mlp.fc1.weight").empty());
  EXPECT_TRUE(shape_of("model.vision_embed_tokens.img_processor.vision_model.encoder.layers.23.mlp.fc1.weight").empty());
}

// A hostile pinpoint list is refused at the edge, with the key named.
TEST(LlavaNext, RefusesImplausiblePinpoints) {
  std::string text = k_llava_next;
  const std::string from = "[[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]]";
  text.replace(text.find(from), from.size(), "[[336, 0]]");
  auto m = parse_model_config_text(text, "config.json");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("image_grid_pinpoints"), std::string::npos);
}

}  // namespace
}  // namespace headroom
