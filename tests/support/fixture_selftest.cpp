// Self-tests of the test fixture. If these fail, integration test failures say
// nothing about warden.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "message_recorder.hpp"
#include "redis_cluster.hpp"
#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "test_ca.hpp"

namespace warden::test {
namespace {

using namespace std::chrono_literals;

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0; }

TEST(RedisServer, StartsOnAFreePortAndStops) {
  RedisServer server;
  ASSERT_TRUE(server.running());
  const pid_t pid = server.pid();
  EXPECT_GT(pid, 0);
  EXPECT_EQ(server.host(), "127.0.0.1");
  EXPECT_NE(server.port(), 0);
  EXPECT_EQ(server.url(), "redis://127.0.0.1:" + std::to_string(server.port()));

  RedisProbe probe(server);
  EXPECT_EQ(probe.command({"PING"}).str, "PONG");
  // No persistence configured, as the fixture promises.
  EXPECT_EQ(probe.command({"CONFIG", "GET", "save"}).elements.at(1).str, "");
  EXPECT_EQ(probe.command({"CONFIG", "GET", "appendonly"}).elements.at(1).str, "no");

  server.stop();
  EXPECT_FALSE(server.running());
  EXPECT_EQ(server.pid(), -1);
  EXPECT_FALSE(process_exists(pid));
  EXPECT_THROW(RedisProbe(server.host(), server.port()), std::runtime_error);
  server.stop();  // a second stop is a no-op
}

TEST(RedisServer, TwoServersGetDistinctPorts) {
  RedisServer first;
  RedisServer second;
  EXPECT_NE(first.port(), second.port());
  EXPECT_NE(first.pid(), second.pid());
}

TEST(RedisServer, KillThenStartReusesThePortAndLosesTheData) {
  RedisServer server;
  const std::uint16_t port = server.port();
  const pid_t first_pid = server.pid();
  RedisProbe probe(server);
  probe.command({"SET", "k", "v"});

  server.kill();
  EXPECT_FALSE(server.running());
  EXPECT_EQ(server.pid(), -1);
  EXPECT_FALSE(process_exists(first_pid));

  server.start();
  EXPECT_TRUE(server.running());
  EXPECT_EQ(server.port(), port);
  EXPECT_NE(server.pid(), first_pid);
  // The same probe notices the closed connection and reconnects.
  EXPECT_EQ(probe.command({"PING"}).str, "PONG");
  EXPECT_FALSE(probe.exists("k"));
}

TEST(RedisServer, StartWhileRunningIsANoOp) {
  RedisServer server;
  const pid_t pid = server.pid();
  server.start();
  EXPECT_EQ(server.pid(), pid);
}

TEST(RedisServer, NoticesAServerThatExitedByItself) {
  RedisServer server;
  RedisProbe probe(server);
  // SHUTDOWN closes the connection without a reply.
  EXPECT_THROW(probe.command({"SHUTDOWN", "NOSAVE"}), std::runtime_error);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (server.running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_FALSE(server.running());
  server.start();
  EXPECT_EQ(probe.command({"PING"}).str, "PONG");
}

TEST(RedisServer, PauseFreezesAndResumeThaws) {
  RedisServer server;
  RedisProbe probe(server);
  server.pause();
  EXPECT_TRUE(server.running());
  // The kernel still accepts the connection; nobody answers within the
  // probe's 2 s timeout.
  const auto before = std::chrono::steady_clock::now();
  EXPECT_THROW(probe.command({"PING"}), std::runtime_error);
  EXPECT_GE(std::chrono::steady_clock::now() - before, 1500ms);
  server.resume();
  EXPECT_EQ(probe.command({"PING"}).str, "PONG");
}

TEST(RedisServer, StopsAPausedServerPromptly) {
  RedisServer server;
  server.pause();
  const auto before = std::chrono::steady_clock::now();
  server.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 4s);
  EXPECT_FALSE(server.running());
}

TEST(RedisServer, PasswordIsUsedByProbeAndRecorder) {
  RedisServer server({"--requirepass", "s3cret"});
  EXPECT_EQ(server.password(), "s3cret");

  RedisProbe authenticated(server);
  EXPECT_EQ(authenticated.command({"SET", "k", "v"}).str, "OK");

  RedisProbe anonymous(server.host(), server.port());
  ProbeReply denied = anonymous.command({"GET", "k"});
  EXPECT_TRUE(denied.is_error());
  EXPECT_NE(denied.str.find("NOAUTH"), std::string::npos);

  EXPECT_THROW(RedisProbe(server.host(), server.port(), "wrong"), std::runtime_error);

  MessageRecorder recorder(server, {"ch"});
  authenticated.command({"PUBLISH", "ch", "x"});
  EXPECT_EQ(recorder.wait_for(1, 5s).size(), 1u);
}

TEST(RedisServer, BadArgumentsFailWithTheLog) {
  try {
    RedisServer server({"--no-such-option", "1"});
    FAIL() << "expected the server not to start";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("no-such-option"), std::string::npos) << error.what();
  }
}

