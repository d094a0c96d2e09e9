// Overload: a burst far beyond what the server answers within
// command_timeout. The first attempts succeed at the server's pace; the rest
// fail with errc::timed_out before they are written (no script reaches the
// server for them, so none is settled), all near the deadline; a queued
// release is still sent and answered.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
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

// Connected, scripts loaded and the first use of a lock paid: a burst that
// follows measures nothing but itself.
void warm_up(Client& client, const std::string& name) {
  client.get_lock(name).lock(lock_options().with_lease(1s));
  client.get_lock(name).unlock();
}

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
  warm_up(client, "overload-warm-up");
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
    // multiple of it: nobody waited for settling or a second try. Only the
    // plain build can tell: a sanitizer build's I/O thread spends seconds
    // just failing 30,000 calls, in proportion to the machine's speed, so
    // there the time says nothing about the deadlines.
    if (!sanitized_build) {
      EXPECT_LT(finished - issued, 2 * config.command_timeout + 500ms)
          << "issuing took " << elapsed_ms(started) - (finished - issued) / 1ms << " ms";
    }
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

// What lock_async callbacks saw during a burst (they run on the I/O thread).
struct BurstTally {
  std::mutex mutex;
  std::condition_variable all_done;
  std::size_t done = 0;
  std::size_t timed_out = 0;
  std::size_t other = 0;
  std::string other_text;
  std::vector<std::chrono::steady_clock::time_point> successes;
  std::chrono::steady_clock::time_point first_failure = std::chrono::steady_clock::time_point::max();
  bool first_ten_acquired = true;  // the calls made first by each thread
};

// The stall this guards against: a burst of calls is a burst of tasks for
// the I/O thread, and run back to back they kept it off the socket while
// the server, its window of commands answered, waited for the next. At a
// server's full speed (not slowed) the successes must come at the pace the
// same Client gets from the server for one window's worth of calls, without
// long silences, until the deadlines end the rest unsent.
TEST(Overload, ABurstKeepsAFastServerBusyUntilTheDeadlines) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  // A fast machine answers 100,000 acquires in a second.
  config.command_timeout = 400ms;
  Client client{config};
  warm_up(client, "pace-warm-up");

  // The pace: one window of calls at once, all written at once, none
  // queued; the time until the last answer is the server's (and this
  // Client's) work on a full window.
  auto pace_started = std::chrono::steady_clock::now();
  {
    std::vector<AcquireFuture<void>> calls;
    for (std::size_t i = 0; i < window; ++i) {
      calls.push_back(
          client.get_lock("pace-" + std::to_string(i)).lock_async(new_owner_id(), lock_options().with_lease(30s)));
    }
    for (auto& call : calls) call.get();
  }
  const double window_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - pace_started).count();
  const double pace = static_cast<double>(window) / window_s;
  probe.command({"CONFIG", "RESETSTAT"});

  // Far more than the server answers within a deadline, issued by two
  // threads with callbacks.
  constexpr std::size_t burst = 100'000;
  BurstTally seen;
  auto done = [&seen](std::error_code error) {
    auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> guard(seen.mutex);
    if (!error) {
      seen.successes.push_back(now);
    } else if (error == errc::timed_out) {
      ++seen.timed_out;
      seen.first_failure = std::min(seen.first_failure, now);
    } else if (seen.other++ == 0) {
      seen.other_text = error.message();
    }
    if (++seen.done == burst) seen.all_done.notify_all();
  };
  auto issue = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      completion<void> then = done;
      if (i < from + 10) {
        then = [&seen, done](std::error_code error) {
          if (error) {
            std::lock_guard<std::mutex> guard(seen.mutex);
            seen.first_ten_acquired = false;
          }
          done(error);
        };
      }
      client.get_lock("burst-" + std::to_string(i)).lock_async(new_owner_id(), lock_options().with_lease(30s), then);
    }
  };
  auto started = std::chrono::steady_clock::now();
  std::thread other([&] { issue(burst / 2, burst); });
  issue(0, burst / 2);
  other.join();
  {
    std::unique_lock<std::mutex> guard(seen.mutex);
    ASSERT_TRUE(seen.all_done.wait_for(guard, 60s, [&] { return seen.done == burst; })) << seen.done << " answered";
  }
  ASSERT_EQ(seen.other, 0u) << seen.other_text;
  ASSERT_FALSE(seen.successes.empty());
  std::sort(seen.successes.begin(), seen.successes.end());
  const std::size_t acquired = seen.successes.size();
  const double busy_s = std::chrono::duration<double>(seen.successes.back() - started).count();
  // Until the first call fails (its deadline reached before the I/O thread
  // or the window got to it), every call still has time: the successes must
  // come without long silences. Afterwards a loaded machine's I/O thread may
  // spend a while failing calls that waited too long, in call order.
  std::chrono::steady_clock::duration longest_silence = seen.successes.front() - started;
  for (std::size_t i = 1; i < acquired && seen.successes[i] < seen.first_failure; ++i) {
    longest_silence = std::max(longest_silence, seen.successes[i] - seen.successes[i - 1]);
  }
  SCOPED_TRACE(::testing::Message() << "pace " << static_cast<long>(pace) << "/s (a window in " << window_s * 1000
                                    << " ms); acquired " << acquired << " in " << busy_s * 1000 << " ms ("
                                    << static_cast<long>(static_cast<double>(acquired) / busy_s) << "/s), timed out "
                                    << seen.timed_out << ", longest silence " << longest_silence / 1ms << " ms");
  EXPECT_GT(seen.timed_out, 0u) << "the burst was more than the server answers in time";
  EXPECT_TRUE(seen.first_ten_acquired) << "the first attempts go first and succeed";
  // Successes at a fair share of the pace from the first call to the last
  // success. On a 2-core machine the issuing threads take cores from the
  // server and the I/O thread, which a window alone did not: a burst gets
  // a quarter to a half of the pace there (a loop kept off the socket by its
  // tasks got a tenth to a quarter; the silences below tell the two apart).
  EXPECT_GE(static_cast<double>(acquired), 0.15 * pace * busy_s);
  // The server is never left waiting for long: no stretch without a success
  // before the first failure longer than a few windows' work (a loop kept
  // off the socket left stretches of half a second and more).
  EXPECT_LT(longest_silence, std::chrono::duration<double>(4 * window_s) + 200ms);
  // What failed was never sent: the scripts the server ran are the
  // successes and what was lost in flight, and nothing runs after the burst
  // to settle anything. Each lost acquire costs its script and its
  // settling. Up to a window is lost each time the server falls behind the
  // pace the window learned; on a shared 2-core machine (another test
  // beside this one) that happens a few times in a burst: 4.2 windows' worth
  // was seen there, against 0 to 1.3 on a quiet one. Written whole, the
  // burst would lose tens of windows.
  long long scripts = probe.script_calls();
  EXPECT_LE(scripts, static_cast<long long>(acquired + 8 * window));
  std::this_thread::sleep_for(2 * config.command_timeout);
  EXPECT_LE(probe.script_calls() - scripts, static_cast<long long>(4 * window));
  EXPECT_EQ(probe.keys("burst-*").size(), acquired);
}

