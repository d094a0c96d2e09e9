// Peers that are not Redis (an HTTP server, a TLS server) and a unix socket.
#include "link_harness.hpp"

namespace warden::test {
namespace {

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
