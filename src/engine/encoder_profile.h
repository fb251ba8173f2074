// The multimodal encoder's pass in vLLM's profile run: the dummy batch vLLM builds
// (v1/worker/gpu_model_runner.py profile_run, _get_mm_dummy_batch; v1/worker/utils.py
// MultiModalBudget; v1/core/encoder_cache_manager.py compute_mm_encoder_budget) and the torch peak
// its encoder reaches on that batch, before the KV cache is sized.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// The largest item the processor accepts for the modality vLLM profiles with.
struct EncoderItem {
  std::string modality;               // "image" or "video"; "" when the model has no modelled encoder
  std::int64_t patches = 0;           // encoder sequence length of one item (before any merger)
  std::int64_t tokens = 0;            // embeddings one item hands the language model
  std::int64_t budget_tokens = 0;     // tokens vLLM budgets for one item, when they differ from `tokens`
                                      // (Qwen3-VL video before v0.13: 12.5 per embedding; GLM-4.xV's
                                      // video sized beside one image, then profiled alone)
  std::int64_t attention_span = 0;    // patches of the longest sequence its attention spans (0: all
                                      // of them; a video attends within each frame pair)
  std::string source;                 // where the size came from (preprocessor default, flag, config)
};

struct EncoderProfile {
  EncoderItem item;
  std::int64_t encoder_budget = 0;    // tokens: min(compute budget, encoder cache size)
  int items = 0;                      // dummy items in the batch (0: no encoder pass)
  Bytes encoder_peak = 0;             // torch peak increase while the encoder runs on the batch
  Bytes cached_outputs = 0;           // the batch's embeddings, held through the language model's dummy run
                                      // (padded to the budget in v0.11-v0.12, encoder_profile.cc)
  Bytes other_reading = 0;            // what a reading the estimate does not take would add (Gemma 4's one-hot)
  std::string other_reading_why;
  std::int64_t units_per_forward = 0; // frames or images per encoder call where the model loops (Gemma 4)
  std::string skipped_because;        // why there is no pass ("" when there is one)
  bool family_unsized = false;        // vLLM runs the pass, but headroom does not size this family's input
  std::string explanation;            // one line for the report: batch, sizes, what is estimated
};

// The device the encoder runs on, where a model sizes its encoder calls by it (Gemma 4 from
// v0.22: min(free / 2, total / 10)); zeros when unknown.
struct EncoderDevice {
  Bytes total = 0;
  Bytes free = 0;  // after the weights load
};

// The encoder pass of `model` under these flags and settings on one rank of a TP group of
// `tensor_parallel_size`. A model without a vision tower, a V0-engine version, every modality
// limited to 0, --language-model-only or --skip-mm-profiling give items == 0 and say why.
// Families whose processor has no fixed largest input headroom can size (see encoder_profile.cc)
// give items == 0 with skipped_because saying so; the caller keeps its range for them.
EncoderProfile encoder_profile(const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& settings,
                               const VllmVersion& version, double dtype_bytes, const EncoderDevice& device);

// Whether headroom sizes the audio encoder's pass where vLLM profiles it on this version: the
// dummy clips of Qwen2-Audio, Qwen2.5-Omni, Ultravox (from v0.11) and Voxtral (from v0.15), which
// encoder_profile sizes, and Gemma 4's, a few milliseconds long (nothing to size).
bool audio_pass_sized(const ModelSpec& model, const VllmVersion& version);

// The largest item vLLM budgets for the tower, what compute_mm_encoder_budget compares with
// max_num_batched_tokens when chunked multimodal input is off: for the families encoder_profile
// sizes, whether or not the pass runs (--skip-mm-profiling skips only the pass); nullopt for the
// others, and when the item's modality is limited to 0.
std::optional<EncoderItem> largest_mm_item(const ModelSpec& model, const VllmFlags& flags, const ResolvedSettings& settings,
                                           const VllmVersion& version);

// Whether vLLM runs the model text-only: every modality it has limited to 0 by
// --limit-mm-per-prompt, or --language-model-only. From v0.10.1 (#22299) the model classes then
// leave their encoders and projectors unbuilt, so their weights are not loaded either.
bool text_only_mode(const ModelSpec& model, const VllmFlags& flags);
bool skips_tower_weights(const ModelSpec& model, const VllmFlags& flags, const VllmVersion& version);
// From #32605 (merged 2026-01-19; taken as first in v0.15, cut at the end of that month)
// gemma3n_mm.py builds each tower and its embedder, and minicpmo.py its audio encoder, under
// _mark_tower_model: a modality limited to 0 leaves them unbuilt and their weights unloaded.
// Before, gemma3n_mm.py built all four whatever the limits.
bool marks_towers_per_modality(const VllmVersion& version);
// True where that happens to `modality` ("image" or "audio") of this model (Gemma 3n's towers and
// MiniCPM-o's audio encoder).
bool skips_one_tower(const ModelSpec& model, const VllmFlags& flags, const VllmVersion& version, const std::string& modality);

// --limit-mm-per-prompt's count for `modality` ("image", "video", "audio"), vLLM's default 999 when
// the flag does not name it.
int mm_limit(const VllmFlags& flags, const std::string& modality);

// An integer of --mm-processor-kwargs' JSON object: `key` at its top level, or `key`.`inner` when
// `inner` is given (size.longest_edge); nullopt when the flag is absent, not an object, or the value
// is not an integer.
std::optional<std::int64_t> mm_processor_kwarg(const VllmFlags& flags, const char* key, const char* inner = nullptr);

}  // namespace headroom::engine
