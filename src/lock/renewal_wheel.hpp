// When each watchdog-mode hold is next due for renewal, kept as a timing
// wheel: a ring of time buckets, each an intrusive list of holds. Adding,
// moving and removing a hold cost O(1) and allocate nothing; taking what is
// due costs O(taken + buckets passed). So the watchdog can renew a few
// buckets' worth of holds per loop turn, spread over the period, instead of
// walking the whole book at once. Pure data structure: no I/O, no clock of
// its own (times are passed in), no locking (the HoldBook's mutex guards it).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "io/timer_queue.hpp"

namespace warden::detail {

class RenewalWheel {
 public:
  // What a scheduled item embeds (the HoldBook's holds derive from it).
  struct Link {
    Link* prev = nullptr;
    Link* next = nullptr;
    clock::time_point due{};  // kept after unlinking: when it was due
    bool linked() const { return prev != nullptr; }

    Link() = default;
    // Filed by address: never copied or moved.
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;
  };

  // Buckets of `width` each, enough for due times up to `span` ahead of the
  // last taken bucket; a due time further ahead is filed earlier, at the
  // horizon (renewing early is always safe). `origin`: the start of bucket 0.
  RenewalWheel(clock::duration width, clock::duration span, clock::time_point origin);
  RenewalWheel(const RenewalWheel&) = delete;
  RenewalWheel& operator=(const RenewalWheel&) = delete;

  // (Re)files `link` as due at `due`. A due time in a bucket already taken
  // goes to the front of the line: it is taken with the next call of take().
  void add(Link& link, clock::time_point due);
  // Unfiles `link` if filed.
  void remove(Link& link);
  // An empty wheel is not taken from (nothing arms a timer for it), so its
  // cursor lags: brings it up to `now`, or every later due time would look
  // beyond the ring and be filed into one bucket.
  void catch_up(clock::time_point now);
  // Unfiles links, calling take(link) for each, first those filed as already
  // due, then bucket by bucket while the bucket starts at or before `now`
  // (so at most one width early), up to `limit` links. Returns how many.
  template <class Take>
  std::size_t take(clock::time_point now, std::size_t limit, Take&& take);
  // Unfiles further links due before `until`, earliest bucket first, for
  // which `wanted(link)` says yes (it takes them: they are unfiled once it
  // returns), up to `limit` taken and `look` looked at. For topping up a
  // batch with holds that will soon be due anyway.
  template <class Wanted>
  std::size_t take_early(clock::time_point until, std::size_t limit, std::size_t look, Wanted&& wanted);
  // When the earliest filed link's bucket starts (possibly in the past);
  // nullopt when nothing is filed.
  std::optional<clock::time_point> next_due() const;
  std::size_t size() const { return size_; }
  // Unfiles everything.
  void clear();

 private:
  using slot_t = std::int64_t;
  slot_t slot_of(clock::time_point at) const { return (at - origin_) / width_; }
  clock::time_point start_of(slot_t slot) const { return origin_ + width_ * slot; }
  Link& bucket(slot_t slot) { return buckets_[static_cast<std::size_t>(slot % static_cast<slot_t>(buckets_.size()))]; }
  static void push_back(Link& head, Link& link);
  static void unlink(Link& link);
  static bool empty(const Link& head) { return head.next == &head; }

  clock::duration width_;
  clock::time_point origin_;
  std::vector<Link> buckets_;  // list heads: circular, a head links to itself when empty
  Link ready_;                 // due in buckets already taken
  slot_t taken_;               // buckets up to this one have been taken
  std::size_t size_ = 0;
};

template <class Take>
std::size_t RenewalWheel::take(clock::time_point now, std::size_t limit, Take&& take) {
  std::size_t count = 0;
  auto drain = [&](Link& head) {
    while (count < limit && !empty(head)) {
      Link& link = *head.next;
      unlink(link);
      --size_;
      ++count;
      take(link);
    }
    return empty(head);
  };
  if (!drain(ready_)) return count;
  const slot_t until = slot_of(now);
  const slot_t last = std::min(until, taken_ + static_cast<slot_t>(buckets_.size()));
  while (taken_ < last) {
    if (!drain(bucket(taken_ + 1))) return count;
    ++taken_;
  }
  // A stall longer than the ring: every bucket was drained above, so the
  // wheel may jump to the present.
  if (taken_ < until) taken_ = until;
  return count;
}

template <class Wanted>
std::size_t RenewalWheel::take_early(clock::time_point until, std::size_t limit, std::size_t look, Wanted&& wanted) {
  std::size_t count = 0;
  std::size_t looked = 0;
  const slot_t last = std::min(slot_of(until), taken_ + static_cast<slot_t>(buckets_.size()));
  for (slot_t slot = taken_ + 1; slot <= last && count < limit && looked < look; ++slot) {
    Link& head = bucket(slot);
    for (Link* link = head.next; link != &head && count < limit && looked < look;) {
      Link* next = link->next;
      ++looked;
      if (link->due < until && wanted(*link)) {
        unlink(*link);
        --size_;
        ++count;
      }
      link = next;
    }
  }
  return count;
}

}  // namespace warden::detail
