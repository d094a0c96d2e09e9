#include "composite/composite_core.hpp"

#include "lock/limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <random>

#include "io/backoff.hpp"
#include "topology/client_core.hpp"
#include "composite/fan_out.hpp"
#include "lock/limits.hpp"
#include "topology/node.hpp"

namespace warden::detail {

using std::chrono::milliseconds;

namespace {

// Each attempt of a MultiLock lets its members wait a randomly drawn share of
// this, growing per attempt: the caller whose share ends first lets go, so
// crossed orders resolve within one attempt instead of deadlocking.
constexpr milliseconds attempt_wait_min{20};
constexpr milliseconds attempt_wait_max{400};
// The pause between a failed round and the next one, also jittered.
constexpr milliseconds retry_pause_min{10};
constexpr milliseconds retry_pause_max{200};
// Waits longer than this are "for ever" (and keep the deadline from overflowing).
constexpr milliseconds forever{std::chrono::hours(24 * 365 * 100)};

milliseconds since(clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(clock::now() - start);
}

std::uint64_t random_seed() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

template <class Outcome>
std::vector<Outcome> present(const typename Gather<Outcome>::slots& slots) {
  std::vector<Outcome> result;
  for (auto& slot : slots) {
    if (slot) result.push_back(*slot);
  }
  return result;
}

std::vector<vote> kinds(const Gather<MemberVote>::slots& slots) {
  std::vector<vote> result;
  result.reserve(slots.size());
  for (auto& slot : slots) result.push_back(slot ? slot->kind : vote::pending);
  return result;
}

std::vector<vote> kinds(const std::vector<MemberVote>& votes) {
  std::vector<vote> result;
  result.reserve(votes.size());
  for (auto& v : votes) result.push_back(v.kind);
  return result;
}

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

std::error_code unlock_blocking(CompositeCore& core, bool wait_on_loop_thread_fails) noexcept {
  try {
    bool on_loop = false;
    try {
      core.check_blocking("unlock()");
    } catch (const Error& error) {
      if (wait_on_loop_thread_fails) {
        core.log(log_level::error, error.what());
        return error.code();
      }
      on_loop = true;
    }
    if (on_loop) {
      // Nobody may wait here: the failure goes to the logger (and, for a hold
      // believed good, to the listeners).
      core.release(current_thread_id(), [keep = core.shared_from_this()](std::optional<Error> error) {
        if (error) keep->log(log_level::error, error->what());
      });
      return {};
    }
    // The outcome crosses threads as plain values: no exception object (nor
    // its reference-counted text) is shared with the I/O thread.
    auto promise = std::make_shared<std::promise<std::pair<std::error_code, std::string>>>();
    auto done = promise->get_future();
    core.release(current_thread_id(), [promise](std::optional<Error> error) {
      if (!error) return promise->set_value({});
      promise->set_value({error->code(), std::string(error->what())});
    });
    auto [code, text] = done.get();
    if (code) core.log(log_level::error, text);
    return code;
  } catch (const std::exception& error) {
    try {
      core.log(log_level::error, core.message(std::string("unlock failed: ") + error.what()));
    } catch (...) {
    }
  } catch (...) {
  }
  return make_error_code(errc::server_error);
}

// ---- one acquire call: rounds until held, out of time, or failed ----

// Answers that arrive after their round was settled (RedLock settles as
// soon as the votes decide it; a MultiLock at its first failure). A round
// settled as acquired hands them to its level: the other nodes are worth
// holding too, and an unlock waits for them. A failed round releases what it
// took and any late hold among the answers it was owed, and continues only
// then, so that a failed call leaves no key behind on a node that answered.
class Round : public std::enable_shared_from_this<Round> {
 public:
  Round(std::shared_ptr<CompositeCore> core, thread_id owner) : core_(std::move(core)), owner_(owner) {}

