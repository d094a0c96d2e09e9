// Records what is published on some channels, as seen by an independent
// subscriber: lets tests check the unlock messages warden publishes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct redisContext;

namespace warden::test {

class RedisServer;

struct Message {
  std::string channel;
  std::string payload;
};

// Owns one SUBSCRIBE connection read by a background thread. It does not
// reconnect: once the server closes the connection no more messages arrive.
// All members are safe to call from any thread.
class MessageRecorder {
 public:
  // Subscribes to `channels` (AUTH first if the server has a password) and
  // returns once every subscription is confirmed, so a PUBLISH sent afterwards
  // is guaranteed to be recorded. Throws std::runtime_error if connecting
  // fails or the confirmations take longer than 5 s, std::invalid_argument
  // for an empty channel list. `sharded`: SSUBSCRIBE to shard channels (a
  // cluster node serving their slots) instead, recording SPUBLISH messages.
  MessageRecorder(const RedisServer& server, std::vector<std::string> channels, bool sharded = false);
  // Closes the connection and joins the reader thread.
  ~MessageRecorder();
  MessageRecorder(const MessageRecorder&) = delete;
  MessageRecorder& operator=(const MessageRecorder&) = delete;

  // Waits until at least `n` messages have been recorded, `timeout` passes or
  // the connection is lost (nothing more can arrive), then returns all
  // messages recorded so far, in arrival order.
  std::vector<Message> wait_for(std::size_t n, std::chrono::milliseconds timeout);
  // All messages recorded so far, in arrival order.
  std::vector<Message> messages() const;

 private:
  void read_loop();
  void close_and_join() noexcept;

  redisContext* context_ = nullptr;
  int fd_ = -1;
  std::size_t channel_count_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Message> messages_;
  std::size_t confirmed_ = 0;
  bool closed_ = false;
  std::string close_reason_;

  std::thread reader_;
};

}  // namespace warden::test
