#include "api/lock_calls.hpp"

namespace warden::detail::calls {

void acquire(const std::shared_ptr<LockCore>& core, thread_id owner, std::optional<milliseconds> wait,
             std::optional<milliseconds> lease, sink<Acquired> out, cancel_token cancel) {
  if (refused_moved_from(core, "an acquire", out)) return;
  for (auto problem : {bad_owner(owner), bad_wait(wait), bad_lease(lease)}) {
    if (problem) {
      return deliver(core, std::move(out),
                     failure<Acquired>(make_error_code(errc::invalid_argument), core->message(*problem)));
    }
  }
  submit<Acquired>(
      core,
      [owner, wait, lease, cancel](LockCore& lock, sink<Acquired> out) {
        AcquireOptions options;
        options.cancel = cancel;
        if (lock.kind() != lock_kind::fenced) {
          // No token comes: nothing to catch it in (a waiter keeps all this
          // for as long as it waits).
          lock.acquire(
              owner, wait, lease,
              [out = std::move(out)](std::error_code error, bool acquired, const std::string& message) {
                out(Outcome<Acquired>{error, message, Acquired{!error && acquired, std::nullopt}});
              },
              std::move(options));
          return;
        }
        // Told (on this thread) just before the callback below, if at all.
        auto token = std::make_shared<std::optional<std::int64_t>>();
        options.on_token = [token](std::int64_t value) { *token = value; };
        lock.acquire(
            owner, wait, lease,
            [out = std::move(out), token](std::error_code error, bool acquired, const std::string& message) {
              bool held = !error && acquired;
              out(Outcome<Acquired>{error, message, Acquired{held, held ? *token : std::nullopt}});
            },
            std::move(options));
      },
      std::move(out));
}

void release(const std::shared_ptr<LockCore>& core, thread_id owner, sink<none> out) {
  if (refused_moved_from(core, "a release", out)) return;
  if (auto problem = bad_owner(owner)) {
    return deliver(core, std::move(out), failure<none>(make_error_code(errc::invalid_argument), core->message(*problem)));
  }
  submit<none>(
      core,
      [owner](LockCore& lock, sink<none> out) {
        lock.release(owner, [out](std::error_code error, const std::string& message) {
          out(Outcome<none>{error, message, {}});
        });
      },
      std::move(out));
}

}  // namespace warden::detail::calls
