#include "io/connection.hpp"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <fmt/format.h>

#include <random>

#include <warden/error.hpp>

#include "io/uv_adapter.hpp"

namespace warden::detail {
namespace {

std::uint64_t random_seed() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

void* as_privdata(std::uint64_t id) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id)); }
std::uint64_t from_privdata(void* privdata) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(privdata)); }

bool write_argv(redisAsyncContext* context, redisCallbackFn* callback, void* privdata,
                const std::vector<std::string>& argv) {
  std::vector<const char*> parts;
  std::vector<std::size_t> lengths;
  parts.reserve(argv.size());
  lengths.reserve(argv.size());
  for (const auto& arg : argv) {
    parts.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  return redisAsyncCommandArgv(context, callback, privdata, static_cast<int>(argv.size()), parts.data(),
                               lengths.data()) == REDIS_OK;
}

}  // namespace

Connection::Connection(EventLoop& loop, ConnectionOptions options)
    : loop_(loop),
      options_(std::move(options)),
      server_(fmt::format("{}:{}", options_.host, options_.port)),
      link_(Backoff(options_.backoff_min, options_.backoff_max, random_seed())) {}

Connection::~Connection() { close(); }

void Connection::log(log_level level, const std::string& message) const {
  if (options_.log) options_.log(level, message);
}

void Connection::start() {
  if (link_.current() == LinkState::state::idle) connect();
}

void Connection::connect() {
  reconnect_timer_ = 0;
  if (!link_.begin_connect()) return;
  redisAsyncContext* context = redisAsyncConnect(options_.host.c_str(), options_.port);
  if (context == nullptr || context->err != 0) {
    std::string why = context != nullptr ? context->errstr : "out of memory";
    if (context != nullptr) redisAsyncFree(context);
    drop(make_error_code(errc::connection_refused), why);
    return;
  }
  context->data = this;
  if (!attach_to_uv(loop_.uv(), loop_.flusher(), context)) {
    redisAsyncFree(context);
    drop(make_error_code(errc::connection_refused), "cannot watch the socket");
    return;
  }
  context_ = context;
  redisAsyncSetConnectCallback(context, [](const redisAsyncContext* c, int status) {
    static_cast<Connection*>(c->data)->on_connected(status);
  });
  redisAsyncSetDisconnectCallback(context, [](const redisAsyncContext* c, int) {
    static_cast<Connection*>(c->data)->on_disconnected(c);
  });
  connect_timer_ = loop_.after(options_.connect_timeout, [this] {
    connect_timer_ = 0;
    drop(make_error_code(errc::connection_refused), "connect timed out");
  });
}

void Connection::on_connected(int status) {
  if (status != REDIS_OK) {
    // hiredis frees the context itself after this callback returns.
    std::string why = context_ != nullptr ? context_->errstr : "connect failed";
    context_ = nullptr;
    drop(make_error_code(errc::connection_refused), why);
    return;
  }
  setup();
}

void Connection::setup() {
  // AUTH and SELECT go out ahead of everything queued; the queue is released
  // only when both succeeded.
  std::vector<std::vector<std::string>> commands;
  if (!options_.password.empty()) {
    if (options_.username.empty()) {
      commands.push_back({"AUTH", options_.password});
    } else {
      commands.push_back({"AUTH", options_.username, options_.password});
    }
  }
  if (options_.database != 0) commands.push_back({"SELECT", std::to_string(options_.database)});
  if (commands.empty()) {
    become_ready();
    return;
  }
  setup_pending_ = static_cast<int>(commands.size());
  redisAsyncContext* context = context_;
  for (auto& argv : commands) {
    std::uint64_t id = next_id_++;
    Request& request = requests_[id];
    request.argv = std::move(argv);
    request.deadline = clock::now() + options_.connect_timeout;
    request.handler = [this, context, command = request.argv.front()](Response&& response) {
      if (context_ != context) return;  // that connection is gone already
      if (response.error) return;        // a transport failure: the drop is handled already
      if (response.reply.is_error()) {
        // Only a refusal of the credentials or the database is permanent; any
        // other error (e.g. too many clients) is retried like a failed connect.
        const std::string& text = response.reply.str;
        bool refused = command == "SELECT" || text.rfind("WRONGPASS", 0) == 0 || text.rfind("NOAUTH", 0) == 0 ||
                       text.rfind("NOPERM", 0) == 0 || text.find("invalid password") != std::string::npos ||
                       text.find("invalid username-password") != std::string::npos;
        // Say why in words; the reply never carries the password.
        std::string why;
        if (text.rfind("WRONGPASS", 0) == 0 || text.find("invalid username-password") != std::string::npos) {
          why = options_.username.empty() ? "wrong password" : "wrong password, or no such user (or it is disabled)";
        } else if (text.rfind("NOAUTH", 0) == 0) {
          why = "the server requires a password and none was configured";
        } else if (text.find("without any password configured") != std::string::npos) {
          why = "a password was configured but the server requires none";
        } else if (text.rfind("NOPERM", 0) == 0) {
          why = "the user may not run this command";
        }
        drop(make_error_code(refused ? errc::authentication_failed : errc::connection_refused),
             command + " failed: " + (why.empty() ? text : why + " (" + text + ")"));
        return;
      }
      if (--setup_pending_ == 0) become_ready();
    };
    if (!write(id, request)) return;
  }
}

