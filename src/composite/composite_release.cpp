// Unlocking a MultiLock or RedLock: the owner's latest level leaves the book,
// the answers its round was still owed are awaited, and the members it took
// are released; unlock_blocking is the public unlock() on top of it.
#include "composite/composite_core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <utility>

#include "composite/fan_out.hpp"
#include "lock/lock_host.hpp"

namespace warden::detail {

namespace {

template <class T>
void fail(const std::shared_ptr<std::promise<T>>& promise, const Error& error) {
  promise->set_exception(std::make_exception_ptr(error));
}

}  // namespace

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
          if (member->link_problem()) self->late_answer(owner, level_id, i, false);
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

}  // namespace warden::detail
