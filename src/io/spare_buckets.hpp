// Hash tables keep the buckets of their largest size after their elements
// are gone: a client that once held 100,000 locks, or parked 10,000 waiters,
// would keep that many buckets for good. The tables that grow with a crowd
// (holds, lock cores, channels, timers, requests, tracked operations) hand
// the spare ones back.
#pragma once

#include <cstddef>

namespace warden::detail {

// Rehashes `map` down to its size once it uses under an eighth of its
// buckets: O(size) now and then, amortised over the erasures that got it
// there. Pointers and references to elements stay valid (iterators do not).
template <class Map>
void release_spare_buckets(Map& map) {
  constexpr std::size_t small = 64;
  if (map.bucket_count() > small && map.size() < map.bucket_count() / 8) map.rehash(0);
}

}  // namespace warden::detail
