#include <gtest/gtest.h>

#include "headroom/gpu.h"
#include "util/embedded_data.h"

namespace headroom {
namespace {

const GpuCatalog& catalog() { return GpuCatalog::builtin(); }

std::string key_of(std::string_view name) {
  auto spec = catalog().find(name);
  return spec ? spec->key : "error: " + spec.error().message;
}

TEST(GpuCatalog, BuiltinParsesEveryRow) {
  auto text = embedded::find("gpus.jsonl");
  ASSERT_TRUE(text);
  auto parsed = GpuCatalog::from_jsonl(*text, "gpus.jsonl");
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  EXPECT_EQ(parsed->all().size(), 81u);
  EXPECT_EQ(catalog().all().size(), 81u);
}

TEST(GpuCatalog, EveryRowHasAPositiveCudaTotalBelowTheNvmlTotal) {
  for (const auto& gpu : catalog().all()) {
    EXPECT_GT(gpu.total_bytes, 0) << gpu.key;
    if (gpu.nvml_total_bytes) {
      EXPECT_LE(gpu.total_bytes, *gpu.nvml_total_bytes) << gpu.key;
    }
  }
}

TEST(GpuCatalog, TotalIsTheCudaTotalNotTheNvidiaSmiTotal) {
  auto h100 = catalog().find("h100-sxm-80gb");
  ASSERT_TRUE(h100);
  EXPECT_EQ(h100->total_bytes, from_gib(79.19));
  ASSERT_TRUE(h100->nvml_total_bytes);
  EXPECT_EQ(*h100->nvml_total_bytes, 81559 * k_mib);
}

// The GPUs of people's own machines in the calibration runs and failure reports.
TEST(GpuCatalog, ConsumerEdgeAndRadeonCardsAreCatalogued) {
  EXPECT_EQ(key_of("RTX 4090 D"), "rtx-4090-d");
  EXPECT_EQ(key_of("NVIDIA GeForce RTX 5070 Ti"), "rtx-5070-ti");
  EXPECT_EQ(key_of("A10"), "a10");
  EXPECT_EQ(key_of("Tesla P40"), "tesla-p40");
  EXPECT_EQ(key_of("Jetson AGX Orin"), "jetson-agx-orin-64gb");
  EXPECT_EQ(key_of("RX 7900 XTX"), "rx-7900-xtx");
  EXPECT_EQ(key_of("AMD Radeon RX 9070 XT"), "rx-9070-xt");
  EXPECT_EQ(key_of("Strix Halo"), "radeon-8060s");
}

// The RTX 4090 D prints its own NVML name; it is not taken for the RTX 4090.
TEST(GpuCatalog, Rtx4090DIsNotTheRtx4090) {
  auto d = catalog().match_live("NVIDIA GeForce RTX 4090 D", 24564 * k_mib);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->key, "rtx-4090-d");
  EXPECT_EQ(d->architecture, "Ada");
}

// torch names every Jetson Orin module 'Orin'; the memory tells the 32 GB module from the 64 GB one,
// and both share their memory with the CPU.
TEST(GpuCatalog, JetsonOrinModulesAreToldApartByMemoryAndAreUnified) {
  auto small = catalog().find("jetson-agx-orin-32gb");
  auto big = catalog().find("jetson-agx-orin-64gb");
  ASSERT_TRUE(small && big);
  EXPECT_TRUE(small->unified_memory);
  EXPECT_TRUE(big->unified_memory);
  EXPECT_EQ(small->total_bytes, from_gib(29.9));  // _CudaDeviceProperties(name='Orin', total_memory=30622MB)
  EXPECT_TRUE(catalog().find("gb10")->unified_memory);
  EXPECT_FALSE(catalog().find("rtx-4090")->unified_memory);
}

// ROCm reports gfx targets; the Radeon totals are torch's total_memory prints.
TEST(GpuCatalog, RadeonCardsCarryTheirGfxTargetAndTorchTotal) {
  auto xtx = catalog().find("rx-7900-xtx");
  ASSERT_TRUE(xtx);
  EXPECT_EQ(xtx->vendor, "AMD");
  EXPECT_EQ(xtx->compute_capability, "gfx1100");
  EXPECT_EQ(xtx->total_bytes, from_gib(23.98));  // total_memory=24560MB
  auto rdna4 = catalog().find("rx-9070-xt");
  ASSERT_TRUE(rdna4);
  EXPECT_EQ(rdna4->compute_capability, "gfx1201");
  EXPECT_EQ(rdna4->total_bytes, from_gib(15.92));  // total_memory=16304MB
}

TEST(GpuCatalog, MissingCudaTotalIsNvidiaSmiTotalMinusTypicalReserve) {
  auto h200nvl = catalog().find("h200-nvl-141gb");
  ASSERT_TRUE(h200nvl);
  EXPECT_EQ(h200nvl->total_bytes, 143771 * k_mib - typical_driver_reserve(143771 * k_mib));
}

TEST(GpuCatalog, RowWithoutAnyTotalTakesTheSiblingBoard) {
  // L40 has neither total; L40S is the same 48 GB Ada board.
  EXPECT_EQ(catalog().find("L40")->total_bytes, catalog().find("L40S")->total_bytes);
}

TEST(GpuCatalog, TypicalReserveFollowsTheObservedGaps) {
  EXPECT_EQ(typical_driver_reserve(24564 * k_mib), 436 * k_mib);  // RTX 4090: 357-430 MiB observed
  EXPECT_EQ(typical_driver_reserve(81559 * k_mib), 568 * k_mib);  // H100: 468-550 MiB observed
}

TEST(GpuCatalog, FindsByKeyAliasAndNvmlName) {
  EXPECT_EQ(key_of("h100-sxm-80gb"), "h100-sxm-80gb");
  EXPECT_EQ(key_of("H100 80GB"), "h100-sxm-80gb");
  EXPECT_EQ(key_of("NVIDIA H100 80GB HBM3"), "h100-sxm-80gb");
  EXPECT_EQ(key_of("NVIDIA GeForce RTX 4090"), "rtx-4090");
}

TEST(GpuCatalog, FindIgnoresCaseSpacesDashesAndUnderscores) {
  EXPECT_EQ(key_of("rtx4090"), "rtx-4090");
  EXPECT_EQ(key_of("RTX_4090"), "rtx-4090");
  EXPECT_EQ(key_of("h100 PCIE"), "h100-pcie-80gb");
}

TEST(GpuCatalog, FindTreatsGbAndGAlike) {
  EXPECT_EQ(key_of("A100-80GB"), "a100-sxm4-80gb");
  EXPECT_EQ(key_of("h100-80gb"), "h100-sxm-80gb");
}

TEST(GpuCatalog, FindAcceptsVendorWordsAddedOrLeftOut) {
  EXPECT_EQ(key_of("GeForce RTX 4090"), "rtx-4090");
  EXPECT_EQ(key_of("NVIDIA L4"), "l4");
  EXPECT_EQ(key_of("Tesla T4"), "t4");
  EXPECT_EQ(key_of("4090"), "rtx-4090");
}

TEST(GpuCatalog, ShortNamesResolveToTheDocumentedRow) {
  EXPECT_EQ(key_of("H100"), "h100-sxm-80gb");
  EXPECT_EQ(key_of("A100"), "a100-sxm4-40gb");
  EXPECT_EQ(key_of("H200"), "h200-sxm-141gb");
}

TEST(GpuCatalog, AliasBeatsASharedNvmlName) {
  EXPECT_EQ(key_of("RTX 3080 12GB"), "rtx-3080-12gb");
  // Both 3080 rows carry this NVML name; the first row wins.
  EXPECT_EQ(key_of("NVIDIA GeForce RTX 3080"), "rtx-3080-10gb");
}

TEST(GpuCatalog, UnknownNameSuggestsCloseOnes) {
  auto r = catalog().find("H1000");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::not_found);
  EXPECT_EQ(r.error().message,
            "unknown GPU 'H1000'; did you mean H100, V100 or V100S? ('headroom gpus --catalog' lists the known "
            "GPUs; --gpu-memory-gib sets any size)");
}

