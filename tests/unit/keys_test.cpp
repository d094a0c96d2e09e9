// Key and channel names of a lock (Redisson's layout) and Redis Cluster slots.
#include <gtest/gtest.h>

#include <string>

#include "lock/keys.hpp"
#include "topology/key_slot.hpp"

namespace keys = warden::detail::keys;

namespace {

TEST(KeysPrefixed, WrapsPlainNameInHashTag) {
  EXPECT_EQ(keys::prefixed("redisson_lock__channel", "orders"), "redisson_lock__channel:{orders}");
  EXPECT_EQ(keys::prefixed("p", "a:b:c"), "p:{a:b:c}");
}

TEST(KeysPrefixed, KeepsNameThatCarriesItsOwnHashTag) {
  EXPECT_EQ(keys::prefixed("p", "{orders}:42"), "p:{orders}:42");
  EXPECT_EQ(keys::prefixed("p", "orders:{42}"), "p:orders:{42}");
}

TEST(KeysPrefixed, EmptyName) { EXPECT_EQ(keys::prefixed("p", ""), "p:{}"); }

TEST(KeysSuffixed, WrapsPlainNameInHashTag) {
  EXPECT_EQ(keys::suffixed("orders", "rwlock_timeout"), "{orders}:rwlock_timeout");
  EXPECT_EQ(keys::suffixed("a:b", "s"), "{a:b}:s");
}

TEST(KeysSuffixed, KeepsNameThatCarriesItsOwnHashTag) {
  EXPECT_EQ(keys::suffixed("{orders}:42", "s"), "{orders}:42:s");
  EXPECT_EQ(keys::suffixed("orders:{42}", "s"), "orders:{42}:s");
}

TEST(KeysSuffixed, WrapsNameWhoseBraceIsNoHashTag) {
  // "half{open" has no '}' after its '{': Redis hashes the whole name.
  EXPECT_EQ(keys::suffixed("half{open", "s"), "{half{open}:s");
  EXPECT_EQ(keys::prefixed("p", "a{"), "p:{a{}");
}

// Redis's rule (the text between the first '{' and the first '}' after it,
// if not empty) for names with unbalanced, empty or several braces: every
// derived key lands in the name's own slot.
TEST(KeysPrefixed, OddBracesShareTheNamesSlot) {
  for (const char* name : {"a{", "}{a}", "{a}{b}", "{{a}", "a{{b}}", "{", "x{y", "orders", "{orders}:1"}) {
    ASSERT_FALSE(keys::name_problem(name)) << name;
    auto slot = keys::slot(name);
    EXPECT_EQ(keys::slot(keys::lock_channel(name)), slot) << name;
    EXPECT_EQ(keys::slot(keys::fair_queue(name)), slot) << name;
    EXPECT_EQ(keys::slot(keys::fair_timeouts(name)), slot) << name;
    EXPECT_EQ(keys::slot(keys::rwlock_channel(name)), slot) << name;
    EXPECT_EQ(keys::slot(keys::unlock_latch(name, "r")), slot) << name;
    EXPECT_EQ(keys::slot(keys::rwlock_timeout_prefix(name, "o:1") + ":1"), slot) << name;
  }
}

TEST(KeysNameProblem, NamesWhoseSlotNoTagCanReachAreRefused) {
  // Hashed whole, and a '}' cannot be inside a hash tag.
  for (const char* name : {"{}", "x{}y", "a}", "}{", "{}{a}"}) EXPECT_TRUE(keys::name_problem(name)) << name;
}

TEST(KeysPrefixed, SameSlotAsTheNameItDerivesFrom) {
  for (const char* name : {"orders:42", "{orders}:42", "x{tag}y"}) {
    std::string key = name;
    EXPECT_EQ(keys::slot(keys::prefixed("redisson_lock__channel", name)), keys::slot(key)) << name;
    EXPECT_EQ(keys::slot(keys::suffixed(name, "suffix")), keys::slot(key)) << name;
  }
}

TEST(KeysLockChannel, IsRedissonChannelName) {
  EXPECT_EQ(keys::lock_channel("orders:42"), "redisson_lock__channel:{orders:42}");
  EXPECT_EQ(keys::lock_channel("{orders}:42"), "redisson_lock__channel:{orders}:42");
}

TEST(KeysLockChannel, TheNameCanBeReadBackFromTheChannel) {
  for (std::string_view name : {"orders:42", "{orders}:42", "x{tag}y", "{a}", "a{", "{}", "x{}y", "}{a}", ""}) {
    std::string channel = keys::lock_channel(name);
    auto at = keys::lock_channel_name_at(name);
    ASSERT_LE(at + name.size(), channel.size()) << name;
    EXPECT_EQ(channel.substr(at, name.size()), name) << name;
  }
}

TEST(KeysUnlockLatch, IsRedissonLatchNameWithRequestId) {
  EXPECT_EQ(keys::unlock_latch("orders:42", "req-1"), "redisson_unlock_latch:{orders:42}:req-1");
  EXPECT_EQ(keys::unlock_latch("{orders}:42", "abc"), "redisson_unlock_latch:{orders}:42:abc");
}

TEST(KeysUnlockLatch, SharesSlotWithLockChannel) {
  EXPECT_EQ(keys::slot(keys::unlock_latch("orders:42", "r")), keys::slot(keys::lock_channel("orders:42")));
  EXPECT_EQ(keys::slot(keys::unlock_latch("orders:42", "r")), keys::slot("orders:42"));
}

TEST(KeysSlot, MatchesCrc16XmodemCheckValue) {
  // CRC16/XMODEM("123456789") == 0x31C3; 0x31C3 % 16384 == 12739.
  EXPECT_EQ(keys::slot("123456789"), 0x31C3 % 16384);
  EXPECT_EQ(keys::slot("123456789"), 12739);
}

TEST(KeysSlot, MatchesKnownRedisClusterKeyslots) {
  EXPECT_EQ(keys::slot("foo"), 12182);
  EXPECT_EQ(keys::slot("bar"), 5061);
  EXPECT_EQ(keys::slot("somekey"), 11058);
  EXPECT_EQ(keys::slot("hello"), 866);
  EXPECT_EQ(keys::slot(""), 0);
}

TEST(KeysSlot, HashesOnlyTheHashTag) {
  EXPECT_EQ(keys::slot("{user1000}.following"), keys::slot("{user1000}.followers"));
  EXPECT_EQ(keys::slot("{user1000}.following"), keys::slot("user1000"));
  EXPECT_EQ(keys::slot("foo{bar}zap"), keys::slot("bar"));
}

TEST(KeysSlot, EmptyHashTagHashesWholeKey) {
  // The first '{' is followed at once by '}': the tag is empty, so the whole key counts,
  // not the later "{bar}".
  EXPECT_EQ(keys::slot("foo{}{bar}"), 8363);
  EXPECT_NE(keys::slot("foo{}{bar}"), keys::slot("bar"));
  EXPECT_EQ(keys::slot("{}"), 15257);
}

TEST(KeysSlot, TagRunsFromFirstOpenToNextClose) {
  EXPECT_EQ(keys::slot("foo{{bar}}zap"), keys::slot("{bar"));
  EXPECT_EQ(keys::slot("{bar"), 4015);
  EXPECT_EQ(keys::slot("x{a}y{b}"), keys::slot("a"));
}

TEST(KeysSlot, UnclosedOrReversedBracesHashWholeKey) {
  EXPECT_EQ(keys::slot("foo{"), 7673);
  EXPECT_EQ(keys::slot("foo}{bar}"), keys::slot("bar"));  // the '}' before the first '{' is ignored
  EXPECT_EQ(keys::slot("foo}{bar}"), 5061);
}

TEST(KeysSlot, AlwaysBelow16384) {
  for (int i = 0; i < 2000; ++i) EXPECT_LT(keys::slot("key:" + std::to_string(i)), 16384);
}

}  // namespace
