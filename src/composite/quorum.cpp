#include "composite/quorum.hpp"

#include <algorithm>
#include <functional>

namespace warden::detail {

using std::chrono::milliseconds;

tally count_votes(const std::vector<vote>& votes) {
  tally t;
  for (vote v : votes) {
    switch (v) {
      case vote::pending:
        ++t.pending;
        break;
      case vote::yes:
        ++t.yes;
        break;
      case vote::busy:
        ++t.busy;
        break;
      case vote::failed:
        ++t.failed;
        break;
    }
  }
  return t;
}

verdict judge_all(const std::vector<vote>& votes) {
  tally t = count_votes(votes);
  if (t.failed > 0) return verdict::unreachable;
  if (t.pending > 0) return verdict::undecided;
  return t.busy > 0 ? verdict::contended : verdict::acquired;
}

std::size_t quorum_of(std::size_t nodes) { return nodes / 2 + 1; }

milliseconds clock_drift(milliseconds lease) {
  if (lease.count() <= 0) return milliseconds{2};
  return milliseconds{(lease.count() + 99) / 100 + 2};
}

milliseconds validity(milliseconds lease, milliseconds elapsed) { return lease - elapsed - clock_drift(lease); }

verdict judge_quorum(const std::vector<vote>& votes, milliseconds lease, milliseconds elapsed) {
  const std::size_t nodes = votes.size();
  const std::size_t quorum = quorum_of(nodes);
  tally t = count_votes(votes);
  if (t.yes >= quorum) return validity(lease, elapsed).count() > 0 ? verdict::acquired : verdict::expired;
  if (t.failed > nodes - quorum) return verdict::unreachable;
  if (t.yes + t.pending < quorum) return verdict::contended;
  return verdict::undecided;
}

milliseconds node_budget(milliseconds command_timeout, milliseconds lease) {
  auto share = std::max(lease / 10, milliseconds{50});
  return std::max(std::min(command_timeout, share), milliseconds{1});
}

clock::time_point quorum_valid_until(std::vector<clock::time_point> held_until, std::size_t quorum) {
  if (quorum == 0 || held_until.size() < quorum) return clock::time_point::min();
  auto nth = held_until.begin() + static_cast<std::ptrdiff_t>(quorum - 1);
  std::nth_element(held_until.begin(), nth, held_until.end(), std::greater<>());
  return *nth;
}

quorum_answer quorum_of_answers(std::size_t nodes, std::size_t confirmed, std::size_t failed) {
  const std::size_t quorum = quorum_of(nodes);
  if (confirmed >= quorum) return quorum_answer::yes;
  if (confirmed + failed < quorum) return quorum_answer::no;
  return quorum_answer::unknown;
}

QuorumValidity::QuorumValidity(std::size_t nodes) : bounds_(nodes) {}

QuorumValidity::actions QuorumValidity::on(const event& e) {
  actions out;
  if (auto* take = std::get_if<taken>(&e)) {
    if (lost_ || take->node >= bounds_.size()) return out;
    bounds_[take->node] = std::max(bounds_[take->node].value_or(take->until), take->until);
  } else if (auto* confirm = std::get_if<confirmed>(&e)) {
    judge(confirm->at, out);
    if (lost_ || confirm->node >= bounds_.size()) return out;
    // Not lost at `at`: the other nodes alone are a majority valid past `at`
    // when this one is not counted, so no other owner can have held the lock
    // since this node's hold went missing.
    bounds_[confirm->node] = std::max(bounds_[confirm->node].value_or(confirm->until), confirm->until);
    out.push_back(confirmation_counted{confirm->node});
  } else if (auto* gone = std::get_if<node_lost>(&e)) {
    if (gone->node < bounds_.size()) bounds_[gone->node].reset();
    judge(gone->at, out);
  } else if (auto* passed = std::get_if<time_passed>(&e)) {
    judge(passed->now, out);
  }
  return out;
}

bool QuorumValidity::counts(const actions& answer) {
  for (const auto& action : answer) {
    if (std::holds_alternative<confirmation_counted>(action)) return true;
  }
  return false;
}

void QuorumValidity::judge(clock::time_point now, actions& out) {
  if (lost_) return;
  std::vector<clock::time_point> held;
  for (auto& bound : bounds_) {
    if (bound) held.push_back(*bound);
  }
  if (quorum_valid_until(std::move(held), quorum_of(bounds_.size())) <= now) {
    lost_ = true;
    out.push_back(hold_lost{});
  }
}

std::size_t QuorumValidity::counted_count() const {
  return static_cast<std::size_t>(std::count_if(bounds_.begin(), bounds_.end(), [](auto& b) { return b.has_value(); }));
}

std::size_t QuorumValidity::valid_at(clock::time_point t) const {
  return static_cast<std::size_t>(
      std::count_if(bounds_.begin(), bounds_.end(), [t](auto& b) { return b.has_value() && *b > t; }));
}

clock::time_point QuorumValidity::valid_until() const {
  if (lost_) return clock::time_point::min();
  std::vector<clock::time_point> held;
  for (auto& bound : bounds_) {
    if (bound) held.push_back(*bound);
  }
  return quorum_valid_until(std::move(held), quorum_of(bounds_.size()));
}

}  // namespace warden::detail
