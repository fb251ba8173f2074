// Stage 3 of predict(): the memory budget vLLM requests and the free memory it starts from
// (v1/worker/utils.py request_memory; v1/worker/gpu_worker.py init_device, whose free-memory check
// refuses to start when the GPU has less free than the budget).
#include <algorithm>
#include <cmath>

#include "engine/empirical.h"
#include "engine/predict_stages.h"
#include "engine/vllm_messages.h"

namespace headroom::engine {

namespace {

// What to do when the free memory falls short: the highest utilization the free memory allows,
// or free the memory others hold.
std::string free_memory_advice(const Budget& b) {
  const double max_util = std::floor(static_cast<double>(b.free_at_start) / static_cast<double>(b.total) * 100.0) / 100.0;
  std::string todo = "to pass the startup check, lower --gpu-memory-utilization to at most " + util::fixed(max_util, 2) +
                     " (" + gib(b.free_at_start) + " free when vLLM starts)";
  if (b.other_processes > 0)
    todo += ", or stop what holds " + gib(b.other_processes) + " on the GPU (listed below; headroom never stops processes itself)";
  return todo;
}

}  // namespace

Budget request_memory(const GpuSetup& gpus, const ResolvedConfig& config) {
  const ResolvedSettings& s = config.settings;
  Budget b;
  b.total = gpus.gpu.total_bytes;
  b.budget = static_cast<Bytes>(std::ceil(static_cast<double>(b.total) * s.gpu_memory_utilization));
  b.baseline = estimate_baseline(s.tensor_parallel_size, s.pipeline_parallel_size);
  // Free memory at vLLM's init snapshot: what a probe saw before vLLM started, less the CUDA context
  // and NCCL buffers vLLM creates first; a log's own figure already excludes them.
  b.free_at_start = gpus.free_bytes ? *gpus.free_bytes - (gpus.free_measured_by_vllm ? 0 : b.baseline) : b.total - b.baseline;
  b.other_processes =
      gpus.free_bytes ? std::max<Bytes>(0, b.total - *gpus.free_bytes - (gpus.free_measured_by_vllm ? b.baseline : 0)) : 0;
  b.usable = b.total - b.baseline - b.other_processes;
  if (config.era.startup_free_memory_check && b.free_at_start < b.budget) {
    b.free_memory_failure = Failure{
        "startup_free_memory_insufficient", "startup-free-memory-check",
        startup_free_memory_message(config.version, b.free_at_start, b.total, s.gpu_memory_utilization, b.budget), {}};
    b.notes.push_back(free_memory_advice(b));
  }
  return b;
}

}  // namespace headroom::engine