  // From member i's I/O thread: its acquire answered, or its budget ran out
  // (acquired = false), after the round was settled.
  void late(std::size_t i, bool acquired) {
    std::optional<std::uint64_t> level;
    bool counted = false;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      switch (state_) {
        case state::open:
          late_.emplace_back(i, acquired);
          return;
        case state::kept:
          level = level_;
          break;
        case state::failing:
          counted = owed_[i];
          owed_[i] = false;
          break;
        case state::failed:
          break;
      }
    }
    if (level) return core_->late_answer(owner_, *level, i, acquired);
    if (acquired) return release(i, counted);
    if (counted) count_down();
  }

  void kept(std::uint64_t level) {
    std::vector<std::pair<std::size_t, bool>> late;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      state_ = state::kept;
      level_ = level;
      late.swap(late_);
    }
    for (auto [i, acquired] : late) core_->late_answer(owner_, level, i, acquired);
  }

  // The round failed: releases `taken` and every hold among the `owed`
  // answers, then runs `next`.
  void fail(const std::vector<bool>& taken, std::vector<bool> owed, std::function<void()> next) {
    std::vector<std::pair<std::size_t, bool>> late;
    std::vector<std::size_t> awaited;
    for (std::size_t i = 0; i < owed.size(); ++i) {
      if (owed[i]) awaited.push_back(i);
    }
    {
      std::lock_guard<std::mutex> guard(mutex_);
      state_ = state::failing;
      next_ = std::move(next);
      owed_ = std::move(owed);
      outstanding_ = 1;  // this call's own share, counted down below
      for (bool t : taken) outstanding_ += t ? 1 : 0;
      for (bool o : owed_) outstanding_ += o ? 1 : 0;
      late.swap(late_);
    }
    for (std::size_t i = 0; i < taken.size(); ++i) {
      if (taken[i]) release(i, true);
    }
    for (auto [i, acquired] : late) this->late(i, acquired);
    // A node that is not connected has not received its acquire: nothing to
    // wait for (should it run after a reconnect, its hold is released then).
    auto self = shared_from_this();
    for (auto i : awaited) {
      auto member = core_->member(i);
      run_on(
          member,
          [self, member, i] {
            if (!member->node().commands().ready()) self->stop_waiting(i);
          },
          [self, i] { self->stop_waiting(i); });
    }
    count_down();
  }

 private:
  enum class state { open, kept, failing, failed };

  void release(std::size_t i, bool counted) {
    auto member = core_->member(i);
    auto owner = owner_;
    auto self = counted ? shared_from_this() : nullptr;
    run_on(
        member,
        [member, owner, self] {
          member->release(owner, [member, self](std::error_code error, const std::string& message) {
            if (error) {
              member->client().log(log_level::warning,
                                   message + " (releasing after a failed round; it expires with its lease)");
            }
            if (self) self->count_down();
          });
        },
        [self] {
          if (self) self->count_down();
        });
  }

  void stop_waiting(std::size_t i) {
    bool counted = false;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      counted = state_ == state::failing && owed_[i];
      if (counted) owed_[i] = false;
    }
    if (counted) count_down();
  }

  void count_down() {
    std::function<void()> next;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (--outstanding_ > 0) return;
      state_ = state::failed;
      next = std::move(next_);
    }
    if (next) next();
  }

  std::shared_ptr<CompositeCore> core_;
  thread_id owner_;
  std::mutex mutex_;
  state state_ = state::open;
  std::optional<std::uint64_t> level_;
  std::vector<std::pair<std::size_t, bool>> late_;  // answers while open
  std::vector<bool> owed_;                           // failing: answers still awaited
  std::size_t outstanding_ = 0;                      // failing: releases and answers awaited
  std::function<void()> next_;
};

class CompositeAcquire : public std::enable_shared_from_this<CompositeAcquire> {
 public:
  using done_fn = std::function<void(std::optional<Error>, bool acquired)>;

