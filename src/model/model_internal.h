// Helpers shared by the files of src/model/ (not part of the public API).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/model.h"
#include "model/config_reader.h"

#define HR_TRY(var, expr)                                     \
  auto var##_result = (expr);                                 \
  if (!var##_result) return tl::unexpected(var##_result.error()); \
  auto var = std::move(*var##_result)

namespace headroom::model_detail {

// An Ultravox config that names its language or audio model by repo id (text_model_id,
// audio_model_id) without holding that model's config: the model with linked_unread set, its own
// settings in raw_config, for load_model to complete (read_linked_repos). nullopt otherwise.
std::optional<ModelSpec> linked_repo_shell(const nlohmann::json& config);

// The shell's linked repos read from the Hugging Face cache or the Hub, their configs put in its
// config (text_config, audio_config) and their weights added as vLLM loads them.
Result<ModelSpec> read_linked_repos(const ModelSpec& shell, const ModelLoadOptions& options);

// The config.json-shaped object of the catalogue's line for `id` (catalog.cc), nullopt when it has
// none to give.
std::optional<nlohmann::json> catalog_config_json(std::string_view id);

// The Hugging Face cache folder load_model reads, and the snapshot folder of `id` in it ("" when
// not cached).
std::string hub_cache_dir(const ModelLoadOptions& options);
std::string find_cached_snapshot(const std::string& hub, std::string_view id);

// parse_model_config with optional raw text for line:col positions.
Result<ModelSpec> parse_config(const nlohmann::json& config, const std::string& origin,
                               std::shared_ptr<const std::string> text);

// transformers' default of tie_word_embeddings for a model_type whose config omits the key (a config
// without model_type: the type of the language model its architecture builds).
bool default_tie_word_embeddings(std::string_view model_type, std::string_view architecture = {});

// Fills spec.layer_kinds (and sliding_window / attention_chunk_size) from the text config.
Result<bool> read_layer_kinds(const ConfigReader& text, ModelSpec& spec);

// Layer layouts of 2026 architectures (model_layers_2026.cc): MiMo-V2 hybrid_layer_pattern,
// Kimi linear_attn_config. Returns false when the config has neither (kinds untouched).
Result<bool> read_layer_kinds_2026(const ConfigReader& text, ModelSpec& spec, std::vector<LayerKind>& kinds);

// Attention shapes and caches of 2026 architectures: Gemma 4 global heads and KV sharing, MiMo-V2
// sliding heads and V width, DSA indexer, DeepSeek-V4 compress ratios, Qwen3.5 mamba_ssm_dtype.
Result<bool> read_attention_2026(const ConfigReader& text, ModelSpec& spec);

// Reads MoE, MLA and hybrid (Mamba / Gated DeltaNet) fields.
Result<bool> read_moe(const ConfigReader& text, ModelSpec& spec);
Result<bool> read_mla(const ConfigReader& text, ModelSpec& spec);
Result<bool> read_hybrid(const ConfigReader& text, ModelSpec& spec);

// A quantization_config object (config.json) or a ModelOpt hf_quant_config.json.
Result<QuantizationConfig> read_quantization_config(const ConfigReader& q);
QuantizationConfig read_modelopt_quant_config(const nlohmann::json& hf_quant_config);

// tokenizer_config.json's model_max_length (transformers' 1e30 "no limit" sentinel ignored).
void apply_tokenizer_config(const nlohmann::json& tokenizer_config, ModelSpec& spec);

// preprocessor_config.json's largest input (max_pixels / size.longest_edge, Llama 4's
// max_patches, Kimi-VL's in_token_limit) into spec.vision; false when the model has no vision
// tower or the file names none of them. Values out of range are an error naming the key.
Result<bool> apply_preprocessor_config(const nlohmann::json& preprocessor_config, const std::string& origin,
                                       ModelSpec& spec);

// video_preprocessor_config.json: the video processor's pixel budget (size.longest_edge), which
// GLM-4.xV's video processor resizes the dummy video into; false when the model has no vision
// tower or the file has no such key.
Result<bool> apply_video_preprocessor_config(const nlohmann::json& video_preprocessor_config, const std::string& origin,
                                             ModelSpec& spec);

// The processor files a vision model's dummy input is sized from, with the function that applies
// each, in the order a folder and a Hub snapshot read them.
using ProcessorConfigApplier = Result<bool> (*)(const nlohmann::json&, const std::string&, ModelSpec&);
struct ProcessorConfigFile {
  std::string name;
  ProcessorConfigApplier apply;
};
const std::vector<ProcessorConfigFile>& processor_configs();

// The catalogue line for an id (case-insensitive), or nullptr.
const nlohmann::json* find_catalog_line(std::string_view id);

// The model source shown for a catalogue line whose architecture was copied from another
// checkpoint's line ("architecture copied from ...", "... attribution unconfirmed"); "" otherwise.
std::string copied_architecture_note(const nlohmann::json& line);

// The ModelSpec of a catalogue line (or of a copy of one); supplements are found by its hf_id.
Result<ModelSpec> spec_of_catalog_line(const nlohmann::json* line);

// The quantization a repo id's naming convention suggests (AWQ, GPTQ, FP8, NVFP4, W4A16, ...),
// written into `q` as a quantization_config; nothing when the id names no method.
void infer_quant_from_id(std::string_view id, nlohmann::json& q);

// A catalogue line's ignore list written as its length and first entries: the named entries, and
// a layer-0 module entry repeated on every layer when the length leaves room for it
// (catalog_ignore_list.cc); sets QuantizationConfig::ignore_list_inferred and the count of
// entries still unknown.
void apply_summarised_ignore_list(const nlohmann::json& line, ModelSpec& spec);

// An ignore-list glob as a regular expression's body: "*" is any run of characters, "." is
// literal, the rest stands for itself ("model.layers.*.self_attn" → "model\.layers\..*\.self_attn").
std::string glob_to_regex(std::string_view glob);

}  // namespace headroom::model_detail
