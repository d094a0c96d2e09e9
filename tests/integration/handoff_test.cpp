// The contended hand-off: a waiter joining a channel its Client already has
// confirmed subscribed joins before its first try, so it needs no re-try
// after subscribing, and an unlock landing while that try is in flight still
// reaches it.
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

std::string channel_of(const std::string& name) { return "redisson_lock__channel:{" + name + "}"; }

// Loads the scripts a count below takes in: a script's first use costs an
// EVALSHA answered NOSCRIPT and then an EVAL, two calls instead of one.
void load_scripts(Client& client) {
  Lock lock = client.get_lock("load-scripts");
  lock.lock();
  lock.is_locked();
  lock.unlock();
}

// The observer's acquire events, by owner.
struct Acquires {
  std::mutex mutex;
  std::map<thread_id, AcquireEvent> by_owner;

  void watch(Config& config) {
    config.observer.on_acquire = [this](const AcquireEvent& event) {
      std::lock_guard<std::mutex> guard(mutex);
      auto& kept = by_owner[event.owner];
      kept = event;
      kept.lock_name = {};  // a view into the caller's string: not kept
    };
  }
  AcquireEvent of(thread_id owner) {
    std::lock_guard<std::mutex> guard(mutex);
    return by_owner.at(owner);
  }
};

TEST(Handoff, ASecondWaiterOnASubscribedChannelSendsNoReTryAfterJoining) {
  RedisServer server;
  RedisProbe probe(server);
  Client holder_client{fast_config(server)};
  Acquires acquires;
  Config config = fast_config(server);
  acquires.watch(config);
  Client client{config};
  load_scripts(client);
  Lock held = holder_client.get_lock("handoff");
  Lock lock = client.get_lock("handoff");
  held.lock(lock_options().with_lease(30s));  // a 30 s lease: only the unlock messages can explain a prompt hand-off

  auto base = probe.script_calls();
  thread_id first = new_owner_id(), second = new_owner_id();
  auto first_waits = lock.lock_async(first);
  // The first waiter finds nobody subscribed: a try, the subscription, a
  // re-try (an unlock between the two would have been missed); then it sleeps.
  ASSERT_TRUE(
      eventually([&] { return subscribers(probe, channel_of("handoff")) == 1 && probe.script_calls() == base + 2; }));

  auto before = probe.script_calls();
  auto second_waits = lock.lock_async(second);
  // Two inspections on the same command connection, one after the other:
  // whatever the second waiter sent before going to sleep (a re-try after
  // its try's answer, if it still made one) has run once the second returns.
  EXPECT_TRUE(lock.is_locked());
  EXPECT_TRUE(lock.is_locked());
  EXPECT_EQ(probe.script_calls() - before, 1 + 2) << "the second waiter re-tried after joining a subscribed channel";

  auto released_at = std::chrono::steady_clock::now();
  held.unlock();  // wakes the first waiter (the oldest asleep)
  ASSERT_EQ(first_waits.wait_for(5s), std::future_status::ready);
  first_waits.get();
  lock.unlock_async(first).get();  // wakes the second
  ASSERT_EQ(second_waits.wait_for(5s), std::future_status::ready);
  second_waits.get();
  EXPECT_LT(elapsed_ms(released_at), 5'000);
  lock.unlock_async(second).get();

  // The second acquisition: its try, the woken re-try that took the lock,
  // and its release; the rest are the holder's and the first waiter's.
  auto event = acquires.of(second);
  EXPECT_EQ(event.attempts, 2);
  EXPECT_EQ(event.woken_by_message, 1);
  EXPECT_EQ(event.last_wake, wake_cause::message);
  EXPECT_EQ(acquires.of(first).attempts, 3);
  // 2 inspections; the holder's release; the first waiter's re-try and
  // release; the second's two tries and release.
  EXPECT_EQ(probe.script_calls() - before, 2 + 1 + 2 + 3);
  EXPECT_FALSE(probe.exists("handoff"));
}

TEST(Handoff, AnUnlockWhileAnEarlyJoinedTryIsInFlightIsNotMissed) {
  RedisServer server;
  RedisProbe probe(server);
  Acquires acquires;
  Config config = fast_config(server);
  acquires.watch(config);
  Client client{config};
  load_scripts(client);
  // Both arrival orders of the unlock message and the try's answer occur.
  for (int round = 0; round < 20; ++round) {
    std::string name = "in-flight-" + std::to_string(round);
    Lock lock = client.get_lock(name);
    thread_id holder = new_owner_id(), keeper = new_owner_id(), waiter = new_owner_id();
    lock.lock_async(holder, lock_options().with_lease(30s)).get();  // 30 s: a missed unlock would cost the whole lease

    // A waiter that keeps the channel subscribed: try, subscribe, re-try, sleep.
    auto base = probe.script_calls();
    cancel_source keeping;
    auto kept = lock.lock_async(keeper, lock_options().with_cancel(keeping.token()));
    ASSERT_TRUE(eventually([&] {
      return subscribers(probe, channel_of(name)) == 1 && probe.script_calls() == base + 2;
    })) << round;

    // In this order on the I/O thread: the waiter joins the confirmed channel
    // and sends its try; the keeper leaves, so the waiter is alone on the
    // channel; the holder's release goes out on the same connection after the
    // try, so it runs on the server after the try found the lock held, and its
    // unlock message may come before or after the try's answer.
    auto start = std::chrono::steady_clock::now();
    auto waits = lock.lock_async(waiter);
    keeping.cancel();
    auto released = lock.unlock_async(holder);

    ASSERT_EQ(waits.wait_for(5s), std::future_status::ready) << "round " << round << ": the unlock was missed";
    waits.get();
    EXPECT_LT(elapsed_ms(start), 2'000) << round;
    released.get();
    EXPECT_THROW(kept.get(), Error) << round;
    auto event = acquires.of(waiter);
    EXPECT_EQ(event.attempts, 2) << round;
    // Woken by the unlock message (a permit when it came before the answer):
    // the waiter had joined before its try.
    EXPECT_EQ(event.woken_by_message, 1) << round;
    lock.unlock_async(waiter).get();
    EXPECT_FALSE(probe.exists(name)) << round;
  }
}

}  // namespace
}  // namespace warden::test
