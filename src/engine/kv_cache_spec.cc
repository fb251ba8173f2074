#include "headroom/kv_cache_spec.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace headroom {

std::string_view to_string(KvSpecType type) {
  switch (type) {
    case KvSpecType::full_attention: return "full_attention";
    case KvSpecType::sliding_window: return "sliding_window";
    case KvSpecType::chunked_local: return "chunked_local_attention";
    case KvSpecType::mla: return "mla";
    case KvSpecType::mamba: return "mamba";
    case KvSpecType::cross_attention: return "cross_attention";
  }
  return "?";
}

Bytes LayerKvSpec::page_bytes() const {
  if (page_size_padded > 0) return page_size_padded;
  if (type == KvSpecType::mamba) return mamba_state_bytes;
  const int hv = head_size_v > 0 ? head_size_v : head_size;
  // kv_cache_interface.py (vLLM main 2026-08, 001cabc): FullAttentionSpec page = block_size ×
  // heads × (K + V head sizes) × dtype; MLAAttentionSpec stores one latent per token; fp8_ds_mla
  // packs 656 bytes per token (V3.2) and DeepSeek-V4 584 per stored token, block_size /
  // compress_ratio of them per block, padded up to `alignment`.
  const std::int64_t stored = block_size / std::max(1, compress_ratio);
  double per_token = 0;
  if (state_content_bytes > 0) {
    per_token = static_cast<double>(num_kv_heads) * state_content_bytes;
  } else if (quant == KvQuant::nvfp4) {
    // nvfp4_kv_cache_full_dim(d) = d/2 data + d/16 fp8 scales, uint8 elements.
    auto full_dim = [](int d) { return d / 2 + d / 16; };
    per_token = static_cast<double>(num_kv_heads) * (full_dim(head_size) + (latent || type == KvSpecType::mla ? 0 : full_dim(hv)));
  } else if (latent || type == KvSpecType::mla) {
    per_token = static_cast<double>(num_kv_heads) * head_size * element_bytes;
  } else {
    per_token = static_cast<double>(num_kv_heads) * (head_size + hv) * element_bytes;
  }
  Bytes page = static_cast<Bytes>(static_cast<double>(stored) * per_token);
  // AttentionSpec.page_size_bytes: per-token-head scales, 2 fp32 per token and head.
  if (quant == KvQuant::per_token_head) page += 2 * static_cast<Bytes>(block_size) * num_kv_heads * 4;
  if (alignment > 0) page = ceil_div(page, static_cast<Bytes>(alignment)) * alignment;
  return page;
}

Bytes LayerKvSpec::max_memory_usage_bytes(std::int64_t max_model_len, std::int64_t in_flight_tokens,
                                          std::int64_t max_encoder_tokens) const {
  const Bytes page = page_bytes();
  switch (type) {
    case KvSpecType::full_attention:
    case KvSpecType::mla: return ceil_div(max_model_len, block_size) * page;
    case KvSpecType::sliding_window: {
      // SlidingWindowSpec: window − 1 + in-flight tokens, plus one block for misalignment.
      std::int64_t tokens = std::min<std::int64_t>(sliding_window - 1 + in_flight_tokens, max_model_len);
      return (ceil_div(tokens, block_size) + 1) * page;
    }
    case KvSpecType::chunked_local: {
      std::int64_t tokens = std::min<std::int64_t>(attention_chunk_size + in_flight_tokens, max_model_len);
      return ceil_div(tokens, block_size) * page;
    }
    // MambaSpec: one state per request in cache mode "none", two in "align" (prefix caching on).
    case KvSpecType::mamba: return page * std::max(1, mamba_pages_per_request);
    case KvSpecType::cross_attention:
      return ceil_div(std::max(max_encoder_tokens, this->max_encoder_tokens), block_size) * page;
  }
  return 0;
}

