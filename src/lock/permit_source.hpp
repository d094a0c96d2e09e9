// What one wait for permits (permit_wait_op.cpp) asks of the synchronizer it
// waits on: a Semaphore, or a PermitExpirableSemaphore. Each try carries an
// attempt id (32 hex digits: a PES's permit id), under which a try that
// takes permits leaves a mark for a while, so that a try whose reply was
// lost can be settled.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "io/reply.hpp"
#include "io/shared_text.hpp"
#include "lock/lock_core.hpp"

namespace warden::detail {

class LockHost;

// What a try's (non-error) reply says.
struct PermitTry {
  enum class kind { taken, refused, bad };
  kind what = kind::bad;
  // refused: when a held permit expires by itself (server time from now).
  std::optional<std::chrono::milliseconds> retry_in;
};

class PermitSource {
 public:
  using milliseconds = std::chrono::milliseconds;
  // done(error, acquired, attempt id, message): the id is the permit's
  // (a PES's) when acquired.
  using wait_done =
      std::function<void(std::error_code, bool acquired, const std::string& attempt, const std::string& message)>;

  virtual ~PermitSource() = default;

  virtual LockHost& client() const = 0;
  // The channel releases are published on (shared with the subscriber).
  virtual const SharedText& channel_text() const = 0;
  // "warden: <kind> 'NAME' on SERVER: WHAT"
  virtual std::string message(std::string_view what) const = 0;
  // The try, under `attempt`, whose mark is kept `mark_ttl`.
  virtual ScriptCall try_call(const std::string& attempt, milliseconds mark_ttl) const = 0;
  virtual PermitTry read_try(const Reply& reply) const = 0;
  // Settling a lost try: reply 1 it had taken (kept, or given back when not
  // `keep`), 0 it had not (and now never will).
  virtual ScriptCall settle_call(const std::string& attempt, bool keep, milliseconds mark_ttl) const = 0;
  // Gives back what a try under `attempt` took, for a caller that has gone.
  virtual void give_back(const std::string& attempt, std::function<void(std::error_code, const std::string&)> done) = 0;

  // Waits for permits up to `wait` (nullopt: for ever; zero: one try).
  // Loop thread.
  static void wait_for_permits(std::shared_ptr<PermitSource> source, std::optional<milliseconds> wait,
                               cancel_token cancel, wait_done done);
};

}  // namespace warden::detail
