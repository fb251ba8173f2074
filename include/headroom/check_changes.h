// What to change when `check` predicts that vLLM will not start: single changes to the user's own
// flags, each tried through the same prediction, kept only when the changed run is predicted to
// start. Searched values (the longest max_model_len, the lowest utilization that is enough, the
// largest max_num_seqs) come from bisection over the prediction, not from rules of thumb.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"

namespace headroom {

struct FlagChange {
  // Flags set by the change, in vLLM's spelling: {"--max-model-len", "22528"}; a flag dropped from
  // the command has the value "" and is listed in `removed` as well.
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::string> removed;
  int gpus = 0;         // GPUs the changed run uses (more than the user's when TP or PP grows)
  std::string why;      // one line: what the change does about the failure
  Prediction prediction;  // the changed run, predicted to start
};

using PredictFn = std::function<Result<Prediction>(const VllmFlags&, const GpuSetup&)>;

// Up to `limit` changes that make a failing prediction start, the most direct first: the change the
// failure's own message points at, then the other memory levers (length, utilization, fp8 KV cache,
// concurrency, eager mode, tensor parallelism). Empty when `failed` starts or nothing single helps.
std::vector<FlagChange> suggest_changes(const ModelSpec& model, const GpuSetup& gpus, const VllmFlags& flags,
                                        const Prediction& failed, const PredictFn& predict, std::size_t limit = 4);

// The flags of a change as one line: "--max-model-len 22528", "drop --quantization awq",
// "--tensor-parallel-size 2 (2 GPUs)".
std::string describe_change(const FlagChange& change, const VllmFlags& flags);

// The "changes" array of check's JSON document (docs/check-json.md).
nlohmann::json changes_document(const std::vector<FlagChange>& changes);

}  // namespace headroom
