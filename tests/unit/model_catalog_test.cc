#include <gtest/gtest.h>

#include <algorithm>

#include "headroom/model.h"

namespace headroom {
namespace {

// The 239 lines of the shared catalogue, 17 added from copies of their config.json
// (scripts/catalog_add_config.py) and Qwen3-Embedding-0.6B from secondary copies of its config.
TEST(ModelCatalog, HasEveryLine) { EXPECT_EQ(catalog_model_ids().size(), 257u); }

// Qwen3-Embedding-0.6B's line, assembled from secondary copies of its config, against two facts
// from elsewhere: KerasHub's preset qwen3_embedding_0.6b_en counts 595,776,512 parameters
// (keras-hub PR 2455, qwen3_presets.py), and ACE-Step's manifest of the copy it bundles gives
// model.safetensors 1,191,586,416 bytes: the synthesised bfloat16 tensors plus a safetensors
// header, which for a few hundred tensors' JSON is tens of KiB.
TEST(ModelCatalog, Qwen3EmbeddingLineCountsKerasHubsParameters) {
  auto m = catalog_model("Qwen/Qwen3-Embedding-0.6B");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(parameter_count(*m), 595776512);
  const std::int64_t tensors = synthesize_weights(*m).total_bytes, file = 1191586416;
  EXPECT_EQ(tensors, 2 * 595776512);
  EXPECT_GT(file - tensors, 0);
  EXPECT_LT(file - tensors, 64 * 1024);
  EXPECT_EQ(m->max_position_embeddings, 32768);
}

TEST(ModelCatalog, LookupIsCaseInsensitive) {
  auto m = catalog_model("META-LLAMA/llama-3.1-8b-instruct");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->id, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(m->source, ModelSource::catalog);
  EXPECT_EQ(m->location, "built-in catalogue");
  EXPECT_EQ(m->num_kv_heads, 8);
  EXPECT_EQ(m->head_dim, 128);
  EXPECT_EQ(m->declared_params, 8000000000);
}

// A tier-I line copies its architecture from its base model's line; the source says so.
TEST(ModelCatalog, CopiedArchitectureIsNamedInTheModelSource) {
  auto m = catalog_model("Qwen/Qwen3-8B-AWQ");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->location,
            "built-in catalogue (architecture copied from Qwen/Qwen3-8B; this repo's own config.json was not read)");
  auto sibling = catalog_model("Qwen/Qwen3-VL-2B-Thinking");
  ASSERT_TRUE(sibling) << sibling.error().to_string();
  EXPECT_NE(sibling->location.find("attribution unconfirmed"), std::string::npos) << sibling->location;
  EXPECT_EQ(catalog_model("Qwen/Qwen3-8B")->location, "built-in catalogue");
}

// A line whose quantization config was not read gets its method from the repo name, as a guess.
TEST(ModelCatalog, QuantizationFromTheRepoNameIsAGuess) {
  auto fp8 = catalog_model("Qwen/Qwen3-8B-FP8");
  ASSERT_TRUE(fp8 && fp8->quantization);
  EXPECT_EQ(fp8->quantization->method, "fp8");
  EXPECT_EQ(fp8->quantization->guessed_from, "the repo name");
  auto read = catalog_model("Qwen/Qwen3-32B-FP8");
  ASSERT_TRUE(read && read->quantization);
  EXPECT_EQ(read->quantization->guessed_from, "");
}

// RedHatAI exports are llm-compressor checkpoints: a name with FP8 is compressed-tensors there,
// and NVFP4 is 4-bit (compressed-tensors nvfp4-pack-quantized), not bf16.
TEST(ModelCatalog, ExporterDecidesTheGuessedScheme) {
  auto ct = catalog_model("RedHatAI/Qwen2.5-7B-Instruct-fp8-dynamic");
  ASSERT_TRUE(ct && ct->quantization);
  EXPECT_EQ(ct->quantization->method, "compressed-tensors");
  EXPECT_EQ(ct->quantization->bits, 8);
  auto nvfp4 = catalog_model("RedHatAI/gemma-4-26B-A4B-it-NVFP4");
  ASSERT_TRUE(nvfp4 && nvfp4->quantization);
  EXPECT_EQ(nvfp4->quantization->bits, 4);
  EXPECT_NE(nvfp4->quantization->format.find("nvfp4"), std::string::npos);
  auto modelopt = catalog_model("nvidia/Llama-3.3-70B-Instruct-FP8");
  ASSERT_TRUE(modelopt && modelopt->quantization);
  EXPECT_EQ(modelopt->quantization->method, "modelopt");
  auto bnb = catalog_model("unsloth/qwen2.5-0.5b-instruct-unsloth-bnb-4bit");
  ASSERT_TRUE(bnb && bnb->quantization);
  EXPECT_EQ(bnb->quantization->method, "bitsandbytes");
  EXPECT_EQ(bnb->quantization->bits, 4);
}

// Part of a repo's quantization_config read from its official page, which stops inside it: what
// was read is used, a part with config_groups is compressed-tensors (only that exporter writes the
// key), and the method, not read, stays a guess. GLM-4.7-FP8's page shows config_groups' dynamic
// 8-bit input activations and nothing of the method; RedHatAI's Qwen2.5-7B w8a8 page shows int8
// channel-wise weights, format int-quantized and ignore ["lm_head"] before it stops.
TEST(ModelCatalog, APartlyReadQuantizationConfigKeepsWhatWasReadAndTheMethodStaysAGuess) {
  auto glm = catalog_model("zai-org/GLM-4.7-FP8");
  ASSERT_TRUE(glm && glm->quantization) << (glm ? "" : glm.error().to_string());
  EXPECT_EQ(glm->quantization->method, "compressed-tensors");
  EXPECT_EQ(glm->quantization->bits, 8);
  EXPECT_EQ(glm->quantization->guessed_from, "the repo name");
  auto w8a8 = catalog_model("RedHatAI/Qwen2.5-7B-Instruct-quantized.w8a8");
  ASSERT_TRUE(w8a8 && w8a8->quantization);
  EXPECT_EQ(w8a8->quantization->method, "compressed-tensors");
  EXPECT_EQ(w8a8->quantization->format, "int-quantized");
  EXPECT_EQ(w8a8->quantization->bits, 8);
  EXPECT_EQ(w8a8->quantization->ignored_modules, std::vector<std::string>{"lm_head"});
  EXPECT_EQ(w8a8->quantization->guessed_from, "the repo name");
}

// Qwen3-Coder-480B-A35B-Instruct-FP8's quantization_config, read from a copy of its snapshot's
// config.json: block-wise fp8, and 187 modules left unconverted (lm_head, then each of the 62
// layers' input_layernorm, router gate and post_attention_layernorm).
TEST(ModelCatalog, AReadQuantizationBlockOnAnInheritedArchitectureIsNotAGuess) {
  auto coder = catalog_model("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8");
  ASSERT_TRUE(coder && coder->quantization);
  EXPECT_EQ(coder->quantization->method, "fp8");
  EXPECT_EQ(coder->quantization->guessed_from, "");
  ASSERT_EQ(coder->quantization->ignored_modules.size(), 1u + 3u * 62u);
  EXPECT_EQ(coder->quantization->ignored_modules.front(), "lm_head");
  EXPECT_EQ(coder->quantization->ignored_modules.back(), "model.layers.61.post_attention_layernorm");
}

// 4-bit weights with an fp8 scale per 16 (NVFP4) take about 4.5 of bf16's 16 bits; the bf16 parts
// (embeddings, norms, router) keep the total well under half of the base checkpoint.
TEST(ModelCatalog, GuessedNvfp4CheckpointIsNotSizedAsBf16) {
  auto nvfp4 = catalog_model("RedHatAI/gemma-4-26B-A4B-it-NVFP4");
  auto base = catalog_model("google/gemma-4-26B-A4B");
  ASSERT_TRUE(nvfp4 && base);
  EXPECT_LT(static_cast<double>(synthesize_weights(*nvfp4).total_bytes),
            0.45 * static_cast<double>(synthesize_weights(*base).total_bytes));
}

TEST(ModelCatalog, UnknownIdSuggestsCloseOnes) {
  auto m = catalog_model("Qwen/Qwen3-0.7B");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::not_found);
  EXPECT_EQ(m.error().message,
            "model 'Qwen/Qwen3-0.7B' is not in the built-in catalogue; did you mean Qwen/Qwen3-0.6B, Qwen/Qwen3-1.7B or "
            "Qwen/Qwen3-14B?");
}

