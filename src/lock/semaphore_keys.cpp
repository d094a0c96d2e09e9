#include "lock/semaphore_keys.hpp"

#include "lock/keys.hpp"

namespace warden::detail::keys {
namespace {

constexpr std::string_view semaphore_channel_prefix = "redisson_sc";

// "{name}" stays as it is in every derived key exactly when the name holds a
// '{': Redisson's rule, which semaphore_name_problem makes agree with Redis's.
bool tag_of_its_own(std::string_view name) { return name.find('{') != std::string_view::npos; }

}  // namespace

std::optional<std::string> semaphore_name_problem(std::string_view name) {
  if (auto problem = name_problem(name)) return problem;
  if (tag_of_its_own(name) && tagged(name) != name) {
    return std::string(
        "a name that contains '{' must carry a non-empty {hash tag} (e.g. '{orders}:pool'): Redisson names its "
        "channel 'redisson_sc:' followed by the name as it is, which would hash to another cluster slot");
  }
  return std::nullopt;
}

std::string semaphore_channel(std::string_view name) { return prefixed(semaphore_channel_prefix, name); }

std::string release_latch(std::string_view name, std::string_view request_id) {
  std::string out = prefixed("warden_release_latch", name);
  out += ':';
  out += request_id;
  return out;
}

}  // namespace warden::detail::keys
