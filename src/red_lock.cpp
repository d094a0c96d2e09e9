// RedLock: the quorum policy on the composite core (votes, validity, the
// re-take of nodes that lost the key while a majority holds it), and the
// public handle.
#include <warden/error.hpp>
#include <warden/red_lock.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "client_core.hpp"
#include "composite_async.hpp"
#include "composite_core.hpp"
#include "fan_out.hpp"

namespace warden {
namespace detail {
namespace {

class RedCore final : public CompositeCore {
 public:
  explicit RedCore(std::vector<Lock> members) : CompositeCore(std::move(members), "red lock") {}

  std::size_t quorum() const { return quorum_of(size()); }

  bool members_wait() const override { return false; }

  milliseconds member_budget(std::size_t i, milliseconds, std::optional<milliseconds> lease) const override {
    return node_budget(member(i)->client().config().command_timeout, member_lease(i, lease));
  }

  std::optional<milliseconds> attempt_lease(std::optional<milliseconds> lease, milliseconds) const override {
    return lease;  // a round is short: its budget is part of the validity computation
  }

  verdict judge(const std::vector<vote>& votes, milliseconds lease, milliseconds elapsed) const override {
    return judge_quorum(votes, lease, elapsed);
  }

  std::optional<Error> round_failure(const std::vector<MemberVote>& votes, verdict outcome,
                                     milliseconds elapsed) const override {
    tally t = count_votes(kinds(votes));
    if (outcome == verdict::contended && t.failed == 0) return std::nullopt;  // only other owners: false
    std::vector<std::string> causes(votes.size());
    for (std::size_t i = 0; i < votes.size(); ++i) {
      causes[i] = votes[i].kind == vote::yes ? "acquired (released again)" : votes[i].cause;
    }
    std::string what;
    if (outcome == verdict::expired) {
      what = fmt::format("quorum not reached in time: {} of {} nodes acquired, but only after {} ms, which leaves no "
                         "validity of the lease",
                         t.yes, size(), elapsed.count());
    } else {
      what = fmt::format("quorum not reached: {} of {} nodes acquired, {} needed", t.yes, size(), quorum());
    }
    return Error(errc::quorum_not_reached, message(what + ": " + per_member(causes)));
  }

  std::optional<Error> release_failure(const std::vector<MemberAnswer>& answers, bool was_lost) const override {
    std::size_t released = 0;
    std::size_t gone = size() - answers.size();  // lost earlier, or never taken by this hold
    std::vector<std::string> causes(size(), "not held by this hold");
    for (auto& answer : answers) {
      if (!answer.error) {
        ++released;
        causes[answer.member] = "released";
        continue;
      }
      causes[answer.member] = answer.cause;
      if (answer.error == errc::lease_expired || answer.error == errc::not_owner) ++gone;
    }
    if (released >= quorum()) return std::nullopt;
    bool lost = was_lost || gone > size() - quorum();
    auto what = fmt::format("unlock confirmed by {} of {} nodes, {} needed{}: {}", released, size(), quorum(),
                            lost ? " (the lock had been lost)" : " (the keys left expire with their lease)",
                            per_member(causes));
    return Error(lost ? errc::lease_expired : errc::quorum_not_reached, message(what));
  }

  bool locked(const std::vector<MemberAnswer>& answers) const override {
    std::size_t yes = 0, failed = 0;
    std::vector<std::string> causes(size());
    for (auto& answer : answers) {
      if (answer.error) {
        ++failed;
        causes[answer.member] = answer.cause;
      } else {
        yes += answer.value ? 1 : 0;
        causes[answer.member] = answer.value ? "locked" : "not locked";
      }
    }
    switch (quorum_of_answers(size(), yes, failed)) {
      case quorum_answer::yes: return true;
      case quorum_answer::no: return false;
      case quorum_answer::unknown: break;
    }
    throw Error(errc::quorum_not_reached,
                message(fmt::format("is_locked() undecided: {} of {} nodes locked, {} needed, {} unreachable: {}", yes,
                                    size(), quorum(), failed, per_member(causes))));
  }

 protected:
  // A node's hold is gone from its server. While a majority still holds the
  // lock, a watchdog-mode hold takes the node back (a node restarted empty gets
  // the key again); once fewer than a majority hold it, the lock is lost.
  void member_lost(thread_id owner, std::uint64_t generation, std::size_t i, const LockLost& event) override {
    std::optional<LockLost> lost;
    bool retake = false;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      Hold* hold = find(owner, generation);
      if (hold == nullptr || !hold->member_held(i)) return;
      // The key vanished with every level's count on that node.
      for (auto& level : hold->levels) level.taken[i] = false;
      if (hold->lost) return;
      if (hold->held_count() < quorum()) {
        hold->lost = true;
        lost = LockLost{event.lock_name, owner, event.cause,
                        message(fmt::format("lost: held by {} of {} nodes, {} needed; {} lost: {}", hold->held_count(),
                                            size(), quorum(), describe(i), event.message))};
      } else if (!hold->lease && !hold->retaking[i]) {
        hold->retaking[i] = true;
        retake = true;
      }
    }
    if (lost) fire_lost(*lost);
    if (retake) take_back(owner, generation, i);
  }

