// Vision towers in the synthesised weights: each family's layout (vLLM's model files) and the
// totals vLLM logged ("Model loading took X GiB") for the multimodal models of the calibration logs.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/encoder_profile.h"
#include "engine/weights.h"
#include "headroom/model.h"
#include "headroom/units.h"
#include "unit/engine_test_support.h"
#include "unit/vision_configs.h"
#include "unit/model_test_support.h"

namespace headroom {
namespace {

using test_support::find_tensor;
using test_support::model;

std::int64_t params_with_prefix(const WeightsInventory& inv, const std::string& prefix) {
  std::int64_t n = 0;
  for (const auto& t : inv.tensors) {
    if (t.name.rfind(prefix, 0) != 0) continue;
    std::int64_t e = 1;
    for (auto d : t.shape) e *= d;
    n += e;
  }
  return n;
}

// Rank 0's weights plus what the model allocates at load, as predict() adds them.
double rank0_weights_gib(const std::string& id, int tp, int max_num_batched_tokens = 8192) {
  ModelSpec m = model(id);
  WeightsInventory inv = synthesize_weights(m);
  engine::WeightPlan plan;
  plan.tensor_parallel_size = tp;
  plan.dtype = "bfloat16";
  plan.gpu_architecture = "Hopper";
  return to_gib(engine::stage_weights(m, inv, plan).front().bytes + engine::load_buffers(m, max_num_batched_tokens, plan.dtype));
}

// "Model loading took X GiB" of vLLM v0.19.0 on H100s (llm-d-planner's validation sweep logs in
// calibration/startup.jsonl), and of v0.10/v0.11 runs for dots.ocr and Qwen3-VL. Before the
// vision towers were sized these models were 0.4 to 0.9 GiB short.
TEST(VisionWeights, MultimodalModelsLoadWhatVllmLogged) {
  struct Case {
    const char* id;
    int tp;
    double logged_gib;
  };
  // All of these runs have max_num_batched_tokens 8192 except dots.ocr's (2048), which has no
  // load-time buffers that depend on it.
  for (const Case& c : {Case{"moonshotai/Kimi-VL-A3B-Instruct", 1, 30.74},
                        Case{"mistralai/Mistral-Small-3.1-24B-Instruct-2503", 1, 44.76},
                        Case{"google/gemma-3-12b-it", 1, 23.31},
                        Case{"google/gemma-3-4b-it", 1, 8.58},
                        Case{"meta-llama/Llama-4-Scout-17B-16E-Instruct", 4, 53.12},
                        Case{"rednote-hilab/dots.ocr", 1, 5.7174},
                        Case{"Qwen/Qwen3-VL-30B-A3B-Instruct", 1, 58.2294}}) {
    const double gib = rank0_weights_gib(c.id, c.tp);
    EXPECT_NEAR(gib, c.logged_gib, 0.01 * c.logged_gib) << c.id << " at TP " << c.tp;
  }
}

// gemma4_mm.py / gemma3n_mm.py pre-allocate per_layer_embeddings = torch.zeros(max_num_batched_tokens,
// num_hidden_layers, hidden_size_per_layer_input) in the model dtype when the wrapper is built,
// so "Model loading took" grows with the batch: Gemma 4 E2B (35 layers x 256) at 8192 tokens holds
// 8192 x 35 x 256 x 2 bytes = 140 MiB, at 2048 a quarter of it.
TEST(VisionWeights, GemmaPerLayerEmbeddingsBufferScalesWithTheBatch) {
  const ModelSpec m = model("google/gemma-4-E2B-it");
  ASSERT_EQ(m.num_layers, 35);
  ASSERT_EQ(m.hidden_size_per_layer_input, 256);
  EXPECT_EQ(engine::load_buffers(m, 8192, "bfloat16") - engine::load_buffers(m, 2048, "bfloat16"),
            Bytes{6144} * 35 * 256 * 2);
  EXPECT_EQ(engine::load_buffers(m, 2048, "bfloat16"), Bytes{2048} * 35 * 256 * 2);
  // A text model has no such buffer.
  EXPECT_EQ(engine::load_buffers(model("meta-llama/Llama-3.1-8B-Instruct"), 8192, "bfloat16"), 0);
}

// Text-only mode (every modality at 0, or --language-model-only) from v0.10.1: the model classes
// build no encoder or projector (#22299), so what loads is the language model alone.
// mrope.py MRotaryEmbedding.__init__: cache_max_position_num = max_position_embeddings * 4, one
// [4 x 262144, 128] bfloat16 cos/sin table shared by all layers (get_rope's cache), on every rank.
// The three Qwen3-VL-30B-A3B loads vLLM logged (v0.11: 58.2294 GiB at TP 1, 29.3109 at TP 2 with
// max_num_batched_tokens 8192, 14.7708 at TP 4 with 2048) differ from the checkpoint's share by the
// same amount at every TP size, which is what a replicated table does.
TEST(VisionWeights, MropeCacheCoversFourTimesTheMaxPosition) {
  const ModelSpec m = model("Qwen/Qwen3-VL-30B-A3B-Instruct");
  EXPECT_TRUE(engine::uses_mrope(m));
  EXPECT_EQ(engine::mrope_cache_factor(m, VllmVersion{0, 11}), 4);
  EXPECT_EQ(engine::mrope_cache_factor(m, VllmVersion{0, 7, 1}), 1);
  EXPECT_FALSE(engine::uses_mrope(model("Qwen/Qwen3-30B-A3B")));
  WeightsInventory inv = synthesize_weights(m);
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  plan.rope_cache_positions_factor = engine::mrope_cache_factor(m, VllmVersion{0, 11});
  EXPECT_EQ(engine::stage_weights(m, inv, plan).front().rope_cache, Bytes{4} * 262144 * 128 * 2);
  struct Case {
    int tp, batched;
    double logged_gib;
  };
  for (const Case& c : {Case{1, 8192, 58.2294}, Case{2, 8192, 29.3109}, Case{4, 2048, 14.7708}}) {
    plan.tensor_parallel_size = c.tp;
    const double gib = to_gib(engine::stage_weights(m, inv, plan).front().bytes + engine::load_buffers(m, c.batched, plan.dtype));
    EXPECT_NEAR(gib, c.logged_gib, 0.03) << "TP " << c.tp;
  }
}

// Gemma 3's sliding layers use rope_local_base_freq unscaled beside the global layers' linear
// factor 8 (gemma3.py; #33911 logs the global table's 1,048,576 rows); Gemma 4's full-attention
// layers use a proportional rope as wide as global_head_dim 512 (gemma4_rope.py) beside the sliding
// layers' [max_position, 256]. get_rope shares each table between the layers of its type.
TEST(VisionWeights, GemmaBuildsOneRopeTablePerLayerType) {
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  const ModelSpec g3 = model("google/gemma-3-4b-it");
  EXPECT_EQ(engine::stage_weights(g3, synthesize_weights(g3), plan).front().rope_cache,
            Bytes{1'048'576 + 131'072} * 256 * 2);
  const ModelSpec g4 = model("google/gemma-4-E2B");
  EXPECT_EQ(engine::stage_weights(g4, synthesize_weights(g4), plan).front().rope_cache, Bytes{131'072} * (256 + 512) * 2);
}

// Qwen3.5 writes partial_rotary_factor inside text_config.rope_parameters (transformers v5):
// rotary_dim is a quarter of head_dim 256.
TEST(VisionWeights, PartialRotaryFactorIsReadFromRopeParameters) {
  auto m = parse_model_config_text(R"({"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
    "text_config": {"model_type": "qwen3_5_text", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 16,
    "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 12288, "vocab_size": 248320,
    "max_position_embeddings": 262144, "rope_parameters": {"rope_type": "default", "mrope_section": [11, 11, 10],
    "mrope_interleaved": true, "partial_rotary_factor": 0.25, "rope_theta": 10000000}}})",
                                  "config.json");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_DOUBLE_EQ(m->partial_rotary_factor, 0.25);
  ASSERT_TRUE(m->rope_scaling);
  EXPECT_TRUE(m->rope_scaling->mrope_sections);
}

TEST(VisionWeights, TextOnlyModeLoadsNoTower) {
  ModelSpec m = model("Qwen/Qwen2.5-VL-7B-Instruct");
  WeightsInventory inv = synthesize_weights(m);
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  const Bytes full = engine::stage_weights(m, inv, plan).front().bytes;
  plan.skip_mm_towers = true;
  const Bytes text = engine::stage_weights(m, inv, plan).front().bytes;
  const double tower = static_cast<double>(params_with_prefix(inv, "visual.")) * 2.0;
  EXPECT_GT(tower, 0.0);
  EXPECT_NEAR(static_cast<double>(full - text), tower, 1.0);
}

// Gemma 4 E2B served with --language-model-only on vLLM v0.21 (calibration row
// wild3-l4-gemma4-e2b-bf16-langonly-8k-eager-v0210): "Model loading took 8.89 GiB". Most of it is
// the per-layer embedding table (262144 × 35 × 256) and the double-wide MLPs of the 20 KV-shared
// layers; without them the language model came to 3.3 GiB.
TEST(VisionWeights, Gemma4PerLayerEmbeddingsAndDoubleWideMlpsLoad) {
  ModelSpec m = model("google/gemma-4-E2B");
  ASSERT_EQ(m.hidden_size_per_layer_input, 256);
  ASSERT_TRUE(m.double_wide_mlp);
  WeightsInventory inv = synthesize_weights(m);
  const auto* ple = find_tensor(inv, "language_model.model.embed_tokens_per_layer.weight");
  ASSERT_NE(ple, nullptr);
  EXPECT_EQ(ple->shape, (std::vector<std::int64_t>{262144, 35 * 256}));
  const auto* narrow = find_tensor(inv, "language_model.model.layers.14.mlp.gate_proj.weight");
  const auto* wide = find_tensor(inv, "language_model.model.layers.15.mlp.gate_proj.weight");
  ASSERT_NE(narrow, nullptr);
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(narrow->shape.front() * 2, wide->shape.front());
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  plan.skip_mm_towers = true;
  const double gib = to_gib(engine::stage_weights(m, inv, plan).front().bytes);
  EXPECT_NEAR(gib, 8.89, 0.05 * 8.89);
}

TEST(VisionWeights, KimiVlHasAnUntiedHeadAndTheMergedProjector) {
  ModelSpec m = model("moonshotai/Kimi-VL-A3B-Instruct");
  // The catalogue line has no model_type: the language model is DeepseekV2ForCausalLM built from a
  // DeepSeek-V3-style text config, whose tie_word_embeddings defaults to false.
  EXPECT_FALSE(m.tie_word_embeddings);
  ASSERT_TRUE(m.vision);
  EXPECT_EQ(m.vision->spatial_merge_size, 2);  // merge_kernel_size [2, 2]
  WeightsInventory inv = synthesize_weights(m);
  EXPECT_TRUE(find_tensor(inv, "language_model.lm_head.weight") || find_tensor(inv, "lm_head.weight"));
  // kimi_vl.py: linear_1 is (1152·2·2) → (1152·2·2), linear_2 → the text hidden size 2048.
  const TensorInfo* l1 = find_tensor(inv, "multi_modal_projector.linear_1.weight");
  const TensorInfo* l2 = find_tensor(inv, "multi_modal_projector.linear_2.weight");
  ASSERT_TRUE(l1 && l2);
  EXPECT_EQ(l1->shape, (std::vector<std::int64_t>{4608, 4608}));
  EXPECT_EQ(l2->shape, (std::vector<std::int64_t>{2048, 4608}));
}

TEST(VisionWeights, Qwen3VlHasPlainMlpsAndDeepstackMergers) {
  ModelSpec m = model("Qwen/Qwen3-VL-30B-A3B-Instruct");
  ASSERT_TRUE(m.vision);
  EXPECT_EQ(m.vision->deepstack_layers, 3);  // deepstack_visual_indexes [8, 16, 24]
  WeightsInventory inv = synthesize_weights(m);
  EXPECT_TRUE(find_tensor(inv, "visual.blocks.26.mlp.linear_fc1.weight"));
  EXPECT_FALSE(find_tensor(inv, "visual.blocks.0.mlp.gate_proj.weight"));
  EXPECT_FALSE(find_tensor(inv, "visual.blocks.27.attn.qkv.weight"));
  // qwen3_vl.py: the deepstack mergers normalise after the 2×2 shuffle (width 4 × 1152).
  const TensorInfo* norm = find_tensor(inv, "visual.deepstack_merger_list.2.norm.weight");
  ASSERT_TRUE(norm);
  EXPECT_EQ(norm->shape, (std::vector<std::int64_t>{4608}));
  EXPECT_FALSE(find_tensor(inv, "visual.deepstack_merger_list.3.norm.weight"));
  const TensorInfo* pos = find_tensor(inv, "visual.pos_embed.weight");
  ASSERT_TRUE(pos);
  EXPECT_EQ(pos->shape, (std::vector<std::int64_t>{2304, 1152}));
  const TensorInfo* patch = find_tensor(inv, "visual.patch_embed.proj.weight");
  ASSERT_TRUE(patch);
  EXPECT_EQ(patch->shape, (std::vector<std::int64_t>{1152, 3, 2, 16, 16}));
  // qwen3_vl_moe.py registers three zeroed [max_num_batched_tokens, 2048] buffers at load.
  EXPECT_EQ(engine::load_buffers(m, 8192, "bfloat16"), 3LL * 8192 * 2048 * 2);
  EXPECT_EQ(engine::load_buffers(m, 2048, "bfloat16"), 3LL * 2048 * 2048 * 2);
  EXPECT_EQ(engine::load_buffers(model("google/gemma-3-12b-it"), 8192, "bfloat16"), 0);
  // predict() charges them to the first stage's weights, sized by the run's batched tokens.
  VllmFlags f;
  f.max_model_len = 16384;
  f.max_num_batched_tokens = 8192;
  Prediction large = test_support::run(m, test_support::gpus("H100"), f);
  f.max_num_batched_tokens = 2048;
  Prediction small = test_support::run(m, test_support::gpus("H100"), f);
  EXPECT_EQ(large.memory.weights - small.memory.weights, 3LL * (8192 - 2048) * 2048 * 2);
}

// Qwen2-VL's first releases (the catalogue's Qwen2-VL-2B-Instruct and UI-TARS lines, and configs
// like this one) write only hidden_size, in_chans and spatial_patch_size in vision_config;
// transformers' Qwen2VLVisionConfig fills the rest with its defaults. The tower vLLM then builds
// (qwen2_vl.py): a bias-free Conv3d patch embedding 3 x 2 x 14 x 14 -> 1280 (1,505,280), 32 blocks of
// LayerNorm x 2, qkv 1280 -> 3840 and proj with biases, fc1 1280 -> 5120 and fc2 back with biases
// (19,677,440 each), and the merger's LayerNorm(1280) with 5120 -> 5120 -> 1536 (34,087,936): 665,271,296
// parameters, 1.24 GiB in bf16. Before the defaults were applied no tower was counted at all.
TEST(VisionWeights, Qwen2VlCompactVisionConfigTakesTransformersDefaults) {
  const char* k_config = R"({"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
    "hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12,
    "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 32768, "rope_theta": 1000000.0,
    "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}, "tie_word_embeddings": true,
    "torch_dtype": "bfloat16", "vision_config": {"hidden_size": 1536, "in_chans": 3, "spatial_patch_size": 14}})";
  auto parsed = parse_model_config_text(k_config, "config.json");
  ASSERT_TRUE(parsed) << parsed.error().message;
  for (const ModelSpec& m : {*parsed, model("Qwen/Qwen2-VL-2B-Instruct")}) {
    ASSERT_TRUE(m.vision) << m.location;
    EXPECT_EQ(m.vision->depth, 32);
    EXPECT_EQ(m.vision->hidden_size, 1280);
    EXPECT_EQ(m.vision->intermediate_size, 5120);
    EXPECT_EQ(m.vision->num_heads, 16);
    EXPECT_EQ(m.vision->out_hidden_size, 1536);
    EXPECT_EQ(params_with_prefix(synthesize_weights(m), "visual."), 665271296) << m.location;
  }
}

// MinerU2.5 (opendatalab/MinerU2.5-2509-1.2B and the Pro releases) is Qwen2-VL as vLLM serves it:
// architectures ["Qwen2VLForConditionalGeneration"], qwen2_vl.py with no plugin (MinerU starts vLLM
// with a logits processor and gpu_memory_utilization only). Its tower is Qwen2-VL's ViT (depth 32,
// 1280 wide, 16 heads, patch 14, merge 2): the patch embedding 1,505,280, 32 blocks of 19,677,440,
// and the merger to the 896-wide Qwen2-0.5B decoder, LayerNorm(1280) with 5120 -> 5120 -> 896 and
// biases (30,810,496): 661,993,856. The decoder: the tied 151936 x 896 embedding (136,134,656), 24
// layers of 14,912,384 (q 896 -> 896 and k, v 896 -> 128 with biases, o without, gate/up/down 4864,
// two RMSNorms) and the final norm (896): 494,032,768. In all 1,156,026,624 parameters, the same
// whether the text settings sit at the top (2509) or in `text_config` (the Pro releases' layout).
TEST(VisionWeights, MinerU25IsQwen2VlWithItsTowerCounted) {
  const std::string text = R"("hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
    "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 16384,
    "rope_theta": 1000000.0, "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]},
    "tie_word_embeddings": true, "torch_dtype": "bfloat16")";
  const std::string vision = R"("vision_config": {"depth": 32, "embed_dim": 1280, "hidden_size": 896, "mlp_ratio": 4,
    "num_heads": 16, "in_chans": 3, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2})";
  const std::string head = R"({"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl", )";
  for (const std::string& config : {head + text + ", " + vision + "}",
                                    head + R"("text_config": {"model_type": "qwen2_vl_text", )" + text + "}, " + vision +
                                        R"(, "torch_dtype": "bfloat16"})"}) {
    auto m = parse_model_config_text(config, "config.json");
    ASSERT_TRUE(m) << m.error().message;
    ASSERT_TRUE(m->vision);
    EXPECT_EQ(m->hidden_size, 896);
    EXPECT_EQ(m->num_layers, 24);
    const WeightsInventory inv = synthesize_weights(*m);
    EXPECT_EQ(params_with_prefix(inv, "visual."), 661993856);
    EXPECT_EQ(params_with_prefix(inv, ""), 1156026624);
    // The prediction says how much of the weights the tower is and where that comes from:
    // 661,993,856 bf16 parameters = 1.23 GiB.
    const Prediction p = test_support::run(*m, test_support::gpus("RTX 4090"), VllmFlags{});
    EXPECT_NE(std::find(p.notes.begin(), p.notes.end(),
                        "the weights include 1.23 GiB of multimodal encoders and projectors on the first GPU, laid out "
                        "from the model's config (its vision settings, in vLLM's module shapes for "
                        "Qwen2VLForConditionalGeneration)"),
              p.notes.end());
  }
}

