// The one public handle of MultiLock and RedLock: what differs between them
// is the policy of their core (composite/multi_core, composite/red_core).
#include <warden/composite_lock.hpp>
#include <warden/error.hpp>

#include "api/composite_async.hpp"
#include "lock/validity.hpp"

namespace warden {

using std::chrono::milliseconds;

CompositeLock::CompositeLock(std::shared_ptr<detail::CompositeCore> core, std::vector<Lock>&& members) noexcept
    : core_(std::move(core)), members_(std::move(members)) {}

const std::vector<Lock>& CompositeLock::members() const noexcept {
  static const std::vector<Lock> none;
  return core_ ? members_ : none;
}

void CompositeLock::lock(const lock_options& options) {
  detail::live(core_).check_blocking(options.lease() ? "lock(lease)" : "lock()");
  detail::refuse_wait(*core_, options);
  core_->acquire(current_thread_id(), options.lease(), options.cancel()).get();
}

bool CompositeLock::try_lock(const lock_options& options) {
  bool once = options.wait().value_or(milliseconds{0}).count() == 0 && !options.lease();
  detail::live(core_).check_blocking(once ? "try_lock()" : "try_lock_for()");
  return detail::try_acquire_future(*core_, current_thread_id(), options).get();
}

// A moved-from handle has no lock to release and no logger to tell.
void CompositeLock::unlock() noexcept {
  if (core_) (void)detail::unlock_blocking(*core_, false);
}

std::error_code CompositeLock::unlock_checked() noexcept {
  if (!core_) return make_error_code(errc::invalid_argument);
  return detail::unlock_blocking(*core_, true);
}

bool CompositeLock::is_locked() const {
  detail::live(core_).check_blocking("is_locked()");
  return core_->is_locked().get();
}

std::chrono::steady_clock::time_point CompositeLock::valid_until(thread_id owner) const {
  return detail::live(core_).valid_until(owner);
}

milliseconds CompositeLock::valid_for(thread_id owner) const {
  return detail::validity_left(detail::live(core_).valid_until(owner), detail::clock::now());
}

LostSubscription CompositeLock::subscribe_lost(lost_listener listener) {
  auto id = detail::live(core_).add_lost_listener(std::move(listener));
  return detail::access::subscription([core = core_, id] { core->remove_lost_listener(id); });
}

AcquireFuture<void> CompositeLock::lock_async(thread_id owner, const lock_options& options) {
  if (core_ && options.wait()) return detail::refused_future<void>(*core_);
  return detail::composite_acquire<void>(core_, owner, std::nullopt, options.lease(), options.cancel());
}

void CompositeLock::lock_async(thread_id owner, const lock_options& options, completion<void> done) {
  if (!core_) return done ? done(make_error_code(errc::invalid_argument)) : void();
  auto callback = detail::composite_callback<void>(core_, std::move(done));
  if (options.wait()) return callback(detail::wait_refused_error(*core_), false);
  core_->try_acquire(owner, std::nullopt, options.lease(), std::move(callback), options.cancel());
}

AcquireFuture<bool> CompositeLock::try_lock_async(thread_id owner, const lock_options& options) {
  return detail::composite_acquire<bool>(core_, owner, options.wait().value_or(milliseconds{0}), options.lease(),
                                         options.cancel());
}

void CompositeLock::try_lock_async(thread_id owner, const lock_options& options, completion<bool> done) {
  if (!core_) return done ? done(make_error_code(errc::invalid_argument), false) : void();
  core_->try_acquire(owner, options.wait().value_or(milliseconds{0}), options.lease(),
                     detail::composite_callback<bool>(core_, std::move(done)), options.cancel());
}

std::future<void> CompositeLock::unlock_async(thread_id owner) {
  if (!core_) return detail::moved_from<void>();
  return core_->release(owner);
}

void CompositeLock::unlock_async(thread_id owner, completion<void> done) {
  if (!core_) return done ? done(make_error_code(errc::invalid_argument)) : void();
  core_->release(owner, detail::composite_release_callback(core_, std::move(done)));
}

std::future<bool> CompositeLock::is_locked_async() const {
  if (!core_) return detail::moved_from<bool>();
  return core_->is_locked();
}

void CompositeLock::is_locked_async(completion<bool> done) const {
  if (!core_) return done ? done(make_error_code(errc::invalid_argument), false) : void();
  core_->is_locked(detail::composite_callback<bool>(core_, std::move(done)));
}

}  // namespace warden