  CompositeAcquire(std::shared_ptr<CompositeCore> core, thread_id owner, std::optional<milliseconds> wait,
                   std::optional<milliseconds> lease, done_fn done, cancel_token cancel)
      : core_(std::move(core)),
        owner_(owner),
        lease_(lease),
        done_(std::move(done)),
        cancel_(std::move(cancel)),
        member_waits_(attempt_wait_min, attempt_wait_max, random_seed()),
        pauses_(retry_pause_min, retry_pause_max, random_seed()) {
    if (wait && *wait < forever) deadline_ = clock::now() + *wait;
  }

  void start() { attempt(); }

 private:
  milliseconds remaining() const {
    if (!deadline_) return forever;
    auto left = std::chrono::ceil<milliseconds>(*deadline_ - clock::now());
    return std::max(left, milliseconds{0});
  }

  bool may_retry() const { return !deadline_ || clock::now() < *deadline_; }

  // Checked before each round and after each failed one: the members' own
  // waits end on the token at once, and a pause between rounds is short.
  bool finished_by_cancel() {
    if (!cancel_.cancelled()) return false;
    finish(Error(errc::cancelled, core_->message("the wait was cancelled")), false);
    return true;
  }

  void attempt() {
    if (finished_by_cancel()) return;
    auto started = clock::now();
    milliseconds member_wait{0};
    if (core_->members_wait()) member_wait = std::min(member_waits_.delay(attempts_), remaining());
    ++attempts_;
    auto attempt_lease = core_->attempt_lease(lease_, member_wait);
    auto validity_lease = core_->effective_lease(lease_);
    auto core = core_;
    auto self = shared_from_this();
    auto round = std::make_shared<Round>(core_, owner_);
    auto gather = std::make_shared<Gather<MemberVote>>(
        core_->size(),
        [core, validity_lease, started](const Gather<MemberVote>::slots& slots) {
          return core->judge(kinds(slots), validity_lease, since(started)) != verdict::undecided;
        },
        [self, round, started, attempt_lease](Gather<MemberVote>::slots slots) {
          self->voted(std::move(slots), round, started, attempt_lease);
        });
    for (std::size_t i = 0; i < core_->size(); ++i) ask(gather, round, i, member_wait, attempt_lease);
  }

  // Member i's vote: its acquire's outcome, or a failure when it does not
  // answer within its budget. What arrives after the round was settled, or
  // after its budget ran out, goes to the Round.
  void ask(const std::shared_ptr<Gather<MemberVote>>& gather, const std::shared_ptr<Round>& round, std::size_t i,
           milliseconds member_wait, std::optional<milliseconds> attempt_lease) {
    auto member = core_->member(i);
    auto owner = owner_;
    auto budget = core_->member_budget(i, member_wait, lease_);
    auto cancel = cancel_;
    run_on(
        member,
        [gather, round, i, member, owner, member_wait, attempt_lease, budget, cancel] {
          auto& loop = member->client().loop();
          // Both only ever touched on this member's I/O thread.
          auto timer = std::make_shared<TimerQueue::id>(0);
          auto answered = std::make_shared<bool>(false);
          member->acquire(owner, member_wait, attempt_lease,
                          [gather, round, i, member, timer, answered, &loop](std::error_code error, bool acquired,
                                                                             const std::string& message) {
                            *answered = true;
                            loop.cancel(*timer);
                            MemberVote v;
                            if (acquired) {
                              v.kind = vote::yes;
                            } else if (error) {
                              v = MemberVote{vote::failed, error, member_cause(*member, error, message)};
                            } else {
                              v = MemberVote{vote::busy, {}, "taken by another owner"};
                            }
                            if (!gather->report(i, std::move(v))) round->late(i, acquired);
                          },
                          cancel);
          if (*answered) return;  // answered at once (e.g. its client is shutting down)
          *timer = loop.after(budget, [gather, round, i, member, budget] {
            // A node that is down shows as what its connection last failed with.
            auto& connection = member->node().commands();
            std::error_code why = connection.ready() ? make_error_code(errc::timed_out) : connection.pending_error();
            MemberVote v{vote::failed, why,
                         fmt::format("{} (no answer within its {} ms budget)", why.message(), budget.count())};
            if (!gather->report(i, std::move(v))) round->late(i, false);
          });
        },
        [gather, i] {
          gather->report(i, MemberVote{vote::failed, make_error_code(errc::shut_down), "client shut down"});
        });
  }

