// A blocking call that finds the I/O thread asleep sends its command from the
// calling thread. The sleeping loop must still honour what that call set up
// (its deadline timer), and calls must still run in the order they were made.
// A lone caller also waits for its own answer on the socket (the I/O thread
// stays parked): callbacks of other threads' calls, timers and a server
// closing the connection must still be handled, on the I/O thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "redis_cluster.hpp"
#include "redis_probe.hpp"
#include "redis_sentinel.hpp"
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

// With the server paused, try_lock() must end by its command deadline.
void expect_try_lock_times_out_while_paused(RedisServer& server, Lock& lock) {
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
  auto status = attempt.wait_for(10s);
  auto took = steady_clock::now() - started;
  server.resume();
  ASSERT_EQ(status, std::future_status::ready) << "the command deadline never fired";
  EXPECT_EQ(attempt.get(), errc::timed_out);
  EXPECT_LT(took, 3s);
}

// A try_lock() after idling (no call), on a paused server: unanswered,
// its only way out is its deadline timer, set by the calling thread while
// the loop thread slept.
void expect_a_deadline_after_idling(const std::string& name, void (*idle)(const Config&)) {
  RedisServer server;
  Config config = quiet_config(server);
  Client client{config};
  Lock lock = client.get_lock(name);
  ASSERT_TRUE(lock.try_lock());
  lock.unlock();
  idle(config);
  expect_try_lock_times_out_while_paused(server, lock);
}

TEST(InPlace, ADeadlineSetWhileTheLoopSleepsStillFires) {
  expect_a_deadline_after_idling("in-place-deadline", let_the_loop_fall_asleep);
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
    lock.lock_async(owner, {}, [&locked](std::error_code error) { locked.set_value(error); });
    // ...so this query, made after it, must see its hold.
    EXPECT_TRUE(lock.is_held(owner)) << "round " << round;
    ASSERT_FALSE(locked.get_future().get());
    lock.unlock_async(owner).get();
  }
}

// Where the observer's acquire events ran: a lone caller's answers are read
// on its own thread (the acquire event is reported where the answer is read).
// A call that finds the I/O thread still busy (connecting, its last turn not
// yet over on a loaded machine) leaves the answer to it; most do not: in
// some window of 50 pairs (up to 20 windows, for a loaded machine), at least
// 40 are read by the caller. `config`'s topology is the subject: a single
// server, a cluster, a Sentinel group's master.
void expect_a_lone_caller_reads_its_own_answers(Config config, const std::string& name) {
  std::atomic<int> on_caller{0};
  std::atomic<int> elsewhere{0};
  std::thread::id caller;
  std::mutex caller_mutex;
  config.observer.on_acquire = [&](const AcquireEvent&) {
    std::lock_guard<std::mutex> guard(caller_mutex);
    (std::this_thread::get_id() == caller ? on_caller : elsewhere) += 1;
  };
  Client client{config};
  Lock lock = client.get_lock(name);
  constexpr int window = 50;
  int pairs = 0;
  int best = 0;
  std::thread worker([&] {
    {
      std::lock_guard<std::mutex> guard(caller_mutex);
      caller = std::this_thread::get_id();
    }
    for (int round = 0; round < 20 && best < 40; ++round) {
      int before = on_caller;
      for (int i = 0; i < window; ++i, ++pairs) {
        lock.lock();
        lock.unlock();
      }
      best = std::max(best, on_caller - before);
    }
  });
  worker.join();
  EXPECT_EQ(on_caller + elsewhere, pairs);
  EXPECT_GE(best, 40) << "at best " << best << " of " << window << " acquires in a row read by the caller; "
                      << elsewhere << " of " << pairs << " answered on the I/O thread";
}

TEST(InPlace, ALoneCallerReadsItsOwnAnswers) {
  RedisServer server;
  expect_a_lone_caller_reads_its_own_answers(quiet_config(server), "in-place-lead");
}

// The same on a cluster: routing by slot changes nothing for a lone caller,
// nor does replica acknowledgement (on by default here: each write is
// followed by WAIT on a synced connection, and ROLE is asked now and then).
// (The slot-table reads, every 5 s, spoil a window or two at most.)
TEST(InPlace, ALoneCallerOnAClusterReadsItsOwnAnswers) {
  RedisCluster cluster;
  Config config = fast_config(Config::from_url(cluster.url()));
  config.health_check_interval = 1h;
  expect_a_lone_caller_reads_its_own_answers(config, "in-place-lead");
}

// The same on the master of a Sentinel group, with its +switch-master
// subscription open and replica acknowledgement on (its polls, every 5 s
// here, as the cluster's reads).
TEST(InPlace, ALoneCallerOnSentinelsMasterReadsItsOwnAnswers) {
  RedisSentinelGroup group;
  Config config = fast_sentinel_config(group.url());
  config.health_check_interval = 1h;
  config.sentinel.poll_interval = 5s;
  expect_a_lone_caller_reads_its_own_answers(config, "in-place-lead");
}

