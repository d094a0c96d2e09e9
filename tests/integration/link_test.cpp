// warden's own link against real redis-server processes: one Connection
// driven directly on an EventLoop (pipelining, a large value, deadlines,
// resending after a restart), PubSub (classic and shard channels, the health
// check on a subscribed link, a slot moving away in a real cluster), a peer
// that is not Redis and a unix socket.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "io/connection.hpp"
#include "io/event_loop.hpp"
#include "io/pubsub.hpp"
#include "lock/wake_policy.hpp"
#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

using detail::Connection;
using detail::ConnectionOptions;
using detail::EventLoop;
using detail::PubSub;
using detail::Response;
using steady = std::chrono::steady_clock;

// What the code under test logged, for assertions. Called on the loop thread,
// read from the test thread.
class LogRecorder {
 public:
  warden::logger logger() {
    return [this](log_level, std::string_view message) {
      std::lock_guard<std::mutex> guard(mutex_);
      lines_.emplace_back(message);
    };
  }
  bool contains(const std::string& text) const {
    std::lock_guard<std::mutex> guard(mutex_);
    for (const auto& line : lines_) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::string all() const {
    std::lock_guard<std::mutex> guard(mutex_);
    std::string out;
    for (const auto& line : lines_) out += line + "\n";
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

// Counts callbacks (on the loop thread) and lets the test wait for the n-th.
class Counter {
 public:
  void add() {
    std::lock_guard<std::mutex> guard(mutex_);
    ++count_;
    cv_.notify_all();
  }
  int value() {
    std::lock_guard<std::mutex> guard(mutex_);
    return count_;
  }
  bool wait_for_at_least(int n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> guard(mutex_);
    return cv_.wait_for(guard, timeout, [&] { return count_ >= n; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_ = 0;
};

// An EventLoop and the connections and subscribers living on it. They are
// made, used and destroyed on the loop thread only, as in the library.
class LoopHarness {
 public:
  LoopHarness() = default;
  ~LoopHarness() {
    loop_.stop([this] {
      for (auto& pubsub : pubsubs_) pubsub->close();
      pubsubs_.clear();
      connections_.clear();
    });
  }
  LoopHarness(const LoopHarness&) = delete;
  LoopHarness& operator=(const LoopHarness&) = delete;

  EventLoop& loop() { return loop_; }

  // Runs `fn` on the loop thread and returns its result once it has run.
  template <class F>
  auto run(F fn) -> decltype(fn()) {
    using result = decltype(fn());
    auto task = std::make_shared<std::packaged_task<result()>>(std::move(fn));
    auto done = task->get_future();
    if (!loop_.post([task] { (*task)(); })) throw std::logic_error("the loop is stopping");
    return done.get();
  }

  // A started connection; `ready` (if given) counts its (re)connects.
  Connection& connection(ConnectionOptions options, Counter* ready = nullptr) {
    return run([&]() -> Connection& {
      connections_.push_back(std::make_unique<Connection>(loop_, std::move(options)));
      Connection& connection = *connections_.back();
      if (ready != nullptr) connection.on_ready([ready] { ready->add(); });
      connection.start();
      return connection;
    });
  }

  PubSub& pubsub(ConnectionOptions options, bool sharded) {
    return run([&]() -> PubSub& {
      pubsubs_.push_back(std::make_unique<PubSub>(loop_, std::move(options), sharded));
      pubsubs_.back()->start();
      return *pubsubs_.back();
    });
  }

  // Sends one command from the loop thread; the future holds its response.
  std::future<Response> send(Connection& connection, std::vector<std::string> argv,
                             std::chrono::milliseconds budget, bool idempotent) {
    auto promise = std::make_shared<std::promise<Response>>();
    auto response = promise->get_future();
    run([&] {
      connection.send(std::move(argv), steady::now() + budget, idempotent,
                      [promise](Response&& r) { promise->set_value(std::move(r)); });
    });
    return response;
  }

  // Returns once everything queued on the loop so far has run and the output
  // of the turns before has been handed to the sockets.
  void sync() {
    run([] {});
  }

 private:
  EventLoop loop_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<std::unique_ptr<PubSub>> pubsubs_;
};

ConnectionOptions options_for(const RedisServer& server, LogRecorder& log,
                              connection_role role = connection_role::command) {
  ConnectionOptions options;
  options.host = server.host();
  options.port = server.port();
  options.connect_timeout = 1s;
  options.health_check_interval = 10s;  // tests that probe the health check set their own
  options.backoff_min = 20ms;
  options.backoff_max = 100ms;
  options.role = role;
  options.log = log.logger();
  return options;
}

// Waits for a response; a future that is not ready in time fails the test
// instead of hanging it.
::testing::AssertionResult ready_within(std::future<Response>& response, std::chrono::milliseconds timeout) {
  if (response.wait_for(timeout) == std::future_status::ready) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no response within " << timeout.count() << " ms";
}

std::string describe(const Response& response) {
  if (response.error) return "error " + response.error.message();
  return "reply '" + response.reply.str.substr(0, 200) + "' (integer " + std::to_string(response.reply.integer) + ")";
}

// The ids of the server's clients in pub/sub mode, from CLIENT LIST.
std::vector<std::string> pubsub_client_ids(RedisProbe& probe) {
  std::vector<std::string> ids;
  std::istringstream lines(probe.command({"CLIENT", "LIST", "TYPE", "pubsub"}).str);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("id=", 0) != 0) continue;
    ids.push_back(line.substr(3, line.find(' ') - 3));
  }
  return ids;
}

// A field of INFO commandstats, e.g. ("ssubscribe", "rejected_calls").
long long command_stat(RedisProbe& probe, const std::string& command, const std::string& field) {
  std::istringstream lines(probe.command({"INFO", "commandstats"}).str);
  const std::string prefix = "cmdstat_" + command + ":";
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    auto at = line.find(field + "=", prefix.size());
    return at == std::string::npos ? 0 : std::atoll(line.c_str() + at + field.size() + 1);
  }
  return 0;
}

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDirectory {
 public:
  explicit TempDirectory(const std::string& prefix) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + prefix + "XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp");
    path_ = buffer.data();
  }
  ~TempDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A loopback port nobody listens on right now (the kernel's choice).
std::uint16_t free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    int error = errno;
    close(fd);
    throw std::system_error(error, std::generic_category(), "bind");
  }
  close(fd);
  return ntohs(address.sin_port);
}

// ---------------------------------------------------------------------------
// Connection on an EventLoop

TEST(LinkConnection, CommandsPipelinedInOneLoopTurnGetTheirOwnRepliesInOrder) {
  RedisServer server;
  RedisProbe probe(server);
  LogRecorder log;
  Counter ready;
  LoopHarness harness;
  Connection& connection = harness.connection(options_for(server, log), &ready);
  ASSERT_TRUE(ready.wait_for_at_least(1, 3s)) << log.all();

  static constexpr int count = 1000;
  // (which command, what it got), in the order the handlers ran.
  auto replies = std::make_shared<std::vector<std::pair<int, long long>>>();
  auto done = std::make_shared<std::promise<void>>();
  auto all_done = done->get_future();
  harness.run([&] {
    auto deadline = steady::now() + 2s;
    for (int i = 0; i < count; ++i) {
      connection.send({"INCR", "counter"}, deadline, false, [replies, done, i](Response&& r) {
        replies->emplace_back(i, r.error ? -1 : (r.reply.is_integer() ? r.reply.integer : -2));
        if (replies->size() == static_cast<std::size_t>(count)) done->set_value();
      });
    }
  });
  ASSERT_EQ(all_done.wait_for(3s), std::future_status::ready) << log.all();
  ASSERT_EQ(replies->size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ((*replies)[static_cast<std::size_t>(i)], std::make_pair(i, static_cast<long long>(i) + 1))
        << "handler #" << i;
  }
  EXPECT_EQ(probe.get("counter"), std::optional<std::string>("1000"));
}

TEST(LinkConnection, AFourMebibyteValueSurvivesPartialWritesAndSplitReads) {
  RedisServer server;
  RedisProbe probe(server);
  LogRecorder log;
  Counter ready;
  LoopHarness harness;
  Connection& connection = harness.connection(options_for(server, log), &ready);
  ASSERT_TRUE(ready.wait_for_at_least(1, 3s)) << log.all();

  // Every byte value, CR and LF included, in a pattern that does not repeat
  // at any power-of-two stride: a shifted or dropped chunk shows.
  std::string value(4u << 20, '\0');
  for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>((i * 131 + i / 4099) & 0xff);

  // SET and GET leave in one loop turn; the GET waits behind the SET's write.
  auto set = std::make_shared<std::promise<Response>>();
  auto get = std::make_shared<std::promise<Response>>();
  auto after = std::make_shared<std::promise<Response>>();
  auto set_done = set->get_future();
  auto get_done = get->get_future();
  auto after_done = after->get_future();
  harness.run([&] {
    auto deadline = steady::now() + 2500ms;
    connection.send({"SET", "big", value}, deadline, false, [set](Response&& r) { set->set_value(std::move(r)); });
    connection.send({"GET", "big"}, deadline, true, [get](Response&& r) { get->set_value(std::move(r)); });
    connection.send({"ECHO", "after"}, deadline, true, [after](Response&& r) { after->set_value(std::move(r)); });
  });
  ASSERT_TRUE(ready_within(set_done, 3s));
  ASSERT_TRUE(ready_within(get_done, 3s));
  ASSERT_TRUE(ready_within(after_done, 3s));
  Response set_response = set_done.get();
  Response get_response = get_done.get();
  EXPECT_TRUE(set_response.ok()) << describe(set_response);
  ASSERT_TRUE(get_response.ok()) << describe(get_response);
  ASSERT_EQ(get_response.reply.str.size(), value.size());
  EXPECT_TRUE(get_response.reply.str == value) << "the value came back changed";
  EXPECT_EQ(after_done.get().reply.str, "after");
  EXPECT_EQ(probe.command({"STRLEN", "big"}).integer, static_cast<long long>(value.size()));
}

TEST(LinkConnection, ACommandToAPausedServerTimesOutAndItsLateReplyIsDropped) {
  RedisServer server;
  LogRecorder log;
  Counter ready;
  LoopHarness harness;
  Connection& connection = harness.connection(options_for(server, log), &ready);
  ASSERT_TRUE(ready.wait_for_at_least(1, 3s)) << log.all();

  server.pause();
  auto start = steady::now();
  auto first = harness.send(connection, {"ECHO", "first"}, 150ms, false);
  ASSERT_TRUE(ready_within(first, 2s));
  auto waited = elapsed_ms(start);
  Response first_response = first.get();
  EXPECT_EQ(first_response.error, errc::timed_out) << describe(first_response);
  EXPECT_GE(waited, 150);
  EXPECT_LT(waited, 1000);

  // Sent while the first is still unanswered on the wire: after resume() the
  // server answers both, and the first answer must not be taken for this one.
  auto second = harness.send(connection, {"ECHO", "second"}, 2s, false);
  EXPECT_EQ(second.wait_for(50ms), std::future_status::timeout);
  server.resume();
  ASSERT_TRUE(ready_within(second, 2s));
  Response second_response = second.get();
  EXPECT_TRUE(second_response.ok()) << describe(second_response);
  EXPECT_EQ(second_response.reply.str, "second");

  auto third = harness.send(connection, {"ECHO", "third"}, 1s, false);
  ASSERT_TRUE(ready_within(third, 2s));
  EXPECT_EQ(third.get().reply.str, "third");
  EXPECT_EQ(ready.value(), 1) << "the connection was re-made:\n" << log.all();
  EXPECT_FALSE(log.contains("lost")) << log.all();
}

TEST(LinkConnection, AfterARestartIdempotentCommandsAreSentAgainAndOthersReportConnectionLost) {
  RedisServer server;
  RedisProbe probe(server);
  LogRecorder log;
  Counter ready;
  LoopHarness harness;
  Connection& connection = harness.connection(options_for(server, log), &ready);
  ASSERT_TRUE(ready.wait_for_at_least(1, 3s)) << log.all();

  // Paused, the server takes the bytes into its socket buffer but runs
  // nothing: both commands are in flight, unanswered, when it dies.
  server.pause();
  auto idempotent = harness.send(connection, {"SET", "resent", "yes"}, 2500ms, true);
  auto other = harness.send(connection, {"INCR", "not-resent"}, 2500ms, false);
  harness.sync();  // both written
  server.kill();

  ASSERT_TRUE(ready_within(other, 2s));
  Response other_response = other.get();
  EXPECT_EQ(other_response.error, errc::connection_lost) << describe(other_response);
  EXPECT_EQ(idempotent.wait_for(0ms), std::future_status::timeout) << "it waits for the next connection";

  server.start();
  ASSERT_TRUE(ready_within(idempotent, 2s)) << log.all();
  Response idempotent_response = idempotent.get();
  EXPECT_TRUE(idempotent_response.ok()) << describe(idempotent_response);
  EXPECT_EQ(idempotent_response.reply.str, "OK");
  EXPECT_EQ(probe.get("resent"), std::optional<std::string>("yes"));
  EXPECT_FALSE(probe.exists("not-resent"));
  // Usually 2; 3 when the reconnect made at once after the reset reached the
  // dying server's listening socket before the kernel closed it (that ghost
  // connection is reset too, costing the SET one of its resends).
  EXPECT_GE(ready.value(), 2) << log.all();
  EXPECT_TRUE(log.contains("lost")) << log.all();
  EXPECT_TRUE(log.contains("re-established")) << log.all();
}

// ---------------------------------------------------------------------------
// PubSub

// One waiter on one channel: joins, is confirmed, parks; counts its wake-ups.
struct Waiter {
  Counter ready;
  Counter woken;
  std::uint64_t id = 0;

