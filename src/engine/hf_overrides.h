// --hf-overrides (and the older --rope-scaling / --rope-theta): the keys of the model's config a
// vLLM command overrides, applied before anything is sized.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "headroom/error.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_version.h"

namespace headroom::engine {

// What the command's overrides make of the model in `version`: `model` holds its RoPE scaling and
// length limit replaced (config/model.py hf_overrides, merged into the HF config before the length
// is derived), nullopt when nothing headroom models changes; `notes` says which override the
// version ignores.
struct OverriddenModel {
  std::optional<ModelSpec> model;
  std::vector<std::string> notes;
};

// Which RoPE key an override must name depends on the release: vLLM read `rope_scaling` up to
// #28542 (taken as v0.12, "Update rope_scaling to rope_parameters in preparation for Transformers
// v5"), then copied a found rope_scaling (the override's, else the config's own) over
// `rope_parameters` (patch_rope_parameters, transformers v4 branch); from vLLM's move to
// transformers v5 (#30566, shipped in v0.19.1) the config reads rope_parameters only, so a
// rope_scaling override (and --rope-scaling) changes nothing.
// Errors name the flag.
Result<OverriddenModel> apply_hf_overrides(const ModelSpec& model, const VllmFlags& flags, const VllmVersion& version);

// One warning per overridden key that changes what vLLM builds but is not modelled (everything but
// the RoPE scaling, the RoPE base and the length limit), saying the prediction reads it as published.
std::vector<std::string> hf_override_warnings(const VllmFlags& flags);

}  // namespace headroom::engine
