#include <gtest/gtest.h>

#include "engine/weights.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "unit/engine_test_support.h"
#include "unit/model_test_support.h"

namespace headroom {
namespace {

using test_support::find_tensor;
using test_support::model;

TEST(SynthesizeWeights, Llama31_8BTotals) {
  ModelSpec m = model("meta-llama/Llama-3.1-8B-Instruct");
  WeightsInventory inv = synthesize_weights(m);
  EXPECT_FALSE(inv.exact);
  EXPECT_EQ(inv.total_bytes, 16'060'522'496);
  EXPECT_EQ(parameter_count(m), 8'030'261'248);
  const TensorInfo* k = find_tensor(inv, "model.layers.31.self_attn.k_proj.weight");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->shape, (std::vector<std::int64_t>{1024, 4096}));
  EXPECT_EQ(k->dtype, "BF16");
  EXPECT_TRUE(find_tensor(inv, "lm_head.weight"));
}

// A headless decoder (transformers' Qwen2Model, which vLLM serves as an embedding model: the
// gte-Qwen2 family) has no LM head in its checkpoint, and vLLM's pooling adapter builds none: the
// same config as Qwen2ForCausalLM without its vocab x hidden head (151,646 x 3,584 = 543,499,264).
TEST(SynthesizeWeights, HeadlessDecodersHaveNoLmHead) {
  const char* config = R"({"architectures": ["ARCH"], "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
    "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28, "vocab_size": 151646,
    "max_position_embeddings": 32768, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})";
  auto with_arch = [&](const std::string& arch) {
    std::string text = config;
    text.replace(text.find("ARCH"), 4, arch);
    auto m = parse_model_config_text(text, "config.json");
    EXPECT_TRUE(m) << m.error().message;
    return synthesize_weights(*m);
  };
  const WeightsInventory headless = with_arch("Qwen2Model"), generative = with_arch("Qwen2ForCausalLM");
  EXPECT_FALSE(find_tensor(headless, "lm_head.weight"));
  EXPECT_TRUE(find_tensor(generative, "lm_head.weight"));
  EXPECT_EQ(generative.total_bytes - headless.total_bytes, 543'499'264LL * 2);
}

// --runner pooling (v0.10.2+), --convert embed, or --task embed before: vLLM's pooling adapter
// deletes the generative class's LM head (adapters.py), so Qwen3-8B served for embeddings loads
// 151,936 x 4,096 bf16 values less: 1,244,659,712 bytes. --runner generate changes nothing.
TEST(SynthesizeWeights, ThePoolingRunnerDropsTheLmHead) {
  const ModelSpec m = model("Qwen/Qwen3-8B");
  auto flags_of = [](std::vector<std::string> args) {
    auto cmd = parse_vllm_command(args);
    EXPECT_TRUE(cmd) << cmd.error().to_string();
    return cmd ? cmd->flags : VllmFlags{};
  };
  const auto weights = [&](const VllmFlags& f) {
    return test_support::run(m, test_support::gpus("L4"), f).memory.weights;
  };
  const Bytes generate = weights(flags_of({"--runner", "generate"}));
  EXPECT_EQ(generate, weights(VllmFlags{}));
  for (const auto& args : std::vector<std::vector<std::string>>{{"--runner", "pooling"}, {"--convert", "embed"}, {"--task", "embed"}}) {
    const VllmFlags f = flags_of(args);
    EXPECT_TRUE(f.pooling_runner) << args[0];
    EXPECT_EQ(generate - weights(f), 1'244'659'712) << args[0];
  }
}

TEST(SynthesizeWeights, Qwen3TiedEmbeddingsHaveNoLmHead) {
  ModelSpec m = model("Qwen/Qwen3-0.6B");
  WeightsInventory inv = synthesize_weights(m);
  EXPECT_FALSE(find_tensor(inv, "lm_head.weight"));
  EXPECT_TRUE(find_tensor(inv, "model.layers.0.self_attn.q_norm.weight"));
  EXPECT_EQ(parameter_count(m), 596'049'920);
  EXPECT_EQ(inv.total_bytes, 1'192'099'840);
}

TEST(SynthesizeWeights, DeepSeekFp8BlocksAndMla) {
  ModelSpec m = model("deepseek-ai/DeepSeek-V3");
  WeightsInventory inv = synthesize_weights(m);
  // Routed experts are stacked: one tensor per parameter with the expert count first.
  const TensorInfo* w = find_tensor(inv, "model.layers.3.mlp.experts.down_proj.weight");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->dtype, "F8_E4M3");
  EXPECT_EQ(w->shape, (std::vector<std::int64_t>{256, 7168, 2048}));
  EXPECT_EQ(w->bytes, 256LL * 7168 * 2048);
  const TensorInfo* s = find_tensor(inv, "model.layers.3.mlp.experts.down_proj.weight_scale_inv");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->shape, (std::vector<std::int64_t>{256, 56, 16}));
  EXPECT_TRUE(find_tensor(inv, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight"));
  EXPECT_TRUE(find_tensor(inv, "model.layers.0.mlp.gate_proj.weight"));  // first_k_dense_replace
  EXPECT_FALSE(find_tensor(inv, "model.layers.61.self_attn.q_a_proj.weight"));  // the MTP layer is not loaded
  EXPECT_EQ(find_tensor(inv, "model.embed_tokens.weight")->dtype, "BF16");
  // DeepSeek-V3 has 671B parameters without its MTP module.
  EXPECT_NEAR(static_cast<double>(parameter_count(m)) / 1e9, 671.0, 1.0);
}

TEST(SynthesizeWeights, IgnoredModuleNamesWholeComponents) {
  // MiniMax-M2.5's fp8 config keeps "gate" (the router), "e_score_correction_bias" and "lm_head"
  // unquantized (modules_to_not_convert). vLLM compares module names (quantization/utils/
  // quant_utils.py is_layer_skipped, v0.16), so the experts' gate_proj is fp8 like up/down_proj:
  // a v0.16 run at TP 4 logged "Model loading took 54.97 GiB" (about 230 B parameters / 4 in fp8).
  ModelSpec m = model("MiniMaxAI/MiniMax-M2.5");
  WeightsInventory inv = synthesize_weights(m);
  const TensorInfo* gate_proj = find_tensor(inv, "model.layers.0.mlp.experts.gate_proj.weight");
  ASSERT_TRUE(gate_proj);
  EXPECT_EQ(gate_proj->dtype, "F8_E4M3");
  const TensorInfo* router = find_tensor(inv, "model.layers.0.mlp.gate.weight");
  ASSERT_TRUE(router);
  EXPECT_NE(router->dtype, "F8_E4M3");
}

TEST(SynthesizeWeights, GptOssMxfp4Experts) {
  ModelSpec m = model("openai/gpt-oss-20b");
  WeightsInventory inv = synthesize_weights(m);
  const TensorInfo* b = find_tensor(inv, "model.layers.0.mlp.experts.gate_up_proj_blocks");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->dtype, "U8");
  EXPECT_EQ(b->shape, (std::vector<std::int64_t>{32, 5760, 90, 16}));
  EXPECT_EQ(find_tensor(inv, "model.layers.0.self_attn.q_proj.weight")->dtype, "BF16");
  EXPECT_NEAR(static_cast<double>(parameter_count(m)) / 1e9, 20.9, 0.2);
}

TEST(SynthesizeWeights, AwqPacksEightValuesPerInt32) {
  ModelSpec m = model("TheBloke/Mistral-7B-v0.1-AWQ");
  WeightsInventory inv = synthesize_weights(m);
  const TensorInfo* q = find_tensor(inv, "model.layers.0.mlp.down_proj.qweight");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->dtype, "I32");
  EXPECT_EQ(q->shape, (std::vector<std::int64_t>{14336, 512}));
  const TensorInfo* s = find_tensor(inv, "model.layers.0.mlp.down_proj.scales");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->shape, (std::vector<std::int64_t>{112, 4096}));
  EXPECT_EQ(find_tensor(inv, "lm_head.weight")->dtype, "BF16");
}

