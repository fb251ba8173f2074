// The config.json of multimodal releases that several tests read. The vision and projector fields
// are the releases' (aya-vision-8b's as its published copies write them); the language model's
// fields are only what the tests need to parse the config, not checked against the release.
#pragma once

namespace headroom::test_support {

// CohereForAI/aya-vision-8b: SigLIP so400m at 364 pixels under a Cohere2 language model.
inline constexpr const char* k_aya_vision_8b = R"({"architectures": ["AyaVisionForConditionalGeneration"], "model_type": "aya_vision",
    "torch_dtype": "float16", "downsample_factor": 2, "alignment_intermediate_size": 28672, "max_splits_per_img": 12,
    "vision_feature_layer": -1, "vision_feature_select_strategy": "full",
    "text_config": {"model_type": "cohere2", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
      "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 256000, "max_position_embeddings": 16384,
      "sliding_window": 4096, "sliding_window_pattern": 4, "rope_theta": 50000},
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152, "image_size": 364, "intermediate_size": 4304,
      "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14}})";

// openbmb/MiniCPM-V-2_6: the Idefics2 SigLIP tower, a 64-query resampler, Qwen2-7B's language model.
inline constexpr const char* k_minicpm_v_2_6 = R"({"architectures": ["MiniCPMV"], "model_type": "minicpmv", "version": 2.6, "torch_dtype": "bfloat16",
    "hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28,
    "vocab_size": 151666, "max_position_embeddings": 32768, "rope_theta": 1000000.0, "tie_word_embeddings": false,
    "image_size": 448, "patch_size": 14, "query_num": 64, "batch_vision_input": true, "drop_vision_last_layer": false,
    "slice_mode": true, "slice_config": {"max_slice_nums": 9, "patch_size": 14, "model_type": "minicpmv"}, "use_image_id": true,
    "vision_config": {"hidden_size": 1152, "image_size": 980, "intermediate_size": 4304, "model_type": "siglip",
      "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14}})";

// THUDM/GLM-4.1V-9B-Thinking: transformers' Glm4vVisionModel under the GLM-4 language model.
inline constexpr const char* k_glm_4_1v = R"({"architectures": ["Glm4vForConditionalGeneration"], "model_type": "glm4v",
    "torch_dtype": "bfloat16",
    "text_config": {"model_type": "glm4v_text", "hidden_size": 4096, "intermediate_size": 13696, "num_attention_heads": 32,
      "num_key_value_heads": 2, "num_hidden_layers": 40, "vocab_size": 151552, "max_position_embeddings": 65536,
      "partial_rotary_factor": 0.5, "rope_theta": 10000, "tie_word_embeddings": false},
    "vision_config": {"model_type": "glm4v", "hidden_size": 1536, "depth": 24, "num_heads": 12, "intermediate_size": 13696,
      "out_hidden_size": 4096, "patch_size": 14, "image_size": 336, "spatial_merge_size": 2, "temporal_patch_size": 2,
      "attention_bias": false, "hidden_act": "silu", "rms_norm_eps": 1e-05}})";

// HuggingFaceM4/Idefics3-8B-Llama3: SigLIP at 364 pixels, scale_factor 2, Llama 3's language model.
inline constexpr const char* k_idefics3_8b = R"({"architectures": ["Idefics3ForConditionalGeneration"],
    "model_type": "idefics3", "scale_factor": 2, "torch_dtype": "bfloat16",
    "text_config": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
      "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128259, "max_position_embeddings": 131072},
    "vision_config": {"model_type": "idefics3_vision", "hidden_size": 1152, "image_size": 364, "intermediate_size": 4304,
      "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14}})";

// PaddlePaddle/PaddleOCR-VL: a NaViT SigLIP tower (transformers' PaddleOCRVisionConfig defaults, as
// its conversion script writes them) under ERNIE-4.5-0.3B.
inline constexpr const char* k_paddleocr_vl = R"({"architectures": ["PaddleOCRVLForConditionalGeneration"],
    "model_type": "paddleocr_vl", "torch_dtype": "bfloat16", "hidden_size": 1024, "intermediate_size": 3072,
    "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 128, "num_hidden_layers": 18, "vocab_size": 103424,
    "max_position_embeddings": 131072, "rope_theta": 500000,
    "vision_config": {"model_type": "paddleocr_vl", "hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27,
      "num_attention_heads": 16, "image_size": 384, "patch_size": 14, "spatial_merge_size": 2}})";

