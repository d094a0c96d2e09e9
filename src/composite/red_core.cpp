#include "composite/red_core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>

#include <warden/error.hpp>

#include "composite/fan_out.hpp"
#include "lock/lock_host.hpp"

namespace warden::detail {

namespace {

class RedCore final : public CompositeCore {
 public:
  explicit RedCore(std::vector<std::shared_ptr<LockCore>> members) : CompositeCore(std::move(members), "red lock") {}

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
      what = fmt::format(
          "quorum not reached in time: {} of {} nodes acquired, but only after {} ms, which leaves no "
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
    // A hold found lost stays lost, whatever its unlock finds.
    if (released >= quorum() && !was_lost) return std::nullopt;
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
      case quorum_answer::yes:
        return true;
      case quorum_answer::no:
        return false;
      case quorum_answer::unknown:
        break;
    }
    throw Error(errc::quorum_not_reached,
                message(fmt::format("is_locked() undecided: {} of {} nodes locked, {} needed, {} unreachable: {}", yes,
                                    size(), quorum(), failed, per_member(causes))));
  }

 protected:
  // A node's hold is gone from its server. While a majority is still
  // confirmed valid, a watchdog-mode hold takes the node back (a node
  // restarted empty gets the key again); once it is not, the lock is lost for
  // good, and the nodes it still has are let go.
  void member_lost(thread_id owner, std::uint64_t generation, std::size_t i, const LockLost& event) override {
    std::optional<LockLost> lost;
    std::vector<int> dropped;
    bool retake = false;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      Hold* hold = find(owner, generation);
      if (hold == nullptr || !hold->member_held(i)) return;
      if (hold->lost) {
        for (auto& level : hold->levels) level.taken[i] = false;
        return;
      }
      // Confirmations before this loss count; what the node vouched for does not.
      auto now = clock::now();
      refresh(*hold, owner, now);
      for (auto& level : hold->levels) level.taken[i] = false;
      hold->validity.on(QuorumValidity::node_lost{i, now});
      if (hold->validity.lost()) {
        lost =
            LockLost{event.lock_name, owner, event.cause,
                     message(fmt::format("lost: {} of {} nodes confirmed valid, {} needed; {} lost: {}",
                                         hold->validity.valid_at(now), size(), quorum(), describe(i), event.message))};
        hold->lost = true;
        dropped = drop_members(*hold);
      } else {
        watch(owner, *hold);  // the majority may now end earlier
        if (!hold->lease && !hold->retaking[i]) {
          hold->retaking[i] = true;
          retake = true;
        }
      }
    }
    if (lost) {
      release_dropped(owner, dropped);
      fire_lost(*lost);
    }
    if (retake) take_back(owner, generation, i);
  }

  bool holds_enough(const Hold& hold) const override { return !hold.validity.lost(); }

  void kept(thread_id owner, Hold& hold, bool fresh) override {
    auto now = clock::now();
    if (fresh) {
      hold.validity = QuorumValidity(size());
      for (std::size_t i = 0; i < size(); ++i) {
        if (!hold.member_held(i)) continue;
        auto seen = member(i)->client().holds().confirmed(*member(i), owner);
        if (seen.at == clock::time_point::min()) continue;
        hold.validity.on(QuorumValidity::taken{i, seen.valid_until - clock_drift(member_lease(i, hold.lease))});
      }
      hold.validity.on(QuorumValidity::time_passed{now});
      hold.lost = hold.validity.lost();
    } else {
      refresh(hold, owner, now);
    }
    watch(owner, hold);
  }

  std::optional<LockLost> lapsed(const Hold& hold, thread_id owner) const override {
    refresh(hold, owner, clock::now());
    if (!hold.validity.lost()) return std::nullopt;
    return lapse_event(owner);
  }

  clock::time_point hold_valid_until(const Hold& hold, thread_id owner) const override {
    refresh(hold, owner, clock::now());
    return hold.validity.valid_until();
  }

 private:
  Hold* find(thread_id owner, std::uint64_t generation) {
    auto it = holds_.find(owner);
    if (it == holds_.end() || it->second.generation != generation) return nullptr;
    return &it->second;
  }

  // Feeds what the nodes' books of holds recorded as confirmed (acquires, renewals, re-takes)
  // into the hold's validity in the order it arrived, then judges the hold at
  // `now`. Under mutex_.
  void refresh(const Hold& hold, thread_id owner, clock::time_point now) const {
    struct seen {
      clock::time_point at;
      clock::time_point until;
      std::size_t node;
    };
    std::vector<seen> confirmations;
    for (std::size_t i = 0; i < size(); ++i) {
      if (!hold.member_held(i)) continue;
      auto c = member(i)->client().holds().confirmed(*member(i), owner);
      if (c.at == clock::time_point::min()) continue;
      confirmations.push_back(seen{c.at, c.valid_until - clock_drift(member_lease(i, hold.lease)), i});
    }
    std::sort(confirmations.begin(), confirmations.end(), [](auto& a, auto& b) { return a.at < b.at; });
    for (auto& c : confirmations) hold.validity.on(QuorumValidity::confirmed{c.node, c.at, c.until});
    hold.validity.on(QuorumValidity::time_passed{now});
  }

