// Lost-lock listeners, completion callbacks, async queries and abandoned
// asynchronous acquires.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

struct Log {
  std::mutex mutex;
  std::vector<std::string> errors;
  bool contains(const std::string& text) {
    std::lock_guard<std::mutex> guard(mutex);
    for (auto& line : errors) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }
};

class Listeners : public ::testing::Test {
 protected:
  Config logged_config() {
    Config config = fast_config(server);
    config.logger = [log = log](log_level level, std::string_view message) {
      if (level < log_level::warning) return;
      std::lock_guard<std::mutex> guard(log->mutex);
      log->errors.emplace_back(message);
    };
    return config;
  }

  // Takes `lock`, deletes its key and releases: the release finds the hold
  // lost and tells the listeners before unlock_checked() returns.
  void lose(Lock& lock) {
    lock.lock();
    probe.command({"DEL", lock.name()});
    EXPECT_EQ(lock.unlock_checked(), errc::lease_expired);
  }

  RedisServer server;
  RedisProbe probe{server};
  std::shared_ptr<Log> log = std::make_shared<Log>();
  Client client{logged_config()};
};

TEST_F(Listeners, EveryListenerHearsALossAndRemovedOnesDoNot) {
  Lock lock = client.get_lock("many");
  std::atomic<int> first{0}, second{0}, removed{0}, unsubscribed{0}, kept{0};
  auto listening = lock.subscribe_lost([&](const LockLost&) { ++first; });
  auto listening_too =
      client.get_lock("many").subscribe_lost([&](const LockLost&) { ++second; });  // another handle, same lock
  auto gone = lock.subscribe_lost([&](const LockLost&) { ++removed; });
  gone.reset();
  auto subscription = lock.subscribe_lost([&](const LockLost&) { ++unsubscribed; });
  subscription.reset();
  EXPECT_FALSE(subscription);
  auto held = lock.subscribe_lost([&](const LockLost&) { ++kept; });
  lose(lock);
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 1);
  EXPECT_EQ(removed, 0);
  EXPECT_EQ(unsubscribed, 0);
  EXPECT_EQ(kept, 1);
}

TEST_F(Listeners, AThrowingListenerIsCaughtAndLoggedAndTheOthersStillHear) {
  Lock lock = client.get_lock("throwing");
  std::atomic<int> heard{0};
  auto listening = lock.subscribe_lost([](const LockLost&) { throw std::runtime_error("listener boom"); });
  auto listening_too = lock.subscribe_lost([](const LockLost&) { throw 42; });
  auto listening_also = lock.subscribe_lost([&](const LockLost&) { ++heard; });
  lose(lock);
  EXPECT_EQ(heard, 1);
  EXPECT_TRUE(log->contains("listener boom"));
  EXPECT_TRUE(log->contains("not a std::exception"));
}

TEST_F(Listeners, AThrowingLoggerNeverEndsTheProcess) {
  Config config = fast_config(server);
  std::atomic<int> calls{0};
  config.logger = [&](log_level, std::string_view) {
    ++calls;
    throw std::runtime_error("logger boom");
  };
  Client noisy{config};
  Lock lock = noisy.get_lock("noisy");
  auto listening = lock.subscribe_lost([](const LockLost&) { throw std::runtime_error("listener boom"); });
  {
    std::lock_guard<Lock> guard(lock);
    probe.command({"DEL", "noisy"});
  }
  EXPECT_GT(calls, 0);
  EXPECT_EQ(lock.unlock_checked(), errc::not_owner);
}

TEST_F(Listeners, AThrowingCompletionCallbackIsCaughtAndLogged) {
  Lock lock = client.get_lock("callback-throws");
  Event done;
  lock.is_locked_async([&](std::error_code, bool) {
    done.set();
    throw std::runtime_error("callback boom");
  });
  ASSERT_TRUE(done.wait_for(2s));
  EXPECT_TRUE(eventually([&] { return log->contains("callback boom"); }, 2s));
  EXPECT_FALSE(lock.is_locked());  // the client still works
}

