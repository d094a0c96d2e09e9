// One connection to one Redis server, warden's own: libuv does the I/O (TCP
// or a unix socket), TLS is layered in when configured, and the protocol
// decisions (encoding, matching replies, telling pushes apart) are made by
// LinkProtocol. This file adds what needs a clock and a socket: connect with
// a timeout, set-up (AUTH, SELECT) after connect, write coalescing,
// per-command deadlines, reconnect with back-off and an idle health check.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <warden/config.hpp>

#include "io/event_loop.hpp"
#include "io/link_protocol.hpp"
#include "io/link_state.hpp"
#include "io/reply.hpp"
#include "io/send_window.hpp"

namespace warden::detail {

class TlsContext;
class TlsSession;

struct ConnectionOptions {
  std::string host;
  std::uint16_t port = 6379;
  std::string unix_socket;  // non-empty: connect here instead of host:port
  // Set: speak TLS, sending `tls_server_name` as SNI and verifying the
  // server's certificate against it (empty: neither).
  std::shared_ptr<TlsContext> tls;
  std::string tls_server_name;
  std::string username;
  std::string password;
  int database = 0;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds health_check_interval{5'000};
  std::chrono::milliseconds backoff_min{50};
  std::chrono::milliseconds backoff_max{2'000};
  int retry_attempts = 3;
  // Commands written and not answered yet, at most (0: no bound); the rest
  // wait in order, and one that could not be answered before its deadline
  // fails unwritten (SendWindow).
  std::size_t max_in_flight = 1024;
  // What the connection is for, in log lines and connection events.
  connection_role role = connection_role::command;
  // Set with CLIENT SETNAME during set-up, so that CLIENT LIST tells the
  // connections apart ("warden:<client id>"); empty: not named.
  std::string client_name;
  warden::logger log;
  // Told when the connection comes up, drops, or fails to connect
  // (Observer::on_connection); may be empty.
  std::function<void(const ConnectionEvent&)> on_event;
  // Reads made at the end of set-up, after AUTH/SELECT/CLIENT SETNAME and
  // before anything queued is written: called with nullptr, then with each
  // answer, it returns the next command to send, or an empty argv when
  // done. Any reply is an answer (an error reply does not fail set-up; a
  // transport failure drops the link as for set-up). Empty: none.
  std::function<std::vector<std::string>(const Response* answer)> setup_reads;
  // Not read by the connection: Config::eviction_guard and its observer
  // hook, for the node that owns the connection (topology/eviction_watch).
  eviction_guard_mode eviction_guard = eviction_guard_mode::off;
  std::function<void(const EvictionEvent&)> on_eviction;
  // Set: the server may send on this connection with nothing asked (a
  // subscription that stays, such as Sentinel's +switch-master), so the
  // parked loop thread watches it for input too, not just for a hang-up
  // (EventLoop::watch_hangup): a message is read at once, not at the next
  // timer.
  bool input_wakes_parked = false;
};

// Lives on and is used from the loop thread only.
class Connection : private Flushable {
 public:
  using Handler = std::function<void(Response&&)>;

  Connection(EventLoop& loop, ConnectionOptions options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // "host:port" or the socket path, for messages.
  const std::string& server() const { return server_; }
  // "command connection to host:port", for messages.
  std::string describe() const;
  bool ready() const { return link_.ready(); }
  // Nothing the server could answer: no command queued or unanswered (set-up
  // and health probes included), no subscription command unconfirmed, no
  // output unwritten, no connect under way. Pushes on a subscribed channel
  // are the subscriber's to count.
  bool idle() const;

  // Starts connecting in the background.
  void start();
  // Fails everything pending with errc::shut_down and stops reconnecting.
  void close();
  // Closes for good because the server no longer serves this client's
  // commands (a cluster node that left, or lost its slots): commands not yet
  // written fail with errc::connection_lost and Response::not_run (they may
  // go elsewhere), those in flight with errc::connection_lost; `why` is
  // their Response::detail.
  void retire(const std::string& why);

  // Queues a command; `handler` runs exactly once, on the loop thread, with the
  // reply or: errc::timed_out when no reply came by `deadline`, with
  // Response::unsent and not_run when it was never written (the server was
  // answering too slowly for it to be answered by then: see SendWindow); the last
  // connect error (connection_refused, authentication_failed, tls_*) when no
  // connection could be made by then; errc::connection_lost when the link
  // dropped after the command was sent and it is not `idempotent` (idempotent
  // commands are sent again after the reconnect, up to retry_attempts times).
  void send(const std::vector<std::string>& argv, clock::time_point deadline, bool idempotent, Handler handler);
  // The same for a command already encoded as RESP (one command, whole).
  void send_encoded(std::string command, clock::time_point deadline, bool idempotent, Handler handler);

  // Pub/sub. send_subscription writes a (S)(UN)SUBSCRIBE at once and returns
  // false when the link is not ready; its confirmations, messages and a
  // refusal reach the push handler. The ready handler runs after each
  // (re)connect once set-up is done; the down handler when the link drops.
  bool send_subscription(const std::vector<std::string>& argv);
  void on_push(std::function<void(const Push&)> handler) { on_push_ = std::move(handler); }
  void on_ready(std::function<void()> handler) { on_ready_ = std::move(handler); }
  void on_down(std::function<void()> handler) { on_down_ = std::move(handler); }

  // Why a command queued now could not be written yet: the last connect error
  // while not connected, else timed_out. Composite locks use it to name the
  // cause of a node that missed its time budget.
  std::error_code pending_error() const;

 private:
  struct Request {
    std::string command;  // its bytes, encoded once; kept for a resend only when idempotent
    clock::time_point deadline;
    bool idempotent = false;
    bool in_flight = false;
    int resends = 0;
    clock::time_point written{};  // when last written, and
    std::size_t ahead = 0;        // how many were in flight ahead of it then (SendWindow)
    Handler handler;
  };
  struct Socket;

  void shut(const std::string* retired);
  void connect();
  void connect_to(const sockaddr* address);
  void on_transport_connected(int status);
  void start_session();
  void on_read(const char* data, std::size_t size);
  void on_read_failed(int status);
  void on_bytes(const char* data, std::size_t size);
  void setup();
  // The next of ConnectionOptions::setup_reads after `answer` (nullptr:
  // the first), or become_ready() when there is none.
  void setup_read(const Response* answer);
  void become_ready();
  // `detail` is taken by value: callers pass text owned by what drop() resets
  // (the parser's error, the TLS session's).
  // `closed_unanswered`: see LinkState::link_failed.
  void drop(std::error_code why, std::string detail, bool closed_unanswered = false);
  void release_socket();
  void write_queued();
  // The answer of a command that was never written by its deadline.
  Response unsent(const Request& request) const;
  void write_request(std::uint64_t id, Request& request);
  void flush_output() override;
  void on_written(int status);
  void expire(std::uint64_t id);
  void watch_deadline(clock::time_point deadline, std::uint64_t id);
  void expire_due();
  // Reads, without waiting, what has arrived on the socket (before commands
  // are timed out).
  void read_arrived();
  void pop_deadline();
  void drop_stale_deadlines();
  void complete(std::uint64_t id, Response&& response);
  void health_tick();
  void log(log_level level, const std::string& message) const;
  void report(connection_state state, bool reconnect, std::error_code why, const std::string& detail,
              std::chrono::milliseconds retry_in) const;
  // A failed command's response: `why`, with the cause of the last failed
  // connection attempt or drop in words when that is what `why` stands for.
  Response failure(std::error_code why) const;

  EventLoop& loop_;
  ConnectionOptions options_;
  std::string server_;
  LinkState link_;
  LinkProtocol protocol_;
  Socket* socket_ = nullptr;  // the current attempt's socket; owned until closed
  int socket_fd_ = -1;        // its descriptor: written with send(2), watched for hang-ups (EventLoop::watch_hangup)
  std::unique_ptr<TlsSession> tls_;
  bool transport_up_ = false;  // connected, TLS (if any) established
  bool answered_ = false;      // this attempt has read a byte of RESP (or TLS's plaintext)
  std::string plain_out_;      // encoded commands not yet handed to TLS / the socket
  std::string wire_out_;       // bytes for the socket, not yet written
  std::string writing_;        // bytes of the write in progress
  bool write_in_progress_ = false;
  std::vector<LinkProtocol::Event> events_;  // reused between reads
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, Request> requests_;
  std::deque<std::uint64_t> queue_;  // not written yet, in order
  SendWindow window_;                // how many may be written; which may still be
  // Deadlines of pending commands, a min-heap (std::push_heap with
  // std::greater) served by one timer. An entry whose command has completed
  // is skipped when it comes up, which is cheaper than a timer per command
  // set and cancelled at every reply; but once stale entries outnumber the
  // live ones they are swept out (drop_stale_deadlines), so a burst of
  // commands answered long before their deadlines leaves no storage behind.
  using deadline_entry = std::pair<clock::time_point, std::uint64_t>;
  std::vector<deadline_entry> deadlines_;
  TimerQueue::id deadline_timer_ = 0;
  clock::time_point deadline_timer_at_{};
  TimerQueue::id connect_timer_ = 0;
  TimerQueue::id reconnect_timer_ = 0;
  TimerQueue::id health_timer_ = 0;
  clock::time_point last_reply_{};
  bool probe_outstanding_ = false;
  clock::time_point probe_sent_{};
  int setup_pending_ = 0;
  std::string last_failure_;  // why the link last failed, in words
  // Failures since the link was last ready, and the last one logged above
  // debug level: a server that stays away is logged once, not at every
  // attempt (the repeats go to debug).
  int failed_attempts_ = 0;
  std::string logged_failure_;
  bool setname_refusal_logged_ = false;
  std::function<void(const Push&)> on_push_;
  std::function<void()> on_ready_;
  std::function<void()> on_down_;
};

}  // namespace warden::detail