// deepseek-ai/DeepSeek-OCR's config.json (as a public copy of the release quotes it): DeepseekV2
// MoE under DeepSeek-VL2's wrapper; vision_config names SAM ViT-B and CLIP-L but vLLM builds them
// from its own fixed settings.
inline constexpr const char* k_deepseek_ocr = R"({"_name_or_path": "deepseek-ai/DeepSeek-OCR", "candidate_resolutions": [[1024, 1024]], "global_view_pos": "head",
 "architectures": ["DeepseekOCRForCausalLM"],
 "language_config": {"architectures": ["DeepseekV2ForCausalLM"], "bos_token_id": 0, "eos_token_id": 1, "first_k_dense_replace": 1,
   "hidden_size": 1280, "intermediate_size": 6848, "kv_lora_rank": null, "lm_head": true, "max_position_embeddings": 8192,
   "moe_intermediate_size": 896, "n_group": 1, "n_routed_experts": 64, "n_shared_experts": 2, "num_attention_heads": 10,
   "num_experts_per_tok": 6, "num_hidden_layers": 12, "num_key_value_heads": 10, "q_lora_rank": null, "qk_nope_head_dim": 0,
   "qk_rope_head_dim": 0, "rm_head": false, "topk_group": 1, "topk_method": "greedy", "torch_dtype": "bfloat16", "use_mla": false,
   "v_head_dim": 0, "vocab_size": 129280},
 "model_type": "deepseek_vl_v2",
 "projector_config": {"input_dim": 2048, "model_type": "mlp_projector", "n_embed": 1280, "projector_type": "linear"},
 "tile_tag": "2D", "torch_dtype": "bfloat16", "transformers_version": "4.46.3",
 "vision_config": {"image_size": 1024, "mlp_ratio": 3.7362, "model_name": "deeplip_b_l", "model_type": "vision",
   "width": {"clip-l-14-224": {"heads": 16, "image_size": 224, "layers": 24, "patch_size": 14, "width": 1024},
             "sam_vit_b": {"downsample_channels": [512, 1024], "global_attn_indexes": [2, 5, 8, 11], "heads": 12, "layers": 12, "width": 768}}},
 "bos_token_id": 0, "eos_token_id": 1, "first_k_dense_replace": 1, "hidden_size": 1280, "intermediate_size": 6848, "kv_lora_rank": null,
 "lm_head": true, "max_position_embeddings": 8192, "moe_intermediate_size": 896, "n_group": 1, "n_routed_experts": 64,
 "n_shared_experts": 2, "num_attention_heads": 10, "num_experts_per_tok": 6, "num_hidden_layers": 12, "num_key_value_heads": 10,
 "q_lora_rank": null, "qk_nope_head_dim": 0, "qk_rope_head_dim": 0, "rm_head": false, "topk_group": 1, "topk_method": "greedy",
 "use_mla": false, "v_head_dim": 0, "vocab_size": 129280})";

// microsoft/Phi-4-multimodal-instruct: no vision_config (phi4mm.py fixes its SigLIP tower), the
// crop size in embd_layer and the Conformer speech encoder's sizes in audio_processor.
inline constexpr const char* k_phi4_multimodal = R"({"architectures": ["Phi4MMForCausalLM"], "model_type": "phi4mm",
    "hidden_size": 3072, "intermediate_size": 8192, "num_attention_heads": 24, "num_key_value_heads": 8,
    "num_hidden_layers": 32, "vocab_size": 200064, "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
    "tie_word_embeddings": true,
    "embd_layer": {"embedding_cls": "image_audio", "image_embd_layer": {"crop_size": 448, "embedding_cls": "tune_image"},
      "audio_embd_layer": {"compression_rate": 8, "downsample_rate": 1, "projection_cls": "mlp", "use_qformer": false,
        "use_conv_downsample": false}},
    "audio_processor": {"name": "cascades", "config": {"attention_dim": 1024, "attention_heads": 16, "num_blocks": 24,
      "linear_units": 1536, "input_size": 80, "kernel_size": 3, "ext_pw_out_channel": 1024, "ext_pw_kernel_size": 1,
      "depthwise_seperable_out_channel": 1024, "depthwise_multiplier": 1, "bias_in_glu": true, "batch_norm": false,
      "causal": true, "chunk_size": -1, "left_chunk": 18, "time_reduction": 8, "activation": "swish",
      "nemo_conv_settings": {"conv_channels": 1024}, "encoder_embedding_config": {"input_size": 80},
      "relative_attention_bias_args": {"type": "t5", "t5_bias_max_distance": 500}}}})";

