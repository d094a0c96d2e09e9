#include "topology/sentinel_resolver.hpp"

#include <algorithm>

namespace warden::detail {

SentinelResolver::SentinelResolver(std::vector<NodeAddress> sentinels) : sentinels_(std::move(sentinels)) {}

SentinelResolver::actions SentinelResolver::on(const event& e) {
  return std::visit([this](const auto& what) { return handle(what); }, e);
}

SentinelResolver::actions SentinelResolver::handle(const resolve_wanted&) {
  if (state_ != state::idle || sentinels_.empty()) return {};
  ++round_;
  asked_ = 0;
  problems_.clear();
  every_answered_ = true;
  return ask();
}

SentinelResolver::actions SentinelResolver::ask() {
  state_ = state::asking;
  return {ask_sentinel{sentinels_[next_], round_}};
}

SentinelResolver::actions SentinelResolver::ask_next(const std::string& problem) {
  if (!problem.empty()) problems_ += (problems_.empty() ? "" : "; ") + problem;
  next_ = (next_ + 1) % sentinels_.size();
  if (++asked_ < sentinels_.size()) return ask();
  state_ = state::idle;
  return {retry_later{problems_}};
}

SentinelResolver::actions SentinelResolver::handle(const sentinel_answered& e) {
  if (e.round != round_ || state_ != state::asking) return {};
  if (!e.master) {
    every_answered_ = every_answered_ && e.answered;
    return ask_next(sentinels_[next_].to_string() + ": " + e.problem);
  }
  state_ = state::confirming;
  candidate_ = *e.master;
  return {confirm_role{candidate_, round_}};
}

SentinelResolver::actions SentinelResolver::handle(const role_answered& e) {
  if (e.round != round_ || state_ != state::confirming) return {};
  if (e.is_master) {
    state_ = state::idle;
    master_ = candidate_;
    return {use_master{candidate_}};
  }
  // The sentinel lags behind (or the server is gone): ask the next one. The
  // candidate did answer, just not as a master: that is no unknown name.
  every_answered_ = false;
  return ask_next(candidate_.to_string() + " (named by " + sentinels_[next_].to_string() + "): " + e.problem);
}

SentinelResolver::actions SentinelResolver::handle(const switch_announced& e) {
  if (state_ == state::idle && master_ && *master_ == e.to) return {};
  ++round_;
  asked_ = 0;
  problems_.clear();
  every_answered_ = true;
  state_ = state::confirming;
  candidate_ = e.to;
  return {confirm_role{candidate_, round_}};
}

SentinelResolver::actions SentinelResolver::handle(const sentinels_learnt& e) {
  for (const auto& sentinel : e.sentinels) {
    if (std::find(sentinels_.begin(), sentinels_.end(), sentinel) == sentinels_.end()) sentinels_.push_back(sentinel);
  }
  return {};
}

}  // namespace warden::detail
