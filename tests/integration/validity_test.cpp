// valid_until() and valid_for() of every lock kind, at the moments a holder
// checks them before a critical write: before any hold, while held, after
// unlock(), and after the hold was lost (its key deleted behind the holder,
// the lost-lock listener told). Without a hold the natural check
//   valid_until() - steady_clock::now() > margin
// must be false and must not overflow (time_point::min() made it overflow and
// read as some 292 years left), and valid_for() must be zero.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

using steady = std::chrono::steady_clock;

// Renewed every 300 ms: a deleted key is noticed within about that.
constexpr auto lease = 900ms;

Config validity_config(const RedisServer& server) {
  Config config = fast_config(server);
  config.lock_watchdog_timeout = lease;
  return config;
}

// One lock kind, seen by the calling thread.
struct Subject {
  std::function<void()> take;
  std::function<void()> release;
  std::function<steady::time_point()> valid_until;
  std::function<std::chrono::milliseconds()> valid_for;
  std::function<LostSubscription(lost_listener)> subscribe_lost;
  // Makes the hold lost on the server(s), behind the holder's back.
  std::function<void()> delete_behind;
};

template <class L>
Subject subject_of(L lock, std::function<void()> delete_behind) {
  Subject s;
  s.take = [lock]() mutable { lock.lock(); };
  s.release = [lock]() mutable { lock.unlock(); };
  s.valid_until = [lock] { return lock.valid_until(); };
  s.valid_for = [lock] { return lock.valid_for(); };
  s.subscribe_lost = [lock](lost_listener listener) mutable { return lock.subscribe_lost(std::move(listener)); };
  s.delete_behind = std::move(delete_behind);
  return s;
}

// What a holder sees without a hold: nothing left, whichever way it asks.
void expect_no_validity(Subject& subject, const std::string& when) {
  SCOPED_TRACE(when);
  auto until = subject.valid_until();
  // The check a holder makes before a critical write, as users write it.
  EXPECT_FALSE(subject.valid_until() - steady::now() > 1s) << "the check passes without a hold";
  EXPECT_FALSE(steady::now() + 1s < subject.valid_until());
  // The difference itself is sane: in the past, and no further back than the
  // clock's epoch.
  auto now = steady::now();
  auto left = until - now;
  EXPECT_LE(left, steady::duration::zero());
  EXPECT_GE(left, -now.time_since_epoch());
  EXPECT_EQ(subject.valid_for(), 0ms);
}

void expect_validity(Subject& subject) {
  auto left = subject.valid_for();
  EXPECT_GT(left, 0ms);
  EXPECT_LE(left, lease);
  EXPECT_TRUE(subject.valid_until() - steady::now() > 100ms);
  EXPECT_LE(subject.valid_until(), steady::now() + lease);
}

// The whole life of a hold: none, held, released, held, lost.
void check_validity(Subject subject) {
  expect_no_validity(subject, "never taken");

  subject.take();
  expect_validity(subject);
  subject.release();
  expect_no_validity(subject, "after unlock()");

  subject.take();
  expect_validity(subject);
  auto lost = std::make_shared<Event>();
  auto subscription = subject.subscribe_lost([lost](const LockLost&) { lost->set(); });
  subject.delete_behind();
  ASSERT_TRUE(lost->wait_for(5s)) << "the lost-lock listener was not told";
  expect_no_validity(subject, "after the key was deleted behind the holder");
  subject.release();  // reports the loss, never throws
  expect_no_validity(subject, "after unlock() of a lost hold");
}

class Validity : public ::testing::Test {
 protected:
  std::function<void()> del(const std::string& key) {
    return [this, key] { probe.command({"DEL", key}); };
  }

  RedisServer server;
  RedisProbe probe{server};
  Client client{validity_config(server)};
};

TEST_F(Validity, Lock) { check_validity(subject_of(client.get_lock("v:lock"), del("v:lock"))); }

TEST_F(Validity, FairLock) { check_validity(subject_of(client.get_fair_lock("v:fair"), del("v:fair"))); }

TEST_F(Validity, FencedLock) { check_validity(subject_of(client.get_fenced_lock("v:fenced"), del("v:fenced"))); }

TEST_F(Validity, SpinLock) { check_validity(subject_of(client.get_spin_lock("v:spin"), del("v:spin"))); }

TEST_F(Validity, NonReentrantLock) {
  check_validity(subject_of(client.get_non_reentrant_lock("v:non-reentrant"), del("v:non-reentrant")));
}

TEST_F(Validity, ReadWriteLockReadHalf) {
  check_validity(subject_of(client.get_read_write_lock("v:rw-read").read_lock(), del("v:rw-read")));
}

TEST_F(Validity, ReadWriteLockWriteHalf) {
  check_validity(subject_of(client.get_read_write_lock("v:rw-write").write_lock(), del("v:rw-write")));
}

TEST_F(Validity, MultiLock) {
  MultiLock multi{client.get_lock("v:multi:a"), client.get_lock("v:multi:b")};
  check_validity(subject_of(multi, del("v:multi:b")));
}

// A RedLock re-takes a node whose key vanished while a majority is still
// valid; taken by someone else on every node, the key cannot be re-taken, and
// the majority's validity runs out.
TEST(ValidityRedLock, RedLock) {
  std::vector<std::unique_ptr<RedisServer>> servers;
  std::vector<std::unique_ptr<RedisProbe>> probes;
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<Lock> members;
  for (int i = 0; i < 3; ++i) {
    servers.push_back(std::make_unique<RedisServer>());
    probes.push_back(std::make_unique<RedisProbe>(*servers.back()));
    clients.push_back(std::make_unique<Client>(validity_config(*servers.back())));
    members.push_back(clients.back()->get_lock("v:red"));
  }
  RedLock red{members};
  auto taken_over = [&] {
    for (auto& probe : probes) {
      probe->command({"EVAL",
                      "redis.call('del', KEYS[1]); redis.call('hset', KEYS[1], 'intruder:1', 1); "
                      "redis.call('pexpire', KEYS[1], 30000)",
                      "1", "v:red"});
    }
  };
  check_validity(subject_of(red, taken_over));
}

}  // namespace
}  // namespace warden::test