// Ovis2.5-9B's config.json (vit_config beside llm_config, visual_vocab_size 65,536).
inline constexpr const char* k_ovis25_9b = R"({"architectures": ["Ovis2_5"], "model_type": "ovis2_5", "hidden_size": 4096,
    "visual_vocab_size": 65536,
    "llm_config": {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "hidden_size": 4096,
      "intermediate_size": 12288, "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
      "head_dim": 128, "max_position_embeddings": 40960, "vocab_size": 151936, "torch_dtype": "bfloat16",
      "tie_word_embeddings": false},
    "vit_config": {"model_type": "siglip2_navit", "hidden_size": 1152, "intermediate_size": 4304,
      "num_hidden_layers": 27, "num_attention_heads": 16, "patch_size": 16, "image_size": 512,
      "hidden_stride": 2, "temporal_patch_size": 1, "num_patches": -1}})";

// Keye-VL-8B-Preview's config.json as its release writes the widths (a SigLIP-NaViT tower beside
// a Qwen3-8B language model).
inline constexpr const char* k_keye_vl_8b_preview = R"({"architectures": ["KeyeForConditionalGeneration"],
    "model_type": "Keye", "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 36,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 40960,
    "vocab_size": 151936, "torch_dtype": "bfloat16", "tie_word_embeddings": false,
    "vision_config": {"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27,
      "num_attention_heads": 16, "patch_size": 14, "image_size": 384, "spatial_merge_size": 2,
      "temporal_patch_size": 2}})";

// A DeepSeek-VL2 config in the releases' layout: the tiny model's DeepseekV2 language model (the
// one DeepSeek-OCR shares), projector n_embed 1280 and candidate resolutions of 384² tiles (a part
// of the release's m × n ≤ 9 set); vision_config's widths are what vLLM ignores.
inline constexpr const char* k_deepseek_vl2_tiny = R"({"architectures": ["DeepseekVLV2ForCausalLM"], "model_type": "deepseek_vl_v2",
 "candidate_resolutions": [[384, 384], [384, 768], [768, 384], [1152, 1152], [384, 3456], [3456, 384]],
 "language_config": {"architectures": ["DeepseekV2ForCausalLM"], "first_k_dense_replace": 1, "hidden_size": 1280,
   "intermediate_size": 6848, "kv_lora_rank": null, "max_position_embeddings": 4096, "moe_intermediate_size": 896,
   "n_group": 1, "n_routed_experts": 64, "n_shared_experts": 2, "num_attention_heads": 10, "num_experts_per_tok": 6,
   "num_hidden_layers": 12, "num_key_value_heads": 10, "q_lora_rank": null, "qk_nope_head_dim": 0, "qk_rope_head_dim": 0,
   "topk_group": 1, "topk_method": "greedy", "torch_dtype": "bfloat16", "use_mla": false, "v_head_dim": 0, "vocab_size": 129280},
 "projector_config": {"model_type": "mlp_projector", "n_embed": 1280, "projector_type": "downsample_mlp_gelu", "downsample_ratio": 2},
 "tile_tag": "2D", "torch_dtype": "bfloat16",
 "vision_config": {"layers": 27, "mlp_ratio": 3.7362, "model_name": "siglip_so400m_patch14_384", "patch_size": 14, "width": 1152},
 "first_k_dense_replace": 1, "hidden_size": 1280, "intermediate_size": 6848, "kv_lora_rank": null, "max_position_embeddings": 4096,
 "moe_intermediate_size": 896, "n_group": 1, "n_routed_experts": 64, "n_shared_experts": 2, "num_attention_heads": 10,
 "num_experts_per_tok": 6, "num_hidden_layers": 12, "num_key_value_heads": 10, "q_lora_rank": null, "qk_nope_head_dim": 0,
 "qk_rope_head_dim": 0, "topk_group": 1, "topk_method": "greedy", "use_mla": false, "v_head_dim": 0, "vocab_size": 129280})";

// Molmo-7B-D's config.json as the release writes its text sizes (the vision backbone is not in it:
// molmo.py builds VisionBackboneConfig's defaults). intermediate_size is ff_proj's fused width.
inline constexpr const char* k_molmo_7b_d = R"({"architectures": ["MolmoForCausalLM"], "model_type": "molmo",
 "hidden_size": 3584, "intermediate_size": 37888, "num_attention_heads": 28, "num_key_value_heads": 4,
 "num_hidden_layers": 28, "vocab_size": 152064, "embedding_size": 152064, "max_position_embeddings": 4096,
 "qkv_bias": true, "tie_word_embeddings": false, "torch_dtype": "float32"})";

