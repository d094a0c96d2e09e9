// The book of holds without a server: what acquires, releases and lease
// changes record, what the keeper (the watchdog) is told, and which holds a
// renewal tick finds due.
#include <gtest/gtest.h>

#include <thread>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <vector>

#include <warden/error.hpp>

#include "lock/hold_book.hpp"
#include "lock/validity.hpp"

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
  int filed = 0;
  clock::time_point last_filed{};
  void hold_changed(const HoldBook::key& which, const HoldBook::Hold& hold) override {
    expiries.erase(which);
    if (!hold.watchdog_mode()) expiries[which] = hold.valid_until;
  }
  void hold_gone(const HoldBook::key& which) override { expiries.erase(which); }
  void renewal_filed(clock::time_point due) override {
    ++filed;
    last_filed = due;
  }
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
  EXPECT_EQ(keeper.filed, 1);            // filed once, when the first level was taken
  EXPECT_TRUE(keeper.expiries.empty());  // watchdog mode: renewed, not timed
  EXPECT_EQ(book.releasing(*lock, 7), 30s);
  book.released(*lock, 7, false);
  EXPECT_EQ(book.count(*lock, 7), 1);
  book.releasing(*lock, 7);
  book.released(*lock, 7, true);
  EXPECT_EQ(book.count(*lock, 7), 0);
  EXPECT_FALSE(book.knew_of(*lock, 7));
  EXPECT_EQ(book.valid_until(*lock, 7), clock::time_point{});
}

// Without a hold (never taken, released, lost) valid_until() is a time a
// caller can subtract now from: the check before a critical write is false,
// and nothing overflows (time_point::min() - now did).
TEST_F(HoldBookTest, WithoutAHoldValidUntilIsSafeToSubtractNowFrom) {
  auto expect_none = [&](const char* when) {
    SCOPED_TRACE(when);
    auto until = book.valid_until(*lock, 7);
    EXPECT_FALSE(until - clock::now() > 1s);
    auto now = clock::now();
    EXPECT_LE(until - now, clock::duration::zero());
    EXPECT_GE(until - now, -now.time_since_epoch());
    EXPECT_EQ(validity_left(until, clock::now()), 0ms);
  };
  expect_none("never taken");
  auto sent = clock::now();
  book.acquired(lock, 7, std::nullopt, sent);
  EXPECT_EQ(validity_left(book.valid_until(*lock, 7), sent), 30s);
  EXPECT_EQ(validity_left(book.valid_until(*lock, 7), sent + 500us), 29999ms);  // rounded down
  book.releasing(*lock, 7);
  book.released(*lock, 7, true);
  expect_none("released");
  book.acquired(lock, 7, std::nullopt, sent);
  EXPECT_NE(book.lose({lock.get(), 7}), nullptr);
  expect_none("lost");
}

TEST_F(HoldBookTest, HeldListsEveryHoldWithItsLevels) {
  char other_storage = 0;
  auto other = fake_lock(other_storage);
  auto sent = clock::now();
  EXPECT_TRUE(book.held().empty());
  book.acquired(lock, 7, std::nullopt, sent);
  book.acquired(lock, 7, 10s, sent);
  book.acquired(other, 8, std::nullopt, sent);
  auto held = book.held();
  ASSERT_EQ(held.size(), 2u);
  std::map<std::pair<LockCore*, thread_id>, int> levels;
  for (const auto& hold : held) levels[{hold.lock.get(), hold.owner}] = hold.levels;
  EXPECT_EQ((levels[{lock.get(), 7}]), 2);
  EXPECT_EQ((levels[{other.get(), 8}]), 1);
  book.releasing(*other, 8);
  book.released(*other, 8, true);
  ASSERT_EQ(book.held().size(), 1u);
  EXPECT_EQ(book.held().front().owner, 7u);
}

