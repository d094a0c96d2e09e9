// The watchdog-kept permit of a PermitExpirableSemaphore (a permit taken
// without a lease): renewed every lease/3 by the server's clock while its
// holder lives, back in the pool within a lease and a period of its holder's
// kill -9, reported lost when a renewal finds it gone, let go of by release
// and update_lease_time, and no client time in any renewal.
#include <gtest/gtest.h>

#include <warden/warden.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <future>
#include <set>
#include <thread>

#include "child_process.hpp"
#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "script_log.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

constexpr auto lease = std::chrono::milliseconds{600};
constexpr auto period = lease / 3;

std::string timeouts(const std::string& name) { return "{" + name + "}:timeout"; }

long long server_ms(RedisProbe& probe) {
  auto time = probe.command({"TIME"});
  return std::stoll(time.elements[0].str) * 1000 + std::stoll(time.elements[1].str) / 1000;
}

long long score(RedisProbe& probe, const std::string& name, const std::string& id) {
  auto reply = probe.command({"ZSCORE", timeouts(name), id});
  return reply.is_nil() ? -1 : std::stoll(reply.str);
}

Config short_lease(const RedisServer& server) {
  Config config = fast_config(server);
  config.lock_watchdog_timeout = lease;
  return config;
}

class PermitExpirableSemaphoreWatchdogTest : public ::testing::Test {
 protected:
  RedisServer server{log_every_command()};
  RedisProbe probe{server};
  Client client{short_lease(server)};
};

TEST_F(PermitExpirableSemaphoreWatchdogTest, AKeptPermitOutlivesSeveralLeasesItsExpiryRenewed) {
  const std::string name = "pes:kept";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  ASSERT_TRUE(semaphore.try_set_permits(1));
  auto before = server_ms(probe);
  std::string id = semaphore.acquire();
  auto after = server_ms(probe);
  // The watchdog's lease from now by the server's clock, not Redisson's
  // never-expiring score.
  EXPECT_GE(score(probe, name, id), before + lease.count());
  EXPECT_LE(score(probe, name, id), after + lease.count());

  // Five leases: at every look the permit is held and expires in the
  // future, and its expiry keeps moving (about every period).
  std::set<long long> scores;
  auto until = std::chrono::steady_clock::now() + 5 * lease;
  while (std::chrono::steady_clock::now() < until) {
    auto now = server_ms(probe);
    auto expiry = score(probe, name, id);
    ASSERT_GT(expiry, now) << "the kept permit expired";
    EXPECT_LE(expiry, now + lease.count() + 50);
    scores.insert(expiry);
    std::this_thread::sleep_for(20ms);  // sampling the server: no event tells of a renewal
  }
  EXPECT_GE(scores.size(), 10U) << "renewed about 15 times in five leases";
  EXPECT_EQ(semaphore.acquired_permits(), 1);
  EXPECT_EQ(semaphore.available_permits(), 0);
  EXPECT_FALSE(semaphore.try_acquire().has_value());
  semaphore.release(id);
  EXPECT_EQ(semaphore.available_permits(), 1);
}

TEST_F(PermitExpirableSemaphoreWatchdogTest, AKilledHoldersPermitComesBackWithinALeaseAndAPeriod) {
  const std::string name = "pes:killed";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  ASSERT_TRUE(semaphore.try_set_permits(1));
  ChildProcess holder(WARDEN_TEST_WORKER, {"pes_hold", server.url(), name, std::to_string(lease.count()), "victim"});
  ASSERT_TRUE(eventually([&] { return probe.get("victim:held").has_value(); }, 10s));
  const std::string held = *probe.get("victim:held");

  // A waiter in this process: the live holder's permit is never reclaimed,
  // however many of its leases pass.
  auto got = semaphore.try_acquire_async(lock_options().with_wait(20s).with_lease(10s));
  EXPECT_EQ(got.wait_for(4 * lease), std::future_status::timeout) << "a live holder's permit was reclaimed";
  EXPECT_GT(score(probe, name, held), server_ms(probe));

  holder.kill(SIGKILL);
  auto killed_at = std::chrono::steady_clock::now();
  holder.wait();
  ASSERT_EQ(got.wait_for(5s), std::future_status::ready) << "the dead holder's permit never came back";
  auto taken_after = elapsed_ms(killed_at);
  auto mine = got.get();
  ASSERT_TRUE(mine.has_value());
  // The last renewal was at most a period before the kill, and set the
  // expiry a lease after it; the waiter tries again at that expiry (a round
  // trip's slack).
  EXPECT_LE(taken_after, (lease + period).count() + 100) << "came back after " << taken_after << " ms";
  EXPECT_EQ(score(probe, name, held), -1);
  semaphore.release(*mine);
}