// Qwen/Qwen2-Audio-7B-Instruct: Whisper-large-v3's encoder (128 mel bins, 32 layers of 1,280,
// 1,500 positions) under a Qwen-7B language model.
inline constexpr const char* k_qwen2_audio_7b = R"({"architectures": ["Qwen2AudioForConditionalGeneration"], "model_type": "qwen2_audio",
    "audio_config": {"model_type": "qwen2_audio_encoder", "d_model": 1280, "encoder_attention_heads": 20, "encoder_ffn_dim": 5120,
      "encoder_layers": 32, "num_mel_bins": 128, "max_source_positions": 1500},
    "text_config": {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 4096, "intermediate_size": 11008,
      "num_attention_heads": 32, "num_key_value_heads": 32, "num_hidden_layers": 32, "vocab_size": 156032,
      "max_position_embeddings": 8192, "tie_word_embeddings": false, "torch_dtype": "bfloat16"}, "torch_dtype": "bfloat16"})";

// An Ultravox v0.5 8B config with its sub-configs written out (the releases name them by id):
// Whisper-large-v3-turbo's encoder (32 layers of 1,280, FFN 5,120), stack_factor 8, the projector
// of hidden_size 4,096 with projector_ln_mid, and Llama-3.1-8B's language model.
inline constexpr const char* k_ultravox_v05_8b = R"({"architectures": ["UltravoxModel"], "model_type": "ultravox", "stack_factor": 8,
    "hidden_size": 4096, "projector_ln_mid": true,
    "audio_config": {"model_type": "whisper", "d_model": 1280, "encoder_layers": 32, "encoder_attention_heads": 20,
      "encoder_ffn_dim": 5120, "num_mel_bins": 128, "max_source_positions": 1500},
    "text_config": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
      "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128256, "max_position_embeddings": 131072}})";

// Qwen2.5-Omni-7B's config: the thinker_config's audio, text and vision settings as its release
// writes them.
inline constexpr const char* k_qwen2_5_omni_7b = R"({"architectures": ["Qwen2_5OmniModel"], "model_type": "qwen2_5_omni",
    "thinker_config": {"model_type": "qwen2_5_omni_thinker", "torch_dtype": "bfloat16",
      "audio_config": {"model_type": "qwen2_5_omni_audio_encoder", "d_model": 1280, "encoder_layers": 32,
        "encoder_attention_heads": 20, "encoder_ffn_dim": 5120, "output_dim": 3584, "num_mel_bins": 128, "n_window": 100},
      "text_config": {"model_type": "qwen2_5_omni_text", "hidden_size": 3584, "intermediate_size": 18944,
        "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28, "vocab_size": 152064,
        "max_position_embeddings": 32768, "rope_theta": 1000000.0, "tie_word_embeddings": false},
      "vision_config": {"model_type": "qwen2_5_omni_vision_encoder", "depth": 32, "hidden_size": 1280,
        "intermediate_size": 3420, "num_heads": 16, "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2,
        "temporal_patch_size": 2, "window_size": 112, "fullatt_block_indexes": [7, 15, 23, 31]}}})";

// Qwen/Qwen3-Omni-30B-A3B-Instruct's config.json, cut to what sizes the thinker (the talker and
// code2wav keep only their model_type here). vLLM serves the thinker alone.
// Its audio encoder cuts mel frames into chunks of 2 x n_window and convolves conv_chunksize of them at a time.
inline constexpr const char* k_qwen3_omni_30b = R"({"architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": "qwen3_omni_moe",
  "talker_config": {"model_type": ""}, "code2wav_config": {"model_type": ""},
  "thinker_config": {"model_type": "qwen3_omni_moe_thinker", "dtype": "bfloat16", "tie_word_embeddings": false,
    "audio_config": {"model_type": "qwen3_omni_moe_audio_encoder", "d_model": 1280, "encoder_layers": 32,
      "encoder_attention_heads": 20, "encoder_ffn_dim": 5120, "output_dim": 2048, "num_mel_bins": 128,
      "downsample_hidden_size": 480, "max_source_positions": 1500, "n_window": 50,
      "n_window_infer": 800, "conv_chunksize": 500},
    "text_config": {"model_type": "qwen3_omni_moe_text", "hidden_size": 2048, "intermediate_size": 768, "head_dim": 128,
      "moe_intermediate_size": 768, "num_attention_heads": 32, "num_key_value_heads": 4, "num_hidden_layers": 48,
      "num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [],
      "max_position_embeddings": 65536, "vocab_size": 152064, "tie_word_embeddings": false, "use_qk_norm": true,
      "rope_parameters": {"mrope_interleaved": true, "mrope_section": [24, 20, 20], "rope_theta": 1000000, "rope_type": "default"}},
    "vision_config": {"model_type": "qwen3_omni_moe_vision_encoder", "deepstack_visual_indexes": [8, 16, 24], "depth": 27,
      "hidden_size": 1152, "image_size": 768, "intermediate_size": 4304, "num_heads": 16, "num_position_embeddings": 2304,
      "out_hidden_size": 2048, "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2}}})";

}  // namespace headroom::test_support
