// ReadWriteLock: Redisson's hash, per-hold keys and messages; the read/write
// matrix across and within owners; downgrade; upgrade refused; watchdog.
#include <gtest/gtest.h>

#include "message_recorder.hpp"
#include "redis_probe.hpp"
#include "script_log.hpp"
#include "test_env.hpp"
#include "warden_scripts.hpp"

namespace warden::test {
namespace {

namespace scripts = detail::scripts;
using fields = std::map<std::string, std::string>;

std::string owner_of(const Client& client, thread_id thread) { return client.id() + ":" + std::to_string(thread); }

// "{NAME}:<owner>:rwlock_timeout:<n>": the key of read hold n of owner.
std::string hold_key(const std::string& name, const std::string& owner, int n) {
  return "{" + name + "}:" + owner + ":rwlock_timeout:" + std::to_string(n);
}

std::string channel_of(const std::string& name) { return "redisson_rwlock:{" + name + "}"; }

template <class Call>
void expect_would_deadlock(Call call) {
  auto start = std::chrono::steady_clock::now();
  try {
    call();
    ADD_FAILURE() << "an upgrade must fail";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::would_deadlock) << error.what();
    EXPECT_NE(std::string(error.what()).find("upgrade"), std::string::npos) << error.what();
  }
  EXPECT_LT(elapsed_ms(start), 500) << "an upgrade must fail at once, not after waiting";
}

class ReadWriteLockTest : public ::testing::Test {
 protected:
  RedisServer server{log_every_command()};
  RedisProbe probe{server};
  ScriptLog log{probe, {&scripts::rwlock_read_acquire, &scripts::rwlock_write_acquire}};
  Client client{fast_config(server)};
  Client other{fast_config(server)};
};

TEST_F(ReadWriteLockTest, ReadHoldsLeaveRedissonsHashHoldKeysAndTtl) {
  const std::string name = "doc";
  ReadWriteLock rw = client.get_read_write_lock(name);
  EXPECT_EQ(rw.name(), name);
  Lock read = rw.read_lock();
  const std::string me = owner_of(client, current_thread_id());
  const std::string them = owner_of(other, 77);
  MessageRecorder recorder(server, {channel_of(name)});

  read.lock();
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "read"}, {me, "1"}}));
  EXPECT_GT(probe.pttl(name), 29'000);
  EXPECT_EQ(probe.get(hold_key(name, me, 1)), "1");
  EXPECT_GT(probe.pttl(hold_key(name, me, 1)), 29'000);

  read.lock();  // re-entry: a second hold, with its own key
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "read"}, {me, "2"}}));
  EXPECT_GT(probe.pttl(hold_key(name, me, 2)), 29'000);
  EXPECT_EQ(read.hold_count(), 2);

  // Another owner reads too, with a short fixed lease: the hash lives as
  // long as the longest hold.
  Lock their_read = other.get_read_write_lock(name).read_lock();
  ASSERT_TRUE(their_read.try_lock_async(77, lock_options().with_wait(0ms).with_lease(5s)).get());
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "read"}, {me, "2"}, {them, "1"}}));
  EXPECT_LE(probe.pttl(hold_key(name, them, 1)), 5'000);
  EXPECT_GT(probe.pttl(hold_key(name, them, 1)), 4'000);
  EXPECT_GT(probe.pttl(name), 29'000);

  read.unlock();
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "read"}, {me, "1"}, {them, "1"}}));
  EXPECT_FALSE(probe.exists(hold_key(name, me, 2)));
  EXPECT_TRUE(probe.exists(hold_key(name, me, 1)));
  read.unlock();
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "read"}, {them, "1"}}));
  EXPECT_FALSE(probe.exists(hold_key(name, me, 1)));
  // The hash's TTL was recomputed from the hold that remains.
  EXPECT_LE(probe.pttl(name), 5'000);
  EXPECT_GT(probe.pttl(name), 3'000);
  EXPECT_EQ(recorder.wait_for(1, 200ms).size(), 0u) << "readers remain: nobody to wake";

  their_read.unlock_async(77).get();  // the last reader: deleted, "0" published
  EXPECT_FALSE(probe.exists(name));
  EXPECT_FALSE(probe.exists(hold_key(name, them, 1)));
  auto messages = recorder.wait_for(1, 2s);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].channel, channel_of(name));
  EXPECT_EQ(messages[0].payload, "0");
}

