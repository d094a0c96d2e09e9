#include "lock/renewal_wheel.hpp"

#include <algorithm>

namespace warden::detail {

RenewalWheel::RenewalWheel(clock::duration width, clock::duration span, clock::time_point origin)
    : width_(std::max(width, clock::duration{1})),
      origin_(origin),
      buckets_(static_cast<std::size_t>(std::max<clock::duration::rep>(span / width_, 1) + 1)),
      taken_(-1) {}

namespace {

// Kept room below this many links is not worth giving back (8 KiB).
constexpr std::size_t small_room = 1024;

}  // namespace

void RenewalWheel::push_back(std::int32_t at, Link& link) {
  Bucket& bucket = line(at);
  // An empty bucket with room is one that kept it: in use again.
  if (bucket.items.empty()) kept_room_ -= bucket.items.capacity();
  link.line = at;
  link.index = static_cast<std::uint32_t>(bucket.items.size());
  bucket.items.push_back(&link);
  ++bucket.live;
  ++size_;
}

void RenewalWheel::unfile(Bucket& bucket, std::size_t i) {
  bucket.items[i]->line = Link::unfiled;
  bucket.items[i] = nullptr;
  --bucket.live;
  --size_;
}

void RenewalWheel::reset(Bucket& bucket, bool drained) {
  if (bucket.items.empty()) kept_room_ -= bucket.items.capacity();  // it kept room: decided again
  bucket.head = 0;
  bucket.live = 0;
  if (drained && bucket.items.capacity() <= 2 * bucket.items.size()) {
    bucket.items.clear();
    kept_room_ += bucket.items.capacity();
  } else {
    std::vector<Link*>().swap(bucket.items);
  }
}

void RenewalWheel::release_kept_room() {
  if (kept_room_ <= small_room || kept_room_ <= 4 * size_) return;
  auto release = [](Bucket& bucket) {
    if (bucket.items.empty()) std::vector<Link*>().swap(bucket.items);
  };
  release(ready_);
  for (auto& bucket : buckets_) release(bucket);
  kept_room_ = 0;
}

void RenewalWheel::add(Link& link, clock::time_point due) {
  remove(link);
  link.due = due;
  // The bucket of `due`, or the line of what is already due, or the last
  // bucket the ring can tell apart from a taken one (a due time beyond it
  // is served early, never late).
  slot_t slot = due < origin_ ? taken_ : slot_of(due);
  if (slot <= taken_) {
    push_back(ready_line, link);
  } else {
    push_back(line_of(std::min(slot, taken_ + static_cast<slot_t>(buckets_.size()))), link);
  }
}

void RenewalWheel::catch_up(clock::time_point now) {
  if (size_ == 0 && now >= origin_) taken_ = std::max(taken_, slot_of(now) - 1);
}

void RenewalWheel::remove(Link& link) {
  if (!link.linked()) return;
  Bucket& bucket = line(link.line);
  unfile(bucket, link.index);
  if (bucket.live == 0) reset(bucket, false);
  release_kept_room();
}

std::optional<clock::time_point> RenewalWheel::next_due() const {
  if (size_ == 0) return std::nullopt;
  if (ready_.live != 0) return start_of(taken_);
  const auto count = static_cast<slot_t>(buckets_.size());
  for (slot_t slot = taken_ + 1; slot <= taken_ + count; ++slot) {
    if (buckets_[static_cast<std::size_t>(slot % count)].live != 0) return start_of(slot);
  }
  return std::nullopt;  // unreachable while size_ counts right
}

void RenewalWheel::clear() {
  auto drop = [this](Bucket& bucket) {
    for (Link* link : bucket.items) {
      if (link != nullptr) link->line = Link::unfiled;
    }
    reset(bucket, false);
  };
  drop(ready_);
  for (auto& bucket : buckets_) drop(bucket);
  size_ = 0;
  kept_room_ = 0;
}

}  // namespace warden::detail