// Llama 3.2 Vision's tower as vLLM builds it (mllama.py MllamaVisionModel, transformers'
// MllamaVisionConfig defaults for the keys the catalogue line leaves out): per block qkv 1280 ->
// 3840 and o_proj without biases, fc1/fc2 1280 <-> 5120 with them and two LayerNorms
// (19,672,320); 32 local blocks and 8 gated global ones (+2 gates each); the patch embedding
// 1280 x 588; the class token; the gated position table (1601 x 1280, + gate) and its tile table
// (9 aspect-ratio ids x 4 tiles x 1601 x 1280); the pre- and post-tile tables (9 x 5120, + gate
// each) and two LayerNorms: 863,567,379 parameters; the projector 7680 -> 4096 with bias
// 31,461,376 more. Before, the tower was laid out as SigLIP's: no global encoder, no tile tables.
TEST(VisionWeights, MllamaHasTheGlobalEncoderAndTileTables) {
  ModelSpec m = model("meta-llama/Llama-3.2-11B-Vision-Instruct");
  ASSERT_TRUE(m.vision);
  EXPECT_EQ(m.vision->global_layers, 8);
  EXPECT_EQ(m.vision->aspect_ratio_ids, 8);
  const WeightsInventory inv = synthesize_weights(m);
  EXPECT_EQ(params_with_prefix(inv, "vision_model."), 863567379);
  EXPECT_EQ(params_with_prefix(inv, "multi_modal_projector."), 31461376);
  EXPECT_TRUE(find_tensor(inv, "vision_model.global_transformer.layers.7.gate_ffn"));
  // With the language model (32 self- and 8 cross-attention layers) that is the checkpoint's
  // 10,670,220,835 parameters in bf16 on one GPU, plus the rotary cos/sin cache vLLM builds at load
  // (131,072 positions x 128 x 2 bytes, rotary_embedding.py); the tables are whole nn.Embedding
  // tensors, not vocabulary-padded (an earlier draft padded the 9-row tile table to 64: +0.84 GiB).
  // The tolerance is the 8 image-token rows vLLM adds to the text embedding (64 KiB).
  const double rope_cache = 131072.0 * 128 * 2;
  EXPECT_NEAR(rank0_weights_gib("meta-llama/Llama-3.2-11B-Vision-Instruct", 1), (10670220835.0 * 2 + rope_cache) / (1 << 30), 0.0001);
}

