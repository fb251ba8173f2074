// ModelSpec: what headroom knows of a model's architecture and weights, read from a config.json
// (local folder, Hugging Face cache) and safetensors headers, or from the built-in catalogue.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

namespace hub {
struct HubSettings;
}

enum class ModelSource { local_dir, config_file, hf_cache, hub, catalog };
std::string_view to_string(ModelSource source);

// What a decoder layer's token mixer is. Only attention kinds hold a per-token KV cache.
enum class LayerKind {
  full_attention,
  sliding_attention,  // window = ModelSpec::sliding_window
  chunked_attention,  // Llama 4 chunked local attention, chunk = ModelSpec::attention_chunk_size
  cross_attention,    // Llama 3.2 Vision cross-attention layers
  mamba,              // Mamba / Mamba-2 state
  linear_attention,   // Gated DeltaNet / linear attention state (Qwen3-Next, Qwen3.5)
  kda_attention,      // Kimi Delta Attention state (Kimi-Linear, Kimi K3)
  no_attention,       // MLP-only layers (Nemotron-H '-' layers)
};
std::string_view to_string(LayerKind kind);

struct RopeScaling {
  std::string type;  // "linear", "dynamic", "yarn", "llama3", "longrope", "su", "mrope", "default"
  double factor = 1.0;
  std::optional<std::int64_t> original_max_position_embeddings;
  bool mrope_sections = false;  // "mrope_section" given: vLLM builds MRotaryEmbedding
};

struct MoeConfig {
  int num_experts = 0;                      // routed experts (num_experts / num_local_experts / n_routed_experts)
  int experts_per_token = 0;                // num_experts_per_tok
  int moe_intermediate_size = 0;            // per routed expert
  int num_shared_experts = 0;               // DeepSeek-style n_shared_experts (each moe_intermediate_size wide)
  int shared_expert_intermediate_size = 0;  // Qwen-MoE style single shared expert width
  int first_k_dense_replace = 0;            // leading layers with a dense MLP (DeepSeek)
  int moe_layer_freq = 1;                   // every Nth layer is MoE (decoder_sparse_step, interleave_moe_layer_step)
  std::vector<int> mlp_only_layers;         // explicit dense layers (Qwen-MoE)
  int dense_intermediate_size = 0;          // width of the dense MLP layers (intermediate_size[_mlp])
  int num_nextn_predict_layers = 0;         // MTP layers present in the checkpoint (not loaded)
  bool dense_mlp_in_every_layer = false;    // Gemma 4 style: dense MLP beside the MoE block
  // DeepSeek-V4 expert_dtype "fp4": routed experts ship as MXFP4 (e2m1 + one e8m0 scale per 32
  // values) beside an fp8 rest; vLLM loads them as MXFP4 (models/deepseek_v4/fp4_dequant.py).
  bool routed_experts_fp4 = false;
};

struct MlaConfig {
  int kv_lora_rank = 0;
  int q_lora_rank = 0;  // 0: no Q compression
  int qk_rope_head_dim = 0;
  int qk_nope_head_dim = 0;
  int v_head_dim = 0;
  // DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): a lightning indexer caches one key of
  // index_head_dim per token per layer beside the latent (0 = no indexer).
  int index_head_dim = 0;
  int index_n_heads = 0;
  int index_topk = 0;
  // GLM-5.2 indexer_types: "shared" layers reuse the previous "full" layer's top-k and keep no
  // indexer cache; empty = every layer has its own indexer.
  std::vector<bool> indexer_cached;
  // DeepSeek-V4 compressed MLA: one ratio per decoder layer (0 or 1 = sliding window only,
  // 4 = compressed sparse attention with an indexer, 128 = heavily compressed); empty = not V4.
  std::vector<int> compress_ratios;
};

// KV shape of the attention layers of one kind when it differs from the model-wide one.
struct AttentionShape {
  int num_kv_heads = 0;
  int head_dim = 0;
  int v_head_dim = 0;  // 0 = same as head_dim
  // Gemma 4's attention_k_eq_v: the checkpoint has no v_proj on these layers, and vLLM's
  // QKVParallelLinear keeps the V slot and loads K's weights into it (gemma4.py).
  bool v_from_k = false;
};

