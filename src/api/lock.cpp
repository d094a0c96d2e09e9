// The public Lock handle: validation, then the operation on the I/O thread,
// whose outcome goes to a future, a completion callback, or a waiting caller.
#include <warden/error.hpp>
#include <warden/lock.hpp>
#include <warden/lock_options.hpp>

#include <fmt/format.h>

#include "api/lock_calls.hpp"
#include "lock/validity.hpp"

namespace warden {

using detail::LockCore;
using detail::Reply;
using std::chrono::milliseconds;

namespace {

using namespace detail::calls;

// ---- the operations, each reporting to a sink ----

// value: whether the owner now holds the lock.
auto as_held(sink<bool> out) {
  return [out = std::move(out)](Outcome<Acquired> outcome) {
    out(Outcome<bool>{outcome.error, outcome.message, outcome.value.held});
  };
}

auto as_done(sink<none> out) {
  return [out = std::move(out)](Outcome<Acquired> outcome) { out(Outcome<none>{outcome.error, outcome.message, {}}); };
}

bool held(const Acquired& acquired) { return acquired.held; }

void force_release(const std::shared_ptr<LockCore>& core, sink<bool> out) {
  if (refused_moved_from(core, "force_unlock", out)) return;
  submit<bool>(
      core,
      [](LockCore& lock, sink<bool> out) {
        lock.force_release([out](std::error_code error, bool deleted, const std::string& message) {
          out(Outcome<bool>{error, message, deleted});
        });
      },
      std::move(out));
}

// A query answered from one inspection of the lock (which also checks that
// the key is a lock of this kind).
template <class T, class Convert>
void inspect(const std::shared_ptr<LockCore>& core, thread_id owner, std::string_view call, Convert convert,
             sink<T> out) {
  if (refused_moved_from(core, call, out)) return;
  submit<T>(
      core,
      [owner, convert](LockCore& lock, sink<T> out) {
        lock.inspect(
            owner, [&lock, out, convert](std::error_code error, detail::Inspection state, const std::string& message) {
              if (error) return out(failure<T>(error, message));
              out(Outcome<T>{{}, {}, convert(lock, state)});
            });
      },
      std::move(out));
}

void held_by(const std::shared_ptr<LockCore>& core, thread_id owner, sink<bool> out) {
  inspect<bool>(
      core, owner, "is_held", [](LockCore&, const detail::Inspection& state) { return state.count > 0; },
      std::move(out));
}

void count_of(const std::shared_ptr<LockCore>& core, thread_id owner, sink<int> out) {
  inspect<int>(
      core, owner, "hold_count",
      [](LockCore&, const detail::Inspection& state) { return static_cast<int>(state.count); }, std::move(out));
}

void locked(const std::shared_ptr<LockCore>& core, sink<bool> out) {
  inspect<bool>(
      core, current_thread_id(), "is_locked",
      [](LockCore& lock, const detail::Inspection& state) { return lock.locked(state); }, std::move(out));
}

void time_to_live(const std::shared_ptr<LockCore>& core, sink<std::optional<milliseconds>> out) {
  inspect<std::optional<milliseconds>>(
      core, current_thread_id(), "remain_time_to_live",
      [](LockCore&, const detail::Inspection& state) -> std::optional<milliseconds> {
        if (state.pttl == -2) return std::nullopt;
        if (state.pttl == -1) return milliseconds::max();
        return milliseconds{state.pttl};
      },
      std::move(out));
}

// Waits for a release on the calling thread, or, on the I/O thread (where
// waiting would deadlock), starts it and leaves the outcome to the logger.
std::error_code release_now(const std::shared_ptr<LockCore>& core, bool wait_on_loop_thread_fails) noexcept {
  if (!core) return make_error_code(errc::invalid_argument);  // a moved-from handle: no lock, no logger
  try {
    auto owner = current_thread_id();
    auto log_failure = [core](const Outcome<none>& outcome) {
      if (outcome.error) core->client().log(log_level::error, outcome.message);
    };
    if (core->client().loop().in_loop_thread()) {
      if (wait_on_loop_thread_fails) {
        auto text = core->message(
            "unlock_checked() blocks, and was called on the client's I/O thread (inside a callback); use the "
            "_async form there. Nothing was released.");
        core->client().log(log_level::error, text);
        return make_error_code(errc::would_deadlock);
      }
      release(core, owner, log_failure);
      return {};
    }
    auto promise = std::make_shared<std::promise<Outcome<none>>>();
    auto future = promise->get_future();
    {
      detail::EventLoop::CallerWaits in_place;
      release(core, owner, [promise](Outcome<none> outcome) { promise->set_value(std::move(outcome)); });
      detail::lead_until_ready(core->client().loop(), future);
    }
    auto outcome = future.get();
    log_failure(outcome);
    return outcome.error;
  } catch (const std::exception& error) {
    try {
      core->client().log(log_level::error, core->message(std::string("unlock failed: ") + error.what()));
    } catch (...) {
    }
  } catch (...) {
  }
  return make_error_code(errc::server_error);
}

}  // namespace

BasicLock::BasicLock(std::shared_ptr<detail::LockCore> core) noexcept : core_(std::move(core)) {}

const std::string& BasicLock::name() const noexcept {
  static const std::string none;
  return core_ ? core_->name_string() : none;
}

void BasicLock::lock(const lock_options& options) {
  wait_blocking<none>(core_, options.lease() ? "lock(lease)" : "lock()", [this, &options](sink<none> out) {
    acquire_forever(core_, current_thread_id(), options, as_done(std::move(out)));
  });
}

bool BasicLock::try_lock(const lock_options& options) {
  bool once = options.wait().value_or(milliseconds{0}).count() == 0 && !options.lease();
  return wait_blocking<bool>(core_, once ? "try_lock()" : "try_lock_for()", [this, &options](sink<bool> out) {
    try_acquire(core_, current_thread_id(), options, as_held(std::move(out)));
  });
}

void BasicLock::unlock() noexcept { (void)release_now(core_, false); }

std::error_code BasicLock::unlock_checked() noexcept { return release_now(core_, true); }

bool BasicLock::force_unlock() {
  return wait_blocking<bool>(core_, "force_unlock()", [this](sink<bool> out) { force_release(core_, std::move(out)); });
}

bool BasicLock::is_locked() const {
  return wait_blocking<bool>(core_, "is_locked()", [this](sink<bool> out) { locked(core_, std::move(out)); });
}

bool BasicLock::is_held(thread_id owner) const {
  return wait_blocking<bool>(core_, "is_held()",
                             [this, owner](sink<bool> out) { held_by(core_, owner, std::move(out)); });
}

int BasicLock::hold_count(thread_id owner) const {
  return wait_blocking<int>(core_, "hold_count()",
                            [this, owner](sink<int> out) { count_of(core_, owner, std::move(out)); });
}

std::optional<milliseconds> BasicLock::remain_time_to_live() const {
  return wait_blocking<std::optional<milliseconds>>(
      core_, "remain_time_to_live()",
      [this](sink<std::optional<milliseconds>> out) { time_to_live(core_, std::move(out)); });
}

std::chrono::steady_clock::time_point BasicLock::valid_until(thread_id owner) const {
  return live(core_, "valid_until()").client().holds().valid_until(*core_, owner);
}

std::chrono::milliseconds BasicLock::valid_for(thread_id owner) const {
  auto until = live(core_, "valid_for()").client().holds().valid_until(*core_, owner);
  return detail::validity_left(until, detail::clock::now());
}

LostSubscription BasicLock::subscribe_lost(lost_listener listener) {
  auto id = live(core_, "subscribe_lost()").add_lost_listener(std::move(listener));
  return detail::access::subscription([core = core_, id] { core->remove_lost_listener(id); });
}

AcquireFuture<void> BasicLock::lock_async(thread_id owner, const lock_options& options) {
  return acquire_future<void>(
      core_, owner, [&](auto out) { acquire_forever(core_, owner, options, std::move(out)); }, held);
}

// A callback with no value takes the acquire's outcome as it comes: no
// adapter in between (a waiter keeps every layer for as long as it waits).
void BasicLock::lock_async(thread_id owner, const lock_options& options, completion<void> done) {
  acquire_forever(core_, owner, options, as_callback<void, Acquired>(core_, std::move(done)));
}

AcquireFuture<bool> BasicLock::try_lock_async(thread_id owner, const lock_options& options) {
  return acquire_future<bool>(
      core_, owner, [&](auto out) { try_acquire(core_, owner, options, std::move(out)); }, held);
}

void BasicLock::try_lock_async(thread_id owner, const lock_options& options, completion<bool> done) {
  try_acquire(core_, owner, options, as_held(as_callback<bool>(core_, std::move(done))));
}

std::future<void> BasicLock::unlock_async(thread_id owner) {
  return as_future<void, none>([&](sink<none> out) { release(core_, owner, std::move(out)); });
}

void BasicLock::unlock_async(thread_id owner, completion<void> done) {
  release(core_, owner, as_callback<void, none>(core_, std::move(done)));
}

std::future<bool> BasicLock::force_unlock_async() {
  return as_future<bool>([&](sink<bool> out) { force_release(core_, std::move(out)); });
}

void BasicLock::force_unlock_async(completion<bool> done) {
  force_release(core_, as_callback<bool>(core_, std::move(done)));
}

std::future<bool> BasicLock::is_locked_async() const {
  return as_future<bool>([&](sink<bool> out) { locked(core_, std::move(out)); });
}

void BasicLock::is_locked_async(completion<bool> done) const {
  locked(core_, as_callback<bool>(core_, std::move(done)));
}

std::future<bool> BasicLock::is_held_async(thread_id owner) const {
  return as_future<bool>([&](sink<bool> out) { held_by(core_, owner, std::move(out)); });
}

void BasicLock::is_held_async(thread_id owner, completion<bool> done) const {
  held_by(core_, owner, as_callback<bool>(core_, std::move(done)));
}

std::future<int> BasicLock::hold_count_async(thread_id owner) const {
  return as_future<int>([&](sink<int> out) { count_of(core_, owner, std::move(out)); });
}

void BasicLock::hold_count_async(thread_id owner, completion<int> done) const {
  count_of(core_, owner, as_callback<int>(core_, std::move(done)));
}

std::future<std::optional<milliseconds>> BasicLock::remain_time_to_live_async() const {
  return as_future<std::optional<milliseconds>>(
      [&](sink<std::optional<milliseconds>> out) { time_to_live(core_, std::move(out)); });
}

void BasicLock::remain_time_to_live_async(completion<std::optional<milliseconds>> done) const {
  time_to_live(core_, as_callback<std::optional<milliseconds>>(core_, std::move(done)));
}

}  // namespace warden