// The thinker's towers as the checkpoint's module tree (transformers' Qwen3OmniMoeForConditionalGeneration)
// lays them out. Audio: conv2d1 1 -> 480 (4,800), conv2d2 and conv2d3 480 -> 480 (2,074,080 each), all
// 3 x 3 with biases; conv_out 7,680 -> 1,280 without bias (9,830,400); 32 layers of biased q/k/v/out
// 1,280², fc1/fc2 1,280 <-> 5,120 and two LayerNorms (19,677,440 each); ln_post; proj1 1,280 -> 1,280
// and proj2 1,280 -> 2,048 with biases: 647,927,168. Vision: Qwen3-VL's layout (Conv3d 3 x 2 x 16 x 16
// -> 1,152 with bias, a 2,304-row position table, 27 blocks, the merger and three deepstack
// mergers over 4,608): 538,631,408. Before, the thinker_config was not read at all.
TEST(VisionWeights, Qwen3OmniLoadsTheThinkersTowers) {
  auto m = parse_model_config_text(test_support::k_qwen3_omni_30b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hidden_size, 2048);
  EXPECT_EQ(m->num_layers, 48);
  ASSERT_TRUE(m->moe);
  EXPECT_EQ(m->moe->num_experts, 128);
  ASSERT_TRUE(m->vision);
  ASSERT_TRUE(m->audio);
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "audio_tower."), 647927168);
  EXPECT_EQ(params_with_prefix(inv, "visual."), 538631408);
  // The release's preprocessor_config.json: Qwen2VLImageProcessor, max_pixels 12845056, 16-pixel
  // patches merged 2 x 2: the largest image is 3,584² pixels, 12,544 embeddings. At the thinker's
  // 65,536 positions the dummy video Qwen2_5OmniThinkerDummyInputsBuilder builds from
  // qwen2_vl.py's get_num_frames_with_most_features outranks it from v0.11: frames =
  // min(2 x floor(65,536 / 12,544), 14) = 10, five temporal slices of 12,544 = 62,720 embeddings.
  auto profiled = [&](std::int64_t max_model_len, VllmVersion version) {
    VllmFlags f;
    f.max_model_len = max_model_len;
    std::string note;
    for (const auto& n : test_support::run(*m, test_support::gpus("H100"), f, version).notes)
      if (n.find("dummy") != std::string::npos && n.find("profile run") != std::string::npos) note = n;
    return note;
  };
  EXPECT_NE(profiled(65536, {0, 19, 0}).find("1 dummy video(s) of 62,720 embeddings"), std::string::npos)
      << profiled(65536, {0, 19, 0});
  // Below two images' worth of tokens (25,088) and before v0.11 the image stays.
  EXPECT_NE(profiled(16384, {0, 19, 0}).find("1 dummy image(s) of 12,544 embeddings"), std::string::npos);
  EXPECT_NE(profiled(65536, {0, 10, 1}).find("1 dummy image(s) of 12,544 embeddings"), std::string::npos);
  // Images and video off leave audio on: vLLM still builds the towers and profiles the audio
  // encoder on its dummy 30 s clips, now sized (EncoderProfile.Qwen3OmniConvolvesItsDummyClipsInChunks):
  // the range keeps no allowance for an unsized pass, and the notes give vLLM's log line for the
  // batch (8,192 tokens on an H100: 10 clips). With audio off too it is text only (v0.10.1+ skips
  // the towers' weights).
  VllmFlags no_vision;
  no_vision.limit_mm_per_prompt = {{"image", 0}, {"video", 0}};
  EXPECT_FALSE(engine::text_only_mode(*m, no_vision));
  const Prediction audio_only = test_support::run(*m, test_support::gpus("H100"), no_vision);
  if (audio_only.uncertainty)
    for (const auto& r : audio_only.uncertainty->reasons) EXPECT_EQ(r.find("is not sized"), std::string::npos) << r;
  bool logged = false;
  for (const auto& n : audio_only.notes) logged = logged || n.find("profiled with 10 audio items") != std::string::npos;
  EXPECT_TRUE(logged);
  no_vision.limit_mm_per_prompt["audio"] = 0;
  EXPECT_TRUE(engine::text_only_mode(*m, no_vision));
  // A hostile layer count is refused at the edge, with the key named, before any layout.
  std::string hostile = test_support::k_qwen3_omni_30b;
  hostile.replace(hostile.find("\"encoder_layers\": 32"), std::string("\"encoder_layers\": 32").size(), "\"encoder_layers\": 900000");
  auto refused = parse_model_config_text(hostile, "config.json");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("audio_config.encoder_layers"), std::string::npos) << refused.error().message;
  // From a checkpoint's own headers: the talker's and code2wav's tensors are not loaded.
  WeightsInventory headers, thinker_only;
  headers.exact = thinker_only.exact = true;
  for (const char* name : {"thinker.model.embed_tokens.weight", "talker.model.codec_embedding.weight", "code2wav.decoder.0.weight"})
    headers.tensors.push_back(TensorInfo{name, "BF16", {1024, 1024}, 2 * 1024 * 1024});
  thinker_only.tensors.push_back(headers.tensors.front());
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  plan.gpu_architecture = "Hopper";
  EXPECT_EQ(engine::stage_weights(*m, headers, plan).front().bytes, engine::stage_weights(*m, thinker_only, plan).front().bytes);
}