TEST(SynthesizeWeights, MixtralExpertNames) {
  ModelSpec m = model("mistralai/Mixtral-8x7B-v0.1");
  WeightsInventory inv = synthesize_weights(m);
  const TensorInfo* w2 = find_tensor(inv, "model.layers.0.block_sparse_moe.experts.w2.weight");
  ASSERT_TRUE(w2);
  EXPECT_EQ(w2->shape, (std::vector<std::int64_t>{8, 4096, 14336}));
  EXPECT_NEAR(static_cast<double>(parameter_count(m)) / 1e9, 46.7, 0.1);
}

// A checkpoint header may name any layer: "layers.99999999999" does not fit an int. It is a layer
// beyond the model's, skipped like an MTP layer, instead of an exception that ended the process.
TEST(SynthesizeWeightsRegression, LayerNumberPastIntIsALayerBeyondTheModel) {
  ModelSpec m = model("Qwen/Qwen3-0.6B");
  WeightsInventory inv = synthesize_weights(m);
  inv.exact = true;
  m.weights = inv;
  const GpuSetup h100 = test_support::gpus("H100");
  VllmFlags f;
  f.max_model_len = 4096;
  auto plain = predict(m, h100, f, VllmVersion{0, 19, 0});
  inv.tensors.push_back({"model.layers.99999999999.mlp.down_proj.weight", "BF16", {32768, 32768}, 2147483648});
  m.weights = inv;
  auto hostile = predict(m, h100, f, VllmVersion{0, 19, 0});
  ASSERT_TRUE(plain && hostile);
  EXPECT_EQ(hostile->memory.weights, plain->memory.weights);
}

