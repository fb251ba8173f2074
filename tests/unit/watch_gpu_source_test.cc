// The live GPU memory source of `headroom watch` reads the GPUs through the probe (here the NVML
// stand-in library), and reports no GPUs rather than failing where none is present.
#include <gtest/gtest.h>

#include <cstdlib>

#include "headroom/watch.h"

namespace headroom {
namespace {

TEST(WatchGpuSource, ReadsEveryGpuThroughTheProbe) {
  setenv("HEADROOM_NVML_LIBRARY", HEADROOM_FAKE_NVML, 1);
  setenv("HEADROOM_FAKE_NVML_SCENARIO", "eight_gpus", 1);
  auto source = watch::make_probe_gpu_memory_source();
  auto readings = source->read();
  unsetenv("HEADROOM_NVML_LIBRARY");
  ASSERT_TRUE(readings) << readings.error().to_string();
  ASSERT_EQ(readings->size(), 8u);
  for (const auto& r : *readings) {
    EXPECT_GT(r.total_bytes, 0);
    EXPECT_LE(r.used_bytes, r.total_bytes);
  }
}

TEST(WatchGpuSource, NoGpuIsAnEmptyListNotAnError) {
  setenv("HEADROOM_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  setenv("HEADROOM_NVIDIA_SMI", "/nonexistent/nvidia-smi", 1);
  auto readings = watch::make_probe_gpu_memory_source()->read();
  unsetenv("HEADROOM_NVML_LIBRARY");
  unsetenv("HEADROOM_NVIDIA_SMI");
  ASSERT_TRUE(readings) << readings.error().to_string();
  EXPECT_TRUE(readings->empty());
}

}  // namespace
}  // namespace headroom