TEST(GpuCatalog, MatchLiveTellsSharedNamesApartByMemory) {
  auto ten = catalog().match_live("NVIDIA GeForce RTX 3080", 10240 * k_mib);
  auto twelve = catalog().match_live("NVIDIA GeForce RTX 3080", 12288 * k_mib);
  ASSERT_TRUE(ten && twelve);
  EXPECT_EQ(ten->key, "rtx-3080-10gb");
  EXPECT_EQ(twelve->key, "rtx-3080-12gb");
}

TEST(GpuCatalog, MatchLiveRejectsAnotherSkuUnderTheSameName) {
  // The 6 GB RTX 2060 shares its name with the catalogue's 12 GB row (NVML reports 12288 MiB for
  // it, 6144 MiB for the 6 GB card); the 8 GB RTX 5060 Ti likewise with the 16 GB row.
  EXPECT_FALSE(catalog().match_live("NVIDIA GeForce RTX 2060", 6144 * k_mib));
  EXPECT_TRUE(catalog().match_live("NVIDIA GeForce RTX 2060", 12288 * k_mib));
  EXPECT_FALSE(catalog().match_live("NVIDIA GeForce RTX 5060 Ti", 8151 * k_mib));
  // Both RTX 4060 Ti cards are catalogued, each found by its memory.
  auto eight = catalog().match_live("NVIDIA GeForce RTX 4060 Ti", 8188 * k_mib);
  auto sixteen = catalog().match_live("NVIDIA GeForce RTX 4060 Ti", 16380 * k_mib);
  ASSERT_TRUE(eight && sixteen);
  EXPECT_EQ(eight->key, "rtx-4060-ti-8gb");
  EXPECT_EQ(sixteen->key, "rtx-4060-ti-16gb");
}

