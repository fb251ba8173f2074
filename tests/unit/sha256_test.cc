// SHA-256 against the FIPS 180-4 test vectors.
#include <gtest/gtest.h>

#include "util/sha256.h"

namespace headroom::util {
namespace {

TEST(Sha256, EmptyInput) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, Abc) { EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"); }

TEST(Sha256, TwoBlockMessage) {
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, IncrementalUpdatesMatchOneShot) {
  std::string million(1000000, 'a');
  Sha256 h;
  for (std::size_t i = 0; i < million.size(); i += 777) h.update(std::string_view(million).substr(i, 777));
  EXPECT_EQ(h.hex_digest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace headroom::util
