// Key and channel names of the fair, fenced and read-write locks (Redisson's layout).
#include <gtest/gtest.h>

#include <string>

#include "lock/keys.hpp"
#include "topology/key_slot.hpp"

namespace keys = warden::detail::keys;

namespace {

TEST(LockKindKeysTagged, WrapsPlainNameKeepsOwnTag) {
  EXPECT_EQ(keys::tagged("orders"), "{orders}");
  EXPECT_EQ(keys::tagged("{orders}:42"), "{orders}:42");
  // A '{' without a '}' after it is no hash tag (Redis's rule): wrapped.
  EXPECT_EQ(keys::tagged("half{open"), "{half{open}");
  // suffixed() is tagged() plus ":<suffix>", which the Lua scripts rely on.
  for (const char* name : {"orders", "{orders}:42", "a:b"}) {
    EXPECT_EQ(keys::suffixed(name, "x"), keys::tagged(name) + ":x") << name;
  }
}

TEST(LockKindKeysFair, QueueAndTimeoutNamesAreRedissons) {
  EXPECT_EQ(keys::fair_queue("orders:42"), "redisson_lock_queue:{orders:42}");
  EXPECT_EQ(keys::fair_timeouts("orders:42"), "redisson_lock_timeout:{orders:42}");
  EXPECT_EQ(keys::fair_queue("{orders}:42"), "redisson_lock_queue:{orders}:42");
  EXPECT_EQ(keys::fair_timeouts("{orders}:42"), "redisson_lock_timeout:{orders}:42");
}

TEST(LockKindKeysFair, EveryKeyInTheLocksSlot) {
  for (const char* name : {"orders:42", "{orders}:42"}) {
    auto slot = keys::slot(keys::tagged(name));
    EXPECT_EQ(keys::slot(keys::fair_queue(name)), slot) << name;
    EXPECT_EQ(keys::slot(keys::fair_timeouts(name)), slot) << name;
    EXPECT_EQ(keys::slot(keys::unlock_latch(name, "r")), slot) << name;
  }
}

TEST(LockKindKeysFenced, TokenCounterIsRedissonsAndInTheLocksSlot) {
  EXPECT_EQ(keys::fenced_token("orders:42"), "redisson_lock_token:{orders:42}");
  EXPECT_EQ(keys::fenced_token("{orders}:42"), "redisson_lock_token:{orders}:42");
  for (const char* name : {"orders:42", "{orders}:42"}) {
    EXPECT_EQ(keys::slot(keys::fenced_token(name)), keys::slot(keys::tagged(name))) << name;
  }
}

TEST(LockKindKeysReadWrite, ChannelAndHoldKeysAreRedissons) {
  EXPECT_EQ(keys::rwlock_channel("doc"), "redisson_rwlock:{doc}");
  EXPECT_EQ(keys::rwlock_channel("{tenant}:doc"), "redisson_rwlock:{tenant}:doc");
  EXPECT_EQ(keys::rwlock_timeout_prefix("doc", "uuid-1:7"), "{doc}:uuid-1:7:rwlock_timeout");
  EXPECT_EQ(keys::rwlock_timeout_prefix("{tenant}:doc", "uuid-1:7"), "{tenant}:doc:uuid-1:7:rwlock_timeout");
  EXPECT_EQ(keys::slot(keys::rwlock_timeout_prefix("doc", "u:1") + ":3"), keys::slot("doc"));
  EXPECT_EQ(keys::slot(keys::rwlock_timeout_prefix("{tenant}:doc", "u:1") + ":3"), keys::slot("{tenant}:doc"));
}

}  // namespace
