// The exact Redis state and pub/sub messages a Lock produces: Redisson's
// layout, so Java and C++ services can share locks.
#include <gtest/gtest.h>

#include "message_recorder.hpp"
#include "redis_probe.hpp"
#include "test_env.hpp"
#include "warden_scripts.hpp"

namespace warden::test {
namespace {

class LockState : public ::testing::Test {
 protected:
  RedisServer server;
  RedisProbe probe{server};
  Client client{fast_config(server)};
};

TEST_F(LockState, LockReentryAndUnlockLeaveRedissonsHashAndTtl) {
  Lock lock = client.get_lock("orders:42");
  const std::string owner = client.id() + ":" + std::to_string(current_thread_id());
  MessageRecorder recorder(server, {"redisson_lock__channel:{orders:42}"});

  lock.lock();
  EXPECT_EQ(probe.hgetall("orders:42"), (std::map<std::string, std::string>{{owner, "1"}}));
  long long ttl = probe.pttl("orders:42");
  EXPECT_GT(ttl, 29'000);  // the 30 s watchdog lease
  EXPECT_LE(ttl, 30'000);

  lock.lock();  // re-entry
  EXPECT_EQ(probe.hgetall("orders:42"), (std::map<std::string, std::string>{{owner, "2"}}));
  EXPECT_EQ(lock.hold_count(), 2);

  lock.unlock();  // one hold left: the hash stays, no message
  EXPECT_EQ(probe.hgetall("orders:42"), (std::map<std::string, std::string>{{owner, "1"}}));
  EXPECT_GT(probe.pttl("orders:42"), 29'000);

  lock.unlock();  // last hold: key deleted, "0" published on the lock's channel
  EXPECT_FALSE(probe.exists("orders:42"));
  auto messages = recorder.wait_for(1, 2s);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].channel, "redisson_lock__channel:{orders:42}");
  EXPECT_EQ(messages[0].payload, "0");
  EXPECT_EQ(recorder.wait_for(2, 200ms).size(), 1u) << "the partial unlock must not publish";
}

TEST_F(LockState, FixedLeaseIsTheKeysTtl) {
  Lock lock = client.get_lock("fixed");
  ASSERT_TRUE(lock.try_lock(lock_options().with_wait(0ms).with_lease(5s)));
  long long ttl = probe.pttl("fixed");
  EXPECT_GT(ttl, 4'000);
  EXPECT_LE(ttl, 5'000);
  auto remaining = lock.remain_time_to_live();
  ASSERT_TRUE(remaining.has_value());
  EXPECT_GT(remaining->count(), 4'000);
  lock.unlock();
  EXPECT_FALSE(lock.remain_time_to_live().has_value());
}

TEST_F(LockState, HashTaggedNamesKeepTheirOwnTag) {
  Lock lock = client.get_lock("{tenant7}:job");
  MessageRecorder recorder(server, {"redisson_lock__channel:{tenant7}:job"});
  lock.lock();
  lock.unlock();
  auto messages = recorder.wait_for(1, 2s);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].payload, "0");
}

TEST_F(LockState, QueriesReflectTheServer) {
  Lock lock = client.get_lock("queries");
  EXPECT_FALSE(lock.is_locked());
  EXPECT_FALSE(lock.is_held());
  EXPECT_EQ(lock.hold_count(), 0);
  EXPECT_EQ(lock.valid_until(), std::chrono::steady_clock::time_point{});
  auto before = std::chrono::steady_clock::now();
  lock.lock();
  EXPECT_TRUE(lock.is_locked());
  EXPECT_TRUE(lock.is_held());
  EXPECT_TRUE(lock.is_held(current_thread_id()));
  EXPECT_FALSE(lock.is_held(current_thread_id() + 1000));
  EXPECT_GE(lock.valid_until(), before + 30s);
  EXPECT_LE(lock.valid_until(), std::chrono::steady_clock::now() + 30s);
  lock.unlock();
}

TEST_F(LockState, ForceUnlockDeletesAnyonesLockAndWakesWaiters) {
  Lock lock = client.get_lock("forced");
  MessageRecorder recorder(server, {"redisson_lock__channel:{forced}"});
  lock.lock();
  Client other{fast_config(server)};
  EXPECT_TRUE(other.get_lock("forced").force_unlock());
  EXPECT_FALSE(probe.exists("forced"));
  auto messages = recorder.wait_for(1, 2s);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].payload, "0");
  EXPECT_FALSE(other.get_lock("forced").force_unlock());
}

TEST_F(LockState, AsyncTwinsTakeAnExplicitOwner) {
  Lock lock = client.get_lock("async");
  const thread_id owner = 777'000;
  lock.lock_async(owner).get();
  EXPECT_EQ(probe.hgetall("async"),
            (std::map<std::string, std::string>{{client.id() + ":" + std::to_string(owner), "1"}}));
  EXPECT_FALSE(lock.is_held());
  // Another thread unlocks on the owner's behalf.
  std::thread([&] { lock.unlock_async(owner).get(); }).join();
  EXPECT_FALSE(probe.exists("async"));
  EXPECT_TRUE(lock.try_lock_async(owner, lock_options().with_wait(0ms).with_lease(2s)).get());
  EXPECT_LE(probe.pttl("async"), 2'000);
  lock.unlock_async(owner).get();
}

TEST_F(LockState, AResentReleaseRepeatsItsFirstAnswerThroughTheLatch) {
  // A release whose reply was lost is sent again with the same request id; it
  // must answer as the first one did, not "not owner", and not decrement twice.
  Lock lock = client.get_lock("latched");
  const std::string owner = client.id() + ":" + std::to_string(current_thread_id());
  lock.lock();
  lock.lock();  // two holds
  auto release = [&](const std::string& request) {
    const auto& script = detail::scripts::lock_release;
    return probe.command({"EVAL", script.body, "3", "latched", "redisson_lock__channel:{latched}",
                          "redisson_unlock_latch:{latched}:" + request, "30000", owner, "publish", "0", "5000"});
  };
  EXPECT_EQ(release("r1").integer, 0);                                                      // one hold left
  EXPECT_EQ(release("r1").integer, 0);                                                      // resent: same answer...
  EXPECT_EQ(probe.hgetall("latched"), (std::map<std::string, std::string>{{owner, "1"}}));  // ...no second decrement
  long long latch_ttl = probe.pttl("redisson_unlock_latch:{latched}:r1");
  EXPECT_GT(latch_ttl, 0);
  EXPECT_LE(latch_ttl, 5000);
  EXPECT_EQ(release("r2").integer, 1);  // a new release frees the lock
  EXPECT_EQ(release("r2").integer, 1);  // and its resend says so again
  EXPECT_TRUE(release("r3").is_nil());  // a genuinely new release: not the owner
  EXPECT_FALSE(probe.exists("latched"));
}

TEST_F(LockState, TwoClientsExcludeEachOther) {
  Client other{fast_config(server)};
  Lock mine = client.get_lock("shared");
  Lock theirs = other.get_lock("shared");
  mine.lock();
  EXPECT_FALSE(theirs.try_lock());
  EXPECT_FALSE(theirs.try_lock_for(100ms));
  mine.unlock();
  EXPECT_TRUE(theirs.try_lock());
  theirs.unlock();
}

}  // namespace
}  // namespace warden::test
