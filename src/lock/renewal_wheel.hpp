// When each watchdog-mode hold is next due for renewal, kept as a timing
// wheel: a ring of time buckets, each a flat array of the holds filed in it,
// in filing order. Adding, moving and removing a hold cost O(1) (a removed
// hold leaves an empty slot, gone when its bucket is drained); taking what is
// due costs O(taken + buckets passed). So the watchdog can renew a few
// buckets' worth of holds per loop turn, spread over the period, instead of
// walking the whole book at once. Arrays rather than linked lists: the
// addresses of the holds to take are known before any of them is read, so
// their cache misses overlap (prefetched) instead of each waiting for the one
// before it, as a list's walk does (with a million holds, a large part of a
// renewal's cost). Pure data structure: no I/O, no clock of its own (times
// are passed in), no locking (the HoldBook's mutex guards it).
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
    clock::time_point due{};  // kept after unfiling: when it was due
    bool linked() const { return line != unfiled; }

    Link() = default;
    // Filed by address: never copied or moved.
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;

   private:
    friend class RenewalWheel;
    static constexpr std::int32_t unfiled = -2;
    std::int32_t line = unfiled;  // its bucket's index, ready_line, or unfiled
    std::uint32_t index = 0;      // its slot in that bucket's items
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
  // (so at most one width early), up to `limit` links, each bucket's in the
  // order they were filed. Returns how many. `take` must not file or remove.
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
  // Room for links that empty buckets keep for their next turn of the ring.
  std::size_t kept_room() const { return kept_room_; }
  // Unfiles everything.
  void clear();

 private:
  using slot_t = std::int64_t;
  static constexpr std::int32_t ready_line = -1;
  // Links in filing order; nullptr where one was removed. Slots before
  // `head` were taken; `live` counts the links still filed.
  struct Bucket {
    std::vector<Link*> items;
    std::uint32_t head = 0;
    std::uint32_t live = 0;
  };
  slot_t slot_of(clock::time_point at) const { return (at - origin_) / width_; }
  clock::time_point start_of(slot_t slot) const { return origin_ + width_ * slot; }
  std::int32_t line_of(slot_t slot) const {
    return static_cast<std::int32_t>(slot % static_cast<slot_t>(buckets_.size()));
  }
  Bucket& line(std::int32_t at) { return at == ready_line ? ready_ : buckets_[static_cast<std::size_t>(at)]; }
  void push_back(std::int32_t at, Link& link);
  // Unfiles the link in `bucket`'s slot `i` (not null).
  void unfile(Bucket& bucket, std::size_t i);
  // A bucket with nothing filed starts over. Its storage stays when the
  // bucket used most of it (a bucket fills up again a ring later) and goes
  // when removals emptied it or it held far fewer than it had room for: what
  // a shrinking book no longer needs is not kept.
  void reset(Bucket& bucket, bool drained);
  // While holds are renewed, the room empty buckets keep is about what is
  // filed (the buckets drained a period ago wait for them to come back).
  // Once it is well beyond that (a mass release), it goes: a book that once
  // held a million holds would otherwise keep 8 to 16 B of room for each.
  void release_kept_room();
  // Takes from `bucket` until it is empty or `count` reaches `limit`; true
  // when it is empty.
  template <class Take>
  bool drain(Bucket& bucket, std::size_t limit, std::size_t& count, Take& take);

  clock::duration width_;
  clock::time_point origin_;
  std::vector<Bucket> buckets_;
  Bucket ready_;  // due in buckets already taken
  slot_t taken_;  // buckets up to this one have been taken
  std::size_t size_ = 0;
  std::size_t kept_room_ = 0;  // the capacity of the buckets that are empty
};

template <class Take>
bool RenewalWheel::drain(Bucket& bucket, std::size_t limit, std::size_t& count, Take& take) {
  auto& items = bucket.items;
  // The first two cache lines of the links about to be taken (the link and
  // what an item keeps after it), asked for before any of them is read.
  std::size_t ahead = 0;
  for (std::size_t i = bucket.head; i < items.size() && count + ahead < limit; ++i) {
    if (items[i] == nullptr) continue;
    __builtin_prefetch(items[i]);
    __builtin_prefetch(reinterpret_cast<const char*>(items[i]) + 64);
    ++ahead;
  }
  std::size_t i = bucket.head;
  for (; i < items.size() && count < limit && bucket.live != 0; ++i) {
    Link* link = items[i];
    if (link == nullptr) continue;
    unfile(bucket, i);
    ++count;
    take(*link);
  }
  bucket.head = static_cast<std::uint32_t>(i);
  if (bucket.live != 0) return false;
  reset(bucket, true);
  return true;
}

template <class Take>
std::size_t RenewalWheel::take(clock::time_point now, std::size_t limit, Take&& take) {
  std::size_t count = 0;
  if (!drain(ready_, limit, count, take)) return count;
  const slot_t until = slot_of(now);
  const slot_t last = std::min(until, taken_ + static_cast<slot_t>(buckets_.size()));
  while (taken_ < last) {
    if (!drain(buckets_[static_cast<std::size_t>(line_of(taken_ + 1))], limit, count, take)) return count;
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
    Bucket& bucket = buckets_[static_cast<std::size_t>(line_of(slot))];
    if (bucket.live == 0) continue;
    for (std::size_t i = bucket.head; i < bucket.items.size() && count < limit && looked < look; ++i) {
      Link* link = bucket.items[i];
      if (link == nullptr) continue;
      ++looked;
      if (link->due < until && wanted(*link)) {
        unfile(bucket, i);
        ++count;
      }
    }
    if (bucket.live == 0) reset(bucket, false);
  }
  return count;
}

}  // namespace warden::detail
