// GGUF checkpoints (src/model/gguf.cc, gguf_model.cc). The files are written here byte by byte in
// the layout of ggml/docs/gguf.md; expected tensor sizes follow ggml's block structs
// (ggml-common.h: block_q4_K is 144 bytes per 256 values, block_q6_K 210, block_q8_0 34 per 32).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "model/gguf.h"

namespace headroom {
namespace {

class GgufWriter {
 public:
  GgufWriter() {
    m_out = "GGUF";
    u32(3);
  }
  void u32(std::uint32_t v) { raw(&v, 4); }
  void u64(std::uint64_t v) { raw(&v, 8); }
  void str(const std::string& s) {
    u64(s.size());
    m_out += s;
  }
  void counts(std::uint64_t tensors, std::uint64_t entries) {
    u64(tensors);
    u64(entries);
  }
  void kv_u32(const std::string& key, std::uint32_t v) {
    str(key);
    u32(4);
    u32(v);
  }
  void kv_u16(const std::string& key, std::uint16_t v) {
    str(key);
    u32(2);
    raw(&v, 2);
  }
  void kv_f32(const std::string& key, float v) {
    str(key);
    u32(6);
    raw(&v, 4);
  }
  void kv_str(const std::string& key, const std::string& v) {
    str(key);
    u32(8);
    str(v);
  }
  void kv_tokens(std::uint64_t n) {
    str("tokenizer.ggml.tokens");
    u32(9);
    u32(8);
    u64(n);
    for (std::uint64_t i = 0; i < n; ++i) str("t" + std::to_string(i));
  }
  // A tensor of `values` (innermost first) of ggml type `type` taking `bytes`; returns its offset.
  void tensor(const std::string& name, std::vector<std::uint64_t> dims, std::uint32_t type, std::uint64_t bytes) {
    str(name);
    u32(static_cast<std::uint32_t>(dims.size()));
    for (auto d : dims) u64(d);
    u32(type);
    u64(m_data);
    m_data += (bytes + 31) / 32 * 32;
  }
  // The header, padded to 32, and `m_data` bytes of zeros (less `cut` bytes).
  std::string file(std::uint64_t cut = 0) const {
    std::string f = m_out;
    f.resize((f.size() + 31) / 32 * 32, '\0');
    f.resize(f.size() + m_data - cut, '\0');
    return f;
  }
  const std::string& header() const { return m_out; }