TEST_F(HoldBookTest, FixedLeasesAreTimedByTheKeeper) {
  auto sent = clock::now();
  book.acquired(lock, 7, 5s, sent);
  EXPECT_EQ(keeper.filed, 0);
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

// A hold whose valid_until has passed, not yet reported lost by any timer,
// is not re-entered: its key may have expired before the new acquire ran,
// which then made a fresh hold of count 1. Counting the old level too would
// let the release of the new one free the lock on the server while the book
// still said "held" (model/lock.pml: NegativeLapsedReentry).
TEST_F(HoldBookTest, AnAcquireAnsweredAfterTheHoldLapsedStartsAFreshHold) {
  auto now = clock::now();
  book.acquired(lock, 7, 5s, now - 10s);  // valid until 5 s ago
  book.acquired(lock, 8, std::nullopt, now - 40s);
  EXPECT_EQ(book.acquired(lock, 7, 5s, now, now), lock);  // the lapsed hold was lost first
  EXPECT_EQ(book.count(*lock, 7), 1);
  EXPECT_EQ(book.valid_until(*lock, 7), now + 5s);
  EXPECT_EQ(keeper.expiries.at({lock.get(), 7}), now + 5s);
  EXPECT_EQ(book.acquired(lock, 8, std::nullopt, now, now), lock);  // watchdog mode alike
  EXPECT_EQ(book.count(*lock, 8), 1);
  // A live hold is re-entered as before.
  EXPECT_EQ(book.acquired(lock, 7, 5s, now, now + 1s), nullptr);
  EXPECT_EQ(book.count(*lock, 7), 2);
}

TEST_F(HoldBookTest, AnAcquireSentAfterTheHoldLapsedCountsNoLevelOfIt) {
  auto now = clock::now();
  book.acquired(lock, 7, 5s, now - 10s);
  book.acquired(lock, 7, 5s, now - 10s);
  auto found = book.entering(*lock, 7, now);
  EXPECT_EQ(found.levels, 0);  // a settle then expects count 1, what the server would make
  EXPECT_EQ(found.lapsed, lock);
  EXPECT_EQ(book.count(*lock, 7), 0);
  EXPECT_TRUE(book.knew_of(*lock, 7));  // lost, as the watchdog's timer would have said
  EXPECT_TRUE(keeper.expiries.empty());
  EXPECT_EQ(book.lose({lock.get(), 7}), nullptr);  // reported once
  book.acquired(lock, 7, 5s, now);
  found = book.entering(*lock, 7, now + 1s);
  EXPECT_EQ(found.levels, 1);
  EXPECT_EQ(found.lapsed, nullptr);
}

TEST_F(HoldBookTest, RenewalScheduleAndAnswers) {
  const auto lease = 30s;
  const auto period = 10s;
  const std::size_t all = 1000;
  auto sent = clock::now();
  book.acquired(lock, 7, std::nullopt, sent);
  book.acquired(lock, 8, 30s, sent);  // fixed lease: never renewed
  EXPECT_EQ(book.period(), period);
  // Taken moments ago: due a period after it was taken.
  EXPECT_TRUE(book.take_due(sent, all).empty());
  ASSERT_TRUE(book.next_due().has_value());
  EXPECT_LE(*book.next_due(), sent + period);
  EXPECT_GT(*book.next_due(), sent + period - 100ms);  // its bucket's start
  // A period old: due, out of the schedule while its renewal is in flight.
  auto due = book.take_due(sent + period, all);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].which.second, 7u);
  EXPECT_EQ(due[0].valid_until, sent + lease);
  EXPECT_TRUE(book.take_due(sent + period, all).empty());
  EXPECT_FALSE(book.next_due().has_value());
  // Confirmed: valid a lease from when the renewal was sent, due a period later.
  auto renewal_sent = sent + period;
  auto outcome = book.renewed({due[0]}, renewal_sent, lease, {}, {1});
  EXPECT_TRUE(outcome.lost.empty());
  EXPECT_FALSE(outcome.retry);
  EXPECT_EQ(book.valid_until(*lock, 7), renewal_sent + lease);
  EXPECT_LE(*book.next_due(), sent + 2 * period);
  EXPECT_GT(*book.next_due(), sent + 2 * period - 100ms);
  // A stale answer (another epoch) changes nothing.
  auto stale = due[0];
  ++stale.epoch;
  outcome = book.renewed({stale}, renewal_sent, lease, {}, {0});
  EXPECT_TRUE(outcome.lost.empty());
  // Gone on the server: lost.
  due = book.take_due(sent + 2 * period, all);
  ASSERT_EQ(due.size(), 1u);
  outcome = book.renewed({due[0]}, sent + 2 * period, lease, {}, {0});
  ASSERT_EQ(outcome.lost.size(), 1u);
  // A transport error with lease left: filed again soon (a tenth of the
  // lease, at most 1 s, from when the answer came), and the keeper hears of
  // it, to fire that early.
  book.acquired(lock, 9, std::nullopt, sent + period);
  due = book.take_due(sent + 2 * period, all);
  ASSERT_EQ(due.size(), 1u);
  outcome = book.renewed({due[0]}, sent + 2 * period, lease, make_error_code(errc::connection_lost), {});
  EXPECT_TRUE(outcome.lost.empty());
  EXPECT_TRUE(outcome.retry);
  EXPECT_TRUE(book.next_due().has_value());
  EXPECT_GT(keeper.last_filed, clock::now() + 900ms);
  EXPECT_LE(keeper.last_filed, clock::now() + 1s);
}