// State sizes of Mamba-2 and Gated DeltaNet layers in hybrid models.
struct HybridConfig {
  // Mamba-2 (Nemotron-H, Granite 4)
  int mamba_num_heads = 0;
  int mamba_head_dim = 0;
  int ssm_state_size = 0;
  int n_groups = 0;
  int conv_kernel = 0;
  int mamba_expand = 0;
  int mamba_intermediate_size = 0;  // expand × hidden when not written
  int chunk_size = 0;
  std::string mamba_ssm_cache_dtype;  // "" = model dtype
  // Gated DeltaNet / linear attention (Qwen3-Next)
  int linear_num_key_heads = 0;
  int linear_num_value_heads = 0;
  int linear_key_head_dim = 0;
  int linear_value_head_dim = 0;
  int linear_conv_kernel_dim = 0;
  int full_attention_interval = 0;
  // Kimi Delta Attention (Kimi-Linear, Kimi K3): linear_attn_config
  int kda_num_heads = 0;
  int kda_head_dim = 0;
  int kda_conv_kernel = 0;
  // LFM2's short-convolution layers (layer_types "conv"): kept as Mamba layers whose state is the
  // convolution's alone (mamba_intermediate_size = conv_dim, conv_kernel = conv_L_cache, no SSM).
  bool short_conv = false;
  bool conv_bias = false;
  // Nemotron-H hybrid_override_pattern, one character per layer: M Mamba-2, * attention,
  // - MLP only, E MoE ("" when the model has no such pattern).
  std::string layer_pattern;
};

struct VisionConfig {
  std::string model_type;  // vision_config.model_type as written ("siglip_vision_model", "pixtral", ...)
  int depth = 0;
  int hidden_size = 0;
  int intermediate_size = 0;
  int num_heads = 0;
  int image_size = 0;
  int patch_size = 0;
  int out_hidden_size = 0;
  int temporal_patch_size = 0;       // Qwen-VL towers: frames per 3-D patch
  int spatial_merge_size = 0;        // patches merged per side before the projector (2 = 2×2)
  int num_position_embeddings = 0;   // Qwen3-VL's learned position table
  int deepstack_layers = 0;          // Qwen3-VL: extra mergers fed from intermediate layers
  int projector_input_dim = 0;       // Llama 4's pixel-shuffle adapter
  int projector_output_dim = 0;
  int projector_intermediate_size = 0;  // Aya Vision: alignment_intermediate_size (its SwiGLU projector's linear_1 width)
  double pixel_shuffle_ratio = 0;    // InternVL / Llama 4 / Aya Vision: 1 / the pixel shuffle's factor per side
  int pooling_kernel_size = 0;       // Gemma 4 (pooling_kernel_size), LLaVA-NeXT-Video (spatial_pool_stride): patches pooled per side into one token
  int soft_tokens_per_image = 0;     // Gemma 4: default_output_length / vision_soft_tokens_per_image
  int visual_vocab_size = 0;         // Ovis2.5: visual_vocab_size (its visual head's width and the VTE's rows)
  // Gemma 3n: the timm model its tower is (vision_config.architecture, "mobilenetv5_300m_enc"),
  // whether model_args were written (they can change that model's shapes), and embed_vision's
  // vocabulary (vision_config.vocab_size).
  std::string timm_architecture;
  bool timm_model_args = false;
  int embedder_vocab = 0;
  // The processor's largest input (preprocessor_config.json, else the config): Qwen-VL-style
  // max_pixels / min_pixels (0 when not stated) and frames per video item.
  std::int64_t max_pixels = 0;
  std::int64_t min_pixels = 0;
  int max_frames = 0;
  std::int64_t video_max_pixels = 0;  // video_preprocessor_config.json's size.longest_edge (GLM-4.xV's video processor budget)
  int max_tiles = 0;                 // Llama 4: max_patches; InternVL: max_dynamic_patch (the most tiles one image is cut into)
  // DeepSeek-VL2: the local tile grid (rows × columns of 384² tiles) of the candidate resolution
  // with the most tokens (candidate_resolutions), which vLLM's dummy image takes.
  int tile_rows = 0;
  int tile_cols = 0;
  bool thumbnail_tile = false;       // InternVL: use_thumbnail (one more whole-image tile when an image has several)
  bool qkv_bias = true;              // InternViT: qkv_bias
  bool qk_norm = false;              // InternViT: qk_normalization (the 6B tower)
  bool rms_norm = false;             // InternViT: norm_type rms_norm
  std::int64_t in_token_limit = 0;   // Kimi-VL's MoonViT: the most patches one image keeps
  // Llama 3.2 Vision (Mllama): the gated global encoder after the local one, and the aspect-ratio
  // ids its tile position tables are indexed by (supported_aspect_ratios' length); tiles per
  // image are max_tiles (max_num_tiles).
  int global_layers = 0;
  int aspect_ratio_ids = 0;
  // MiniCPM-V / MiniCPM-o (minicpmv.py): the resampler's queries per slice (query_num), the slice
  // side (the top-level image_size, 448; vision_config's is the position table's 980), the most
  // slices of one image (max_slice_num; vLLM's default 9 when absent) and the release's version
  // (2.6, 4.0, 4.5 take video as well; 0 when not written).
  int resampler_queries = 0;
  int slice_size = 0;
  int max_slices = 0;
  double family_version = 0;
  // LLaVA-NeXT / OneVision: image_grid_pinpoints, the [height, width] canvases an image is tiled
  // into (empty: the release's list), and vision_feature_select_strategy ("default" drops the
  // class token's feature, "full" keeps every feature; "" when not stated).
  std::vector<std::array<int, 2>> grid_pinpoints;
  std::string feature_select_strategy;
  std::string processor_source;      // the preprocessor_config.json these were read from ("" if none)
};