 private:
  void raw(const void* p, std::size_t n) { m_out.append(static_cast<const char*>(p), n); }
  std::string m_out;
  std::uint64_t m_data = 0;
};

// A two-layer Llama: hidden 256, MLP 512, 4 heads of 64, 2 KV heads, vocabulary 1,000; attention
// and MLP in Q4_K, the embedding in Q6_K, the LM head in Q8_0, norms in F32.
GgufWriter tiny_llama(bool with_output = true) {
  GgufWriter w;
  const int layers = 2;
  const std::uint64_t tensors = 1 + 1 + (with_output ? 1 : 0) + layers * 9;
  w.counts(tensors, 9);
  w.kv_str("general.architecture", "llama");
  w.kv_u32("llama.block_count", layers);
  w.kv_u32("llama.embedding_length", 256);
  w.kv_u32("llama.feed_forward_length", 512);
  w.kv_u32("llama.attention.head_count", 4);
  w.kv_u32("llama.attention.head_count_kv", 2);
  w.kv_u32("llama.context_length", 4096);
  w.kv_f32("llama.rope.freq_base", 500000.0f);
  w.kv_tokens(1000);
  w.tensor("token_embd.weight", {256, 1000}, 14, 256 * 1000 / 256 * 210);
  w.tensor("output_norm.weight", {256}, 0, 256 * 4);
  if (with_output) w.tensor("output.weight", {256, 1000}, 8, 256 * 1000 / 32 * 34);
  for (int i = 0; i < layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    w.tensor(b + "attn_norm.weight", {256}, 0, 1024);
    w.tensor(b + "attn_q.weight", {256, 256}, 12, 256 * 256 / 256 * 144);
    w.tensor(b + "attn_k.weight", {256, 128}, 12, 256 * 128 / 256 * 144);
    w.tensor(b + "attn_v.weight", {256, 128}, 12, 256 * 128 / 256 * 144);
    w.tensor(b + "attn_output.weight", {256, 256}, 12, 256 * 256 / 256 * 144);
    w.tensor(b + "ffn_norm.weight", {256}, 0, 1024);
    w.tensor(b + "ffn_gate.weight", {256, 512}, 12, 256 * 512 / 256 * 144);
    w.tensor(b + "ffn_up.weight", {256, 512}, 12, 256 * 512 / 256 * 144);
    w.tensor(b + "ffn_down.weight", {512, 256}, 12, 512 * 256 / 256 * 144);
  }
  return w;
}

Result<ModelSpec> parse(const std::string& file) {
  auto h = parse_gguf_header(file, file.size(), "tiny.gguf");
  if (!h) return tl::unexpected(h.error());
  return gguf_model(*h, file.size(), "tiny.gguf");
}

TEST(Gguf, LlamaHeaderGivesTheArchitectureAndExactBlockBytes) {
  auto m = parse(tiny_llama().file());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->architecture, "LlamaForCausalLM");
  EXPECT_EQ(m->num_layers, 2);
  EXPECT_EQ(m->hidden_size, 256);
  EXPECT_EQ(m->num_attention_heads, 4);
  EXPECT_EQ(m->num_kv_heads, 2);
  EXPECT_EQ(m->vocab_size, 1000);
  EXPECT_EQ(m->max_position_embeddings, 4096);
  EXPECT_FALSE(m->tie_word_embeddings);
  ASSERT_TRUE(m->quantization);
  EXPECT_EQ(m->quantization->method, "gguf");
  ASSERT_TRUE(m->weights);
  // Q6_K embedding 210,000 + Q8_0 head 272,000 + F32 norms (1,024 × 5) + per layer Q4_K
  // (65,536 + 2 × 32,768 + 65,536 + 3 × 131,072 values → 36,864 + 2 × 18,432 + 36,864 + 3 × 73,728 bytes).
  const Bytes per_layer = 36864 + 2 * 18432 + 36864 + 3 * 73728;
  EXPECT_EQ(m->weights->total_bytes, 210000 + 272000 + 5 * 1024 + 2 * per_layer);
  bool named = false;
  for (const auto& t : m->weights->tensors) named = named || t.name == "model.layers.1.self_attn.k_proj.weight";
  EXPECT_TRUE(named);
}

TEST(Gguf, WithoutAnOutputTensorTheHeadIsTied) {
  auto m = parse(tiny_llama(false).file());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(m->tie_word_embeddings);
}

// quantization/gguf.py: the I-matrix types (IQ4_XS is ggml type 23, 136 bytes per 256 values)
// have no MMQ kernel, so vLLM dequantizes such a weight whole; the largest one is noted, and the
// head's, which is the embedding table when the head is tied. K-quants (Q4_K, Q6_K) are not.
TEST(Gguf, IMatrixWeightsAreNotedForTheirDequantizedCopy) {
  GgufWriter w;
  w.counts(5, 7);
  w.kv_str("general.architecture", "llama");
  w.kv_u32("llama.block_count", 1);
  w.kv_u32("llama.embedding_length", 256);
  w.kv_u32("llama.feed_forward_length", 512);
  w.kv_u32("llama.attention.head_count", 4);
  w.kv_u32("llama.attention.head_count_kv", 2);
  w.kv_tokens(1024);
  w.tensor("token_embd.weight", {256, 1024}, 23, 256 * 1024 / 256 * 136);
  w.tensor("blk.0.attn_q.weight", {256, 256}, 23, 256 * 256 / 256 * 136);
  w.tensor("blk.0.ffn_up.weight", {256, 512}, 23, 256 * 512 / 256 * 136);
  w.tensor("blk.0.ffn_down.weight", {512, 256}, 12, 512 * 256 / 256 * 144);  // Q4_K: MMQ
  w.tensor("blk.0.attn_norm.weight", {256}, 0, 1024);
  auto m = parse(w.file());
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->quantization);
  EXPECT_EQ(m->quantization->gguf_dequantized_values, 256 * 512);  // ffn_up [512, 256]
  EXPECT_EQ(m->quantization->gguf_dequantized_rows, 512);
  EXPECT_EQ(m->quantization->gguf_dequantized_head_values, 256 * 1024);  // tied: the embedding
  EXPECT_EQ(m->quantization->gguf_dequantized_head_rows, 1024);
  // The tiny Llama's K-quant layers and Q8_0 head need no dequantized copy.
  auto k = parse(tiny_llama().file());
  ASSERT_TRUE(k) << k.error().message;
  EXPECT_EQ(k->quantization->gguf_dequantized_values, 0);
  EXPECT_EQ(k->quantization->gguf_dequantized_head_values, 0);
}

