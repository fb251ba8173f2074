// Helpers shared by the files of src/model/ (not part of the public API).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "headroom/model.h"
#include "model/config_reader.h"

#define HR_TRY(var, expr)                                     \
  auto var##_result = (expr);                                 \
  if (!var##_result) return tl::unexpected(var##_result.error()); \
  auto var = std::move(*var##_result)

namespace headroom::model_detail {

// parse_model_config with optional raw text for line:col positions.
Result<ModelSpec> parse_config(const nlohmann::json& config, const std::string& origin,
                               std::shared_ptr<const std::string> text);

// transformers' default of tie_word_embeddings for a model_type whose config omits the key.
bool default_tie_word_embeddings(std::string_view model_type);

// Fills spec.layer_kinds (and sliding_window / attention_chunk_size) from the text config.
Result<bool> read_layer_kinds(const ConfigReader& text, ModelSpec& spec);

// Reads MoE, MLA and hybrid (Mamba / Gated DeltaNet) fields.
Result<bool> read_moe(const ConfigReader& text, ModelSpec& spec);
Result<bool> read_mla(const ConfigReader& text, ModelSpec& spec);
Result<bool> read_hybrid(const ConfigReader& text, ModelSpec& spec);

// A quantization_config object (config.json) or a ModelOpt hf_quant_config.json.
Result<QuantizationConfig> read_quantization_config(const ConfigReader& q);
QuantizationConfig read_modelopt_quant_config(const nlohmann::json& hf_quant_config);

// tokenizer_config.json's model_max_length (transformers' 1e30 "no limit" sentinel ignored).
void apply_tokenizer_config(const nlohmann::json& tokenizer_config, ModelSpec& spec);

// The catalogue line for an id (case-insensitive), or nullptr.
const nlohmann::json* find_catalog_line(std::string_view id);

}  // namespace headroom::model_detail
