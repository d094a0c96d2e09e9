// LostListeners: its state is made by the first add(), once, even when two
// threads add at the same time; notify and remove before that are no-ops.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <warden/error.hpp>

#include "lock/lost_listeners.hpp"

namespace {

using warden::LockLost;
using warden::detail::LostListeners;

LockLost lost() { return LockLost{"name", 1, make_error_code(warden::errc::lease_expired), "lost"}; }

TEST(LostListeners, NotifyAndRemoveBeforeAnyListenerDoNothing) {
  LostListeners listeners;
  listeners.remove(1);
  listeners.notify(lost(), {});
  SUCCEED();
}

TEST(LostListeners, AddedListenersAreToldUntilRemoved) {
  LostListeners listeners;
  int a = 0;
  int b = 0;
  auto ta = listeners.add([&](const LockLost&) { ++a; });
  listeners.add([&](const LockLost& event) {
    EXPECT_EQ(event.lock_name, "name");
    ++b;
  });
  listeners.notify(lost(), {});
  listeners.remove(ta);
  listeners.notify(lost(), {});
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
}

TEST(LostListeners, ARemovedListenerMayRemoveItselfWhileNotified) {
  LostListeners listeners;
  std::uint64_t token = 0;
  int calls = 0;
  token = listeners.add([&](const LockLost&) {
    ++calls;
    listeners.remove(token);  // must not wait for its own notification
  });
  listeners.notify(lost(), {});
  listeners.notify(lost(), {});
  EXPECT_EQ(calls, 1);
}

TEST(LostListeners, FirstAddsRacingFromManyThreadsAllLand) {
  for (int round = 0; round < 50; ++round) {
    LostListeners listeners;
    std::atomic<int> calls{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        while (!go.load()) std::this_thread::yield();
        listeners.add([&](const LockLost&) { calls.fetch_add(1); });
      });
    }
    go.store(true);
    for (auto& thread : threads) thread.join();
    listeners.notify(lost(), {});
    ASSERT_EQ(calls.load(), 4) << "round " << round;
  }
}

TEST(LostListeners, AThrowingListenerIsLoggedAndTheOthersStillRun) {
  LostListeners listeners;
  int after = 0;
  std::string logged;
  listeners.add([](const LockLost&) { throw std::runtime_error("boom"); });
  listeners.add([&](const LockLost&) { ++after; });
  listeners.notify(lost(), [&](warden::log_level, const std::string& text) { logged = text; });
  EXPECT_EQ(after, 1);
  EXPECT_NE(logged.find("boom"), std::string::npos);
}

}  // namespace