bool LayerKvSpec::same_as(const LayerKvSpec& o) const {
  return type == o.type && block_size == o.block_size && num_kv_heads == o.num_kv_heads && head_size == o.head_size &&
         head_size_v == o.head_size_v && element_bytes == o.element_bytes && sliding_window == o.sliding_window &&
         attention_chunk_size == o.attention_chunk_size && mamba_state_bytes == o.mamba_state_bytes &&
         page_size_padded == o.page_size_padded && max_encoder_tokens == o.max_encoder_tokens && quant == o.quant &&
         latent == o.latent && compress_ratio == o.compress_ratio && state_content_bytes == o.state_content_bytes &&
         alignment == o.alignment && mamba_pages_per_request == o.mamba_pages_per_request;
}

KvCacheConfig group_kv_cache_specs(std::vector<LayerKvSpec> layers) {
  KvCacheConfig config;
  if (layers.empty()) return config;
  bool all_same = std::all_of(layers.begin(), layers.end(), [&](const LayerKvSpec& s) { return s.same_as(layers[0]); });
  if (all_same) {
    KvCacheGroup g{layers[0], {}};
    for (int i = 0; i < static_cast<int>(layers.size()); ++i) g.layers.push_back(i);
    config.groups.push_back(g);
    config.group_size = static_cast<int>(layers.size());
    config.page_bytes = layers[0].page_bytes();
    return config;
  }
  bool same_type = std::all_of(layers.begin(), layers.end(), [&](const LayerKvSpec& s) {
    return s.type == layers[0].type && s.block_size == layers[0].block_size &&
           s.sliding_window == layers[0].sliding_window && s.attention_chunk_size == layers[0].attention_chunk_size;
  });
  if (same_type) {
    // UniformTypeKVCacheSpecs: one group, page = Σ layer pages, one block covers every layer.
    KvCacheGroup g{layers[0], {}};
    for (int i = 0; i < static_cast<int>(layers.size()); ++i) {
      g.layers.push_back(i);
      config.uniform_page_sum += layers[i].page_bytes();
    }
    config.groups.push_back(g);
    config.group_size = 1;
    config.uniform_type = true;
    config.page_bytes = config.uniform_page_sum;
    return config;
  }
  // Hybrid: unify page sizes by scaling the block size of smaller-page layers
  // (unify_hybrid_kv_cache_specs), then bucket identical specs.
  Bytes max_page = 0;
  for (const auto& s : layers) max_page = std::max(max_page, s.page_bytes());
  for (auto& s : layers) {
    Bytes p = s.page_bytes();
    if (p == max_page) continue;
    if (s.type == KvSpecType::mamba) {
      s.page_size_padded = max_page;
    } else if (p > 0 && max_page % p == 0) {
      s.block_size = static_cast<int>(s.block_size * (max_page / p));
    } else {
      // unify_hybrid_kv_cache_specs raises NotImplementedError for pages that do not divide.
      config.error = "KV cache page sizes " + std::to_string(p) + " and " + std::to_string(max_page) +
                     " bytes cannot be unified (vLLM raises NotImplementedError for this hybrid layout)";
      return config;
    }
  }
  std::vector<std::pair<LayerKvSpec, std::vector<int>>> buckets;
  for (int i = 0; i < static_cast<int>(layers.size()); ++i) {
    auto it = std::find_if(buckets.begin(), buckets.end(), [&](const auto& b) { return b.first.same_as(layers[i]); });
    if (it == buckets.end()) buckets.push_back({layers[i], {i}});
    else it->second.push_back(i);
  }
  std::size_t min_n = SIZE_MAX, max_n = 0;
  for (const auto& b : buckets) {
    min_n = std::min(min_n, b.second.size());
    max_n = std::max(max_n, b.second.size());
  }
  // kv_cache_utils.py: group_size = min layers per bucket, but max when max < 1.5 × min.
  std::size_t group_size = (static_cast<double>(max_n) < 1.5 * static_cast<double>(min_n)) ? max_n : min_n;
  config.group_size = static_cast<int>(group_size);
  config.page_bytes = max_page;
  for (const auto& [spec, idx] : buckets) {
    std::size_t n_groups = ceil_div(static_cast<std::int64_t>(idx.size()), static_cast<std::int64_t>(group_size));
    for (std::size_t g = 0; g < n_groups; ++g) {
      KvCacheGroup group{spec, {}};
      for (std::size_t k = g; k < idx.size(); k += n_groups) group.layers.push_back(idx[k]);
      config.padding_layers += static_cast<int>(group_size - group.layers.size());
      config.groups.push_back(group);
    }
  }
  return config;
}

