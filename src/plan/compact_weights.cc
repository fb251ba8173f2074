#include "plan/compact_weights.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

#include "engine/weights.h"

namespace headroom::plan {

namespace {

// "....experts.17.w1.weight" → "....experts.0.w1.weight".
std::string normalise_expert(std::string name) {
  auto pos = name.find(".experts.");
  if (pos == std::string::npos) return name;
  std::size_t start = pos + 9, end = start;
  while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
  if (end > start) name.replace(start, end - start, "0");
  return name;
}

}  // namespace

WeightsInventory compact_inventory(const ModelSpec& model, const WeightsInventory& inventory, int pipeline_parallel_size) {
  const int pp = std::max(1, pipeline_parallel_size);
  // Stage of each layer as vLLM's get_pp_indices splits them (remainder to the stages before the last).
  std::vector<int> stage_first(static_cast<std::size_t>(std::max(1, model.num_layers)), 0);
  {
    std::vector<int> counts(static_cast<std::size_t>(pp), model.num_layers / pp);
    int remainder = model.num_layers % pp;
    for (int s = pp - 2; remainder > 0 && s >= 0; --s, --remainder) counts[static_cast<std::size_t>(s)]++;
    if (remainder > 0) counts[static_cast<std::size_t>(pp - 1)] += remainder;
    int start = 0;
    for (int c : counts) {
      for (int l = start; l < start + c && l < model.num_layers; ++l) stage_first[static_cast<std::size_t>(l)] = start;
      start += c;
    }
  }
  struct Acc {
    std::size_t order;
    TensorInfo tensor;
    std::int64_t elements = 0;
    bool matrix = false;
  };
  std::map<std::tuple<std::string, std::string, bool>, Acc> merged;
  WeightsInventory out;
  out.file_count = inventory.file_count;
  out.exact = inventory.exact;
  out.total_bytes = inventory.total_bytes;
  for (const auto& t : inventory.tensors) {
    const auto ref = engine::find_layer_number(t.name);
    if (!ref || ref->layer >= model.num_layers) {
      out.tensors.push_back(t);  // embeddings, heads, vision towers, MTP layers: kept as they are
      continue;
    }
    std::string name = t.name;
    name.replace(ref->begin, ref->end - ref->begin, std::to_string(stage_first[static_cast<std::size_t>(ref->layer)]));
    name = normalise_expert(std::move(name));
    std::int64_t elements = 1;
    for (auto d : t.shape) elements *= d;
    const bool matrix = t.shape.size() >= 2;
    auto [it, inserted] = merged.try_emplace({name, t.dtype, matrix}, Acc{merged.size(), {}, 0, matrix});
    Acc& acc = it->second;
    if (inserted) {
      acc.tensor.name = name;
      acc.tensor.dtype = t.dtype;
    }
    acc.tensor.bytes += t.bytes;
    acc.elements += elements;
  }
  std::vector<const Acc*> ordered(merged.size());
  for (const auto& [key, acc] : merged) ordered[acc.order] = &acc;
  for (const Acc* acc : ordered) {
    TensorInfo t = acc->tensor;
    t.shape = acc->matrix ? std::vector<std::int64_t>{acc->elements, 1} : std::vector<std::int64_t>{acc->elements};
    out.tensors.push_back(std::move(t));
  }
  return out;
}

}  // namespace headroom::plan
