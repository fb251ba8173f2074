// Per-rank weight bytes: the checkpoint's tensors (exact from safetensors headers, or synthesised
// from the architecture) sharded the way vLLM's parallel layers shard them (§4.2 of the memory
// model), converted to the dtype vLLM loads them in, plus the buffers loaded with them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/model.h"
#include "headroom/vllm_version.h"
#include "headroom/units.h"

namespace headroom::engine {

struct WeightPlan {
  int tensor_parallel_size = 1;
  int pipeline_parallel_size = 1;
  int expert_parallel_size = 1;  // 1 = experts sharded by TP
  std::string dtype;             // resolved load dtype: bfloat16, float16, float32
  std::string online_quantization;  // "fp8", "bitsandbytes" or "" (checkpoint as is)
  std::string gpu_architecture;     // "Ampere", "Hopper", "Blackwell": MXFP4 kernels pad differently
  std::vector<int> layer_partition; // VLLM_PP_LAYER_PARTITION's layers per stage (empty: vLLM's default split)
  bool skip_mm_towers = false;      // text-only mode: the vision/audio towers and projectors are not loaded
  bool skip_image_tower = false;    // Gemma 3n, image limited to 0: vision_tower and embed_vision are not loaded
  bool skip_audio_tower = false;
  bool pooling_runner = false;      // the pooling adapter deletes the LM head (adapters.py)    // Gemma 3n, audio limited to 0: audio_tower and embed_audio are not loaded
  int rope_cache_positions_factor = 1;  // M-RoPE from v0.7.2: the cos/sin cache covers 4 × max_position (mrope_cache_factor)
  // ROCm pads each row of the unquantized fused-MoE weights by 256 bytes (rocm_moe_row_factor).
  bool rocm_moe_padding = false;
};

struct StageWeights {
  Bytes bytes = 0;        // everything torch allocates at load on one rank of this stage
  Bytes rope_cache = 0;   // part of bytes
  Bytes load_buffers = 0; // part of bytes: load_buffers() below, on the first stage (set by predict())
  Bytes layer_bytes = 0;  // part of bytes: the decoder layers' parameters on one rank (what --cpu-offload-gb moves)
  Bytes tower_bytes = 0;  // part of bytes: the multimodal towers and projectors on one rank
  int first_layer = 0;    // [first_layer, end_layer)
  int end_layer = 0;
};

// Whether vLLM builds the model's rotary embedding as MRotaryEmbedding (rotary_embedding get_rope:
// a rope_scaling / rope_parameters with "mrope_section", or the legacy "type": "mrope"). Catalogue
// lines whose config copy dropped the block are recognised by the Qwen-VL / Omni / Qwen3.5
// multimodal classes, whose configs all carry it.
bool uses_mrope(const ModelSpec& model);

// The rows of the M-RoPE cos/sin cache over max_position: MRotaryEmbedding.__init__ sets
// cache_max_position_num = max_position_embeddings * 4 ("In Qwen2.5-VL, the maximum index value is
// related to the duration of the input video"), added with Qwen2.5-VL (#12604, v0.7.2) and kept
// since; 1 before it and for other rotary embeddings.
int mrope_cache_factor(const ModelSpec& model, const VllmVersion& version);

// Layers per pipeline stage as vllm/distributed/utils.py get_pp_indices splits them: base = L / pp
// and the remainder goes one each to the stages before the last, filled from the back.
// `partition` (from VLLM_PP_LAYER_PARTITION, already checked: pp entries summing to num_layers)
// replaces that split when not empty.
std::vector<std::pair<int, int>> pp_layer_ranges(int num_layers, int pp, const std::vector<int>& partition = {});

// VLLM_PP_LAYER_PARTITION as get_pp_indices reads it: `int(layer) for layer in s.split(",")`
// (Python's int: surrounding spaces, a sign, underscores between digits). nullopt when an entry is
// not an integer ("Invalid partition string").
std::optional<std::vector<int>> parse_pp_layer_partition(const std::string& text);

// Weight bytes of each pipeline stage (rank 0 of its TP group).
std::vector<StageWeights> stage_weights(const ModelSpec& model, const WeightsInventory& inventory,
                                        const WeightPlan& plan);

// Tensors a model allocates in __init__ besides its weights, which "Model loading took" counts
// (first pipeline stage): Qwen3-VL's deepstack buffers (qwen3_vl.py, qwen3_vl_moe.py), one zeroed
// [max_num_batched_tokens, hidden] tensor per deepstack level in the model dtype, and Gemma 3n /
// Gemma 4's per-layer embeddings [max_num_batched_tokens, layers, per-layer width]. Kept apart from
// stage_weights because it depends on the scheduler's batch size, not on the checkpoint.
Bytes load_buffers(const ModelSpec& model, int max_num_batched_tokens, const std::string& dtype);

// For a checkpoint whose quantization method was guessed (QuantizationConfig::guessed_from), how
// many more bytes rank 0 of the first stage loads under the other reading of the same name: the
// exporter also kept attention and shared experts in 16-bit (the ignore lists ModelOpt, Kimi-K2's
// compressed-tensors and MiniMax's fp8 exports write). The same for a read method whose ignore
// list is known only in part (QuantizationConfig::ignore_entries_unaccounted > 0). 0 otherwise.
Bytes guessed_quantization_extra_bytes(const ModelSpec& model, const WeightPlan& plan);

// Bytes per element of a safetensors or torch dtype name (BF16, bfloat16, F8_E4M3, ...); 0 if unknown.
// The first decoder-layer number in a tensor name (".layers.N.", ".h.N.", ".blocks.N.",
// ".layer.N.", the keys of the HF layouts), where its key starts and where its digits sit. A number
// past int (a hostile header's "layers.99999999999") reads as INT_MAX: a layer beyond any model's.
struct LayerNumber {
  int layer = 0;
  std::size_t key = 0, begin = 0, end = 0;
};
std::optional<LayerNumber> find_layer_number(std::string_view name);

double dtype_bytes(const std::string& dtype);
// dtype_bytes, or `fallback` when the name is unknown.
double dtype_bytes_or(const std::string& dtype, double fallback);

}  // namespace headroom::engine