// `openssl verify` of `certificate` against `ca`: its exit code.
int openssl_verify(const std::string& ca, const std::string& certificate) {
  ChildProcess verify("openssl", {"verify", "-CAfile", ca, certificate});
  return verify.wait();
}

TEST(TestCa, MakesCertificatesThatVerifyAgainstTheirCa) {
  std::string directory;
  {
    TestCa ca;
    directory = ca.directory();
    for (const auto& file :
         {ca.ca_cert(), ca.server_cert(), ca.server_key(), ca.client_cert(), ca.client_key(), ca.wrong_ca_cert(),
          ca.wrong_ca_client_cert(), ca.wrong_ca_client_key(), ca.wrong_name_cert(), ca.wrong_name_key()}) {
      EXPECT_TRUE(std::filesystem::is_regular_file(file)) << file;
    }
    EXPECT_TRUE(std::filesystem::is_directory(ca.ca_dir()));
    EXPECT_EQ(openssl_verify(ca.ca_cert(), ca.server_cert()), 0);
    EXPECT_EQ(openssl_verify(ca.ca_cert(), ca.client_cert()), 0);
    EXPECT_EQ(openssl_verify(ca.ca_cert(), ca.wrong_name_cert()), 0);
    EXPECT_NE(openssl_verify(ca.wrong_ca_cert(), ca.server_cert()), 0);
    EXPECT_NE(openssl_verify(ca.ca_cert(), ca.wrong_ca_client_cert()), 0);
  }
  EXPECT_FALSE(std::filesystem::exists(directory));  // removed by the destructor
}

// A TLS handshake with the server's TLS port by `openssl s_client`: its exit
// code (0 when the handshake and the certificate check succeeded).
int s_client(std::uint16_t port, const TestCa& ca, bool with_client_cert) {
  std::vector<std::string> args{"s_client",
                                "-brief",
                                "-connect",
                                "127.0.0.1:" + std::to_string(port),
                                "-CAfile",
                                ca.ca_cert(),
                                "-verify_return_error",
                                "-verify_ip",
                                "127.0.0.1"};
  if (with_client_cert) args.insert(args.end(), {"-cert", ca.client_cert(), "-key", ca.client_key()});
  ChildProcess client("openssl", args);
  return client.wait();
}

TEST(RedisServer, TlsPortBesidesThePlainOne) {
  TestCa ca;
  RedisServerOptions options;
  options.tls = RedisTlsOptions{ca.server_cert(), ca.server_key(), ca.ca_cert(), false};
  RedisServer server(options);
  EXPECT_NE(server.tls_port(), 0);
  EXPECT_NE(server.tls_port(), server.port());
  EXPECT_EQ(server.tls_url(), "rediss://127.0.0.1:" + std::to_string(server.tls_port()));
  EXPECT_EQ(server.unix_socket(), "");
  EXPECT_EQ(server.unix_url(), "");
  RedisProbe probe(server);  // plain RESP on port()
  EXPECT_EQ(probe.command({"CONFIG", "GET", "tls-port"}).elements.at(1).str, std::to_string(server.tls_port()));
  EXPECT_EQ(s_client(server.tls_port(), ca, false), 0);

  const std::uint16_t tls_port = server.tls_port();
  server.kill();
  server.start();
  EXPECT_EQ(server.tls_port(), tls_port);
  EXPECT_EQ(s_client(server.tls_port(), ca, false), 0);
}

TEST(RedisServer, TlsPortRequiringClientCertificates) {
  TestCa ca;
  RedisServerOptions options;
  options.tls = RedisTlsOptions{ca.server_cert(), ca.server_key(), ca.ca_cert(), true};
  RedisServer server(options);
  RedisProbe probe(server);
  EXPECT_EQ(probe.command({"CONFIG", "GET", "tls-auth-clients"}).elements.at(1).str, "yes");
  EXPECT_EQ(s_client(server.tls_port(), ca, true), 0);
}

