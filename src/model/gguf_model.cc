// The ModelSpec of a GGUF checkpoint, as vLLM's GGUF loader builds it
// (model_executor/model_loader/gguf_loader.py): transformers turns the header's metadata into a
// config (transformers/integrations/ggml.py GGUF_CONFIG_MAPPING), and the tensors keep their ggml
// blocks on the GPU (quantization/gguf.py: GGUFLinearMethod and the embedding keep the quantized
// data), named as the Hugging Face checkpoint names them.
#include <fstream>
#include <map>

#include "model/gguf.h"
#include "model/model_internal.h"
#include "util/regular_file.h"

namespace headroom {

namespace {

using nlohmann::json;

constexpr std::uint64_t k_first_read = 1024 * 1024;
constexpr std::uint64_t k_max_header_read = 64 * 1024 * 1024;

struct TypeSize {
  std::uint32_t values, bytes;
};

// ggml's block sizes by type id (ggml.c type_traits, ggml-common.h block structs).
std::optional<TypeSize> type_size(std::uint32_t type) {
  static const std::map<std::uint32_t, TypeSize> k_sizes{
      {0, {1, 4}},      {1, {1, 2}},      {2, {32, 18}},    {3, {32, 20}},    {6, {32, 22}},   {7, {32, 24}},
      {8, {32, 34}},    {9, {32, 36}},    {10, {256, 84}},  {11, {256, 110}}, {12, {256, 144}}, {13, {256, 176}},
      {14, {256, 210}}, {15, {256, 292}}, {16, {256, 66}},  {17, {256, 74}},  {18, {256, 98}},  {19, {256, 50}},
      {20, {32, 18}},   {21, {256, 110}}, {22, {256, 82}},  {23, {256, 136}}, {24, {1, 1}},     {25, {1, 2}},
      {26, {1, 4}},     {27, {1, 8}},     {28, {1, 8}},     {29, {256, 56}},  {30, {1, 2}},     {34, {256, 54}},
      {35, {256, 66}},  {39, {32, 17}}};
  auto it = k_sizes.find(type);
  if (it == k_sizes.end()) return std::nullopt;
  return it->second;
}

// llama.cpp's architecture names and the Hugging Face classes vLLM builds for them.
struct ArchMap {
  const char* gguf;
  const char* architecture;
  const char* model_type;
};
constexpr ArchMap k_archs[] = {
    {"llama", "LlamaForCausalLM", "llama"},           {"mistral", "MistralForCausalLM", "mistral"},
    {"qwen2", "Qwen2ForCausalLM", "qwen2"},           {"qwen3", "Qwen3ForCausalLM", "qwen3"},
    {"qwen2moe", "Qwen2MoeForCausalLM", "qwen2_moe"}, {"qwen3moe", "Qwen3MoeForCausalLM", "qwen3_moe"},
    {"gemma2", "Gemma2ForCausalLM", "gemma2"},        {"gemma3", "Gemma3ForCausalLM", "gemma3_text"},
    {"phi3", "Phi3ForCausalLM", "phi3"},
};

// llama.cpp's tensor names (gguf-py tensor_mapping.py) in the Hugging Face layout, so that the
// engine shards them as vLLM does.
std::string hf_name(const std::string& name) {
  static const std::map<std::string, std::string, std::less<>> k_block{
      {"attn_norm", "input_layernorm"},        {"attn_q", "self_attn.q_proj"},        {"attn_k", "self_attn.k_proj"},
      {"attn_v", "self_attn.v_proj"},          {"attn_output", "self_attn.o_proj"},   {"attn_qkv", "self_attn.qkv_proj"},
      {"attn_q_norm", "self_attn.q_norm"},     {"attn_k_norm", "self_attn.k_norm"},   {"ffn_norm", "post_attention_layernorm"},
      {"ffn_gate", "mlp.gate_proj"},           {"ffn_up", "mlp.up_proj"},             {"ffn_down", "mlp.down_proj"},
      {"ffn_gate_inp", "mlp.gate"},            {"ffn_gate_exps", "mlp.experts.gate_proj"},
      {"ffn_up_exps", "mlp.experts.up_proj"},  {"ffn_down_exps", "mlp.experts.down_proj"},
      {"ffn_gate_shexp", "mlp.shared_expert.gate_proj"}, {"ffn_up_shexp", "mlp.shared_expert.up_proj"},
      {"ffn_down_shexp", "mlp.shared_expert.down_proj"}, {"ffn_gate_inp_shexp", "mlp.shared_expert_gate"}};
  if (name.starts_with("token_embd.")) return "model.embed_tokens." + name.substr(11);
  if (name.starts_with("output_norm.")) return "model.norm." + name.substr(12);
  if (name.starts_with("output.")) return "lm_head." + name.substr(7);
  if (!name.starts_with("blk.")) return name;
  const auto dot = name.find('.', 4);
  if (dot == std::string::npos) return name;
  const auto leaf = name.rfind('.');
  const std::string module = leaf > dot ? name.substr(dot + 1, leaf - dot - 1) : name.substr(dot + 1);
  auto it = k_block.find(module);
  return "model.layers." + name.substr(4, dot - 4) + "." + (it == k_block.end() ? module : it->second) +
         (leaf > dot ? name.substr(leaf) : "");
}

// One tensor's bytes from its ggml type; a row must hold whole blocks (ggml refuses others).
Result<TensorInfo> tensor_info(const GgufTensor& t, const std::string& origin) {
  auto size = type_size(t.type);
  if (!size) return make_error(ErrorCode::parse_error, "tensor \"" + t.name + "\" has unknown ggml type " + std::to_string(t.type), origin);
  unsigned __int128 values = 1;
  for (std::uint64_t d : t.dims) values = std::min<unsigned __int128>(values * d, static_cast<unsigned __int128>(1) << 80);
  if (t.dims.empty() || t.dims[0] % size->values != 0)
    return make_error(ErrorCode::parse_error, "tensor \"" + t.name + "\": rows of " + std::to_string(t.dims.empty() ? 0 : t.dims[0]) +
                                                  " values do not fill whole blocks of " + std::to_string(size->values), origin);
  const unsigned __int128 bytes = values / size->values * size->bytes;
  if (bytes > (static_cast<unsigned __int128>(1) << 60))
    return make_error(ErrorCode::parse_error, "tensor \"" + t.name + "\" is larger than any file", origin);
  TensorInfo info;
  info.name = hf_name(t.name);
  // Float tensors keep their dtype; ggml blocks (and ggml's integer types) count as bytes.
  info.dtype = t.type == 0 ? "F32" : t.type == 1 ? "F16" : t.type == 30 ? "BF16" : "U8";
  for (auto it = t.dims.rbegin(); it != t.dims.rend(); ++it) info.shape.push_back(static_cast<std::int64_t>(*it));
  info.bytes = static_cast<Bytes>(bytes);
  return info;
}

Result<WeightsInventory> inventory(const GgufHeader& h, std::uint64_t file_size, const std::string& origin) {
  std::uint64_t align = 32;
  if (auto a = h.metadata.find("general.alignment"); a != h.metadata.end() && a->is_number_unsigned()) align = a->get<std::uint64_t>();
  if (align == 0 || align > (1u << 20)) return make_error(ErrorCode::parse_error, "general.alignment " + std::to_string(align) + " is not a GGUF alignment", origin);
  const std::uint64_t data_start = (h.header_bytes + align - 1) / align * align;
  WeightsInventory inv;
  inv.exact = true;
  inv.file_count = 1;
  for (const auto& t : h.tensors) {
    auto info = tensor_info(t, origin);
    if (!info) return tl::unexpected(info.error());
    const auto bytes = static_cast<std::uint64_t>(info->bytes);
    if (data_start > file_size || t.offset > file_size - data_start || bytes > file_size - data_start - t.offset)
      return make_error(ErrorCode::parse_error, "tensor \"" + t.name + "\" lies past the end of the file (" + std::to_string(file_size) +
                                                    " bytes): the file is truncated", origin);
    inv.total_bytes += info->bytes;
    inv.tensors.push_back(std::move(*info));
  }
  return inv;
}

// quantization/gguf.py: the I-matrix types (IQ2_XXS 16, IQ2_XS 17, IQ3_XXS 18, IQ1_S 19, IQ4_NL 20,
// IQ3_S 21, IQ2_S 22, IQ4_XS 23, IQ1_M 29) are in DEQUANT_TYPES but not in MMQ_QUANT_TYPES, so
// _fused_mul_mat_gguf multiplies a batch of more than mmvq_safe rows by dequantizing the weight whole.
bool dequantized_whole(const GgufTensor& t) { return t.dims.size() == 2 && ((t.type >= 16 && t.type <= 23) || t.type == 29); }

// A 2-D tensor's values; inventory() checked its size, so the product fits.
std::int64_t values_of(const GgufTensor& t) { return static_cast<std::int64_t>(t.dims[0] * t.dims[1]); }

// The largest such weight of the decoder layers and the LM head's (the embedding table when the
// head is tied: GGUFEmbeddingMethod.apply goes through the same kernel).
void note_dequantized_weights(const GgufHeader& h, QuantizationConfig& q) {
  const GgufTensor* head = nullptr;
  const GgufTensor* embedding = nullptr;
  for (const auto& t : h.tensors) {
    if (t.name == "output.weight") head = &t;
    if (t.name == "token_embd.weight") embedding = &t;
    if (t.name.starts_with("blk.") && dequantized_whole(t) && values_of(t) > q.gguf_dequantized_values) {
      q.gguf_dequantized_values = values_of(t);
      q.gguf_dequantized_rows = static_cast<std::int64_t>(t.dims[1]);
    }
  }
  if (!head) head = embedding;
  if (head && dequantized_whole(*head)) {
    q.gguf_dequantized_head_values = values_of(*head);
    q.gguf_dequantized_head_rows = static_cast<std::int64_t>(head->dims[1]);
  }
}

const json* meta(const GgufHeader& h, const std::string& key) {
  auto it = h.metadata.find(key);
  return it == h.metadata.end() ? nullptr : &*it;
}

// transformers' GGUF_CONFIG_MAPPING for the keys the memory model reads.
json config_of(const GgufHeader& h, const ArchMap& arch, const WeightsInventory& inv) {
  const std::string a = arch.gguf;
  json c = {{"architectures", json::array({arch.architecture})}, {"model_type", arch.model_type}, {"quantization_config", {{"quant_method", "gguf"}}},
            // transformers' GGUF config carries no torch_dtype, so vLLM takes the float32 default
            // and runs it in its 16-bit downcast (config/model.py _resolve_auto_dtype).
            {"torch_dtype", "float32"}};
  const std::pair<const char*, const char*> keys[] = {
      {"block_count", "num_hidden_layers"},         {"embedding_length", "hidden_size"},
      {"feed_forward_length", "intermediate_size"}, {"attention.head_count", "num_attention_heads"},
      {"attention.head_count_kv", "num_key_value_heads"}, {"context_length", "max_position_embeddings"},
      {"rope.freq_base", "rope_theta"},             {"attention.key_length", "head_dim"},
      {"attention.sliding_window", "sliding_window"}, {"expert_count", "num_experts"},
      {"expert_used_count", "num_experts_per_tok"}, {"expert_feed_forward_length", "moe_intermediate_size"},
      {"expert_shared_feed_forward_length", "shared_expert_intermediate_size"}};
  for (const auto& [gguf, hf] : keys)
    if (const json* v = meta(h, a + "." + gguf); v && v->is_number()) c[hf] = *v;
  if (const json* tokens = meta(h, "tokenizer.ggml.tokens"); tokens && tokens->contains("array_length")) c["vocab_size"] = (*tokens)["array_length"];
  bool has_output = false;
  for (const auto& t : inv.tensors) {
    if (t.name == "model.embed_tokens.weight" && t.shape.size() == 2 && !c.contains("vocab_size")) c["vocab_size"] = t.shape[0];
    has_output = has_output || t.name == "lm_head.weight";
  }
  c["tie_word_embeddings"] = !has_output;
  return c;
}

}  // namespace

Result<ModelSpec> gguf_model(const GgufHeader& h, std::uint64_t file_size, const std::string& origin) {
  const json* name = meta(h, "general.architecture");
  if (!name || !name->is_string()) return make_error(ErrorCode::parse_error, "no general.architecture in the GGUF metadata", origin);
  const ArchMap* arch = nullptr;
  std::string known;
  for (const auto& m : k_archs) {
    if (*name == m.gguf) arch = &m;
    known += (known.empty() ? "" : ", ") + std::string(m.gguf);
  }
  if (!arch)
    return make_error(ErrorCode::unsupported, "GGUF architecture \"" + name->get<std::string>() + "\" is not one headroom maps to a vLLM model (" +
                                                  known + "); pass the base model's folder or Hub id instead", origin);
  // vLLM's GGUF docs: "vLLM only supports loading single-file GGUF models"; llama.cpp's
  // gguf-split writes split.count into each part.
  if (const json* parts = meta(h, "split.count"); parts && parts->is_number_unsigned() && parts->get<std::uint64_t>() > 1)
    return make_error(ErrorCode::unsupported,
                      "one part of a GGUF split in " + std::to_string(parts->get<std::uint64_t>()) +
                          " files: vLLM loads only single-file GGUF models; merge the parts first (llama-gguf-split --merge) "
                          "and pass the merged file",
                      origin);
  auto inv = inventory(h, file_size, origin);
  if (!inv) return tl::unexpected(inv.error());
  auto spec = parse_model_config(config_of(h, *arch, *inv), origin);
  if (!spec) return spec;
  spec->weights = std::move(*inv);
  if (spec->quantization) note_dequantized_weights(h, *spec->quantization);
  return spec;
}

Result<ModelSpec> read_gguf_model(const std::string& path) {
  if (auto regular = util::check_regular_file(path); !regular) return tl::unexpected(regular.error());
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::io_error, "cannot open the file", path);
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(std::max<std::streamoff>(0, in.tellg()));
  // Most headers fit in the first MiB; a large vocabulary (its tokens, scores and merges are
  // metadata arrays) can take tens of MiB, read only when the first MiB is not enough.
  Result<GgufHeader> header = make_error(ErrorCode::parse_error, "empty file", path);
  for (const std::uint64_t limit : {k_first_read, k_max_header_read}) {
    std::string head(static_cast<std::size_t>(std::min(size, limit)), '\0');
    in.clear();
    in.seekg(0);
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
    header = parse_gguf_header(head, size, path);
    if (header || head.size() >= size || header.error().message.find("cut short") == std::string::npos) break;
  }
  if (!header) return tl::unexpected(header.error());
  auto spec = gguf_model(*header, size, path);
  if (!spec) return spec;
  spec->source = ModelSource::config_file;
  spec->location = path + " (GGUF)";
  return spec;
}

}  // namespace headroom
