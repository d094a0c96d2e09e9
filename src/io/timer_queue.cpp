#include "io/timer_queue.hpp"

#include <cassert>
#include <tuple>

#include "io/spare_buckets.hpp"

namespace warden::detail {

Timer::~Timer() {
  // Destroyed while scheduled: the queue would run a dangling pointer.
  assert(slot_ == unscheduled);
}

TimerQueue::~TimerQueue() { clear(); }

TimerQueue::id TimerQueue::add(clock::time_point when, std::function<void()> fn) {
  id timer = next_id_++;
  auto& callback =
      callbacks_
          .emplace(std::piecewise_construct, std::forward_as_tuple(timer), std::forward_as_tuple(timer, std::move(fn)))
          .first->second;
  schedule(callback, when);
  return timer;
}

bool TimerQueue::cancel(id timer) {
  auto it = callbacks_.find(timer);
  if (it == callbacks_.end()) return false;
  remove_at(it->second.slot_);
  callbacks_.erase(it);
  trim();
  return true;
}

void TimerQueue::schedule(Timer& timer, clock::time_point when) {
  if (timer.scheduled()) remove_at(timer.slot_);
  timer.when_ = when;
  timer.order_ = next_order_++;
  heap_.push_back(&timer);
  timer.slot_ = static_cast<std::uint32_t>(heap_.size() - 1);
  sift_up(heap_.size() - 1);
}

bool TimerQueue::cancel(Timer& timer) {
  if (!timer.scheduled()) return false;
  remove_at(timer.slot_);
  trim();
  return true;
}

std::optional<clock::time_point> TimerQueue::next() const {
  if (heap_.empty()) return std::nullopt;
  return heap_.front()->when_;
}

std::function<void()> TimerQueue::take_next_due(clock::time_point now) {
  if (heap_.empty() || heap_.front()->when_ > now) return {};
  Timer* due = heap_.front();
  remove_at(0);
  trim();
  if (!due->is_callback()) return [due] { due->on_timer(); };
  auto& callback = static_cast<Callback&>(*due);
  auto fn = std::move(callback.fn);
  callbacks_.erase(callback.ident);
  release_spare_buckets(callbacks_);
  return fn;
}

void TimerQueue::place(Timer* timer, std::size_t slot) {
  heap_[slot] = timer;
  timer->slot_ = static_cast<std::uint32_t>(slot);
}

void TimerQueue::sift_up(std::size_t slot) {
  Timer* moving = heap_[slot];
  while (slot > 0) {
    std::size_t parent = (slot - 1) / 2;
    if (!earlier(moving, heap_[parent])) break;
    place(heap_[parent], slot);
    slot = parent;
  }
  place(moving, slot);
}

void TimerQueue::sift_down(std::size_t slot) {
  Timer* moving = heap_[slot];
  const std::size_t size = heap_.size();
  for (;;) {
    std::size_t child = 2 * slot + 1;
    if (child >= size) break;
    if (child + 1 < size && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], moving)) break;
    place(heap_[child], slot);
    slot = child;
  }
  place(moving, slot);
}

void TimerQueue::remove_at(std::size_t slot) {
  Timer* leaving = heap_[slot];
  leaving->slot_ = Timer::unscheduled;
  Timer* last = heap_.back();
  heap_.pop_back();
  if (last == leaving) return;
  place(last, slot);
  // The one moved in may belong above or below its new slot.
  if (slot > 0 && earlier(last, heap_[(slot - 1) / 2])) {
    sift_up(slot);
  } else {
    sift_down(slot);
  }
}

void TimerQueue::trim() {
  // Every parked waiter has a timer: once a crowd of them is gone, the
  // heap's storage and the callbacks' buckets go too.
  constexpr std::size_t small = 64;
  if (heap_.capacity() > small && heap_.size() < heap_.capacity() / 8) {
    std::vector<Timer*>(heap_.begin(), heap_.end()).swap(heap_);
  }
  release_spare_buckets(callbacks_);
}

void TimerQueue::clear() {
  for (Timer* timer : heap_) timer->slot_ = Timer::unscheduled;
  std::vector<Timer*>().swap(heap_);
  callbacks_.clear();
}

}  // namespace warden::detail
