// The vLLM startup log as data: VllmLogParser reads log lines one at a time (a stream of any
// length) and rebuilds the run they describe (version, model, flags in effect, GPU memory, and
// the numbers vLLM measured: weights, activation peak, non-torch memory, KV cache, CUDA graphs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/vllm_config.h"
#include "headroom/vllm_version.h"

namespace headroom {

// How far startup got, from the landmark lines vLLM prints in order.
enum class StartupStage {
  not_started,
  configured,        // engine config / args line seen
  loading_weights,   // "Starting to load model", checkpoint shards
  weights_loaded,    // "Model loading took ..."
  profiling,         // multimodal profile run started
  kv_cache_sized,    // "Available KV cache memory", "# GPU blocks", "GPU KV cache size"
  capturing_graphs,  // "Capturing cudagraphs ...", W4 hint
  graphs_captured,   // "Graph capturing finished"
  engine_ready,      // "init engine ... took", "Starting vLLM API server"
  serving,           // "Application startup complete", "Added request", request logs
};
std::string_view to_string(StartupStage stage);

// One vLLM run as its log describes it. Sizes are GiB as vLLM prints them (2^30 bytes).
struct LoggedRun {
  std::optional<VllmVersion> version;
  std::string version_text;          // as logged, e.g. "0.11.1rc6.dev35"
  std::optional<bool> v1_engine;     // from the engine config line
  std::string model;
  std::string architecture;          // "Resolved architecture: ..."
  VllmFlags flags;                   // flags in effect (engine config line, non-default args, scheduler lines)
  std::string gpu_name;
  std::optional<double> total_gib;   // total GPU memory as vLLM or torch reported it
  std::optional<double> free_at_start_gib;
  std::optional<double> requested_gib;       // gpu_memory_utilization × total
  std::optional<double> initial_memory_usage_gib;  // v0.6.4 profile line (includes other processes)
  // Measured terms.
  std::optional<double> weights_gib;
  std::optional<double> activation_peak_gib;
  std::optional<double> non_torch_gib;
  std::optional<double> non_kv_total_gib;    // "Total non KV cache memory"
  std::optional<double> kv_cache_gib;        // "Available KV cache memory" (may be negative in V0)
  std::optional<std::int64_t> kv_tokens;     // "GPU KV cache size" or blocks × block size (V0)
  std::optional<std::int64_t> num_gpu_blocks;
  std::optional<double> max_concurrency;
  std::optional<std::int64_t> concurrency_len;
  std::optional<double> cuda_graph_gib;            // actual ("Graph capturing finished ... took")
  std::optional<double> cuda_graph_estimated_gib;  // "Estimated CUDA graph memory"
  std::optional<std::int64_t> kv_cache_memory_fit_bytes;   // MRV2 suggestion: fits the requested memory
  std::optional<std::int64_t> kv_cache_memory_full_bytes;  // MRV2 suggestion: uses the whole GPU
  std::optional<std::int64_t> auto_fit_max_model_len;      // "Auto-fit max_model_len: reduced from X to Y"
  bool multimodal_profile = false;   // a multimodal profile run was started
  bool engine_started = false;       // startup completed
  StartupStage stage = StartupStage::not_started;
  std::int64_t stage_line = 0;       // line number of the latest landmark
  std::int64_t lines = 0;            // lines fed
};

// Rebuilds a LoggedRun from log lines. Lines may carry ANSI colour codes and process prefixes
// such as "(EngineCore pid=12)"; both are removed before parsing. Never fails: lines it does not
// recognise are ignored.
class VllmLogParser {
 public:
  VllmLogParser();

  // Feeds the next line (without its newline); line numbers start at 1 and count every line.
  void feed(std::string_view line);

  // Fast path for scanners that already matched `anchors()` on the raw line: `anchor` is the index
  // of the anchor that matched; `line_number` is the line's number.
  void feed_matched(std::int64_t line_number, std::string_view line, std::size_t anchor);

  // Literal strings; a line that contains none of them carries nothing for the parser.
  static const std::vector<std::string>& anchors();

  const LoggedRun& run() const { return m_run; }
  LoggedRun& run() { return m_run; }

 private:
  void apply(std::size_t anchor, std::string_view clean_line);
  void advance(StartupStage stage);

  LoggedRun m_run;
  std::int64_t m_line = 0;
};

// The run as JSON: unknown values are left out; sizes carry their unit in the key (weights_gib).
nlohmann::json to_json(const LoggedRun& run);

// Removes ANSI escape sequences and leading process tags ("(EngineCore_DP0 pid=43) ",
// "[rank0]: ") from a log line.
std::string clean_log_line(std::string_view line);

// Parses a vLLM version string leniently ("0.11.1rc6.dev35", "v0.9.1", "0.6.4.post1"); the
// pre-release and dev parts are dropped. nullopt when no x.y is found.
std::optional<VllmVersion> parse_logged_version(std::string_view text);

}  // namespace headroom