// A config whose torch_dtype is no dtype ("bfloat08", found by fuzz_model_config) sized its KV
// pages at 0 bytes and divided by them (SIGFPE). The dtype is refused with its name; --dtype
// overrides it.
TEST(SynthesizeWeightsRegression, TorchDtypeThatIsNoDtypeIsAnErrorNamingIt) {
  ModelSpec m = model("Qwen/Qwen3-0.6B");
  m.torch_dtype = "bfloat08";
  const GpuSetup h100 = test_support::gpus("H100");
  VllmFlags f;
  f.max_model_len = 4096;
  auto refused = predict(m, h100, f, VllmVersion{0, 19, 0});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("torch_dtype 'bfloat08'"), std::string::npos) << refused.error().message;
  EXPECT_EQ(refused.error().where, "torch_dtype");
  f.dtype = "half";
  auto overridden = predict(m, h100, f, VllmVersion{0, 19, 0});
  ASSERT_TRUE(overridden);
  EXPECT_TRUE(overridden->starts);
  EXPECT_GT(overridden->kv_cache_tokens, 0);
}

// More attention heads than hidden units and no head_dim (fuzz_model_config): heads of width 0
// sized KV pages of 0 bytes and divided by them. An error names the sizes instead.
TEST(SynthesizeWeightsRegression, AttentionHeadsOfNoWidthAreAnError) {
  ModelSpec m = model("Qwen/Qwen3-0.6B");
  m.head_dim = 0;
  const GpuSetup h100 = test_support::gpus("H100");
  VllmFlags f;
  f.max_model_len = 4096;
  auto refused = predict(m, h100, f, VllmVersion{0, 19, 0});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("attention layers of no width: head_dim 0"), std::string::npos)
      << refused.error().message;
}

