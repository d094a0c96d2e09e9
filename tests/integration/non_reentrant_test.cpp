// Non-re-entrant Lock and FairLock: the owner asking again fails at once with
// errc::would_deadlock and nothing changes; everything else is the
// re-entrant kind's (layout, waiting, other owners).
#include <gtest/gtest.h>

#include <map>

#include "message_recorder.hpp"
#include "redis_probe.hpp"
#include "refusal.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

std::string owner_of(const Client& client, thread_id thread) { return client.id() + ":" + std::to_string(thread); }
std::string queue_key(const std::string& name) { return "redisson_lock_queue:{" + name + "}"; }

class NonReentrant : public ::testing::TestWithParam<bool> {
 protected:
  bool fair() const { return GetParam(); }
  Lock make(Client& c, const std::string& name) {
    return fair() ? static_cast<Lock>(c.get_non_reentrant_fair_lock(name)) : c.get_non_reentrant_lock(name);
  }

  template <class Call>
  void expect_would_deadlock(const std::string& name, Call call) {
    auto start = std::chrono::steady_clock::now();
    expect_refusal(probe, errc::would_deadlock, name, call);
    EXPECT_LT(elapsed_ms(start), 500) << "it waited instead of failing at once";
  }

  RedisServer server;
  RedisProbe probe{server};
  Client client{fast_config(server)};
};

TEST_P(NonReentrant, TheHolderAskingAgainFailsAtOnceAndNothingChanges) {
  const std::string name = fair() ? "nr:fair" : "nr:plain";
  Lock lock = make(client, name);
  const std::string me = owner_of(client, current_thread_id());
  lock.lock();
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{me, "1"}}));

  // Another owner waits in the queue (fair) or on the channel: untouched.
  Client other{fast_config(server)};
  Lock theirs = make(other, name);
  auto waiting = theirs.lock_async(9);
  if (fair()) {
    ASSERT_TRUE(eventually([&] { return probe.command({"LLEN", queue_key(name)}).integer == 1; }));
  }

  expect_would_deadlock(name, [&] { lock.lock(); });
  expect_would_deadlock(name, [&] { lock.lock(lock_options().with_lease(5s)); });
  expect_would_deadlock(name, [&] { lock.try_lock(); });
  expect_would_deadlock(name, [&] { lock.try_lock_for(2s); });
  expect_would_deadlock(name, [&] { lock.lock_async(current_thread_id()).get(); });
  std::error_code error;
  Event done;
  lock.try_lock_async(current_thread_id(), lock_options().with_wait(1s), [&](std::error_code e, bool) {
    error = e;
    done.set();
  });
  ASSERT_TRUE(done.wait_for(2s));
  EXPECT_EQ(error, errc::would_deadlock);
  EXPECT_EQ(lock.hold_count(), 1);
  EXPECT_EQ(waiting.wait_for(0ms), std::future_status::timeout);

  // Other owners are refused as by any lock, and get it after the release.
  EXPECT_FALSE(theirs.try_lock_async(10).get());
  lock.unlock();
  ASSERT_EQ(waiting.wait_for(2s), std::future_status::ready);
  waiting.get();
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{owner_of(other, 9), "1"}}));
  theirs.unlock_async(9).get();
  EXPECT_EQ(probe.keys("nr:*"), std::vector<std::string>{});
  EXPECT_EQ(probe.keys("redisson_lock_*"), std::vector<std::string>{});

  // Released, the owner may take it again.
  lock.lock();
  lock.unlock();
}

TEST_P(NonReentrant, AHoldTakenThroughTheReentrantKindCountsToo) {
  // One layout: a hold of the same owner on the same name, taken by a
  // re-entrant handle, is still that owner's hold.
  const std::string name = fair() ? "nr:fair-mixed" : "nr:plain-mixed";
  Lock reentrant = fair() ? static_cast<Lock>(client.get_fair_lock(name)) : client.get_lock(name);
  reentrant.lock();
  expect_would_deadlock(name, [&] { make(client, name).lock(); });
  reentrant.unlock();
  EXPECT_FALSE(probe.exists(name));
}

TEST_P(NonReentrant, ReleasesLikeItsReentrantKind) {
  const std::string name = fair() ? "nr:fair-release" : "nr:plain-release";
  const std::string channel = "redisson_lock__channel:{" + name + "}";
  MessageRecorder recorder(server, {channel});
  Lock lock = make(client, name);
  lock.lock();
  lock.unlock();
  EXPECT_FALSE(probe.exists(name));
  // A plain lock's release publishes "0" on the lock's channel; a fair lock's
  // wakes only a queue head, and there is none.
  EXPECT_EQ(recorder.wait_for(1, fair() ? 300ms : 2000ms).size(), fair() ? 0u : 1u);
}

INSTANTIATE_TEST_SUITE_P(Kinds, NonReentrant, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Fair" : "Plain"; });

}  // namespace
}  // namespace warden::test