  bool holds_enough(const Hold& hold) const override { return hold.held_count() >= quorum(); }

  clock::time_point hold_valid_until(const Hold& hold, thread_id owner) const override {
    std::vector<clock::time_point> bounds;
    for (std::size_t i = 0; i < size(); ++i) {
      if (!hold.member_held(i)) continue;
      auto bound = member(i)->client().watchdog().valid_until(*member(i), owner);
      if (bound == clock::time_point::min()) continue;
      bounds.push_back(bound - clock_drift(member_lease(i, hold.lease)));
    }
    return quorum_valid_until(std::move(bounds), quorum());
  }

 private:
  static std::vector<vote> kinds(const std::vector<MemberVote>& votes) {
    std::vector<vote> result;
    for (auto& v : votes) result.push_back(v.kind);
    return result;
  }

  Hold* find(thread_id owner, std::uint64_t generation) {
    auto it = holds_.find(owner);
    if (it == holds_.end() || it->second.generation != generation) return nullptr;
    return &it->second;
  }

  void take_back(thread_id owner, std::uint64_t generation, std::size_t i) {
    auto member = this->member(i);
    std::weak_ptr<CompositeCore> weak = shared_from_this();
    run_on(
        member,
        [weak, member, owner, generation, i] {
          member->acquire(owner, milliseconds{0}, std::nullopt,
                          [weak, member, owner, generation, i](std::error_code error, bool acquired,
                                                               const std::string& text) {
                            auto core = std::static_pointer_cast<RedCore>(weak.lock());
                            if (!core) {
                              if (acquired) release_unwanted(member, owner);
                              return;
                            }
                            core->taken_back(owner, generation, i, error, acquired, text);
                          });
        },
        [] {});
  }

  void taken_back(thread_id owner, std::uint64_t generation, std::size_t i, std::error_code error, bool acquired,
                  const std::string& text) {
    auto member = this->member(i);
    bool unwanted = false;
    bool again = false;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      Hold* hold = find(owner, generation);
      if (hold == nullptr) {
        unwanted = acquired;  // the hold ended meanwhile
      } else if (acquired) {
        hold->retaking[i] = false;
        // One count on the node again: the first level releases it.
        if (hold->member_held(i)) {
          unwanted = true;
        } else {
          hold->levels.front().taken[i] = true;
        }
      } else if (hold->lost) {
        hold->retaking[i] = false;
      } else {
        again = true;  // taken by someone else or unreachable: try again a period later
      }
    }
    if (unwanted) {
      release_unwanted(member, owner);
      return;
    }
    if (acquired) {
      log(log_level::info, message(fmt::format("{} was taken back after it lost the key", describe(i))));
      return;
    }
    if (!again) return;
    log(log_level::warning,
        message(fmt::format("could not take {} back: {}", describe(i),
                            error ? member_cause(*member, error, text) : std::string("taken by another owner"))));
    auto period = std::max(member->client().config().lock_watchdog_timeout / 3, milliseconds{1});
    std::weak_ptr<CompositeCore> weak = shared_from_this();
    schedule_on(
        member->client(), period,
        [weak, owner, generation, i] {
          auto core = std::static_pointer_cast<RedCore>(weak.lock());
          if (core) core->retry_take_back(owner, generation, i);
        },
        [] {});
  }

  void retry_take_back(thread_id owner, std::uint64_t generation, std::size_t i) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      Hold* hold = find(owner, generation);
      if (hold == nullptr) return;
      if (hold->lost || hold->member_held(i)) {
        hold->retaking[i] = false;
        return;
      }
    }
    take_back(owner, generation, i);
  }
};

std::vector<Lock> checked_members(std::vector<Lock> members) {
  if (members.size() < 3) {
    throw Error(errc::invalid_argument,
                fmt::format("warden: red lock: needs at least 3 independent nodes, got {}; a majority of fewer "
                            "tolerates no failure",
                            members.size()));
  }
  std::set<const LockCore*> seen;
  for (auto& lock : members) {
    if (!lock.core()) throw Error(errc::invalid_argument, "warden: red lock: a member is an empty (moved-from) Lock");
    if (!seen.insert(lock.core().get()).second) {
      throw Error(errc::invalid_argument,
                  fmt::format("warden: red lock: lock '{}' of one client is listed twice; each node must be a "
                              "different server",
                              lock.name()));
    }
  }
  return members;
}

}  // namespace
}  // namespace detail

