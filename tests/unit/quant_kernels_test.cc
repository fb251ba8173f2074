// The kernel vLLM resolves a GPTQ / AWQ / bitsandbytes checkpoint to, and the whole-weight
// transient of the kernels that dequantize. Expected sizes are worked out from vLLM's code:
// awq.py AWQLinearMethod.apply (awq_dequantize from 256 tokens), csrc/quantization/gptq/q_gemm.cu
// gptq_gemm (temp_dq of [in, out] on every call), bitsandbytes.py _apply_4bit_weight (one shard at
// a time through matmul_4bit), and Qwen2.5-7B's config.json (hidden 3584, intermediate 18944,
// 28 heads and 4 KV heads of 128).
#include <gtest/gtest.h>

#include "engine/empirical.h"
#include "engine/quant_kernels.h"
#include "headroom/vllm_config.h"
#include "unit/engine_test_support.h"

namespace headroom {
namespace {

using test_support::gpus;
using test_support::model;
using test_support::run;

ModelSpec with_config(ModelSpec m, const nlohmann::json& raw) {
  if (!m.quantization) m.quantization = QuantizationConfig{};
  m.quantization->raw = raw;
  if (raw.contains("bits")) m.quantization->bits = raw["bits"].get<int>();
  return m;
}

TEST(QuantKernels, MarlinRunsWhereTheConfigAndTheGpuAllowIt) {
  const ModelSpec awq = with_config(model("Qwen/Qwen2.5-7B-Instruct-AWQ"),
                                    {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", true}});
  EXPECT_EQ(engine::resolved_quantization_method("awq", false, awq, gpus("L4").gpu), "awq_marlin");
  EXPECT_EQ(engine::resolved_quantization_method("awq", false, awq, gpus("T4").gpu), "awq");  // capability 7.5
  // `--quantization awq` forces the plain kernels ("... so forcing awq").
  EXPECT_EQ(engine::resolved_quantization_method("awq", true, awq, gpus("L4").gpu), "awq");
  // awq_marlin's scalar types carry zero points: a checkpoint without them stays on awq.
  const ModelSpec no_zp = with_config(awq, {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", false}});
  EXPECT_EQ(engine::resolved_quantization_method("awq", false, no_zp, gpus("L4").gpu), "awq");
  // gptq_marlin's TYPE_MAP has (4, True) and (8, True) only: an asymmetric GPTQ checkpoint, or a
  // 3-bit one, keeps the exllama kernels; so does a GPU that is not CUDA.
  const ModelSpec gptq = with_config(model("Qwen/Qwen2.5-7B-Instruct-AWQ"),
                                     {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}, {"sym", true}, {"desc_act", false}});
  EXPECT_EQ(engine::resolved_quantization_method("gptq", false, gptq, gpus("H100").gpu), "gptq_marlin");
  EXPECT_EQ(engine::resolved_quantization_method("gptq", false, gptq, gpus("MI300X").gpu), "gptq");
  const ModelSpec asym = with_config(gptq, {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}, {"sym", false}, {"desc_act", false}});
  EXPECT_EQ(engine::resolved_quantization_method("gptq", false, asym, gpus("H100").gpu), "gptq");
  const ModelSpec three = with_config(gptq, {{"quant_method", "gptq"}, {"bits", 3}, {"group_size", 128}, {"sym", true}, {"desc_act", false}});
  EXPECT_EQ(engine::resolved_quantization_method("gptq", false, three, gpus("H100").gpu), "gptq");
}

TEST(QuantKernels, DequantizingKernelsHoldTheWidestWeightInFloat16) {
  engine::LinearShapes qwen;  // Qwen2.5-7B at TP 1
  qwen.hidden = 3584;
  qwen.q_out = 28 * 128;
  qwen.kv_out = 4 * 128;
  qwen.mlp_per_rank = 18944;
  const Bytes gate_up = Bytes{3584} * 2 * 18944 * 2;  // fused gate_up_proj [3584, 37888] in float16
  EXPECT_EQ(engine::dequantized_linear_bytes("awq", 4, qwen, 2048, 2), gate_up);
  EXPECT_EQ(engine::dequantized_linear_bytes("awq", 4, qwen, 255, 2), 0);  // awq_gemm below 256 tokens
  EXPECT_EQ(engine::dequantized_linear_bytes("gptq", 4, qwen, 8, 2), gate_up);  // temp_dq on every call
  // bitsandbytes dequantizes one shard at a time: gate_proj [18944, 3584] in the model dtype.
  EXPECT_EQ(engine::dequantized_linear_bytes("bitsandbytes", 4, qwen, 2048, 2), Bytes{18944} * 3584 * 2);
  EXPECT_EQ(engine::dequantized_linear_bytes("bitsandbytes", 8, qwen, 2048, 2), 0);
  for (const char* method : {"awq_marlin", "gptq_marlin", "fp8", "compressed-tensors", ""})
    EXPECT_EQ(engine::dequantized_linear_bytes(method, 4, qwen, 2048, 2), 0) << method;
  // At TP 2 each rank dequantizes its half of the MLP.
  qwen.mlp_per_rank = 18944 / 2;
  EXPECT_EQ(engine::dequantized_linear_bytes("awq", 4, qwen, 2048, 2), gate_up / 2);
}

// End to end: on one L4, `--quantization awq` (plain kernels) against the checkpoint's own
// awq_marlin. With 16 sequences the sampler's logits are small and the forward pass sets the
// activation peak, which grows by exactly the dequantized gate_up_proj.
TEST(QuantKernels, PlainAwqRaisesTheProfilePeakByTheDequantizedWeight) {
  const ModelSpec awq = with_config(model("Qwen/Qwen2.5-7B-Instruct-AWQ"),
                                    {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", true}});
  VllmFlags marlin;
  marlin.max_num_seqs = 16;
  marlin.max_model_len = 4096;
  VllmFlags plain = marlin;
  plain.quantization = "awq";
  const Prediction a = run(awq, gpus("L4"), marlin), b = run(awq, gpus("L4"), plain);
  EXPECT_EQ(b.memory.activation_peak - a.memory.activation_peak, Bytes{3584} * 2 * 18944 * 2);
  EXPECT_LT(b.memory.kv_cache, a.memory.kv_cache);
}

// quantization/gguf.py _fused_mul_mat_gguf: an I-matrix weight is dequantized whole
// (ggml_dequantize into x.dtype) for more rows than mmvq_safe: 8 where the weight has more than
// 5,120 output rows (qweight.shape[0] > 5120), else 16. Qwen2.5-7B's down_proj [3584, 18944].
TEST(QuantKernels, GgufIMatrixWeightsAreDequantizedWholeBeyondMmvq) {
  const std::int64_t down = std::int64_t{3584} * 18944;
  EXPECT_EQ(engine::gguf_dequantized_bytes(down, 3584, 8192, 1, 2), Bytes{down} * 2);
  EXPECT_EQ(engine::gguf_dequantized_bytes(down, 3584, 16, 1, 2), 0);   // MMVQ up to 16 rows
  EXPECT_EQ(engine::gguf_dequantized_bytes(down, 3584, 17, 1, 2), Bytes{down} * 2);
  EXPECT_EQ(engine::gguf_dequantized_bytes(down, 18944, 9, 1, 2), Bytes{down} * 2);  // > 5,120 rows: MMVQ up to 8
  EXPECT_EQ(engine::gguf_dequantized_bytes(down, 18944, 8, 1, 2), 0);
  EXPECT_EQ(engine::gguf_dequantized_bytes(down, 3584, 8192, 2, 2), Bytes{down});  // each rank its half
  EXPECT_EQ(engine::gguf_dequantized_bytes(0, 0, 8192, 1, 2), 0);  // no I-matrix weight
}

// End to end: with 8 sequences the forward pass sets the activation peak, and a GGUF checkpoint
// whose widest layer weight is of an I-matrix type raises it by that weight in bf16; the sampler's
// 8 rows through an I-matrix head of 152,064 rows stay within MMVQ's reach (mmvq_safe 8). With 16
// sequences the head is dequantized whole beside the rank's [16, vocab] logits before sampling.
TEST(QuantKernels, GgufIMatrixWeightRaisesTheProfilePeak) {
  ModelSpec gguf = model("Qwen/Qwen2.5-7B-Instruct");
  gguf.quantization = QuantizationConfig{};
  gguf.quantization->method = "gguf";
  VllmFlags flags;
  flags.max_num_seqs = 8;
  flags.max_model_len = 4096;
  flags.dtype = "bfloat16";
  const Prediction k_quants = run(gguf, gpus("L4"), flags);
  gguf.quantization->gguf_dequantized_values = std::int64_t{3584} * 18944;
  gguf.quantization->gguf_dequantized_rows = 18944;
  gguf.quantization->gguf_dequantized_head_values = std::int64_t{3584} * 152064;
  gguf.quantization->gguf_dequantized_head_rows = 152064;
  const Prediction i_matrix = run(gguf, gpus("L4"), flags);
  EXPECT_EQ(i_matrix.memory.activation_peak - k_quants.memory.activation_peak, Bytes{3584} * 18944 * 2);
  flags.max_num_seqs = 16;
  const Bytes head = Bytes{3584} * 152064 * 2, logits = Bytes{16} * 152064 * 2;
  EXPECT_GE(run(gguf, gpus("L4"), flags).memory.activation_peak, head + logits);
  EXPECT_LT(i_matrix.memory.activation_peak, head);
}

}  // namespace
}  // namespace headroom
