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
using token_t = FencedLock::token_type;

// A FencedLock's acquires catch the token (catches::token), and a fenced
// core always hands one out with a hold (FencedLockCore's replies guarantee
// it); these read it.
token_t token_of(const Acquired& acquired) { return acquired.token.value_or(0); }
std::optional<token_t> token_if_held(const Acquired& acquired) { return acquired.held ? acquired.token : std::nullopt; }

auto as_token(sink<token_t> out) {
  return [out = std::move(out)](Outcome<Acquired> outcome) {
    out(Outcome<token_t>{outcome.error, outcome.message, token_of(outcome.value)});
  };
}

auto as_token_if_held(sink<std::optional<token_t>> out) {
  return [out = std::move(out)](Outcome<Acquired> outcome) {
    out(Outcome<std::optional<token_t>>{outcome.error, outcome.message, token_if_held(outcome.value)});
  };
}

// `fenced` is the core `core` keeps alive (null only with a null core).
void read_token(const std::shared_ptr<LockCore>& core, detail::FencedLockCore* fenced, sink<token_t> out) {
  if (refused_moved_from(core, "token", out)) return;
  submit<token_t>(
      core,
      [fenced](LockCore&, sink<token_t> out) {
        fenced->token([out](std::error_code error, token_t value, const std::string& message) {
          out(Outcome<token_t>{error, message, value});
        });
      },
      std::move(out));
}

}  // namespace

FencedLock::FencedLock(std::shared_ptr<detail::FencedLockCore> core) noexcept : BasicLock(core), fenced_(core.get()) {}

FencedLock::operator Lock() const noexcept { return Lock(core_); }

token_t FencedLock::lock_and_get_token(const lock_options& options) {
  return wait_blocking<token_t>(core_, "lock_and_get_token()", [this, &options](sink<token_t> out) {
    acquire_forever<catches::token>(core_, current_thread_id(), options, as_token(std::move(out)));
  });
}

std::optional<token_t> FencedLock::try_lock_and_get_token(const lock_options& options) {
  return wait_blocking<std::optional<token_t>>(
      core_, "try_lock_and_get_token()", [this, &options](sink<std::optional<token_t>> out) {
        try_acquire<catches::token>(core_, current_thread_id(), options, as_token_if_held(std::move(out)));
      });
}

token_t FencedLock::token() const {
  return wait_blocking<token_t>(core_, "token()",
                                [this](sink<token_t> out) { read_token(core_, fenced_, std::move(out)); });
}

AcquireFuture<token_t> FencedLock::lock_and_get_token_async(thread_id owner, const lock_options& options) {
  return acquire_future<token_t>(
      core_, owner, [&](auto out) { acquire_forever<catches::token>(core_, owner, options, std::move(out)); },
      token_of);
}

void FencedLock::lock_and_get_token_async(thread_id owner, const lock_options& options, completion<token_t> done) {
  acquire_forever<catches::token>(core_, owner, options, as_token(as_callback<token_t>(core_, std::move(done))));
}

AcquireFuture<std::optional<token_t>> FencedLock::try_lock_and_get_token_async(thread_id owner,
                                                                               const lock_options& options) {
  return acquire_future<std::optional<token_t>>(
      core_, owner, [&](auto out) { try_acquire<catches::token>(core_, owner, options, std::move(out)); },
      token_if_held);
}

void FencedLock::try_lock_and_get_token_async(thread_id owner, const lock_options& options,
                                              completion<std::optional<token_t>> done) {
  try_acquire<catches::token>(core_, owner, options,
                              as_token_if_held(as_callback<std::optional<token_t>>(core_, std::move(done))));
}

std::future<token_t> FencedLock::token_async() const {
  return as_future<token_t>([&](sink<token_t> out) { read_token(core_, fenced_, std::move(out)); });
}

void FencedLock::token_async(completion<token_t> done) const {
  read_token(core_, fenced_, as_callback<token_t>(core_, std::move(done)));
}

}  // namespace warden