  LockLost lapse_event(thread_id owner) const {
    return LockLost{member(0)->name_key(), owner, make_error_code(errc::lease_expired),
                    message(fmt::format("lost: no majority of the nodes ({} of {}) was confirmed valid any more "
                                        "(renewals missing or late)",
                                        quorum(), size()))};
  }

  // Checks the hold again when its majority's validity runs out, unless
  // renewals have moved it on by then: a hold whose nodes stop answering is
  // reported lost at that time, not once each node's own loss is noticed.
  // Under mutex_.
  void watch(thread_id owner, Hold& hold) {
    if (hold.lost) return;
    auto deadline = hold.validity.valid_until();
    if (deadline == clock::time_point::min()) return;
    auto check = ++hold.check;
    auto generation = hold.generation;
    auto delay = std::chrono::ceil<milliseconds>(deadline - clock::now()) + milliseconds{1};
    std::weak_ptr<CompositeCore> weak = shared_from_this();
    schedule_on(
        member(0)->client(), std::max(delay, milliseconds{1}),
        [weak, owner, generation, check] {
          if (auto core = std::static_pointer_cast<RedCore>(weak.lock())) core->check_lapse(owner, generation, check);
        },
        [] {});
  }

  void check_lapse(thread_id owner, std::uint64_t generation, std::uint64_t check) {
    std::optional<LockLost> lost;
    std::vector<int> dropped;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      Hold* hold = find(owner, generation);
      if (hold == nullptr || hold->lost || hold->check != check) return;
      refresh(*hold, owner, clock::now());
      if (!hold->validity.lost()) return watch(owner, *hold);
      hold->lost = true;
      lost = lapse_event(owner);
      dropped = drop_members(*hold);
    }
    release_dropped(owner, dropped);
    fire_lost(*lost);
  }

  void take_back(thread_id owner, std::uint64_t generation, std::size_t i) {
    auto member = this->member(i);
    std::weak_ptr<CompositeCore> weak = shared_from_this();
    run_on(
        member,
        [weak, member, owner, generation, i] {
          member->acquire(
              owner, milliseconds{0}, std::nullopt,
              [weak, member, owner, generation, i](std::error_code error, bool acquired, const std::string& text) {
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
        // One count on the node again: the first level releases it. It counts
        // only if the other nodes still vouched for a majority when it answered.
        auto seen = member->client().holds().confirmed(*member, owner);
        refresh(*hold, owner, seen.at);
        if (hold->member_held(i) || hold->lost || seen.at == clock::time_point::min() ||
            !QuorumValidity::counts(hold->validity.on(
                QuorumValidity::confirmed{i, seen.at, seen.valid_until - clock_drift(member_lease(i, hold->lease))}))) {
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
      refresh(*hold, owner, clock::now());
      if (hold->lost || hold->validity.lost() || hold->member_held(i)) {
        hold->retaking[i] = false;
        return;
      }
    }
    take_back(owner, generation, i);
  }
};

// "HOST:PORT" with the names of this machine's loopback spelled one way.
std::string same_host(std::string server) {
  constexpr std::string_view localhost = "localhost:";
  if (server.compare(0, localhost.size(), localhost) == 0) server.replace(0, localhost.size() - 1, "127.0.0.1");
  return server;
}

std::vector<std::shared_ptr<LockCore>> checked_members(std::vector<std::shared_ptr<LockCore>> members) {
  if (members.size() < 3) {
    throw Error(errc::invalid_argument,
                fmt::format("warden: red lock: needs at least 3 independent nodes, got {}; a majority of fewer "
                            "tolerates no failure",
                            members.size()));
  }
  // A quorum counts servers: two members on one server (one Client twice, or
  // two Clients of one address, whatever their database) fail together.
  std::map<std::string, std::string> servers;  // server → the member's name
  for (auto& lock : members) {
    if (!lock) throw Error(errc::invalid_argument, "warden: red lock: a member is an empty (moved-from) Lock");
    auto server = same_host(lock->client().topology().label());
    auto [it, fresh] = servers.emplace(server, lock->name_key());
    if (!fresh) {
      throw Error(errc::invalid_argument,
                  fmt::format("warden: red lock: locks '{}' and '{}' are both on {}; each node must be a different "
                              "server",
                              it->second, lock->name(), lock->client().topology().label()));
    }
  }
  return members;
}

}  // namespace

std::shared_ptr<CompositeCore> make_red_core(std::vector<std::shared_ptr<LockCore>> members) {
  return std::make_shared<RedCore>(checked_members(std::move(members)));
}

}  // namespace warden::detail
