// What a lock's acquire and release cost the server, in Redis calls run
// inside their scripts (lua/README.md, "Calls per script"), and that the cut
// kept what the calls it dropped were for: the refused PUBLISH of a release
// still leaves the lock, and now its unlock latch too, as they were.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

using namespace std::chrono_literals;

// Every command the server ran so far, by name (INFO commandstats), but the
// probe's own INFO and the health checks' PING.
std::map<std::string, long long> calls(RedisProbe& probe) {
  std::map<std::string, long long> out;
  const std::string info = probe.command({"INFO", "commandstats"}).str;
  const std::string prefix = "cmdstat_";
  for (auto at = info.find(prefix); at != std::string::npos; at = info.find(prefix, at + 1)) {
    const auto colon = info.find(':', at);
    const auto calls_at = info.find("calls=", colon);
    const std::string name = info.substr(at + prefix.size(), colon - at - prefix.size());
    if (name == "info" || name == "ping") continue;
    out[name] = std::stoll(info.substr(calls_at + 6));
  }
  return out;
}

std::map<std::string, long long> since(RedisProbe& probe, const std::map<std::string, long long>& before) {
  std::map<std::string, long long> out;
  for (const auto& [name, n] : calls(probe)) {
    const auto it = before.find(name);
    const long long was = it == before.end() ? 0 : it->second;
    if (n != was) out[name] = n - was;
  }
  return out;
}

class ScriptCalls : public ::testing::Test {
 protected:
  RedisServer server;
  RedisProbe probe{server};
  Client client{fast_config(server)};
};

// A fixed lease: no watchdog renewal runs during the count.
const lock_options leased = lock_options().with_lease(30s);

TEST_F(ScriptCalls, AFreeLockTakenAndReleasedRunsSevenCalls) {
  Lock lock = client.get_lock("calls:free");
  lock.lock(leased);  // connects and loads the scripts outside the count
  lock.unlock();
  const auto before = calls(probe);
  constexpr long long pairs = 20;
  for (int i = 0; i < pairs; ++i) {
    lock.lock(leased);
    lock.unlock();
  }
  // Acquire: EXISTS lock mark, HINCRBY, PEXPIRE. Release: HGET, SET NX of the
  // latch, PUBLISH, DEL. No TYPE, HGETALL or GET on this path.
  const std::map<std::string, long long> expected = {{"evalsha", 2 * pairs}, {"exists", pairs}, {"hincrby", pairs},
                                                     {"pexpire", pairs},     {"hget", pairs},   {"set", pairs},
                                                     {"publish", pairs},     {"del", pairs}};
  EXPECT_EQ(since(probe, before), expected);
}

TEST_F(ScriptCalls, AReEntryAndItsReleaseRunFourCallsEach) {
  Lock lock = client.get_lock("calls:again");
  lock.lock(leased);  // the server learns both scripts outside the count
  lock.unlock();
  lock.lock(leased);
  const auto before = calls(probe);
  lock.lock(leased);
  lock.unlock();
  // Re-entry: EXISTS, HGETALL (the guard, which also finds the owner),
  // HINCRBY, PEXPIRE. Its release: HGET, SET NX, HINCRBY, PEXPIRE.
  const std::map<std::string, long long> expected = {{"evalsha", 2}, {"exists", 1}, {"hgetall", 1}, {"hincrby", 2},
                                                     {"pexpire", 2}, {"hget", 1},   {"set", 1}};
  EXPECT_EQ(since(probe, before), expected);
  EXPECT_EQ(lock.hold_count(), 1);
  lock.unlock();
}

TEST_F(ScriptCalls, ALockHeldByAnotherAnswersItsTtlInThreeCalls) {
  Lock mine = client.get_lock("calls:held");
  mine.lock(leased);
  Client other{fast_config(server)};
  Lock theirs = other.get_lock("calls:held");
  EXPECT_FALSE(theirs.try_lock());  // connects the other Client outside the count
  const auto before = calls(probe);
  EXPECT_FALSE(theirs.try_lock());
  // EXISTS, HGETALL, PTTL; nothing written.
  const std::map<std::string, long long> expected = {{"evalsha", 1}, {"exists", 1}, {"hgetall", 1}, {"pttl", 1}};
  EXPECT_EQ(since(probe, before), expected);
  mine.unlock();
}

// The release writes its latch (SET NX) before the lock's writes; a PUBLISH
// refused after it takes the latch back, so nothing at all is left changed.
TEST_F(ScriptCalls, ARefusedPublishLeavesTheLockAndNoLatch) {
  auto reply = probe.command({"ACL", "SETUSER", "calls-nochannels", "on", ">pw", "~*", "+@all", "resetchannels"});
  ASSERT_FALSE(reply.is_error()) << reply.str;
  Config config = fast_config(server);
  config.username = "calls-nochannels";
  config.password = "pw";
  Client limited{config};
  for (const char* kind : {"lock", "fair", "write", "read"}) {
    SCOPED_TRACE(kind);
    const std::string name = std::string("calls:refused:") + kind;
    const std::string k = kind;
    Lock lock = k == "lock"    ? limited.get_lock(name)
                : k == "write" ? limited.get_read_write_lock(name).write_lock()
                : k == "read"  ? limited.get_read_write_lock(name).read_lock()
                               : limited.get_fair_lock(name);
    lock.lock(leased);
    // A fair lock's release wakes its queue's head: queue one, so it publishes.
    if (k == "fair") {
      probe.command({"RPUSH", "redisson_lock_queue:{" + name + "}", "someone"});
      probe.command({"ZADD", "redisson_lock_timeout:{" + name + "}", "99999999999999", "someone"});
    }
    const auto fields = probe.command({"HGETALL", name}).elements.size();
    EXPECT_THROW(lock.unlock_async(current_thread_id()).get(), Error);
    EXPECT_TRUE(probe.exists(name));
    EXPECT_EQ(probe.command({"HGETALL", name}).elements.size(), fields);
    EXPECT_EQ(probe.keys("redisson_unlock_latch*"), std::vector<std::string>{});
    probe.command({"DEL", name});
  }
}

}  // namespace
}  // namespace warden::test
