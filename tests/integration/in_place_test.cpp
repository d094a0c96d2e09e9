// A blocking call that finds the I/O thread asleep sends its command from the
// calling thread. The sleeping loop must still honour what that call set up
// (its deadline timer), and calls must still run in the order they were made.
#include <gtest/gtest.h>

#include <future>

#include "test_env.hpp"

namespace warden::test {
namespace {

using std::chrono::steady_clock;

// A Client whose I/O thread has nothing to wake up for during a test: no
// health probe for an hour.
Config quiet_config(const RedisServer& server) {
  Config config = fast_config(server);
  config.health_check_interval = 1h;
  config.command_timeout = 300ms;
  config.retry_attempts = 0;
  return config;
}

// Time is the subject: once the deadlines of the commands sent so far have
// passed, the I/O thread has no timer due before the hour is up and sleeps.
void let_the_loop_fall_asleep(const Config& config) { std::this_thread::sleep_for(config.command_timeout + 200ms); }

TEST(InPlace, ADeadlineSetWhileTheLoopSleepsStillFires) {
  RedisServer server;
  Config config = quiet_config(server);
  Client client{config};
  Lock lock = client.get_lock("in-place-deadline");
  ASSERT_TRUE(lock.try_lock());
  lock.unlock();
  let_the_loop_fall_asleep(config);

  server.pause();
  auto started = steady_clock::now();
  auto attempt = std::async(std::launch::async, [&]() -> std::error_code {
    try {
      lock.try_lock();
      return {};
    } catch (const Error& error) {
      return error.code();
    }
  });
  // Unanswered, the command's only way out is its deadline timer, which the
  // calling thread set while the loop slept until the next hour.
  auto status = attempt.wait_for(10s);
  auto took = steady_clock::now() - started;
  server.resume();
  ASSERT_EQ(status, std::future_status::ready) << "the command deadline never fired";
  EXPECT_EQ(attempt.get(), errc::timed_out);
  EXPECT_LT(took, 3s);
}

TEST(InPlace, ABoundedWaitStartedWhileTheLoopSleepsEndsAtItsBound) {
  RedisServer server;
  Client holder{fast_config(server)};
  Lock held = holder.get_lock("in-place-wait");
  held.lock();

  Config config = quiet_config(server);
  Client client{config};
  Lock warm_up = client.get_lock("in-place-warm-up");
  ASSERT_TRUE(warm_up.try_lock());
  warm_up.unlock();
  let_the_loop_fall_asleep(config);

  Lock lock = client.get_lock("in-place-wait");
  auto started = steady_clock::now();
  auto attempt = std::async(std::launch::async, [&] { return lock.try_lock_for(300ms); });
  auto status = attempt.wait_for(10s);
  auto took = steady_clock::now() - started;
  held.unlock();
  ASSERT_EQ(status, std::future_status::ready) << "the bounded wait never ended";
  EXPECT_FALSE(attempt.get());
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 3s);
}

TEST(InPlace, ABlockingCallDoesNotOvertakeACallQueuedBeforeIt) {
  RedisServer server;
  Config config = fast_config(server);
  Client client{config};
  Lock lock = client.get_lock("in-place-order");
  thread_id owner = current_thread_id();
  for (int round = 0; round < 50; ++round) {
    std::promise<std::error_code> locked;
    // Queued for the I/O thread (a completion callback must run there)...
    lock.lock_async(owner, [&locked](std::error_code error) { locked.set_value(error); });
    // ...so this query, made after it, must see its hold.
    EXPECT_TRUE(lock.is_held_by_thread(owner)) << "round " << round;
    ASSERT_FALSE(locked.get_future().get());
    lock.unlock_async(owner).get();
  }
}

}  // namespace
}  // namespace warden::test
