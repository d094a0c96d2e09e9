#include "lock/lock_random.hpp"

#include <fmt/format.h>

namespace warden::detail {

std::mt19937_64& lock_random() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  return random;
}

std::string random_request_id() {
  auto& random = lock_random();
  return fmt::format("{:016x}{:016x}", random(), random());
}

}  // namespace warden::detail