// A call is answered within about command_timeout of when it was made, not
// of when the I/O thread got to it: one whose task waited that long behind a
// busy I/O thread (here a callback that holds it, which stands for a burst
// of work) fails unsent, and nothing reaches the server for it.
TEST(Overload, ACallThatWaitedPastItsDeadlineForTheIoThreadFailsUnsent) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.command_timeout = 500ms;
  Client client{config};
  warm_up(client, "waited-warm-up");
  probe.command({"CONFIG", "RESETSTAT"});

  Event holding;
  Event let_go;
  client.get_lock("waited-busy").lock_async(new_owner_id(), lock_options().with_lease(10s), [&](std::error_code) {
    holding.set();
    let_go.wait_for(10s);
  });
  ASSERT_TRUE(holding.wait_for(5s));
  // Made while the I/O thread is held: its task waits.
  auto late = client.get_lock("waited-late").lock_async(new_owner_id(), lock_options().with_lease(10s));
  auto made = std::chrono::steady_clock::now();
  // The scenario itself: the I/O thread stays busy past the call's deadline.
  std::this_thread::sleep_until(made + config.command_timeout + 100ms);
  let_go.set();
  try {
    late.get();
    ADD_FAILURE() << "a call made " << config.command_timeout.count() << " ms before the I/O thread got to it "
                  << "was sent and acquired";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::timed_out) << error.what();
    EXPECT_NE(std::string(error.what()).find("not sent"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(probe.exists("waited-late"));
  // The held call's acquire alone reached the server.
  EXPECT_EQ(probe.script_calls(), 1);
  // The I/O thread, free again, serves a new call as ever.
  client.get_lock("waited-next").lock_async(new_owner_id(), lock_options().with_lease(10s)).get();
  EXPECT_TRUE(probe.exists("waited-next"));
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
