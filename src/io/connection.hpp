// One connection to one Redis server: hiredis async context on the event loop,
// connect timeout, per-command deadlines, set-up after connect, reconnect with
// back-off, and an idle health check.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include <warden/config.hpp>

#include "io/event_loop.hpp"
#include "io/link_state.hpp"
#include "io/reply.hpp"

struct redisAsyncContext;
struct redisReply;

namespace warden::detail {

struct ConnectionOptions {
  std::string host;
  std::uint16_t port = 6379;
  std::string username;
  std::string password;
  int database = 0;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds health_check_interval{5'000};
  std::chrono::milliseconds backoff_min{50};
  std::chrono::milliseconds backoff_max{2'000};
  int retry_attempts = 3;
  // Subscriber mode: replies arrive through the push handler, and the health
  // probe re-subscribes `health_channel` (PING is not answered as a plain reply
  // by hiredis 0.14 on a subscribed connection).
  bool subscriber = false;
  std::string health_channel;
  warden::logger log;
};

// Lives on and is used from the loop thread only.
class Connection {
 public:
  using Handler = std::function<void(Response&&)>;

  Connection(EventLoop& loop, ConnectionOptions options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // "host:port", for messages.
  const std::string& server() const { return server_; }
  bool ready() const { return link_.ready(); }

  // Starts connecting in the background.
  void start();
  // Fails everything pending with errc::shut_down and stops reconnecting.
  void close();

  // Queues a command; `handler` runs exactly once, on the loop thread, with the
  // reply or: errc::timed_out when no reply came by `deadline`; the last
  // connect error (connection_refused, authentication_failed) when no
  // connection could be made by then; errc::connection_lost when the link
  // dropped after the command was sent and it is not `idempotent` (idempotent
  // commands are sent again after the reconnect, up to retry_attempts times).
  void send(std::vector<std::string> argv, clock::time_point deadline, bool idempotent, Handler handler);

  // Subscriber mode. The push handler sees every reply (subscribe
  // confirmations and messages) except the health probe's; the ready handler
  // runs after each (re)connect once set-up is done; the down handler when the
  // link drops. send_push writes at once and returns false when not ready.
  void on_push(std::function<void(const Reply&)> handler) { on_push_ = std::move(handler); }
  void on_ready(std::function<void()> handler) { on_ready_ = std::move(handler); }
  void on_down(std::function<void()> handler) { on_down_ = std::move(handler); }
  bool send_push(const std::vector<std::string>& argv);

  // Why a command queued now could not be written yet: the last connect error
  // (connection_refused, authentication_failed) while not connected, else
  // timed_out. Composite locks use it to name the cause of a node that missed
  // its time budget.
  std::error_code pending_error() const;

 private:
  struct Request {
    std::vector<std::string> argv;
    clock::time_point deadline;
    bool idempotent = false;
    bool in_flight = false;
    int resends = 0;
    Handler handler;
  };

  void connect();
  void on_connected(int status);
  void on_disconnected(const redisAsyncContext* context);
  void setup();
  void become_ready();
  void drop(std::error_code why, const std::string& detail);
  void after_drop(std::error_code why, const std::string& detail);
  void flush();
  bool write(std::uint64_t id, Request& request);
  void on_reply(redisAsyncContext* context, std::uint64_t id, redisReply* reply);
  void on_push_reply(redisReply* reply);
  void expire(std::uint64_t id);
  void watch_deadline(clock::time_point deadline, std::uint64_t id);
  void expire_due();
  void complete(std::uint64_t id, Response&& response);
  void health_tick();
  void log(log_level level, const std::string& message) const;

  static void reply_callback(redisAsyncContext* context, void* reply, void* privdata);
  static void push_callback(redisAsyncContext* context, void* reply, void* privdata);

  EventLoop& loop_;
  ConnectionOptions options_;
  std::string server_;
  LinkState link_;
  redisAsyncContext* context_ = nullptr;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, Request> requests_;
  std::deque<std::uint64_t> queue_;    // not written yet, in order
  std::deque<std::uint64_t> requeue_;  // dropped in flight, to be resent first
  // Deadlines of pending commands, earliest first, served by one timer. An
  // entry whose command has completed is skipped when it comes up, which is
  // cheaper than a timer per command set and cancelled at every reply.
  using deadline_entry = std::pair<clock::time_point, std::uint64_t>;
  std::priority_queue<deadline_entry, std::vector<deadline_entry>, std::greater<deadline_entry>> deadlines_;
  TimerQueue::id deadline_timer_ = 0;
  clock::time_point deadline_timer_at_{};
  TimerQueue::id connect_timer_ = 0;
  TimerQueue::id reconnect_timer_ = 0;
  TimerQueue::id health_timer_ = 0;
  clock::time_point last_reply_{};
  bool probe_outstanding_ = false;
  // A subscriber whose SUBSCRIBE the server refused (ACL NOPERM). hiredis
  // drops a subscribed connection on such an error, so from then on the
  // health probe is a PING and PubSub sends no SUBSCRIBE (it polls).
  bool subscribe_refused_ = false;
  clock::time_point probe_sent_{};
  int setup_pending_ = 0;
  std::function<void(const Reply&)> on_push_;
  std::function<void()> on_ready_;
  std::function<void()> on_down_;
};

}  // namespace warden::detail