// A renewal that goes out late keeps the hold's place: it is due again a
// period after it was due, not after it was sent, so lateness never adds up.
TEST_F(HoldBookTest, TheScheduleDoesNotDrift) {
  auto t0 = clock::now();
  book.acquired(lock, 7, std::nullopt, t0);
  auto late = t0 + 10s + 40ms;
  auto due = book.take_due(late, 1000);
  ASSERT_EQ(due.size(), 1u);
  book.renewed({due[0]}, late, 30s, {}, {1});
  EXPECT_LE(*book.next_due(), t0 + 20s);
  // Later by more than half a period: the hold starts afresh from the renewal.
  due = book.take_due(t0 + 26s, 1000);
  ASSERT_EQ(due.size(), 1u);
  book.renewed({due[0]}, t0 + 26s, 30s, {}, {1});
  EXPECT_GT(*book.next_due(), t0 + 35s);
  EXPECT_LE(*book.next_due(), t0 + 36s);
}

// Holds due soon fill a batch; the rest of the wheel is left alone.
TEST_F(HoldBookTest, HoldsDueSoonTopUpABatch) {
  char other_storage = 0;
  auto other = fake_lock(other_storage);
  auto t0 = clock::now();
  book.acquired(lock, 1, std::nullopt, t0);
  book.acquired(lock, 2, std::nullopt, t0 + 3s);
  book.acquired(other, 3, std::nullopt, t0 + 3s);
  book.acquired(lock, 4, std::nullopt, t0 + 6s);
  auto due = book.take_due(t0 + 10s, 1000);
  ASSERT_EQ(due.size(), 1u);
  // Within half a period (t0 + 15 s), of `lock` only: owner 2, not 3 (other
  // lock) nor 4 (due at t0 + 16 s).
  book.take_early(
      t0 + 15s, 10, 100, [&](const LockCore& which, thread_id) { return &which == lock.get(); }, due);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[1].which.second, 2u);
  EXPECT_EQ(book.take_due(t0 + 16s, 1000).size(), 2u);
}

// Holds taken after the book sat without watchdog holds for longer than
// its wheel spans are still due a period after each was taken, not all at
// once. Time is the subject: a 30 ms lease (10 ms period), idle for 60 ms.
TEST(HoldBookIdle, HoldsTakenAfterAnIdleSpellKeepTheirOwnDueTimes) {
  char storage = 0;
  auto lock = fake_lock(storage);
  HoldBook book{std::chrono::milliseconds{30}};
  std::this_thread::sleep_for(60ms);
  auto t = clock::now();
  book.acquired(lock, 1, std::nullopt, t);
  book.acquired(lock, 2, std::nullopt, t + 5ms);
  ASSERT_TRUE(book.next_due().has_value());
  EXPECT_GT(*book.next_due(), t + 9ms);
  auto due = book.take_due(t + 10ms, 1000);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].which.second, 1u);
}

// A burst of holds due at once is handed out a slice at a time.
TEST_F(HoldBookTest, TakesNoMoreThanAskedPerCall) {
  auto t0 = clock::now() - 10s;
  for (thread_id owner = 1; owner <= 5; ++owner) book.acquired(lock, owner, std::nullopt, t0);
  EXPECT_EQ(book.take_due(clock::now(), 2).size(), 2u);
  ASSERT_TRUE(book.next_due().has_value());
  EXPECT_LE(*book.next_due(), clock::now());
  EXPECT_EQ(book.take_due(clock::now(), 2).size(), 2u);
  EXPECT_EQ(book.take_due(clock::now(), 2).size(), 1u);
  EXPECT_FALSE(book.next_due().has_value());
}

