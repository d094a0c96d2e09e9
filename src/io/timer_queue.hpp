// Deadlines ordered in time: the one timer of the event loop serves them all.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace warden::detail {

using clock = std::chrono::steady_clock;

class TimerQueue {
 public:
  using id = std::uint64_t;

  // Registers `fn` to run at `when`. Ids are never 0, so 0 can mean "none".
  id add(clock::time_point when, std::function<void()> fn);

  // Forgets a timer; false if it already ran or was cancelled.
  bool cancel(id timer);

  std::optional<clock::time_point> next() const;

  // Removes and returns the callbacks due at `now`, earliest first (ties in
  // the order they were added).
  std::vector<std::function<void()>> take_due(clock::time_point now);
  // Removes and returns the earliest callback due at `now`, or an empty one.
  // Running due timers one at a time lets a callback cancel a timer that was
  // due in the same batch.
  std::function<void()> take_next_due(clock::time_point now);

  std::size_t size() const { return by_time_.size(); }
  void clear();

 private:
  void trim_ids();

  std::map<std::pair<clock::time_point, id>, std::function<void()>> by_time_;
  std::unordered_map<id, clock::time_point> by_id_;
  id next_id_ = 1;
};

}  // namespace warden::detail