TEST(GpuCatalog, CustomGpuHasTheGivenTotal) {
  auto g = custom_gpu(23.5);
  EXPECT_EQ(g.key, "custom");
  EXPECT_EQ(g.total_bytes, from_gib(23.5));
  EXPECT_EQ(g.name, "custom GPU (23.50 GiB)");
}

TEST(GpuCatalog, FromJsonlNamesTheLineOfABadField) {
  std::string text = "{\"key\": \"a\", \"memory_total_gib_torch\": 1}\n\n{\"key\": \"b\", \"memory_total_gib_torch\": \"big\"}\n";
  auto r = GpuCatalog::from_jsonl(text, "gpus.jsonl");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "gpus.jsonl:3: expected number \"memory_total_gib_torch\", got string");
}

TEST(GpuCatalog, FromJsonlRejectsDuplicateKeys) {
  std::string text = "{\"key\": \"a\", \"memory_total_gib_torch\": 1}\n{\"key\": \"a\", \"memory_total_gib_torch\": 2}\n";
  auto r = GpuCatalog::from_jsonl(text, "x.jsonl");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), "x.jsonl:2: duplicate key \"a\"");
}

TEST(GpuCountedName, CountFirstOrAfterAColon) {
  auto a = split_gpu_count("2xA100");
  EXPECT_EQ(a.name, "A100");
  EXPECT_EQ(a.count, 2);
  auto b = split_gpu_count("8 x H100 SXM");
  EXPECT_EQ(b.name, "H100 SXM");
  EXPECT_EQ(b.count, 8);
  auto c = split_gpu_count("4\xC3\x97L40S");  // 4×L40S
  EXPECT_EQ(c.name, "L40S");
  EXPECT_EQ(c.count, 4);
  auto d = split_gpu_count("H100:8");
  EXPECT_EQ(d.name, "H100");
  EXPECT_EQ(d.count, 8);
  // The split names still resolve in the catalogue.
  EXPECT_TRUE(GpuCatalog::builtin().find(a.name).has_value());
  EXPECT_TRUE(GpuCatalog::builtin().find(c.name).has_value());
}

TEST(GpuCountedName, NamesThatOnlyLookCountedStayWhole) {
  for (const char* name : {"RTX 4090", "MI300X", "A100-80GB", "H100", "4090", "x8", "H100:", ":8", "2x", "H100:0", "0xA100",
                           "99999xH100"}) {
    auto s = split_gpu_count(name);
    EXPECT_EQ(s.count, 0) << name;
    EXPECT_EQ(s.name, name) << name;
  }
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

// A name sold with several memory sizes: the others are named, so `check` can say which it took.
TEST(GpuCatalog, NamesSoldWithSeveralMemorySizesListTheOthers) {
  const auto& cat = GpuCatalog::builtin();
  auto a100 = cat.find("A100");
  ASSERT_TRUE(a100);
  auto others = cat.other_sizes_named("A100", *a100);
  ASSERT_EQ(others.size(), 1u);
  EXPECT_EQ(others[0].key, cat.find("A100 80GB")->key);
  EXPECT_TRUE(cat.other_sizes_named("A100 80GB", *cat.find("A100 80GB")).empty());  // the size is named
  EXPECT_TRUE(cat.other_sizes_named("A10", *cat.find("A10")).empty());              // not a prefix of A100's words
  EXPECT_TRUE(cat.other_sizes_named("H100", *cat.find("H100")).empty());            // H100 NVL is another name
  EXPECT_FALSE(cat.other_sizes_named("RTX 3080", *cat.find("RTX 3080")).empty());
}

}  // namespace
}  // namespace headroom
