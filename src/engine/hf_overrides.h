// --hf-overrides (and the older --rope-scaling / --rope-theta): the keys of the model's config a
// vLLM command overrides, applied before anything is sized.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "headroom/error.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"

namespace headroom::engine {

// The model as vLLM sees it with the command's overrides: its RoPE scaling and length limit
// replaced (config/model.py hf_overrides, merged into the HF config before the length is derived).
// nullopt when the command overrides none of the keys headroom models. Errors name the flag.
Result<std::optional<ModelSpec>> apply_hf_overrides(const ModelSpec& model, const VllmFlags& flags);

// One warning per overridden key that changes what vLLM builds but is not modelled (everything but
// the RoPE scaling, the RoPE base and the length limit), saying the prediction reads it as published.
std::vector<std::string> hf_override_warnings(const VllmFlags& flags);

}  // namespace headroom::engine
