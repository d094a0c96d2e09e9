// MultiLock: the all-or-nothing policy on the composite core, and the public
// handle.
#include <warden/error.hpp>
#include <warden/multi_lock.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "topology/client_core.hpp"
#include "composite/composite_async.hpp"
#include "composite/composite_core.hpp"

namespace warden {
namespace detail {
namespace {

class MultiCore final : public CompositeCore {
 public:
  explicit MultiCore(std::vector<Lock> members) : CompositeCore(std::move(members), "multi-lock") {}

  bool members_wait() const override { return true; }

  milliseconds member_budget(std::size_t i, milliseconds member_wait, std::optional<milliseconds>) const override {
    // The member's own wait ends by itself; the budget only bounds the retries
    // of an acquire whose replies keep getting lost.
    return member_wait + member(i)->client().config().command_timeout;
  }

  std::optional<milliseconds> attempt_lease(std::optional<milliseconds> lease, milliseconds member_wait) const override {
    if (!lease) return std::nullopt;
    // An attempt lasts at most the members' wait plus a command time-out; twice
    // that keeps the first member taken from expiring before the last one is.
    return std::max(*lease, 2 * (member_wait + longest_command_timeout()));
  }

  verdict judge(const std::vector<vote>& votes, milliseconds, milliseconds) const override {
    return judge_all(votes);
  }

  std::optional<Error> round_failure(const std::vector<MemberVote>& votes, verdict outcome,
                                     milliseconds) const override {
    if (outcome != verdict::unreachable) return std::nullopt;  // only others stood in the way: false
    std::error_code first;
    std::vector<std::string> causes(votes.size());
    for (std::size_t i = 0; i < votes.size(); ++i) {
      if (votes[i].kind != vote::failed) continue;
      if (!first) first = votes[i].error;
      causes[i] = votes[i].cause;
    }
    return Error(first, message("could not take every member (the others were released): " + per_member(causes)));
  }

  std::optional<Error> release_failure(const std::vector<MemberAnswer>& answers, bool) const override {
    std::error_code first;
    std::size_t failed = 0;
    std::vector<std::string> causes(size());
    for (auto& answer : answers) {
      if (!answer.error) continue;
      if (!first) first = answer.error;
      ++failed;
      causes[answer.member] = answer.cause;
    }
    if (!first) return std::nullopt;
    return Error(first, message(fmt::format("unlock failed on {} of {} members (the others were released): {}", failed,
                                            size(), per_member(causes))));
  }

  bool locked(const std::vector<MemberAnswer>& answers) const override {
    bool all = true;
    for (auto& answer : answers) {
      if (answer.error) throw Error(answer.error, message(describe(answer.member) + ": " + answer.cause));
      all = all && answer.value;
    }
    return all;
  }

 protected:
  void member_lost(thread_id owner, std::uint64_t generation, std::size_t i, const LockLost& event) override {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      auto it = holds_.find(owner);
      if (it == holds_.end() || it->second.generation != generation || it->second.lost) return;
      it->second.lost = true;
    }
    fire_lost(LockLost{event.lock_name, owner, event.cause,
                       message(fmt::format("member {} lost: {}", describe(i), event.message))});
  }

  bool holds_enough(const Hold&) const override { return true; }

  clock::time_point hold_valid_until(const Hold&, thread_id owner) const override {
    auto earliest = clock::time_point::max();
    for (std::size_t i = 0; i < size(); ++i) {
      earliest = std::min(earliest, member(i)->client().watchdog().valid_until(*member(i), owner));
    }
    return earliest;
  }
};

std::vector<Lock> checked_members(std::vector<Lock> members) {
  if (members.empty()) {
    throw Error(errc::invalid_argument, "warden: multi-lock {}: a MultiLock needs at least one member");
  }
  for (auto& lock : members) {
    if (!lock.core()) throw Error(errc::invalid_argument, "warden: multi-lock: a member is an empty (moved-from) Lock");
  }
  return members;
}

}  // namespace
}  // namespace detail

MultiLock::MultiLock(std::initializer_list<Lock> members) : MultiLock(std::vector<Lock>(members)) {}

MultiLock::MultiLock(std::vector<Lock> members)
    : core_(std::make_shared<detail::MultiCore>(detail::checked_members(std::move(members)))) {}

const std::vector<Lock>& MultiLock::members() const noexcept {
  static const std::vector<Lock> none;
  return core_ ? core_->members() : none;
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
