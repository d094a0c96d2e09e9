// MultiLock: the public handle; the policy is composite/multi_core.
#include <warden/error.hpp>
#include <warden/multi_lock.hpp>

#include "api/composite_async.hpp"
#include "composite/multi_core.hpp"
#include "lock/validity.hpp"

namespace warden {

MultiLock::MultiLock(std::initializer_list<Lock> members) : MultiLock(std::vector<Lock>(members)) {}

MultiLock::MultiLock(std::vector<Lock> members)
    : core_(detail::make_multi_core(detail::member_cores(members))), members_(std::move(members)) {}

const std::vector<Lock>& MultiLock::members() const noexcept {
  static const std::vector<Lock> none;
  return core_ ? members_ : none;
}

void MultiLock::lock() {
  detail::live(core_).check_blocking("lock()");
  core_->acquire(current_thread_id(), std::nullopt).get();
}

void MultiLock::lock(const cancel_token& cancel) {
  detail::live(core_).check_blocking("lock(cancel)");
  core_->acquire(current_thread_id(), std::nullopt, cancel).get();
}

void MultiLock::lock_with_lease(milliseconds lease) {
  detail::live(core_).check_blocking("lock(lease)");
  core_->acquire(current_thread_id(), lease).get();
}

bool MultiLock::try_lock() {
  detail::live(core_).check_blocking("try_lock()");
  return core_->try_acquire(current_thread_id(), milliseconds{0}, std::nullopt).get();
}

bool MultiLock::try_lock_for_ms(milliseconds wait, std::optional<milliseconds> lease) {
  detail::live(core_).check_blocking("try_lock_for()");
  return core_->try_acquire(current_thread_id(), wait, lease).get();
}

// A moved-from handle has no lock to release and no logger to tell.
void MultiLock::unlock() noexcept {
  if (core_) (void)detail::unlock_blocking(*core_, false);
}

std::error_code MultiLock::unlock_checked() noexcept {
  if (!core_) return make_error_code(errc::invalid_argument);
  return detail::unlock_blocking(*core_, true);
}

bool MultiLock::is_locked() const {
  detail::live(core_).check_blocking("is_locked()");
  return core_->is_locked().get();
}

std::chrono::steady_clock::time_point MultiLock::valid_until() const { return valid_until(current_thread_id()); }

std::chrono::steady_clock::time_point MultiLock::valid_until(thread_id owner) const {
  return detail::live(core_).valid_until(owner);
}

std::chrono::milliseconds MultiLock::valid_for() const { return valid_for(current_thread_id()); }

std::chrono::milliseconds MultiLock::valid_for(thread_id owner) const {
  return detail::validity_left(detail::live(core_).valid_until(owner), detail::clock::now());
}

lost_listener_id MultiLock::add_lost_listener(lost_listener listener) {
  return detail::live(core_).add_lost_listener(std::move(listener));
}

void MultiLock::remove_lost_listener(lost_listener_id id) {
  if (core_) core_->remove_lost_listener(id);
}

LostSubscription MultiLock::subscribe_lost(lost_listener listener) {
  auto id = detail::live(core_).add_lost_listener(std::move(listener));
  return LostSubscription([core = core_, id] { core->remove_lost_listener(id); });
}

AcquireFuture<void> MultiLock::lock_async(thread_id owner) {
  return detail::composite_acquire<void>(core_, owner, std::nullopt, std::nullopt);
}

AcquireFuture<void> MultiLock::lock_async(thread_id owner, const cancel_token& cancel) {
  return detail::composite_acquire<void>(core_, owner, std::nullopt, std::nullopt, cancel);
}

AcquireFuture<void> MultiLock::lock_async(thread_id owner, milliseconds lease) {
  return detail::composite_acquire<void>(core_, owner, std::nullopt, lease);
}

void MultiLock::lock_async(thread_id owner, completion<void> done) {
  if (!core_) return done ? done(make_error_code(errc::invalid_argument)) : void();
  core_->try_acquire(owner, std::nullopt, std::nullopt, detail::composite_callback<void>(core_, std::move(done)));
}

void MultiLock::lock_async(thread_id owner, milliseconds lease, completion<void> done) {
  if (!core_) return done ? done(make_error_code(errc::invalid_argument)) : void();
  core_->try_acquire(owner, std::nullopt, lease, detail::composite_callback<void>(core_, std::move(done)));
}

AcquireFuture<bool> MultiLock::try_lock_async(thread_id owner, milliseconds wait) {
  return detail::composite_acquire<bool>(core_, owner, wait, std::nullopt);
}

AcquireFuture<bool> MultiLock::try_lock_async(thread_id owner, milliseconds wait, milliseconds lease) {
  return detail::composite_acquire<bool>(core_, owner, wait, lease);
}

void MultiLock::try_lock_async(thread_id owner, milliseconds wait, completion<bool> done) {
  if (!core_) return done ? done(make_error_code(errc::invalid_argument), false) : void();
  core_->try_acquire(owner, wait, std::nullopt, detail::composite_callback<bool>(core_, std::move(done)));
}

void MultiLock::try_lock_async(thread_id owner, milliseconds wait, milliseconds lease, completion<bool> done) {
  if (!core_) return done ? done(make_error_code(errc::invalid_argument), false) : void();
  core_->try_acquire(owner, wait, lease, detail::composite_callback<bool>(core_, std::move(done)));
}

std::future<void> MultiLock::unlock_async(thread_id owner) {
  if (!core_) return detail::moved_from<void>();
  return core_->release(owner);
}

void MultiLock::unlock_async(thread_id owner, completion<void> done) {
  if (!core_) return done ? done(make_error_code(errc::invalid_argument)) : void();
  core_->release(owner, detail::composite_release_callback(core_, std::move(done)));
}

std::future<bool> MultiLock::is_locked_async() const {
  if (!core_) return detail::moved_from<bool>();
  return core_->is_locked();
}

void MultiLock::is_locked_async(completion<bool> done) const {
  if (!core_) return done ? done(make_error_code(errc::invalid_argument), false) : void();
  core_->is_locked(detail::composite_callback<bool>(core_, std::move(done)));
}

}  // namespace warden
