// The state a MultiLock or RedLock keeps between calls: its members, the
// per-owner book of re-entrant holds (levels, the members each level took,
// answers still owed), lost-member listeners, and the is_locked() query.
#include "composite/composite_core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "base/limits.hpp"
#include "composite/fan_out.hpp"
#include "lock/lock_host.hpp"
#include "lock/validity.hpp"

namespace warden::detail {

using std::chrono::milliseconds;

namespace {

template <class T>
void fail(const std::shared_ptr<std::promise<T>>& promise, const Error& error) {
  promise->set_exception(std::make_exception_ptr(error));
}

}  // namespace

std::string member_cause(const LockCore& member, std::error_code error, const std::string& message) {
  std::string text = error.message();
  std::string detail = message;
  std::string prefix = member.message("");
  if (detail.rfind(prefix, 0) == 0) detail.erase(0, prefix.size());
  if (!detail.empty() && detail.find(text) == std::string::npos) text += " (" + detail + ")";
  return text;
}

CompositeCore::CompositeCore(std::vector<std::shared_ptr<LockCore>> members, std::string kind)
    : members_(std::move(members)), kind_(std::move(kind)) {
  name_ = "{";
  for (std::size_t i = 0; i < members_.size(); ++i) {
    auto& core = *members_[i];
    descriptions_.push_back(fmt::format("'{}' on {}", core.name(), core.client().topology().describe(core.name())));
    if (i != 0) name_ += ", ";
    name_ += descriptions_.back();
    longest_command_timeout_ = std::max(longest_command_timeout_, core.client().config().command_timeout);
  }
  name_ += "}";
}

CompositeCore::~CompositeCore() {
  try {
    for (auto& [owner, hold] : holds_) remove_listeners(hold.listeners);
  } catch (...) {
    // A destructor must not throw; a listener left behind finds this core gone.
  }
}

std::string CompositeCore::message(std::string_view what) const {
  return fmt::format("warden: {} {}: {}", kind_, name_, what);
}

std::string CompositeCore::per_member(const std::vector<std::string>& causes) const {
  std::string text;
  for (std::size_t i = 0; i < causes.size() && i < size(); ++i) {
    if (causes[i].empty()) continue;
    if (!text.empty()) text += "; ";
    text += describe(i) + ": " + causes[i];
  }
  return text;
}

milliseconds CompositeCore::member_lease(std::size_t i, std::optional<milliseconds> lease) const {
  return lease.value_or(member(i)->client().config().lock_watchdog_timeout);
}

milliseconds CompositeCore::effective_lease(std::optional<milliseconds> lease) const {
  if (lease) return *lease;
  milliseconds shortest = milliseconds::max();
  for (std::size_t i = 0; i < size(); ++i) shortest = std::min(shortest, member_lease(i, std::nullopt));
  return shortest;
}

void CompositeCore::check_blocking(std::string_view call) const {
  for (auto& lock : members_) {
    if (lock->client().loop().in_loop_thread()) {
      throw Error(errc::would_deadlock,
                  message(std::string(call) + " blocks, and was called on the I/O thread of a member's client "
                                              "(inside a callback); use the _async form there"));
    }
  }
}

void CompositeCore::log(log_level level, const std::string& text) const { member(0)->client().log(level, text); }

bool CompositeCore::Hold::member_held(std::size_t i) const {
  return std::any_of(levels.begin(), levels.end(), [i](const Level& level) { return level.taken[i]; });
}

std::optional<Error> CompositeCore::bad_input(thread_id owner, std::optional<milliseconds> wait,
                                              std::optional<milliseconds> lease) const {
  if (owner == 0)
    return Error(errc::invalid_argument, message("owner thread id 0 is not a thread id warden hands out"));
  if (wait && wait->count() < 0) {
    return Error(errc::invalid_argument,
                 message(fmt::format("the wait time must not be negative, got {} ms", wait->count())));
  }
  if (auto problem = lease_problem(lease)) {
    return Error(errc::invalid_argument, message(*problem));
  }
  return std::nullopt;
}

void CompositeCore::deliver_early(std::function<void()> task) const {
  // Early failures reach callbacks on an I/O thread too, like every other outcome.
  run_on(member(0), task, task);
}

std::uint64_t CompositeCore::keep(thread_id owner, const std::vector<bool>& taken, const std::vector<bool>& owed,
                                  std::optional<milliseconds> lease) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto [it, fresh] = holds_.try_emplace(owner);
  Hold& hold = it->second;
  if (fresh) {
    hold.generation = next_generation_++;
    hold.lease = lease;
    hold.retaking.assign(size(), false);
    add_listeners(owner, hold);
  }
  auto id = next_level_++;
  hold.levels.push_back(Hold::Level{id, taken, owed});
  kept(owner, hold, fresh);
  return id;
}

void CompositeCore::kept(thread_id, Hold& hold, bool) { hold.lost = !holds_enough(hold); }

