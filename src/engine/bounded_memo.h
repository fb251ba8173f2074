// A small thread-safe memo for what the engine derives from a model and its weight plan: searches
// (plan, check's changes, serve) call predict() many times with the same layout, and walking a
// large checkpoint's tensor list costs tens of milliseconds. Bounded: past `limit` entries it starts
// again empty.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "engine/weights.h"
#include "headroom/model.h"

namespace headroom::engine {

template <typename Value>
class BoundedMemo {
 public:
  explicit BoundedMemo(std::size_t limit) : m_limit(limit) {}

  // The value for `key`, computed by `compute()` (outside the lock) the first time.
  template <typename Compute>
  Value get(const std::string& key, Compute&& compute) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (auto it = m_values.find(key); it != m_values.end()) return it->second;
    }
    Value value = compute();
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_values.size() >= m_limit) m_values.clear();
    m_values.emplace(key, value);
    return value;
  }

 private:
  std::size_t m_limit;
  std::mutex m_mutex;
  std::map<std::string, Value> m_values;
};

// What identifies a model's weights under a plan: the model (id, where it was read, its
// inventory's size, its shape and quantization) and every field of the plan.
std::string model_plan_key(const ModelSpec& model, const WeightPlan& plan);

}  // namespace headroom::engine
