// vLLM's own unit-test vectors (tests/data/engine/vllm_unit_cases.jsonl: page sizes, block counts,
// grouping, concurrency, max_model_len estimates, batch defaults, derived lengths, CUDA graph
// sizes) run through the matching headroom functions. One test per row, named after its id.
//
// Rows whose vLLM function headroom does not model are skipped with the reason. Rows where the
// engine disagrees with vLLM are listed in engine_discrepancies() and run under the
// DISABLED_EngineDiscrepancies instantiation (run them with --gtest_also_run_disabled_tests);
// remove an id from that list once the engine is fixed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/vllm_defaults.h"
#include "engine/vllm_messages.h"
#include "headroom/gpu.h"
#include "headroom/kv_cache_spec.h"
#include "headroom/model.h"
#include "headroom/vllm_config.h"
#include "headroom/vllm_engine.h"
#include "util/json_file.h"

namespace headroom {
namespace {

using nlohmann::json;

// Rows where headroom's engine gives a different answer from vLLM: id → expected vs actual.
const std::map<std::string, std::string>& engine_discrepancies() {
  static const std::map<std::string, std::string> m = {
  };
  return m;
}

std::vector<json> load_rows() {
  const std::string path = std::string(HEADROOM_TEST_DATA_DIR) + "/engine/vllm_unit_cases.jsonl";
  auto text = util::read_file(path);
  if (!text) return {};
  auto rows = util::parse_jsonl(*text, path);
  return rows ? *rows : std::vector<json>{};
}

// One row; printed by its id in test output.
struct Row {
  json j;
};
void PrintTo(const Row& row, std::ostream* os) { *os << row.j.at("id").get<std::string>(); }

std::vector<Row> rows_where(bool discrepancy) {
  std::vector<Row> out;
  for (auto& r : load_rows())
    if (engine_discrepancies().count(r.at("id").get<std::string>()) == (discrepancy ? 1u : 0u)) out.push_back(Row{r});
  return out;
}

std::string row_name(const testing::TestParamInfo<Row>& info) {
  std::string id = info.param.j.at("id").get<std::string>();
  if (id.starts_with("vllm-")) id = id.substr(5);
  std::replace(id.begin(), id.end(), '-', '_');
  return id;
}

// --- Specs of the rows -----------------------------------------------------------------------

double dtype_size(const std::string& dtype) {
  if (dtype == "float32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  ADD_FAILURE() << "dtype " << dtype;
  return 0;
}

// vLLM's test helpers: new_kv_cache_spec() = FullAttentionSpec(block 16, 2 KV heads, head 64,
// float32); new_sliding_window_spec() = the same as SlidingWindowSpec(sliding_window=1).
LayerKvSpec helper_spec(const std::string& name) {
  LayerKvSpec s;
  s.block_size = 16;
  s.num_kv_heads = 2;
  s.head_size = 64;
  s.element_bytes = 4;
  if (name == "SW") {
    s.type = KvSpecType::sliding_window;
    s.sliding_window = 1;
  } else {
    EXPECT_EQ(name, "FULL");
  }
  return s;
}

LayerKvSpec spec_from_json(const json& j) {
  LayerKvSpec s;
  const std::string type = j.at("type");
  if (type == "SlidingWindowSpec") {
    s.type = KvSpecType::sliding_window;
    s.sliding_window = j.at("sliding_window_tokens");
  } else if (type == "MLAAttentionSpec") {
    s.type = KvSpecType::mla;
  } else {
    EXPECT_EQ(type, "FullAttentionSpec");
  }
  s.block_size = j.at("block_size_tokens");
  s.num_kv_heads = j.at("num_kv_heads");
  s.head_size = j.at("head_size");
  s.element_bytes = dtype_size(j.at("dtype"));
  return s;
}

LayerKvSpec named_spec(const json& value, const json& layer_specs) {
  if (value.is_object()) return spec_from_json(value);
  const std::string name = value;
  if (layer_specs.is_object() && layer_specs.contains(name)) return spec_from_json(layer_specs.at(name));
  return helper_spec(name);
}

// Layers of one worker, in the order the row lists them, with their names.
struct NamedLayers {
  std::vector<std::string> names;
  std::vector<LayerKvSpec> specs;
};

// nlohmann::json sorts object keys ("layer_10" before "layer_2"); vLLM keeps model order, which
// is the numeric suffix.
int layer_number(const std::string& name) {
  auto digits = name.find_first_of("0123456789");
  return digits == std::string::npos ? 0 : std::stoi(name.substr(digits));
}

NamedLayers layers_of(const json& layers, const json& layer_specs = json()) {
  std::vector<std::string> names;
  for (const auto& [name, value] : layers.items()) names.push_back(name);
  std::stable_sort(names.begin(), names.end(),
                   [](const std::string& a, const std::string& b) { return layer_number(a) < layer_number(b); });
  NamedLayers out;
  for (const auto& name : names) {
    out.names.push_back(name);
    out.specs.push_back(named_spec(layers.at(name), layer_specs));
  }
  return out;
}

std::vector<std::string> group_layer_names(const KvCacheGroup& g, const NamedLayers& l) {
  std::vector<std::string> out;
  for (int i : g.layers) out.push_back(l.names.at(static_cast<std::size_t>(i)));
  return out;
}

// The KV tensors vLLM allocates for a grouped config: one per layer slot, num_blocks × page each
// (UniformType: one per layer, num_blocks × that layer's page).
std::vector<Bytes> tensor_sizes(const KvCacheConfig& c, std::int64_t num_blocks, const NamedLayers& l) {
  std::vector<Bytes> out;
  if (c.uniform_type) {
    for (const auto& s : l.specs) out.push_back(num_blocks * s.page_bytes());
    return out;
  }
  for (int i = 0; i < c.group_size; ++i) out.push_back(num_blocks * c.page_bytes);
  return out;
}

std::vector<Bytes> expected_tensor_sizes(const json& worker) {
  std::vector<Bytes> out;
  if (worker.contains("tensors_bytes"))
    for (const auto& b : worker.at("tensors_bytes")) out.push_back(b.get<Bytes>());
  if (worker.contains("kv_cache_tensors"))
    for (const auto& t : worker.at("kv_cache_tensors")) out.push_back(t.at("size_bytes").get<Bytes>());
  return out;
}

// --- Handlers, one per kind of row --------------------------------------------------------------

// get_kv_cache_configs over several workers (TP / PP): each worker's layers are grouped on their
// own, and every worker takes the smallest block count.
void check_workers(const json& in, const json& ex) {
  std::vector<NamedLayers> workers;
  std::vector<KvCacheConfig> configs;
  std::int64_t min_blocks = INT64_MAX;
  for (std::size_t w = 0; w < in.at("workers").size(); ++w) {
    workers.push_back(layers_of(in.at("workers")[w], in.value("layer_specs", json::object())));
    configs.push_back(group_kv_cache_specs(workers.back().specs));
    min_blocks = std::min(min_blocks, num_blocks_for(configs.back(), in.at("available_memory_bytes")[w].get<Bytes>()));
  }
  const std::int64_t max_len = in.at("max_model_len_tokens");
  for (std::size_t w = 0; w < workers.size(); ++w) {
    const json& e = ex.at("per_worker")[w];
    SCOPED_TRACE("worker " + std::to_string(w));
    EXPECT_EQ(min_blocks, e.at("num_blocks").get<std::int64_t>());
    EXPECT_EQ(tensor_sizes(configs[w], min_blocks, workers[w]), expected_tensor_sizes(e));
    // Every worker passes the admission check for one max_model_len request.
    EXPECT_LE(kv_bytes_needed(configs[w], max_len, 2048), in.at("available_memory_bytes")[w].get<Bytes>());
  }
}

// get_kv_cache_configs with one worker: block count, tensors and the layers of each group.
void check_one_worker(const json& in, const json& ex, bool hybrid_manager = true) {
  NamedLayers l = layers_of(in.at("layers"));
  if (!hybrid_manager) {
    // Without the hybrid manager sliding layers are stored like full attention (kv_layers.cc).
    for (auto& s : l.specs) s.type = KvSpecType::full_attention, s.sliding_window = 0;
  }
  KvCacheConfig c = group_kv_cache_specs(l.specs);
  const std::int64_t blocks = num_blocks_for(c, in.at("available_memory_bytes").get<Bytes>());
  EXPECT_EQ(blocks, ex.at("num_blocks").get<std::int64_t>());
  EXPECT_EQ(tensor_sizes(c, blocks, l), expected_tensor_sizes(ex));
  if (ex.contains("kv_cache_groups") && hybrid_manager) {
    std::vector<std::vector<std::string>> got, want;
    for (const auto& g : c.groups) got.push_back(group_layer_names(g, l));
    for (const auto& g : ex.at("kv_cache_groups")) want.push_back(g.at("layers").get<std::vector<std::string>>());
    EXPECT_EQ(got, want);
  }
}

LayerKvSpec full_spec(int head_size) {
  LayerKvSpec s = helper_spec("FULL");
  s.head_size = head_size;
  return s;
}

// A model with only the facts predict() needs to size the KV cache of the vLLM helper layers:
// `layers` full-attention layers of 2 KV heads × 64 (float32 when run with --dtype float32).
ModelSpec helper_model(int layers, std::int64_t max_position_embeddings) {
  ModelSpec m;
  m.id = "test/helper-model";
  m.architecture = "LlamaForCausalLM";
  m.model_type = "llama";
  m.num_layers = layers;
  m.hidden_size = 128;
  m.intermediate_size = 256;
  m.num_attention_heads = 2;
  m.num_kv_heads = 2;
  m.head_dim = 64;
  m.vocab_size = 1000;
  m.max_position_embeddings = max_position_embeddings;
  m.max_length_key = "max_position_embeddings";
  m.torch_dtype = "float32";
  return m;
}

GpuSetup big_gpu() {
  GpuSetup g;
  g.gpu = custom_gpu(80.0);
  return g;
}

Prediction predict_ok(const ModelSpec& m, const VllmFlags& f, VllmVersion v = VllmVersion::newest_modelled()) {
  auto p = predict(m, big_gpu(), f, v);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().to_string());
  return p ? *p : Prediction{};
}

// vLLM's test_rope_customization passes hf_overrides={"rope_parameters": ...}: the same override
// given as `--hf-overrides` changes the length predict() derives (no --max-model-len given).
void expect_derived_length_with_overrides(const ModelSpec& m, const json& rope_parameters, const json& expected) {
  std::vector<std::string> args = {"--enforce-eager"};
  if (!rope_parameters.is_null()) args.insert(args.end(), {"--hf-overrides", json{{"rope_parameters", rope_parameters}}.dump()});
  auto cmd = parse_vllm_command(args);
  ASSERT_TRUE(cmd.has_value()) << cmd.error().to_string();
  EXPECT_TRUE(cmd->warnings.empty()) << cmd->warnings.front();
  EXPECT_EQ(predict_ok(m, cmd->flags).settings.max_model_len, expected.get<std::int64_t>());
}

VllmFlags helper_flags() {
  VllmFlags f;
  f.dtype = "float32";
  return f;
}

void check_row(const json& row) {
  const std::string id = row.at("id");
  const std::string category = row.at("category");
  const json& in = row.at("inputs");
  const json& ex = row.at("expected");

  // ---- num_blocks / kv_grouping through get_kv_cache_configs ----
  static const std::set<std::string> k_workers = {"vllm-kvu-001", "vllm-kvu-002", "vllm-kvu-003", "vllm-kvu-004",
                                                  "vllm-kvu-005", "vllm-kvu-006", "vllm-kvu-008", "vllm-kvu-009"};
  if (k_workers.count(id)) return check_workers(in, ex);
  static const std::set<std::string> k_one = {"vllm-kvu-018", "vllm-kvu-019", "vllm-kvu-021", "vllm-kvu-022",
                                              "vllm-kvu-023", "vllm-kvu-024"};
  if (k_one.count(id)) return check_one_worker(in, ex);
  if (id == "vllm-kvu-020") return check_one_worker(in, ex, /*hybrid_manager=*/false);
  if (id == "vllm-kvu-025") {
    // Two full-attention layers, head 128 (page 32768 B) and head 64 (page 16384 B).
    NamedLayers l{{"layer_1", "layer_2"}, {full_spec(128), full_spec(64)}};
    KvCacheConfig c = group_kv_cache_specs(l.specs);
    EXPECT_TRUE(c.uniform_type);
    const std::int64_t blocks = num_blocks_for(c, in.at("available_memory_bytes").get<Bytes>());
    EXPECT_EQ(blocks, ex.at("num_blocks").get<std::int64_t>());
    EXPECT_EQ(tensor_sizes(c, blocks, l), expected_tensor_sizes(ex));
    return;
  }
  if (id == "vllm-kvu-026") {
    // Full head 64 (page 16384 B) + sliding head 32 (page 8192 B): the sliding block size is
    // doubled to 32 tokens so both pages are 16384 B.
    LayerKvSpec sw = helper_spec("SW");
    sw.head_size = 32;
    KvCacheConfig c = group_kv_cache_specs({full_spec(64), sw});
    ASSERT_EQ(c.groups.size(), 2u);
    EXPECT_EQ(c.groups[1].spec.block_size, 32);
    EXPECT_EQ(num_blocks_for(c, in.at("available_memory_bytes").get<Bytes>()), ex.at("num_blocks").get<std::int64_t>());
    EXPECT_EQ(c.group_size, 1);
    return;
  }
  if (id == "vllm-kvu-027") {
    // vLLM refuses to group pages that cannot be aligned; every group of a valid config has the
    // common page size.
    LayerKvSpec sw = helper_spec("SW");
    sw.head_size = 96;
    KvCacheConfig c = group_kv_cache_specs({full_spec(64), sw});
    EXPECT_FALSE(c.error.empty());
    for (const auto& g : c.groups) EXPECT_EQ(g.spec.page_bytes(), c.page_bytes) << "group of " << to_string(g.spec.type);
    return;
  }
  if (id == "vllm-kvu-029") {
    KvCacheConfig c = group_kv_cache_specs({});
    EXPECT_EQ(num_blocks_for(c, 0), ex.at("num_blocks").get<std::int64_t>());
    return;
  }
  if (id == "vllm-kvu-028") {
    VllmFlags f = helper_flags();
    f.max_model_len = in.at("max_model_len_tokens").get<std::int64_t>();
    f.num_gpu_blocks_override = in.at("num_gpu_blocks_override").get<int>();
    Prediction p = predict_ok(helper_model(2, 2048), f);
    EXPECT_EQ(p.num_gpu_blocks, ex.at("num_blocks").get<std::int64_t>());
    return;
  }
  if (id == "vllm-kvu-030") {
    LayerKvSpec sw = helper_spec("SW"), sw128 = helper_spec("SW"), full32 = full_spec(64);
    sw128.head_size = 128;
    full32.block_size = 32;
    const std::vector<std::vector<LayerKvSpec>> cases = {
        {full_spec(64), full_spec(128)}, {full_spec(64), sw}, {sw, full_spec(64)}, {sw, sw128}, {full_spec(64), full32}};
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const bool uniform = !ex.at("results")[i].is_null();
      EXPECT_EQ(group_kv_cache_specs(cases[i]).uniform_type, uniform) << "case " << i;
    }
    return;
  }

