// The public FencedLock handle: Lock's acquire, delivering the hold's token,
// and the counter's read.
#include <warden/fenced_lock.hpp>

#include "api/lock_calls.hpp"
#include "lock/fenced_lock_core.hpp"

namespace warden {

using detail::LockCore;
using std::chrono::milliseconds;

namespace {

using namespace detail::calls;
using token_t = std::int64_t;

// A FencedLock's core always hands out a token with a hold (FencedLockCore's
// replies guarantee it); these read it.
token_t token_of(const Acquired& acquired) { return acquired.token.value_or(0); }
std::optional<token_t> token_if_held(const Acquired& acquired) {
  return acquired.held ? acquired.token : std::nullopt;
}

// An acquire whose value is the token (waits for ever: held or an error).
void acquire_token(const std::shared_ptr<LockCore>& core, thread_id owner, std::optional<milliseconds> lease,
                   sink<token_t> out, cancel_token cancel = {}) {
  acquire(
      core, owner, std::nullopt, lease,
      [out](Outcome<Acquired> outcome) {
        out(Outcome<token_t>{outcome.error, outcome.message, token_of(outcome.value)});
      },
      std::move(cancel));
}

void try_acquire_token(const std::shared_ptr<LockCore>& core, thread_id owner, milliseconds wait,
                       std::optional<milliseconds> lease, sink<std::optional<token_t>> out) {
  acquire(core, owner, wait, lease, [out](Outcome<Acquired> outcome) {
    out(Outcome<std::optional<token_t>>{outcome.error, outcome.message, token_if_held(outcome.value)});
  });
}

void read_token(const std::shared_ptr<LockCore>& core, sink<token_t> out) {
  if (refused_moved_from(core, "token", out)) return;
  submit<token_t>(
      core,
      [](LockCore& lock, sink<token_t> out) {
        static_cast<detail::FencedLockCore&>(lock).token(
            [out](std::error_code error, token_t value, const std::string& message) {
              out(Outcome<token_t>{error, message, value});
            });
      },
      std::move(out));
}

}  // namespace

token_t FencedLock::lock_and_get_token() {
  return wait_blocking<token_t>(core_, "lock_and_get_token()", [this](sink<token_t> out) {
    acquire_token(core_, current_thread_id(), std::nullopt, std::move(out));
  });
}

token_t FencedLock::lock_and_get_token(const cancel_token& cancel) {
  return wait_blocking<token_t>(core_, "lock_and_get_token(cancel)", [this, &cancel](sink<token_t> out) {
    acquire_token(core_, current_thread_id(), std::nullopt, std::move(out), cancel);
  });
}

token_t FencedLock::lock_and_get_token_ms(milliseconds lease) {
  return wait_blocking<token_t>(core_, "lock_and_get_token(lease)", [this, lease](sink<token_t> out) {
    acquire_token(core_, current_thread_id(), lease, std::move(out));
  });
}

std::optional<token_t> FencedLock::try_lock_and_get_token_ms(milliseconds wait, std::optional<milliseconds> lease) {
  return wait_blocking<std::optional<token_t>>(core_, "try_lock_and_get_token()",
                                               [this, wait, lease](sink<std::optional<token_t>> out) {
                                                 try_acquire_token(core_, current_thread_id(), wait, lease,
                                                                   std::move(out));
                                               });
}

token_t FencedLock::token() const {
  return wait_blocking<token_t>(core_, "token()", [this](sink<token_t> out) { read_token(core_, std::move(out)); });
}

AcquireFuture<token_t> FencedLock::lock_and_get_token_async(thread_id owner) {
  return acquire_future<token_t>(core_, owner, std::nullopt, std::nullopt, {}, token_of);
}

AcquireFuture<token_t> FencedLock::lock_and_get_token_async(thread_id owner, milliseconds lease) {
  return acquire_future<token_t>(core_, owner, std::nullopt, lease, {}, token_of);
}

AcquireFuture<token_t> FencedLock::lock_and_get_token_async(thread_id owner, const cancel_token& cancel) {
  return acquire_future<token_t>(core_, owner, std::nullopt, std::nullopt, cancel, token_of);
}

void FencedLock::lock_and_get_token_async(thread_id owner, completion<token_t> done) {
  acquire_token(core_, owner, std::nullopt, as_callback<token_t>(core_, std::move(done)));
}

void FencedLock::lock_and_get_token_async(thread_id owner, milliseconds lease, completion<token_t> done) {
  acquire_token(core_, owner, lease, as_callback<token_t>(core_, std::move(done)));
}

AcquireFuture<std::optional<token_t>> FencedLock::try_lock_and_get_token_async(thread_id owner, milliseconds wait) {
  return acquire_future<std::optional<token_t>>(core_, owner, wait, std::nullopt, {}, token_if_held);
}

AcquireFuture<std::optional<token_t>> FencedLock::try_lock_and_get_token_async(thread_id owner, milliseconds wait,
                                                                              milliseconds lease) {
  return acquire_future<std::optional<token_t>>(core_, owner, wait, lease, {}, token_if_held);
}

void FencedLock::try_lock_and_get_token_async(thread_id owner, milliseconds wait,
                                              completion<std::optional<token_t>> done) {
  try_acquire_token(core_, owner, wait, std::nullopt, as_callback<std::optional<token_t>>(core_, std::move(done)));
}

void FencedLock::try_lock_and_get_token_async(thread_id owner, milliseconds wait, milliseconds lease,
                                              completion<std::optional<token_t>> done) {
  try_acquire_token(core_, owner, wait, lease, as_callback<std::optional<token_t>>(core_, std::move(done)));
}

std::future<token_t> FencedLock::token_async() const {
  return as_future<token_t>([&](sink<token_t> out) { read_token(core_, std::move(out)); });
}

void FencedLock::token_async(completion<token_t> done) const {
  read_token(core_, as_callback<token_t>(core_, std::move(done)));
}

}  // namespace warden