TEST(Gguf, TruncatedDataIsAnError) {
  auto m = parse(tiny_llama().file(/*cut=*/100));
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("truncated"), std::string::npos) << m.error().message;
}

TEST(Gguf, HeaderCutShortIsAnError) {
  const std::string f = tiny_llama().file();
  auto h = parse_gguf_header(std::string_view(f).substr(0, 200), f.size(), "tiny.gguf");
  ASSERT_FALSE(h);
  EXPECT_NE(h.error().message.find("cut short"), std::string::npos) << h.error().message;
}

TEST(Gguf, BadMagicVersionAndCountsAreErrors) {
  EXPECT_FALSE(parse_gguf_header("GGML....", 8, "x"));
  GgufWriter v1;
  std::string f = v1.header();
  std::uint32_t one = 1;
  std::memcpy(f.data() + 4, &one, 4);
  f += std::string(16, '\0');
  auto h = parse_gguf_header(f, f.size(), "x");
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().code, ErrorCode::unsupported);
  GgufWriter huge;
  huge.counts(std::uint64_t{1} << 40, 1);
  EXPECT_FALSE(parse_gguf_header(huge.header(), huge.header().size(), "x"));
  // A string that claims more bytes than any header holds stops the read.
  GgufWriter long_key;
  long_key.counts(0, 1);
  long_key.u64(std::uint64_t{1} << 50);
  EXPECT_FALSE(parse_gguf_header(long_key.header(), long_key.header().size(), "x"));
}

TEST(Gguf, UnknownArchitectureAndTypeAreErrors) {
  GgufWriter w;
  w.counts(0, 1);
  w.kv_str("general.architecture", "rwkv7");
  auto m = parse(w.file());
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::unsupported);
  GgufWriter t;
  t.counts(1, 1);
  t.kv_str("general.architecture", "llama");
  t.tensor("token_embd.weight", {256, 10}, 99, 0);
  EXPECT_FALSE(parse(t.file()));
}

// Every prefix of a header, and the header with one byte set to 0xFF, parses to a model or to
// an error: nothing reads past the bytes given or grows without bound (the sanitizer build runs this
// too; fuzz/gguf_fuzz.cc goes further).
TEST(Gguf, EveryTruncationAndByteFlipIsAnAnswer) {
  const std::string f = tiny_llama().file();
  const std::string header = tiny_llama().header();
  int models = 0;
  for (std::size_t n = 0; n <= header.size(); ++n) {
    auto h = parse_gguf_header(std::string_view(header).substr(0, n), f.size(), "x");
    if (h) models += gguf_model(*h, f.size(), "x").has_value();
  }
  EXPECT_EQ(models, 1);  // only the whole header
  // Every byte of the counts and scalar metadata; past them (the vocabulary's 1,000 strings and
  // the tensor table) every 13th.
  for (std::size_t i = 0; i < header.size(); i += i < 600 ? 1 : 13) {
    std::string g = f;
    g[i] = static_cast<char>(0xFF);
    auto h = parse_gguf_header(g, g.size(), "x");
    if (h) (void)gguf_model(*h, g.size(), "x");
  }
}

// vLLM's GGUF docs: "vLLM only supports loading single-file GGUF models" (merge the parts with
// gguf-split first); a part of a split file says so in split.count.
TEST(Gguf, OnePartOfASplitFileIsRefused) {
  GgufWriter v;
  v.counts(0, 2);
  v.kv_str("general.architecture", "llama");
  v.kv_u16("split.count", 3);  // llama.cpp's gguf-split writes it as a u16
  auto split = parse(v.file());
  ASSERT_FALSE(split);
  EXPECT_EQ(split.error().code, ErrorCode::unsupported);
  EXPECT_NE(split.error().message.find("single-file"), std::string::npos) << split.error().message;
}

// A .gguf path given to `check` is read as a GGUF checkpoint.
TEST(Gguf, LoadModelReadsAGgufFile) {
  const auto path = std::filesystem::temp_directory_path() / ("headroom-gguf-test-" + std::to_string(::getpid()) + ".gguf");
  {
    std::ofstream out(path, std::ios::binary);
    const std::string f = tiny_llama().file();
    out.write(f.data(), static_cast<std::streamsize>(f.size()));
  }
  auto m = load_model(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->architecture, "LlamaForCausalLM");
  EXPECT_NE(m->location.find("GGUF"), std::string::npos);
}

}  // namespace
}  // namespace headroom
