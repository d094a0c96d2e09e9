// Overload: a burst far beyond what the server answers within
// command_timeout. The first attempts succeed at the server's pace; the rest
// fail with errc::timed_out before they are written (no script reaches the
// server for them, so none is settled), all near the deadline; a queued
// release is still sent and answered.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

// Makes a server slow: stopped (SIGSTOP) four milliseconds in every five
// while it lives, so that it answers a fifth as fast as it can. Each stop is
// brief, far below any deadline here: a slow server, not a dead one.
class Slowed {
 public:
  explicit Slowed(RedisServer& server) : server_(server), thread_([this] { run(); }) {}
  ~Slowed() {
    done_ = true;
    thread_.join();
  }
  Slowed(const Slowed&) = delete;
  Slowed& operator=(const Slowed&) = delete;

 private:
  void run() {
    while (!done_) {
      server_.pause();
      std::this_thread::sleep_for(4ms);
      server_.resume();
      std::this_thread::sleep_for(1ms);
    }
  }

  RedisServer& server_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// Commands a connection has written and unanswered, at most
// (ConnectionOptions::max_in_flight).
constexpr std::size_t window = 1024;

struct Outcomes {
  std::size_t acquired = 0;
  std::size_t not_sent = 0;        // errc::timed_out, never written
  std::size_t lost_in_flight = 0;  // errc::timed_out after it was written
  std::size_t other = 0;           // anything else: a failure of the test
  std::string other_text;
  bool first_ten_acquired = true;
};

TEST(Overload, ABurstBeyondTheDeadlineFailsUnsentWhileTheFirstSucceed) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.command_timeout = 500ms;
  Client client{config};
  // Connected, scripts loaded: the burst measures nothing but itself.
  client.get_lock("overload-warm-up").lock(lock_options().with_lease(1s));
  client.get_lock("overload-warm-up").unlock();
  probe.command({"CONFIG", "RESETSTAT"});

  constexpr std::size_t burst = 30'000;
  std::vector<AcquireFuture<void>> calls;
  calls.reserve(burst);
  auto started = std::chrono::steady_clock::now();
  Outcomes seen;
  {
    Slowed slowed(server);
    // Two threads issue at once, as an application's would.
    std::vector<AcquireFuture<void>> second_half;
    second_half.reserve(burst / 2);
    std::thread other([&] {
      for (std::size_t i = burst / 2; i < burst; ++i) {
        second_half.push_back(client.get_lock("overload-" + std::to_string(i))
                                  .lock_async(new_owner_id(), lock_options().with_lease(30s)));
      }
    });
    for (std::size_t i = 0; i < burst / 2; ++i) {
      calls.push_back(
          client.get_lock("overload-" + std::to_string(i)).lock_async(new_owner_id(), lock_options().with_lease(30s)));
    }
    other.join();
    for (auto& call : second_half) calls.push_back(std::move(call));
    auto issued = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < calls.size(); ++i) {
      try {
        calls[i].get();
        ++seen.acquired;
      } catch (const Error& error) {
        if (i < 10) seen.first_ten_acquired = false;
        std::string text = error.what();
        if (error.code() != errc::timed_out) {
          if (seen.other++ == 0) seen.other_text = text;
        } else if (text.find("not sent") != std::string::npos) {
          ++seen.not_sent;
        } else {
          ++seen.lost_in_flight;
        }
      }
    }
    auto finished = std::chrono::steady_clock::now();
    // Every caller had its answer near its command's deadline, not at a
    // multiple of it: nobody waited for settling or a second try.
    EXPECT_LT(finished - issued, 2 * config.command_timeout + 500ms)
        << "issuing took " << elapsed_ms(started) - (finished - issued) / 1ms << " ms";
  }
  SCOPED_TRACE(::testing::Message() << "acquired " << seen.acquired << ", not sent " << seen.not_sent
                                    << ", lost in flight " << seen.lost_in_flight);
  EXPECT_EQ(seen.other, 0u) << seen.other_text;
  // The burst was more than the server answers in time, and what it could
  // not answer was never sent.
  EXPECT_GT(seen.not_sent, 0u);
  EXPECT_TRUE(seen.first_ten_acquired) << "the first attempts go first and succeed";
  EXPECT_GT(seen.acquired, 1'000u) << "the server works at its pace on what it can answer";
  // Only what was written can be lost: at most a window's worth.
  EXPECT_LE(seen.lost_in_flight, window);

  // Once the lost attempts are settled, a key exists for each acquire that
  // succeeded and for no other: what failed unsent never ran.
  EXPECT_TRUE(eventually([&] { return probe.keys("overload-*").size() == seen.acquired; }, 10s))
      << probe.keys("overload-*").size() << " lock keys for " << seen.acquired << " acquired";
  // Scripts at the server: the acquires that succeeded, and for an attempt
  // lost in flight its settle (and a try after it); nothing for the ones
  // never sent.
  long long scripts = probe.script_calls();
  EXPECT_LE(scripts, static_cast<long long>(seen.acquired + 4 * (seen.lost_in_flight + window)));
  // Nothing is left to settle in the background either.
  std::this_thread::sleep_for(2 * config.command_timeout);
  EXPECT_LE(probe.script_calls() - scripts, static_cast<long long>(4 * window));
}

TEST(Overload, QueuedReleasesAreSentAndAnswered) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.command_timeout = 3s;
  Client client{config};
  // Twice a connection's window: half of the releases wait their turn.
  constexpr std::size_t holds = 2 * window;
  thread_id owner = new_owner_id();
  std::vector<AcquireFuture<void>> taken;
  for (std::size_t i = 0; i < holds; ++i) {
    taken.push_back(client.get_lock("release-" + std::to_string(i)).lock_async(owner, lock_options().with_lease(60s)));
  }
  for (auto& call : taken) call.get();
  ASSERT_EQ(probe.keys("release-*").size(), holds);

  std::vector<std::future<void>> released;
  {
    Slowed slowed(server);
    for (std::size_t i = 0; i < holds; ++i)
      released.push_back(client.get_lock("release-" + std::to_string(i)).unlock_async(owner));
    std::size_t failed = 0;
    for (auto& call : released) {
      try {
        call.get();
      } catch (const Error& error) {
        if (failed++ == 0) ADD_FAILURE() << error.what();
      }
    }
    EXPECT_EQ(failed, 0u);
  }
  EXPECT_TRUE(probe.keys("release-*").empty());
}

}  // namespace
}  // namespace warden::test