// Phi-4-multimodal's release checkpoint keeps its vision and speech LoRA adapters beside each base
// layer (model.layers.N.<proj>.base_layer.weight, .lora_A.vision.weight, .lora_B.speech.weight, ...);
// vLLM's phi4mm.py loads with AutoWeightsLoader(self, skip_substrs=["lora"]), so the adapters'
// tensors take nothing at load and the base layers count as they are.
// Phi-4-multimodal's speech encoder from the release's audio_processor.config (phi4mm_audio.py,
// phi4mm_utils.py): global mean / inverse deviation (2 x 80); the subsampling at time_reduction 8
// (three stride-2 stages of 1,024 channels, dw_striding: 10,240 + 2 x 10,240 + 2 x 1,049,600; out
// 1,024 x (1,024 x 10 features) + 1,024); the T5 bias table 1,000 x 16; per block two GLU
// feed-forwards (2 x 4,724,736), attention (4 x 1,049,600), the conv module (4,206,592) and two
// LayerNorms (4,096): 160 + 12,616,704 + 16,000 + 24 x 17,858,560 = 441,238,304. The speech and
// vision-mode projections: 2 x (1,024 x 3,072 + 3,072 + 3,072² + 3,072) = 25,178,112.
TEST(VisionWeights, Phi4MultimodalLaysOutItsConformerFromTheConfig) {
  auto m = parse_model_config_text(test_support::k_phi4_multimodal, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->audio && m->audio->conformer && m->audio->conformer->laid_out);
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "model.embed_tokens_extend.audio_embed.encoder."), 441238304);
  EXPECT_EQ(params_with_prefix(inv, "model.embed_tokens_extend.audio_embed.audio_projection."), 25178112);
  // phi4mm.py builds its towers whatever the limits: nothing is skipped in text-only mode.
  VllmFlags text_only;
  text_only.limit_mm_per_prompt = {{"image", 0}, {"audio", 0}};
  EXPECT_TRUE(engine::text_only_mode(*m, text_only));
  EXPECT_FALSE(engine::skips_tower_weights(*m, text_only, {0, 12, 0}));
  // The encoder is replicated, not split, at TP 2 (nn.Linear and nn.Conv layers): each rank holds
  // all of it (beside the language model's rotary table, the same on both).
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  WeightsInventory encoder_only;
  for (const auto& t : inv.tensors)
    if (t.name.find("audio_embed.") != std::string::npos) encoder_only.tensors.push_back(t);
  const Bytes tp1 = engine::stage_weights(*m, encoder_only, plan).front().bytes;
  EXPECT_GE(tp1, (441238304 + 25178112) * Bytes{2});
  plan.tensor_parallel_size = 2;
  EXPECT_EQ(engine::stage_weights(*m, encoder_only, plan).front().bytes, tp1);
}

TEST(VisionWeights, Phi4MultimodalSkipsItsLoraAdapters) {
  auto m = parse_model_config_text(test_support::k_phi4_multimodal, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  WeightsInventory with_adapters, base_only;
  with_adapters.exact = base_only.exact = true;
  const TensorInfo base{"model.layers.0.self_attn.qkv_proj.base_layer.weight", "BF16", {5120, 3072}, 2LL * 5120 * 3072};
  with_adapters.tensors.push_back(base);
  base_only.tensors.push_back(base);
  for (const char* name : {"model.layers.0.self_attn.qkv_proj.lora_A.vision.weight", "model.layers.0.self_attn.qkv_proj.lora_B.vision.weight",
                           "model.layers.0.self_attn.qkv_proj.lora_A.speech.weight"})
    with_adapters.tensors.push_back(TensorInfo{name, "BF16", {320, 3072}, 2LL * 320 * 3072});
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  plan.gpu_architecture = "Hopper";
  const auto kept = engine::stage_weights(*m, with_adapters, plan).front().bytes;
  EXPECT_EQ(kept, engine::stage_weights(*m, base_only, plan).front().bytes);
  // The tower's 27th layer and post-LayerNorm, which phi4mm.py does not build, are not loaded; its
  // other layers count as they are (under embed_tokens_extend, but not a vocabulary table whose
  // rows pad to 64: fc1's 4,304 rows stay 4,304).
  WeightsInventory unbuilt = base_only;
  for (const char* name : {"model.embed_tokens_extend.image_embed.img_processor.encoder.layers.26.mlp.fc1.weight",
                           "model.embed_tokens_extend.image_embed.img_processor.post_layernorm.weight"})
    unbuilt.tensors.push_back(TensorInfo{name, "BF16", {4304, 1152}, 2LL * 4304 * 1152});
  EXPECT_EQ(engine::stage_weights(*m, unbuilt, plan).front().bytes, kept);
  unbuilt.tensors.push_back(
      TensorInfo{"model.embed_tokens_extend.image_embed.img_processor.encoder.layers.25.mlp.fc1.weight", "BF16", {4304, 1152}, 2LL * 4304 * 1152});
  EXPECT_EQ(engine::stage_weights(*m, unbuilt, plan).front().bytes - kept, 2LL * 4304 * 1152);
  // Another architecture with tensors of those names loads them: 3 × 320 × 3,072 bf16 more.
  ModelSpec other = *m;
  other.architecture = "Phi3ForCausalLM";
  EXPECT_EQ(engine::stage_weights(other, with_adapters, plan).front().bytes - kept, 3LL * 2 * 320 * 3072);
}

// Qwen2.5-Omni-7B's thinker_config (audio and text as its release writes them). Its audio encoder,
// from transformers' module tree of Qwen2_5OmniAudioEncoder: conv1 128 -> 1,280 and conv2 1,280 ->
// 1,280, kernel 3 with biases (492,800 and 4,916,480); the begin/end embedding 2 x 3,584; 32 layers
// of q/v/out 1,280² with biases and k without (6,557,440), two LayerNorms, fc1/fc2 1,280 <-> 5,120
// (19,676,160 each); ln_post; proj 1,280 -> 3,584 with bias: 639,647,232 parameters.
// Gemma 3n from its config (the release's audio_config and vision_config). The audio tower is
// transformers' Gemma3nAudioEncoder: the subsampling convs 128 x 1 x 3 x 3 and 32 x 128 x 3 x 3 with
// their norms, input_proj_linear 1536 x (32 channels x 32 mel bins after two stride-2 convs), and per
// conformer block 24 x 1536² + 9 x 1536 + 5 x 1536 (depthwise) + 1536 / 8 (per_dim_scale): 1,611,040
// + 12 x 56,644,800 = 681,348,640. Each Gemma3nMultimodalEmbedder holds 128 rows of the tower's
// width, two norms and the projection to 2,048: 1,536 x (128 + 2 + 2,048) = 3,345,408 for audio,
// 2,048 x 2,178 = 4,460,544 for vision. timm's mobilenetv5_300m_enc has 294,126,912 parameters.
TEST(VisionWeights, Gemma3nCountsItsTowersFromTheConfig) {
  auto m = parse_model_config_text(R"({"architectures": ["Gemma3nForConditionalGeneration"], "model_type": "gemma3n",
    "text_config": {"model_type": "gemma3n_text", "hidden_size": 2048, "intermediate_size": 8192, "num_attention_heads": 8,
      "num_key_value_heads": 2, "head_dim": 256, "num_hidden_layers": 30, "vocab_size": 262400,
      "max_position_embeddings": 32768},
    "audio_config": {"model_type": "gemma3n_audio", "hidden_size": 1536, "conf_num_hidden_layers": 12,
      "conf_num_attention_heads": 8, "conf_conv_kernel_size": 5, "input_feat_size": 128, "vocab_size": 128,
      "sscp_conv_channel_size": [128, 32], "sscp_conv_kernel_size": [[3, 3], [3, 3]],
      "sscp_conv_stride_size": [[2, 2], [2, 2]]},
    "vision_config": {"model_type": "gemma3n_vision", "architecture": "mobilenetv5_300m_enc", "hidden_size": 2048,
      "vocab_size": 128, "model_args": null}})",
                                   "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "audio_tower."), 681348640);
  EXPECT_EQ(params_with_prefix(inv, "embed_audio."), 3345408);
  EXPECT_EQ(params_with_prefix(inv, "embed_vision."), 4460544);
  EXPECT_EQ(params_with_prefix(inv, "vision_tower.timm_model."), 294126912);
  // Both towers are replicated at TP 2 (transformers' and timm's modules, not vLLM's parallel layers).
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  const Bytes tp1 = engine::stage_weights(*m, inv, plan).front().bytes;
  plan.tensor_parallel_size = 2;
  const Bytes tp2 = engine::stage_weights(*m, inv, plan).front().bytes;
  EXPECT_GT(tp2, (681348640 + 294126912) * Bytes{2});
  EXPECT_LT(tp2, tp1);
  // From v0.15 a modality limited to 0 leaves its tower and embedder unloaded; before, all four load.
  VllmFlags no_audio;
  no_audio.limit_mm_per_prompt["audio"] = 0;
  EXPECT_TRUE(engine::skips_one_tower(*m, no_audio, {0, 15, 0}, "audio"));
  EXPECT_FALSE(engine::skips_one_tower(*m, no_audio, {0, 15, 0}, "image"));
  EXPECT_FALSE(engine::skips_one_tower(*m, no_audio, {0, 14, 1}, "audio"));
  plan.tensor_parallel_size = 1;
  plan.skip_audio_tower = true;
  EXPECT_EQ(tp1 - engine::stage_weights(*m, inv, plan).front().bytes, (681348640 + 3345408) * Bytes{2});
  VllmFlags text_only = no_audio;
  text_only.limit_mm_per_prompt["image"] = 0;
  EXPECT_TRUE(engine::skips_tower_weights(*m, text_only, {0, 15, 0}));
  EXPECT_FALSE(engine::skips_tower_weights(*m, text_only, {0, 14, 1}));
  // A subsampling kernel that is not a [time, frequency] pair is an error naming the key.
  auto bad = parse_model_config_text(R"({"architectures": ["Gemma3nForConditionalGeneration"], "model_type": "gemma3n",
    "text_config": {"model_type": "gemma3n_text", "hidden_size": 2048, "intermediate_size": 8192, "num_attention_heads": 8,
      "num_key_value_heads": 2, "head_dim": 256, "num_hidden_layers": 30, "vocab_size": 262400},
    "audio_config": {"model_type": "gemma3n_audio", "hidden_size": 1536, "conf_num_hidden_layers": 12,
      "sscp_conv_kernel_size": [[3, 3], [3, 100000]]}})",
                                     "config.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("sscp_conv_kernel_size"), std::string::npos) << bad.error().message;
}