TEST(RedisServer, UnixSocketBesidesThePlainPort) {
  RedisServerOptions options;
  options.unix_socket = true;
  options.extra_args = {"--requirepass", "pw"};
  RedisServer server(options);
  EXPECT_EQ(server.tls_port(), 0);
  EXPECT_EQ(server.tls_url(), "");
  EXPECT_EQ(server.password(), "pw");
  EXPECT_EQ(server.unix_socket(), server.directory() + "/redis.sock");
  EXPECT_EQ(server.unix_url(), "unix://" + server.unix_socket());
  EXPECT_EQ(std::filesystem::status(server.unix_socket()).type(), std::filesystem::file_type::socket);

  redisContext* context = redisConnectUnix(server.unix_socket().c_str());
  ASSERT_NE(context, nullptr);
  ASSERT_EQ(context->err, 0) << context->errstr;
  auto* reply = static_cast<redisReply*>(redisCommand(context, "AUTH pw"));
  ASSERT_NE(reply, nullptr);
  EXPECT_EQ(reply->type, REDIS_REPLY_STATUS);
  freeReplyObject(reply);
  reply = static_cast<redisReply*>(redisCommand(context, "PING"));
  ASSERT_NE(reply, nullptr);
  EXPECT_EQ(std::string(reply->str, reply->len), "PONG");
  freeReplyObject(reply);
  redisFree(context);
}

TEST(RedisProbe, CommandsAndHelpers) {
  RedisServer server;
  RedisProbe probe(server);

  EXPECT_EQ(probe.command({"SET", "plain", "value"}).type, REDIS_REPLY_STATUS);
  EXPECT_EQ(probe.get("plain"), std::optional<std::string>("value"));
  EXPECT_EQ(probe.get("missing"), std::nullopt);
  EXPECT_TRUE(probe.command({"GET", "missing"}).is_nil());

  // Binary-safe arguments.
  const std::string binary("a\0b\r\nc", 6);
  probe.command({"SET", "binary", binary});
  EXPECT_EQ(probe.get("binary"), std::optional<std::string>(binary));

  probe.command({"HSET", "hash", "owner:1", "2", "mode", "read"});
  const std::map<std::string, std::string> expected{{"mode", "read"}, {"owner:1", "2"}};
  EXPECT_EQ(probe.hgetall("hash"), expected);
  EXPECT_TRUE(probe.hgetall("missing").empty());

  EXPECT_EQ(probe.pttl("hash"), -1);
  EXPECT_EQ(probe.pttl("missing"), -2);
  probe.command({"PEXPIRE", "hash", "30000"});
  const long long ttl = probe.pttl("hash");
  EXPECT_GT(ttl, 25000);
  EXPECT_LE(ttl, 30000);

  EXPECT_TRUE(probe.exists("hash"));
  EXPECT_FALSE(probe.exists("missing"));
  EXPECT_EQ(probe.keys(), (std::vector<std::string>{"binary", "hash", "plain"}));
  EXPECT_EQ(probe.keys("h*"), std::vector<std::string>{"hash"});

  ProbeReply error = probe.command({"HGET", "plain", "field"});
  EXPECT_TRUE(error.is_error());
  EXPECT_NE(error.str.find("WRONGTYPE"), std::string::npos);
  EXPECT_THROW(probe.hgetall("plain"), std::runtime_error);

  ProbeReply integer = probe.command({"INCR", "counter"});
  EXPECT_EQ(integer.type, REDIS_REPLY_INTEGER);
  EXPECT_EQ(integer.integer, 1);

  ProbeReply array = probe.command({"EVAL", "return {1, 'two', false}", "0"});
  ASSERT_EQ(array.type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(array.elements.size(), 3u);
  EXPECT_EQ(array.elements[0].integer, 1);
  EXPECT_EQ(array.elements[1].str, "two");
  EXPECT_TRUE(array.elements[2].is_nil());
}

TEST(RedisProbe, CountsCommandCalls) {
  RedisServer server;
  RedisProbe probe(server);
  EXPECT_EQ(probe.command_calls("evalsha"), 0);
  const std::string sha = probe.command({"SCRIPT", "LOAD", "return 1"}).str;
  ASSERT_EQ(sha.size(), 40u);
  probe.command({"EVALSHA", sha, "0"});
  probe.command({"EVALSHA", sha, "0"});
  EXPECT_EQ(probe.command_calls("evalsha"), 2);
  EXPECT_EQ(probe.command_calls("EVALSHA"), 2);
  EXPECT_EQ(probe.command_calls("eval"), 0);  // not confused with the evalsha line
}

TEST(MessageRecorder, RecordsPublishedMessages) {
  RedisServer server;
  RedisProbe probe(server);
  MessageRecorder recorder(server, {"redisson_lock__channel:{a}", "other"});
  // Both subscriptions are confirmed once the constructor returns.
  EXPECT_EQ(probe.command({"PUBLISH", "redisson_lock__channel:{a}", "0"}).integer, 1);
  EXPECT_EQ(probe.command({"PUBLISH", "other", "1"}).integer, 1);
  EXPECT_EQ(probe.command({"PUBLISH", "unrelated", "x"}).integer, 0);

  const std::vector<Message> messages = recorder.wait_for(2, 5s);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].channel, "redisson_lock__channel:{a}");
  EXPECT_EQ(messages[0].payload, "0");
  EXPECT_EQ(messages[1].channel, "other");
  EXPECT_EQ(messages[1].payload, "1");
  EXPECT_EQ(recorder.messages().size(), 2u);
}

