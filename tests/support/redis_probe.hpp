// A plain blocking connection for looking at what the code under test left in
// Redis (keys, TTLs, hashes, command counters), independent of warden.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

struct redisContext;

namespace warden::test {

class RedisServer;

// One reply, copied out of hiredis so it outlives the connection.
struct ProbeReply {
  int type = 0;     // a REDIS_REPLY_* value from <hiredis/hiredis.h>
  std::string str;  // string, status or error text
  long long integer = 0;
  std::vector<ProbeReply> elements;  // array elements

  bool is_nil() const;
  bool is_error() const;
};

// Not thread-safe: one probe per thread.
//
// The connection is checked before every command and silently re-made if the
// server closed it (e.g. after RedisServer::kill() + start()), so one probe can
// be kept across restarts. A command that fails in flight is not retried.
class RedisProbe {
 public:
  // Connects (2 s connect and I/O timeouts) and sends AUTH when `password`
  // is non-empty. Throws std::runtime_error if either fails.
  RedisProbe(const std::string& host, std::uint16_t port, std::string password = {});
  // Connects to `server`, authenticating with its --requirepass if it has one.
  explicit RedisProbe(const RedisServer& server);
  ~RedisProbe();
  RedisProbe(const RedisProbe&) = delete;
  RedisProbe& operator=(const RedisProbe&) = delete;

  // Sends one command. Error replies are returned (is_error()), not thrown;
  // connection failures and time-outs throw std::runtime_error.
  ProbeReply command(const std::vector<std::string>& argv);

  // Convenience wrappers; these also throw std::runtime_error on an error
  // reply (e.g. WRONGTYPE), since the caller expects a particular shape.
  std::map<std::string, std::string> hgetall(const std::string& key);
  long long pttl(const std::string& key);  // -2 no key, -1 no TTL, else ms
  bool exists(const std::string& key);
  std::optional<std::string> get(const std::string& key);
  std::vector<std::string> keys(const std::string& pattern = "*");  // sorted
  // Calls of `command` since start (or CONFIG RESETSTAT) according to INFO
  // commandstats, e.g. "evalsha" reads cmdstat_evalsha. 0 when never called.
  long long command_calls(const std::string& command);
  // Scripts run since start: EVALSHA and EVAL calls.
  long long script_calls() { return command_calls("evalsha") + command_calls("eval"); }

 private:
  void connect();
  void ensure_connected();
  void disconnect() noexcept;
  ProbeReply send(const std::vector<std::string>& argv);
  ProbeReply checked(const std::vector<std::string>& argv);

  std::string host_;
  std::uint16_t port_;
  std::string password_;
  redisContext* context_ = nullptr;
};

}  // namespace warden::test