// A completion callback runs on the I/O thread, never on a user thread that
// happens to be waiting for its own answer on the sockets at the time.
TEST(InPlace, AnotherThreadsCallbackNeverRunsOnAWaitingCaller) {
  RedisServer server;
  Client client{quiet_config(server)};
  Lock busy = client.get_lock("in-place-busy");
  Lock other = client.get_lock("in-place-other");
  std::atomic<bool> stop{false};
  std::thread::id caller;
  std::promise<void> started;
  std::thread worker([&] {
    caller = std::this_thread::get_id();
    started.set_value();
    while (!stop) {
      busy.lock();
      busy.unlock();
    }
  });
  started.get_future().wait();
  std::set<std::thread::id> ran_on;
  thread_id owner = new_owner_id();
  for (int round = 0; round < 200; ++round) {
    std::promise<std::thread::id> done;
    other.lock_async(owner, {}, [&done](std::error_code) { done.set_value(std::this_thread::get_id()); });
    ran_on.insert(done.get_future().get());
    std::promise<std::thread::id> released;
    other.unlock_async(owner, [&released](std::error_code) { released.set_value(std::this_thread::get_id()); });
    ran_on.insert(released.get_future().get());
  }
  stop = true;
  worker.join();
  EXPECT_EQ(ran_on.count(caller), 0u) << "a callback ran on the thread waiting in lock()";
  EXPECT_EQ(ran_on.count(std::this_thread::get_id()), 0u);
  EXPECT_EQ(ran_on.size(), 1u) << "callbacks ran on more than the I/O thread";
}

// Time is the subject: the watchdog renews a hold every 100 ms while another
// thread's blocking calls keep the sockets busy with their own answers.
TEST(InPlace, RenewalsRunWhileACallerWaitsForItsAnswers) {
  RedisServer server;
  Config config = quiet_config(server);
  config.lock_watchdog_timeout = 300ms;
  std::atomic<int> lost{0};
  config.observer.on_hold_lost = [&](const HoldLostEvent&) { ++lost; };
  Client client{config};
  Lock held = client.get_lock("in-place-held");
  held.lock();
  Lock busy = client.get_lock("in-place-busy");
  auto until = steady_clock::now() + 1500ms;
  int pairs = 0;
  while (steady_clock::now() < until) {
    busy.lock();
    busy.unlock();
    ++pairs;
  }
  EXPECT_GT(pairs, 0);
  EXPECT_EQ(lost.load(), 0);
  RedisProbe probe(server);
  EXPECT_TRUE(probe.exists("in-place-held")) << "the held lock expired: renewals did not run";
  EXPECT_TRUE(held.is_held(current_thread_id()));
  held.unlock();
}

// With nothing in flight the I/O thread does not read the sockets, but it
// still notices the server closing one and reconnects at once, not at the
// next health probe (an hour away here) or the next command.
TEST(InPlace, AConnectionClosedWhileIdleIsNoticedAtOnce) {
  RedisServer server;
  Config config = quiet_config(server);
  Event command_down;
  Event command_up_again;
  config.observer.on_connection = [&](const ConnectionEvent& event) {
    if (event.role != connection_role::command) return;
    if (event.state == connection_state::down) command_down.set();
    if (event.state == connection_state::up && event.reconnect) command_up_again.set();
  };
  Client client{config};
  Lock lock = client.get_lock("in-place-closed");
  ASSERT_TRUE(lock.try_lock());
  lock.unlock();
  let_the_loop_fall_asleep(config);
  RedisProbe probe(server);
  probe.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  EXPECT_TRUE(command_down.wait_for(2s)) << "the closed connection went unnoticed";
  EXPECT_TRUE(command_up_again.wait_for(2s));
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

// Time is the subject: a client used rarely. The I/O thread has been parked
// for longer than command_timeout when the call comes; its deadline must
// still count from the call, and fire though the caller waits itself.
TEST(InPlace, ADeadlineSetAfterALongIdleStillFires) {
  expect_a_deadline_after_idling("in-place-long-idle",
                                 [](const Config& config) { std::this_thread::sleep_for(config.command_timeout * 6); });
}

// unlock() of a hold whose key was deleted behind the client's back tells
// the lost-lock listeners, on the I/O thread, before unlock() returns.
TEST(InPlace, AHoldFoundLostByUnlockIsReportedOnTheIoThreadFirst) {
  RedisServer server;
  Client client{quiet_config(server)};
  RedisProbe probe(server);
  Lock lock = client.get_lock("in-place-lost");
  std::atomic<int> on_caller{0};
  std::atomic<int> elsewhere{0};
  auto caller = std::this_thread::get_id();
  auto watch = lock.subscribe_lost(
      [&](const LockLost&) { (std::this_thread::get_id() == caller ? on_caller : elsewhere) += 1; });
  for (int round = 1; round <= 5; ++round) {
    lock.lock();
    probe.command({"DEL", "in-place-lost"});
    lock.unlock();
    EXPECT_EQ(on_caller + elsewhere, round) << "unlock() returned before the listener ran";
  }
  EXPECT_EQ(on_caller.load(), 0) << "a listener ran on the thread in unlock()";
}

}  // namespace
}  // namespace warden::test