  void join(LoopHarness& harness, PubSub& pubsub, const std::string& channel) {
    id = harness.run(
        [&] {
          return pubsub.join(
              channel, [this] { ready.add(); }, [this](wake_cause) { woken.add(); }, detail::lock_wake_policy());
        });
  }
  // False when a wake-up was owed and the waiter should re-try at once.
  bool park(LoopHarness& harness, PubSub& pubsub, const std::string& channel) {
    return !harness.run([&] { return pubsub.park(channel, id); });
  }
};

TEST(LinkPubSub, APublishWakesAWaiterOnAClassicChannel) {
  RedisServer server;
  RedisProbe probe(server);
  LogRecorder log;
  Waiter waiter;
  LoopHarness harness;
  PubSub& pubsub = harness.pubsub(options_for(server, log, connection_role::subscriber), false);
  const std::string channel = "warden_test:classic";
  waiter.join(harness, pubsub, channel);
  ASSERT_TRUE(waiter.ready.wait_for_at_least(1, 3s)) << log.all();
  EXPECT_TRUE(harness.run([&] { return pubsub.subscribed(channel); }));
  EXPECT_EQ(subscribers(probe, channel), 1);
  ASSERT_TRUE(waiter.park(harness, pubsub, channel));

  EXPECT_EQ(probe.command({"PUBLISH", channel, "0"}).integer, 1);
  EXPECT_TRUE(waiter.woken.wait_for_at_least(1, 2s));
}

TEST(LinkPubSub, ShardedModeSubscribesWithSsubscribeAndSpublishWakesTheWaiter) {
  RedisServer server;
  RedisProbe probe(server);
  LogRecorder log;
  Waiter waiter;
  LoopHarness harness;
  PubSub& pubsub = harness.pubsub(options_for(server, log, connection_role::subscriber), true);
  const std::string channel = "warden_test:sharded";
  waiter.join(harness, pubsub, channel);
  ASSERT_TRUE(waiter.ready.wait_for_at_least(1, 3s)) << log.all();
  EXPECT_TRUE(harness.run([&] { return pubsub.subscribed(channel); }));
  // A shard subscription, not a classic one.
  auto shard = probe.command({"PUBSUB", "SHARDNUMSUB", channel});
  ASSERT_EQ(shard.elements.size(), 2u);
  EXPECT_EQ(shard.elements[1].integer, 1);
  EXPECT_EQ(subscribers(probe, channel), 0);
  ASSERT_TRUE(waiter.park(harness, pubsub, channel));

  // A classic PUBLISH reaches nobody; SPUBLISH reaches the waiter (smessage).
  EXPECT_EQ(probe.command({"PUBLISH", channel, "0"}).integer, 0);
  EXPECT_EQ(probe.command({"SPUBLISH", channel, "0"}).integer, 1);
  EXPECT_TRUE(waiter.woken.wait_for_at_least(1, 2s));
  EXPECT_EQ(waiter.woken.value(), 1);
}

// The link drops after the server took a SUBSCRIBE but before its answer was
// read: the waiter is told at once (it re-tries) instead of sleeping out its
// wait for a confirmation that only a reconnect would bring.
TEST(LinkPubSub, AWaiterNotConfirmedYetIsToldWhenTheLinkDrops) {
  RedisServer server;
  LogRecorder log;
  Waiter first, second;
  LoopHarness harness;
  PubSub& pubsub = harness.pubsub(options_for(server, log, connection_role::subscriber), false);
  first.join(harness, pubsub, "warden_test:confirmed");
  ASSERT_TRUE(first.ready.wait_for_at_least(1, 3s)) << log.all();
  ASSERT_TRUE(first.park(harness, pubsub, "warden_test:confirmed"));
  server.pause();  // the next SUBSCRIBE gets no answer
  second.join(harness, pubsub, "warden_test:unconfirmed");
  harness.sync();
  EXPECT_EQ(second.ready.value(), 0);
  server.kill();  // the link drops with that subscription unconfirmed
  EXPECT_TRUE(second.ready.wait_for_at_least(1, 2s)) << log.all();
  EXPECT_TRUE(first.woken.wait_for_at_least(1, 2s)) << log.all();
}

// A subscriber probed every 50 ms with one waiter parked on `channel`, and
// the server's id of its connection. Members are destroyed loop first.
struct ProbedSubscriber {
  RedisServer server;
  RedisProbe probe{server};
  LogRecorder log;
  Waiter waiter;
  LoopHarness harness;
  ConnectionOptions options = options_for(server, log, connection_role::subscriber);
  PubSub* pubsub = nullptr;
  std::string channel;
  std::vector<std::string> ids;