TEST_F(Listeners, CompletionCallbacksWorkInsideAListener) {
  Lock lock = client.get_lock("relock");
  thread_id owner = new_owner_id();
  Event relocked, queried;
  std::error_code relock_error = make_error_code(errc::invalid_argument);
  bool held_after = false;
  std::error_code blocking_error, checked_error;
  // By reference: a listener holding a handle of its own lock would keep the
  // lock (and the client's state) alive until it is removed.
  auto watch = lock.subscribe_lost([&](const LockLost&) {
    // A blocking call here would wait for this very thread.
    try {
      lock.is_locked();
    } catch (const Error& error) {
      blocking_error = error.code();
    }
    checked_error = lock.unlock_checked();
    lock.unlock();  // starts a release (of nothing: this thread holds nothing), never throws or hangs
    lock.lock_async(owner, {}, [&, lock](std::error_code error) mutable {
      relock_error = error;
      lock.is_held_async(owner, [&](std::error_code, bool held) {
        held_after = held;
        queried.set();
      });
      relocked.set();
    });
  });
  lose(lock);
  ASSERT_TRUE(relocked.wait_for(2s)) << "the completion callback never ran";
  ASSERT_TRUE(queried.wait_for(2s));
  EXPECT_EQ(blocking_error, errc::would_deadlock);
  EXPECT_EQ(checked_error, errc::would_deadlock);
  EXPECT_FALSE(relock_error) << relock_error.message();
  EXPECT_TRUE(held_after);
  EXPECT_EQ(probe.hgetall("relock"),
            (std::map<std::string, std::string>{{client.id() + ":" + std::to_string(owner), "1"}}));
  lock.unlock_async(owner).get();
}

TEST_F(Listeners, CallbacksGetBadInputAndShutDownErrors) {
  Lock lock = client.get_lock("bad");
  Event done;
  std::error_code error;
  lock.lock_async(0, {}, [&](std::error_code e) {
    error = e;
    done.set();
  });
  ASSERT_TRUE(done.wait_for(2s));
  EXPECT_EQ(error, errc::invalid_argument);

  Lock orphan = [&] {
    Client gone{fast_config(server)};
    return gone.get_lock("orphan");
  }();
  std::error_code after;
  bool called = false;
  orphan.try_lock_async(1, lock_options().with_wait(0ms), [&](std::error_code e, bool) {
    after = e;
    called = true;
  });
  EXPECT_TRUE(called) << "after shutdown the callback runs on the calling thread";
  EXPECT_EQ(after, errc::shut_down);
}

// ---- async queries ----

TEST_F(Listeners, EveryQueryHasAnAsyncTwin) {
  Lock lock = client.get_lock("queries");
  thread_id owner = new_owner_id();
  lock.lock_async(owner).get();
  lock.lock_async(owner).get();
  EXPECT_EQ(lock.hold_count_async(owner).get(), 2);
  EXPECT_EQ(lock.hold_count_async(owner + 1).get(), 0);
  EXPECT_TRUE(lock.is_held_async(owner).get());
  EXPECT_FALSE(lock.is_held_async(current_thread_id()).get());
  EXPECT_TRUE(lock.is_locked_async().get());
  EXPECT_TRUE(lock.remain_time_to_live_async().get().has_value());

  Event done;
  int count = -1;
  lock.hold_count_async(owner, [&](std::error_code, int value) {
    count = value;
    done.set();
  });
  ASSERT_TRUE(done.wait_for(2s));
  EXPECT_EQ(count, 2);
  lock.unlock_async(owner).get();
  lock.unlock_async(owner).get();
}

// ---- acquires nobody collects ----

TEST_F(Listeners, ADroppedLockAsyncFutureGivesTheHoldBack) {
  Lock lock = client.get_lock("dropped");
  thread_id owner = new_owner_id();
  { auto ignored = lock.lock_async(owner); }
  EXPECT_TRUE(eventually([&] { return !probe.exists("dropped"); }, 3s)) << "the abandoned hold is still there";
  // No longer renewed either (the release's reply may trail the key's removal).
  EXPECT_TRUE(eventually([&] { return lock.valid_until(owner) == std::chrono::steady_clock::time_point{}; }, 2s));

  // Completed before it was dropped: waited for, never collected.
  auto ready = lock.try_lock_async(owner, lock_options().with_wait(0ms));
  ASSERT_EQ(ready.wait_for(2s), std::future_status::ready);
  EXPECT_TRUE(probe.exists("dropped"));
  ready = {};
  EXPECT_TRUE(eventually([&] { return !probe.exists("dropped"); }, 3s));
}

