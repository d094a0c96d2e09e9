// Client ids: version 4 UUIDs from the OS's random source.
#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

#include "client/client_core.hpp"

namespace {

TEST(UuidRandom, IsAVersion4Rfc4122Uuid) {
  for (int i = 0; i < 200; ++i) {
    std::string id = warden::detail::random_uuid();
    ASSERT_EQ(id.size(), 36u) << id;
    for (std::size_t k = 0; k < id.size(); ++k) {
      if (k == 8 || k == 13 || k == 18 || k == 23) {
        ASSERT_EQ(id[k], '-') << id;
      } else {
        ASSERT_TRUE(std::isxdigit(static_cast<unsigned char>(id[k])) &&
                    !std::isupper(static_cast<unsigned char>(id[k])))
            << id;
      }
    }
    EXPECT_EQ(id[14], '4') << "version nibble: " << id;
    EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << "variant 10xx: " << id;
  }
}

TEST(UuidRandom, TheOtherBitsVary) {
  // 122 random bits: every free nibble position takes more than one value
  // over a few hundred ids, and no id repeats.
  std::set<std::string> seen;
  std::set<char> at[36];
  for (int i = 0; i < 500; ++i) {
    std::string id = warden::detail::random_uuid();
    EXPECT_TRUE(seen.insert(id).second) << id;
    for (std::size_t k = 0; k < id.size(); ++k) at[k].insert(id[k]);
  }
  for (std::size_t k = 0; k < 36; ++k) {
    if (k == 8 || k == 13 || k == 18 || k == 23 || k == 14) continue;
    EXPECT_GT(at[k].size(), k == 19 ? 3u : 8u) << "position " << k;
  }
}

}  // namespace