TEST_F(ReadWriteLockTest, WriteHoldsLeaveRedissonsHashAndPublishOneOnTheLast) {
  const std::string name = "ledger";
  ReadWriteLock rw = client.get_read_write_lock(name);
  Lock write = rw.write_lock();
  const std::string me = owner_of(client, current_thread_id());
  MessageRecorder recorder(server, {channel_of(name)});

  write.lock();
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "write"}, {me + ":write", "1"}}));
  EXPECT_GT(probe.pttl(name), 29'000);
  write.lock();
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "write"}, {me + ":write", "2"}}));
  EXPECT_EQ(write.hold_count(), 2);
  EXPECT_EQ(rw.read_lock().hold_count(), 0);
  EXPECT_TRUE(write.is_held());
  EXPECT_FALSE(rw.read_lock().is_held());
  EXPECT_TRUE(write.is_locked());
  EXPECT_FALSE(rw.read_lock().is_locked());

  write.unlock();
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "write"}, {me + ":write", "1"}}));
  EXPECT_EQ(recorder.wait_for(1, 200ms).size(), 0u);
  write.unlock();
  EXPECT_FALSE(probe.exists(name));
  auto messages = recorder.wait_for(1, 2s);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].channel, channel_of(name));
  EXPECT_EQ(messages[0].payload, "1");
  EXPECT_EQ(probe.keys("*ledger*:rwlock_timeout*"), std::vector<std::string>{}) << "no hold keys for a writer";
}

TEST_F(ReadWriteLockTest, MatrixAcrossOwners) {
  const std::string name = "matrix";
  Lock my_read = client.get_read_write_lock(name).read_lock();
  Lock my_write = client.get_read_write_lock(name).write_lock();
  Lock their_read = other.get_read_write_lock(name).read_lock();
  Lock their_write = other.get_read_write_lock(name).write_lock();
  // Owners in other clients, and another thread of this client.
  const thread_id them = 11, sibling = 12;

  my_read.lock();
  EXPECT_TRUE(their_read.try_lock_async(them, lock_options().with_wait(0ms)).get()) << "read + read share";
  EXPECT_TRUE(my_read.try_lock_async(sibling, lock_options().with_wait(0ms)).get())
      << "read + read share within a client";
  EXPECT_TRUE(my_read.is_locked());
  EXPECT_FALSE(my_write.is_locked());
  EXPECT_FALSE(their_write.try_lock_async(them + 100, lock_options().with_wait(0ms)).get()) << "read excludes write";
  EXPECT_FALSE(my_write.try_lock_async(sibling + 100, lock_options().with_wait(100ms)).get()) << "read excludes write";
  their_read.unlock_async(them).get();
  my_read.unlock_async(sibling).get();
  my_read.unlock();
  EXPECT_FALSE(probe.exists(name));

  my_write.lock();
  EXPECT_FALSE(their_read.try_lock_async(them, lock_options().with_wait(0ms)).get()) << "write excludes read";
  EXPECT_FALSE(their_write.try_lock_async(them, lock_options().with_wait(0ms)).get()) << "write excludes write";
  EXPECT_FALSE(my_read.try_lock_async(sibling, lock_options().with_wait(0ms)).get())
      << "write excludes another thread's read";
  EXPECT_FALSE(my_write.try_lock_async(sibling, lock_options().with_wait(100ms)).get())
      << "write excludes another thread's write";
  my_write.unlock();
  EXPECT_TRUE(their_write.try_lock_async(them, lock_options().with_wait(0ms)).get());
  their_write.unlock_async(them).get();
  EXPECT_FALSE(probe.exists(name));
}