TEST_F(Listeners, AnAcquireDroppedWhileWaitingGivesTheHoldBackWhenItGetsIt) {
  Client other{fast_config(server)};
  Lock theirs = other.get_lock("dropped-waiting");
  theirs.lock();
  Lock lock = client.get_lock("dropped-waiting");
  thread_id owner = new_owner_id();
  {
    auto waiting = lock.lock_async(owner);
    ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{dropped-waiting}") > 0; }));
  }
  theirs.unlock();
  // The waiter takes it when it is free (and so stops waiting on the
  // channel), and gives it straight back.
  EXPECT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{dropped-waiting}") == 0; }, 3s));
  EXPECT_TRUE(eventually([&] { return !probe.exists("dropped-waiting"); }, 3s)) << "the abandoned hold is still there";
  EXPECT_TRUE(eventually([&] { return lock.valid_until(owner) == std::chrono::steady_clock::time_point{}; }, 2s));
  EXPECT_TRUE(theirs.try_lock());
  theirs.unlock();
}

TEST_F(Listeners, ACollectedHoldIsKept) {
  Lock lock = client.get_lock("collected");
  thread_id owner = new_owner_id();
  {
    auto future = lock.lock_async(owner);
    future.get();
    EXPECT_FALSE(future.valid());
  }
  EXPECT_TRUE(lock.is_held(owner));
  EXPECT_GT(lock.valid_until(owner), std::chrono::steady_clock::now());
  lock.unlock_async(owner).get();
}

TEST_F(Listeners, ADroppedMultiLockAcquireGivesEveryMemberBack) {
  MultiLock multi{client.get_lock("md:a"), client.get_lock("md:b")};
  thread_id owner = new_owner_id();
  { auto ignored = multi.lock_async(owner); }
  { auto ignored = multi.try_lock_async(owner, lock_options().with_wait(1s)); }
  EXPECT_TRUE(eventually([&] { return !probe.exists("md:a") && !probe.exists("md:b"); }, 3s))
      << "an abandoned hold is still there";
  EXPECT_TRUE(eventually([&] { return multi.valid_until(owner) == std::chrono::steady_clock::time_point{}; }, 2s));
  // Collected: kept.
  ASSERT_TRUE(multi.try_lock_async(owner, lock_options().with_wait(1s)).get());
  EXPECT_TRUE(probe.exists("md:a"));
  multi.unlock_async(owner).get();
}

TEST_F(Listeners, MultiLockCompletionCallbacks) {
  MultiLock multi{client.get_lock("mc:a"), client.get_lock("mc:b")};
  thread_id owner = new_owner_id();
  Event locked, queried, unlocked;
  std::error_code lock_error = make_error_code(errc::invalid_argument), unlock_error = lock_error;
  bool is_locked = false;
  multi.try_lock_async(owner, lock_options().with_wait(1s), [&](std::error_code error, bool acquired) {
    lock_error = error;
    EXPECT_TRUE(acquired);
    locked.set();
  });
  ASSERT_TRUE(locked.wait_for(3s));
  EXPECT_FALSE(lock_error);
  multi.is_locked_async([&](std::error_code, bool value) {
    is_locked = value;
    queried.set();
  });
  ASSERT_TRUE(queried.wait_for(3s));
  EXPECT_TRUE(is_locked);
  multi.unlock_async(owner, [&](std::error_code error) {
    unlock_error = error;
    unlocked.set();
  });
  ASSERT_TRUE(unlocked.wait_for(3s));
  EXPECT_FALSE(unlock_error);
  EXPECT_FALSE(probe.exists("mc:a"));
  Event refused;
  std::error_code not_owner;
  multi.unlock_async(owner, [&](std::error_code error) {
    not_owner = error;
    refused.set();
  });
  ASSERT_TRUE(refused.wait_for(3s));
  EXPECT_EQ(not_owner, errc::not_owner);
}

}  // namespace
}  // namespace warden::test
