// The terms of vLLM's startup accounting that cannot be derived from the config: activation peak
// of the profile run, non-torch memory, CUDA context baseline and CUDA graph memory. Each is a small
// model of how the term depends on the inputs; the constants are fitted by
// scripts/fit_calibration.py on the calibration measurements (see docs/accuracy.md).
#pragma once

#include <string>

#include "headroom/model.h"
#include "headroom/units.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

struct ActivationInputs {
  int tensor_parallel_size = 1;
  int expert_parallel_size = 1;
  int max_num_seqs = 0;
  int max_num_batched_tokens = 0;
  double dtype_bytes = 2;
  bool last_pp_stage = true;
  int stage_layers = 0;
  bool multimodal = false;  // the profile run encodes dummy images first (first PP stage)
};

struct ActivationEstimate {
  Bytes total = 0;
  Bytes sampler = 0;   // [R, vocab] logits and the top-k/top-p sort path
  Bytes forward = 0;   // dense MLP / attention projections of the dummy forward
  Bytes moe = 0;       // fused-MoE intermediate caches
  Bytes encoder = 0;   // multimodal encoder outputs kept in the encoder cache during the profile run
};

// Whether vLLM treats the model as multimodal (it profiles the encoder): a vision tower in the
// config, or an architecture registered as one (…ForConditionalGeneration, VL, Vision, Llava).
bool is_multimodal(const ModelSpec& model);

// Torch peak increase during the profile run (A).
ActivationEstimate estimate_activation(const ModelSpec& model, const VllmVersion& version, const ActivationInputs& in);

// Non-torch memory increase since the init snapshot (N): communication buffers and kernel images.
Bytes estimate_non_torch(const VllmVersion& version, int tensor_parallel_size, int pipeline_parallel_size);

// CUDA context + NCCL memory present at the init snapshot (B): never charged to the budget but
// must fit beside it (the startup free-memory check).
Bytes estimate_baseline(int tensor_parallel_size, int pipeline_parallel_size);

// Memory CUDA graph capture takes (G), for the number of captured graphs and the stage's layers.
Bytes estimate_cuda_graph(const ModelSpec& model, int num_graphs, int stage_layers, int tensor_parallel_size);

}  // namespace headroom::engine