TEST_F(ReadWriteLockTest, WriterMayReadAndDowngrades) {
  const std::string name = "downgrade";
  ReadWriteLock rw = client.get_read_write_lock(name);
  Lock read = rw.read_lock(), write = rw.write_lock();
  Lock their_read = other.get_read_write_lock(name).read_lock();
  Lock their_write = other.get_read_write_lock(name).write_lock();
  const std::string me = owner_of(client, current_thread_id());
  MessageRecorder recorder(server, {channel_of(name)});

  write.lock();
  read.lock();  // write then read by the same owner: allowed
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "write"}, {me + ":write", "1"}, {me, "1"}}));
  EXPECT_TRUE(probe.exists(hold_key(name, me, 1)));
  EXPECT_FALSE(their_read.try_lock_async(21, lock_options().with_wait(0ms)).get());
  write.lock();  // re-entering the write lock while also reading: fine
  EXPECT_EQ(write.hold_count(), 2);
  write.unlock();

  // Downgrade: release the write lock, stay a reader; everyone waiting is woken.
  write.unlock();
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "read"}, {me, "1"}}));
  long long hold_ttl = probe.pttl(hold_key(name, me, 1));
  EXPECT_LE(probe.pttl(name), hold_ttl + 50);
  EXPECT_GT(probe.pttl(name), 29'000);
  auto messages = recorder.wait_for(1, 2s);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].payload, "1");
  EXPECT_TRUE(read.is_held());
  EXPECT_TRUE(read.is_locked());

  EXPECT_TRUE(their_read.try_lock_async(21, lock_options().with_wait(0ms)).get())
      << "other readers join after a downgrade";
  EXPECT_FALSE(their_write.try_lock_async(22, lock_options().with_wait(0ms)).get());
  their_read.unlock_async(21).get();
  read.unlock();
  EXPECT_FALSE(probe.exists(name));
  messages = recorder.wait_for(2, 2s);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1].payload, "0");
}

TEST_F(ReadWriteLockTest, UpgradeFailsAtOnceWithItsTypedError) {
  const std::string name = "upgrade";
  ReadWriteLock rw = client.get_read_write_lock(name);
  Lock read = rw.read_lock(), write = rw.write_lock();
  const std::string me = owner_of(client, current_thread_id());

  read.lock();
  // First a form that cannot hang this test should the check ever break.
  auto refused = write.lock_async(current_thread_id());
  ASSERT_EQ(refused.wait_for(1s), std::future_status::ready) << "the upgrade is waiting for itself";
  expect_would_deadlock([&] { refused.get(); });
  expect_would_deadlock([&] { write.lock(); });
  expect_would_deadlock([&] { write.lock(lock_options().with_lease(10s)); });
  expect_would_deadlock([&] { write.try_lock(); });
  expect_would_deadlock([&] { write.try_lock_for(5s); });
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "read"}, {me, "1"}})) << "a refused upgrade changes nothing";
  read.unlock();

  // A downgraded writer is a reader like any other.
  write.lock();
  read.lock();
  write.unlock();
  expect_would_deadlock([&] { write.lock(); });
  read.unlock();
  EXPECT_FALSE(probe.exists(name));
  // With the read lock gone the write lock is free again.
  EXPECT_TRUE(write.try_lock());
  write.unlock();
}

TEST_F(ReadWriteLockTest, ReentrantCountsForBoth) {
  const std::string name = "counts";
  ReadWriteLock rw = client.get_read_write_lock(name);
  Lock read = rw.read_lock(), write = rw.write_lock();
  const std::string me = owner_of(client, current_thread_id());
  for (int i = 1; i <= 3; ++i) {
    write.lock();
    EXPECT_EQ(write.hold_count(), i);
  }
  for (int i = 1; i <= 3; ++i) {
    read.lock();
    EXPECT_EQ(read.hold_count(), i);
    EXPECT_TRUE(probe.exists(hold_key(name, me, i)));
  }
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "write"}, {me + ":write", "3"}, {me, "3"}}));
  for (int i = 2; i >= 0; --i) {
    write.unlock();
    EXPECT_EQ(write.hold_count(), i);
  }
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "read"}, {me, "3"}}));
  for (int i = 2; i >= 0; --i) {
    read.unlock();
    EXPECT_EQ(read.hold_count(), i);
    EXPECT_FALSE(probe.exists(hold_key(name, me, i + 1)));
  }
  EXPECT_FALSE(probe.exists(name));
  EXPECT_EQ(read.unlock_checked(), errc::not_owner) << "unlocking an unheld read lock must fail";
}

