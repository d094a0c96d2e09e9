#include "composite/multi_core.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <warden/error.hpp>

#include "lock/lock_host.hpp"

namespace warden::detail {

namespace {

class MultiCore final : public CompositeCore {
 public:
  explicit MultiCore(std::vector<std::shared_ptr<LockCore>> members)
      : CompositeCore(std::move(members), "multi-lock") {}

  bool members_wait() const override { return true; }

  milliseconds member_budget(std::size_t i, milliseconds member_wait, std::optional<milliseconds>) const override {
    // The member's own wait ends by itself; the budget only bounds the retries
    // of an acquire whose replies keep getting lost.
    return member_wait + member(i)->client().config().command_timeout;
  }

  std::optional<milliseconds> attempt_lease(std::optional<milliseconds> lease,
                                            milliseconds member_wait) const override {
    if (!lease) return std::nullopt;
    // An attempt lasts at most the members' wait plus a command time-out; twice
    // that keeps the first member taken from expiring before the last one is.
    return std::max(*lease, 2 * (member_wait + longest_command_timeout()));
  }

  verdict judge(const std::vector<vote>& votes, milliseconds, milliseconds) const override { return judge_all(votes); }

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
      earliest = std::min(earliest, member(i)->client().holds().valid_until(*member(i), owner));
    }
    return earliest;
  }
};

std::vector<std::shared_ptr<LockCore>> checked_members(std::vector<std::shared_ptr<LockCore>> members) {
  if (members.empty()) {
    throw Error(errc::invalid_argument, "warden: multi-lock {}: a MultiLock needs at least one member");
  }
  for (auto& lock : members) {
    if (!lock) throw Error(errc::invalid_argument, "warden: multi-lock: a member is an empty (moved-from) Lock");
  }
  return members;
}

}  // namespace

std::shared_ptr<CompositeCore> make_multi_core(std::vector<std::shared_ptr<LockCore>> members) {
  return std::make_shared<MultiCore>(checked_members(std::move(members)));
}

}  // namespace warden::detail