  // ---- page sizes ----
  if (id == "vllm-pg-001") {
    LayerKvSpec full, mla, mamba;
    full.num_kv_heads = 4, full.head_size = 64, full.element_bytes = 2;
    mla.type = KvSpecType::mla, mla.num_kv_heads = 1, mla.head_size = 512, mla.element_bytes = 2;
    mamba.type = KvSpecType::mamba;
    mamba.mamba_state_bytes = (64 * 64 + 63 * 64) * 2;  // 16256 B of state
    mamba.page_size_padded = 16384;
    const json& p = ex.at("page_size_bytes");
    EXPECT_EQ(full.page_bytes(), p.at("full").get<Bytes>());
    EXPECT_EQ(mla.page_bytes(), p.at("mla").get<Bytes>());
    EXPECT_EQ(mamba.page_bytes(), p.at("mamba_unaligned").get<Bytes>());
    EXPECT_EQ(mamba.mamba_state_bytes, ex.at("mamba_unaligned_real_bytes_derived").get<Bytes>());
    return;
  }

  // ---- estimate_max_model_len / auto-fit ----
  if (id == "vllm-kvu-013" || id == "vllm-kvu-014") {
    std::vector<LayerKvSpec> specs(in.at("layers").get<std::size_t>(), spec_from_json(in.at("layer_spec")));
    KvCacheConfig c = group_kv_cache_specs(specs);
    EXPECT_EQ(estimate_max_model_len(c, in.at("available_memory_bytes").get<Bytes>(), in.at("max_model_len_tokens"),
                                     in.at("max_num_batched_tokens")),
              ex.at("estimated_max_model_len_tokens").get<std::int64_t>());
    return;
  }
  if (id == "vllm-kvu-033" || id == "vllm-kvu-034") {
    KvCacheConfig c = group_kv_cache_specs(layers_of(in.at("layers")).specs);
    std::int64_t fit = estimate_max_model_len(c, in.at("available_memory_bytes").get<Bytes>(),
                                              in.at("derived_max_model_len_tokens"), 2048);
    if (ex.contains("max_model_len_tokens")) {
      EXPECT_EQ(fit, ex.at("max_model_len_tokens").get<std::int64_t>());
    } else {
      EXPECT_GT(fit, 0);
      EXPECT_LT(fit, in.at("derived_max_model_len_tokens").get<std::int64_t>());
      EXPECT_EQ(fit, ex.at("derived_exact_max_model_len_tokens").get<std::int64_t>());
    }
    return;
  }
  if (id == "vllm-kvu-036") {
    // A max_model_len that fits is kept: predict() does not auto-fit without --max-model-len auto.
    VllmFlags f = helper_flags();
    f.max_model_len = in.at("max_model_len_tokens").get<std::int64_t>();
    f.kv_cache_memory_bytes = in.at("available_memory_bytes").get<Bytes>();
    Prediction p = predict_ok(helper_model(2, 2048), f);
    EXPECT_EQ(p.settings.max_model_len, ex.at("max_model_len_tokens").get<std::int64_t>());
    EXPECT_TRUE(p.starts) << (p.failure ? p.failure->message : "");
    return;
  }
  if (id == "vllm-kvu-037") {
    VllmFlags f = helper_flags();
    f.max_model_len_auto = true;
    f.num_gpu_blocks_override = in.at("num_gpu_blocks_override").get<int>();
    Prediction p = predict_ok(helper_model(2, in.at("derived_max_model_len_tokens")), f);
    EXPECT_GT(p.settings.max_model_len, 0);
    EXPECT_EQ(p.settings.max_model_len, ex.at("derived_exact_max_model_len_tokens").get<std::int64_t>());
    return;
  }
  if (id == "vllm-kvu-038") {
    VllmFlags f = helper_flags();
    f.max_model_len = in.at("max_model_len_tokens").get<std::int64_t>();
    f.num_gpu_blocks_override = in.at("num_gpu_blocks_override").get<int>();
    Prediction p = predict_ok(helper_model(2, 16384), f, VllmVersion{0, 21});
    ASSERT_TRUE(p.failure.has_value());
    EXPECT_EQ(p.failure->error_class, "kv_cache_insufficient");
    EXPECT_EQ(p.failure->message, ex.at("derived_message").get<std::string>());
    return;
  }
  if (id == "vllm-af-001") {
    // JackFram/llama-160m: 12 layers, 12 KV heads × 64, float16, max_position_embeddings 2048.
    ModelSpec m = helper_model(12, 2048);
    m.num_attention_heads = 12, m.num_kv_heads = 12, m.hidden_size = 768, m.torch_dtype = "float16";
    VllmFlags f;
    f.max_model_len_auto = true;
    f.max_num_seqs = in.at("max_num_seqs").get<int>();
    f.enforce_eager = true;
    f.kv_cache_memory_bytes = in.at("kv_cache_memory_bytes").get<Bytes>();
    Prediction p = predict_ok(m, f);
    EXPECT_LT(p.settings.max_model_len, 2048);
    EXPECT_EQ(p.settings.max_model_len, ex.at("derived_exact_max_model_len_tokens").get<std::int64_t>());
    return;
  }