// A hold released while its renewal is in flight: the answer is for a hold
// that is gone (it is kept aside until then, not looked up by key), and it
// touches neither a new hold of the same owner nor the book.
TEST_F(HoldBookTest, AHoldReleasedWhileItsRenewalIsInFlightIsLeftAlone) {
  book.acquired(lock, 7, std::nullopt, clock::now() - 10s);
  auto due = book.take_due(clock::now(), 1000);
  ASSERT_EQ(due.size(), 1u);
  book.releasing(*lock, 7);
  book.released(*lock, 7, true);
  EXPECT_EQ(book.count(*lock, 7), 0);
  // Taken again before the renewal's answer: a new hold.
  book.acquired(lock, 7, std::nullopt, clock::now());
  auto outcome = book.renewed(due, clock::now(), 30s, {}, {0});
  EXPECT_TRUE(outcome.lost.empty());
  EXPECT_FALSE(outcome.retry);
  EXPECT_EQ(book.count(*lock, 7), 1);
  ASSERT_TRUE(book.next_due().has_value());
  EXPECT_GT(*book.next_due(), clock::now() + 9s);  // the new hold keeps its own schedule
}

// A mass release while renewals are in flight retires thousands of holds;
// each answer frees exactly its own, whatever the order the batches are
// answered or checked in (a held-back batch: keep_sendable).
TEST_F(HoldBookTest, ManyHoldsReleasedWhileTheirRenewalsAreInFlightAreFreedByTheirOwnAnswers) {
  constexpr std::size_t holds = 3000;
  std::vector<char> storage(holds);
  std::size_t freed = 0;
  std::vector<std::shared_ptr<LockCore>> locks;
  for (auto& byte : storage) {
    locks.emplace_back(reinterpret_cast<LockCore*>(&byte), [&freed](LockCore*) { ++freed; });
    book.acquired(locks.back(), 7, std::nullopt, clock::now() - 10s);
  }
  auto due = book.take_due(clock::now(), holds);
  ASSERT_EQ(due.size(), holds);
  for (auto& lock : locks) {
    book.releasing(*lock, 7);
    book.released(*lock, 7, true);
  }
  locks.clear();  // only the retired holds keep their locks now
  EXPECT_EQ(freed, 0u);
  // Three batches, settled last first, one of them as a held-back call.
  std::vector<HoldBook::Due> first(due.begin(), due.begin() + 1000);
  std::vector<HoldBook::Due> second(due.begin() + 1000, due.begin() + 2000);
  std::vector<HoldBook::Due> third(due.begin() + 2000, due.end());
  std::reverse(third.begin(), third.end());
  auto outcome = book.renewed(third, clock::now(), 30s, {}, std::vector<long long>(third.size(), 1));
  EXPECT_TRUE(outcome.lost.empty());
  EXPECT_EQ(freed, 1000u);
  book.keep_sendable(first);
  EXPECT_TRUE(first.empty());
  EXPECT_EQ(freed, 2000u);
  book.renewed(second, clock::now(), 30s, make_error_code(errc::timed_out), {});
  EXPECT_EQ(freed, 3000u);
  EXPECT_FALSE(book.next_due().has_value());
}

// The watchdog skips re-checking a held-back call when no hold taken for
// renewal changed since it was taken: every change keep_sendable() would
// act on must count, and changes to holds not being renewed need not.
TEST_F(HoldBookTest, RenewingChangesCountEveryChangeToAHoldTakenForRenewal) {
  char storage_b = 0, storage_c = 0, storage_d = 0, storage_e = 0;
  auto b = fake_lock(storage_b), c = fake_lock(storage_c), d = fake_lock(storage_d), e = fake_lock(storage_e);
  const auto long_ago = clock::now() - 10s;
  for (auto* one : {&lock, &b, &c, &d}) book.acquired(*one, 7, std::nullopt, long_ago);
  auto batch = book.take_due(clock::now(), 1000);
  ASSERT_EQ(batch.size(), 4u);
  auto seen = book.renewing_changes();
  // Holds not taken for renewal: no count.
  book.acquired(e, 7, std::nullopt, clock::now());
  book.releasing(*e, 7);
  book.released(*e, 7, true);
  book.acquired(lock, 7, std::nullopt, clock::now());  // a re-entry: still to renew
  EXPECT_EQ(book.renewing_changes(), seen);
  std::vector<HoldBook::Due> unchanged = batch;
  book.keep_sendable(unchanged);
  EXPECT_EQ(unchanged.size(), 4u);
  // Each change that makes a taken hold unsendable counts.
  book.releasing(*b, 7);
  EXPECT_GT(book.renewing_changes(), seen);
  seen = book.renewing_changes();
  book.leased(*c, 7, 5s, clock::now());
  EXPECT_GT(book.renewing_changes(), seen);
  seen = book.renewing_changes();
  book.forget(*d, 7);
  EXPECT_GT(book.renewing_changes(), seen);
  seen = book.renewing_changes();
  book.releasing(*lock, 7);  // one level of two left: still renewed
  book.released(*lock, 7, false);
  EXPECT_GT(book.renewing_changes(), seen);
  book.keep_sendable(batch);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].lock, lock.get());
}

