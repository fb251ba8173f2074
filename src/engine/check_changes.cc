// Single-flag changes that turn a failing prediction into one that starts (see check_changes.h).
#include "headroom/check_changes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "engine/encoder_profile.h"
#include "util/json_file.h"
#include "util/strings.h"

namespace headroom {

namespace {

class Search {
 public:
  Search(const ModelSpec& model, const GpuSetup& gpus, const VllmFlags& flags, const Prediction& failed,
         const PredictFn& predict)
      : m_model(model), m_gpus(gpus), m_flags(flags), m_failed(failed), m_predict(predict) {}

  std::vector<FlagChange> run(std::size_t limit) {
    const std::string c = m_failed.failure ? m_failed.failure->error_class : "";
    if (c == "tp_size_not_divisible") {
      smaller_tp();
      tp_times_pp();
    } else if (c == "pp_size_too_large") {
      smaller_pp();
    } else if (c == "max_model_len_exceeds_model_limit") {
      longest_length(/*below_current=*/false);
    } else if (c == "quantization_mismatch" || c == "quantization_config_missing" ||
               c == "quantization_unsupported_on_gpu") {
      drop_quantization();
    } else if (c == "unsupported_dtype_on_gpu") {
      half_dtype();
    } else if (c == "invalid_block_size") {
      block_size_16();
    } else if (c == "kv_cache_insufficient") {
      longest_length(/*below_current=*/true);
      utilization_up();
      multimodal_levers();
      fp8_kv_cache();
      more_tp();
      fp8_weights();
    } else if (c == "no_kv_cache_memory") {
      utilization_up();
      multimodal_levers();
      more_tp();
      fp8_weights();
      fewer_seqs();
      eager();
    } else if (c == "weights_load_oom") {
      drop_online_fp8();
      more_tp();
      fp8_weights();
      cpu_offload();
    } else if (c == "profile_run_oom") {
      multimodal_levers();
      // A shorter max_model_len shrinks a dummy video sized by it (Qwen2-VL, qwen2_vl_video.h).
      if (m_model.vision) longest_length(/*below_current=*/true);
      fewer_seqs();
      more_tp();
      fp8_weights();
    } else if (c == "cuda_graph_capture_oom") {
      eager();
      utilization_down();
      fewer_seqs();
    } else if (c == "sampler_warmup_oom") {
      fewer_seqs();
      utilization_down();
    } else if (c == "startup_free_memory_insufficient") {
      utilization_down();
    } else if (c == "mm_item_exceeds_batched_tokens") {
      batched_tokens_for_one_item();
      no_video("no video input: the largest item is then one image, which fits the batch");
    } else if (c == "mamba_cache_blocks_insufficient") {
      fewer_seqs();
      utilization_up();
    }
    if (m_out.size() > limit) m_out.resize(limit);
    return std::move(m_out);
  }

 private:
  const ResolvedSettings& now() const { return m_failed.settings; }
  int tp() const { return std::max(1, now().tensor_parallel_size); }
  int pp() const { return std::max(1, now().pipeline_parallel_size); }

  std::optional<Prediction> starts(const VllmFlags& f, const GpuSetup& g) const {
    auto p = m_predict(f, g);
    if (!p || !p->starts) return std::nullopt;
    return std::move(*p);
  }
  std::optional<Prediction> starts(const VllmFlags& f) const { return starts(f, m_gpus); }

  // The searches below try sizes downwards from the one given; only the sizes vLLM could accept
  // are predicted, and at most k_max_tries of them, so the work stays bounded whatever the size.
  // config/model.py verify_with_parallel_config: the attention heads split evenly over TP ranks.
  static constexpr int k_max_tries = 16;
  bool heads_split_over(int t) const { return m_model.num_attention_heads <= 0 || m_model.num_attention_heads % t == 0; }
  // Every pipeline stage holds at least one layer.
  bool layers_cover(int stages) const { return m_model.num_layers <= 0 || stages <= m_model.num_layers; }

  void keep(FlagChange c, Prediction p, int gpus = 0) {
    c.prediction = std::move(p);
    c.gpus = gpus > 0 ? gpus : tp() * pp();
    m_out.push_back(std::move(c));
  }

