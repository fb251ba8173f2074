// Host memory: the GPU flags are dead ends; what helps is less host RAM in use or a higher limit.
#include "diagnose/host_memory_fixes.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "util/strings.h"

namespace headroom {

namespace {

std::optional<double> fact(const Finding& f, const std::string& name) {
  auto it = f.facts.find(name);
  if (it == f.facts.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

std::string text_fact(const Finding& f, const std::string& name) {
  auto it = f.text_facts.find(name);
  return it == f.text_facts.end() ? "" : it->second;
}

std::string gib(double v) { return util::fixed(v, 2) + " GiB"; }

FixSuggestion action(std::string what, std::string why, double confidence) {
  return FixSuggestion{{}, std::move(what), "", std::move(why), confidence, "log arithmetic"};
}

// vLLM (config CacheConfig.verify_with_parallel_config) pins swap_space GiB per GPU of the node and
// refuses more than 70% of host RAM, warning above 40%.
std::vector<FixSuggestion> swap_space(const Finding& f, const LoggedRun& run) {
  auto cpu = fact(f, "cpu_memory_gib");
  if (!cpu || *cpu <= 0) return {};
  int gpus = std::max(1, run.flags.tensor_parallel_size.value_or(1));
  double most = std::floor(0.4 * *cpu / gpus);
  std::string per_gpu = gpus > 1 ? " over " + std::to_string(gpus) + " GPUs" : "";
  FixSuggestion s{{{"--swap-space", std::to_string(static_cast<long long>(std::max(0.0, std::min(most, 1e6))))}},
                  "", "",
                  "vLLM pins --swap-space GiB of host memory per GPU; it refuses more than 70% and warns above 40% of the " +
                      gib(*cpu) + " of host memory" + per_gpu,
                  0.8, "log arithmetic"};
  return {s};
}

// Ray's memory monitor: "... was running was U GB / T GB (F), which exceeds the memory usage threshold of H."
std::vector<FixSuggestion> ray_monitor(const Finding& f) {
  auto used = fact(f, "node_used_gb");
  auto total = fact(f, "node_total_gb");
  auto threshold = fact(f, "ray_threshold");
  std::string node = text_fact(f, "node_ip");
  if (!used || !total || *total <= 0) {
    return {action("Free host RAM on the node or give it more: Ray's memory monitor kills workers when the node's RAM passes "
                   "RAY_memory_usage_threshold (0.95 by default)",
                   "the node ran out of host memory, not GPU memory", 0.6)};
  }
  double limit = threshold.value_or(0.95) * *total;
  double over = std::ceil(std::max(0.0, *used - limit) * 100.0 - 1e-9) / 100.0;  // at least: round up
  std::string where = node.empty() ? "the node" : "node " + node;
  return {action("Free at least " + util::fixed(over, 2) + " GB of host RAM on " + where +
                     " (fewer workers or actors there, a smaller data buffer, no --cpu-offload-gb), or give it more RAM",
                 where + " had " + util::fixed(*used, 2) + " GB of " + util::fixed(*total, 2) + " GB in use, past Ray's threshold of " +
                     util::fixed(threshold.value_or(0.95), 2) + " (" + util::fixed(limit, 2) + " GB)",
                 0.6)};
}

// torch's MapAllocator / safetensors: "unable to mmap N bytes from file <F>: Cannot allocate memory (12)".
std::vector<FixSuggestion> mmap_enomem(const Finding& f) {
  auto bytes = fact(f, "mmap_bytes");
  std::string file = text_fact(f, "mmap_file");
  std::string what = bytes ? "mapping " + (file.empty() ? std::string("a checkpoint file") : file) + " needs " + gib(*bytes / 1073741824.0) +
                                 " of address space"
                           : "mapping a checkpoint file failed";
  return {action("Raise the host memory limit for the loader (container memory limit, ulimit -v unlimited, "
                 "vm.overcommit_memory not 2), or save the checkpoint in smaller safetensors shards",
                 what + " and the kernel refused it (ENOMEM); the GPU is not what ran out", 0.6)};
}

// The kernel: "Out of memory: Killed process P (NAME) total-vm:...kB, anon-rss:RkB".
std::vector<FixSuggestion> oom_killer(const Finding& f, const LoggedRun& run) {
  auto rss_kb = fact(f, "anon_rss_kb");
  std::string name = text_fact(f, "killed_name");
  std::string held = rss_kb ? " holding " + gib(*rss_kb / 1048576.0) + " of RAM" : "";
  std::string who = name.empty() ? "the process" : name;
  std::vector<FixSuggestion> out;
  out.push_back(action("Raise the container or host memory limit" + (rss_kb ? " above " + gib(*rss_kb / 1048576.0) + " plus what else runs there" : std::string()) +
                           ", or use less host RAM while loading (safetensors instead of .bin shards, fewer parallel compile jobs)",
                       "the kernel's OOM killer ended " + who + held + " for host memory", 0.6));
  if (run.flags.cpu_offload_gb && *run.flags.cpu_offload_gb > 0)
    out.push_back(FixSuggestion{{{"--cpu-offload-gb", "0"}}, "", "",
                                "--cpu-offload-gb " + util::fixed(*run.flags.cpu_offload_gb, 1) + " keeps weights in host RAM", 0.5,
                                "log arithmetic"});
  return out;
}

}  // namespace

std::vector<FixSuggestion> host_memory_fixes(const Finding& f, const LoggedRun& run) {
  const std::string& c = f.cause;
  if (c == "swap_space_too_large") return swap_space(f, run);
  if (c == "ray_memory_monitor") return ray_monitor(f);
  if (c == "mmap_enomem") return mmap_enomem(f);
  if (c == "oom_killer") return oom_killer(f, run);
  if (c == "dev_shm_too_small")
    return {action("Give the container more shared memory: docker run --shm-size=16g (or --ipc=host); in Kubernetes an "
                   "emptyDir with medium: Memory mounted at /dev/shm",
                   "/dev/shm filled up (Docker gives a container 64 MiB of it by default)", 0.7)};
  if (c == "pinned_memory")
    return {action("Pin less host memory: --swap-space 0 (unless beam search or n > 1 needs SWAP preemption) and a smaller "
                   "--cpu-offload-gb; in a container raise the memlock limit (docker run --ulimit memlock=-1)",
                   "page-locked host memory could not be allocated", 0.5)};
  return {};
}

}  // namespace headroom