  void voted(Gather<MemberVote>::slots slots, const std::shared_ptr<Round>& round, clock::time_point started,
             std::optional<milliseconds> attempt_lease) {
    auto elapsed = since(started);
    std::vector<MemberVote> votes;
    votes.reserve(slots.size());
    for (auto& slot : slots) votes.push_back(slot ? *slot : MemberVote{vote::pending, {}, "no answer yet"});
    auto outcome = core_->judge(kinds(votes), core_->effective_lease(lease_), elapsed);
    std::vector<bool> taken(votes.size());
    std::vector<bool> owed(votes.size());
    for (std::size_t i = 0; i < votes.size(); ++i) {
      taken[i] = votes[i].kind == vote::yes;
      owed[i] = votes[i].kind == vote::pending;
    }
    auto self = shared_from_this();
    if (outcome == verdict::acquired) {
      if (lease_ && attempt_lease != lease_) return apply_lease(taken, owed, round);
      round->kept(core_->keep(owner_, taken, owed, lease_));
      return finish(std::nullopt, true);
    }
    round->fail(taken, owed, [self, votes, outcome, elapsed] { self->after_failed_round(votes, outcome, elapsed); });
  }

  void after_failed_round(const std::vector<MemberVote>& votes, verdict outcome, milliseconds elapsed) {
    if (finished_by_cancel()) return;
    if (outcome != verdict::unreachable && may_retry()) return pause();
    finish(core_->round_failure(votes, outcome, elapsed), false);
  }

  void pause() {
    auto delay = std::min(pauses_.delay(attempts_ - 1), remaining());
    auto self = shared_from_this();
    schedule_on(
        core_->member(0)->client(), delay, [self] { self->attempt(); },
        [self] {
          self->finish(Error(errc::shut_down, self->core_->message("the client of the first member shut down")),
                       false);
        });
  }

  // All members are held with the attempt's longer lease: give them the
  // caller's, from now on, so that they expire together.
  void apply_lease(const std::vector<bool>& taken, const std::vector<bool>& owed, const std::shared_ptr<Round>& round) {
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < taken.size(); ++i) {
      if (taken[i]) which.push_back(i);
    }
    auto self = shared_from_this();
    auto gather = std::make_shared<Gather<MemberAnswer>>(
        which.size(), nullptr, [self, taken, owed, round](Gather<MemberAnswer>::slots slots) {
          auto answers = present<MemberAnswer>(slots);
          auto error = std::find_if(answers.begin(), answers.end(), [](auto& a) { return bool(a.error); });
          auto gone = std::find_if(answers.begin(), answers.end(), [](auto& a) { return !a.error && !a.value; });
          if (error == answers.end() && gone == answers.end()) {
            round->kept(self->core_->keep(self->owner_, taken, owed, self->lease_));
            return self->finish(std::nullopt, true);
          }
          std::optional<Error> failure;
          if (error != answers.end()) {
            failure = Error(error->error, self->core_->message(fmt::format("setting the lease of {} failed: {}",
                                                                            self->core_->describe(error->member),
                                                                            error->cause)));
          }
          round->fail(taken, owed, [self, failure] {
            // A member lost between its acquire and its new lease: try again.
            if (self->finished_by_cancel()) return;
            if (!failure && self->may_retry()) return self->pause();
            self->finish(failure, false);
          });
        });
    auto owner = owner_;
    auto lease = *lease_;
    for (std::size_t k = 0; k < which.size(); ++k) {
      auto i = which[k];
      auto member = core_->member(i);
      run_on(
          member,
          [gather, k, i, member, owner, lease] {
            member->set_lease(owner, lease, [gather, k, i, member](std::error_code error, bool held) {
              gather->report(k, MemberAnswer{i, error, held, error ? member_cause(*member, error, "") : ""});
            });
          },
          [gather, k, i] { gather->report(k, MemberAnswer{i, make_error_code(errc::shut_down), false, "client shut down"}); });
    }
  }

  void finish(std::optional<Error> error, bool acquired) {
    if (finished_) return;
    finished_ = true;
    auto done = std::move(done_);
    done(std::move(error), acquired);
  }

  std::shared_ptr<CompositeCore> core_;
  thread_id owner_;
  std::optional<milliseconds> lease_;
  done_fn done_;
  cancel_token cancel_;
  std::optional<clock::time_point> deadline_;
  Backoff member_waits_;
  Backoff pauses_;
  int attempts_ = 0;
  bool finished_ = false;
};