  // ---- max concurrency ----
  if (category == "max_concurrency") {
    std::vector<LayerKvSpec> specs;
    for (const auto& g : in.at("kv_cache_groups")) {
      const json& spec = in.at(g.at("spec").get<std::string>() + "_spec");
      for (int i = 0; i < g.at("layers").get<int>(); ++i) specs.push_back(spec_from_json(spec));
    }
    KvCacheConfig c = group_kv_cache_specs(specs);
    EXPECT_DOUBLE_EQ(max_concurrency(c, in.at("num_blocks"), in.at("max_model_len_tokens"), in.at("max_num_batched_tokens")),
                     ex.at("max_concurrency").get<double>());
    return;
  }

  // ---- GPUModelRunner: opt-125m without KV sharing ----
  if (id == "vllm-gmr-001") {
    LayerKvSpec s;
    s.num_kv_heads = in.at("attention").at("num_kv_heads");
    s.head_size = in.at("attention").at("head_size");
    s.element_bytes = 2;
    KvCacheConfig c = group_kv_cache_specs(std::vector<LayerKvSpec>(in.at("layers").get<std::size_t>(), s));
    EXPECT_EQ(c.page_bytes, in.at("page_size_bytes_derived").get<Bytes>());
    EXPECT_EQ(static_cast<int>(c.groups.size()), ex.at("kv_cache_groups").get<int>());
    EXPECT_EQ(c.group_size, ex.at("group_layers").get<int>());
    const std::int64_t blocks = num_blocks_for(c, in.at("available_memory_bytes").get<Bytes>());
    EXPECT_EQ(blocks, ex.at("num_blocks").get<std::int64_t>());
    EXPECT_EQ(estimate_max_model_len(c, in.at("estimate_available_memory_bytes").get<Bytes>(),
                                     in.at("max_model_len_tokens"), in.at("max_num_batched_tokens")),
              ex.at("estimated_max_model_len_tokens").get<std::int64_t>());
    return;
  }

