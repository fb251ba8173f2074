// Catalogue models and GPUs, and predict() with the test failing on an error, for the engine tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "headroom/gpu.h"
#include "headroom/model.h"
#include "headroom/vllm_engine.h"

namespace headroom::test_support {

inline const VllmVersion k_v019{0, 19, 0};

inline ModelSpec model(const std::string& id) {
  auto m = catalog_model(id);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().to_string());
  return m ? *m : ModelSpec{};
}

inline GpuSetup gpus(const std::string& name, int count = 1) {
  auto g = GpuCatalog::builtin().find(name);
  EXPECT_TRUE(g.has_value()) << (g ? "" : g.error().to_string());
  GpuSetup s;
  if (g) s.gpu = *g;
  s.count = count;
  return s;
}

inline Prediction run(const ModelSpec& m, const GpuSetup& g, const VllmFlags& f, VllmVersion v = k_v019) {
  auto p = predict(m, g, f, v);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().to_string());
  return p ? *p : Prediction{};
}

}  // namespace headroom::test_support