// ---- CompositeCore ----

CompositeCore::CompositeCore(std::vector<Lock> members, std::string kind)
    : members_(std::move(members)), kind_(std::move(kind)) {
  name_ = "{";
  for (std::size_t i = 0; i < members_.size(); ++i) {
    auto& core = *members_[i].core();
    descriptions_.push_back(fmt::format("'{}' on {}", core.name(), core.node().server()));
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
    if (lock.core()->client().loop().in_loop_thread()) {
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
  if (owner == 0) return Error(errc::invalid_argument, message("owner thread id 0 is not a thread id warden hands out"));
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

void CompositeCore::try_acquire(thread_id owner, std::optional<milliseconds> wait, std::optional<milliseconds> lease,
                                acquire_done done, cancel_token cancel) {
  if (auto problem = bad_input(owner, wait, lease)) {
    return deliver_early([done = std::move(done), error = *problem] { done(error, false); });
  }
  std::make_shared<CompositeAcquire>(shared_from_this(), owner, wait, lease, std::move(done), std::move(cancel))
      ->start();
}

std::future<bool> CompositeCore::try_acquire(thread_id owner, std::optional<milliseconds> wait,
                                             std::optional<milliseconds> lease) {
  auto promise = std::make_shared<std::promise<bool>>();
  auto future = promise->get_future();
  try_acquire(owner, wait, lease, [promise](std::optional<Error> error, bool acquired) {
    if (error) return fail(promise, *error);
    promise->set_value(acquired);
  });
  return future;
}

std::future<void> CompositeCore::acquire(thread_id owner, std::optional<milliseconds> lease, cancel_token cancel) {
  auto promise = std::make_shared<std::promise<void>>();
  auto future = promise->get_future();
  try_acquire(
      owner, std::nullopt, lease,
      [promise](std::optional<Error> error, bool /*acquired*/) {
        // A wait without end finishes held or with an error.
        if (error) return fail(promise, *error);
        promise->set_value();
      },
      std::move(cancel));
  return future;
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
    run_on(lock, [lock, owner] { release_unwanted(lock, owner); }, [] {});
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

std::future<void> CompositeCore::release(thread_id owner) {
  auto promise = std::make_shared<std::promise<void>>();
  auto future = promise->get_future();
  release(owner, [promise](std::optional<Error> error) {
    if (error) return fail(promise, *error);
    promise->set_value();
  });
  return future;
}

void CompositeCore::release(thread_id owner, release_done done) {
  if (owner == 0) {
    Error error(errc::invalid_argument, message("owner thread id 0 is not a thread id warden hands out"));
    return deliver_early([done = std::move(done), error] { done(error); });
  }
  auto self = shared_from_this();
  std::vector<bool> taken;
  std::vector<bool> owed;
  std::uint64_t level_id = 0;
  std::vector<std::uint64_t> tokens;
  bool waiting = false;
  bool was_lost = false;
  std::optional<LockLost> lapse;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = holds_.find(owner);
    if (it == holds_.end()) {
      Error error(errc::not_owner, message(fmt::format("not held by thread {}", owner)));
      return deliver_early([done = std::move(done), error] { done(error); });
    }
    Hold& hold = it->second;
    if (!hold.lost) {
      lapse = lapsed(hold, owner);
      hold.lost = lapse.has_value();
    }
    Hold::Level level = std::move(hold.levels.back());
    hold.levels.pop_back();
    was_lost = hold.lost;
    if (hold.levels.empty()) {
      tokens = std::move(hold.listeners);
      holds_.erase(it);
    }
    // Answers the level's round was still owed are on their way (each within
    // its node's budget): wait for them, so that the unlock leaves nothing
    // behind on a node that answers.
    waiting = std::any_of(level.owed.begin(), level.owed.end(), [](bool owed) { return owed; });
    if (waiting) {
      auto id = level.id;
      level_id = id;
      owed = level.owed;
      closing_.emplace(id, Closing{owner, std::move(level), [self, owner, was_lost, done](std::vector<bool> taken) {
                                     self->release_members(owner, taken, was_lost, done);
                                   }});
    } else {
      taken = std::move(level.taken);
    }
  }
  remove_listeners(tokens);
  if (lapse) {
    // The listeners hear of it on an I/O thread, as of any other loss.
    auto lock = member(0);
    auto fire = [self, event = *lapse] { self->fire_lost(event); };
    run_on(lock, fire, fire);
  }
  if (!waiting) return release_members(owner, taken, was_lost, done);
  // A node that is not connected has not even received its acquire: nothing
  // to wait for. Should it run after a reconnect, its hold is released then.
  for (std::size_t i = 0; i < owed.size(); ++i) {
    if (!owed[i]) continue;
    auto member = this->member(i);
    run_on(
        member,
        [self, member, owner, level_id, i] {
          if (!member->node().commands().ready()) self->late_answer(owner, level_id, i, false);
        },
        [self, owner, level_id, i] { self->late_answer(owner, level_id, i, false); });
  }
}

void CompositeCore::release_members(thread_id owner, const std::vector<bool>& taken, bool was_lost,
                                    const release_done& done) {
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < taken.size(); ++i) {
    if (taken[i]) which.push_back(i);
  }
  auto self = shared_from_this();
  auto gather = std::make_shared<Gather<MemberAnswer>>(
      which.size(), nullptr, [self, done, owner, was_lost](Gather<MemberAnswer>::slots slots) {
        auto error = self->release_failure(present<MemberAnswer>(slots), was_lost);
        // A hold not reported lost yet: its failed release is news to the listeners.
        if (error && !was_lost) self->fire_lost(LockLost{self->name_, owner, error->code(), error->what()});
        done(error);
      });
  for (std::size_t k = 0; k < which.size(); ++k) {
    auto i = which[k];
    auto member = this->member(i);
    run_on(
        member,
        [gather, k, i, member, owner] {
          member->release(owner, [gather, k, i, member](std::error_code error, const std::string& text) {
            gather->report(k, MemberAnswer{i, error, !error, error ? member_cause(*member, error, text) : ""});
          });
        },
        [gather, k, i] {
          gather->report(k, MemberAnswer{i, make_error_code(errc::shut_down), false, "client shut down"});
        });
  }
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
  auto gather = std::make_shared<Gather<MemberAnswer>>(size(), nullptr, [self, done](Gather<MemberAnswer>::slots slots) {
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
          member->inspect(current_thread_id(), [gather, i, member](std::error_code error, Inspection state,
                                                                   const std::string& text) {
            gather->report(i, MemberAnswer{i, error, !error && state.pttl != -2,
                                           error ? member_cause(*member, error, text) : ""});
          });
        },
        [gather, i] { gather->report(i, MemberAnswer{i, make_error_code(errc::shut_down), false, "client shut down"}); });
  }
}

clock::time_point CompositeCore::valid_until(thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = holds_.find(owner);
  if (it == holds_.end() || it->second.lost) return clock::time_point::min();
  return hold_valid_until(it->second, owner);
}

}  // namespace warden::detail