// A renewal call held back for its server is checked again before it is
// sent: it must never follow on the wire the final release of a hold it
// renews, nor extend a hold that now keeps a fixed lease.
TEST_F(HoldBookTest, AHeldBackRenewalKeepsOnlyHoldsStillToRenew) {
  char other_storage = 0, third_storage = 0;
  auto other = fake_lock(other_storage), third = fake_lock(third_storage);
  const auto long_ago = clock::now() - 10s;
  book.acquired(lock, 7, std::nullopt, long_ago);
  book.acquired(other, 7, std::nullopt, long_ago);
  book.acquired(third, 7, std::nullopt, long_ago);
  auto batch = book.take_due(clock::now(), 1000);
  ASSERT_EQ(batch.size(), 3u);
  book.releasing(*lock, 7);                  // its final release is being sent
  book.leased(*other, 7, 5s, clock::now());  // now a fixed lease
  book.keep_sendable(batch);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].lock, third.get());
  // The dropped ones are not renewing any more: the release completes as
  // usual, the fixed-lease hold is timed, and neither is due for renewal.
  book.released(*lock, 7, true);
  EXPECT_EQ(book.count(*lock, 7), 0);
  EXPECT_EQ(book.count(*other, 7), 1);
  EXPECT_EQ(keeper.expiries.count({other.get(), 7}), 1u);
  // A hold released (and gone from the book) while its call waited is
  // dropped too, and freed.
  book.releasing(*third, 7);
  book.released(*third, 7, true);
  book.keep_sendable(batch);
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(book.count(*third, 7), 0);
  EXPECT_FALSE(book.next_due().has_value());
}

// A renewal too few replicas acknowledged (replica_sync) extends nothing: a
// failover could bring back the older expiry. Retried while lease is left;
// lost once it has run out.
TEST_F(HoldBookTest, AnUnsyncedRenewalExtendsNothing) {
  const auto lease = 30s;
  const auto period = 10s;
  auto sent = clock::now() - period;
  book.acquired(lock, 7, std::nullopt, sent);
  auto due = book.take_due(clock::now(), 1000);
  ASSERT_EQ(due.size(), 1u);
  auto outcome = book.renewed({due[0]}, clock::now(), lease, {}, {1}, "0 of 1 replica acknowledged it within 1000 ms");
  EXPECT_TRUE(outcome.lost.empty());
  EXPECT_TRUE(outcome.retry);
  EXPECT_EQ(book.valid_until(*lock, 7), sent + lease);
}

TEST_F(HoldBookTest, AHoldWhoseRenewalsAreNeverSyncedIsLostWithItsLease) {
  const auto lease = 30s;
  // Taken almost a lease ago: its renewal goes out just before the lease
  // ends and is answered just after.
  book.acquired(lock, 7, std::nullopt, clock::now() - lease + 20ms);
  auto due = book.take_due(clock::now(), 1000);
  ASSERT_EQ(due.size(), 1u);
  auto sent = clock::now();
  std::this_thread::sleep_for(30ms);
  auto outcome = book.renewed({due[0]}, sent, lease, {}, {1}, "0 of 1 replica acknowledged it within 1000 ms");
  ASSERT_EQ(outcome.lost.size(), 1u);
  EXPECT_NE(outcome.lost[0].second.find("0 of 1 replica acknowledged"), std::string::npos);
}

TEST_F(HoldBookTest, AFinalReleaseStopsRenewalAtOnce) {
  auto sent = clock::now() - 20s;
  book.acquired(lock, 7, std::nullopt, sent);
  book.releasing(*lock, 7);
  EXPECT_TRUE(book.take_due(clock::now(), 1000).empty());
  EXPECT_FALSE(book.next_due().has_value());
}

}  // namespace
}  // namespace warden::detail
