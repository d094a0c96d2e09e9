// Bad input gets a typed error naming the lock and changes nothing in Redis.
#include <gtest/gtest.h>

#include "redis_probe.hpp"
#include "refusal.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

class BadInput : public ::testing::Test {
 protected:
  template <class Call>
  void expect_error(errc code, const std::string& lock_name, Call call) {
    expect_refusal(probe, code, lock_name, call);
  }

  RedisServer server;
  RedisProbe probe{server};
  Client client{fast_config(server)};
};

TEST_F(BadInput, EmptyNameIsRejected) {
  expect_error(errc::invalid_argument, "''", [&] { client.get_lock(""); });
}

TEST_F(BadInput, NonPositiveLeasesAreRejected) {
  Lock lock = client.get_lock("lease-check");
  expect_error(errc::invalid_argument, "lease-check", [&] { lock.lock(lock_options().with_lease(0ms)); });
  expect_error(errc::invalid_argument, "lease-check", [&] { lock.lock(lock_options().with_lease(-5ms)); });
  expect_error(errc::invalid_argument, "lease-check",
               [&] { lock.try_lock(lock_options().with_wait(1s).with_lease(0ms)); });
  expect_error(errc::invalid_argument, "lease-check",
               [&] { lock.try_lock(lock_options().with_wait(1s).with_lease(-1s)); });
  expect_error(errc::invalid_argument, "lease-check",
               [&] { lock.lock_async(1, lock_options().with_lease(0ms)).get(); });
  // Too long for Redis to expire (it would keep the hold for ever) or for the
  // client's clocks to represent.
  expect_error(errc::invalid_argument, "lease-check",
               [&] { lock.lock(lock_options().with_lease(std::chrono::hours::max())); });
  expect_error(errc::invalid_argument, "lease-check",
               [&] { lock.try_lock(lock_options().with_wait(0ms).with_lease(std::chrono::hours(24 * 365 * 11))); });
  EXPECT_FALSE(probe.exists("lease-check"));
}

TEST_F(BadInput, NegativeWaitIsRejected) {
  Lock lock = client.get_lock("wait-check");
  expect_error(errc::invalid_argument, "wait-check", [&] { lock.try_lock_for(-1ms); });
  expect_error(errc::invalid_argument, "wait-check",
               [&] { lock.try_lock_async(1, lock_options().with_wait(-10ms)).get(); });
  EXPECT_FALSE(probe.exists("wait-check"));
  // A deadline already past is one attempt, as for std::timed_mutex.
  EXPECT_TRUE(lock.try_lock_until(std::chrono::steady_clock::now() - 1s));
  lock.unlock();
}

TEST_F(BadInput, UnlockWhenNotHeldIsNotOwner) {
  Lock lock = client.get_lock("never-locked");
  expect_error(errc::not_owner, "never-locked", [&] { lock.unlock_async(current_thread_id()).get(); });
}

TEST_F(BadInput, UnlockFromAnotherThreadIsNotOwnerAndLeavesTheHold) {
  Lock lock = client.get_lock("mine");
  lock.lock();
  auto held = probe.hgetall("mine");
  std::thread([&] {
    expect_error(errc::not_owner, "mine", [&] { lock.unlock_async(current_thread_id()).get(); });
  }).join();
  EXPECT_EQ(probe.hgetall("mine"), held);
  lock.unlock();
}

TEST_F(BadInput, UnlockByAnotherClientIsNotOwner) {
  Lock lock = client.get_lock("theirs");
  lock.lock();
  Client other{fast_config(server)};
  expect_error(errc::not_owner, "theirs", [&] { other.get_lock("theirs").unlock_async(current_thread_id()).get(); });
  lock.unlock();
}

TEST_F(BadInput, OwnerIdZeroIsRejected) {
  Lock lock = client.get_lock("owner-zero");
  expect_error(errc::invalid_argument, "owner-zero", [&] { lock.lock_async(0).get(); });
  expect_error(errc::invalid_argument, "owner-zero", [&] { lock.unlock_async(0).get(); });
}

TEST_F(BadInput, WrongTypeKeyIsATypedError) {
  probe.command({"SET", "a-string", "x"});
  Lock lock = client.get_lock("a-string");
  expect_error(errc::wrong_type, "a-string", [&] { lock.try_lock(); });
  EXPECT_EQ(probe.get("a-string"), "x");
}

}  // namespace
}  // namespace warden::test