  // Call through ASSERT_NO_FATAL_FAILURE.
  void start(std::string name) {
    channel = std::move(name);
    options.health_check_interval = 50ms;
    pubsub = &harness.pubsub(options, false);
    waiter.join(harness, *pubsub, channel);
    ASSERT_TRUE(waiter.ready.wait_for_at_least(1, 3s)) << log.all();
    ASSERT_TRUE(waiter.park(harness, *pubsub, channel));
    ids = pubsub_client_ids(probe);
    ASSERT_EQ(ids.size(), 1u);
  }
};

TEST(LinkPubSub, TheHealthCheckPingsASubscribedLinkWithoutDroppingIt) {
  ProbedSubscriber link;
  ASSERT_NO_FATAL_FAILURE(link.start("warden_test:health"));
  auto& [server, probe, log, waiter, harness, options, pubsub_ptr, channel, ids] = link;
  PubSub& pubsub = *pubsub_ptr;

  // A PING goes out whenever the link was quiet for an interval: at least one
  // every two intervals. Wait for several, and for ten intervals to pass.
  auto start = steady::now();
  long long pings = probe.command_calls("ping");
  ASSERT_TRUE(eventually([&] { return probe.command_calls("ping") >= pings + 5; }, 2s)) << log.all();
  if (steady::now() - start < 10 * options.health_check_interval) {
    std::this_thread::sleep_for(10 * options.health_check_interval - (steady::now() - start));  // time itself is tested
  }

  EXPECT_EQ(pubsub_client_ids(probe), ids) << "the subscriber connection was re-made";
  EXPECT_EQ(waiter.woken.value(), 0) << "a reconnect woke the waiter";
  EXPECT_FALSE(log.contains("lost")) << log.all();
  EXPECT_FALSE(log.contains("re-established")) << log.all();
  EXPECT_TRUE(harness.run([&] { return pubsub.subscribed(channel); }));
  EXPECT_EQ(probe.command({"PUBLISH", channel, "0"}).integer, 1);
  EXPECT_TRUE(waiter.woken.wait_for_at_least(1, 2s));
}

TEST(LinkPubSub, APausedServerMakesTheSubscriberDropAndReconnectAfterResume) {
  ProbedSubscriber link;
  ASSERT_NO_FATAL_FAILURE(link.start("warden_test:paused"));
  auto& [server, probe, log, waiter, harness, options, pubsub_ptr, channel, ids] = link;
  PubSub& pubsub = *pubsub_ptr;

  server.pause();
  // The unanswered PING drops the link, and the waiter is woken to re-poll
  // rather than sleeping out a lock's TTL.
  ASSERT_TRUE(waiter.woken.wait_for_at_least(1, 2s)) << log.all();
  EXPECT_TRUE(log.contains("health check got no reply")) << log.all();
  EXPECT_FALSE(harness.run([&] { return pubsub.subscribed(channel); }));

  int woken_before_resume = waiter.woken.value();
  server.resume();
  // Connections abandoned while the server was stopped are processed (and
  // closed) by it after resume: wait until only the current one subscribes.
  ASSERT_TRUE(eventually(
      [&] { return harness.run([&] { return pubsub.subscribed(channel); }) && pubsub_client_ids(probe).size() == 1; },
      2s))
      << log.all();
  EXPECT_NE(pubsub_client_ids(probe), ids);
  // Re-subscribed: what was published meanwhile is lost, so the waiter re-polls.
  EXPECT_GT(waiter.woken.value(), woken_before_resume);
  EXPECT_TRUE(log.contains("re-established")) << log.all();

  int woken = waiter.woken.value();
  ASSERT_TRUE(waiter.park(harness, pubsub, channel));
  EXPECT_EQ(probe.command({"PUBLISH", channel, "0"}).integer, 1);
  EXPECT_TRUE(waiter.woken.wait_for_at_least(woken + 1, 2s));
}

// ---------------------------------------------------------------------------
// A real two-node cluster

// Two cluster-enabled redis-server processes on loopback with every slot on
// node A, each knowing the other. The cluster bus ports are chosen freely
// (--cluster-port) rather than port + 10000, which may be taken or too high.
class TwoNodeCluster {
 public:
  TwoNodeCluster() : directory_("warden-cluster-") {
    a_ = start_node("a");
    b_ = start_node("b");
    probe_a_ = std::make_unique<RedisProbe>(*a_);
    probe_b_ = std::make_unique<RedisProbe>(*b_);
    id_a_ = probe_a_->command({"CLUSTER", "MYID"}).str;
    id_b_ = probe_b_->command({"CLUSTER", "MYID"}).str;
    expect_ok(*probe_a_, {"CLUSTER", "ADDSLOTSRANGE", "0", "16383"});
    expect_ok(*probe_a_, {"CLUSTER", "MEET", "127.0.0.1", std::to_string(b_->port()), std::to_string(bus_b_)});
    // The cluster state itself may stay "fail" for a moment (a master waits
    // before declaring itself writable); shard pub/sub is served regardless
    // (cluster-allow-pubsubshard-when-down), so only the handshake matters.
    if (!eventually([&] { return knows(*probe_a_, id_b_) && knows(*probe_b_, id_a_); }, 5s)) {
      throw std::runtime_error("the nodes did not meet:\n" + probe_a_->command({"CLUSTER", "NODES"}).str + "\n" +
                               probe_b_->command({"CLUSTER", "NODES"}).str);
    }
  }