TEST_F(ReadWriteLockTest, WriteReleaseWakesEveryWaitingReaderReadReleaseAWriter) {
  const std::string name = "wake";
  Lock write = client.get_read_write_lock(name).write_lock();
  Lock their_read = other.get_read_write_lock(name).read_lock();
  Lock their_write = other.get_read_write_lock(name).write_lock();
  write.lock(lock_options().with_lease(60s));  // only a wake-up can explain a fast hand-over

  // Three readers waiting in one client, on one subscription. The first
  // finds nobody subscribed: a try, the subscription, a re-try, then it
  // sleeps. The others join the subscribed channel before their one try.
  auto read_tries = [&](thread_id owner) { return log.runs(scripts::rwlock_read_acquire, owner_of(other, owner)); };
  std::vector<AcquireFuture<void>> readers;
  readers.push_back(their_read.lock_async(31));
  ASSERT_TRUE(eventually([&] { return read_tries(31) == 2; }));
  for (thread_id owner : {32, 33}) readers.push_back(their_read.lock_async(owner));
  for (thread_id owner : {32, 33}) {
    ASSERT_TRUE(eventually([&] { return read_tries(owner) == 1; }));
  }
  auto released_at = std::chrono::steady_clock::now();
  write.unlock();  // "1": every local waiter re-tries, and readers share
  for (auto& reader : readers) {
    ASSERT_EQ(reader.wait_for(2s), std::future_status::ready);
    reader.get();
  }
  EXPECT_LT(elapsed_ms(released_at), 1'000);
  EXPECT_EQ(probe.hgetall(name).size(), 4u);  // mode + three readers

  // A writer waits for the readers; the last one out wakes it with "0".
  auto writer = their_write.lock_async(34);
  ASSERT_TRUE(eventually([&] { return log.runs(scripts::rwlock_write_acquire, owner_of(other, 34) + ":write") == 2; }));
  their_read.unlock_async(31).get();
  their_read.unlock_async(32).get();
  EXPECT_EQ(writer.wait_for(100ms), std::future_status::timeout);
  auto last_out = std::chrono::steady_clock::now();
  their_read.unlock_async(33).get();
  ASSERT_EQ(writer.wait_for(2s), std::future_status::ready);
  writer.get();
  EXPECT_LT(elapsed_ms(last_out), 1'000);
  EXPECT_EQ(probe.hgetall(name), (fields{{"mode", "write"}, {owner_of(other, 34) + ":write", "1"}}));
  their_write.unlock_async(34).get();
}

TEST_F(ReadWriteLockTest, WatchdogKeepsManyReadersAliveAndStopsAfterTheirRelease) {
  const std::string name = "{tenant7}:report";  // a hash-tagged name keeps its own tag in the hold keys
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 300ms;
  Client a{config};
  Client b{config};
  Lock a_read = a.get_read_write_lock(name).read_lock();
  Lock b_read = b.get_read_write_lock(name).read_lock();
  Event lost;
  auto listening = a_read.subscribe_lost([&](const LockLost&) { lost.set(); });
  auto listening_too = b_read.subscribe_lost([&](const LockLost&) { lost.set(); });
  const std::vector<std::string> hold_keys{
      name + ":" + owner_of(a, 1) + ":rwlock_timeout:1", name + ":" + owner_of(a, 1) + ":rwlock_timeout:2",
      name + ":" + owner_of(a, 2) + ":rwlock_timeout:1", name + ":" + owner_of(b, 1) + ":rwlock_timeout:1"};
  a_read.lock_async(1).get();
  a_read.lock_async(1).get();
  a_read.lock_async(2).get();
  b_read.lock_async(1).get();
  for (auto& key : hold_keys) ASSERT_TRUE(probe.exists(key)) << key;

  // Time is the subject: five leases.
  auto start = std::chrono::steady_clock::now();
  while (elapsed_ms(start) < 1'500) {
    std::this_thread::sleep_for(50ms);
    ASSERT_TRUE(probe.exists(name)) << "expired after " << elapsed_ms(start) << " ms";
    EXPECT_LE(probe.pttl(name), 300);
    for (auto& key : hold_keys) {
      ASSERT_TRUE(probe.exists(key)) << key << " expired after " << elapsed_ms(start) << " ms";
      EXPECT_LE(probe.pttl(key), 300);
    }
  }
  EXPECT_GT(a_read.valid_until(1), std::chrono::steady_clock::now());
  EXPECT_FALSE(lost.is_set());

  a_read.unlock_async(1).get();
  a_read.unlock_async(1).get();
  a_read.unlock_async(2).get();
  b_read.unlock_async(1).get();
  EXPECT_FALSE(probe.exists(name));
  for (auto& key : hold_keys) EXPECT_FALSE(probe.exists(key)) << key;
  long long after = probe.command_calls("evalsha") + probe.command_calls("eval");
  std::this_thread::sleep_for(300ms);  // three renewal periods: nothing more is sent
  EXPECT_EQ(probe.command_calls("evalsha") + probe.command_calls("eval"), after);
  EXPECT_FALSE(lost.is_set());
}

TEST_F(ReadWriteLockTest, WatchdogReportsALostReadHold) {
  const std::string name = "lost-read";
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 300ms;
  Client watched{config};
  Lock read = watched.get_read_write_lock(name).read_lock();
  Event lost;
  auto listening = read.subscribe_lost([&](const LockLost& event) {
    if (event.cause == errc::lease_expired) lost.set();
  });
  read.lock();
  probe.command({"DEL", name});
  ASSERT_TRUE(lost.wait_for(2s));
  EXPECT_EQ(read.unlock_checked(), errc::lease_expired) << "unlock after the hold was lost must fail";
}

TEST_F(ReadWriteLockTest, ForceUnlockOnlyInItsOwnMode) {
  const std::string name = "forced";
  ReadWriteLock rw = client.get_read_write_lock(name);
  Lock admin_read = other.get_read_write_lock(name).read_lock();
  Lock admin_write = other.get_read_write_lock(name).write_lock();
  const std::string me = owner_of(client, current_thread_id());
  MessageRecorder recorder(server, {channel_of(name)});

  rw.read_lock().lock();
  EXPECT_FALSE(admin_write.force_unlock()) << "not in write mode";
  EXPECT_TRUE(probe.exists(name));
  EXPECT_TRUE(admin_read.force_unlock());
  EXPECT_FALSE(probe.exists(name));
  EXPECT_FALSE(probe.exists(hold_key(name, me, 1)));

  rw.write_lock().lock();
  rw.read_lock().lock();
  EXPECT_FALSE(admin_read.force_unlock()) << "not in read mode";
  EXPECT_TRUE(admin_write.force_unlock());
  EXPECT_FALSE(probe.exists(name));
  EXPECT_FALSE(probe.exists(hold_key(name, me, 1)));

  auto messages = recorder.wait_for(2, 2s);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].payload, "0");
  EXPECT_EQ(messages[1].payload, "1");
}

TEST_F(ReadWriteLockTest, FixedLeasesExpireByThemselves) {
  const std::string name = "leased";
  ReadWriteLock rw = client.get_read_write_lock(name);
  const std::string me = owner_of(client, current_thread_id());
  ASSERT_TRUE(rw.read_lock().try_lock(lock_options().with_wait(0ms).with_lease(2s)));
  EXPECT_LE(probe.pttl(hold_key(name, me, 1)), 2'000);
  EXPECT_LE(probe.pttl(name), 2'000);
  rw.read_lock().unlock();
  ASSERT_TRUE(rw.write_lock().try_lock(lock_options().with_wait(0ms).with_lease(200ms)));
  EXPECT_LE(probe.pttl(name), 200);
  EXPECT_TRUE(eventually([&] { return !probe.exists(name); }, 2s));
  EXPECT_TRUE(other.get_read_write_lock(name).write_lock().try_lock());
  other.get_read_write_lock(name).write_lock().unlock();
}

TEST_F(ReadWriteLockTest, EmptyNameIsRejected) {
  try {
    client.get_read_write_lock("");
    FAIL() << "an empty name must be rejected";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::invalid_argument);
  }
}

}  // namespace
}  // namespace warden::test