TEST(ModelCatalog, TierGEntryAsksForAConfig) {
  auto m = catalog_model("TheBloke/llava-v1.5-13B-AWQ");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::unsupported);
  EXPECT_EQ(m.error().to_string(),
            "built-in catalogue (TheBloke/llava-v1.5-13B-AWQ): the built-in catalogue has no architecture facts for "
            "'TheBloke/llava-v1.5-13B-AWQ' (missing num_hidden_layers, hidden_size, num_attention_heads, "
            "vocab_size); download its config.json and pass the folder or file instead (e.g. huggingface-cli download "
            "TheBloke/llava-v1.5-13B-AWQ config.json)");
}

TEST(ModelCatalog, EveryLineParsesOrGivesTheClearError) {
  int parsed = 0, no_architecture = 0, incomplete = 0;
  std::vector<std::string> other;
  for (const auto& id : catalog_model_ids()) {
    auto m = catalog_model(id);
    if (m) ++parsed;
    else if (m.error().code == ErrorCode::unsupported && m.error().message.find("no architecture facts") != std::string::npos)
      ++no_architecture;
    else if (m.error().code == ErrorCode::unsupported && m.error().message.find("is incomplete") != std::string::npos)
      ++incomplete;
    else other.push_back(id + ": " + m.error().to_string());
  }
  EXPECT_TRUE(other.empty()) << other.front();
  // One line without architecture facts: TheBloke/llava-v1.5-13B-AWQ, the original LLaVA layout
  // (LlavaLlamaForCausalLM), which vLLM does not register either. The three lines without facts and
  // the seven partial copies before data/config_supplements.jsonl now load with its values, as do
  // DeepSeek-V2.5 and Coder-V2-Lite-Instruct, whose excerpts stopped before vocab_size (DeepSeek's
  // converter configs give it). One line of the fifth pass is an excerpt that stops before a field
  // the model needs (granite-4.0-micro: num_hidden_layers) and names it.
  EXPECT_EQ(no_architecture, 1);
  EXPECT_EQ(incomplete, 1);
  EXPECT_EQ(parsed, 255);  // 235, the 17 lines added from whole configs, Qwen3-Embedding-0.6B, 2 DeepSeek
}