std::vector<int> CompositeCore::drop_members(Hold& hold) {
  std::vector<int> counts(hold.levels.empty() ? 0 : hold.levels.front().taken.size());
  for (auto& level : hold.levels) {
    for (std::size_t i = 0; i < level.taken.size() && i < counts.size(); ++i) {
      counts[i] += level.taken[i] ? 1 : 0;
      level.taken[i] = false;
    }
  }
  return counts;
}

void CompositeCore::release_dropped(thread_id owner, const std::vector<int>& counts) const {
  for (std::size_t i = 0; i < counts.size() && i < size(); ++i) {
    if (counts[i] == 0) continue;
    auto lock = member(i);
    auto times = counts[i];
    run_on(
        lock,
        [lock, owner, times] {
          for (int n = 0; n < times; ++n) release_unwanted(lock, owner);
        },
        [] {});
  }
}

void CompositeCore::late_answer(thread_id owner, std::uint64_t level, std::size_t member, bool acquired) {
  bool unwanted = acquired;
  bool lost = false;
  std::function<void(std::vector<bool>)> release;
  std::vector<bool> taken;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    Hold::Level* found = nullptr;
    auto closing = closing_.find(level);
    if (closing != closing_.end()) {
      found = &closing->second.level;
    } else if (auto it = holds_.find(owner); it != holds_.end()) {
      for (auto& l : it->second.levels) {
        if (l.id == level) found = &l;
      }
      lost = it->second.lost;
    }
    if (found != nullptr) {
      found->owed[member] = false;
      // A hold that is lost takes nothing more: it has let go of its members.
      if (acquired && !found->taken[member] && !lost) {
        found->taken[member] = true;
        unwanted = false;
      }
      if (closing != closing_.end() &&
          std::none_of(found->owed.begin(), found->owed.end(), [](bool owed) { return owed; })) {
        release = std::move(closing->second.release);
        taken = found->taken;
        closing_.erase(closing);
      }
    }
  }
  if (unwanted) {
    auto lock = this->member(member);
    run_on(
        lock, [lock, owner] { release_unwanted(lock, owner); }, [] {});
  }
  if (release) release(std::move(taken));
}

void CompositeCore::add_listeners(thread_id owner, Hold& hold) {
  std::weak_ptr<CompositeCore> weak = shared_from_this();
  auto generation = hold.generation;
  for (std::size_t i = 0; i < size(); ++i) {
    hold.listeners.push_back(member(i)->add_lost_listener([weak, owner, generation, i](const LockLost& event) {
      if (event.owner != owner) return;
      if (auto core = weak.lock()) core->member_lost(owner, generation, i, event);
    }));
  }
}

void CompositeCore::remove_listeners(const std::vector<std::uint64_t>& tokens) const {
  for (std::size_t i = 0; i < tokens.size() && i < size(); ++i) member(i)->remove_lost_listener(tokens[i]);
}

std::uint64_t CompositeCore::add_lost_listener(std::function<void(const LockLost&)> listener) {
  return lost_listeners_.add(std::move(listener));
}

void CompositeCore::remove_lost_listener(std::uint64_t token) { lost_listeners_.remove(token); }

void CompositeCore::fire_lost(const LockLost& event) const {
  log(log_level::warning, event.message);
  lost_listeners_.notify(event, [this](log_level level, const std::string& text) { log(level, text); });
}
std::future<bool> CompositeCore::is_locked() {
  auto promise = std::make_shared<std::promise<bool>>();
  auto future = promise->get_future();
  is_locked([promise](std::optional<Error> error, bool locked) {
    if (error) return fail(promise, *error);
    promise->set_value(locked);
  });
  return future;
}

void CompositeCore::is_locked(acquire_done done) {
  auto self = shared_from_this();
  auto gather =
      std::make_shared<Gather<MemberAnswer>>(size(), nullptr, [self, done](Gather<MemberAnswer>::slots slots) {
        std::optional<Error> failure;
        bool locked = false;
        try {
          locked = self->locked(present<MemberAnswer>(slots));
        } catch (const Error& error) {
          failure = error;
        } catch (const std::exception& error) {
          failure = Error(errc::server_error, self->message(error.what()));
        }
        done(failure, locked);
      });
  for (std::size_t i = 0; i < size(); ++i) {
    auto member = this->member(i);
    run_on(
        member,
        [gather, i, member] {
          // The member's own inspection: a key that is not a lock of its kind
          // is a typed error, as for Lock::is_locked().
          member->inspect(current_thread_id(),
                          [gather, i, member](std::error_code error, Inspection state, const std::string& text) {
                            gather->report(i, MemberAnswer{i, error, !error && state.pttl != -2,
                                                           error ? member_cause(*member, error, text) : ""});
                          });
        },
        [gather, i] {
          gather->report(i, MemberAnswer{i, make_error_code(errc::shut_down), false, "client shut down"});
        });
  }
}

clock::time_point CompositeCore::valid_until(thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find(owner);
  if (it == holds_.end() || it->second.lost) return no_hold_until;
  // A policy may judge with time_point::min() (a RedLock whose majority
  // lapsed); callers get a value they can subtract from now.
  return std::max(hold_valid_until(it->second, owner), no_hold_until);
}

}  // namespace warden::detail
