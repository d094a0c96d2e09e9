#include "message_recorder.hpp"

#include <sys/socket.h>

#include <hiredis/hiredis.h>

#include <stdexcept>

#include "detail/process.hpp"
#include "redis_server.hpp"

namespace warden::test {

namespace {

constexpr std::chrono::seconds subscribe_timeout{5};

std::string text_of(const redisReply* reply) {
  if (reply == nullptr || (reply->type != REDIS_REPLY_STRING && reply->type != REDIS_REPLY_STATUS)) return {};
  return std::string(reply->str, reply->len);
}

}  // namespace

MessageRecorder::MessageRecorder(const RedisServer& server, std::vector<std::string> channels, bool sharded)
    : channel_count_(channels.size()) {
  if (channels.empty()) throw std::invalid_argument("MessageRecorder: no channels to subscribe to");
  const std::string where = server.host() + ":" + std::to_string(server.port());
  const timeval connect_timeout{2, 0};
  context_ = redisConnectWithTimeout(server.host().c_str(), server.port(), connect_timeout);
  if (context_ == nullptr || context_->err != 0) {
    std::string error = context_ != nullptr ? context_->errstr : "out of memory";
    if (context_ != nullptr) redisFree(context_);
    throw std::runtime_error("MessageRecorder: cannot connect to " + where + ": " + error);
  }
  fd_ = context_->fd;

  std::vector<std::string> argv;
  if (!server.password().empty()) {
    redisSetTimeout(context_, connect_timeout);
    redisReply* auth;
    {
      detail::SigpipeGuard guard;
      auth = static_cast<redisReply*>(
          redisCommand(context_, "AUTH %b", server.password().data(), server.password().size()));
    }
    std::string error = auth == nullptr                   ? context_->errstr
                        : auth->type == REDIS_REPLY_ERROR ? text_of(auth)
                                                          : std::string();
    if (auth != nullptr) freeReplyObject(auth);
    if (!error.empty()) {
      redisFree(context_);
      throw std::runtime_error("MessageRecorder: AUTH to " + where + " failed: " + error);
    }
  }
  // The reader blocks until a message arrives however long that takes; the
  // destructor unblocks it with shutdown().
  const timeval no_timeout{0, 0};
  redisSetTimeout(context_, no_timeout);

  argv.reserve(channels.size() + 1);
  argv.push_back(sharded ? "SSUBSCRIBE" : "SUBSCRIBE");
  argv.insert(argv.end(), channels.begin(), channels.end());
  std::vector<const char*> args;
  std::vector<std::size_t> lengths;
  for (const auto& arg : argv) {
    args.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  // Written here and read by the thread, so messages published between two
  // confirmations are recorded too.
  redisAppendCommandArgv(context_, static_cast<int>(args.size()), args.data(), lengths.data());
  int done = 0;
  {
    detail::SigpipeGuard guard;
    while (done == 0) {
      if (redisBufferWrite(context_, &done) != REDIS_OK) break;
    }
  }
  if (done == 0) {
    std::string error = context_->errstr;
    redisFree(context_);
    throw std::runtime_error("MessageRecorder: SUBSCRIBE on " + where + " failed: " + error);
  }

  reader_ = std::thread([this] { read_loop(); });

  std::unique_lock lock(mutex_);
  const bool subscribed = changed_.wait_for(lock, subscribe_timeout, [this] {
    return confirmed_ >= channel_count_ || closed_;
  }) && confirmed_ >= channel_count_;
  if (!subscribed) {
    std::string reason = closed_ ? close_reason_ : "no confirmation within 5 s";
    lock.unlock();
    close_and_join();
    throw std::runtime_error("MessageRecorder: subscribing on " + where + " failed: " + reason);
  }
}

MessageRecorder::~MessageRecorder() { close_and_join(); }

void MessageRecorder::close_and_join() noexcept {
  if (reader_.joinable()) {
    // Makes the reader's blocking read return EOF; closing the descriptor
    // instead could let it be reused while the reader still uses it.
    shutdown(fd_, SHUT_RDWR);
    reader_.join();
  }
  if (context_ != nullptr) {
    redisFree(context_);
    context_ = nullptr;
  }
}

void MessageRecorder::read_loop() {
  for (;;) {
    void* raw = nullptr;
    if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) {
      std::lock_guard lock(mutex_);
      closed_ = true;
      close_reason_ = context_->err != 0 ? context_->errstr : "connection closed";
      changed_.notify_all();
      return;
    }
    auto* reply = static_cast<redisReply*>(raw);
    if (reply->type == REDIS_REPLY_ARRAY && reply->elements >= 3) {
      const std::string kind = text_of(reply->element[0]);
      std::lock_guard lock(mutex_);
      if (kind == "message" || kind == "smessage") {
        messages_.push_back(Message{text_of(reply->element[1]), text_of(reply->element[2])});
        changed_.notify_all();
      } else if (kind == "subscribe" || kind == "ssubscribe") {
        ++confirmed_;
        changed_.notify_all();
      }
    } else if (reply->type == REDIS_REPLY_ERROR) {
      // E.g. NOAUTH: the subscription will never be confirmed; let the
      // constructor fail with the server's reason instead of a time-out.
      std::lock_guard lock(mutex_);
      if (close_reason_.empty()) close_reason_ = text_of(reply);
      closed_ = true;
      changed_.notify_all();
    }
    freeReplyObject(reply);
  }
}

std::vector<Message> MessageRecorder::wait_for(std::size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return messages_.size() >= n || closed_; });
  return messages_;
}

std::vector<Message> MessageRecorder::messages() const {
  std::lock_guard lock(mutex_);
  return messages_;
}

}  // namespace warden::test