TEST(VisionWeights, Qwen25OmniLoadsItsWhisperStyleAudioEncoder) {
  auto m = parse_model_config_text(test_support::k_qwen2_5_omni_7b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hidden_size, 3584);
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "audio_tower."), 639647232);
  EXPECT_TRUE(find_tensor(inv, "visual.blocks.31.mlp.gate_proj.weight"));  // Qwen2.5-VL's gated MLP
}

// Qwen/Qwen2-Audio-7B-Instruct's config.json (its audio_config writes Whisper-large-v3's encoder:
// 128 mel bins, 32 layers of 1,280, 1,500 positions). qwen2_audio.py builds transformers'
// Qwen2AudioEncoder and one projector: conv1 128 -> 1,280 and conv2 1,280 -> 1,280, kernel 3 with
// biases (492,800 and 4,916,480); the position table 1,500 x 1,280 (1,920,000); per layer q/v/out
// 1,280² with biases and k without, two LayerNorms, fc1/fc2 1,280 <-> 5,120 (19,676,160; 32 of
// them); the closing layer_norm (2,560): 636,968,960; multi_modal_projector.linear 1,280 -> 4,096
// with bias (5,246,976). With the Qwen-7B language model (7,755,190,272) that is the release's 8.4 B.
// Before, the audio tower was not counted (14.45 GiB instead of 15.64).
TEST(VisionWeights, Qwen2AudioCountsItsWhisperEncoderAndProjector) {
  auto m = parse_model_config_text(test_support::k_qwen2_audio_7b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_FALSE(m->vision);
  ASSERT_TRUE(m->audio);
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "audio_tower."), 636968960);
  EXPECT_EQ(params_with_prefix(inv, "multi_modal_projector."), 5246976);
  // Audio at 0 is text-only mode; the tower and projector, built under _mark_tower_model(..., "audio"),
  // are dropped from v0.15.
  VllmFlags text_only;
  text_only.limit_mm_per_prompt["audio"] = 0;
  EXPECT_TRUE(engine::text_only_mode(*m, text_only));
  const auto tower = static_cast<double>(636968960 + 5246976) * 2.0;
  const Prediction with = test_support::run(*m, test_support::gpus("H100"), VllmFlags{});
  const Prediction v19 = test_support::run(*m, test_support::gpus("H100"), text_only, VllmVersion{0, 19, 0});
  const Prediction v14 = test_support::run(*m, test_support::gpus("H100"), text_only, VllmVersion{0, 14, 0});
  EXPECT_NEAR(static_cast<double>(with.memory.weights - v19.memory.weights), tower, 1e6) << with.memory.weights << " " << v19.memory.weights << " " << v14.memory.weights;
  EXPECT_EQ(v14.memory.weights, with.memory.weights);
  // vLLM profiles the audio encoder on its dummy 30 s clips, which headroom sizes
  // (EncoderProfile.Qwen2AudioProfilesItsDummy30SecondClips): the range keeps no 3 GiB allowance for
  // an unsized pass, and the notes give vLLM's log line for the batch (8,192 tokens on an H100: 10
  // clips of 750 embeddings).
  if (with.uncertainty) {
    for (const auto& r : with.uncertainty->reasons) EXPECT_EQ(r.find("is not sized"), std::string::npos) << r;
  }
  bool logged = false;
  for (const auto& n : with.notes) logged = logged || n.find("profiled with 10 audio items") != std::string::npos;
  EXPECT_TRUE(logged);
}

// Gemma 4 E2B's audio encoder (transformers' Gemma4AudioModel, modeling_gemma4.py; gemma4_mm.py
// builds it with AutoModel.from_config), from the catalogue line's audio_config (width 1024, 12
// blocks, 8 heads, channels [128, 32], kernel 5, output 1536). By module:
//   subsampling: conv 128x1x3x3 = 1,152, norm 128, conv 32x128x3x3 = 36,864, norm 32,
//                input_proj_linear 1024 x (128/4 x 32) = 1,048,576                  1,086,752
//   per block:   two feed-forwards 2 x (2 x 4,194,304 + 2 x 1,024) = 16,781,312; attention
//                q/k/v/post and relative_k_proj 5 x 1,048,576 + per_dim_scale 128 = 5,243,008;
//                light conv 2,097,152 + 1,048,576 + depthwise 1024x1x5 = 3,150,848;
//                five norms 5,120                                     25,180,288 x 12 = 302,163,456
//   output_proj: 1536 x 1024 + bias 1536                                               1,574,400
//   embed_audio: embedding_projection 1536 x 1536                                      2,359,296
// 307,183,904 in all (0.57 GiB in bfloat16). Headroom had counted none of it. vLLM builds it under
// _mark_tower_model(vllm_config, "audio"), and the vision tower under {"image", "video"}: audio at
// 0 drops the first, image and video at 0 the second.
TEST(VisionWeights, Gemma4E2bCountsItsAudioEncoder) {
  const ModelSpec m = test_support::model("google/gemma-4-E2B-it");
  ASSERT_TRUE(m.audio);
  const WeightsInventory inv = synthesize_weights(m);
  EXPECT_EQ(params_with_prefix(inv, "audio_tower.") + params_with_prefix(inv, "embed_audio."), 307183904);
  VllmFlags no_audio, no_vision;
  no_audio.limit_mm_per_prompt["audio"] = 0;
  no_vision.limit_mm_per_prompt["image"] = 0;
  const Prediction with = test_support::run(m, test_support::gpus("H100"), VllmFlags{}, VllmVersion{0, 29, 0});
  const Prediction without = test_support::run(m, test_support::gpus("H100"), no_audio, VllmVersion{0, 29, 0});
  EXPECT_NEAR(static_cast<double>(with.memory.weights - without.memory.weights), 307183904.0 * 2.0, 1e6);
  // Images off alone keeps the vision tower, which video still uses.
  const Prediction images_off = test_support::run(m, test_support::gpus("H100"), no_vision, VllmVersion{0, 29, 0});
  EXPECT_EQ(images_off.memory.weights, with.memory.weights);
  no_vision.limit_mm_per_prompt["video"] = 0;
  const Prediction vision_off = test_support::run(m, test_support::gpus("H100"), no_vision, VllmVersion{0, 29, 0});
  const double vision = static_cast<double>(params_with_prefix(inv, "vision_tower.") + params_with_prefix(inv, "embed_vision."));
  EXPECT_NEAR(static_cast<double>(with.memory.weights - vision_off.memory.weights), vision * 2.0, 1e6);
}