TEST(MessageRecorder, WaitForTimesOutWithWhatItHas) {
  RedisServer server;
  MessageRecorder recorder(server, {"ch"});
  const auto before = std::chrono::steady_clock::now();
  EXPECT_TRUE(recorder.wait_for(1, 200ms).empty());
  EXPECT_GE(std::chrono::steady_clock::now() - before, 150ms);
}

TEST(MessageRecorder, ReturnsEarlyWhenTheServerIsGone) {
  RedisServer server;
  MessageRecorder recorder(server, {"ch"});
  server.kill();
  const auto before = std::chrono::steady_clock::now();
  EXPECT_TRUE(recorder.wait_for(1, 10s).empty());
  EXPECT_LT(std::chrono::steady_clock::now() - before, 5s);
}

TEST(RedisCluster, ServesEverySlotWithAReplicaPerMasterAndFailsOver) {
  RedisCluster cluster;
  ASSERT_EQ(cluster.size(), 6u);
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_NE(cluster.node(i).cluster_port(), 0);
    EXPECT_NE(cluster.seeds().find("127.0.0.1:" + std::to_string(cluster.node(i).port())), std::string::npos);
  }
  EXPECT_EQ(cluster.url().rfind("redis+cluster://127.0.0.1:", 0), 0u);

  // Every node sees the same three ranges, each with its master and one replica.
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    RedisProbe probe(cluster.node(i));
    auto ranges = probe.command({"CLUSTER", "SLOTS"});
    ASSERT_EQ(ranges.elements.size(), 3u) << "node " << i;
    for (const auto& range : ranges.elements) EXPECT_EQ(range.elements.size(), 4u) << "node " << i;
  }
  EXPECT_EQ(cluster.master_of_slot(0), 0);
  EXPECT_EQ(cluster.master_of_slot(16383), 2);

  // A master's crash: after the node timeout its replica takes its slots.
  cluster.first_master(0).kill();
  const int replica = static_cast<int>(cluster.size()) - 3;  // first_replica(0)
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (cluster.master_of_slot(0) != replica && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(cluster.master_of_slot(0), replica);
  cluster.wait_until_healthy();
}

TEST(ChildProcess, ReportsExitCodes) {
  ChildProcess ok("/bin/sh", {"-c", "exit 0"});
  EXPECT_GT(ok.pid(), 0);
  EXPECT_EQ(ok.wait(), 0);
  EXPECT_EQ(ok.wait(), 0);  // cached

  ChildProcess three("sh", {"-c", "exit 3"});  // looked up on PATH
  int code = -1;
  EXPECT_TRUE(three.wait_for(5s, &code));
  EXPECT_EQ(code, 3);
}

TEST(ChildProcess, KillAndTimeout) {
  ChildProcess sleeper("/bin/sleep", {"30"});
  int code = -1;
  EXPECT_FALSE(sleeper.wait_for(100ms, &code));
  sleeper.kill();
  EXPECT_EQ(sleeper.wait(), 128 + SIGKILL);

  ChildProcess terminated("/bin/sleep", {"30"});
  terminated.kill(SIGTERM);
  EXPECT_EQ(terminated.wait(), 128 + SIGTERM);
}

TEST(ChildProcess, DestructorKillsARunningChild) {
  pid_t pid = -1;
  {
    ChildProcess sleeper("/bin/sleep", {"30"});
    pid = sleeper.pid();
    EXPECT_TRUE(process_exists(pid));
  }
  EXPECT_FALSE(process_exists(pid));
}

TEST(ChildProcess, MissingProgramThrows) {
  EXPECT_THROW(ChildProcess("/nonexistent/program", {}), std::runtime_error);
  EXPECT_THROW(ChildProcess("warden-no-such-program", {}), std::runtime_error);
}

TEST(ChildProcess, IsMovable) {
  std::vector<ChildProcess> children;
  for (int i = 0; i < 3; ++i)
    children.emplace_back("/bin/sh", std::vector<std::string>{"-c", "exit " + std::to_string(i)});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(children[static_cast<std::size_t>(i)].wait(), i);
}

}  // namespace
}  // namespace warden::test
