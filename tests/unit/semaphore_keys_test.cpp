// SemaphoreKeys: Redisson's names for a semaphore's channel (prefixName),
// and the names warden refuses because that channel would hash elsewhere.
#include <gtest/gtest.h>

#include "lock/semaphore_keys.hpp"

namespace {

namespace keys = warden::detail::keys;

TEST(SemaphoreKeys, TheChannelIsRedissonsPrefixName) {
  EXPECT_EQ(keys::semaphore_channel("pool"), "redisson_sc:{pool}");
  // A name that contains '{' is used as it is (Redisson's rule).
  EXPECT_EQ(keys::semaphore_channel("{orders}:pool"), "redisson_sc:{orders}:pool");
  EXPECT_EQ(keys::semaphore_channel("a{b}c"), "redisson_sc:a{b}c");
}

TEST(SemaphoreKeys, ANameWithABraceButNoHashTagIsRefused) {
  EXPECT_FALSE(keys::semaphore_name_problem("pool"));
  EXPECT_FALSE(keys::semaphore_name_problem("{orders}:pool"));
  EXPECT_TRUE(keys::semaphore_name_problem("a{"));
  EXPECT_TRUE(keys::semaphore_name_problem("x{}y"));
  EXPECT_TRUE(keys::semaphore_name_problem("a}b"));
}

TEST(SemaphoreKeys, TheReleaseLatchSharesTheNamesSlot) {
  EXPECT_EQ(keys::release_latch("pool", "r1"), "warden_release_latch:{pool}:r1");
  EXPECT_EQ(keys::release_latch("{o}x", "r1"), "warden_release_latch:{o}x:r1");
}

}  // namespace