TEST_F(PermitExpirableSemaphoreWatchdogTest, APermitRemovedBehindItsHoldersBackIsReportedLost) {
  const std::string name = "pes:removed";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  ASSERT_TRUE(semaphore.try_set_permits(2));
  std::promise<PermitLost> heard;
  std::atomic<int> calls{0};
  // Heard through another handle of the same semaphore: listeners are the
  // semaphore's in this client, not one handle's.
  auto subscription = client.get_permit_expirable_semaphore(name).subscribe_lost([&](const PermitLost& lost) {
    if (calls++ == 0) heard.set_value(lost);
  });
  std::string kept = semaphore.acquire();
  std::string other = semaphore.acquire();
  ASSERT_EQ(probe.command({"ZREM", timeouts(name), kept}).integer, 1);
  auto removed_at = std::chrono::steady_clock::now();
  auto future = heard.get_future();
  ASSERT_EQ(future.wait_for(period + 300ms), std::future_status::ready) << "the loss was not reported";
  auto reported_after = elapsed_ms(removed_at);
  EXPECT_LE(reported_after, period.count() + 100);
  auto lost = future.get();
  EXPECT_EQ(lost.semaphore_name, name);
  EXPECT_EQ(lost.permit_id, kept);
  EXPECT_EQ(lost.cause, errc::lease_expired);
  EXPECT_NE(lost.message.find(kept), std::string::npos) << lost.message;
  EXPECT_NE(lost.message.find(name), std::string::npos) << lost.message;
  // The other permit lives on, renewed; the lost one is not reported again.
  auto first = score(probe, name, other);
  ASSERT_TRUE(eventually([&] { return score(probe, name, other) > first; }, 2 * lease));
  EXPECT_EQ(calls.load(), 1);
  EXPECT_FALSE(semaphore.try_release(kept));
  EXPECT_TRUE(semaphore.try_release(other));
}

TEST_F(PermitExpirableSemaphoreWatchdogTest, AReleasedOrReLeasedPermitIsNoLongerRenewed) {
  const std::string name = "pes:let-go";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  ASSERT_TRUE(semaphore.try_set_permits(3));
  std::atomic<int> calls{0};
  auto subscription = semaphore.subscribe_lost([&](const PermitLost&) { ++calls; });
  std::string released = semaphore.acquire();
  std::string leased = semaphore.acquire();
  std::string witness = semaphore.acquire();
  // Released through another handle of this client: the watchdog lets go.
  client.get_permit_expirable_semaphore(name).release(released);
  ASSERT_TRUE(semaphore.update_lease_time(leased, 2s));
  auto fixed = score(probe, name, leased);
  // Three renewals of the witness later, the released permit was not
  // reported lost (no renewal looked for it) and the re-leased one kept the
  // expiry it was given.
  for (int round = 0; round < 3; ++round) {
    auto seen = score(probe, name, witness);
    ASSERT_TRUE(eventually([&] { return score(probe, name, witness) > seen; }, 2 * lease));
  }
  EXPECT_EQ(score(probe, name, leased), fixed);
  EXPECT_EQ(calls.load(), 0);
  semaphore.release(leased);
  semaphore.release(witness);
}