  // ---- messages of the KV memory check ----
  if (id == "vllm-iem-001") {
    EXPECT_EQ(engine::no_kv_cache_memory_message(VllmVersion{0, 21}), ex.at("derived_message").get<std::string>());
    return;
  }
  if (id == "vllm-iem-002") {
    EXPECT_EQ(engine::kv_cache_insufficient_message(VllmVersion{0, 21}, in.at("max_model_len_tokens"),
                                                    in.at("max_memory_usage_bytes_patched").get<Bytes>(),
                                                    in.at("available_memory_bytes").get<Bytes>(), 0),
              ex.at("derived_message").get<std::string>());
    return;
  }
  if (id == "vllm-iem-003") {
    // The first and last templates of the history: v0.8.0 (before 2025-04-09) printed "GB" with
    // {:.2f}; the newest prints format_gib, "model's", the CPU clause and the docs link.
    const Bytes need = 3 * k_gib / 2, avail = k_gib;
    EXPECT_EQ(engine::kv_cache_insufficient_message(VllmVersion{0, 8, 0}, 4096, need, avail, 2048),
              "To serve at least one request with the models's max seq len (4096), (1.50 GB KV cache is needed, which is "
              "larger than the available KV cache memory (1.00 GB). Try increasing `gpu_memory_utilization` or "
              "decreasing `max_model_len` when initializing the engine.");
    EXPECT_EQ(engine::kv_cache_insufficient_message(VllmVersion{0, 21}, 4096, need, avail, 2048),
              "To serve at least one request with the model's max seq len (4096), (1.5 GiB KV cache is needed, which is "
              "larger than the available KV cache memory (1.0 GiB). Based on the available memory, the estimated maximum "
              "model length is 2048. Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU "
              "backend) or decreasing `max_model_len` when initializing the engine. See "
              "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.");
    return;
  }