// Phi-4-multimodal's Conformer speech encoder (phi4mm_audio.py ConformerEncoder over
// phi4mm_utils.py's layers) as audio_processor.config and embd_layer.audio_embd_layer write it;
// the defaults are those constructors'. `laid_out` is false where the config takes a branch
// headroom does not lay out (another subsampling or bias type, a linear GLU, a Q-Former or conv
// downsampling): then only the checkpoint's headers count the encoder.
struct ConformerConfig {
  int input_size = 80;             // input_size: the features into the subsampling
  int embedding_input = 80;        // encoder_embedding_config.input_size (global_mean / global_invstd)
  int kernel_size = 3;             // the depthwise conv's kernel
  int ext_pw_out_channel = 0;
  int ext_pw_kernel_size = 1;
  int depthwise_out = 256;         // depthwise_seperable_out_channel
  int depthwise_multiplier = 1;
  int attention_group = 1;         // attention_group_size: K/V heads are heads / group
  bool bias_in_glu = true;
  bool batch_norm = false;
  int conv_channels = 256;         // nemo_conv_settings.conv_channels
  bool depthwise_subsampling = true;  // nemo_conv_settings.subsampling "dw_striding" (else "striding")
  bool causal_subsampling = false;    // nemo_conv_settings.is_causal
  int time_reduction = 4;          // the subsampling factor: log2 of it stride-2 stages
  int t5_max_distance = 1000;      // relative_attention_bias_args.t5_bias_max_distance
  bool t5_symmetric = false;
  bool mlp_projection = true;      // embd_layer.audio_embd_layer.projection_cls "mlp" (else "linear")
  int downsample_rate = 1;
  bool laid_out = true;
};