RedLock::RedLock(std::initializer_list<Lock> members) : RedLock(std::vector<Lock>(members)) {}

RedLock::RedLock(std::vector<Lock> members)
    : core_(std::make_shared<detail::RedCore>(detail::checked_members(std::move(members)))) {}

const std::vector<Lock>& RedLock::members() const noexcept { return core_->members(); }

std::size_t RedLock::quorum() const noexcept { return detail::quorum_of(core_->size()); }

void RedLock::lock() {
  core_->check_blocking("lock()");
  core_->acquire(current_thread_id(), std::nullopt).get();
}

void RedLock::lock_with_lease(milliseconds lease) {
  core_->check_blocking("lock(lease)");
  core_->acquire(current_thread_id(), lease).get();
}

bool RedLock::try_lock() {
  core_->check_blocking("try_lock()");
  return core_->try_acquire(current_thread_id(), milliseconds{0}, std::nullopt).get();
}

bool RedLock::try_lock_for_ms(milliseconds wait, std::optional<milliseconds> lease) {
  core_->check_blocking("try_lock_for()");
  return core_->try_acquire(current_thread_id(), wait, lease).get();
}

// A moved-from handle has no lock to release and no logger to tell.
void RedLock::unlock() noexcept {
  if (core_) (void)detail::unlock_blocking(*core_, false);
}

std::error_code RedLock::unlock_checked() noexcept {
  if (!core_) return make_error_code(errc::invalid_argument);
  return detail::unlock_blocking(*core_, true);
}

bool RedLock::is_locked() const {
  core_->check_blocking("is_locked()");
  return core_->is_locked().get();
}

std::chrono::steady_clock::time_point RedLock::valid_until() const { return valid_until(current_thread_id()); }

std::chrono::steady_clock::time_point RedLock::valid_until(thread_id owner) const { return core_->valid_until(owner); }

lost_listener_id RedLock::add_lost_listener(lost_listener listener) { return core_->add_lost_listener(std::move(listener)); }

void RedLock::remove_lost_listener(lost_listener_id id) { core_->remove_lost_listener(id); }

LostSubscription RedLock::subscribe_lost(lost_listener listener) {
  auto id = core_->add_lost_listener(std::move(listener));
  return LostSubscription([core = core_, id] { core->remove_lost_listener(id); });
}

AcquireFuture<void> RedLock::lock_async(thread_id owner) {
  return detail::composite_acquire<void>(core_, owner, std::nullopt, std::nullopt);
}

AcquireFuture<void> RedLock::lock_async(thread_id owner, milliseconds lease) {
  return detail::composite_acquire<void>(core_, owner, std::nullopt, lease);
}

void RedLock::lock_async(thread_id owner, completion<void> done) {
  core_->try_acquire(owner, std::nullopt, std::nullopt, detail::composite_callback<void>(core_, std::move(done)));
}

void RedLock::lock_async(thread_id owner, milliseconds lease, completion<void> done) {
  core_->try_acquire(owner, std::nullopt, lease, detail::composite_callback<void>(core_, std::move(done)));
}

AcquireFuture<bool> RedLock::try_lock_async(thread_id owner, milliseconds wait) {
  return detail::composite_acquire<bool>(core_, owner, wait, std::nullopt);
}

AcquireFuture<bool> RedLock::try_lock_async(thread_id owner, milliseconds wait, milliseconds lease) {
  return detail::composite_acquire<bool>(core_, owner, wait, lease);
}

void RedLock::try_lock_async(thread_id owner, milliseconds wait, completion<bool> done) {
  core_->try_acquire(owner, wait, std::nullopt, detail::composite_callback<bool>(core_, std::move(done)));
}

void RedLock::try_lock_async(thread_id owner, milliseconds wait, milliseconds lease, completion<bool> done) {
  core_->try_acquire(owner, wait, lease, detail::composite_callback<bool>(core_, std::move(done)));
}

std::future<void> RedLock::unlock_async(thread_id owner) { return core_->release(owner); }

void RedLock::unlock_async(thread_id owner, completion<void> done) {
  core_->release(owner, detail::composite_release_callback(core_, std::move(done)));
}

std::future<bool> RedLock::is_locked_async() const { return core_->is_locked(); }

void RedLock::is_locked_async(completion<bool> done) const {
  core_->is_locked(detail::composite_callback<bool>(core_, std::move(done)));
}

}  // namespace warden
