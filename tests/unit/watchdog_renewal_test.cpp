// The watchdog against a fake host (no loop thread, no server): it renews
// every watchdog-mode hold each third of the lease, stops renewing a hold
// once it is released, and reports a hold the server no longer has as lost.
#include <gtest/gtest.h>

#include <warden/error.hpp>

#include <chrono>
#include <memory>
#include <vector>

#include "fake_host.hpp"
#include "io/command.hpp"
#include "lock/lock_core.hpp"
#include "lock/read_write_lock_core.hpp"

namespace warden::detail {
namespace {

using namespace std::chrono_literals;
using testing::FakeHost;
using testing::sends_argument;

constexpr thread_id owner = 7;

// A 300 ms lease: renewed every 100 ms.
LockSettings short_lease() {
  LockSettings settings;
  settings.lock_watchdog_timeout = 300ms;
  return settings;
}

// What the renew script answers for each hold of a batch: 1 renewed, 0 gone.
Reply renew_answer(std::size_t holds, long long each) {
  Reply reply;
  reply.type = Reply::kind::array;
  for (std::size_t i = 0; i < holds; ++i) reply.elements.push_back(Reply::make_integer(each));
  return reply;
}

// Answers every renewal as it is sent: each hold of the batch (of locks "a"
// and "b") still held.
std::function<void()> keep_renewing(FakeHost& host) {
  return [&host] {
    while (!host.sent().empty()) {
      auto& sent = host.sent().front();
      std::size_t keys = 0;
      for (const char* name : {"a", "b"}) keys += sends_argument(sent.command, name) ? 1 : 0;
      host.answer(renew_answer(keys, 1));
    }
  };
}

TEST(WatchdogRenewal, RenewsEveryHoldEachThirdOfTheLease) {
  auto host = std::make_shared<FakeHost>(short_lease());
  auto a = std::make_shared<LockCore>(host, "a");
  auto b = std::make_shared<LockCore>(host, "b");
  const auto taken = clock::now();
  host->holds().acquired(a, owner, std::nullopt, taken);
  host->holds().acquired(b, owner, std::nullopt, taken);

  host->run_for(1'050ms, keep_renewing(*host));

  const auto& renewals = host->history();
  ASSERT_GE(renewals.size(), 5u) << "a renewal every 100 ms for a second";
  EXPECT_LE(renewals.size(), 10u) << "never more often than every 100 ms";
  for (std::size_t k = 0; k < renewals.size(); ++k) {
    const auto& renewal = renewals[k];
    EXPECT_EQ(renewal.script(), "lock_renew");
    // Both holds in one call, each named by its key.
    EXPECT_TRUE(sends_argument(renewal.command, "a"));
    EXPECT_TRUE(sends_argument(renewal.command, "b"));
    // The k-th renewal is due k+1 thirds of the lease after the holds were
    // taken (a late one does not move the next: the schedule does not
    // drift), and never goes earlier than that, up to the renewal wheel's
    // resolution (a 512th of the period).
    auto since = std::chrono::duration_cast<std::chrono::microseconds>(renewal.at - taken);
    EXPECT_GE(since.count(), (static_cast<long long>(k) + 1) * 100'000 - 1'000) << "renewal " << k;
  }
  EXPECT_EQ(host->holds().count(*a, owner), 1);
  EXPECT_GT(host->holds().valid_until(*a, owner), clock::now());
  host->shut_down();
}

// A renewal call's ARGV after the lease: each hold's field, or "" for the
// same field as the hold before it (what the renew scripts read). The
// watchdog skips building a field within a run of one owner's holds of
// one field family, but never reuses one across owners or families (a
// write lock's field is its owner's with ":write").
TEST(WatchdogRenewal, SendsEachFieldOnceForARunOfHoldsThatShareIt) {
  auto host = std::make_shared<FakeHost>(short_lease());
  auto read_a = std::make_shared<ReadLockCore>(host, "a");
  auto read_b = std::make_shared<ReadLockCore>(host, "b");
  auto write_c = std::make_shared<WriteLockCore>(host, "c");
  auto write_d = std::make_shared<WriteLockCore>(host, "d");
  auto read_e = std::make_shared<ReadLockCore>(host, "e");
  auto read_f = std::make_shared<ReadLockCore>(host, "f");
  const auto taken = clock::now();
  host->holds().acquired(read_a, owner, std::nullopt, taken);
  host->holds().acquired(read_b, owner, std::nullopt, taken);
  host->holds().acquired(write_c, owner, std::nullopt, taken);
  host->holds().acquired(write_d, owner, std::nullopt, taken);
  host->holds().acquired(read_e, owner, std::nullopt, taken);
  host->holds().acquired(read_f, owner + 1, std::nullopt, taken);
  host->run_for(130ms);
  ASSERT_EQ(host->history().size(), 1u) << "the six holds in one call";

  std::string fields;
  for (const std::string& field : {read_a->owner_field(owner), std::string(), write_c->owner_field(owner),
                                   std::string(), read_e->owner_field(owner), read_f->owner_field(owner + 1)}) {
    append_bulk(fields, field);
  }
  const std::string& bytes = host->history().front().command.bytes();
  ASSERT_GE(bytes.size(), fields.size());
  EXPECT_EQ(bytes.substr(bytes.size() - fields.size()), fields);
  EXPECT_EQ(write_c->owner_field(owner), read_a->owner_field(owner) + ":write");
  host->drop_pending();
  host->shut_down();
}

TEST(WatchdogRenewal, StopsRenewingAReleasedHold) {
  auto host = std::make_shared<FakeHost>(short_lease());
  auto a = std::make_shared<LockCore>(host, "a");
  host->holds().acquired(a, owner, std::nullopt, clock::now());
  host->run_for(150ms, keep_renewing(*host));
  ASSERT_EQ(host->history().size(), 1u) << "renewed once in the first 150 ms";

  // The release: renewal stops before it is sent, and the hold leaves the book.
  host->holds().releasing(*a, owner);
  host->holds().released(*a, owner, true);
  host->run_for(400ms, keep_renewing(*host));

  EXPECT_EQ(host->history().size(), 1u) << "no renewal after the release";
  EXPECT_EQ(host->holds().count(*a, owner), 0);
  host->shut_down();
}

// At most 2 renewal calls (of at most 100 holds) go unanswered per server,
// so that other callers' commands do not wait behind many; but renewals that run late (a slow
// connection carrying a crowd of other commands) are not held back: holds
// would expire waiting.
TEST(WatchdogRenewal, HoldsBackRenewalsOnTimeButNotLateOnes) {
  LockSettings settings = short_lease();
  settings.lock_watchdog_batch_size = 1;  // a call per hold
  auto host = std::make_shared<FakeHost>(settings);
  std::vector<std::shared_ptr<LockCore>> locks;
  for (const char* name : {"a", "b", "c", "d", "e", "f"}) {
    locks.push_back(std::make_shared<LockCore>(host, name));
    host->holds().acquired(locks.back(), owner, std::nullopt, clock::now());
  }
  // Due after 100 ms, with 200 ms of lease left: on time. Nothing answered.
  host->run_for(130ms);
  EXPECT_EQ(host->history().size(), 2u) << "two calls unanswered at most while on time";

  // The same six holds taken 260 ms ago (40 ms of lease left): all go out.
  auto late_host = std::make_shared<FakeHost>(settings);
  std::vector<std::shared_ptr<LockCore>> late_locks;
  for (const char* name : {"a", "b", "c", "d", "e", "f"}) {
    late_locks.push_back(std::make_shared<LockCore>(late_host, name));
    late_host->holds().acquired(late_locks.back(), owner, std::nullopt, clock::now() - 260ms);
  }
  late_host->run_for(20ms);
  EXPECT_EQ(late_host->history().size(), 6u) << "late renewals are not held back";
  host->drop_pending();
  late_host->drop_pending();
  host->shut_down();
  late_host->shut_down();
}

TEST(WatchdogRenewal, ReportsAHoldTheServerNoLongerHasAsLost) {
  auto host = std::make_shared<FakeHost>(short_lease());
  auto a = std::make_shared<LockCore>(host, "a");
  std::vector<LockLost> lost;
  a->add_lost_listener([&lost](const LockLost& event) { lost.push_back(event); });
  host->holds().acquired(a, owner, std::nullopt, clock::now());

  // The first renewal finds the hold gone (the key expired or was deleted).
  host->run_for(150ms, [&host] {
    while (!host->sent().empty()) host->answer(renew_answer(1, 0));
  });

  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].lock_name, "a");
  EXPECT_EQ(lost[0].owner, owner);
  EXPECT_EQ(lost[0].cause, make_error_code(errc::lease_expired));
  EXPECT_EQ(host->holds().count(*a, owner), 0);
  // Nothing more is renewed for it.
  host->run_for(250ms, keep_renewing(*host));
  EXPECT_EQ(host->history().size(), 1u);
  host->shut_down();
}

}  // namespace
}  // namespace warden::detail
