#include "io/timer_queue.hpp"

#include "io/spare_buckets.hpp"

namespace warden::detail {

TimerQueue::id TimerQueue::add(clock::time_point when, std::function<void()> fn) {
  id timer = next_id_++;
  by_time_.emplace(std::make_pair(when, timer), std::move(fn));
  by_id_.emplace(timer, when);
  return timer;
}

bool TimerQueue::cancel(id timer) {
  auto it = by_id_.find(timer);
  if (it == by_id_.end()) return false;
  by_time_.erase({it->second, timer});
  by_id_.erase(it);
  trim_ids();
  return true;
}

std::optional<clock::time_point> TimerQueue::next() const {
  if (by_time_.empty()) return std::nullopt;
  return by_time_.begin()->first.first;
}

std::vector<std::function<void()>> TimerQueue::take_due(clock::time_point now) {
  std::vector<std::function<void()>> due;
  while (auto fn = take_next_due(now)) due.push_back(std::move(fn));
  return due;
}

std::function<void()> TimerQueue::take_next_due(clock::time_point now) {
  if (by_time_.empty() || by_time_.begin()->first.first > now) return {};
  auto node = by_time_.extract(by_time_.begin());
  by_id_.erase(node.key().second);
  trim_ids();
  return std::move(node.mapped());
}

void TimerQueue::trim_ids() {
  // Every parked waiter has a timer: once a crowd of them is gone, its
  // buckets go too (rehashed down when under an eighth is used).
  release_spare_buckets(by_id_);
}

void TimerQueue::clear() {
  by_time_.clear();
  by_id_.clear();
}

}  // namespace warden::detail