// An audio encoder's sizes (audio_config), as the omni models write them.
struct AudioConfig {
  std::string model_type;          // audio_config.model_type ("qwen3_omni_moe_audio_encoder", ...)
  int layers = 0;                  // encoder_layers
  int d_model = 0;
  int heads = 0;                   // encoder_attention_heads
  int ffn = 0;                     // encoder_ffn_dim
  int output_dim = 0;              // the projection into the language model
  int num_mel_bins = 0;
  int downsample_hidden_size = 0;  // Qwen3-Omni: the channels of its three stride-2 convolutions
  int n_window = 0;                // Qwen3-Omni: half the mel frames of one convolution chunk (0: not written)
  int conv_chunksize = 0;          // Qwen3-Omni: chunks per convolution call (0: not written)
  int pool_step = 0;               // MiniCPM-o: the top-level audio_pool_step (0: not written)
  int max_source_positions = 0;    // Whisper: the position table's rows (MiniCPM-o's encoder)
  // Gemma 3n (Gemma3nAudioConfig): the light conv's kernel (conf_conv_kernel_size), the embedder's
  // vocabulary (vocab_size), and the subsampling convolutions' channels, kernels and strides
  // ([time, frequency] each; sscp_conv_*; empty when not written: the release's values).
  int conv_kernel = 0;
  int vocab_size = 0;
  std::vector<int> subsample_channels;
  std::vector<std::array<int, 2>> subsample_kernels;
  std::vector<std::array<int, 2>> subsample_strides;
  std::optional<ConformerConfig> conformer;  // Phi-4-multimodal (model_type "phi4mm_conformer")
};

struct QuantizationConfig {
  std::string method;  // quant_method as written, lower case: fp8, awq, gptq, compressed-tensors, mxfp4, bitsandbytes, modelopt, ...
  int bits = 0;        // weight bits when stated (4, 8)
  int group_size = 0;  // 0 = per channel / not stated
  bool kv_cache_fp8 = false;  // checkpoint declares an fp8 KV cache (kv_cache_scheme / kv_cache_quant_algo)
  bool lm_head_quantized = false;
  std::string format;                        // compressed-tensors format ("float-quantized", "pack-quantized", ...)
  std::vector<std::string> ignored_modules;  // ignore / modules_to_not_convert
  nlohmann::json raw;                        // the quantization_config object as read
  // Non-empty when the checkpoint's quantization config was not read and the method above was
  // inferred instead ("the repo name"): a guess, shown as one, that never decides a verdict.
  std::string guessed_from;
  // Non-empty when the ignore list was read only in part (the built-in catalogue keeps a long
  // list's length and first entries): what was inferred for the rest, and how many entries stay
  // unknown (they keep the KV range open, like a guessed method).
  std::string ignore_list_inferred;
  int ignore_entries_unaccounted = 0;
  // GGUF: the largest linear weight of the decoder layers, and the LM head, whose ggml type vLLM's
  // GGUF kernels multiply by dequantizing it whole (the I-matrix types, which have no MMQ kernel):
  // values and output rows of the whole tensor, 0 when no such tensor (quantization/gguf.py).
  std::int64_t gguf_dequantized_values = 0;
  std::int64_t gguf_dequantized_rows = 0;
  std::int64_t gguf_dequantized_head_values = 0;
  std::int64_t gguf_dequantized_head_rows = 0;
};

// One tensor of a safetensors checkpoint (header only; data is never read).
struct TensorInfo {
  std::string name;
  std::string dtype;  // safetensors dtype: BF16, F16, F32, F8_E4M3, I32, U8, ...
  std::vector<std::int64_t> shape;
  Bytes bytes = 0;  // data_offsets end − begin
};

struct WeightsInventory {
  std::vector<TensorInfo> tensors;
  Bytes total_bytes = 0;
  int file_count = 0;
  bool exact = false;  // true: read from safetensors headers; false: synthesised from the architecture
};

struct ModelSpec {
  std::string id;        // as given by the user (or the catalogue id)
  ModelSource source = ModelSource::catalog;
  std::string location;  // folder or file that was read, "ORG/NAME@sha" for the Hub, or "built-in catalogue"
  std::string revision;  // commit sha of a Hub model ("" for other sources)

  std::string architecture;  // first of "architectures"
  std::string model_type;    // model_type of the text model
  int num_layers = 0;
  int hidden_size = 0;
  int intermediate_size = 0;
  int num_attention_heads = 0;
  int num_kv_heads = 0;  // total KV heads (GQA); equals num_attention_heads for MHA
  int head_dim = 0;      // explicit or hidden_size / num_attention_heads
  std::int64_t vocab_size = 0;
  std::int64_t max_position_embeddings = 0;            // 0 when no length key was found
  std::string max_length_key;                          // config key the length came from
  std::optional<std::int64_t> tokenizer_model_max_length;  // tokenizer_config.json
  bool tie_word_embeddings = false;
  std::string torch_dtype;  // "bfloat16", "float16", "float32" or "" when not written
  std::optional<RopeScaling> rope_scaling;
  double partial_rotary_factor = 1.0;  // rotary_dim = head_dim × this (top level, or in rope_parameters)

