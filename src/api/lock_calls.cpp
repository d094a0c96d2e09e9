#include "api/lock_calls.hpp"

namespace warden::detail::calls {

std::optional<std::string> acquire_problem(thread_id owner, std::optional<milliseconds> wait,
                                           std::optional<milliseconds> lease) {
  for (auto problem : {bad_owner(owner), bad_wait(wait), bad_lease(lease)}) {
    if (problem) return problem;
  }
  return std::nullopt;
}

void release(const std::shared_ptr<LockCore>& core, thread_id owner, sink<none> out) {
  if (refused_moved_from(core, "a release", out)) return;
  if (auto problem = bad_owner(owner)) {
    return deliver(core, std::move(out),
                   failure<none>(make_error_code(errc::invalid_argument), core->message(*problem)));
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
