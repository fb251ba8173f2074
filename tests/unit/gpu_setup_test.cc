// gpu_setup_from_inventory(): the GpuSetup that check and plan take from live GPUs.
#include <gtest/gtest.h>

#include "headroom/gpu_probe.h"
#include "headroom/gpu_setup.h"

namespace headroom {
namespace {

LiveGpu gpu(int index, const std::string& name, Bytes total, Bytes used) {
  LiveGpu g;
  g.index = index;
  g.name = name;
  g.total_bytes = total;
  g.used_bytes = used;
  g.reserved_bytes = 468 * k_mib;
  g.free_bytes = total - *g.reserved_bytes - used;
  g.cuda_total_bytes = total - *g.reserved_bytes;
  return g;
}

GpuInventory two_h100() {
  GpuInventory inv;
  inv.source = "nvml";
  inv.gpus = {gpu(0, "NVIDIA H100 80GB HBM3", 81559 * k_mib, 0), gpu(1, "NVIDIA H100 80GB HBM3", 81559 * k_mib, 0)};
  inv.gpus[0].catalog_match = GpuCatalog::builtin().find("h100-sxm-80gb").value();
  inv.gpus[1].catalog_match = inv.gpus[0].catalog_match;
  return inv;
}

TEST(GpuSetupFromInventory, UsesTheCatalogueSpecWithTheLiveCudaTotal) {
  auto inv = two_h100();
  inv.gpus[0].cuda_total_bytes = inv.gpus[1].cuda_total_bytes = from_gib(79.19);
  auto setup = gpu_setup_from_inventory(inv, 2);
  ASSERT_TRUE(setup) << setup.error().message;
  EXPECT_EQ(setup->gpu.key, "h100-sxm-80gb");
  EXPECT_EQ(setup->gpu.total_bytes, from_gib(79.19));
  EXPECT_EQ(*setup->gpu.nvml_total_bytes, 81559 * k_mib);
  EXPECT_EQ(setup->count, 2);
}

TEST(GpuSetupFromInventory, FreeIsTheSmallestAmongTheGpusUsed) {
  auto inv = two_h100();
  inv.gpus[1] = gpu(1, "NVIDIA H100 80GB HBM3", 81559 * k_mib, 10 * k_gib);
  auto one = gpu_setup_from_inventory(inv, 1);
  auto two = gpu_setup_from_inventory(inv, 2);
  ASSERT_TRUE(one && two);
  EXPECT_EQ(*one->free_bytes, inv.gpus[0].free_bytes);
  EXPECT_EQ(*two->free_bytes, inv.gpus[1].free_bytes);
}

TEST(GpuSetupFromInventory, ListsEveryProcessHoldingMemory) {
  auto inv = two_h100();
  inv.gpus[0].processes = {{4242, "/usr/bin/python3", 3328599654, true}, {77, "idle", 0, true}};
  inv.gpus[1].processes = {{5003, "", 0, false}};
  auto setup = gpu_setup_from_inventory(inv, 2);
  ASSERT_TRUE(setup);
  ASSERT_EQ(setup->memory_holders.size(), 2u);
  EXPECT_EQ(setup->memory_holders[0], "PID 4242 python3 holds 3.10 GiB on GPU 0");
  EXPECT_EQ(setup->memory_holders[1], "PID 5003 holds memory on GPU 1 (amount unknown)");
}

TEST(GpuSetupFromInventory, UnlistedProcessesAreStillMentioned) {
  auto inv = two_h100();
  inv.gpus[0] = gpu(0, "NVIDIA H100 80GB HBM3", 81559 * k_mib, 2 * k_gib);
  inv.gpus[0].processes_known = false;
  auto setup = gpu_setup_from_inventory(inv, 1);
  ASSERT_TRUE(setup);
  ASSERT_EQ(setup->memory_holders.size(), 1u);
  EXPECT_EQ(setup->memory_holders[0], "2.00 GiB is in use on GPU 0 by processes headroom may not list");
}

TEST(GpuSetupFromInventory, MoreGpusThanPresentIsInvalid) {
  auto setup = gpu_setup_from_inventory(two_h100(), 4);
  ASSERT_FALSE(setup);
  EXPECT_EQ(setup.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(setup.error().message,
            "4 GPUs are needed but this host has 2 (GPU 0 NVIDIA H100 80GB HBM3, GPU 1 NVIDIA H100 80GB HBM3)");
}

TEST(GpuSetupFromInventory, ZeroGpusIsInvalid) {
  auto setup = gpu_setup_from_inventory(two_h100(), 0);
  ASSERT_FALSE(setup);
  EXPECT_EQ(setup.error().message, "expected at least 1 GPU, got 0");
}

TEST(GpuSetupFromInventory, MixedModelsPlanWithTheSmallestAndWarn) {
  GpuInventory inv;
  inv.gpus = {gpu(0, "NVIDIA H100 80GB HBM3", 81559 * k_mib, 0), gpu(1, "NVIDIA L4", 23034 * k_mib, 0)};
  std::vector<std::string> warnings;
  auto setup = gpu_setup_from_inventory(inv, 2, &warnings);
  ASSERT_TRUE(setup);
  EXPECT_EQ(setup->gpu.name, "NVIDIA L4");
  EXPECT_EQ(setup->gpu.key, "live");
  EXPECT_EQ(setup->gpu.total_bytes, inv.gpus[1].cuda_total_bytes);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "the GPUs used are different models (GPU 0 NVIDIA H100 80GB HBM3, GPU 1 NVIDIA L4); planning with the "
            "smallest, GPU 1 NVIDIA L4");
}

TEST(GpuSetupFromInventory, SameModelGivesNoWarning) {
  std::vector<std::string> warnings;
  ASSERT_TRUE(gpu_setup_from_inventory(two_h100(), 2, &warnings));
  EXPECT_TRUE(warnings.empty());
}

TEST(GpuSetupFromInventory, MigParentIsNotUsableButItsDevicesAre) {
  GpuInventory inv;
  inv.gpus = {gpu(0, "NVIDIA A100-SXM4-80GB", 81920 * k_mib, 0), gpu(0, "NVIDIA A100-SXM4-80GB MIG 3g.40gb", 40192 * k_mib, 0)};
  inv.gpus[0].mig_enabled = true;
  inv.gpus[1].is_mig = true;
  inv.gpus[1].parent_index = 0;
  auto setup = gpu_setup_from_inventory(inv, 1);
  ASSERT_TRUE(setup);
  EXPECT_EQ(setup->gpu.name, "NVIDIA A100-SXM4-80GB MIG 3g.40gb");
  EXPECT_FALSE(gpu_setup_from_inventory(inv, 2));
}

TEST(CudaFreeBytes, IsNvmlFreeCappedByTheCudaTotal) {
  LiveGpu g = gpu(0, "x", 1000 * k_mib, 0);
  EXPECT_EQ(cuda_free_bytes(g), g.free_bytes);
  g.cuda_total_bytes = 100 * k_mib;
  EXPECT_EQ(cuda_free_bytes(g), 100 * k_mib);
}

// The API resolves its targets through the same code with the request's member names: an answer
// names "used_gib", not the CLI's --used-gib.
TEST(ResolveGpuSetup, NamesTheFieldsAsTheCallerSpellsThem) {
  TargetRequest t;
  t.gpu = "H100";
  t.used_gib = 10.0;
  std::vector<std::string> warnings;
  auto cli = resolve_gpu_setup(t, 1, warnings);
  ASSERT_TRUE(cli) << cli.error().to_string();
  ASSERT_EQ(cli->memory_holders.size(), 1u);
  EXPECT_EQ(cli->memory_holders[0], "other processes hold 10.0 GiB on each GPU (--used-gib)");
  auto api = resolve_gpu_setup(t, 1, warnings, TargetFieldNames::json());
  ASSERT_TRUE(api) << api.error().to_string();
  EXPECT_EQ(api->memory_holders[0], "other processes hold 10.0 GiB on each GPU (\"used_gib\")");

  t.gpu = "2xH100";
  t.gpus = 3;
  auto mismatch = resolve_gpu_setup(t, 1, warnings, TargetFieldNames::json());
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().to_string(), "gpu: '2xH100' means 2 GPUs but \"gpus\" says 3: give the count once");
  t.gpu = "H100";
  t.gpus = 0;
  t.used_gib = 1000.0;
  auto too_much = resolve_gpu_setup(t, 1, warnings, TargetFieldNames::json());
  ASSERT_FALSE(too_much);
  EXPECT_EQ(too_much.error().where, "used_gib");
}

}  // namespace
}  // namespace headroom