  std::optional<int> sliding_window;         // window size of the sliding layers
  std::optional<int> attention_chunk_size;   // Llama 4
  std::vector<LayerKind> layer_kinds;        // one per decoder layer; empty means all full attention
  int v_head_dim = 0;                        // V head size when it differs from head_dim (MiMo-V2); 0 = same
  std::optional<AttentionShape> full_attention_shape;     // Gemma 4 global layers (global_head_dim, num_global_key_value_heads)
  std::optional<AttentionShape> sliding_attention_shape;  // MiMo-V2-Flash sliding layers (swa_*)
  int num_kv_shared_layers = 0;              // Gemma 4 / 3n: the last N layers reuse earlier layers' KV cache
  // Gemma 4 / 3n per-layer inputs (PLE): an embedding table of vocab_size_per_layer_input rows ×
  // (layers × hidden_size_per_layer_input) beside the token embedding; 0 when the model has none.
  int hidden_size_per_layer_input = 0;
  // text_config.use_bidirectional_attention == "vision" (Gemma 4 31B and 26B-A4B): vLLM treats the
  // model as a multimodal prefix-LM and never splits an image or video over two batches.
  bool mm_prefix_lm = false;
  std::int64_t vocab_size_per_layer_input = 0;
  bool double_wide_mlp = false;              // Gemma 4 use_double_wide_mlp: KV-shared layers' MLPs are 2 × intermediate
  std::optional<MoeConfig> moe;
  std::optional<MlaConfig> mla;
  std::optional<HybridConfig> hybrid;
  std::optional<QuantizationConfig> quantization;
  std::optional<VisionConfig> vision;
  std::optional<AudioConfig> audio;  // the audio encoder a multimodal model loads (omni models)
  bool is_encoder_decoder = false;

  // The catalogue model whose architecture this repo was assumed to share, by its name, because
  // the repo's own config.json was not read (catalog_model_by_name); "" when it was read.
  std::string architecture_assumed_from;

  // Repos whose config and weights vLLM builds this model from, named by id in its config.json
  // (Ultravox: text_model_id, audio_model_id). Set by the parse while they are still to be read;
  // load_model reads them and returns the whole model, with linked_repos naming them.
  struct LinkedRepo {
    std::string key;     // "text_model_id" or "audio_model_id"
    std::string repo;    // the id the config names
    std::string source;  // where it was read ("" while unread)
  };
  std::vector<LinkedRepo> linked_repos;
  bool linked_unread = false;

  std::optional<WeightsInventory> weights;        // exact, when safetensors headers were read
  std::optional<std::int64_t> declared_params;    // total_params stated by the source
  nlohmann::json raw_config;                      // the config as read (catalogue line for catalogue models)

  // Layer kind of layer i (full attention when layer_kinds is empty).
  LayerKind layer_kind(int i) const {
    return layer_kinds.empty() ? LayerKind::full_attention : layer_kinds.at(static_cast<std::size_t>(i));
  }
};

struct ModelLoadOptions {
  // Hugging Face hub cache folder; when empty: HF_HUB_CACHE, then $HF_HOME/hub, then ~/.cache/huggingface/hub.
  std::string hf_hub_cache;
  bool use_catalog = true;
  // The Hugging Face Hub and headroom's Hub metadata cache, consulted after the local Hugging Face
  // cache and before the catalogue. nullptr (the default): neither the network nor that cache is used.
  const hub::HubSettings* hub = nullptr;
  // Receives one-line notes: the Hub unreachable and what was used instead, a repo without
  // safetensors files. Not called when unset.
  std::function<void(const std::string&)> on_note;
};