// With images and video off and audio on, vLLM profiles Gemma 4's audio encoder on a dummy clip of
// feature_extractor.fft_length samples (gemma4_mm.py get_dummy_mm_data), a few milliseconds: no
// allowance for an unsized audio pass, and none for a vision pass that does not run. Qwen2-Audio's
// 30 s dummy clips are sized too (EncoderProfile.Qwen2AudioProfilesItsDummy30SecondClips).
TEST(VisionWeights, Gemma4AudioOnlyProfilesATinyDummyClip) {
  const ModelSpec m = test_support::model("google/gemma-4-E2B-it");
  VllmFlags audio_only;
  audio_only.limit_mm_per_prompt["image"] = 0;
  audio_only.limit_mm_per_prompt["video"] = 0;
  const Prediction p = test_support::run(m, test_support::gpus("L4"), audio_only, VllmVersion{0, 29, 0});
  ASSERT_TRUE(p.uncertainty);
  for (const auto& r : p.uncertainty->reasons) {
    EXPECT_EQ(r.find("audio encoder's profile pass"), std::string::npos) << r;
    EXPECT_EQ(r.find("vision encoder"), std::string::npos) << r;
  }
}

// Ultravox (audio_config: a Whisper config, encoder only) and Voxtral (voxtral_encoder, which
// writes hidden_size / num_hidden_layers / intermediate_size) build the same Whisper-large encoder
// as Qwen2-Audio above: 636,968,960 parameters under audio_tower. Their projectors, as ultravox.py
// and voxtral.py build them:
// - Ultravox (UltravoxConfig defaults: hidden_size 4096, SwiGLU; this config sets projector_ln_mid
//   as the v0.5 releases do): ln_pre over 1280 x 8 = 10,240, linear_1 10,240 -> 4,096
//   (41,943,040), linear_2 2,048 -> 4,096 (8,388,608), ln_mid over 2,048: 50,343,936.
// - Voxtral Mini: linear_1 5,120 -> 3,072 (15,728,640) and linear_2 3,072² (9,437,184): 25,165,824.
// Before, neither encoder was counted, and then neither projector.
TEST(VisionWeights, UltravoxAndVoxtralCountTheirWhisperEncoders) {
  const char* ultravox = R"({"architectures": ["UltravoxModel"], "model_type": "ultravox", "stack_factor": 8, "projector_ln_mid": true,
    "audio_config": {"model_type": "whisper", "d_model": 1280, "encoder_layers": 32, "encoder_attention_heads": 20,
      "encoder_ffn_dim": 5120, "decoder_layers": 4, "num_mel_bins": 128, "max_source_positions": 1500},
    "text_config": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
      "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128256, "max_position_embeddings": 131072}})";
  const char* voxtral = R"({"architectures": ["VoxtralForConditionalGeneration"], "model_type": "voxtral",
    "audio_config": {"model_type": "voxtral_encoder", "hidden_size": 1280, "intermediate_size": 5120, "num_hidden_layers": 32,
      "num_attention_heads": 20, "num_mel_bins": 128, "max_source_positions": 1500},
    "text_config": {"model_type": "llama", "hidden_size": 3072, "intermediate_size": 8192, "num_attention_heads": 32,
      "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 30, "vocab_size": 131072, "max_position_embeddings": 131072}})";
  for (const char* text : {ultravox, voxtral}) {
    auto m = parse_model_config_text(text, "config.json");
    ASSERT_TRUE(m) << m.error().message;
    ASSERT_TRUE(m->audio);
    EXPECT_EQ(params_with_prefix(synthesize_weights(*m), "audio_tower."), 636968960) << m->architecture;
    EXPECT_EQ(params_with_prefix(synthesize_weights(*m), "multi_modal_projector."),
              m->architecture == "UltravoxModel" ? 50343936 : 25165824)
        << m->architecture;
  }
}

// Ultravox checkpoints that hold the whole Whisper model: ultravox.py's hf_to_vllm_mapper keeps
// audio_tower.model.encoder. (as audio_tower.) and drops the decoder and proj_out, so they add
// nothing; with audio limited to 0 (v0.15 on) the projector goes with the tower
// (_mark_tower_model(vllm_config, "audio") holds both).
TEST(VisionWeights, UltravoxLoadsNoWhisperDecoderAndDropsItsProjectorWithTheTower) {
  auto m = parse_model_config_text(test_support::k_ultravox_v05_8b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  WeightsInventory inv = synthesize_weights(*m);
  engine::WeightPlan plan;
  const Bytes loaded = engine::stage_weights(*m, inv, plan).front().bytes;
  inv.tensors.push_back(TensorInfo{"audio_tower.model.decoder.layers.0.fc1.weight", "BF16", {5120, 1280}, 2LL * 5120 * 1280});
  inv.tensors.push_back(TensorInfo{"audio_tower.proj_out.weight", "BF16", {51866, 1280}, 2LL * 51866 * 1280});
  EXPECT_EQ(engine::stage_weights(*m, inv, plan).front().bytes, loaded);
  plan.skip_audio_tower = true;
  EXPECT_EQ(loaded - engine::stage_weights(*m, inv, plan).front().bytes, (636968960 + 50343936) * Bytes{2});
}

// A GLM-4.1V-9B-shaped vision_config (hidden 1536, 24 blocks, out_hidden_size 4096, intermediate
// 13696, 336-pixel images of 14-pixel patches, attention_bias false). transformers' Glm4vVisionModel
// and vLLM's glm4_1v.py build: the position table 576 x 1536 (884,736); the Conv3d 3 x 2 x 14 x 14 ->
// 1536 with bias (1,807,872); per block two RMSNorms, qkv 1536 -> 4608 and proj without biases and
// the gated MLP 1536 <-> 4096 (28,314,624; 24 of them); post-conv and post RMSNorms; the 2 x 2
// downsampling conv 1536 -> 4096 with bias (25,169,920); the merger's proj 4096², its LayerNorm
// and the gated MLP 4096 <-> 13696 (185,081,856): 892,498,432 parameters. Before, the tower was
// laid out as a SigLIP one.
TEST(VisionWeights, Glm4vHasItsDownsamplingConvAndGatedMerger) {
  auto m = parse_model_config_text(test_support::k_glm_4_1v, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "visual."), 892498432);
  EXPECT_FALSE(find_tensor(inv, "visual.blocks.0.attn.qkv.bias"));
}

// Aya Vision 8B (config.json of the release: SigLIP so400m at 364 pixels, 27 layers, 1152 wide,
// MLP 4304; downsample_factor 2, alignment_intermediate_size 28672). aya_vision.py builds the SigLIP
// tower (all 27 layers for vision_feature_layer -1, and the post-LayerNorm): patch conv 1152 x 3 x
// 14 x 14 with bias (678,528), 26² positions (778,752), per layer q/k/v/out with biases, two
// LayerNorms and fc1/fc2 with biases (15,239,504; 27 of them), post-LayerNorm (2,304): 412,926,192.
// Its projector (AyaVisionMultiModalProjector): LayerNorm over the pixel-shuffled 1152 x 2² = 4608
// (9,216), linear_1 4608 -> 28672 with bias (132,149,248), SwiGLU, linear_2 14336 -> 4096 with bias
// (58,724,352): 190,882,816. Before, the projector was a single 1152 -> 4096 matrix.
TEST(VisionWeights, AyaVisionProjectorIsAPixelShuffledSwiGlu) {
  auto m = parse_model_config_text(test_support::k_aya_vision_8b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "vision_tower."), 412926192);
  EXPECT_EQ(params_with_prefix(inv, "multi_modal_projector."), 190882816);
}

