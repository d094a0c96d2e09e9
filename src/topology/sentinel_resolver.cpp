#include "topology/sentinel_resolver.hpp"

#include <algorithm>

namespace warden::detail {

SentinelResolver::SentinelResolver(std::vector<NodeAddress> sentinels) : sentinels_(std::move(sentinels)) {}

SentinelResolver::Step SentinelResolver::resolve() {
  if (state_ != state::idle || sentinels_.empty()) return {};
  ++round_;
  asked_ = 0;
  problems_.clear();
  every_answered_ = true;
  return ask();
}

SentinelResolver::Step SentinelResolver::ask() {
  state_ = state::asking;
  Step step;
  step.what = Step::action::ask_sentinel;
  step.to = sentinels_[next_];
  step.round = round_;
  return step;
}

SentinelResolver::Step SentinelResolver::ask_next(const std::string& problem) {
  if (!problem.empty()) problems_ += (problems_.empty() ? "" : "; ") + problem;
  next_ = (next_ + 1) % sentinels_.size();
  if (++asked_ < sentinels_.size()) return ask();
  state_ = state::idle;
  Step step;
  step.what = Step::action::retry_later;
  step.problem = problems_;
  return step;
}

SentinelResolver::Step SentinelResolver::sentinel_answered(std::uint64_t round, std::optional<NodeAddress> master,
                                                           bool answered, const std::string& problem) {
  if (round != round_ || state_ != state::asking) return {};
  if (!master) {
    every_answered_ = every_answered_ && answered;
    return ask_next(sentinels_[next_].to_string() + ": " + problem);
  }
  state_ = state::confirming;
  candidate_ = std::move(*master);
  Step step;
  step.what = Step::action::confirm_role;
  step.to = candidate_;
  step.round = round_;
  return step;
}

SentinelResolver::Step SentinelResolver::role_answered(std::uint64_t round, bool is_master,
                                                       const std::string& problem) {
  if (round != round_ || state_ != state::confirming) return {};
  if (is_master) {
    state_ = state::idle;
    master_ = candidate_;
    Step step;
    step.what = Step::action::use_master;
    step.to = candidate_;
    return step;
  }
  // The sentinel lags behind (or the server is gone): ask the next one. The
  // candidate did answer, just not as a master: that is no unknown name.
  every_answered_ = false;
  return ask_next(candidate_.to_string() + " (named by " + sentinels_[next_].to_string() + "): " + problem);
}

SentinelResolver::Step SentinelResolver::switched(const NodeAddress& to) {
  if (state_ == state::idle && master_ && *master_ == to) return {};
  ++round_;
  asked_ = 0;
  problems_.clear();
  every_answered_ = true;
  state_ = state::confirming;
  candidate_ = to;
  Step step;
  step.what = Step::action::confirm_role;
  step.to = candidate_;
  step.round = round_;
  return step;
}

void SentinelResolver::learn(const std::vector<NodeAddress>& sentinels) {
  for (const auto& sentinel : sentinels) {
    if (std::find(sentinels_.begin(), sentinels_.end(), sentinel) == sentinels_.end()) sentinels_.push_back(sentinel);
  }
}

}  // namespace warden::detail
