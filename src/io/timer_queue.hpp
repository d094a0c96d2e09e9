// Deadlines ordered in time: the one timer of the event loop serves them all.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace warden::detail {

using clock = std::chrono::steady_clock;

class TimerQueue;

// A deadline kept inside the object it belongs to: scheduling it costs the
// queue one pointer, and nothing is allocated for a callback. A parked
// acquire is one, so a crowd of waiters does not cost a map node and a
// heap-allocated capture each. The owner must cancel it (or see it run)
// before it is destroyed; it is not copied or moved while scheduled.
class Timer {
 public:
  Timer() = default;
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  bool scheduled() const { return slot_ != unscheduled; }

 protected:
  virtual ~Timer();

 private:
  friend class TimerQueue;
  static constexpr std::uint32_t unscheduled = UINT32_MAX;

  // Runs when due, once the timer is off the queue (it may schedule itself
  // again).
  virtual void on_timer() = 0;
  // True for the queue's own callback timers (TimerQueue::add).
  virtual bool is_callback() const { return false; }

  clock::time_point when_{};
  std::uint64_t order_ = 0;           // ties run in the order scheduled
  std::uint32_t slot_ = unscheduled;  // index in the queue's heap
};

class TimerQueue {
 public:
  using id = std::uint64_t;

  TimerQueue() = default;
  ~TimerQueue();
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  // Registers `fn` to run at `when`. Ids are never 0, so 0 can mean "none".
  id add(clock::time_point when, std::function<void()> fn);
  // Forgets a timer; false if it already ran or was cancelled.
  bool cancel(id timer);

  // Schedules `timer` for `when`, moving it if it was scheduled already
  // (it then runs after timers due at the same time that were scheduled
  // before this call).
  void schedule(Timer& timer, clock::time_point when);
  // Takes `timer` off the queue; false if it was not on it.
  bool cancel(Timer& timer);

  std::optional<clock::time_point> next() const;

  // Removes the earliest timer due at `now` and returns what running it
  // means, or an empty function. Running due timers one at a time lets a
  // callback cancel a timer that was due in the same batch. The returned
  // function must run before anything else can cancel or destroy a Timer
  // (it refers to an intrusive one by address).
  std::function<void()> take_next_due(clock::time_point now);

  std::size_t size() const { return heap_.size(); }
  // Drops every timer without running it (intrusive ones become unscheduled).
  void clear();

 private:
  // A callback registered by add(), owned by the queue.
  struct Callback final : Timer {
    Callback(id i, std::function<void()> f) : ident(i), fn(std::move(f)) {}
    ~Callback() override = default;
    void on_timer() override {}  // never called: take_next_due hands fn out
    bool is_callback() const override { return true; }
    id ident;
    std::function<void()> fn;
  };

  bool earlier(const Timer* a, const Timer* b) const {
    return a->when_ != b->when_ ? a->when_ < b->when_ : a->order_ < b->order_;
  }
  void place(Timer* timer, std::size_t slot);
  void sift_up(std::size_t slot);
  void sift_down(std::size_t slot);
  void remove_at(std::size_t slot);
  void trim();

  // A binary min-heap by (when_, order_); each timer knows its slot.
  std::vector<Timer*> heap_;
  // The callbacks of add(), by id. Nodes of an unordered_map do not move,
  // so the heap may point into them.
  std::unordered_map<id, Callback> callbacks_;
  id next_id_ = 1;
  std::uint64_t next_order_ = 1;
};

}  // namespace warden::detail