// MiniCPM-V 2.6 (config.json of the release): minicpmv.py builds the Idefics2 SigLIP tower at
// vision_config's 980 pixels (patch conv 678,528; 70² positions 5,644,800; 27 layers of 15,239,504;
// post-LayerNorm 2,304: 417,792,240) and resampler.py's Resampler2_5: 64 queries of 3584
// (229,376), kv_proj 1152 -> 3584 without bias (4,128,768), MultiheadAttention's in_proj (3 x
// 3584² + 3 x 3584) and out_proj (3584² + 3584), three LayerNorms (21,504) and proj 3584²:
// 68,619,264. Before, the resampler was missing and a 1152 -> 3584 matrix stood in for it.
TEST(VisionWeights, MiniCpmVHasItsResampler) {
  auto m = parse_model_config_text(test_support::k_minicpm_v_2_6, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->resampler_queries, 64);
  EXPECT_EQ(m->vision->slice_size, 448);
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "vision_tower."), 417792240);
  EXPECT_EQ(params_with_prefix(inv, "resampler."), 68619264);
  EXPECT_EQ(params_with_prefix(inv, "multi_modal_projector."), 0);
}

// MiniCPM-o 2.6 (MiniCPM-V 2.6's config with the release's Whisper-medium audio_config): the audio
// encoder is transformers' WhisperEncoder (minicpmo.py MiniCPMWhisperEncoder): conv1 80 -> 1,024 and
// conv2 1,024 -> 1,024, kernel 3, biased (246,784 + 3,146,752), the 1,500-row position table
// (1,536,000), 24 layers of q/v/out 1,024² with biases and k without, two LayerNorms and fc1/fc2
// 1,024 <-> 4,096 (12,595,200 each), the closing LayerNorm (2,048): 307,216,384. The projection
// from encoder_ffn_dim / 4 = 1,024 to 3,584 and 3,584 -> 3,584, biased: 16,522,240. minicpmo.py
// loads with skip_prefixes=["tts"], and from v0.15 an audio limit of 0 leaves the encoder unbuilt.
TEST(VisionWeights, MiniCpmOCountsItsWhisperEncoderAndSkipsItsSpeechDecoder) {
  std::string config = test_support::k_minicpm_v_2_6;
  config.replace(config.find("\"MiniCPMV\""), 10, "\"MiniCPMO\"");
  config.insert(config.rfind('}'), R"(, "audio_config": {"model_type": "whisper", "d_model": 1024, "encoder_layers": 24,
      "encoder_attention_heads": 16, "encoder_ffn_dim": 4096, "num_mel_bins": 80, "max_source_positions": 1500})");
  auto m = parse_model_config_text(config, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->architecture, "MiniCPMO");
  WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "apm."), 307216384);
  EXPECT_EQ(params_with_prefix(inv, "audio_projection_layer."), 16522240);
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  const Bytes loaded = engine::stage_weights(*m, inv, plan).front().bytes;
  // The encoder's apm.layers.N are not decoder layers: at PP 2 the second stage holds none of it.
  plan.pipeline_parallel_size = 2;
  WeightsInventory without_audio;
  for (const auto& t : inv.tensors)
    if (!t.name.starts_with("apm.") && !t.name.starts_with("audio_projection_layer.")) without_audio.tensors.push_back(t);
  EXPECT_EQ(engine::stage_weights(*m, inv, plan).back().bytes, engine::stage_weights(*m, without_audio, plan).back().bytes);
  plan.pipeline_parallel_size = 1;
  // Replicated at TP 2 (transformers' WhisperEncoder, nn.Linear projections).
  plan.tensor_parallel_size = 2;
  EXPECT_EQ(engine::stage_weights(*m, inv, plan).front().bytes - engine::stage_weights(*m, without_audio, plan).front().bytes,
            (307216384 + 16522240) * Bytes{2});
  plan.tensor_parallel_size = 1;
  // A checkpoint's speech decoder (tts.*) is not loaded.
  inv.tensors.push_back(TensorInfo{"tts.dvae.decoder.weight", "BF16", {4096, 4096}, 2LL * 4096 * 4096});
  EXPECT_EQ(engine::stage_weights(*m, inv, plan).front().bytes, loaded);
  VllmFlags no_audio;
  no_audio.limit_mm_per_prompt["audio"] = 0;
  EXPECT_TRUE(engine::skips_one_tower(*m, no_audio, {0, 15, 0}, "audio"));
  EXPECT_FALSE(engine::skips_one_tower(*m, no_audio, {0, 14, 0}, "audio"));
  plan.skip_audio_tower = true;
  EXPECT_EQ(loaded - engine::stage_weights(*m, inv, plan).front().bytes, (307216384 + 16522240) * Bytes{2});
}

// Idefics3-8B (idefics3.py Idefics3Connector): the pixel shuffle at scale_factor 2 turns 1152
// channels into 4608, and Idefics3SimpleMLP projects them into the language model's 4096 without a
// bias: 18,874,368 parameters, where a 1152 -> 4096 matrix stood before.
TEST(VisionWeights, Idefics3ConnectorProjectsThePixelShuffledWidth) {
  auto m = parse_model_config_text(test_support::k_idefics3_8b, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const WeightsInventory inv = synthesize_weights(*m);
  const TensorInfo* proj = find_tensor(inv, "connector.modality_projection.proj.weight");
  ASSERT_TRUE(proj);
  EXPECT_EQ(proj->shape, (std::vector<std::int64_t>{4096, 4608}));
  EXPECT_EQ(params_with_prefix(inv, "multi_modal_projector."), 0);
}

// Ovis2.5-9B (the release's config: vit_config beside llm_config, visual_vocab_size 65,536).
// ovis2_5.py and siglip2navit.py build: the NaViT tower, a linear patch embedding 768 -> 1152
// with bias (885,888), the 32 x 32 position table (1,179,648), 27 blocks of q/k/v/out 1152² and
// fc1/fc2 1152 <-> 4304 with biases and two LayerNorms (15,239,504 each), the post-LayerNorm
// (2,304): 413,534,448; the visual head, bias-free 4608 -> 65,532 and a LayerNorm of 65,532
// (302,102,520); the VTE, 65,536 x 4096 (268,435,456). 984,072,424 parameters besides Qwen3-8B.
TEST(VisionWeights, Ovis25CountsItsNaVitHeadAndVisualEmbeddings) {
  const char* config = test_support::k_ovis25_9b;
  auto m = parse_model_config_text(config, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->spatial_merge_size, 2);
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "visual_tokenizer.vit."), 413534448);
  EXPECT_EQ(params_with_prefix(inv, "visual_tokenizer.head."), 302102520);
  EXPECT_EQ(params_with_prefix(inv, "vte."), 268435456);
  EXPECT_EQ(params_with_prefix(inv, "multi_modal_projector."), 0);
  // Text-only mode leaves all three out (vLLM builds no visual tokenizer then).
  engine::WeightPlan plan, text_only;
  plan.dtype = text_only.dtype = "bfloat16";
  plan.gpu_architecture = text_only.gpu_architecture = "Hopper";
  text_only.skip_mm_towers = true;
  EXPECT_EQ(engine::stage_weights(*m, inv, plan).front().bytes - engine::stage_weights(*m, inv, text_only).front().bytes,
            2LL * 984072424);
  // A hostile visual vocabulary is refused with its key.
  std::string hostile = config;
  hostile.replace(hostile.find("\"visual_vocab_size\": 65536"), std::string("\"visual_vocab_size\": 65536").size(),
                  "\"visual_vocab_size\": 900000000");
  auto refused = parse_model_config_text(hostile, "config.json");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("visual_vocab_size"), std::string::npos) << refused.error().message;
}

// PaddleOCR-VL (paddleocr_vl.py Projector, mlp_AR): a LayerNorm over 1152 (2,304), the 2 x 2 merge
// to 4608, linear_1 4608 -> 4608 with bias (21,238,272) and linear_2 4608 -> 1024 with bias
// (4,719,616): 25,960,192 parameters, where a 1152 -> 1024 matrix stood before.
TEST(VisionWeights, PaddleOcrVlProjectorMergesTwoByTwo) {
  auto m = parse_model_config_text(test_support::k_paddleocr_vl, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "mlp_AR."), 25960192);
  EXPECT_EQ(params_with_prefix(inv, "multi_modal_projector."), 0);
}

