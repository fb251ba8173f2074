// What a request names, checked against the server's policy: the model (catalogue and Hugging
// Face ids always; local folders only below --models-dir, never through `..` or a symlink out),
// the GPUs (catalogue, a size, or this host's only with --live-gpus) and the vLLM version.
#pragma once

#include <string>
#include <vector>

#include "headroom/api_request.h"
#include "headroom/model.h"
#include "headroom/server.h"
#include "headroom/vllm_engine.h"
#include "headroom/vllm_version.h"
#include "server/api_error.h"

namespace headroom::server {

// The Hugging Face cache folder this server reads, found as load_model finds it (hf_hub_cache,
// HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub).
std::string server_hub_cache(const ServerOptions& options);

ApiResult<ModelSpec> load_requested_model(const std::string& ref, const ServerOptions& options);

// As `check` and `plan` resolve --gpu/--gpus/...: `needed` GPUs for the flags (0: every live GPU,
// or one per node). Requests without "gpu" probe this host only with --live-gpus.
ApiResult<GpuSetup> resolve_target_gpus(const TargetRequest& target, int needed, const ServerOptions& options,
                                        std::vector<std::string>& warnings);

ApiResult<VllmVersion> resolve_target_version(const TargetRequest& target);

// Whether answers for this target may be cached (not when they depend on this host's GPUs now).
bool target_is_static(const TargetRequest& target);

}  // namespace headroom::server
