// Redis key and channel names of the semaphores, as Redisson lays them out.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace warden::detail::keys {

// Why `name` cannot name a semaphore, or nullopt. Redisson puts a name that
// contains '{' into its channel as it is ("redisson_sc:NAME"), and any other
// in braces; by Redis's hash-tag rule that channel shares the name's cluster
// slot only when such a name carries a non-empty {tag}. So a name with a '{'
// and no tag ("a{", "x{}y") is refused, as is one whose other keys could not
// share its slot (name_problem).
std::optional<std::string> semaphore_name_problem(std::string_view name);

// redisson_sc:{name}, or redisson_sc:name when the name carries its own tag
std::string semaphore_channel(std::string_view name);

// warden_release_latch:{name}:<request-id> — a release's answer, kept so that
// a release re-sent after a lost reply adds nothing twice
std::string release_latch(std::string_view name, std::string_view request_id);

}  // namespace warden::detail::keys