// data/config_supplements.jsonl fills what a line's source left out, from the config.json copies and
// library defaults each supplement line names; values the catalogue line has stay.
TEST(ModelCatalog, SupplementsFillWhatTheSourceLeftOut) {
  auto llama = catalog_model("meta-llama/Llama-3.3-70B-Instruct");
  ASSERT_TRUE(llama) << llama.error().to_string();
  EXPECT_EQ(llama->architecture, "LlamaForCausalLM");
  EXPECT_EQ(llama->num_layers, 80);
  EXPECT_EQ(llama->hidden_size, 8192);
  EXPECT_EQ(llama->intermediate_size, 28672);
  EXPECT_EQ(llama->num_attention_heads, 64);
  EXPECT_EQ(llama->num_kv_heads, 8);
  EXPECT_EQ(llama->vocab_size, 128256);
  EXPECT_EQ(llama->max_position_embeddings, 131072);

  // DeepSeek-V2.5's excerpt stopped at routed_scaling_factor; DeepSeek's config_236B.json gives the
  // vocabulary and the value head width (MLA: the KV cache is kv_lora_rank + qk_rope_head_dim).
  auto v25 = catalog_model("deepseek-ai/DeepSeek-V2.5");
  ASSERT_TRUE(v25) << v25.error().to_string();
  EXPECT_EQ(v25->vocab_size, 102400);
  EXPECT_EQ(v25->num_layers, 60);
  ASSERT_TRUE(v25->mla);
  EXPECT_EQ(v25->mla->v_head_dim, 128);
  auto lite = catalog_model("deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct");
  ASSERT_TRUE(lite) << lite.error().to_string();
  EXPECT_EQ(lite->vocab_size, 102400);

  // llava-1.5's text_config writes only vocabulary and context; transformers fills the rest from
  // LlamaConfig's defaults (Llama-2-7B's sizes, multi-head attention).
  auto llava = catalog_model("llava-hf/llava-1.5-7b-hf");
  ASSERT_TRUE(llava) << llava.error().to_string();
  EXPECT_EQ(llava->num_layers, 32);
  EXPECT_EQ(llava->hidden_size, 4096);
  EXPECT_EQ(llava->intermediate_size, 11008);
  EXPECT_EQ(llava->num_kv_heads, 32);
  EXPECT_EQ(llava->vocab_size, 32064);
  ASSERT_TRUE(llava->vision.has_value());
  EXPECT_EQ(llava->vision->image_size, 336);

  auto vl72 = catalog_model("Qwen/Qwen2.5-VL-72B-Instruct");
  ASSERT_TRUE(vl72) << vl72.error().to_string();
  EXPECT_EQ(vl72->vocab_size, 152064);
  EXPECT_EQ(vl72->intermediate_size, 29696);  // the catalogue's own value, not Qwen2.5-72B's 29568
  ASSERT_TRUE(vl72->vision.has_value());
  EXPECT_EQ(vl72->vision->depth, 32);
  EXPECT_EQ(vl72->vision->out_hidden_size, 8192);

  // Qwen3.5-9B: 32 layers, every fourth full attention.
  auto q35 = catalog_model("Qwen/Qwen3.5-9B");
  ASSERT_TRUE(q35) << q35.error().to_string();
  EXPECT_EQ(q35->num_layers, 32);
  int full = 0;
  for (int i = 0; i < q35->num_layers; ++i) full += q35->layer_kind(i) == LayerKind::full_attention;
  EXPECT_EQ(full, 8);
  EXPECT_EQ(q35->num_kv_heads, 4);
  EXPECT_EQ(q35->vocab_size, 248320);
}