TEST(SynthesizeWeights, ExactInventoryIsCountedAsIs) {
  ModelSpec m = model("Qwen/Qwen3-0.6B");
  WeightsInventory inv;
  inv.exact = true;
  inv.tensors.push_back({"a", "BF16", {10, 10}, 200});
  inv.tensors.push_back({"b.qweight", "I32", {2, 10}, 80});
  m.weights = inv;
  EXPECT_EQ(parameter_count(m), 100 + 160);
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

TEST(SynthesizeWeights, FalconFusedQkvWithoutGate) {
  ModelSpec m = model("tiiuae/falcon-7b");
  WeightsInventory inv = synthesize_weights(m);
  const TensorInfo* qkv = find_tensor(inv, "transformer.h.0.self_attention.query_key_value.weight");
  ASSERT_TRUE(qkv);
  EXPECT_EQ(qkv->shape, (std::vector<std::int64_t>{73 * 64, 4544}));  // 71 query heads + 1 K + 1 V
  EXPECT_NEAR(static_cast<double>(parameter_count(m)) / 1e9, 6.92, 0.01);
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

// Regression (found by fuzz/model_config_fuzz.cc): a hybrid pattern with MoE ('E') layers but no
// MoE fields dereferenced the missing MoE config; such layers now hold no experts.
TEST(SynthesizeWeightsRegression, MoePatternWithoutMoeFieldsHasNoExperts) {
  auto m = parse_model_config_text(R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
    "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1024, "max_position_embeddings": 4096,
    "hybrid_override_pattern": "ME*-", "mamba_num_heads": 8, "mamba_head_dim": 32, "ssm_state_size": 16,
    "n_groups": 1, "conv_kernel": 4, "expand": 1, "torch_dtype": "bfloat16"})", "config.json");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_FALSE(m->moe.has_value());
  WeightsInventory inv = synthesize_weights(*m);
  for (const auto& t : inv.tensors) EXPECT_EQ(t.name.find("experts"), std::string::npos) << t.name;
  EXPECT_GT(inv.total_bytes, 0);
}

// Regression: absurd sizes in a config are rejected instead of overflowing the weight arithmetic.
TEST(SynthesizeWeightsRegression, ImplausibleSizesAreAnError) {
  auto m = parse_model_config_text(R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
    "hidden_size": 2000000000, "intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 4,
    "vocab_size": 1024})", "config.json");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().to_string(), "config.json: implausible \"hidden_size\": 2000000000 (expected 0 to 1048576)");
  auto wrapped = parse_model_config_text(R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
    "hidden_size": 4096000000, "intermediate_size": 512, "num_hidden_layers": 4, "num_attention_heads": 4,
    "vocab_size": 1024})", "config.json");
  ASSERT_FALSE(wrapped);
  EXPECT_NE(wrapped.error().message.find("below 2^31"), std::string::npos) << wrapped.error().to_string();
}

// gemma4.py Gemma4DecoderLayer: a full-attention layer takes global_head_dim (512) and, with
// attention_k_eq_v, num_global_key_value_heads (1 on the 12B) for its QKVParallelLinear, whose V
// slot stays (K's weights are loaded into it); sliding layers keep head_dim 256 and 8 KV heads.
// Gemma 4 12B (hidden 3840, 16 heads): layer 5 q 16 × 512 = 8192 rows, k and v 1 × 512, o from
// 8192; layer 0 q 16 × 256 = 4096, k and v 8 × 256 = 2048.
TEST(SynthesizeWeights, Gemma4FullAttentionLayersTakeTheirOwnHeads) {
  ModelSpec m = model("google/gemma-4-12B-it");
  WeightsInventory inv = synthesize_weights(m);
  const std::string full = "language_model.model.layers.5.self_attn.", sliding = "language_model.model.layers.0.self_attn.";
  const TensorInfo *q = find_tensor(inv, full + "q_proj.weight"), *k = find_tensor(inv, full + "k_proj.weight"),
                   *v = find_tensor(inv, full + "v_proj.weight"), *o = find_tensor(inv, full + "o_proj.weight");
  ASSERT_TRUE(q && k && v && o);
  EXPECT_EQ(q->shape, (std::vector<std::int64_t>{8192, 3840}));
  EXPECT_EQ(k->shape, (std::vector<std::int64_t>{512, 3840}));
  EXPECT_EQ(v->shape, (std::vector<std::int64_t>{512, 3840}));
  EXPECT_EQ(o->shape, (std::vector<std::int64_t>{3840, 8192}));
  const TensorInfo *sq = find_tensor(inv, sliding + "q_proj.weight"), *sk = find_tensor(inv, sliding + "k_proj.weight");
  ASSERT_TRUE(sq && sk);
  EXPECT_EQ(sq->shape, (std::vector<std::int64_t>{4096, 3840}));
  EXPECT_EQ(sk->shape, (std::vector<std::int64_t>{2048, 3840}));
}

