#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "headroom/model.h"
#include "unit/model_test_support.h"

namespace headroom {
namespace {

using namespace test_support;
namespace fs = std::filesystem;

const std::string k_header =
    R"({"__metadata__":{"format":"pt"},"a.weight":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},)"
    R"("b.weight":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[12,16]}})";

TEST(Safetensors, ReadsHeaderAndSkipsMetadata) {
  TempDir dir;
  fs::path f = dir.path() / "model.safetensors";
  write_bytes(f, safetensors(k_header, 16));
  auto r = read_safetensors_header(f.string());
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].name, "a.weight");
  EXPECT_EQ((*r)[0].dtype, "BF16");
  EXPECT_EQ((*r)[0].shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ((*r)[0].bytes, 12);
  EXPECT_EQ((*r)[1].bytes, 4);
}

// A shape of 2^62 x 4 BF16 elements claims 2^65 bytes; its data_offsets hold 16. The format's own
// validation refuses such a tensor, so headroom refuses it too, without overflowing the product.
TEST(Safetensors, ShapeThatDoesNotMatchItsBytesIsRefused) {
  TempDir dir;
  fs::path f = dir.path() / "x.safetensors";
  write_bytes(f, safetensors(R"({"w":{"dtype":"BF16","shape":[4611686018427387904,4],"data_offsets":[0,16]}})", 16));
  auto r = read_safetensors_header(f.string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), f.string() +
                                       ": tensor \"w\": shape [4611686018427387904, 4] of BF16 does not match data_offsets "
                                       "[0, 16] (16 bytes); the file is corrupt");
  write_bytes(f, safetensors(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,16]}})", 16));
  EXPECT_FALSE(read_safetensors_header(f.string()));
  // Packed fp4: two elements a byte.
  write_bytes(f, safetensors(R"({"w":{"dtype":"F4","shape":[4,8],"data_offsets":[0,16]}})", 16));
  EXPECT_TRUE(read_safetensors_header(f.string()));
}

TEST(Safetensors, AbsurdHeaderLength) {
  TempDir dir;
  fs::path f = dir.path() / "x.safetensors";
  write_bytes(f, le64(1ull << 40) + "{}");
  auto r = read_safetensors_header(f.string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), f.string() + ": header length 1099511627776 bytes is absurd (limit 104857600); not a "
                                                "safetensors file?");
}

TEST(Safetensors, TruncatedFile) {
  TempDir dir;
  fs::path f = dir.path() / "x.safetensors";
  write_bytes(f, le64(500) + "{\"a\":");
  auto r = read_safetensors_header(f.string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            f.string() + ": file cut short: the header claims 500 bytes but only 5 follow the length");
}

TEST(Safetensors, FileShorterThanTheLengthField) {
  TempDir dir;
  fs::path f = dir.path() / "x.safetensors";
  write_bytes(f, "abc");
  auto r = read_safetensors_header(f.string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(), f.string() + ": file cut short: 3 bytes, a safetensors file needs at least 8");
}

TEST(Safetensors, BadJson) {
  TempDir dir;
  fs::path f = dir.path() / "x.safetensors";
  write_bytes(f, safetensors("{\"a\": nope}", 0));
  auto r = read_safetensors_header(f.string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::parse_error);
  EXPECT_EQ(r.error().where, f.string());
  EXPECT_EQ(r.error().message.rfind("malformed safetensors header at column 8 of the header: ", 0), 0u) << r.error().message;
}

TEST(Safetensors, OffsetsOutsideTheFile) {
  TempDir dir;
  fs::path f = dir.path() / "x.safetensors";
  write_bytes(f, safetensors(R"({"w":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})", 16));
  auto r = read_safetensors_header(f.string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().to_string(),
            f.string() + ": tensor \"w\": data_offsets [0, 32] lie outside the 16 data bytes of the file");
}

TEST(Safetensors, DtypeSizes) {
  EXPECT_EQ(dtype_bytes("BF16"), 2);
  EXPECT_EQ(dtype_bytes("F64"), 8);
  EXPECT_EQ(dtype_bytes("I32"), 4);
  EXPECT_EQ(dtype_bytes("F8_E4M3"), 1);
  EXPECT_EQ(dtype_bytes("F8_E8M0"), 1);
  EXPECT_EQ(dtype_bytes("BOOL"), 1);
  EXPECT_EQ(dtype_bytes("Q9"), 0);
}

TEST(Safetensors, DirUsesIndexWeightMap) {
  TempDir dir;
  write_bytes(dir.path() / "model-00001-of-00002.safetensors", safetensors(k_header, 16));
  write_bytes(dir.path() / "model-00002-of-00002.safetensors",
              safetensors(R"({"c":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8));
  write_bytes(dir.path() / "stray.safetensors", safetensors(R"({"z":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4));
  write_bytes(dir.path() / "model.safetensors.index.json",
              R"({"metadata":{"total_size":24},"weight_map":{"a.weight":"model-00001-of-00002.safetensors",)"
              R"("b.weight":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors"}})");
  auto r = read_safetensors_dir(dir.path().string());
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_TRUE(*r);
  EXPECT_EQ((*r)->file_count, 2);
  EXPECT_EQ((*r)->total_bytes, 24);
  EXPECT_TRUE((*r)->exact);
}

TEST(Safetensors, DirMissingShardIsAnError) {
  TempDir dir;
  write_bytes(dir.path() / "model.safetensors.index.json", R"({"weight_map":{"a":"model-00001-of-00002.safetensors"}})");
  auto r = read_safetensors_dir(dir.path().string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::not_found);
  EXPECT_EQ(r.error().message,
            "shard \"model-00001-of-00002.safetensors\" listed in model.safetensors.index.json is missing");
}

TEST(Safetensors, DirWithoutFilesGivesNothing) {
  TempDir dir;
  write_bytes(dir.path() / "config.json", "{}");
  auto r = read_safetensors_dir(dir.path().string());
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
}

}  // namespace
}  // namespace headroom