TEST(ModelCatalog, NullKvHeadsMeansMha) {
  auto m = catalog_model("meta-llama/Llama-2-7b-hf");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->num_kv_heads, 32);
}

TEST(ModelCatalog, FalconKvHeadsFromTheCrossCheck) {
  auto m = catalog_model("tiiuae/falcon-7b");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->num_kv_heads, 1);
}

TEST(ModelCatalog, SparseGemma3UsesTextConfigDefaults) {
  auto m = catalog_model("google/gemma-3-4b-it");
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->num_attention_heads, 8);
  EXPECT_EQ(m->num_kv_heads, 4);
  EXPECT_EQ(m->head_dim, 256);
  EXPECT_EQ(m->vocab_size, 262208);
  EXPECT_EQ(m->max_position_embeddings, 131072);
  EXPECT_EQ(m->sliding_window, 1024);
  EXPECT_EQ(m->layer_kind(5), LayerKind::full_attention);
  EXPECT_EQ(m->layer_kind(4), LayerKind::sliding_attention);
  ASSERT_TRUE(m->vision);
  EXPECT_EQ(m->vision->depth, 27);
}

TEST(ModelCatalog, Gemma2Alternates) {
  auto m = catalog_model("google/gemma-2-9b-it");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->layer_kind(0), LayerKind::sliding_attention);
  EXPECT_EQ(m->layer_kind(1), LayerKind::full_attention);
  EXPECT_TRUE(m->tie_word_embeddings);
}

TEST(ModelCatalog, GptOssLayerTypesPeriodAndMxfp4) {
  auto m = catalog_model("openai/gpt-oss-20b");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->layer_kinds.size(), 24u);
  EXPECT_EQ(m->layer_kind(0), LayerKind::sliding_attention);
  EXPECT_EQ(m->layer_kind(1), LayerKind::full_attention);
  ASSERT_TRUE(m->quantization);
  EXPECT_EQ(m->quantization->method, "mxfp4");
  ASSERT_TRUE(m->moe);
  EXPECT_EQ(m->moe->num_experts, 32);
}

TEST(ModelCatalog, HybridsCountTheirAttentionLayers) {
  auto next = catalog_model("Qwen/Qwen3-Next-80B-A3B-Instruct");
  ASSERT_TRUE(next);
  EXPECT_EQ(std::count(next->layer_kinds.begin(), next->layer_kinds.end(), LayerKind::full_attention), 12);
  auto nemo = catalog_model("nvidia/Nemotron-H-56B-Base-8K");
  ASSERT_TRUE(nemo);
  EXPECT_EQ(std::count(nemo->layer_kinds.begin(), nemo->layer_kinds.end(), LayerKind::full_attention), 10);
  EXPECT_EQ(std::count(nemo->layer_kinds.begin(), nemo->layer_kinds.end(), LayerKind::mamba), 54);
}