namespace {

// Layers per page size of one group, in first-seen order of the sizes.
std::vector<std::pair<Bytes, std::vector<int>>> by_page(const std::vector<LayerKvSpec>& layers, const std::vector<int>& idx) {
  std::vector<std::pair<Bytes, std::vector<int>>> out;
  for (int i : idx) {
    const Bytes p = layers[static_cast<std::size_t>(i)].page_bytes();
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == p; });
    if (it == out.end()) out.push_back({p, {i}});
    else it->second.push_back(i);
  }
  return out;
}

// UniformTypeKVCacheSpecs.get_num_layer_tuples: how many layers share the most common page size.
int most_common_page_count(const std::vector<LayerKvSpec>& layers, const std::vector<int>& idx) {
  std::size_t most = 0;
  for (const auto& [page, members] : by_page(layers, idx)) most = std::max(most, members.size());
  return static_cast<int>(most);
}

// kv_cache_utils.py _approximate_gcd: the chunk size d in [lower_bound, max(values)] that pads the
// values least when each is rounded up to a multiple of d; ties prefer the larger d.
int approximate_gcd(const std::vector<int>& values, int lower_bound) {
  int max_d = 0;
  for (int v : values) max_d = std::max(max_d, v);
  const int min_d = std::max(1, lower_bound);
  if (min_d > max_d) return min_d;
  int best = min_d;
  std::int64_t best_pad = -1;
  for (int d = min_d; d <= max_d; ++d) {
    std::int64_t pad = 0;
    for (int v : values) pad += (d - v % d) % d;
    if (best_pad < 0 || pad < best_pad || (pad == best_pad && d > best)) best_pad = pad, best = d;
  }
  return best;
}

}  // namespace