// DeepSeek-OCR: the release's single safetensors file holds 3,336,106,240 parameters (2,710
// tensors, as a public listing of the checkpoint reports them): the DeepseekV2 language model with
// its own lm_head (vLLM's DeepseekVLV2Config builds it from DeepseekV2Config, untied), SAM ViT-B
// (95,569,152), CLIP-L (303,177,728) and the projector, newline and separator (2,625,280). Before,
// the DeepEncoder and the lm_head were missing (2,769,255,680 in all).
TEST(VisionWeights, DeepseekOcrCountsItsDeepEncoderAndLmHead) {
  auto m = parse_model_config_text(test_support::k_deepseek_ocr, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_FALSE(m->tie_word_embeddings);
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, ""), 3336106240);
  EXPECT_EQ(params_with_prefix(inv, "model.sam_model."), 95569152);
  EXPECT_EQ(params_with_prefix(inv, "model.vision_model."), 303177728);
}

TEST(VisionWeights, PixtralAndDotsHaveGatedMlps) {
  {
    ModelSpec m = model("mistralai/Mistral-Small-3.1-24B-Instruct-2503");
    ASSERT_TRUE(m.vision);
    EXPECT_EQ(m.vision->spatial_merge_size, 2);  // written beside vision_config
    WeightsInventory inv = synthesize_weights(m);
    EXPECT_TRUE(find_tensor(inv, "vision_tower.transformer.layers.23.feed_forward.gate_proj.weight"));
    const TensorInfo* merge = find_tensor(inv, "multi_modal_projector.patch_merger.merging_layer.weight");
    ASSERT_TRUE(merge);
    EXPECT_EQ(merge->shape, (std::vector<std::int64_t>{1024, 4096}));
    // Pixtral: 24 × (4 × 1024² + 3 × 1024 × 4096 + 2 × 1024) + patch conv + ln_pre.
    const std::int64_t block = 4LL * 1024 * 1024 + 3LL * 1024 * 4096 + 2 * 1024;
    EXPECT_EQ(params_with_prefix(inv, "vision_tower."), 24 * block + 1024LL * 3 * 14 * 14 + 1024);
  }
  {
    ModelSpec m = model("rednote-hilab/dots.ocr");
    WeightsInventory inv = synthesize_weights(m);
    const TensorInfo* fc3 = find_tensor(inv, "vision_tower.blocks.41.mlp.fc3.weight");
    ASSERT_TRUE(fc3);
    EXPECT_EQ(fc3->shape, (std::vector<std::int64_t>{4224, 1536}));
    EXPECT_FALSE(find_tensor(inv, "vision_tower.blocks.0.attn.qkv.bias"));  // use_bias false
  }
}

TEST(VisionWeights, Llama4AdapterFollowsThePixelShuffle) {
  ModelSpec m = model("meta-llama/Llama-4-Scout-17B-16E-Instruct");
  ASSERT_TRUE(m.vision);
  WeightsInventory inv = synthesize_weights(m);
  // mllama4.py: pixel shuffle at ratio 0.5 turns 1408 channels into 1408 / 0.25 = 5632.
  const TensorInfo* fc1 = find_tensor(inv, "vision_model.vision_adapter.mlp.fc1.weight");
  ASSERT_TRUE(fc1);
  EXPECT_EQ(fc1->shape, (std::vector<std::int64_t>{4096, 5632}));
  const TensorInfo* proj = find_tensor(inv, "multi_modal_projector.linear_1.weight");
  ASSERT_TRUE(proj);
  EXPECT_EQ(proj->shape, (std::vector<std::int64_t>{5120, 4096}));
  const TensorInfo* pos = find_tensor(inv, "vision_model.positional_embedding_vlm");
  ASSERT_TRUE(pos);
  EXPECT_EQ(pos->shape, (std::vector<std::int64_t>{24 * 24 + 1, 1408}));  // (336 / 14)² + class token
}

TEST(VisionWeights, VisionConfigKeysOfEveryFamilyAreRead) {
  // Kimi-K2.5 prefixes its MoonViT sizes with vt_; MoonViT gives the merge as a kernel.
  auto k25 = parse_model_config(nlohmann::json::parse(R"({
    "architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25",
    "text_config": {"model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 2,
                    "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 1000},
    "vision_config": {"vt_num_hidden_layers": 3, "vt_hidden_size": 32, "vt_intermediate_size": 96,
                      "vt_num_attention_heads": 4, "patch_size": 14, "merge_kernel_size": [2, 2]}
  })"),
                                 "k25.json");
  ASSERT_TRUE(k25) << k25.error().to_string();
  ASSERT_TRUE(k25->vision);
  EXPECT_EQ(k25->vision->depth, 3);
  EXPECT_EQ(k25->vision->hidden_size, 32);
  EXPECT_EQ(k25->vision->intermediate_size, 96);
  EXPECT_EQ(k25->vision->spatial_merge_size, 2);
  WeightsInventory inv = synthesize_weights(*k25);
  EXPECT_TRUE(find_tensor(inv, "vision_tower.encoder.blocks.2.wqkv.weight"));

  auto hostile = parse_model_config(nlohmann::json::parse(R"({
    "architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
    "text_config": {"model_type": "qwen3_vl_text", "hidden_size": 64, "num_hidden_layers": 2,
                    "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 1000},
    "vision_config": {"depth": 100000000, "hidden_size": 32}
  })"),
                                    "hostile.json");
  ASSERT_FALSE(hostile);
  EXPECT_NE(hostile.error().message.find("vision_config.depth"), std::string::npos) << hostile.error().message;
}

// DeepSeek-VL2's tower is timm's vit_so400m_patch14_siglip_384 whatever vision_config writes:
// patch embedding 1152 × 3 × 14² + 1152 (678,528), position table 729 × 1152 (839,808), 27 blocks
// of 15,239,504, the final norm (2,304): 412,987,248, and the unused attention pool (latent 1,152,
// q 1,328,256, kv 2,656,512, proj 1,328,256, norm 2,304, MLP 4,962,512 + 4,959,360: 15,238,352).
// The MlpProjector 4608 → 1280 → 1280 with biases (7,539,200), image_newline and view_seperator
// (2 × 1280). Its blocks are not decoder layers: all 27 load though the language model has 12.
TEST(VisionWeights, DeepseekVl2CountsItsTimmTowerWhateverItsConfigWrites) {
  auto m = parse_model_config_text(test_support::k_deepseek_vl2_tiny, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "vision."), 412987248 + 15238352);
  EXPECT_EQ(params_with_prefix(inv, "projector.layers."), 7539200);
  WeightsInventory text = inv;
  text.tensors.clear();
  text.total_bytes = 0;
  for (const auto& t : inv.tensors)
    if (!t.name.starts_with("vision.") && !t.name.starts_with("projector.") && t.name != "image_newline" && t.name != "view_seperator") {
      text.tensors.push_back(t);
      text.total_bytes += t.bytes;
    }
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  EXPECT_EQ(engine::stage_weights(*m, inv, plan).front().bytes - engine::stage_weights(*m, text, plan).front().bytes,
            2LL * (412987248 + 15238352 + 7539200 + 2 * 1280));
}

// Molmo (molmo.py): VisionBackboneConfig's defaults, whatever config.json writes. ViT: class and
// 577 position rows of 1024, the bias-free 588 -> 1024 patch embedding, pre_ln, 23 blocks of four
// biased 1024² projections, w1/w2 (1024 <-> 4096, biased) and two LayerNorms: 290,909,184. The
// pooling (three biased 2048 -> 1024, one 1024²): 7,344,128. The projector (w1, w3 1024 -> 18944 and
// w2 18944 -> 3584, no bias): 106,692,608. pad_embed [2, 2048]. Together 404,950,016, which with the
// language model is the release index's total_size / 4 (the checkpoint is float32). The language
// model's MLP takes half of intermediate_size for each of gate and up.
TEST(VisionWeights, MolmoBuildsItsFixedBackbone) {
  auto m = parse_model_config_text(test_support::k_molmo_7b_d, "config.json");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->intermediate_size, 18944);
  const WeightsInventory inv = synthesize_weights(*m);
  EXPECT_EQ(params_with_prefix(inv, "model.vision_backbone.image_vit."), 290909184);
  EXPECT_EQ(params_with_prefix(inv, "model.vision_backbone."), 404950016);
  // Its resblocks.N are not decoder layers: they stay on the first pipeline stage.
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  plan.pipeline_parallel_size = 2;
  const auto stages = engine::stage_weights(*m, inv, plan);
  EXPECT_GE(stages.front().bytes - stages.front().layer_bytes, 2LL * 404950016);
  // molmo.py builds the backbone whatever the image limit: text-only mode keeps its weights.
  VllmFlags text_only;
  text_only.limit_mm_per_prompt["image"] = 0;
  EXPECT_FALSE(engine::skips_tower_weights(*m, text_only, VllmVersion{0, 19, 0}));
}

}  // namespace
}  // namespace headroom