  RedisServer& a() { return *a_; }
  RedisServer& b() { return *b_; }
  RedisProbe& probe_a() { return *probe_a_; }
  RedisProbe& probe_b() { return *probe_b_; }

  // Hands an empty slot to B as the last step of a resharding does: the new
  // owner first, then the old one.
  void move_slot_to_b(long long slot) {
    expect_ok(*probe_b_, {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", id_b_});
    expect_ok(*probe_a_, {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", id_b_});
  }

 private:
  std::unique_ptr<RedisServer> start_node(const std::string& name) {
    // A bus port taken between choosing and binding makes the server exit:
    // start over with another.
    for (int attempt = 0;; ++attempt) {
      std::string node_directory = directory_.path() + "/" + name + std::to_string(attempt);
      std::filesystem::create_directory(node_directory);
      std::uint16_t bus = free_port();
      try {
        auto server = std::make_unique<RedisServer>(std::vector<std::string>{
            "--cluster-enabled", "yes", "--cluster-config-file", node_directory + "/nodes.conf", "--cluster-port",
            std::to_string(bus)});
        (name == "a" ? bus_a_ : bus_b_) = bus;
        return server;
      } catch (const std::runtime_error&) {
        if (attempt == 2) throw;
      }
    }
  }

  static void expect_ok(RedisProbe& probe, const std::vector<std::string>& argv) {
    auto reply = probe.command(argv);
    if (reply.is_error()) throw std::runtime_error(argv[1] + " failed: " + reply.str);
  }

  // Whether `probe`'s node lists `id` as a connected peer (handshake done).
  static bool knows(RedisProbe& probe, const std::string& id) {
    std::istringstream lines(probe.command({"CLUSTER", "NODES"}).str);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind(id, 0) == 0) {
        return line.find("handshake") == std::string::npos && line.find("noaddr") == std::string::npos &&
               line.find(" connected") != std::string::npos;
      }
    }
    return false;
  }

  TempDirectory directory_;
  std::uint16_t bus_a_ = 0;
  std::uint16_t bus_b_ = 0;
  std::unique_ptr<RedisServer> a_;
  std::unique_ptr<RedisServer> b_;
  std::unique_ptr<RedisProbe> probe_a_;
  std::unique_ptr<RedisProbe> probe_b_;
  std::string id_a_;
  std::string id_b_;
};

// Redis 7.0, seen by hand with redis-cli: when A gives up a slot (CLUSTER
// SETSLOT <slot> NODE <B>), it ends every shard subscription in that slot by
// sending ["sunsubscribe", channel, 0] on its own, and an SSUBSCRIBE to that
// channel on A is answered with "-MOVED <slot> <B's address>". PubSub then
// re-subscribes, is refused and falls back to polling.
TEST(LinkCluster, ASlotMovingAwayEndsTheShardSubscriptionWakesTheWaiterAndTellsWhereTheSlotWent) {
  TwoNodeCluster cluster;
  const std::string channel = "warden_test:moving";
  long long slot = cluster.probe_a().command({"CLUSTER", "KEYSLOT", channel}).integer;
  LogRecorder log;
  Waiter waiter;
  LoopHarness harness;
  auto options = options_for(cluster.a(), log, connection_role::subscriber);
  PubSub& pubsub = harness.pubsub(options, true);
  std::mutex mutex;
  std::vector<std::string> redirects;
  harness.run([&] {
    pubsub.on_redirect([&](const detail::Reply& refusal) {
      std::lock_guard<std::mutex> guard(mutex);
      redirects.push_back(refusal.str);
    });
    return true;
  });
  waiter.join(harness, pubsub, channel);
  ASSERT_TRUE(waiter.ready.wait_for_at_least(1, 3s)) << log.all();
  ASSERT_TRUE(harness.run([&] { return pubsub.subscribed(channel); }));
  ASSERT_TRUE(waiter.park(harness, pubsub, channel));
  auto shard = cluster.probe_a().command({"PUBSUB", "SHARDNUMSUB", channel});
  ASSERT_EQ(shard.elements.size(), 2u);
  ASSERT_EQ(shard.elements[1].integer, 1);
  long long ssubscribe_rejected = command_stat(cluster.probe_a(), "ssubscribe", "rejected_calls");

  cluster.move_slot_to_b(slot);

  // The unsolicited sunsubscribe wakes the waiter to re-poll at once.
  ASSERT_TRUE(waiter.woken.wait_for_at_least(1, 2s)) << log.all();
  EXPECT_TRUE(log.contains("ended the subscription to " + channel)) << log.all();
  // PubSub subscribed again and A answered MOVED: that is passed on (the
  // router learns where the slot went; the waiter joins B's subscriber
  // there), and is no reason to fall back to polling.
  const std::string moved = "MOVED " + std::to_string(slot) + " 127.0.0.1:" + std::to_string(cluster.b().port());
  ASSERT_TRUE(eventually(
      [&] {
        std::lock_guard<std::mutex> guard(mutex);
        return !redirects.empty();
      },
      2s))
      << log.all();
  {
    std::lock_guard<std::mutex> guard(mutex);
    EXPECT_EQ(redirects.front(), moved);
  }
  EXPECT_FALSE(harness.run([&] { return pubsub.polling(); }));
  EXPECT_FALSE(harness.run([&] { return pubsub.subscribed(channel); }));
  EXPECT_EQ(command_stat(cluster.probe_a(), "ssubscribe", "rejected_calls"), ssubscribe_rejected + 1);
  EXPECT_EQ(cluster.probe_a().command({"PUBSUB", "SHARDNUMSUB", channel}).elements.at(1).integer, 0);
  // The connection itself stays up: nothing was dropped or re-made.
  EXPECT_FALSE(log.contains("lost")) << log.all();
}

// ---------------------------------------------------------------------------
// Peers

// A TCP listener that is not Redis: whatever it is sent, it answers with
// `answer` (by default an HTTP error), then waits for the client to hang up.
// Serves one connection at a time until destroyed.
class NotRedisPeer {
 public:
  explicit NotRedisPeer(std::string answer = "HTTP/1.1 400 Bad Request\r\n\r\n") : answer_(std::move(answer)) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0 || listen(listener_, 8) != 0) {
      int error = errno;
      close(listener_);
      throw std::system_error(error, std::generic_category(), "listen");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~NotRedisPeer() {
    stop_ = true;
    thread_.join();
    close(listener_);
  }
  NotRedisPeer(const NotRedisPeer&) = delete;
  NotRedisPeer& operator=(const NotRedisPeer&) = delete;

  std::uint16_t port() const { return port_; }
  int accepted() const { return accepted_; }
  int answered() const { return answered_; }

 private:
  // Waits until `fd` is readable, checking for stop every 20 ms.
  bool readable(int fd) {
    while (!stop_) {
      pollfd entry{fd, POLLIN, 0};
      int rc = poll(&entry, 1, 20);
      if (rc > 0) return true;
      if (rc < 0 && errno != EINTR) return false;
    }
    return false;
  }

  void serve() {
    while (readable(listener_)) {
      int client = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      ++accepted_;
      char buffer[4096];
      bool answered = false;
      while (readable(client)) {
        ssize_t n = recv(client, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        if (!answered) {
          // Counted before answering: once the client has the answer, the
          // count includes it.
          ++answered_;
          answered = true;
          send(client, answer_.data(), answer_.size(), MSG_NOSIGNAL);
        }
      }
      close(client);
    }
  }

  std::string answer_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::atomic<int> answered_{0};
  std::thread thread_;
};

TEST(LinkPeer, APeerThatIsNotRedisFailsTheCommandWithAProtocolErrorInsteadOfHanging) {
  NotRedisPeer peer;
  LogRecorder log;
  Counter ready;
  LoopHarness harness;
  ConnectionOptions options;
  options.host = "127.0.0.1";
  options.port = peer.port();
  options.connect_timeout = 1s;
  options.health_check_interval = 10s;
  options.backoff_min = 10ms;
  options.backoff_max = 50ms;
  options.retry_attempts = 2;
  options.log = log.logger();
  // A link is ready only once the server answered its set-up PING: this peer
  // never does, so the link never becomes ready and a command fails with
  // the protocol error at once (retrying would meet the same peer), not at
  // its deadline, whether it is idempotent or not.
  Connection& connection = harness.connection(options, &ready);
  for (bool idempotent : {false, true}) {
    auto start = steady::now();
    auto sent = harness.send(connection, {"INCR", "n"}, 2s, idempotent);
    ASSERT_TRUE(ready_within(sent, 2500ms)) << log.all();
    Response response = sent.get();
    EXPECT_EQ(response.error, errc::protocol_error) << describe(response);
    EXPECT_NE(response.detail.find("Protocol error"), std::string::npos) << response.detail;
    EXPECT_LT(elapsed_ms(start), 1000) << "it waited for the deadline";
  }
  EXPECT_TRUE(log.contains("Protocol error")) << log.all();
  EXPECT_EQ(ready.value(), 0) << "a peer that never answered PING was taken for a server";
}

TEST(LinkPeer, APeerAnsweringWithATlsAlertFailsTheCommandAtOnceWithAHintToUseRediss) {
  // What a TLS server may answer plaintext with: an alert record (TLS 1.2,
  // fatal, protocol_version).
  NotRedisPeer peer(std::string("\x15\x03\x03\x00\x02\x02\x46", 7));
  LogRecorder log;
  LoopHarness harness;
  ConnectionOptions options;
  options.host = "127.0.0.1";
  options.port = peer.port();
  options.connect_timeout = 1s;
  options.health_check_interval = 10s;
  options.backoff_min = 10ms;
  options.backoff_max = 50ms;
  options.log = log.logger();
  Connection& connection = harness.connection(options);
  auto start = steady::now();
  auto sent = harness.send(connection, {"INCR", "n"}, 5s, true);
  ASSERT_TRUE(ready_within(sent, 5500ms)) << log.all();
  Response response = sent.get();
  EXPECT_EQ(response.error, errc::protocol_error) << describe(response);
  EXPECT_NE(response.detail.find("TLS record"), std::string::npos) << response.detail;
  EXPECT_NE(response.detail.find("use rediss://"), std::string::npos) << response.detail;
  EXPECT_LT(elapsed_ms(start), 1000) << "it waited for the deadline";
}

TEST(LinkPeer, AUnixSocketConnectionServesCommands) {
  TempDirectory directory("warden-unix-");
  const std::string path = directory.path() + "/redis.sock";
  RedisServer server({"--unixsocket", path, "--unixsocketperm", "700"});
  RedisProbe probe(server);
  LogRecorder log;
  Counter ready;
  LoopHarness harness;
  ConnectionOptions options = options_for(server, log);
  options.unix_socket = path;
  Connection& connection = harness.connection(options, &ready);
  EXPECT_EQ(connection.server(), path);
  ASSERT_TRUE(ready.wait_for_at_least(1, 3s)) << log.all();

  auto set = harness.send(connection, {"SET", "over-unix", "yes"}, 1s, false);
  auto get = harness.send(connection, {"GET", "over-unix"}, 1s, true);
  auto info = harness.send(connection, {"CLIENT", "INFO"}, 1s, true);
  ASSERT_TRUE(ready_within(set, 2s));
  ASSERT_TRUE(ready_within(get, 2s));
  ASSERT_TRUE(ready_within(info, 2s));
  EXPECT_TRUE(set.get().ok());
  EXPECT_EQ(get.get().reply.str, "yes");
  // The server sees a unix-socket client (flag U).
  std::string client = info.get().reply.str;
  EXPECT_NE(client.find("flags=U"), std::string::npos) << client;
  EXPECT_EQ(probe.get("over-unix"), std::optional<std::string>("yes"));
}

}  // namespace
}  // namespace warden::test