  // ---- batch defaults ----
  if (id >= "vllm-def-001" && id <= "vllm-def-004") {
    const bool big = in.at("device_total_memory").get<std::string>().starts_with(">=70");
    auto gpu = GpuCatalog::builtin().find(big ? "H100" : "A100-80GB");
    ASSERT_TRUE(gpu.has_value()) << gpu.error().to_string();
    VllmFlags f;
    f.usage_context = in.at("usage_context") == "LLM_CLASS" ? UsageContext::llm_class : UsageContext::api_server;
    auto limits = engine::resolve_batch_limits(VllmVersion::newest_modelled(), *gpu, f, 2048, true);
    EXPECT_EQ(limits.max_num_batched_tokens, ex.at("max_num_batched_tokens").get<int>());
    EXPECT_EQ(limits.max_num_seqs, ex.at("max_num_seqs").get<int>());
    return;
  }
  if (id == "vllm-def-005") {
    const auto& values = in.at("values");
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::string v = values[i];
      const json& want = ex.at("max_model_len")[i];
      if (v == "(absent)") {
        auto cmd = parse_vllm_command({"--max-num-seqs", "8"});
        ASSERT_TRUE(cmd.has_value());
        EXPECT_FALSE(cmd->flags.max_model_len.has_value());
        EXPECT_FALSE(cmd->flags.max_model_len_auto);
        continue;
      }
      auto cmd = parse_vllm_command({"--max-model-len", v});
      if (want.is_string()) {
        EXPECT_FALSE(cmd.has_value()) << v << " was accepted";
      } else if (want.get<std::int64_t>() == -1) {
        ASSERT_TRUE(cmd.has_value()) << v;
        EXPECT_TRUE(cmd->flags.max_model_len_auto) << v;
      } else {
        ASSERT_TRUE(cmd.has_value()) << v << ": " << cmd.error().to_string();
        EXPECT_EQ(cmd->flags.max_model_len, want.get<std::int64_t>()) << v;
      }
    }
    return;
  }
  if (id == "vllm-def-006") {
    // The same suffix rules as --kv-cache-memory-bytes; the quoted case (a JSON string) does not
    // apply to a single flag value.
    const std::vector<std::pair<std::string, Bytes>> cases = {
        {"80g", 80'000'000'000}, {"1k", 1000}, {"5m", 5'000'000}, {"2t", 2'000'000'000'000},
        {"1K", 1024},           {"1G", k_gib}, {"1.5g", 1'500'000'000}};
    for (std::size_t i = 0; i < cases.size(); ++i) {
      auto b = parse_human_bytes(cases[i].first);
      ASSERT_TRUE(b.has_value()) << cases[i].first;
      EXPECT_EQ(*b, cases[i].second) << cases[i].first;
      EXPECT_EQ(ex.at("results")[i].get<std::string>(), "{\"x\": " + std::to_string(cases[i].second) + "}");
    }
    return;
  }

  // ---- derived max_model_len ----
  if (id == "vllm-len-004" || id == "vllm-len-005") {
    auto m = catalog_model("meta-llama/Meta-Llama-3-8B-Instruct");
    ASSERT_TRUE(m.has_value()) << m.error().to_string();
    expect_derived_length_with_overrides(*m, in.at("hf_overrides_rope_parameters"), ex.at("max_model_len_tokens"));
    return;
  }
  if (id == "vllm-len-006" || id == "vllm-len-007") {
    // lmsys/longchat-13b-16k: max_position_embeddings 2048 with linear RoPE scaling × 8.
    ModelSpec m = helper_model(40, 2048);
    m.rope_scaling = RopeScaling{"linear", 8.0, {}};
    expect_derived_length_with_overrides(m, in.at("hf_overrides_rope_parameters"), ex.at("max_model_len_tokens"));
    return;
  }
  if (id >= "vllm-len-008" && id <= "vllm-len-012") {
    ModelSpec m;
    if (in.at("model") == "BAAI/bge-reranker-base") {
      // XLM-RoBERTa: max_position_embeddings 514, tokenizer model_max_length 512.
      m = helper_model(12, 514);
      m.tokenizer_model_max_length = 512;
    } else {
      auto c = catalog_model(in.at("model").get<std::string>());
      ASSERT_TRUE(c.has_value()) << c.error().to_string();
      m = *c;
    }
    VllmFlags f;
    f.enforce_eager = true;
    if (!in.at("max_model_len_arg").is_null()) f.max_model_len = in.at("max_model_len_arg").get<std::int64_t>();
    Prediction p = predict_ok(m, f);
    if (ex.contains("raises")) {
      ASSERT_TRUE(p.failure.has_value());
      EXPECT_EQ(p.failure->error_class, "max_model_len_exceeds_model_limit");
    } else {
      EXPECT_EQ(p.settings.max_model_len, ex.at("max_model_len_tokens").get<std::int64_t>());
      EXPECT_NE(p.failure ? p.failure->error_class : "", "max_model_len_exceeds_model_limit");
    }
    return;
  }

  // ---- CUDA graph capture sizes (defaults only) ----
  if (id == "vllm-cg-001") {
    auto sizes = engine::cudagraph_capture_sizes(VllmVersion::newest_modelled(), in.at("max_num_seqs"),
                                                 in.at("max_num_batched_tokens"));
    std::vector<int> want = {1, 2, 4};
    for (int s = 8; s <= 256; s += 8) want.push_back(s);  // the 35 sizes derived in the row's notes
    EXPECT_EQ(sizes, want);
    ASSERT_FALSE(sizes.empty());
    EXPECT_EQ(sizes.back(), ex.at("max_cudagraph_capture_size").get<int>());
    return;
  }

  ADD_FAILURE() << "row " << id << " has no handler and no skip reason";
}

// Rows headroom does not model, with the reason.
const std::map<std::string, std::string>& skip_reasons() {
  static const std::map<std::string, std::string> m = [] {
    std::map<std::string, std::string> r;
    const std::string user_graphs = "user-given cudagraph_capture_sizes / max_cudagraph_capture_size / compilation "
                                    "config are not modelled (only the default capture list is)";
    for (const char* id : {"vllm-cg-002", "vllm-cg-003", "vllm-cg-004", "vllm-cg-005", "vllm-cg-006", "vllm-cg-007",
                           "vllm-cg-008", "vllm-cg-009", "vllm-cg-010", "vllm-cg-011", "vllm-cg-012", "vllm-cg-013"})
      r[id] = user_graphs;
    for (const char* id : {"vllm-cg-014", "vllm-cg-015", "vllm-cg-016", "vllm-cg-017"})
      r[id] = "sequence parallelism is not modelled";
    r["vllm-cg-018"] = "compile_sizes are not modelled";
    for (const char* id : {"vllm-cg-019", "vllm-cg-020", "vllm-cg-021", "vllm-cg-022", "vllm-cg-023"})
      r[id] = "cudagraph modes other than the version default, compilation mode and LoRA graph keys are not modelled";
    for (const char* id : {"vllm-len-001", "vllm-len-002", "vllm-len-003"})
      r[id] = "--disable-sliding-window is not modelled";
    r["vllm-kvu-007"] = "specs are built from one model, so two workers cannot disagree on a layer";
    r["vllm-kvu-010"] = "per-worker projection of global groups is not modelled (each stage is grouped on its own)";
    r["vllm-kvu-011"] = "KVCacheSpec.merge is not modelled";
    r["vllm-kvu-012"] = "FullAttentionSpec carrying a sliding_window (is_kv_cache_spec_uniform) is not modelled";
    r["vllm-kvu-031"] = "the scheduler's view of the KV config is not modelled";
    r["vllm-kvu-032"] = "MLAAttentionSpec.merge and the fp8_ds_mla page are not modelled";
    r["vllm-kvu-035"] = "num_speculative_blocks (speculative decoding) is not modelled: headroom charges one Mamba page "
                        "per request, vLLM 1 + num_speculative_blocks";
    for (const char* id : {"vllm-kvu-039", "vllm-kvu-040", "vllm-kvu-041", "vllm-kvu-042"})
      r[id] = "unify_hybrid_kv_cache_specs with page_size_padded attention specs is not modelled";
    r["vllm-kvu-043"] = "KV cache events are not modelled";
    r["vllm-gmr-002"] = "cross-layer KV sharing (kv_sharing_target_layer_name) is not modelled";
    for (const char* id : {"vllm-gmr-003", "vllm-gmr-004", "vllm-gmr-005"})
      r[id] = "attention-backend kernel block sizes (select_common_block_size) are not modelled";
    r["vllm-gmr-006"] = "the Mamba max_num_seqs > num_blocks check of FULL cudagraphs is not modelled";
    for (const char* id : {"vllm-mem-001", "vllm-mem-002", "vllm-mem-003"})
      r[id] = "memory profiling / MemorySnapshot runs on a GPU; headroom estimates these terms";
    return r;
  }();
  return m;
}

class VllmUnitCase : public testing::TestWithParam<Row> {};

TEST_P(VllmUnitCase, MatchesVllm) {
  const json& row = GetParam().j;
  const std::string id = row.at("id");
  SCOPED_TRACE(id + " (" + row.at("test_name").get<std::string>() + ")");
  if (auto it = skip_reasons().find(id); it != skip_reasons().end()) GTEST_SKIP() << it->second;
  check_row(row);
}

INSTANTIATE_TEST_SUITE_P(Rows, VllmUnitCase, testing::ValuesIn(rows_where(false)), row_name);
INSTANTIATE_TEST_SUITE_P(DISABLED_EngineDiscrepancies, VllmUnitCase, testing::ValuesIn(rows_where(true)), row_name);

TEST(VllmUnitCases, FileHasEveryRow) { EXPECT_EQ(load_rows().size(), 98u); }

TEST(VllmUnitCases, SkipAndDiscrepancyListsNameRealRows) {
  std::set<std::string> ids;
  for (const auto& r : load_rows()) ids.insert(r.at("id").get<std::string>());
  for (const auto& [id, reason] : skip_reasons()) EXPECT_TRUE(ids.count(id)) << id;
  for (const auto& [id, reason] : engine_discrepancies()) {
    EXPECT_TRUE(ids.count(id)) << id;
    EXPECT_FALSE(skip_reasons().count(id)) << id << " is both skipped and a discrepancy";
  }
}

}  // namespace
}  // namespace headroom
