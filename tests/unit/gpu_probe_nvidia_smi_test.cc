// The nvidia-smi fallback: the CSV parsers on recorded outputs, and probe_gpus() running the fake
// nvidia-smi script when NVML cannot be loaded.
#include <gtest/gtest.h>

#include <cstdlib>

#include "gpu/gpu_sources.h"
#include "util/json_file.h"

namespace headroom {
namespace {

const std::string k_dir = HEADROOM_TEST_DATA_DIR "/nvidia_smi/";

std::string recorded(const std::string& name) {
  auto text = util::read_file(k_dir + name);
  return text ? *text : "";
}

Result<GpuInventory> probe(const char* scenario) {
  setenv("HEADROOM_FAKE_NVIDIA_SMI_SCENARIO", scenario, 1);
  return probe_gpus(ProbeOptions{"/nonexistent/libnvidia-ml.so.1", k_dir + "fake-nvidia-smi"});
}

TEST(NvidiaSmiParse, OneGpuLine) {
  std::string driver;
  auto gpus = gpu::parse_nvidia_smi_gpus(recorded("one_gpu.gpus.csv"), &driver);
  ASSERT_TRUE(gpus) << gpus.error().to_string();
  ASSERT_EQ(gpus->size(), 1u);
  const LiveGpu& g = (*gpus)[0];
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.uuid, "GPU-6b3f9a2e-1c4d-4e8f-9a7b-000000000000");
  EXPECT_EQ(g.total_bytes, 81559 * k_mib);
  EXPECT_EQ(g.used_bytes, 3178 * k_mib);
  EXPECT_EQ(g.free_bytes, 77912 * k_mib);
  EXPECT_EQ(g.utilization_percent, 37);
  EXPECT_EQ(driver, "550.54.15");
}

TEST(NvidiaSmiParse, EightGpusWithBlankLinesTrailingSpacesAndNotAvailable) {
  auto gpus = gpu::parse_nvidia_smi_gpus(recorded("eight_gpus.gpus.csv"), nullptr);
  ASSERT_TRUE(gpus) << gpus.error().to_string();
  ASSERT_EQ(gpus->size(), 8u);
  EXPECT_EQ((*gpus)[7].index, 7);
  EXPECT_EQ((*gpus)[3].utilization_percent, 98);
  EXPECT_EQ((*gpus)[5].utilization_percent, -1);  // [N/A]
}

TEST(NvidiaSmiParse, ProcessesGoToTheGpuWithTheirUuid) {
  auto gpus = gpu::parse_nvidia_smi_gpus(recorded("eight_gpus.gpus.csv"), nullptr);
  ASSERT_TRUE(gpus);
  ASSERT_TRUE(gpu::parse_nvidia_smi_apps(recorded("eight_gpus.apps.csv"), *gpus));
  ASSERT_EQ((*gpus)[3].processes.size(), 1u);
  EXPECT_EQ((*gpus)[3].processes[0].used_bytes, 73728 * k_mib);
  ASSERT_EQ((*gpus)[5].processes.size(), 2u);
  EXPECT_EQ((*gpus)[5].processes[1].name, "/usr/local/bin/ollama");
  EXPECT_FALSE((*gpus)[5].processes[1].used_bytes_known);  // [N/A]
  EXPECT_TRUE((*gpus)[0].processes.empty());
}

TEST(NvidiaSmiParse, CrlfAndNotSupportedFields) {
  auto gpus = gpu::parse_nvidia_smi_gpus(recorded("messy.gpus.csv"), nullptr);
  ASSERT_TRUE(gpus) << gpus.error().to_string();
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ((*gpus)[0].utilization_percent, -1);
  ASSERT_TRUE(gpu::parse_nvidia_smi_apps(recorded("messy.apps.csv"), *gpus));
  ASSERT_EQ((*gpus)[0].processes.size(), 1u);
  EXPECT_EQ((*gpus)[0].processes[0].name, "");  // [Insufficient Permissions]
}

TEST(NvidiaSmiParse, NameWithACommaSurvives) {
  auto gpus = gpu::parse_nvidia_smi_gpus("0, Odd, Name, GPU-1, 100, 10, 90, 5, 550.1\n", nullptr);
  ASSERT_TRUE(gpus);
  EXPECT_EQ((*gpus)[0].name, "Odd, Name");
  EXPECT_EQ((*gpus)[0].uuid, "GPU-1");
}

TEST(NvidiaSmiParse, GarbageNumberNamesTheLineAndField) {
  auto gpus = gpu::parse_nvidia_smi_gpus(recorded("garbage.gpus.csv"), nullptr);
  ASSERT_FALSE(gpus);
  EXPECT_EQ(gpus.error().to_string(), "nvidia-smi output line 1: expected a number for memory.total, got 'lots'");
}

TEST(NvidiaSmiParse, TooFewFieldsIsAnError) {
  auto gpus = gpu::parse_nvidia_smi_gpus("\n0, H100, GPU-1\n", nullptr);
  ASSERT_FALSE(gpus);
  EXPECT_EQ(gpus.error().where, "nvidia-smi output line 2");
}

TEST(NvidiaSmiProbe, FallsBackWhenNvmlCannotBeLoaded) {
  auto inv = probe("one_gpu");
  ASSERT_TRUE(inv) << inv.error().message;
  EXPECT_EQ(inv->source, "nvidia-smi");
  EXPECT_EQ(inv->driver_version, "550.54.15");
  ASSERT_EQ(inv->gpus.size(), 1u);
  ASSERT_EQ(inv->gpus[0].processes.size(), 1u);
  EXPECT_EQ(inv->gpus[0].processes[0].pid, 4242u);
  ASSERT_EQ(inv->warnings.size(), 1u);
  EXPECT_EQ(inv->warnings[0],
            "NVML could not be loaded (/nonexistent/libnvidia-ml.so.1: cannot open shared object file: No such "
            "file or directory); the GPUs were read with nvidia-smi, which does not report reserved memory");
}

TEST(NvidiaSmiProbe, CatalogueGivesTheCudaTotal) {
  auto inv = probe("one_gpu");
  ASSERT_TRUE(inv);
  EXPECT_EQ(inv->gpus[0].cuda_total_bytes, from_gib(79.19));
}

TEST(NvidiaSmiProbe, DriverNotLoadedIsExplained) {
  auto inv = probe("driver_not_loaded");
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().code, ErrorCode::unavailable);
  EXPECT_EQ(inv.error().message,
            "the NVIDIA kernel driver is not loaded (" + k_dir +
                "fake-nvidia-smi: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                "Make sure that the latest NVIDIA driver is installed and running.); load it with 'sudo modprobe "
                "nvidia' and check that 'nvidia-smi' works");
}

TEST(NvidiaSmiProbe, NoDevicesIsNoGpuFound) {
  auto inv = probe("no_devices");
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().message, "no NVIDIA GPU found: " + k_dir + "fake-nvidia-smi says 'No devices were found'");
}

TEST(NvidiaSmiProbe, RefusedProcessListMarksProcessesUnknown) {
  auto inv = probe("apps_denied");
  ASSERT_TRUE(inv);
  EXPECT_FALSE(inv->gpus[0].processes_known);
  ASSERT_EQ(inv->warnings.size(), 2u);
  EXPECT_EQ(inv->warnings[1], "the processes on the GPUs could not be listed (" + k_dir +
                                  "fake-nvidia-smi failed with exit status 4: Failed to get the process list: "
                                  "Insufficient Permissions); they are shown as unknown");
}

}  // namespace
}  // namespace headroom