// Resolves MODEL in this order: a local folder with config.json, a path to a config.json, a Hugging
// Face id in the local cache, then (with options.hub) headroom's Hub metadata cache and the Hub
// itself, then an id in the built-in catalogue (ids match case-insensitively). An unreachable Hub
// (no name resolution, no connection within the connect timeout) falls back with a note.
// Errors: not_found (with close catalogue ids as suggestions), parse_error (file:line:col).
Result<ModelSpec> load_model(std::string_view model_ref, const ModelLoadOptions& options = {});

// Builds a ModelSpec from a parsed config.json (handles text_config of multimodal models).
// `origin` names the file in error messages.
Result<ModelSpec> parse_model_config(const nlohmann::json& config, const std::string& origin);

// The RoPE scaling an object holds as config.json writes it ("rope_scaling", or transformers v5's
// single-type "rope_parameters"): nullopt when it holds none. Errors name `origin`.
Result<std::optional<RopeScaling>> parse_rope_scaling(const nlohmann::json& holder, const std::string& origin);

// Same, from the raw text of a config.json: malformed JSON and type errors carry origin:line:col.
Result<ModelSpec> parse_model_config_text(std::string_view text, const std::string& origin);

// Reads the JSON header of one .safetensors file (8-byte little-endian length + JSON); tensor data
// is never read. Errors: parse_error for absurd lengths, truncated files, or malformed headers.
Result<std::vector<TensorInfo>> read_safetensors_header(const std::string& path);

// The JSON header length announced by a safetensors file's first 8 bytes, checked against the limit
// and the file size. Errors: parse_error (origin names the file).
Result<std::uint64_t> safetensors_header_length(std::string_view first_bytes, std::uint64_t file_size,
                                                const std::string& origin);

// Parses a safetensors header from `bytes` (the 8-byte length and at least the whole JSON header);
// `file_size` is the size of the whole file (data offsets are checked against it).
Result<std::vector<TensorInfo>> parse_safetensors_header(std::string_view bytes, std::uint64_t file_size,
                                                         const std::string& origin);

// The shard files a model.safetensors.index.json names in "weight_map" (sorted, each once).
// Errors: parse_error for malformed JSON, a missing weight_map, names that are not plain files.
Result<std::vector<std::string>> parse_safetensors_index(std::string_view text, const std::string& origin);

// Reads every *.safetensors header in `dir` (using model.safetensors.index.json when present).
// Returns nullopt when the folder has no safetensors files.
Result<std::optional<WeightsInventory>> read_safetensors_dir(const std::string& dir);

// The ids of the built-in catalogue.
std::vector<std::string> catalog_model_ids();

// Looks up an id in the built-in catalogue (case-insensitive). Errors: not_found with suggestions.
Result<ModelSpec> catalog_model(std::string_view id);

// For a repo whose config.json cannot be read (offline, no network) and that the catalogue lacks:
// the catalogue model whose name the repo's name extends by words that keep the architecture
// (a fine-tune's or a re-quantization's suffix: "-Instruct", "-AWQ", "-abliterated"), with the
// quantization the name suggests marked as a guess and ModelSpec::architecture_assumed_from set.
// Errors: not_found with the reason when no such model, or more than one, fits.
Result<ModelSpec> catalog_model_by_name(std::string_view id);

// Parameter count from the weights inventory when present, else from the architecture.
// Packed quantized tensors count the weights they hold (an I32 qweight holds 8 4-bit values).
std::int64_t parameter_count(const ModelSpec& model);

// The tensors the model's Hugging Face checkpoint would hold, with HF names, shapes and dtypes
// (from torch_dtype and the quantization config), for models read without safetensors files.
// exact = false. Layers at index >= num_layers (MTP heads) are not included.
WeightsInventory synthesize_weights(const ModelSpec& model);

// Whether decoder layer `layer` has a routed-expert (MoE) MLP.
bool is_moe_layer(const ModelSpec& model, int layer);

// Bytes per element of a safetensors dtype name ("BF16" → 2); 0 for names it does not know.
// Packed 4-bit types (F4, F8_E8M0 scales...) are stored in U8/I32 containers in checkpoints.
int dtype_bytes(std::string_view safetensors_dtype);

}  // namespace headroom