KvCacheConfig group_layer_tuples(const std::vector<LayerKvSpec>& input, bool dense_packing) {
  KvCacheConfig config;
  config.layer_tuples = true;
  config.group_size = 1;
  if (input.empty()) return config;
  std::vector<LayerKvSpec> layers = input;
  // group_and_unify_kv_cache_specs: every MLA spec in one group; the sliding-window MLA specs
  // (the SWA cache and the compressor states) in one group per (block size, window).
  std::vector<int> mla;
  std::vector<std::pair<std::pair<int, int>, std::vector<int>>> windows;
  for (int i = 0; i < static_cast<int>(layers.size()); ++i) {
    const auto& s = layers[static_cast<std::size_t>(i)];
    if (s.type == KvSpecType::mla) {
      mla.push_back(i);
      continue;
    }
    const std::pair<int, int> key{s.block_size, s.sliding_window};
    auto it = std::find_if(windows.begin(), windows.end(), [&](const auto& w) { return w.first == key; });
    if (it == windows.end()) windows.push_back({key, {i}});
    else it->second.push_back(i);
  }
  // Only sliding-window-only layers (a pipeline stage of them, say): every spec is alike and
  // get_kv_cache_groups takes its ordinary one-group path before the DeepSeek-V4 one.
  if (mla.empty()) return group_kv_cache_specs(input);
  // _get_kv_cache_groups_uniform_groups: the number of layer tuples is chosen over the groups'
  // most common page counts, at least the MLA group's.
  std::vector<int> counts{most_common_page_count(layers, mla)};
  for (const auto& w : windows) counts.push_back(most_common_page_count(layers, w.second));
  const int tuples = approximate_gcd(counts, counts[0]);
  std::vector<Bytes> mla_pages;
  for (const auto& [page, members] : by_page(layers, mla)) mla_pages.push_back(page);
  std::vector<std::vector<int>> groups{mla};
  for (const auto& w : windows) {
    // Before #48993 each sliding-window page is padded to the nearest MLA page size not below it.
    if (!dense_packing) {
      for (int i : w.second) {
        auto& s = layers[static_cast<std::size_t>(i)];
        const Bytes p = s.page_bytes();
        Bytes target = 0;
        for (Bytes m : mla_pages)
          if (m >= p && (target == 0 || m < target)) target = m;
        if (target == 0) {
          config.error = "a DeepSeek-V4 sliding-window page of " + std::to_string(p) +
                         " bytes is larger than every compressed MLA page (vLLM asserts it is not)";
          return config;
        }
        if (target > p) s.page_size_padded = target;
      }
    }
    // Split into sub-groups of at most `tuples` layers per page size, taking tuples round robin.
    auto sizes = by_page(layers, w.second);
    const std::size_t per_size = sizes.front().second.size();
    for (const auto& e : sizes)
      if (e.second.size() != per_size) {
        config.error = "DeepSeek-V4 sliding-window group with unequal layer counts per page size (vLLM asserts they match)";
        return config;
      }
    const std::size_t parts = static_cast<std::size_t>(ceil_div(static_cast<std::int64_t>(per_size), static_cast<std::int64_t>(tuples)));
    for (std::size_t g = 0; g < parts; ++g) {
      std::vector<int> members;
      for (std::size_t t = g; t < per_size; t += parts)
        for (const auto& e : sizes) members.push_back(e.second[t]);
      groups.push_back(members);
    }
  }
  // One block of the shared pool. Dense (#48993): each group's pages laid end to end, the groups
  // overlaid, so the widest group sets the stride. Before: one slot per page size and position,
  // shared across groups, so Σ page × slots.
  if (dense_packing) {
    for (const auto& g : groups) {
      Bytes sum = 0;
      for (int i : g) sum += layers[static_cast<std::size_t>(i)].page_bytes();
      config.page_bytes = std::max(config.page_bytes, sum);
    }
  } else {
    std::vector<std::pair<Bytes, std::size_t>> slots;
    for (const auto& g : groups)
      for (const auto& size : by_page(layers, g)) {
        const Bytes page = size.first;
        auto it = std::find_if(slots.begin(), slots.end(), [&](const auto& e) { return e.first == page; });
        if (it == slots.end()) slots.push_back({page, size.second.size()});
        else it->second = std::max(it->second, size.second.size());
      }
    for (const auto& [page, n] : slots) config.page_bytes += page * static_cast<Bytes>(n);
  }
  // _max_memory_usage_bytes_from_groups: each page a request needs is charged the largest group's
  // tuple count times one tuple of the MLA group's page sizes.
  int most = 0;
  for (const auto& g : groups) most = std::max(most, most_common_page_count(layers, g));
  Bytes tuple_bytes = 0;
  for (Bytes p : mla_pages) tuple_bytes += p;
  config.tuple_check_bytes = static_cast<Bytes>(most) * tuple_bytes;
  for (const auto& g : groups) {
    KvCacheGroup group{layers[static_cast<std::size_t>(g.front())], g};
    for (int i : g) group.page_sum += layers[static_cast<std::size_t>(i)].page_bytes();
    config.groups.push_back(group);
  }
  return config;
}

std::int64_t num_blocks_for(const KvCacheConfig& config, Bytes available) {
  if (config.empty()) return 1;  // attention-free models: only the null block
  if (available <= 0) return 0;
  // Pages of no bytes would mean a dtype of no bytes; the configuration stage refuses those, and
  // a division by zero must not be how a missed case shows.
  auto per = [](Bytes n, Bytes d) -> std::int64_t { return d > 0 ? n / d : 0; };
  if (config.layer_tuples) return per(available, config.page_bytes);
  if (config.uniform_type) return per(available, config.uniform_page_sum);
  return per(per(available, config.page_bytes), config.group_size);
}