void Connection::become_ready() {
  loop_.cancel(connect_timer_);
  connect_timer_ = 0;
  bool reconnect = link_.ever_connected();
  link_.connected();
  log(log_level::info, fmt::format("warden: {} {}", reconnect ? "reconnected to" : "connected to", server_));
  last_reply_ = clock::now();
  probe_outstanding_ = false;
  health_timer_ = loop_.after(options_.health_check_interval, [this] { health_tick(); });
  flush();
  if (on_ready_) on_ready_();
}

void Connection::flush() {
  // Commands dropped in flight (possibly after the drop was handled, when
  // hiredis freed the context late) go out again first, in their order.
  queue_.insert(queue_.begin(), requeue_.begin(), requeue_.end());
  requeue_.clear();
  while (context_ != nullptr && link_.ready() && !queue_.empty()) {
    std::uint64_t id = queue_.front();
    queue_.pop_front();
    auto it = requests_.find(id);
    if (it == requests_.end()) continue;  // expired while queued
    if (!write(id, it->second)) {
      queue_.push_front(id);  // goes out on the next connection
      return;
    }
  }
}

bool Connection::write(std::uint64_t id, Request& request) {
  if (write_argv(context_, reply_callback, as_privdata(id), request.argv)) {
    request.in_flight = true;
    return true;
  }
  // hiredis refuses commands only on a context it is tearing down, which it
  // then frees itself: forget it rather than free it a second time.
  if ((context_->c.flags & (REDIS_DISCONNECTING | REDIS_FREEING)) != 0) {
    context_ = nullptr;
    after_drop(make_error_code(errc::connection_lost), "connection closing");
  } else {
    drop(make_error_code(errc::connection_lost), "write refused");
  }
  return false;
}

void Connection::send(std::vector<std::string> argv, clock::time_point deadline, bool idempotent, Handler handler) {
  if (link_.closed()) {
    handler(Response{make_error_code(errc::shut_down), {}});
    return;
  }
  std::uint64_t id = next_id_++;
  Request& request = requests_[id];
  request.argv = std::move(argv);
  request.deadline = deadline;
  request.idempotent = idempotent;
  request.handler = std::move(handler);
  watch_deadline(deadline, id);
  if (context_ != nullptr && link_.ready() && queue_.empty()) {
    if (!write(id, request)) queue_.push_back(id);
  } else {
    queue_.push_back(id);
  }
}

bool Connection::send_push(const std::vector<std::string>& argv) {
  if (context_ == nullptr || !link_.ready()) return false;
  if (!write_argv(context_, push_callback, nullptr, argv)) return false;
  return true;
}

std::error_code Connection::pending_error() const {
  // A command that never got onto a connection reports why there was none.
  if (link_.last_error()) return link_.last_error();
  return make_error_code(errc::timed_out);
}

void Connection::watch_deadline(clock::time_point deadline, std::uint64_t id) {
  deadlines_.emplace(deadline, id);
  if (deadline_timer_ != 0 && deadline_timer_at_ <= deadline) return;
  loop_.cancel(deadline_timer_);
  deadline_timer_at_ = deadline;
  deadline_timer_ = loop_.at(deadline, [this] {
    deadline_timer_ = 0;
    expire_due();
  });
}

void Connection::expire_due() {
  auto now = clock::now();
  while (!deadlines_.empty() && (deadlines_.top().first <= now || requests_.count(deadlines_.top().second) == 0)) {
    auto id = deadlines_.top().second;
    deadlines_.pop();
    expire(id);  // no-op for a command that completed meanwhile
  }
  if (deadlines_.empty()) return;
  auto next = deadlines_.top();
  deadlines_.pop();
  watch_deadline(next.first, next.second);
}

void Connection::expire(std::uint64_t id) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  // A late reply to a command in flight finds no request and is dropped.
  std::error_code why = it->second.in_flight ? make_error_code(errc::timed_out) : pending_error();
  complete(id, Response{why, {}});
}

void Connection::complete(std::uint64_t id, Response&& response) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  Handler handler = std::move(it->second.handler);
  requests_.erase(it);
  if (handler) handler(std::move(response));
}

void Connection::reply_callback(redisAsyncContext* context, void* reply, void* privdata) {
  static_cast<Connection*>(context->data)->on_reply(context, from_privdata(privdata), static_cast<redisReply*>(reply));
}

void Connection::push_callback(redisAsyncContext* context, void* reply, void* /*privdata*/) {
  static_cast<Connection*>(context->data)->on_push_reply(static_cast<redisReply*>(reply));
}

