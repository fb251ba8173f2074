// Which kernel vLLM runs a quantized checkpoint's linear layers through, and the transient memory
// a dequantizing kernel takes in the profile run's forward pass (part of the activation peak).
#pragma once

#include <optional>
#include <string>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/units.h"

namespace headroom::engine {

// The quantization method as vLLM resolves it (config/model.py _verify_quantization, each
// config's override_quantization_method): a GPTQ or AWQ checkpoint runs through the Marlin
// kernels on CUDA GPUs of compute capability >= 8.0 when its config is Marlin-compatible and the
// user did not name the plain method (`--quantization awq` / `gptq` forces it: "Detected that the
// model can run with awq_marlin, however you specified quantization=awq explicitly, so forcing
// awq"). A ModelOpt NVFP4 checkpoint resolves to "modelopt_fp4". `quantization` is the resolved
// settings' method (the user's or the checkpoint's), lower case or not.
std::string resolved_quantization_method(const std::string& quantization, bool user_named, const ModelSpec& model,
                                         const GpuSpec& gpu);

// What one rank's linear layers are, for the dequantizing kernels: the per-rank shapes of the
// attention and dense MLP projections of the widest decoder layer.
struct LinearShapes {
  double hidden = 0;
  double q_out = 0;         // heads / TP x head_dim
  double kv_out = 0;        // one of K or V: max(1, KV heads / TP) x head_dim
  double mlp_per_rank = 0;  // the dense MLP's intermediate width / TP (0 where every MLP is an expert)
};

// The largest transient a dequantizing linear kernel allocates in a forward pass of `tokens`
// tokens, or 0 where the method's kernel does not dequantize the whole weight:
//   - "awq" (awq.py AWQLinearMethod.apply): from 256 tokens, awq_dequantize writes the whole
//     fused weight [in, out] in float16 before a torch.matmul;
//   - "gptq" (gptq.py → csrc/quantization/gptq/q_gemm.cu gptq_gemm): every call allocates
//     temp_dq [in, out] in the activation dtype (float16), used from 50 rows up (MAX_Q_GEMM_ROWS);
//   - "bitsandbytes" 4-bit (bitsandbytes.py _apply_4bit_weight → bitsandbytes' matmul_4bit):
//     each shard (q, k, v, gate, up separately) is dequantized to the model dtype for more than
//     one row. 8-bit's int8 matmul takes buffers of the tokens' size only.
// The Marlin kernels (awq_marlin, gptq_marlin) and the FP8/FP4 paths do not dequantize; fused-MoE
// experts run through their own kernels and are not in it.
Bytes dequantized_linear_bytes(const std::string& method, int bits, const LinearShapes& shapes, int tokens,
                               double dtype_bytes);

// GGUF (quantization/gguf.py _fused_mul_mat_gguf): a weight of an I-matrix type (values and
// output rows of the whole tensor; ModelSpec's quantization notes the largest) is multiplied by
// MMVQ up to mmvq_safe rows (8 for more than 5,120 output rows, else 16) and beyond that
// dequantized whole into the activations' dtype (ggml_dequantize(..., x.dtype)) beside the
// product. Each of `tp` ranks holds a 1/tp slice. 0 for `batch_rows` within MMVQ's reach.
Bytes gguf_dequantized_bytes(std::int64_t values, std::int64_t out_rows, double batch_rows, double tp,
                             double dtype_bytes);

}  // namespace headroom::engine
