// The random numbers of lock operations: attempt and request ids, and the
// seeds of each waiter's jitter. One generator per thread, shared by them.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace warden::detail {

std::mt19937_64& lock_random();

// 128 random bits as 32 hex digits (a release's request id).
std::string random_request_id();

// Seeds a waiter's jitter, so that waiters that failed together do not
// retry together.
inline std::uint64_t random_seed() { return lock_random()(); }

}  // namespace warden::detail
