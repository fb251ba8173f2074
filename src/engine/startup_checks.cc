// vLLM's pre-allocation checks, in its order. Each check names the vLLM file it reproduces; the
// table in docs/startup-checks.md lists them with versions and tests.
#include "engine/startup_checks.h"

#include "engine/encoder_profile.h"
#include "engine/gemma4_vision.h"
#include "engine/quant_kernels.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "engine/vllm_cli_flags.h"
#include "engine/vllm_messages.h"
#include "util/embedded_data.h"
#include "util/json_file.h"
#include "engine/weights.h"
#include "util/strings.h"

namespace headroom::engine {

namespace {

Failure config_error(std::string error_class, std::string message) {
  return Failure{std::move(error_class), "config", std::move(message), {}};
}

Failure construction_error(std::string error_class, std::string message) {
  return Failure{std::move(error_class), "model-construction", std::move(message), {}};
}

// distributed/utils.py ensure_divisibility, reached through divide(): an AssertionError whose text
// is "{numerator} is not divisible by {denominator}" (all versions).
std::string not_divisible(std::int64_t numerator, std::int64_t denominator) {
  return std::to_string(numerator) + " is not divisible by " + std::to_string(denominator);
}

// The quantization method as vLLM resolves it (quant_kernels.h).
std::string effective_quantization(const StartupCheckInputs& in) {
  return resolved_quantization_method(in.settings.quantization, in.flags.quantization.has_value(), in.model, in.gpu);
}

int weight_block(const QuantizationConfig& q, int index) {
  // fp8 block quantization: "weight_block_size": [block_n, block_k] (fp8.py Fp8Config).
  if (!q.raw.is_object()) return 0;
  auto it = q.raw.find("weight_block_size");
  if (it == q.raw.end() || !it->is_array() || it->size() != 2 || !(*it)[index].is_number_integer()) return 0;
  return (*it)[index].get<int>();
}

// The quantization methods vLLM accepts from `--quantization` for a checkpoint whose config names
// `checkpoint` (config/model.py _verify_quantization): the method itself, or one whose
// override_quantization_method claims the checkpoint (gptq_marlin.py, awq_marlin.py, moe_wna16.py:
// "marlin" and the *_marlin names run GPTQ/AWQ checkpoints; moe_wna16 runs them for MoE models).
// Empty for checkpoints headroom does not check (ModelOpt, GGUF, ...): anything is let through.
std::vector<std::string> methods_accepted_for(const std::string& checkpoint) {
  if (checkpoint == "gptq")
    return {"gptq", "gptq_marlin", "marlin", "gptq_marlin_24", "gptq_bitblas", "bitblas", "moe_wna16"};
  if (checkpoint == "awq") return {"awq", "awq_marlin", "marlin", "moe_wna16"};
  if (checkpoint == "fp8" || checkpoint == "compressed-tensors" || checkpoint == "bitsandbytes" || checkpoint == "mxfp4")
    return {checkpoint};
  return {};
}

// Whether the checkpoint is known to carry no quantization at all: no quantization config, and
// either its safetensors headers were read and hold no packed GPTQ/AWQ tensors (which would mean a
// quantize_config.json headroom does not read), or it is a catalogue line, whose facts come from
// the repo's config.json.
bool known_unquantized(const ModelSpec& model) {
  if (model.quantization) return false;
  if (model.weights && model.weights->exact) {
    for (const auto& t : model.weights->tensors)
      if (t.dtype == "I32" || t.name.ends_with(".qweight") || t.name.ends_with(".qzeros")) return false;
    return true;
  }
  return model.source == ModelSource::catalog;
}

// Attention.__init__ per rank: num_heads = total / TP (QKVParallelLinear), num_kv_heads = total KV /
// TP, or 1 when the KV heads are replicated (TP >= total KV heads).
std::optional<Failure> attention_heads_failure(const ModelSpec& model, int tp) {
  if (model.mla || model.num_attention_heads <= 0 || model.num_kv_heads <= 0) return std::nullopt;
  const int ranks = std::max(1, tp);
  if (model.num_attention_heads % ranks != 0) return std::nullopt;  // the TP checks before this one report it
  const int heads = model.num_attention_heads / ranks;
  const int kv_heads = model.num_kv_heads >= ranks ? model.num_kv_heads / ranks : 1;
  if (heads % kv_heads == 0) return std::nullopt;
  return construction_error("attention_heads_invalid", "num_heads (" + std::to_string(heads) +
                                                           ") is not divisible by num_kv_heads (" + std::to_string(kv_heads) + ")");
}

// vLLM's model registry as read (data/vllm_architectures.json, with its source): the
// architectures it serves, and those it served until a version.
struct ArchitectureRegistry {
  std::vector<std::string> names;
  std::vector<std::string> transformers_names;  // generative classes vLLM's Transformers backend loads
  std::vector<std::pair<std::string, VllmVersion>> previously_supported;
  VllmVersion read_at;
};

const ArchitectureRegistry& architecture_registry() {
  static const ArchitectureRegistry k_registry = [] {
    ArchitectureRegistry r;
    auto text = embedded::find("vllm_architectures.json");
    if (!text) return r;
    auto j = util::parse_json(*text, "vllm_architectures.json");
    if (!j || !j->is_object()) return r;
    if (auto names = j->find("architectures"); names != j->end() && names->is_array())
      for (const auto& n : *names)
        if (n.is_string()) r.names.push_back(n.get<std::string>());
    if (auto tf = j->find("transformers_architectures"); tf != j->end() && tf->is_array())
      for (const auto& n : *tf)
        if (n.is_string()) r.transformers_names.push_back(n.get<std::string>());
    if (auto before = j->find("previously_supported"); before != j->end() && before->is_object())
      for (const auto& [name, v] : before->items())
        if (v.is_string())
          if (auto version = VllmVersion::parse(v.get<std::string>())) r.previously_supported.emplace_back(name, *version);
    if (auto at = j->find("read_at_version"); at != j->end() && at->is_string())
      if (auto version = VllmVersion::parse(at->get<std::string>())) r.read_at = *version;
    return r;
  }();
  return k_registry;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Whether the catalogue has a model of this architecture (2026's architectures are newer than the
// registry as read): a plain text search of the embedded catalogue, made only for an architecture
// outside the registry.
bool catalogue_has_architecture(const std::string& arch) {
  auto text = embedded::find("models.jsonl");
  return text && text->find("\"architecture\": \"" + arch + "\"") != std::string_view::npos;
}

// Whether vLLM would find a model class for the architecture.
enum class ArchitectureStanding { served, unknown_but_maybe_served, refused };

// The last release that serves a class vLLM dropped (Llama 3.2 Vision and the other V0-only
// models with V0 in v0.11, Phi-4-multimodal after v0.12), when `version` is a later one.
std::optional<VllmVersion> dropped_before(const std::string& arch, const VllmVersion& version) {
  const auto& registry = architecture_registry();
  for (const auto& [name, until] : registry.previously_supported)
    if (name == arch && version > until && !contains(registry.names, arch)) return until;
  return std::nullopt;
}

ArchitectureStanding architecture_standing(const StartupCheckInputs& in) {
  const ModelSpec& model = in.model;
  const auto& registry = architecture_registry();
  const std::string& arch = model.architecture;
  // A dropped class is refused by the releases after it, a catalogue model's too.
  if (dropped_before(arch, in.version)) return ArchitectureStanding::refused;
  if (model.architecture.empty() || model.source == ModelSource::catalog) return ArchitectureStanding::served;
  if (model.raw_config.is_object() && model.raw_config.contains("auto_map")) return ArchitectureStanding::served;
  if (registry.names.empty()) return ArchitectureStanding::served;
  if (contains(registry.names, arch) || contains(registry.transformers_names, arch)) return ArchitectureStanding::served;
  for (const auto& [name, until] : registry.previously_supported)
    if (name == arch && in.version <= until) return ArchitectureStanding::served;
  if (catalogue_has_architecture(arch)) return ArchitectureStanding::served;
  // A generative class (what `vllm serve` loads) that neither vLLM's registry nor transformers'
  // generative auto-mappings name: vLLM refuses it. Other classes (pooling models, base models) may
  // still reach the Transformers backend through classes outside the mappings read.
  // A release after the registry was read may have added the class (vLLM adds several a month):
  // only up to that release is the refusal a fact.
  const bool generative = arch.ends_with("ForCausalLM") || arch.ends_with("ForConditionalGeneration");
  return generative && !(registry.read_at < in.version) ? ArchitectureStanding::refused
                                                        : ArchitectureStanding::unknown_but_maybe_served;
}

std::string shown_architecture(const std::string& arch) { return arch.size() > 80 ? arch.substr(0, 80) + "..." : arch; }

}  // namespace

std::optional<std::string> dropped_architecture_note(const std::string& architecture, const VllmVersion& version) {
  auto last = dropped_before(architecture, version);
  if (!last) return std::nullopt;
  return "vLLM " + last->to_string() + " is the last release that serves " + architecture +
         " (it was removed after it): --vllm-version " + last->to_string() + " predicts that release";
}

std::vector<std::string> startup_warnings(const StartupCheckInputs& in) {
  std::vector<std::string> out = unrecognized_flag_warnings(in.flags, in.version);
  if (auto note = dropped_architecture_note(in.model.architecture, in.version)) out.push_back(*note);
  if (!in.model.architecture_assumed_from.empty() && !in.flags.max_model_len)
    out.push_back("max_model_len defaults to " + in.model.architecture_assumed_from + "'s length (" +
                  std::to_string(in.derived_max_model_len) + "), the model assumed for this repo: its own config may set "
                  "another, so pass --max-model-len for a prediction that does not depend on it");
  // Whisper (whisper.py) is an encoder-decoder: headroom reads it as a decoder-only model.
  if (in.model.model_type == "whisper")
    out.push_back("Whisper is an encoder-decoder model, which headroom does not model: the audio encoder's weights, the "
                  "decoder's own layer count (decoder_layers) and its cross-attention cache over the encoder's 1,500 "
                  "positions per request are not in this prediction");
  // A class outside every list read might be one transformers has elsewhere (the Transformers
  // backend): a warning, not a predicted failure.
  if (architecture_standing(in) != ArchitectureStanding::unknown_but_maybe_served) return out;
  const auto& registry = architecture_registry();
  const std::string shown = shown_architecture(in.model.architecture);
  const std::string since = registry.read_at < in.version
                                ? "; vLLM " + in.version.to_string() + " is newer and may have added it, and if it has not,"
                                : ":";
  out.push_back("architecture " + shown + " is not in vLLM's model registry (read at v" + registry.read_at.to_string() + ")" +
                since + " unless transformers has this class (vLLM's Transformers backend) or the config's auto_map names remote "
                "code, vLLM stops with \"Model architectures ['" + shown + "'] are not supported for now.\"");
  return out;
}

int min_quantization_capability(const std::string& method_in, const VllmVersion& v) {
  const std::string m = util::to_lower(method_in);
  // get_min_capability() of each config class in model_executor/layers/quantization/.
  if (m == "fp8") return v >= VllmVersion{0, 5, 1} ? 80 : 89;  // Marlin weight-only fp8 on Ampere from v0.5.1
  if (m == "fbgemm_fp8") return 80;
  if (m == "awq") return 75;
  if (m == "gptq" || m == "gguf") return 60;
  if (m == "gptq_marlin" || m == "awq_marlin" || m == "marlin" || m == "gptq_marlin_24") return 80;
  if (m == "bitsandbytes" || m == "compressed-tensors" || m == "compressed_tensors") return 70;
  if (m == "mxfp4") return 80;
  if (m == "modelopt") return 89;
  // NVFP4: Blackwell only at first; the FP4 Marlin kernel (#17687, merged 2025-05-06, v0.9) runs
  // it weight-only from 8.0, and vLLM main of 2026 (marlin_utils_fp4.py is_fp4_marlin_supported,
  // ModelOptNvFp4Config.get_min_capability) from 7.5. When 80 became 75 is not pinned; 75 is
  // taken from v0.26 (the first era whose code was read).
  if (m == "modelopt_fp4") return v >= VllmVersion{0, 26} ? 75 : v >= VllmVersion{0, 9} ? 80 : 100;
  return 0;
}

namespace {

// --disable-chunked-mm-input, or a multimodal prefix-LM model (Gemma 4 31B and 26B-A4B from v0.20),
// for which platforms/cuda.py forces it ("Forcing --disable_chunked_mm_input for models with
// multimodal-bidirectional attention."): compute_mm_encoder_budget (encoder_cache_manager.py,
// #16447), reached from GPUModelRunner.__init__'s MultiModalBudget, refuses an item larger than
// max_num_batched_tokens. For Gemma 4 before v0.22 that is the 2496-token video against the API
// server's 2048 default on GPUs under 70 GiB and A100s.
std::optional<Failure> prefix_lm_item_failure(const StartupCheckInputs& in) {
  const bool prefix_lm = gemma4_prefix_lm(in.model, in.version);
  if ((!prefix_lm && !in.flags.disable_chunked_mm_input) || !in.version.is_v1_engine() || text_only_mode(in.model, in.flags))
    return std::nullopt;
  const auto largest = largest_mm_item(in.model, in.flags, in.settings, in.version);
  if (!largest) return std::nullopt;
  const std::int64_t item = std::max(largest->tokens, largest->budget_tokens);
  const std::int64_t batched = in.settings.max_num_batched_tokens;
  if (item <= batched) return std::nullopt;
  return Failure{"mm_item_exceeds_batched_tokens", "config",
                 "ValueError: Chunked MM input disabled but max_tokens_per_mm_item (" + std::to_string(item) +
                     ") is larger than max_num_batched_tokens (" + std::to_string(batched) +
                     "). Please increase max_num_batched_tokens.",
                 {}, item};
}

}  // namespace

std::optional<Failure> engine_config_failure(const StartupCheckInputs& in) {
  const auto& s = in.settings;
  const auto& model = in.model;
  // 0. The command line (utils/argparse_utils.py FlexibleArgumentParser → argparse parse_args): a
  //    mistyped flag ends the run before any config is built.
  if (auto f = unrecognized_arguments_failure(in.flags, in.version)) return f;
  // 0b. model_executor/models/registry.py _ModelRegistry.inspect_model_cls, from ModelConfig's
  //    construction before its length checks: an architecture that neither vLLM's registry, nor
  //    transformers' generative classes (the Transformers backend), nor remote code (auto_map) has.
  if (architecture_standing(in) == ArchitectureStanding::refused)
    return config_error("architecture_unsupported", "Model architectures ['" + shown_architecture(model.architecture) +
                                                        "'] are not supported for now. Supported architectures: dict_keys([...])");
  // 1. config/model.py _get_and_verify_max_len (ModelConfig, built first): a longer max_model_len than
  //    the derived one is an error unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.
  //    A limit from a model assumed by name (its own config not read) is a guess: no failure.
  if (in.flags.max_model_len && *in.flags.max_model_len > in.derived_max_model_len && !in.flags.allow_long_max_model_len &&
      model.architecture_assumed_from.empty())
    return config_error("max_model_len_exceeds_model_limit",
                        max_model_len_exceeds_message(*in.flags.max_model_len, model.max_length_key, in.derived_max_model_len));
  // 2a. config/model.py _verify_quantization (ModelConfig; config.py before v0.10): a --quantization
  //     that neither is the checkpoint's method nor overrides it. A method headroom inferred from
  //     the repo name (its config was not read) is a guess: no failure is asserted from it.
  const bool guessed = model.quantization && !model.quantization->guessed_from.empty();
  if (in.flags.quantization && model.quantization && !model.quantization->method.empty() && !guessed) {
    const std::string user = util::to_lower(*in.flags.quantization), checkpoint = util::to_lower(model.quantization->method);
    const auto accepted = methods_accepted_for(checkpoint);
    if (!accepted.empty() && std::find(accepted.begin(), accepted.end(), user) == accepted.end())
      return config_error("quantization_mismatch", "Quantization method specified in the model config (" + checkpoint +
                                                       ") does not match the quantization method specified in the "
                                                       "`quantization` argument (" + user + ").");
  }
  // 2b. model_executor/model_loader/weight_utils.py get_quant_config, called by
  //     _get_quantization_config: GPTQ and AWQ read their parameters from quantize_config.json (or
  //     quant_config.json) when config.json has none; an unquantized checkpoint has neither. Methods
  //     that quantize while loading (fp8, bitsandbytes, experts_int8) need no file.
  if (in.flags.quantization && known_unquantized(model)) {
    const std::string user = util::to_lower(*in.flags.quantization);
    if (user == "awq" || user == "gptq" || user == "awq_marlin" || user == "gptq_marlin")
      return config_error("quantization_config_missing", "Cannot find the config file for " + user);
  }
  // 2c. config/vllm.py _get_quantization_config (VllmConfig; config.py before v0.10): the method's
  //     minimum compute capability.
  const int capability = in.gpu.capability();
  if (!s.quantization.empty() && capability > 0 && in.gpu.vendor != "AMD" && !(guessed && !in.flags.quantization)) {
    const std::string method = effective_quantization(in);
    const int need = min_quantization_capability(method, in.version);
    if (need > capability)
      return config_error("quantization_unsupported_on_gpu",
                          "The quantization method " + (method == "modelopt_fp4" ? method : s.quantization) + " is not supported for the current GPU. Minimum capability: " +
                              std::to_string(need) + ". Current capability: " + std::to_string(capability) + ".");
  }
  // 3. config/cache.py: block_size is one of vLLM's choices (argparse choices before v0.10).
  if (in.flags.block_size) {
    static const std::vector<int> k_choices = {1, 8, 16, 32, 64, 128};
    const int b = *in.flags.block_size;
    if (std::find(k_choices.begin(), k_choices.end(), b) == k_choices.end())
      return config_error("invalid_block_size", "argument --block-size: invalid choice: " + std::to_string(b) +
                                                    " (choose from 1, 8, 16, 32, 64, 128)");
  }
  // 4. config/scheduler.py verify_max_model_len (SchedulerConfig).
  if (s.max_num_batched_tokens < s.max_num_seqs && in.flags.max_num_batched_tokens)
    return config_error("scheduler_config_invalid", "max_num_batched_tokens (" + std::to_string(s.max_num_batched_tokens) +
                                                        ") must be greater than or equal to max_num_seqs (" +
                                                        std::to_string(s.max_num_seqs) + ").");
  if (!s.enable_chunked_prefill && s.max_num_batched_tokens < s.max_model_len)
    return config_error("scheduler_config_invalid",
                        "max_num_batched_tokens (" + std::to_string(s.max_num_batched_tokens) + ") is smaller than max_model_len (" +
                            std::to_string(s.max_model_len) +
                            "). This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM "
                            "reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len.");
  // 5. config/model.py verify_with_parallel_config (VllmConfig.__post_init__): heads over TP.
  const int tp = s.tensor_parallel_size, pp = s.pipeline_parallel_size;
  if (model.num_attention_heads > 0 && model.num_attention_heads % tp != 0)
    return config_error("tp_size_not_divisible", tp_not_divisible_message(model.num_attention_heads, tp));
  // 6. distributed/utils.py get_pp_indices: every stage needs at least one layer.
  if (pp > model.num_layers)
    return config_error("pp_size_too_large", "pipeline_parallel_size (" + std::to_string(pp) +
                                                 ") is larger than the number of layers (" + std::to_string(model.num_layers) + ")");
  return std::nullopt;
}

std::optional<Failure> worker_init_failure(const StartupCheckInputs& in, const std::optional<Failure>& dtype_failure) {
  // platforms/cuda.py check_if_supports_dtype (V1 gpu_worker.py init_device; V0 worker.py
  // _check_if_gpu_supports_dtype): bf16 needs compute capability 8.0. Runs before the free-memory check.
  if (dtype_failure) return dtype_failure;
  return prefix_lm_item_failure(in);
}

std::optional<Failure> model_construction_failure(const StartupCheckInputs& in) {
  const auto& model = in.model;
  const int tp = in.settings.tensor_parallel_size;
  // 1. The embedding comes first: VocabParallelEmbedding pads the vocabulary to 64
  //    (DEFAULT_VOCAB_PADDING_SIZE) and vocab_range_from_global_vocab_size divides it over TP.
  const std::int64_t vocab_padded = (model.vocab_size + 63) / 64 * 64;
  if (tp > 1 && vocab_padded % tp != 0)
    return construction_error("tp_size_not_divisible", not_divisible(vocab_padded, tp));
  // 1b. make_layers asks get_pp_indices (distributed/utils.py) for this stage's layers, which reads
  //     VLLM_PP_LAYER_PARTITION whenever it is set (PP 1 included).
  if (in.flags.pp_layer_partition) {
    const std::string& text = *in.flags.pp_layer_partition;
    auto parts = engine::parse_pp_layer_partition(text);
    if (!parts) return construction_error("pp_layer_partition_invalid", "Invalid partition string: " + text);
    const int pp = in.settings.pipeline_parallel_size;
    if (static_cast<int>(parts->size()) != pp)
      return construction_error("pp_layer_partition_invalid", "len(partitions)=" + std::to_string(parts->size()) +
                                                                  " does not match pp_size=" + std::to_string(pp) + ".");
    long long sum = 0;
    for (int p : *parts) sum += p;
    if (sum != model.num_layers)
      return construction_error("pp_layer_partition_invalid", "sum(partitions)=" + std::to_string(sum) +
                                                                  " does not match num_hidden_layers=" +
                                                                  std::to_string(model.num_layers) + ".");
  }
  // 2. Layer 0's attention: QKVParallelLinear divides the heads, then the KV heads — split when
  //    there are at least TP of them, replicated otherwise (TP must then be a multiple).
  if (tp > 1 && !model.mla && model.num_kv_heads > 0) {
    if (model.num_kv_heads >= tp && model.num_kv_heads % tp != 0)
      return construction_error("tp_size_not_divisible", not_divisible(model.num_kv_heads, tp));
    if (model.num_kv_heads < tp && tp % model.num_kv_heads != 0)
      return construction_error("tp_size_not_divisible", not_divisible(tp, model.num_kv_heads));
  }
  // 2b. Then the Attention layer (attention/layer.py Attention.__init__, all versions): each rank's
  //     query heads are grouped over its KV heads, asserting "num_heads (N) is not divisible by
  //     num_kv_heads (M)". A config with more KV heads than query heads fails here at any TP.
  if (auto f = attention_heads_failure(model, tp)) return f;
  if (tp <= 1 && !(model.quantization && weight_block(*model.quantization, 0) > 0)) return std::nullopt;
  // 3. The MLP: MergedColumnParallelLinear divides gate+up (2 × intermediate) over TP; FusedMoE
  //    divides each expert's width unless experts are placed whole by expert parallelism.
  const bool ep = in.flags.enable_expert_parallel;
  const bool dense_mlp = !model.moe || model.moe->first_k_dense_replace > 0 || !model.moe->mlp_only_layers.empty() ||
                         model.moe->dense_mlp_in_every_layer;
  const int dense_width = model.moe && model.moe->dense_intermediate_size > 0 ? model.moe->dense_intermediate_size
                                                                              : model.intermediate_size;
  if (tp > 1 && dense_mlp && dense_width > 0 && (2LL * dense_width) % tp != 0)
    return construction_error("tp_size_not_divisible", not_divisible(2LL * dense_width, tp));
  const int expert_width = model.moe ? model.moe->moe_intermediate_size : 0;
  if (tp > 1 && !ep && expert_width > 0 && expert_width % tp != 0)
    return construction_error("tp_size_not_divisible", not_divisible(expert_width, tp));

  // 4. Quantized shapes per rank, checked in create_weights as each linear layer is built.
  if (!model.quantization) return std::nullopt;
  const auto& q = *model.quantization;
  const std::string method = effective_quantization(in);
  const int block_n = weight_block(q, 0), block_k = weight_block(q, 1);
  if (method == "fp8" && block_n > 0 && block_k > 0) {
    // layers/quantization/utils/fp8_utils.py validate_fp8_block_shape (dense layers, v0.7+):
    // gate/up output per rank against block_n, down's input per rank against block_k.
    if (dense_mlp && dense_width > 0) {
      const int per_rank = dense_width / tp;
      if (per_rank % block_n != 0)
        return construction_error("quantization_shape_invalid", "Weight output_partition_size = " + std::to_string(per_rank) +
                                                                    " is not divisible by weight quantization block_n = " +
                                                                    std::to_string(block_n) + ".");
      if (tp > 1 && per_rank % block_k != 0)
        return construction_error("quantization_shape_invalid", "Weight input_size_per_partition = " + std::to_string(per_rank) +
                                                                    " is not divisible by weight quantization block_k = " +
                                                                    std::to_string(block_k) + ".");
    }
    // fp8.py Fp8MoEMethod.create_weights: the experts' width per rank.
    if (expert_width > 0) {
      const int per_rank = ep ? expert_width : expert_width / tp;
      if (per_rank % block_n != 0)
        return construction_error("quantization_shape_invalid", "The output_size of gate's and up's weight = " +
                                                                    std::to_string(per_rank) +
                                                                    " is not divisible by weight quantization block_n = " +
                                                                    std::to_string(block_n) + ".");
      if (tp > 1 && !ep && per_rank % block_k != 0)
        return construction_error("quantization_shape_invalid", "The input_size of down's weight = " + std::to_string(per_rank) +
                                                                    " is not divisible by weight quantization block_k = " +
                                                                    std::to_string(block_k) + ".");
    }
  }
  // Row-parallel layers (o_proj, down_proj) split their input over TP; group-quantized formats
  // need whole groups per rank. The first such layer built is o_proj (heads × head_dim / TP), then
  // down_proj (intermediate / TP).
  const int group = q.group_size;
  if (tp > 1 && group > 0 && (method == "gptq" || method == "awq" || method == "gptq_marlin" || method == "awq_marlin")) {
    std::vector<std::int64_t> inputs;
    const int head_dim = model.head_dim > 0 ? model.head_dim : (model.num_attention_heads > 0 ? model.hidden_size / model.num_attention_heads : 0);
    inputs.push_back(static_cast<std::int64_t>(model.num_attention_heads) * head_dim / tp);
    if (dense_mlp && dense_width > 0) inputs.push_back(dense_width / tp);
    for (std::int64_t in_per_rank : inputs) {
      if (in_per_rank % group == 0) continue;
      if (method == "gptq" || method == "awq")
        // gptq.py / awq.py create_weights.
        return construction_error("quantization_shape_invalid",
                                  "The input size is not aligned with the quantized weight shape. This can be caused by too large "
                                  "tensor parallel size.");
      // utils/marlin_utils.py verify_marlin_supports_shape.
      return construction_error("quantization_shape_invalid",
                                "Weight input_size_per_partition = " + std::to_string(in_per_rank) +
                                    " is not divisible by group_size = " + std::to_string(group) +
                                    ". Consider reducing tensor_parallel_size or running with --quantization gptq.");
    }
  }
  return std::nullopt;
}

std::optional<Failure> kv_allocation_failure(const StartupCheckInputs& in) {
  if (in.model.mla || in.gpu.vendor == "AMD") return std::nullopt;
  // The backend: VLLM_ATTENTION_BACKEND, else FlashAttention on compute capability >= 8.0
  // (platforms/cuda.py get_attn_backend_cls); older GPUs get backends without this constraint.
  std::string backend = in.flags.attention_backend.value_or("");
  std::transform(backend.begin(), backend.end(), backend.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  const bool checked = backend.empty() ? in.gpu.capability() >= 80
                                       : backend.starts_with("FLASH_ATTN") || backend.starts_with("TRITON_ATTN");
  if (checked && in.settings.block_size % 16 != 0)
    return Failure{"invalid_block_size", "kv-cache-alloc", "Block size must be a multiple of 16.", {}};
  return std::nullopt;
}

Bytes pre_hybrid_kv_need(const std::vector<LayerKvSpec>& specs, std::int64_t max_model_len, const VllmVersion& version,
                         std::int64_t in_flight_tokens) {
  Bytes need = 0;
  for (const auto& s : specs) {
    if (s.type == KvSpecType::sliding_window && version < VllmVersion{0, 9})
      need += ceil_div(std::min<std::int64_t>(max_model_len, s.sliding_window), s.block_size) * s.page_bytes();
    else
      need += s.max_memory_usage_bytes(max_model_len, in_flight_tokens, 0);
  }
  return need;
}

}  // namespace headroom::engine
