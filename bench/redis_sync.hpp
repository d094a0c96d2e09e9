// warden-bench: a minimal blocking Redis connection for the bench's own
// housekeeping (readiness checks, SCRIPT LOAD, INFO, DEL) and for the
// plain-hiredis loop (hiredis_loop.hpp), the yardstick warden's locks are
// compared with. warden's locks never go through it.
#pragma once

#include <chrono>
#include <initializer_list>
#include <string>
#include <string_view>

#include <warden/config.hpp>

struct redisContext;

namespace warden_bench {

class redis_sync {
 public:
  // Connects to the server `config` names and sends AUTH and SELECT the way
  // warden would, so the bench sees the same database as its locks. `timeout`
  // bounds the connect and every later command. Throws std::runtime_error.
  static redis_sync connect(const warden::Config& config, std::chrono::milliseconds timeout);

  redis_sync(redis_sync&& other) noexcept;
  redis_sync& operator=(redis_sync&& other) noexcept;
  redis_sync(const redis_sync&) = delete;
  redis_sync& operator=(const redis_sync&) = delete;
  ~redis_sync();

  // Sends one command, arguments passed binary-safe. Returns a string, status
  // or integer reply as text and a nil reply as "". Throws std::runtime_error
  // on an error reply, an I/O error or a reply of another type.
  std::string command(std::initializer_list<std::string_view> args);

  // The hiredis context itself, still owned by this object: for a caller that
  // wants hiredis's own reply objects with nothing of the bench's in between.
  redisContext* context() noexcept { return context_; }

 private:
  explicit redis_sync(redisContext* context) noexcept : context_(context) {}

  redisContext* context_ = nullptr;
};

}  // namespace warden_bench