// The checkpoint of an attention_k_eq_v model has no v_proj on its full-attention layers; vLLM
// loads k_proj into the V slot too, so the exact inventory without them weighs what the
// architecture gives with them: 8 full layers × 512 × 3840 × 2 bytes more than the files.
TEST(StageWeights, Gemma4KEqVLoadsKIntoTheVSlot) {
  ModelSpec m = model("google/gemma-4-12B-it");
  const WeightsInventory synthesized = synthesize_weights(m);
  WeightsInventory files;
  files.exact = true;
  for (const auto& t : synthesized.tensors) {
    const auto layer = engine::find_layer_number(t.name);
    if (layer && t.name.find("self_attn.v_proj") != std::string::npos && m.layer_kind(layer->layer) == LayerKind::full_attention)
      continue;
    files.tensors.push_back(t);
    files.total_bytes += t.bytes;
  }
  EXPECT_EQ(synthesized.total_bytes - files.total_bytes, Bytes{8} * 512 * 3840 * 2);
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  EXPECT_EQ(engine::stage_weights(m, files, plan).front().bytes, engine::stage_weights(m, synthesized, plan).front().bytes);
}

// mimo_v2_flash.py MiMoV2Attention: V and the o_proj input are v_head_dim (128) wide while Q and
// K are head_dim (192); the sliding ("compressed softmax") layers take swa_num_key_value_heads (8)
// where the full layers have 4. MiMo-V2-Flash (hidden 4096, 64 heads): layer 0 is full, k 4 × 192
// = 768, v 4 × 128 = 512, o from 64 × 128 = 8192; layer 1 slides, k 8 × 192 = 1536, v 8 × 128.
TEST(SynthesizeWeights, MiMoV2FlashVAndSlidingLayersTakeTheirOwnWidths) {
  ModelSpec m = model("XiaomiMiMo/MiMo-V2-Flash");
  WeightsInventory inv = synthesize_weights(m);
  auto shape = [&](const std::string& name) {
    const TensorInfo* t = find_tensor(inv, "model.layers." + name + ".weight");
    return t ? t->shape : std::vector<std::int64_t>{};
  };
  EXPECT_EQ(shape("0.self_attn.k_proj"), (std::vector<std::int64_t>{768, 4096}));
  EXPECT_EQ(shape("0.self_attn.v_proj"), (std::vector<std::int64_t>{512, 4096}));
  EXPECT_EQ(shape("0.self_attn.o_proj"), (std::vector<std::int64_t>{4096, 8192}));
  EXPECT_EQ(shape("1.self_attn.q_proj"), (std::vector<std::int64_t>{12288, 4096}));
  EXPECT_EQ(shape("1.self_attn.k_proj"), (std::vector<std::int64_t>{1536, 4096}));
  EXPECT_EQ(shape("1.self_attn.v_proj"), (std::vector<std::int64_t>{1024, 4096}));
}

// Gemma 4 12B's encoder-free front end (gemma4_unified.py) at transformers' defaults, which its
// config leaves in place: patch_ln1 over 48² × 3 = 6,912 (13,824), patch_dense 6,912 → 3,840 with
// bias (26,545,920), patch_ln2 and pos_norm (7,680 each), the positional table 1,120 × 2 × 3,840
// (8,601,600) and embed_vision's projection 3,840 → 3,840 (14,745,600): 49,922,304 parameters.
TEST(SynthesizeWeights, Gemma4UnifiedCountsItsPatchEmbedders) {
  ModelSpec m = model("google/gemma-4-12B-it");
  WeightsInventory inv = synthesize_weights(m);
  std::int64_t params = 0;
  for (const auto& t : inv.tensors) {
    if (!t.name.starts_with("vision_embedder.") && !t.name.starts_with("embed_vision.")) continue;
    std::int64_t n = 1;
    for (auto d : t.shape) n *= d;
    params += n;
  }
  EXPECT_EQ(params, 49'922'304);
}

