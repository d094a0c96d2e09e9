// The warden-inspect program against a real redis-server, with every lock
// kind held and waited on: what it shows (text and JSON), --watch, scan,
// --force-unlock (refused without confirmation, confirmed on a terminal or
// with --yes, waking the waiters), and its exit codes.
#include <gtest/gtest.h>

#include <warden/warden.hpp>

#include <atomic>
#include <future>
#include <sstream>
#include <thread>

#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "run_program.hpp"

namespace warden::test {
namespace {

using namespace std::chrono_literals;

Config fast_config(const RedisServer& server) {
  Config config = Config::from_url(server.url());
  config.connect_timeout = 1s;
  config.command_timeout = 1s;
  config.retry_backoff_min = 20ms;
  config.retry_backoff_max = 200ms;
  return config;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 5s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

long long subscribers(RedisProbe& probe, const std::string& channel) {
  auto reply = probe.command({"PUBSUB", "NUMSUB", channel});
  return reply.elements.size() == 2 ? reply.elements[1].integer : 0;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A thread that waits for a lock (lock(), so it parks on the channel) and
// holds it until released; says which owner it is.
class Waiter {
 public:
  explicit Waiter(Lock lock) : lock_(std::move(lock)) {
    thread_ = std::thread([this] {
      owner_.set_value(current_thread_id());
      lock_.lock();
      acquired_ = true;
      release_.get_future().wait();
      lock_.unlock();
    });
    owner = owner_.get_future().get();
  }
  ~Waiter() {
    release_.set_value();
    thread_.join();
  }
  bool acquired() const { return acquired_; }

  thread_id owner = 0;

 private:
  Lock lock_;
  std::promise<thread_id> owner_;
  std::promise<void> release_;
  std::atomic<bool> acquired_{false};
  std::thread thread_;
};

class InspectCli : public ::testing::Test {
 protected:
  ProgramRun inspect(std::vector<std::string> args, input_kind input_from = input_kind::none,
                     const std::string& input = {}) {
    args.insert(args.begin(), {"--url", server.url()});
    return run_program(WARDEN_INSPECT, args, 20s, input_from, input);
  }
  std::string owner(const Client& client, thread_id thread) { return client.id() + ":" + std::to_string(thread); }

  RedisServer server;
  RedisProbe probe{server};
  Client holder{fast_config(server)};
  Client waiters{fast_config(server)};
};

TEST_F(InspectCli, ALockItsHolderCountClientAndAParkedWaiter) {
  Lock lock = holder.get_lock("inspect:lock");
  lock.lock();
  lock.lock();
  Waiter waiter(waiters.get_lock("inspect:lock"));
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{inspect:lock}") == 1; }));

  auto run = inspect({"--json", "inspect:lock"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto& json = run.out;
  EXPECT_TRUE(contains(json, "\"kind\":\"lock\"")) << json;
  EXPECT_TRUE(contains(json, "\"held\":true")) << json;
  EXPECT_TRUE(contains(json, "\"field\":\"" + owner(holder, current_thread_id()) + "\"")) << json;
  EXPECT_TRUE(contains(json, "\"client_id\":\"" + holder.id() + "\"")) << json;
  EXPECT_TRUE(contains(json, "\"count\":2")) << json;
  // The holder's connections are named warden:<id>: its address is known.
  EXPECT_TRUE(contains(json, "\"address\":\"127.0.0.1:")) << json;
  EXPECT_TRUE(contains(json, "{\"channel\":\"redisson_lock__channel:{inspect:lock}\",\"subscribers\":1}")) << json;
  EXPECT_FALSE(contains(json, "\"pttl_ms\":-")) << json;

  auto text = inspect({"inspect:lock"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "inspect:lock: lock, held")) << text.out;
  EXPECT_TRUE(contains(text.out, "count 2")) << text.out;
  EXPECT_TRUE(contains(text.out, "1 subscriber\n")) << text.out;
  lock.unlock();
  lock.unlock();
  ASSERT_TRUE(eventually([&] { return waiter.acquired(); }));
}

TEST_F(InspectCli, AFairLocksQueueInArrivalOrderWithDeadlines) {
  FairLock lock = holder.get_fair_lock("inspect:fair");
  lock.lock();
  const std::string channel = "redisson_lock__channel:{inspect:fair}:";
  auto first = std::make_unique<Waiter>(waiters.get_fair_lock("inspect:fair"));
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel + owner(waiters, first->owner)) == 1; }));
  auto second = std::make_unique<Waiter>(waiters.get_fair_lock("inspect:fair"));
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel + owner(waiters, second->owner)) == 1; }));

  auto run = inspect({"--json", "inspect:fair"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto& json = run.out;
  EXPECT_TRUE(contains(json, "\"kind\":\"fair\"")) << json;
  auto at_first = json.find("\"id\":\"" + owner(waiters, first->owner) + "\"");
  auto at_second = json.find("\"id\":\"" + owner(waiters, second->owner) + "\"");
  ASSERT_NE(at_first, std::string::npos) << json;
  ASSERT_NE(at_second, std::string::npos) << json;
  EXPECT_LT(at_first, at_second) << "the queue is shown head first";
  EXPECT_TRUE(contains(json, "\"deadline_in_ms\":")) << json;
  EXPECT_FALSE(contains(json, "\"deadline_in_ms\":-")) << json;
  // Both waiters listen on their own channels.
  int listening = 0;
  const std::string one = "\"subscribers\":1";
  for (auto at = json.find(one); at != std::string::npos; at = json.find(one, at + 1)) ++listening;
  EXPECT_EQ(listening, 2) << json;

  auto text = inspect({"inspect:fair"});
  EXPECT_TRUE(contains(text.out, "fair lock, held")) << text.out;
  EXPECT_TRUE(contains(text.out, "1. " + owner(waiters, first->owner))) << text.out;
  EXPECT_TRUE(contains(text.out, "2. " + owner(waiters, second->owner))) << text.out;
  EXPECT_TRUE(contains(text.out, "listening")) << text.out;
  lock.unlock();
  ASSERT_TRUE(eventually([&] { return first->acquired(); }));
  first.reset();
  ASSERT_TRUE(eventually([&] { return second->acquired(); }));
}

TEST_F(InspectCli, AReadWriteLockInReadModeAndInWriteMode) {
  ReadWriteLock rw = holder.get_read_write_lock("inspect:rw");
  rw.read_lock().lock();
  rw.read_lock().lock();
  std::thread([&] { waiters.get_read_write_lock("inspect:rw").read_lock().lock(); }).join();
  Waiter writer(waiters.get_read_write_lock("inspect:rw").write_lock());
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_rwlock:{inspect:rw}") == 1; }));

  auto run = inspect({"--json", "inspect:rw"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto& json = run.out;
  EXPECT_TRUE(contains(json, "\"kind\":\"rw\"")) << json;
  EXPECT_TRUE(contains(json, "\"mode\":\"read\"")) << json;
  EXPECT_TRUE(contains(json, "\"field\":\"" + owner(holder, current_thread_id()) + "\"")) << json;
  EXPECT_TRUE(contains(json, "\"count\":2,\"writer\":false,\"read_hold_ttls_ms\":[")) << json;
  EXPECT_FALSE(contains(json, "\"read_hold_ttls_ms\":[-")) << json;
  EXPECT_TRUE(contains(json, "{\"channel\":\"redisson_rwlock:{inspect:rw}\",\"subscribers\":1}")) << json;

  // Readers gone (the other client's reader too), the writer takes it.
  rw.read_lock().unlock();
  rw.read_lock().unlock();
  waiters.get_read_write_lock("inspect:rw").read_lock().force_unlock();
  ASSERT_TRUE(eventually([&] { return writer.acquired(); }));
  auto write = inspect({"--json", "inspect:rw"});
  EXPECT_TRUE(contains(write.out, "\"mode\":\"write\"")) << write.out;
  EXPECT_TRUE(contains(write.out, "\"field\":\"" + owner(waiters, writer.owner) + ":write\"")) << write.out;
  EXPECT_TRUE(contains(write.out, "\"writer\":true")) << write.out;
}

TEST_F(InspectCli, AFencedLockShowsItsToken) {
  // The layout of a FencedLock: a Lock plus its token counter.
  Lock lock = holder.get_lock("inspect:fenced");
  lock.lock();
  probe.command({"SET", "redisson_lock_token:{inspect:fenced}", "41"});
  probe.command({"INCR", "redisson_lock_token:{inspect:fenced}"});
  auto run = inspect({"--json", "inspect:fenced"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "\"kind\":\"fenced\"")) << run.out;
  EXPECT_TRUE(contains(run.out, "\"token\":\"42\"")) << run.out;
  lock.unlock();
  auto free = inspect({"inspect:fenced"});
  EXPECT_TRUE(contains(free.out, "fenced lock, not held")) << free.out;
  EXPECT_TRUE(contains(free.out, "token     42")) << free.out;
}

TEST_F(InspectCli, ALockWrittenByRedissonAndKeysThatAreNotLocks) {
  probe.command({"HSET", "inspect:java", "8743c9c0-0795-4907-87fd-6c719a6b4586:57", "1"});
  probe.command({"PEXPIRE", "inspect:java", "30000"});
  auto java = inspect({"inspect:java"});
  EXPECT_EQ(java.exit_code, 0) << java.err;
  EXPECT_TRUE(contains(java.out, "client 8743c9c0-0795-4907-87fd-6c719a6b4586 thread 57")) << java.out;

  probe.command({"SET", "inspect:string", "x"});
  auto string = inspect({"inspect:string"});
  EXPECT_EQ(string.exit_code, 1);
  EXPECT_TRUE(contains(string.out, "not a lock")) << string.out;

  auto none = inspect({"--json", "inspect:nothing"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_TRUE(contains(none.out, "\"kind\":\"none\",\"key_type\":\"none\",\"held\":false")) << none.out;
}

// Keys written by raw commands in Redisson's layouts: a semaphore's or a
// latch's counter (with a latch waiter of warden's parked on its channel),
// and a permit-expirable semaphore's count and permits' ZSET (16-byte ids,
// one expiring, one that never does).
TEST_F(InspectCli, SemaphoresPermitExpirableSemaphoresAndLatches) {
  probe.command({"SET", "inspect:gate", "2"});
  auto waited = waiters.get_count_down_latch("inspect:gate").wait_for_async(20s);
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_countdownlatch__channel__{inspect:gate}") == 1; }));
  auto gate = inspect({"inspect:gate"});
  ASSERT_EQ(gate.exit_code, 0) << gate.err;
  EXPECT_TRUE(contains(gate.out, "inspect:gate: semaphore or count-down latch (a string holding 2)")) << gate.out;
  EXPECT_TRUE(contains(gate.out, "semaphore 2 permits available")) << gate.out;
  EXPECT_TRUE(contains(gate.out, "latch     count 2")) << gate.out;
  EXPECT_TRUE(contains(gate.out, "channel   redisson_sc:{inspect:gate}  0 subscribers")) << gate.out;
  EXPECT_TRUE(contains(gate.out, "channel   redisson_countdownlatch__channel__{inspect:gate}  1 subscriber\n"))
      << gate.out;
  auto gate_json = inspect({"--json", "inspect:gate"});
  EXPECT_TRUE(contains(gate_json.out, "\"kind\":\"counter\"")) << gate_json.out;
  EXPECT_TRUE(contains(gate_json.out, "\"latch_count\":2")) << gate_json.out;
  waiters.get_count_down_latch("inspect:gate").remove();
  EXPECT_TRUE(waited.get());

  auto time = probe.command({"TIME"});
  long long now_ms = std::stoll(time.elements[0].str) * 1000 + std::stoll(time.elements[1].str) / 1000;
  const std::string expiring(16, '\x5a');
  const std::string forever = std::string(15, '\0') + "\x01";
  probe.command({"SET", "inspect:pool", "3"});
  // 45 s ahead: shown as 44.xx s, or 45.00 s when read within 5 ms (two decimals).
  probe.command({"ZADD", "{inspect:pool}:timeout", std::to_string(now_ms + 45'000), expiring});
  probe.command({"ZADD", "{inspect:pool}:timeout", "922337203685477", forever});
  auto pool = inspect({"inspect:pool"});
  ASSERT_EQ(pool.exit_code, 0) << pool.err;
  EXPECT_TRUE(contains(pool.out, "inspect:pool: permit-expirable semaphore, 3 permits available, 2 acquired"))
      << pool.out;
  EXPECT_TRUE(contains(pool.out, "permit    5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a  expires in 4")) << pool.out;
  EXPECT_TRUE(contains(pool.out, "permit    00000000000000000000000000000001  never expires")) << pool.out;
  auto pool_json = inspect({"--json", "inspect:pool"});
  EXPECT_TRUE(contains(pool_json.out, "\"kind\":\"pes\"")) << pool_json.out;
  EXPECT_TRUE(contains(pool_json.out, "{\"id\":\"00000000000000000000000000000001\"}")) << pool_json.out;

  // A name with '{': the permits' ZSET is NAME:timeout (Redisson's suffixName).
  probe.command({"ZADD", "pool{7}:timeout", std::to_string(now_ms + 60'000), expiring});
  auto braced = inspect({"pool{7}"});
  ASSERT_EQ(braced.exit_code, 0) << braced.err;
  EXPECT_TRUE(contains(braced.out, "pool{7}: permit-expirable semaphore, 0 permits available, 1 acquired"))
      << braced.out;
}

TEST_F(InspectCli, WatchRefreshesCountTimes) {
  holder.get_lock("inspect:watched").lock();
  auto run = inspect({"--json", "--watch", "--interval", "0.05", "--count", "3", "inspect:watched"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  int lines = 0;
  for (char c : run.out) lines += c == '\n';
  EXPECT_EQ(lines, 3) << run.out;
}

TEST_F(InspectCli, ScanListsTheHeldLocksOfAPattern) {
  holder.get_lock("inspect:scan:a").lock();
  holder.get_fair_lock("inspect:scan:b").lock();
  holder.get_read_write_lock("inspect:scan:c").read_lock().lock();
  probe.command({"SET", "inspect:scan:d", "x"});
  probe.command({"HSET", "inspect:scan:e", "name", "alice"});
  holder.get_lock("elsewhere").lock();
  auto run = inspect({"scan", "inspect:scan:*"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "inspect:scan:a  lock")) << run.out;
  EXPECT_TRUE(contains(run.out, "inspect:scan:b  lock")) << run.out;  // a free queue: shown as a lock
  EXPECT_TRUE(contains(run.out, "inspect:scan:c  rw/read")) << run.out;
  EXPECT_FALSE(contains(run.out, "inspect:scan:d")) << run.out;
  EXPECT_FALSE(contains(run.out, "inspect:scan:e")) << run.out;
  EXPECT_FALSE(contains(run.out, "elsewhere")) << run.out;
  auto json = inspect({"--json", "scan", "inspect:scan:*"});
  EXPECT_EQ(json.out.front(), '[');
  EXPECT_TRUE(contains(json.out, "\"name\":\"inspect:scan:c\"")) << json.out;
}

TEST_F(InspectCli, ForceUnlockAsksAndThenWakesTheWaiter) {
  Lock lock = holder.get_lock("inspect:force");
  lock.lock();
  Waiter waiter(waiters.get_lock("inspect:force"));
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{inspect:force}") == 1; }));

  // Standard input is not a terminal, no --yes: nothing happens.
  auto refused = inspect({"--force-unlock", "inspect:force"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_TRUE(contains(refused.err, "use --yes")) << refused.err;
  EXPECT_TRUE(probe.exists("inspect:force"));
  // On a terminal, "n" declines.
  auto declined = inspect({"--force-unlock", "inspect:force"}, input_kind::terminal, "n\n");
  EXPECT_EQ(declined.exit_code, 1) << declined.err;
  EXPECT_TRUE(contains(declined.err, "[y/N]")) << declined.err;
  EXPECT_TRUE(probe.exists("inspect:force"));
  // "y" confirms: the key goes and the waiter is woken by the message.
  auto confirmed = inspect({"--force-unlock", "inspect:force"}, input_kind::terminal, "y\n");
  EXPECT_EQ(confirmed.exit_code, 0) << confirmed.err;
  EXPECT_TRUE(contains(confirmed.out, "force-unlocked")) << confirmed.out;
  ASSERT_TRUE(eventually([&] { return waiter.acquired(); }, 2s)) << "the waiter was not woken";
}

TEST_F(InspectCli, ForceUnlockWithYesFreesAFairLockForItsHead) {
  FairLock lock = holder.get_fair_lock("inspect:force-fair");
  lock.lock();
  Waiter head(waiters.get_fair_lock("inspect:force-fair"));
  ASSERT_TRUE(eventually([&] {
    return subscribers(probe, "redisson_lock__channel:{inspect:force-fair}:" + owner(waiters, head.owner)) == 1;
  }));
  auto run = inspect({"--force-unlock", "--yes", "inspect:force-fair"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_TRUE(eventually([&] { return head.acquired(); }, 2s)) << "the queue head was not woken";
  auto none = inspect({"--force-unlock", "--yes", "inspect:absent"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_TRUE(contains(none.out, "nothing to unlock")) << none.out;
}

// The ACL line --help prints (PERMISSIONS), applied as printed: with it the
// tool reads every lock kind, held and waited on, and scans, and the server
// denies nothing (ACL LOG stays empty). The lock user line of
// docs/production.md has its own test (integration.Acl).
TEST_F(InspectCli, TheHelpsAclLineIsEnoughToInspectEveryKind) {
  auto help = run_program(WARDEN_INSPECT, {"--help"}, 10s);
  ASSERT_EQ(help.exit_code, 0) << help.err;
  std::vector<std::string> argv;
  std::istringstream lines(help.out);
  for (std::string line; argv.empty() && std::getline(lines, line);) {
    auto at = line.find("ACL SETUSER ");
    if (at == std::string::npos) continue;
    std::istringstream words(line.substr(at));
    for (std::string word; words >> word;) argv.push_back(word);
  }
  ASSERT_GE(argv.size(), 4u) << "no ACL SETUSER line in --help:\n" << help.out;
  std::string password;
  for (auto& word : argv) {
    if (word.size() > 1 && word[0] == '>') password = word.substr(1);
  }
  ASSERT_FALSE(password.empty()) << "the line sets no password";
  auto applied = probe.command(argv);
  ASSERT_FALSE(applied.is_error()) << applied.str;
  probe.command({"ACL", "LOG", "RESET"});
  const std::string url = "redis://" + argv[2] + ":" + password + "@127.0.0.1:" + std::to_string(server.port());
  auto as_user = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--url", url});
    return run_program(WARDEN_INSPECT, args, 20s);
  };

  // Every kind, held, with a waiter parked where one can be.
  Lock lock = holder.get_lock("acl:lock");
  lock.lock();
  Waiter lock_waiter(waiters.get_lock("acl:lock"));
  FairLock fair = holder.get_fair_lock("acl:fair");
  fair.lock();
  Waiter fair_waiter(waiters.get_fair_lock("acl:fair"));
  ReadWriteLock rw = holder.get_read_write_lock("acl:rw");
  rw.read_lock().lock();
  Waiter writer(waiters.get_read_write_lock("acl:rw").write_lock());
  FencedLock fenced = holder.get_fenced_lock("acl:fenced");
  fenced.lock();
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{acl:lock}") == 1; }));
  ASSERT_TRUE(eventually([&] { return probe.command({"LLEN", "redisson_lock_queue:{acl:fair}"}).integer == 1; }));
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_rwlock:{acl:rw}") == 1; }));

  probe.command({"SET", "acl:counter", "3"});
  probe.command({"ZADD", "{acl:counter}:timeout", "922337203685477", "permit"});
  for (auto name : {"acl:lock", "acl:fair", "acl:rw", "acl:fenced", "acl:free", "acl:counter"}) {
    auto run = as_user({"--json", name});
    EXPECT_EQ(run.exit_code, 0) << name << ": " << run.err;
  }
  auto text = as_user({"acl:fair"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "fair lock, held")) << text.out;
  EXPECT_TRUE(contains(text.out, "connected from 127.0.0.1:")) << text.out;  // CLIENT LIST was allowed
  auto scan = as_user({"scan", "acl:*"});
  EXPECT_EQ(scan.exit_code, 0) << scan.err;
  EXPECT_TRUE(contains(scan.out, "rw/read")) << scan.out;
  EXPECT_TRUE(contains(scan.out, "acl:fenced")) << scan.out;

  std::string denials;
  for (auto& entry : probe.command({"ACL", "LOG"}).elements) {
    for (auto& field : entry.elements) denials += field.str + " ";
    denials += "\n";
  }
  EXPECT_EQ(denials, "");
  fenced.unlock();
  rw.read_lock().unlock();
  fair.unlock();
  lock.unlock();
}

TEST_F(InspectCli, HelpUsageErrorsAndAnUnreachableServer) {
  auto help = run_program(WARDEN_INSPECT, {"--help"}, 10s);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(contains(help.out, "SYNOPSIS")) << help.out;
  auto bad = run_program(WARDEN_INSPECT, {"--bogus"}, 10s);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(contains(bad.err, "unknown option --bogus")) << bad.err;
  auto url = run_program(WARDEN_INSPECT, {"--url", "http://x", "name"}, 10s);
  EXPECT_EQ(url.exit_code, 2) << url.err;
  std::uint16_t port;
  {
    RedisServer gone;
    port = gone.port();
  }
  auto away =
      run_program(WARDEN_INSPECT, {"--url", "redis://127.0.0.1:" + std::to_string(port), "--timeout", "0.5", "x"}, 10s);
  EXPECT_EQ(away.exit_code, 1);
  EXPECT_TRUE(contains(away.err, "connection refused")) << away.err;
}

}  // namespace
}  // namespace warden::test
