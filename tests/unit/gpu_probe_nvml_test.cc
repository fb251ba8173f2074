// probe_gpus() through the real dlopen path, against the scripted NVML stand-in library.
#include <gtest/gtest.h>

#include <cstdlib>

#include "headroom/gpu_probe.h"

namespace headroom {
namespace {

constexpr const char* k_no_smi = "/nonexistent/nvidia-smi";

Result<GpuInventory> probe(const char* scenario, const char* library = HEADROOM_FAKE_NVML) {
  setenv("HEADROOM_FAKE_NVML_SCENARIO", scenario, 1);
  return probe_gpus(ProbeOptions{library, k_no_smi});
}

TEST(NvmlProbe, OneGpuReportsMemoryUtilizationAndDriver) {
  auto inv = probe("one_gpu");
  ASSERT_TRUE(inv) << inv.error().message;
  EXPECT_EQ(inv->source, "nvml");
  EXPECT_EQ(inv->driver_version, "550.54.15");
  EXPECT_TRUE(inv->warnings.empty());
  ASSERT_EQ(inv->gpus.size(), 1u);
  const LiveGpu& g = inv->gpus[0];
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.uuid, "GPU-6b3f9a2e-1c4d-4e8f-9a7b-000000000000");
  EXPECT_EQ(g.total_bytes, 81559 * k_mib);
  ASSERT_TRUE(g.reserved_bytes);
  EXPECT_EQ(*g.reserved_bytes, 468 * k_mib);
  EXPECT_EQ(g.used_bytes, 3328599654 + 4 * k_mib);
  EXPECT_EQ(g.free_bytes, 81559 * k_mib - 468 * k_mib - g.used_bytes);
  EXPECT_EQ(g.utilization_percent, 37);
  EXPECT_FALSE(g.is_mig);
}

TEST(NvmlProbe, OneGpuListsItsProcessWithNameAndMemory) {
  auto inv = probe("one_gpu");
  ASSERT_TRUE(inv);
  const LiveGpu& g = inv->gpus[0];
  EXPECT_TRUE(g.processes_known);
  ASSERT_EQ(g.processes.size(), 1u);
  EXPECT_EQ(g.processes[0].pid, 4242u);
  EXPECT_EQ(g.processes[0].name, "/usr/bin/python3");
  EXPECT_EQ(g.processes[0].used_bytes, 3328599654);
}

TEST(NvmlProbe, KnownGpuTakesTheCatalogueCudaTotal) {
  auto inv = probe("one_gpu");
  ASSERT_TRUE(inv);
  const LiveGpu& g = inv->gpus[0];
  ASSERT_TRUE(g.catalog_match);
  EXPECT_EQ(g.catalog_match->key, "h100-sxm-80gb");
  EXPECT_EQ(g.cuda_total_bytes, from_gib(79.19));
  EXPECT_EQ(g.cuda_total_source, "catalogue (h100-sxm-80gb)");
}

TEST(NvmlProbe, EightGpusAreListedInIndexOrderWithTheirProcesses) {
  auto inv = probe("eight_gpus");
  ASSERT_TRUE(inv);
  ASSERT_EQ(inv->gpus.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(inv->gpus[i].index, i);
  EXPECT_EQ(inv->gpus[7].uuid, "GPU-6b3f9a2e-1c4d-4e8f-9a7b-000000000007");
  ASSERT_EQ(inv->gpus[3].processes.size(), 1u);
  EXPECT_EQ(inv->gpus[3].processes[0].pid, 5001u);
  ASSERT_EQ(inv->gpus[5].processes.size(), 2u);
  EXPECT_EQ(inv->gpus[5].processes[1].name, "/usr/local/bin/ollama");
  EXPECT_TRUE(inv->gpus[0].processes.empty());
}

TEST(NvmlProbe, MigDevicesFollowTheirParent) {
  auto inv = probe("mig");
  ASSERT_TRUE(inv) << inv.error().message;
  ASSERT_EQ(inv->gpus.size(), 4u);
  EXPECT_TRUE(inv->gpus[0].mig_enabled);
  EXPECT_FALSE(inv->gpus[0].is_mig);
  const LiveGpu& big = inv->gpus[1];
  EXPECT_TRUE(big.is_mig);
  EXPECT_EQ(big.parent_index, 0);
  EXPECT_EQ(big.index, 0);
  EXPECT_EQ(big.label(), "GPU 0 MIG 0");
  EXPECT_EQ(big.name, "NVIDIA A100-SXM4-80GB MIG 3g.40gb");
  EXPECT_EQ(big.uuid, "MIG-11111111-2222-4333-8444-555555555555");
  EXPECT_EQ(inv->gpus[2].label(), "GPU 0 MIG 2");  // slot 1 is empty
  EXPECT_EQ(inv->gpus[3].label(), "GPU 1");
  EXPECT_FALSE(inv->gpus[3].mig_enabled);
}

TEST(NvmlProbe, MigDeviceHasNoCatalogueRowAndUnknownUtilization) {
  auto inv = probe("mig");
  ASSERT_TRUE(inv);
  const LiveGpu& big = inv->gpus[1];
  EXPECT_FALSE(big.catalog_match);
  EXPECT_EQ(big.utilization_percent, -1);
  EXPECT_EQ(big.total_bytes, 40192 * k_mib);
  // The fake refuses nvmlDeviceGetMemoryInfo_v2 on MIG devices: no reserve is known.
  EXPECT_FALSE(big.reserved_bytes);
  EXPECT_EQ(big.cuda_total_bytes, 40192 * k_mib - typical_driver_reserve(40192 * k_mib));
  EXPECT_EQ(big.cuda_total_source, "NVML total - typical driver reserve");
  ASSERT_EQ(big.processes.size(), 1u);
  EXPECT_EQ(big.processes[0].pid, 6001u);
}

TEST(NvmlProbe, UsableGpusSkipMigParents) {
  auto inv = probe("mig");
  ASSERT_TRUE(inv);
  auto usable = usable_gpus(*inv);
  ASSERT_EQ(usable.size(), 3u);
  EXPECT_EQ(usable[0]->label(), "GPU 0 MIG 0");
  EXPECT_EQ(usable[1]->label(), "GPU 0 MIG 2");
  EXPECT_EQ(usable[2]->label(), "GPU 1");
}

TEST(NvmlProbe, VersionMismatchIsExplained) {
  auto inv = probe("version_mismatch");
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().code, ErrorCode::unavailable);
  EXPECT_EQ(inv.error().message,
            "the NVIDIA kernel driver and libnvidia-ml.so.1 come from different driver versions (NVML error 18: "
            "Driver/library version mismatch), usually after a driver upgrade without a reboot; reboot, or "
            "reinstall the driver so that both match");
}

TEST(NvmlProbe, DriverNotLoadedSaysHowToLoadIt) {
  auto inv = probe("driver_not_loaded");
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().message,
            "the NVIDIA kernel driver is not loaded (NVML error 9: Driver Not Loaded); load it with 'sudo "
            "modprobe nvidia' and check that 'nvidia-smi' works");
}