TEST(ModelCatalog, TierIQuantizationFromTheId) {
  // RedHatAI's FP8-dynamic exports are llm-compressor (compressed-tensors) checkpoints: read as
  // "fp8", a --quantization compressed-tensors was refused as vLLM's method mismatch.
  auto m = catalog_model("RedHatAI/Qwen2.5-7B-Instruct-fp8-dynamic");
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->quantization);
  EXPECT_EQ(m->quantization->method, "compressed-tensors");
  auto n = catalog_model("nvidia/Llama-3.1-70B-Instruct-FP8");
  ASSERT_TRUE(n);
  ASSERT_TRUE(n->quantization);
  EXPECT_TRUE(n->quantization->kv_cache_fp8);
}

// The catalogue keeps a long ignore list as its length and first entries. nvidia's Gemma 4 31B
// NVFP4 lists 63 (hf_quant_config.json exclude_modules): lm_head, the vision embedder and
// "model.language_model.layers.0.self_attn*" are named; ModelOpt writes one entry per layer, so
// self_attn is kept 16-bit in all 60 layers (2 + 60 of 63), and one entry stays unknown.
TEST(ModelCatalog, SummarisedIgnoreListRepeatsItsLayerEntryOnEveryLayer) {
  auto m = catalog_model("nvidia/Gemma-4-31B-IT-NVFP4");
  ASSERT_TRUE(m && m->quantization);
  const auto& q = *m->quantization;
  // lm_head, the vision embedder, and one pattern for self_attn on every layer.
  EXPECT_EQ(q.ignored_modules.size(), 3u);
  EXPECT_NE(std::find(q.ignored_modules.begin(), q.ignored_modules.end(),
                      "re:^model\\.language_model\\.layers\\.[0-9]+\\.self_attn.*"),
            q.ignored_modules.end());
  EXPECT_EQ(q.ignore_entries_unaccounted, 1);
  EXPECT_NE(q.ignore_list_inferred.find("3 of the checkpoint's 63"), std::string::npos) << q.ignore_list_inferred;
  EXPECT_EQ(q.guessed_from, "");  // the method itself was read
  // The synthesised checkpoint keeps every layer's attention in bf16 and its MLP in NVFP4.
  const auto inv = synthesize_weights(*m);
  auto dtype_of = [&](const std::string& part) {
    for (const auto& t : inv.tensors)
      if (t.name.ends_with(part)) return t.dtype;
    return std::string("absent");
  };
  EXPECT_EQ(dtype_of("layers.59.self_attn.q_proj.weight"), "BF16");
  EXPECT_EQ(dtype_of("layers.59.mlp.down_proj.weight"), "U8");
}

// A list whose length cannot hold its layer entry on every layer is not extended: Nemotron 3 Nano
// NVFP4 names lm_head and layer 4's mamba in_proj and out_proj of 60 entries, fewer than
// 1 + 2 × 52 layers, so only the named entries are kept and 57 stay unknown.
TEST(ModelCatalog, SummarisedIgnoreListTooShortForEveryLayerKeepsTheNamedEntries) {
  auto m = catalog_model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4");
  ASSERT_TRUE(m && m->quantization);
  EXPECT_EQ(m->quantization->ignored_modules.size(), 3u);
  EXPECT_EQ(m->quantization->ignore_entries_unaccounted, 57);
}

// Gemma 4's MoE layers hold the router and the experts beside the dense MLP: the 26B-A4B NVFP4
// export's "layers.0.mlp*" entry keeps the dense MLP in bf16 and leaves the experts in NVFP4.
TEST(ModelCatalog, Gemma4ExpertsSitBesideTheDenseMlp) {
  auto m = catalog_model("nvidia/Gemma-4-26B-A4B-NVFP4");
  ASSERT_TRUE(m && m->quantization);
  const auto inv = synthesize_weights(*m);
  std::string dense, experts;
  for (const auto& t : inv.tensors) {
    if (t.name.ends_with("layers.29.mlp.down_proj.weight")) dense = t.dtype;
    if (t.name.ends_with("layers.29.experts.down_proj.weight")) experts = t.dtype;
  }
  EXPECT_EQ(dense, "BF16");
  EXPECT_EQ(experts, "U8");
}

}  // namespace
}  // namespace headroom
