// The shared state and the operations of one named lock of one client. All
// operations run on the I/O thread and report through callbacks there.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <warden/lock.hpp>

#include "reply.hpp"

namespace warden::detail {

class ClientCore;
class Node;
struct Script;

class LockCore : public std::enable_shared_from_this<LockCore> {
 public:
  using milliseconds = std::chrono::milliseconds;
  using acquire_done = std::function<void(std::error_code, bool acquired, const std::string& message)>;
  using release_done = std::function<void(std::error_code, const std::string& message)>;
  using reply_done = std::function<void(std::error_code, Reply, const std::string& message)>;

  LockCore(std::shared_ptr<ClientCore> client, std::string name);

  const std::string& name() const { return name_; }
  ClientCore& client() const { return *client_; }
  const std::shared_ptr<ClientCore>& client_ptr() const { return client_; }
  Node& node() const;  // loop thread

  // Waits up to `wait` (nullopt: for ever) for the lock on behalf of `owner`.
  // `lease` nullopt: watchdog mode.
  void acquire(thread_id owner, std::optional<milliseconds> wait, std::optional<milliseconds> lease,
               acquire_done done);
  void release(thread_id owner, release_done done);
  void force_release(std::function<void(std::error_code, bool, const std::string&)> done);
  // A plain read-only command about this lock (HEXISTS, PTTL, ...).
  void query(std::vector<std::string> argv, reply_done done);

  // The watchdog's renewal of many holds: script, keys and args for them.
  const Script& renew_script() const;

  void set_lost_handler(std::function<void(const LockLost&)> handler);
  void notify_lost(const LockLost& event) const;

  // "warden: lock 'NAME' on SERVER: WHAT"
  std::string message(std::string_view what) const;

 private:
  std::shared_ptr<ClientCore> client_;
  std::string name_;
  std::string channel_;
  mutable std::mutex lost_mutex_;
  std::function<void(const LockLost&)> lost_handler_;
};

}  // namespace warden::detail