void Connection::on_reply(redisAsyncContext* context, std::uint64_t id, redisReply* reply) {
  if (reply == nullptr) {
    // hiredis is freeing the context: this command's fate is unknown. When
    // hiredis itself noticed the drop (EOF, reset), these callbacks run before
    // its disconnect callback; the link is marked down at the first of them,
    // so that what their handlers send is queued for the next connection
    // instead of being written to the dying one.
    if (context == context_) {
      context_ = nullptr;
      after_drop(make_error_code(errc::connection_lost),
                 context->errstr[0] != '\0' ? context->errstr : "connection closed");
    }
    auto it = requests_.find(id);
    if (it == requests_.end()) return;
    Request& request = it->second;
    request.in_flight = false;
    if (link_.closed()) {
      complete(id, Response{make_error_code(errc::shut_down), {}});
    } else if (request.idempotent && request.resends < options_.retry_attempts) {
      ++request.resends;
      requeue_.push_back(id);
    } else {
      complete(id, Response{make_error_code(errc::connection_lost), {}});
    }
    return;
  }
  last_reply_ = clock::now();
  complete(id, Response{{}, Reply::from(reply)});
}

void Connection::on_push_reply(redisReply* reply) {
  if (reply == nullptr) return;  // context going away; the down handler says so
  last_reply_ = clock::now();
  // Any reply shows the server is there, a refused health SUBSCRIBE (an ACL
  // without channels) included: treating that as silence would reconnect for
  // ever, and each reconnect would be refused the same way.
  probe_outstanding_ = false;
  Reply value = Reply::from(reply);
  if (value.type == Reply::kind::array && value.elements.size() >= 2 && value.elements[0].str == "subscribe" &&
      value.elements[1].str == options_.health_channel) {
    probe_outstanding_ = false;
    return;
  }
  if (on_push_) on_push_(value);
}

void Connection::health_tick() {
  health_timer_ = 0;
  if (!link_.ready()) return;
  auto now = clock::now();
  if (probe_outstanding_) {
    if (now - probe_sent_ >= options_.health_check_interval) {
      drop(make_error_code(errc::timed_out), "health check got no reply");
      return;
    }
  } else if (now - last_reply_ >= options_.health_check_interval) {
    probe_outstanding_ = true;
    probe_sent_ = now;
    if (options_.subscriber && !subscribe_refused_) {
      send_push({"SUBSCRIBE", options_.health_channel});
    } else {
      send({"PING"}, now + options_.health_check_interval, true, [this](Response&& response) {
        if (!response.error) probe_outstanding_ = false;
      });
    }
  }
  health_timer_ = loop_.after(options_.health_check_interval, [this] { health_tick(); });
}

void Connection::on_disconnected(const redisAsyncContext* context) {
  // Only a drop hiredis noticed itself (EOF, socket error) is news here; when
  // we free the context ourselves, context_ was cleared first.
  if (context != context_) return;
  context_ = nullptr;
  std::string why = context->errstr[0] != '\0' ? context->errstr : "closed by server";
  if (options_.subscriber && why.rfind("NOPERM", 0) == 0) {
    // hiredis closed the link over a refused SUBSCRIBE: tell the subscriber,
    // which stops subscribing, so the reconnect below is the last one.
    subscribe_refused_ = true;
    if (on_push_) on_push_(Reply::make_error(why));
  }
  after_drop(make_error_code(errc::connection_lost), why);
}

void Connection::drop(std::error_code why, const std::string& detail) {
  if (context_ != nullptr) {
    redisAsyncContext* context = context_;
    context_ = nullptr;
    redisAsyncFree(context);  // runs every pending reply callback with no reply
  }
  after_drop(why, detail);
}

void Connection::after_drop(std::error_code why, const std::string& detail) {
  loop_.cancel(connect_timer_);
  loop_.cancel(health_timer_);
  connect_timer_ = health_timer_ = 0;
  setup_pending_ = 0;
  bool was_ready = link_.ready();
  queue_.insert(queue_.begin(), requeue_.begin(), requeue_.end());
  requeue_.clear();
  if (link_.closed()) return;
  auto delay = link_.failed(why);
  log(was_ready ? log_level::warning : log_level::info,
      fmt::format("warden: connection to {} {}: {}; retrying in {} ms", server_, was_ready ? "lost" : "failed",
                  detail, delay.count()));
  if (why == errc::authentication_failed) {
    // Waiting will not fix credentials: fail what is queued now.
    auto queued = std::move(queue_);
    queue_.clear();
    for (auto id : queued) complete(id, Response{why, {}});
  }
  if (was_ready && on_down_) on_down_();
  reconnect_timer_ = loop_.after(delay, [this] { connect(); });
}

void Connection::close() {
  if (link_.closed()) return;
  link_.close();
  loop_.cancel(connect_timer_);
  loop_.cancel(reconnect_timer_);
  loop_.cancel(health_timer_);
  loop_.cancel(deadline_timer_);
  connect_timer_ = reconnect_timer_ = health_timer_ = deadline_timer_ = 0;
  deadlines_ = {};
  if (context_ != nullptr) {
    redisAsyncContext* context = context_;
    context_ = nullptr;
    redisAsyncFree(context);
  }
  std::vector<std::uint64_t> pending;
  for (auto& entry : requests_) pending.push_back(entry.first);
  for (auto id : pending) complete(id, Response{make_error_code(errc::shut_down), {}});
  queue_.clear();
  requeue_.clear();
}

}  // namespace warden::detail