std::int64_t group_pages_per_request(const KvCacheGroup& group, std::int64_t max_model_len, std::int64_t in_flight) {
  return ceil_div(group.spec.max_memory_usage_bytes(max_model_len, in_flight), group.spec.page_bytes());
}

namespace {

Bytes need_per_group_sum(const KvCacheConfig& config, std::int64_t max_model_len, std::int64_t in_flight) {
  Bytes sum = 0;
  for (const auto& g : config.groups) sum += g.spec.max_memory_usage_bytes(max_model_len, in_flight);
  return sum;
}

// Layer tuples: all groups draw blocks from one pool; a request needs each group's pages
// (UniformTypeKVCacheSpecs.max_memory_usage_pages).
std::int64_t tuple_pages(const KvCacheConfig& config, std::int64_t max_model_len, std::int64_t in_flight) {
  std::int64_t pages = 0;
  for (const auto& g : config.groups) pages += group_pages_per_request(g, max_model_len, in_flight);
  return pages;
}

// Before #48317: cdiv(Σ_groups pages × the group's page sum, the first (MLA) group's page sum)
// (get_max_concurrency_for_kv_cache_config with UniformTypeKVCacheSpecs groups).
std::int64_t tuple_blocks_pre_v026(const KvCacheConfig& config, std::int64_t max_model_len, std::int64_t in_flight) {
  Bytes need = 0;
  for (const auto& g : config.groups) need += group_pages_per_request(g, max_model_len, in_flight) * g.page_sum;
  return ceil_div(need, std::max<Bytes>(1, config.groups.front().page_sum));
}

}  // namespace

std::int64_t blocks_per_request(const KvCacheConfig& config, std::int64_t max_model_len, std::int64_t in_flight) {
  if (config.empty()) return 0;
  if (config.layer_tuples)
    return config.per_group_rounding ? tuple_pages(config, max_model_len, in_flight)
                                     : tuple_blocks_pre_v026(config, max_model_len, in_flight);
  if (config.uniform_type) return ceil_div(max_model_len, config.groups[0].spec.block_size);
  if (config.per_group_rounding) {
    // kv_cache_utils.py get_max_concurrency_for_kv_cache_config (#48317, v0.26):
    // Σ_groups cdiv(max_memory_usage_bytes, page_size_bytes).
    std::int64_t blocks = 0;
    for (const auto& g : config.groups)
      blocks += ceil_div(g.spec.max_memory_usage_bytes(max_model_len, in_flight), config.page_bytes);
    return blocks;
  }
  return ceil_div(need_per_group_sum(config, max_model_len, in_flight), config.page_bytes);
}

Bytes kv_bytes_needed(const KvCacheConfig& config, std::int64_t max_model_len, std::int64_t in_flight) {
  if (config.empty()) return 0;
  if (config.layer_tuples) return tuple_pages(config, max_model_len, in_flight) * config.tuple_check_bytes;
  if (config.uniform_type) return ceil_div(max_model_len, config.groups[0].spec.block_size) * config.uniform_page_sum;
  // _check_enough_kv_cache_memory: group_size × page × Σ_g ceil(need_g / page).
  Bytes blocks = 0;
  for (const auto& g : config.groups)
    blocks += ceil_div(g.spec.max_memory_usage_bytes(max_model_len, in_flight), config.page_bytes);
  return blocks * config.page_bytes * config.group_size;
}

std::int64_t estimate_max_model_len(const KvCacheConfig& config, Bytes available, std::int64_t upper,
                                    std::int64_t in_flight) {
  std::int64_t lo = 1, hi = upper, best = 0;
  while (lo <= hi) {
    std::int64_t mid = lo + (hi - lo) / 2;
    if (kv_bytes_needed(config, mid, in_flight) <= available) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best;
}

double max_concurrency(const KvCacheConfig& config, std::int64_t num_blocks, std::int64_t max_model_len,
                       std::int64_t in_flight) {
  std::int64_t per_request = blocks_per_request(config, max_model_len, in_flight);
  if (per_request <= 0) return 0;
  return static_cast<double>(num_blocks) / static_cast<double>(per_request);
}

}  // namespace headroom