// QKVParallelLinear replicates KV heads when a layer has fewer than the TP ranks: at TP 2 a
// Gemma 4 12B sliding layer's k_proj (8 heads × 256 × 3840, bf16: 15,728,640 bytes) is halved,
// while a full-attention layer's (1 global head × 512 × 3840: 3,932,160 bytes, loaded into the V
// slot too) stays whole on each rank: 7,864,320 + 2 × 3,932,160 per rank.
TEST(StageWeights, KvHeadsFewerThanRanksAreReplicatedPerLayer) {
  ModelSpec m = model("google/gemma-4-12B-it");
  WeightsInventory files;
  files.exact = true;
  files.tensors.push_back({"language_model.model.layers.0.self_attn.k_proj.weight", "BF16", {2048, 3840}, 15'728'640});
  files.tensors.push_back({"language_model.model.layers.5.self_attn.k_proj.weight", "BF16", {512, 3840}, 3'932'160});
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  plan.tensor_parallel_size = 2;
  const auto stage = engine::stage_weights(m, files, plan).front();
  EXPECT_EQ(stage.layer_bytes, Bytes{7'864'320} + 2 * Bytes{3'932'160});
}

// ROCm pads each row of the unquantized fused-MoE weights by 256 bytes where the row is a multiple
// of 512 bytes (UnquantizedFusedMoEMethod._maybe_pad_weight, VLLM_ROCM_MOE_PADDING on by default).
// One Qwen3-30B-A3B expert in bf16: gate_proj and up_proj [768, 2048] have 4,096-byte rows (768
// rows each padded), down_proj [2048, 768] 1,536-byte rows (2,048 rows padded) at TP 1; at TP 2
// down_proj's rows are 768 bytes and stay as they are, gate/up keep 384 padded rows each.
TEST(StageWeights, RocmPadsTheUnquantizedExpertRows) {
  ModelSpec m = model("Qwen/Qwen3-30B-A3B");
  WeightsInventory files;
  files.exact = true;
  for (const char* p : {"gate_proj", "up_proj"})
    files.tensors.push_back({std::string("model.layers.0.mlp.experts.0.") + p + ".weight", "BF16", {768, 2048}, 3'145'728});
  files.tensors.push_back({"model.layers.0.mlp.experts.0.down_proj.weight", "BF16", {2048, 768}, 3'145'728});
  engine::WeightPlan plan;
  plan.dtype = "bfloat16";
  const Bytes plain = engine::stage_weights(m, files, plan).front().layer_bytes;
  plan.rocm_moe_padding = true;
  EXPECT_EQ(engine::stage_weights(m, files, plan).front().layer_bytes - plain, 2 * Bytes{768} * 256 + Bytes{2048} * 256);
  plan.tensor_parallel_size = 2;
  const Bytes padded_tp2 = engine::stage_weights(m, files, plan).front().layer_bytes;
  plan.rocm_moe_padding = false;
  EXPECT_EQ(padded_tp2 - engine::stage_weights(m, files, plan).front().layer_bytes, 2 * Bytes{384} * 256);
}

// End to end: on an MI300X the unquantized model carries the padding, VLLM_ROCM_MOE_PADDING=0,
// VLLM_ROCM_USE_AITER=1 and an NVIDIA GPU do not; 48 layers of 128 experts at TP 1.
TEST(StageWeights, RocmMoePaddingFollowsTheGpuAndTheVariable) {
  const ModelSpec m = model("Qwen/Qwen3-30B-A3B");
  VllmFlags f;
  f.max_model_len = 8192;
  const Prediction padded = test_support::run(m, test_support::gpus("MI300X"), f);
  f.rocm_moe_padding = false;
  const Prediction off = test_support::run(m, test_support::gpus("MI300X"), f);
  EXPECT_EQ(padded.memory.weights - off.memory.weights, Bytes{48} * 128 * (2 * 768 * 256 + 2048 * 256));
  f.rocm_moe_padding.reset();
  const Prediction h100 = test_support::run(m, test_support::gpus("H100"), f);
  EXPECT_EQ(h100.memory.weights, off.memory.weights);
  // AITER's fused MoE shuffles the weights into unpadded copies: where VLLM_ROCM_USE_AITER is not
  // given, the range's high side allows that reading; given, it settles it.
  const Bytes pad = padded.memory.weights - off.memory.weights;
  ASSERT_TRUE(padded.uncertainty.has_value());
  EXPECT_GE(padded.uncertainty->kv_cache_high - padded.memory.kv_cache, pad);
  f.rocm_use_aiter = true;
  const Prediction aiter = test_support::run(m, test_support::gpus("MI300X"), f);
  EXPECT_EQ(aiter.memory.weights, off.memory.weights);
}

}  // namespace
}  // namespace headroom