// valid_until(id): the local bound of a kept permit, moved on by each
// confirmed renewal, never past what the server holds; the epoch for a
// permit with a fixed lease, one released, and one this Client does not keep.
TEST_F(PermitExpirableSemaphoreWatchdogTest, ValidUntilIsTheKeptPermitsBoundMovedByItsRenewals) {
  const std::string name = "pes:valid-until";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  ASSERT_TRUE(semaphore.try_set_permits(3));
  const auto before = std::chrono::steady_clock::now();
  std::string kept = semaphore.acquire();
  const auto after = std::chrono::steady_clock::now();
  std::string fixed = semaphore.acquire(10s);
  // From the acquire's send: between the call's start and its return, plus a lease.
  EXPECT_GE(semaphore.valid_until(kept), before + lease);
  EXPECT_LE(semaphore.valid_until(kept), after + lease);
  EXPECT_EQ(semaphore.valid_until(fixed), std::chrono::steady_clock::time_point{});
  EXPECT_EQ(semaphore.valid_until("not-a-permit"), std::chrono::steady_clock::time_point{});
  // Another handle of this Client sees the same bound; another Client has none.
  EXPECT_EQ(client.get_permit_expirable_semaphore(name).valid_until(kept), semaphore.valid_until(kept));
  Client other{short_lease(server)};
  EXPECT_EQ(other.get_permit_expirable_semaphore(name).valid_until(kept), std::chrono::steady_clock::time_point{});
  // Renewals move it on: after two periods it lies past the first bound, and
  // the server's expiry is never before it (both are "sent + lease").
  const auto first = semaphore.valid_until(kept);
  ASSERT_TRUE(eventually([&] { return semaphore.valid_until(kept) > first + period; }, 3 * lease));
  const auto bound = semaphore.valid_until(kept);
  const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(bound - std::chrono::steady_clock::now());
  EXPECT_LE(server_ms(probe) + left_ms.count(), score(probe, name, kept) + 5);
  semaphore.release(kept);
  EXPECT_EQ(semaphore.valid_until(kept), std::chrono::steady_clock::time_point{});
  semaphore.release(fixed);
}

TEST_F(PermitExpirableSemaphoreWatchdogTest, ClosingTheClientReleasesItsKeptPermits) {
  const std::string name = "pes:close";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  ASSERT_TRUE(semaphore.try_set_permits(3));
  Client holder{short_lease(server)};
  PermitExpirableSemaphore theirs = holder.get_permit_expirable_semaphore(name);
  std::string kept = theirs.acquire();
  std::string fixed = theirs.acquire(1h);
  EXPECT_EQ(semaphore.available_permits(), 1);
  holder.close();
  // The kept permit is given back at once (the fixed lease is left to run,
  // as Redisson's is).
  EXPECT_EQ(score(probe, name, kept), -1);
  EXPECT_GT(score(probe, name, fixed), server_ms(probe));
  EXPECT_EQ(semaphore.available_permits(), 2);
  EXPECT_TRUE(semaphore.try_release(fixed));
}

TEST_F(PermitExpirableSemaphoreWatchdogTest, RenewalsCarryNoClientTime) {
  const std::string name = "pes:renew-clock";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  ASSERT_TRUE(semaphore.try_set_permits(1));
  std::string id = semaphore.acquire();
  for (int round = 0; round < 3; ++round) {
    auto seen = score(probe, name, id);
    ASSERT_TRUE(eventually([&] { return score(probe, name, id) > seen; }, 2 * lease));
  }
  semaphore.release(id);
  auto now_ms = static_cast<double>(server_ms(probe));
  auto log = probe.command({"SLOWLOG", "GET", "-1"});
  int renewals = 0;
  for (auto& entry : log.elements) {
    if (entry.elements.size() < 4) continue;
    auto& argv = entry.elements[3].elements;
    if (argv.size() < 4 || (argv[0].str != "EVALSHA" && argv[0].str != "evalsha")) continue;
    // pes_renew is the one script whose first key is the permits ZSET.
    if (argv[3].str != timeouts(name)) continue;
    ++renewals;
    for (std::size_t i = 3; i < argv.size(); ++i) {
      const auto& arg = argv[i].str;
      if (arg.empty() || arg.size() > 18 || arg.find_first_not_of("0123456789") != std::string::npos) continue;
      double value = std::stod(arg);
      EXPECT_FALSE(std::abs(value - now_ms) < 86'400'000.0) << "a client time in ms was sent: " << arg;
      EXPECT_FALSE(std::abs(value - now_ms / 1000) < 86'400.0) << "a client time in s was sent: " << arg;
    }
    EXPECT_TRUE(std::any_of(argv.begin(), argv.end(), [&](const ProbeReply& arg) { return arg.str == id; }));
  }
  EXPECT_GE(renewals, 3);
}

}  // namespace
}  // namespace warden::test