  // The largest value in [lo, hi] for which `ok` holds, when ok is true up to some point and false
  // after it (bisection); nullopt when it holds nowhere.
  template <class Ok>
  static std::optional<std::int64_t> largest(std::int64_t lo, std::int64_t hi, Ok ok) {
    if (lo > hi || !ok(lo)) return std::nullopt;
    while (lo < hi) {
      std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (ok(mid)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
  // The smallest value in [lo, hi] for which `ok` holds, when ok is false up to some point and true
  // after it.
  template <class Ok>
  static std::optional<std::int64_t> smallest(std::int64_t lo, std::int64_t hi, Ok ok) {
    if (lo > hi || !ok(hi)) return std::nullopt;
    while (lo < hi) {
      std::int64_t mid = lo + (hi - lo) / 2;
      if (ok(mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  void longest_length(bool below_current) {
    if (m_flags.max_model_len_auto) return;
    std::int64_t hi = below_current ? now().max_model_len - 1 : 0;
    if (!below_current) {
      // The model's own limit: the length vLLM derives when none is given.
      VllmFlags f = m_flags;
      f.max_model_len.reset();
      auto p = m_predict(f, m_gpus);
      if (!p) return;
      hi = p->settings.max_model_len;
    }
    auto fits = [&](std::int64_t len) {
      VllmFlags f = m_flags;
      f.max_model_len = len;
      return starts(f).has_value();
    };
    auto len = largest(16, hi, fits);
    if (!len) return;
    // A round number when it costs little: a multiple of 1024 from 4096 on, of 256 from 1024.
    std::int64_t step = *len >= 4096 ? 1024 : *len >= 1024 ? 256 : 1;
    std::int64_t rounded = *len / step * step;
    VllmFlags f = m_flags;
    f.max_model_len = rounded;
    auto p = starts(f);
    if (!p) return;
    keep({{{"--max-model-len", std::to_string(rounded)}},
          {},
          0,
          below_current ? "the longest max_model_len whose KV cache fits in what the budget leaves"
                        : "within the model's own limit (max_position_embeddings and its RoPE scaling)",
          {}},
         std::move(*p));
  }

  void utilization_up() {
    const int current = static_cast<int>(std::lround(now().gpu_memory_utilization * 100));
    if (current >= 95) return;
    auto fits = [&](std::int64_t percent) {
      VllmFlags f = m_flags;
      f.gpu_memory_utilization = static_cast<double>(percent) / 100.0;
      return starts(f).has_value();
    };
    auto percent = smallest(current + 1, 95, fits);
    if (!percent) return;
    VllmFlags f = m_flags;
    f.gpu_memory_utilization = static_cast<double>(*percent) / 100.0;
    auto p = starts(f);
    if (!p) return;
    keep({{{"--gpu-memory-utilization", util::fixed(*f.gpu_memory_utilization, 2)}},
          {},
          0,
          "the lowest utilization (up to 0.95) that leaves the KV cache what it needs; the rest of the GPU stays for "
          "CUDA graphs and the sampler",
          {}},
         std::move(*p));
  }

  void utilization_down() {
    const int current = static_cast<int>(std::lround(now().gpu_memory_utilization * 100));
    const bool free_check = m_failed.failure->error_class == "startup_free_memory_insufficient";
    // Not monotone: too small a budget fails the KV cache instead. The first from the top that starts.
    for (int percent = current - 1; percent >= 30; --percent) {
      VllmFlags f = m_flags;
      f.gpu_memory_utilization = percent / 100.0;
      if (free_check) {
        // The highest utilization the free memory covers; when the smaller budget then holds too
        // little KV cache for max_model_len, the longest length that fits goes with it.
        auto p = m_predict(f, m_gpus);
        if (!p) return;
        // Below the free memory, what vLLM allocates outside the budget (graphs, the sampler's
        // warm-up) may still not fit beside it: lower again.
        if (!p->starts && p->failure &&
            (p->failure->error_class == "startup_free_memory_insufficient" || p->failure->error_class == "sampler_warmup_oom" ||
             p->failure->error_class == "cuda_graph_capture_oom"))
          continue;
        if (!p->starts && p->failure && p->failure->error_class == "kv_cache_insufficient" && !m_flags.max_model_len_auto) {
          auto fits = [&](std::int64_t len) {
            VllmFlags g = f;
            g.max_model_len = len;
            return starts(g).has_value();
          };
          auto len = largest(16, p->settings.max_model_len - 1, fits);
          if (!len) continue;  // what is outside the budget does not fit yet at any length
          const std::int64_t step = *len >= 4096 ? 1024 : *len >= 1024 ? 256 : 1;
          f.max_model_len = *len / step * step;
          if (auto q = starts(f))
            keep({{{"--gpu-memory-utilization", util::fixed(*f.gpu_memory_utilization, 2)},
                   {"--max-model-len", std::to_string(*f.max_model_len)}},
                  {},
                  0,
                  "the highest utilization that the memory free on the GPU covers, and the longest max_model_len "
                  "its KV cache then holds",
                  {}},
                 std::move(*q));
          return;
        }
        if (!p->starts) return;
      }
      if (auto p = starts(f)) {
        const std::string c = m_failed.failure->error_class;
        keep({{{"--gpu-memory-utilization", util::fixed(*f.gpu_memory_utilization, 2)}},
              {},
              0,
              c == "startup_free_memory_insufficient"
                  ? "the highest utilization that the memory free on the GPU covers"
                  : "a smaller budget leaves room beside it for what vLLM allocates after sizing the KV cache",
              {}},
             std::move(*p));
        return;
      }
    }
  }

  void fp8_kv_cache() {
    const std::string kv = util::to_lower(now().kv_cache_dtype);
    if (kv.starts_with("fp8") || kv.starts_with("nvfp4")) return;
    VllmFlags f = m_flags;
    f.kv_cache_dtype = "fp8";
    if (auto p = starts(f))
      keep({{{"--kv-cache-dtype", "fp8"}}, {}, 0, "one byte per KV element: twice the tokens in the same memory", {}},
           std::move(*p));
  }

  void more_tp() {
    if (m_gpus.nodes > 1) return;
    for (int t : {tp() * 2, tp() * 4, tp() * 8}) {
      if (t > 8 * std::max(1, m_gpus.count) || t > 64) break;
      VllmFlags f = m_flags;
      f.tensor_parallel_size = t;
      GpuSetup g = m_gpus;
      g.count = std::max(g.count, t * pp());
      if (auto p = starts(f, g)) {
        keep({{{"--tensor-parallel-size", std::to_string(t)}},
              {},
              t * pp(),
              "splits the weights and the KV cache over " + std::to_string(t) + " GPUs",
              {}},
             std::move(*p), t * pp());
        return;
      }
    }
  }

  void fp8_weights() {
    if (m_model.quantization || m_flags.quantization || !m_gpus.gpu.fp8_supported) return;
    VllmFlags f = m_flags;
    f.quantization = "fp8";
    if (auto p = starts(f))
      keep({{{"--quantization", "fp8"}}, {}, 0, "weights quantized to fp8 while loading: about half their memory", {}},
           std::move(*p));
  }

  // The fewest whole GiB of --cpu-offload-gb that start it (the decoder layers' weights that move
  // to host memory; the last resort, since each step then reads them over PCIe). Offered only while
  // at most half of the weights would live in host memory: past that, decoding is bound by PCIe and
  // more GPUs or a quantized checkpoint (headroom plan) is the realistic answer.
  void cpu_offload() {
    const std::int64_t current = m_flags.cpu_offload_gb ? static_cast<std::int64_t>(std::ceil(*m_flags.cpu_offload_gb)) : 0;
    const std::int64_t most = static_cast<std::int64_t>(std::floor(to_gib(m_failed.memory.weights) / 2)) + current;
    auto fits = [&](std::int64_t gb) {
      VllmFlags f = m_flags;
      f.cpu_offload_gb = static_cast<double>(gb);
      return starts(f).has_value();
    };
    auto gb = smallest(current + 1, most, fits);
    if (!gb) return;
    VllmFlags f = m_flags;
    f.cpu_offload_gb = static_cast<double>(*gb);
    if (auto p = starts(f))
      keep({{{"--cpu-offload-gb", std::to_string(*gb)}},
            {},
            0,
            "that many GiB of weights per GPU kept in host memory and read over PCIe at every step (much slower decoding)",
            {}},
           std::move(*p));
  }

  void fewer_seqs() {
    const int current = now().max_num_seqs;
    if (current <= 1) return;
    auto fits = [&](std::int64_t n) {
      VllmFlags f = m_flags;
      f.max_num_seqs = static_cast<int>(n);
      return starts(f).has_value();
    };
    auto n = largest(1, current - 1, fits);
    if (!n) return;
    std::int64_t rounded = *n >= 32 ? *n / 8 * 8 : *n;
    VllmFlags f = m_flags;
    f.max_num_seqs = static_cast<int>(rounded);
    auto p = starts(f);
    if (!p) return;
    keep({{{"--max-num-seqs", std::to_string(rounded)}},
          {},
          0,
          "fewer concurrent sequences: a smaller sampler warm-up, fewer CUDA graphs and state blocks",
          {}},
         std::move(*p));
  }

  void eager() {
    if (m_flags.enforce_eager) return;
    VllmFlags f = m_flags;
    f.enforce_eager = true;
    if (auto p = starts(f))
      keep({{{"--enforce-eager", ""}}, {}, 0, "no CUDA graphs and no memory for them (slower decoding)", {}},
           std::move(*p));
  }

  void drop_quantization() {
    if (!m_flags.quantization) return;
    VllmFlags f = m_flags;
    f.quantization.reset();
    if (auto p = starts(f))
      keep({{{"--quantization", ""}},
            {"--quantization"},
            0,
            m_model.quantization ? "vLLM reads the method from the checkpoint's own config"
                                 : "the checkpoint is not quantized with this method",
            {}},
           std::move(*p));
  }

  // Online --quantization fp8 of a 16-bit checkpoint: some versions hold more while converting
  // than the 16-bit model itself (engine/vllm_eras.h OnlineFp8LoadPeak), so it may load without.
  void drop_online_fp8() {
    if (m_model.quantization || !m_flags.quantization || *m_flags.quantization != "fp8") return;
    VllmFlags f = m_flags;
    f.quantization.reset();
    if (auto p = starts(f))
      keep({{{"--quantization", ""}},
            {"--quantization"},
            0,
            "the 16-bit weights load without the online fp8 conversion's extra copies",
            {}},
           std::move(*p));
  }

  void half_dtype() {
    VllmFlags f = m_flags;
    f.dtype = "half";
    if (auto p = starts(f))
      keep({{{"--dtype", "half"}}, {}, 0, "float16, which GPUs before compute capability 8.0 support", {}}, std::move(*p));
  }

  // The item's tokens, read back from vLLM's message: the smallest max_num_batched_tokens it takes.
  void batched_tokens_for_one_item() {
    const auto& item = m_failed.failure->mm_item_tokens;
    if (!item || *item <= 0 || *item > std::numeric_limits<int>::max()) return;
    VllmFlags f = m_flags;
    f.max_num_batched_tokens = static_cast<int>(*item);
    if (auto p = starts(f))
      keep({{{"--max-num-batched-tokens", std::to_string(*f.max_num_batched_tokens)}}, {}, 0,
            "a batch that holds one whole image or video, which vLLM never splits while chunked multimodal input "
            "is off (forced for prefix-LM models)",
            {}},
           std::move(*p));
  }

  // A multimodal model whose encoder pass on vLLM's dummy batch is part of the activation peak:
  // no video where vLLM profiles a video, smaller images where the processor takes their bound,
  // else the pass skipped; and vLLM's text-only mode.
  void multimodal_levers() {
    if (!m_model.vision || m_failed.memory.encoder_profile <= 0) return;
    const auto item = engine::largest_mm_item(m_model, m_flags, now(), m_failed.version);
    const bool video = item && item->modality == "video" &&
                       no_video("no video input: vLLM then profiles its largest image, a smaller encoder pass than its "
                                "dummy video's");
    if (!video && !(item && smaller_images(*item))) skip_mm_profiling();
    text_only();
  }

  // Qwen2-VL and Qwen2.5-VL take max_pixels from --mm-processor-kwargs (qwen2_vl.py's processor;
  // vLLM's examples pass it), Qwen3-VL and Qwen3.5 the size their Qwen2VLImageProcessorFast reads
  // from preprocessor_config.json ({"longest_edge", "shortest_edge"}, both given). Either bounds
  // the largest image and so the profiled one: the most tokens per image (each (patch x merge)^2
  // pixels) down to 256 that starts.
  bool smaller_images(const engine::EncoderItem& item) {
    const std::string& a = m_model.architecture;
    const bool qwen2 = a == "Qwen2VLForConditionalGeneration" || a == "Qwen2_5_VLForConditionalGeneration";
    const bool qwen3 = a == "Qwen3VLForConditionalGeneration" || a == "Qwen3VLMoeForConditionalGeneration" ||
                       a == "Qwen3_5ForConditionalGeneration" || a == "Qwen3_5MoeForConditionalGeneration";
    if (!qwen2 && !qwen3) return false;
    constexpr std::int64_t k_fewest_tokens = 256;
    if (item.modality != "image" || item.tokens <= k_fewest_tokens) return false;
    const std::int64_t side = std::max(1, m_model.vision->patch_size) * std::max(1, m_model.vision->spatial_merge_size);
    auto with = [&](std::int64_t tokens) {
      VllmFlags f = m_flags;
      auto kwargs = util::parse_json(f.mm_processor_kwargs.empty() ? "{}" : f.mm_processor_kwargs, "--mm-processor-kwargs");
      nlohmann::json j = kwargs && kwargs->is_object() ? *kwargs : nlohmann::json::object();
      if (qwen2) {
        j["max_pixels"] = tokens * side * side;
      } else {
        const std::int64_t shortest = m_model.vision->min_pixels > 0 ? m_model.vision->min_pixels : 65536;
        j["size"] = {{"longest_edge", tokens * side * side}, {"shortest_edge", shortest}};
      }
      f.mm_processor_kwargs = j.dump();
      return f;
    };
    auto tokens = largest(k_fewest_tokens, item.tokens - 1, [&](std::int64_t t) { return starts(with(t)).has_value(); });
    if (!tokens) return false;
    const std::int64_t rounded = *tokens / 64 * 64;
    VllmFlags f = with(rounded);
    auto p = starts(f);
    if (!p) return false;
    keep({{{"--mm-processor-kwargs", f.mm_processor_kwargs}},
          {},
          0,
          "images scaled down to at most " + util::with_commas(rounded) + " tokens (from " + util::with_commas(item.tokens) +
              "): a smaller encoder pass on vLLM's largest dummy image; larger images are resized to fit",
          {}},
         std::move(*p));
    return true;
  }

  // --skip-mm-profiling (#22950, v0.10.2): the KV cache gets what the pass would take, and nothing
  // is kept back for a request that brings the largest input.
  void skip_mm_profiling() {
    if (m_flags.skip_mm_profiling || m_failed.version < VllmVersion{0, 10, 2}) return;
    VllmFlags f = m_flags;
    f.skip_mm_profiling = true;
    if (auto p = starts(f))
      keep({{{"--skip-mm-profiling", ""}}, {}, 0,
            "vLLM skips the encoder's profile pass: its memory goes to the KV cache, and a request with the largest "
            "images may then run out of memory",
            {}},
           std::move(*p));
  }

  // vLLM's text-only mode: every modality the model takes limited to 0 (video only where images
  // alone do not make it text-only); from v0.10.1 the towers are not loaded.
  void text_only() {
    if (engine::text_only_mode(m_model, m_flags)) return;
    VllmFlags f = m_flags;
    for (const char* modality : {"image", "audio", "video"}) {
      if (engine::text_only_mode(m_model, f)) break;
      if (std::string(modality) == "audio" && !m_model.audio) continue;
      f.limit_mm_per_prompt[modality] = 0;
      f.mm_dummy_sizes.erase(modality);
    }
    if (auto p = starts(f))
      keep({{{"--limit-mm-per-prompt", limit_mm_per_prompt_json(f)}}, {}, 0,
            "text only: no image, video or audio input, and no encoder pass (nor, from v0.10.1, its weights)", {}},
           std::move(*p));
  }

  bool no_video(const std::string& why) {
    VllmFlags f = m_flags;
    f.limit_mm_per_prompt["video"] = 0;
    f.mm_dummy_sizes.erase("video");
    auto p = starts(f);
    if (!p) return false;
    // The whole dict: vLLM takes --limit-mm-per-prompt as one value, so the user's other limits stay in it.
    keep({{{"--limit-mm-per-prompt", limit_mm_per_prompt_json(f)}}, {}, 0, why, {}}, std::move(*p));
    return true;
  }

  void block_size_16() {
    VllmFlags f = m_flags;
    f.block_size = 16;
    if (auto p = starts(f))
      keep({{{"--block-size", "16"}}, {}, 0, "a block size the attention backend accepts", {}}, std::move(*p));
  }

  void smaller_tp() {
    int tries = 0;
    for (int t = tp() - 1; t >= 1 && tries < k_max_tries; --t) {
      if (!heads_split_over(t)) continue;
      ++tries;
      VllmFlags f = m_flags;
      f.tensor_parallel_size = t;
      if (auto p = starts(f)) {
        keep({{{"--tensor-parallel-size", std::to_string(t)}},
              {},
              t * pp(),
              "the largest tensor-parallel size below " + std::to_string(tp()) + " that the model's heads split over",
              {}},
             std::move(*p), t * pp());
        return;
      }
    }
  }

  void tp_times_pp() {
    int tries = 0;
    for (int t = tp() - 1; t >= 2 && tries < k_max_tries; --t) {
      if (tp() % t != 0 || !heads_split_over(t) || !layers_cover(pp() * (tp() / t))) continue;
      ++tries;
      VllmFlags f = m_flags;
      f.tensor_parallel_size = t;
      f.pipeline_parallel_size = pp() * (tp() / t);
      if (auto p = starts(f)) {
        keep({{{"--tensor-parallel-size", std::to_string(t)}, {"--pipeline-parallel-size", std::to_string(*f.pipeline_parallel_size)}},
              {},
              tp() * pp(),
              "the same " + std::to_string(tp() * pp()) + " GPUs as tensor x pipeline parallelism",
              {}},
             std::move(*p), tp() * pp());
        return;
      }
    }
  }

  void smaller_pp() {
    int tries = 0;
    for (int q = pp() - 1; q >= 1 && tries < k_max_tries; --q) {
      if (!layers_cover(q)) continue;
      ++tries;
      VllmFlags f = m_flags;
      f.pipeline_parallel_size = q;
      if (auto p = starts(f)) {
        keep({{{"--pipeline-parallel-size", std::to_string(q)}}, {}, tp() * q, "at least one layer per stage", {}},
             std::move(*p), tp() * q);
        return;
      }
    }
  }

  const ModelSpec& m_model;
  const GpuSetup& m_gpus;
  const VllmFlags& m_flags;
  const Prediction& m_failed;
  const PredictFn& m_predict;
  std::vector<FlagChange> m_out;
};

}  // namespace

std::vector<FlagChange> suggest_changes(const ModelSpec& model, const GpuSetup& gpus, const VllmFlags& flags,
                                        const Prediction& failed, const PredictFn& predict, std::size_t limit) {
  if (failed.starts || !failed.failure || limit == 0) return {};
  return Search(model, gpus, flags, failed, predict).run(limit);
}

std::string describe_change(const FlagChange& change, const VllmFlags& flags) {
  std::string out;
  for (const auto& [flag, value] : change.set) {
    if (!out.empty()) out += " ";
    if (std::find(change.removed.begin(), change.removed.end(), flag) != change.removed.end()) {
      out += "drop " + flag;
      if (flag == "--quantization" && flags.quantization) out += " " + *flags.quantization;
      continue;
    }
    out += flag;
    if (!value.empty()) out += " " + util::shell_word(value);
  }
  return out;
}

nlohmann::json changes_document(const std::vector<FlagChange>& changes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : changes) {
    nlohmann::json set = nlohmann::json::object();
    for (const auto& [flag, value] : c.set)
      if (std::find(c.removed.begin(), c.removed.end(), flag) == c.removed.end()) set[flag] = value;
    out.push_back({{"set", set},
                   {"remove", c.removed},
                   {"gpus", c.gpus},
                   {"why", c.why},
                   {"kv_cache_tokens", c.prediction.kv_cache_tokens},
                   {"max_concurrency", c.prediction.max_concurrency}});
  }
  return out;
}

}  // namespace headroom
