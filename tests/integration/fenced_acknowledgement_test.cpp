// FencedLock tokens with replica acknowledgement (Config::replica_sync): no
// token is handed out before a replica has the INCR that made it. With the
// replica stopped (SIGSTOP) WAIT cannot be acknowledged, and the acquire
// must not return the token it drew: not from the first try, and not from
// the settling of a try whose reply was lost (the settle draws a token of
// its own, which must wait as well). Once acknowledged, the replica has the
// token by the time the call returns it.
#include <gtest/gtest.h>

#include <warden/warden.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

class FencedAcknowledgement : public ::testing::Test, protected MasterWithReplica {
 protected:
  void SetUp() override { ASSERT_TRUE(replica_online(probe)); }
  Config config() {
    Config out = fast_config(master);
    out.replica_sync.mode = replica_sync_mode::at_least_one;
    out.replica_sync.timeout = 300ms;
    out.observer.on_acquire = [this](const AcquireEvent& event) { misses += event.replica_sync_misses; };
    return out;
  }
  long long counter(RedisProbe& on, const std::string& name) {
    auto value = on.get("redisson_lock_token:{" + name + "}");
    return value ? std::stoll(*value) : 0;
  }

  std::atomic<int> misses{0};
};

TEST_F(FencedAcknowledgement, NoTokenIsReturnedThatNoReplicaHas) {
  Client client{config()};
  FencedLock lock = client.get_fenced_lock("fenced-ack");
  auto first = lock.lock_and_get_token();
  {
    RedisProbe replica_probe(replica);
    EXPECT_GE(counter(replica_probe, "fenced-ack"), first) << "returned before the replica had it";
  }
  lock.unlock();

  replica.pause();
  try {
    auto token = lock.try_lock_and_get_token(lock_options().with_wait(1200ms));
    ADD_FAILURE() << "a token no replica has was returned: " << (token ? std::to_string(*token) : "none");
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::replica_sync_failed) << error.what();
  }
  // Tokens were drawn on the master (each try took the lock, then gave it
  // back): none of them was returned.
  auto drawn = counter(probe, "fenced-ack");
  EXPECT_GE(drawn, first + 2);
  EXPECT_GE(misses.load(), 2);
  EXPECT_FALSE(probe.exists("fenced-ack"));

  replica.resume();
  auto next = lock.lock_and_get_token();
  EXPECT_GT(next, drawn);
  RedisProbe replica_probe(replica);
  EXPECT_GE(counter(replica_probe, "fenced-ack"), next) << "returned before the replica had it";
  lock.unlock();
}

// The try's reply is lost: the master stops (SIGSTOP) with the try in
// flight, for longer than command_timeout. The Client settles the attempt
// (fenced_resolve_acquire, keep): once the master runs again the try and
// the settle both run, and the settle draws a new token — which the stopped
// replica cannot acknowledge either, so it is taken back, not returned.
TEST_F(FencedAcknowledgement, ASettledAttemptsTokenWaitsForTheReplicaToo) {
  Config cfg = config();
  cfg.command_timeout = 400ms;
  cfg.health_check_interval = 10s;  // the stop is a slow reply, not a dead link
  cfg.replica_sync.timeout = 1s;
  Client client{cfg};
  FencedLock lock = client.get_fenced_lock("fenced-settle");
  auto first = lock.lock_and_get_token();
  lock.unlock();

  replica.pause();
  master.pause();
  auto pending =
      std::async(std::launch::async, [&] { return lock.try_lock_and_get_token(lock_options().with_wait(2500ms)); });
  // Past the try's command_timeout: its outcome is unknown and a settle is
  // on its way (or queued behind it) when the master runs again.
  std::this_thread::sleep_for(700ms);
  master.resume();
  try {
    auto token = pending.get();
    ADD_FAILURE() << "a token no replica has was returned: " << (token ? std::to_string(*token) : "none");
  } catch (const Error& error) {
    // Short of replicas to the end of the wait, or the last settle still
    // unanswered at it: either way an error, never the token.
    EXPECT_TRUE(error.code() == errc::replica_sync_failed || error.code() == errc::timed_out) << error.what();
  }
  // The try ran (its INCR), and what it took was taken back.
  EXPECT_GT(counter(probe, "fenced-settle"), first);
  // A take-back still unanswered when the call ended goes on behind it.
  EXPECT_TRUE(eventually([&] { return !probe.exists("fenced-settle"); }, 5s));

  replica.resume();
  auto next = lock.lock_and_get_token();
  RedisProbe replica_probe(replica);
  EXPECT_GE(counter(replica_probe, "fenced-settle"), next);
  lock.unlock();
}

}  // namespace
}  // namespace warden::test