TEST(NvmlProbe, NvmlErrorIsReportedWithItsCode) {
  auto inv = probe("nvml_error");
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().message,
            "NVML could not count the GPUs (NVML error 999: Unknown Error); check that 'nvidia-smi' works");
}

TEST(NvmlProbe, LostGpuIsLeftOutWithAWarning) {
  auto inv = probe("gpu_lost");
  ASSERT_TRUE(inv);
  ASSERT_EQ(inv->gpus.size(), 1u);
  EXPECT_EQ(inv->gpus[0].index, 0);
  ASSERT_EQ(inv->warnings.size(), 1u);
  EXPECT_EQ(inv->warnings[0],
            "GPU 1 has fallen off the bus (NVML error 15: GPU is lost); check 'dmesg' for Xid 79 errors, then "
            "reset the GPU or reboot; it is left out");
}

TEST(NvmlProbe, OnlyGpuLostIsAnError) {
  auto inv = probe("all_lost");
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().code, ErrorCode::unavailable);
  EXPECT_EQ(inv.error().message,
            "GPU 0 has fallen off the bus (NVML error 15: GPU is lost); check 'dmesg' for Xid 79 errors, then "
            "reset the GPU or reboot");
}

TEST(NvmlProbe, ProcessListPermissionDeniedMarksProcessesUnknown) {
  auto inv = probe("no_permission");
  ASSERT_TRUE(inv);
  EXPECT_FALSE(inv->gpus[0].processes_known);
  EXPECT_TRUE(inv->gpus[0].processes.empty());
  ASSERT_EQ(inv->warnings.size(), 1u);
  EXPECT_EQ(inv->warnings[0],
            "no permission to list the processes on GPU 0 (NVML: Insufficient Permissions); they are shown as "
            "unknown. Run headroom as root, or on the host rather than in a container, to see them");
}

TEST(NvmlProbe, NoDevicesIsNoGpuFound) {
  auto inv = probe("no_devices");
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().code, ErrorCode::unavailable);
  EXPECT_EQ(inv.error().message, "no NVIDIA GPU found: NVML reports 0 GPUs");
}

TEST(NvmlProbe, OldDriverLibraryUsesTheUnversionedCalls) {
  auto inv = probe("one_gpu", HEADROOM_FAKE_NVML_OLD);
  ASSERT_TRUE(inv) << inv.error().message;
  const LiveGpu& g = inv->gpus[0];
  EXPECT_FALSE(g.reserved_bytes);
  // The old call counts the reserve as used.
  EXPECT_EQ(g.used_bytes, 3328599654 + 4 * k_mib + 468 * k_mib);
  ASSERT_EQ(g.processes.size(), 1u);
  EXPECT_EQ(g.processes[0].pid, 4242u);
  EXPECT_EQ(g.processes[0].used_bytes, 3328599654);
}

TEST(NvmlProbe, LibraryPathComesFromTheEnvironment) {
  setenv("HEADROOM_FAKE_NVML_SCENARIO", "eight_gpus", 1);
  setenv("HEADROOM_NVML_LIBRARY", HEADROOM_FAKE_NVML, 1);
  setenv("HEADROOM_NVIDIA_SMI", k_no_smi, 1);
  auto inv = probe_gpus();
  unsetenv("HEADROOM_NVML_LIBRARY");
  unsetenv("HEADROOM_NVIDIA_SMI");
  ASSERT_TRUE(inv) << inv.error().message;
  EXPECT_EQ(inv->gpus.size(), 8u);
}

TEST(NvmlProbe, NeitherNvmlNorNvidiaSmiIsNoGpuFound) {
  auto inv = probe_gpus(ProbeOptions{"/nonexistent/libnvidia-ml.so.1", k_no_smi});
  ASSERT_FALSE(inv);
  EXPECT_EQ(inv.error().code, ErrorCode::unavailable);
  EXPECT_EQ(inv.error().message,
            "no NVIDIA GPU found: NVML could not be loaded (/nonexistent/libnvidia-ml.so.1: cannot open shared "
            "object file: No such file or directory) and '/nonexistent/nvidia-smi' was not found");
}

}  // namespace
}  // namespace headroom
