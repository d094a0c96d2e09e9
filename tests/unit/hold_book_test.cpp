// The book of holds without a server: what acquires, releases and lease
// changes record, what the keeper (the watchdog) is told, and which holds a
// renewal tick finds due.
#include <gtest/gtest.h>

#include <thread>

#include <chrono>
#include <map>
#include <memory>

#include <warden/error.hpp>

#include "lock/hold_book.hpp"

namespace warden::detail {
namespace {

using namespace std::chrono_literals;

// The book only keys on a lock's address and keeps it alive; it never calls
// into it. A non-owning pointer to a byte stands in for a LockCore.
std::shared_ptr<LockCore> fake_lock(char& storage) {
  return std::shared_ptr<LockCore>(std::shared_ptr<void>(), reinterpret_cast<LockCore*>(&storage));
}

struct RecordingKeeper : HoldBook::Keeper {
  std::map<HoldBook::key, clock::time_point> expiries;  // fixed-lease holds and when they run out
  int added = 0;
  void hold_changed(const HoldBook::key& which, const HoldBook::Hold& hold) override {
    expiries.erase(which);
    if (!hold.watchdog_mode()) expiries[which] = hold.valid_until;
  }
  void hold_gone(const HoldBook::key& which) override { expiries.erase(which); }
  void watchdog_hold_added() override { ++added; }
};

class HoldBookTest : public ::testing::Test {
 protected:
  HoldBookTest() { book.set_keeper(&keeper); }
  char storage = 0;
  std::shared_ptr<LockCore> lock = fake_lock(storage);
  HoldBook book{30s};
  RecordingKeeper keeper;
};

TEST_F(HoldBookTest, ReentrantHoldsAreCountedAndReleasedOneByOne) {
  auto sent = clock::now();
  book.acquired(lock, 7, std::nullopt, sent);
  book.acquired(lock, 7, std::nullopt, sent);
  EXPECT_EQ(book.count(*lock, 7), 2);
  EXPECT_EQ(book.count(*lock, 8), 0);
  EXPECT_EQ(book.valid_until(*lock, 7), sent + 30s);
  EXPECT_EQ(keeper.added, 2);
  EXPECT_TRUE(keeper.expiries.empty());  // watchdog mode: renewed, not timed
  EXPECT_EQ(book.releasing(*lock, 7), 30s);
  book.released(*lock, 7, false);
  EXPECT_EQ(book.count(*lock, 7), 1);
  book.releasing(*lock, 7);
  book.released(*lock, 7, true);
  EXPECT_EQ(book.count(*lock, 7), 0);
  EXPECT_FALSE(book.knew_of(*lock, 7));
  EXPECT_EQ(book.valid_until(*lock, 7), clock::time_point::min());
}

TEST_F(HoldBookTest, FixedLeasesAreTimedByTheKeeper) {
  auto sent = clock::now();
  book.acquired(lock, 7, 5s, sent);
  EXPECT_EQ(keeper.added, 0);
  ASSERT_EQ(keeper.expiries.size(), 1u);
  EXPECT_EQ(keeper.expiries.begin()->second, sent + 5s);
  // A watchdog-mode level on top: renewed, no longer timed.
  book.acquired(lock, 7, std::nullopt, sent);
  EXPECT_TRUE(keeper.expiries.empty());
  // set_lease: every level fixed from now on.
  book.leased(*lock, 7, 2s, sent);
  EXPECT_EQ(keeper.expiries.begin()->second, sent + 2s);
  book.forget(*lock, 7);
  EXPECT_TRUE(keeper.expiries.empty());
}

TEST_F(HoldBookTest, TheLeaseLeftOnAReleaseIsTheRemainingLevelsOne) {
  // Fixed-lease levels below: what is left of the key's TTL (each acquire
  // re-set it to its own lease).
  book.acquired(lock, 7, 10s, clock::now());
  book.acquired(lock, 7, 5s, clock::now());
  auto left = book.releasing(*lock, 7);
  EXPECT_GT(left, 4s);
  EXPECT_LE(left, 5s);
  // A watchdog-mode level below: the watchdog's lease.
  book.forget(*lock, 7);
  book.acquired(lock, 7, std::nullopt, clock::now());
  book.acquired(lock, 7, 5s, clock::now());
  EXPECT_EQ(book.releasing(*lock, 7), 30s);
}

TEST_F(HoldBookTest, ALostHoldIsStillKnownOf) {
  book.acquired(lock, 7, std::nullopt, clock::now());
  EXPECT_EQ(book.lose({lock.get(), 7}), lock);
  EXPECT_EQ(book.count(*lock, 7), 0);
  EXPECT_TRUE(book.knew_of(*lock, 7));
  EXPECT_EQ(book.lose({lock.get(), 7}), nullptr);
  book.forget(*lock, 7);
  EXPECT_FALSE(book.knew_of(*lock, 7));
}

TEST_F(HoldBookTest, RenewalPlanAndAnswers) {
  const auto lease = 30s;
  const auto period = 10s;
  auto sent = clock::now();
  book.acquired(lock, 7, std::nullopt, sent);
  book.acquired(lock, 8, 30s, sent);  // fixed lease: never renewed
  // Taken moments ago: not due yet.
  auto plan = book.take_due(sent, lease, period);
  EXPECT_TRUE(plan.any);
  EXPECT_TRUE(plan.due.empty());
  // Half a period old: due, and marked as renewing.
  plan = book.take_due(sent + period / 2, lease, period);
  ASSERT_EQ(plan.due.size(), 1u);
  EXPECT_EQ(plan.due[0].which.second, 7u);
  EXPECT_TRUE(book.take_due(sent + period / 2, lease, period).due.empty());
  // Confirmed: valid a lease from when the renewal was sent.
  auto renewal_sent = sent + period / 2;
  auto outcome = book.renewed({{plan.due[0].which, plan.due[0].epoch}}, renewal_sent, lease, {}, {1});
  EXPECT_TRUE(outcome.lost.empty());
  EXPECT_FALSE(outcome.retry);
  EXPECT_EQ(book.valid_until(*lock, 7), renewal_sent + lease);
  // A stale answer (another epoch) changes nothing.
  outcome = book.renewed({{plan.due[0].which, plan.due[0].epoch + 1}}, renewal_sent, lease, {}, {0});
  EXPECT_TRUE(outcome.lost.empty());
  // Gone on the server: lost.
  plan = book.take_due(renewal_sent + lease, lease, period);
  ASSERT_EQ(plan.due.size(), 1u);
  outcome = book.renewed({{plan.due[0].which, plan.due[0].epoch}}, renewal_sent + lease, lease, {}, {0});
  ASSERT_EQ(outcome.lost.size(), 1u);
  // A transport error with lease left: retried.
  book.acquired(lock, 9, std::nullopt, clock::now() - period);
  plan = book.take_due(clock::now(), lease, period);
  ASSERT_EQ(plan.due.size(), 1u);
  outcome = book.renewed({{plan.due[0].which, plan.due[0].epoch}}, clock::now(), lease,
                         make_error_code(errc::connection_lost), {});
  EXPECT_TRUE(outcome.lost.empty());
  EXPECT_TRUE(outcome.retry);
}

// A renewal too few replicas acknowledged (replica_sync) extends nothing: a
// failover could bring back the older expiry. Retried while lease is left;
// lost once it has run out.
TEST_F(HoldBookTest, AnUnsyncedRenewalExtendsNothing) {
  const auto lease = 30s;
  const auto period = 10s;
  auto sent = clock::now() - period;
  book.acquired(lock, 7, std::nullopt, sent);
  auto plan = book.take_due(clock::now(), lease, period);
  ASSERT_EQ(plan.due.size(), 1u);
  auto outcome = book.renewed({{plan.due[0].which, plan.due[0].epoch}}, clock::now(), lease, {}, {1},
                              "0 of 1 replica acknowledged it within 1000 ms");
  EXPECT_TRUE(outcome.lost.empty());
  EXPECT_TRUE(outcome.retry);
  EXPECT_EQ(book.valid_until(*lock, 7), sent + lease);
}

TEST_F(HoldBookTest, AHoldWhoseRenewalsAreNeverSyncedIsLostWithItsLease) {
  const auto lease = 30s;
  const auto period = 10s;
  // Taken almost a lease ago: its renewal goes out just before the lease
  // ends and is answered just after.
  book.acquired(lock, 7, std::nullopt, clock::now() - lease + 20ms);
  auto plan = book.take_due(clock::now(), lease, period);
  ASSERT_EQ(plan.due.size(), 1u);
  auto sent = clock::now();
  std::this_thread::sleep_for(30ms);
  auto outcome = book.renewed({{plan.due[0].which, plan.due[0].epoch}}, sent, lease, {}, {1},
                              "0 of 1 replica acknowledged it within 1000 ms");
  ASSERT_EQ(outcome.lost.size(), 1u);
  EXPECT_NE(outcome.lost[0].second.find("0 of 1 replica acknowledged"), std::string::npos);
}

TEST_F(HoldBookTest, AFinalReleaseStopsRenewalAtOnce) {
  auto sent = clock::now() - 20s;
  book.acquired(lock, 7, std::nullopt, sent);
  book.releasing(*lock, 7);
  auto plan = book.take_due(clock::now(), 30s, 10s);
  EXPECT_FALSE(plan.any);
  EXPECT_TRUE(plan.due.empty());
}

}  // namespace
}  // namespace warden::detail
