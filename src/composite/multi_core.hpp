// MultiLock's policy on the composite core: every member or none, members
// that wait on their own pub/sub for a drawn share of the wait, the first
// failure settling a round.
#pragma once

#include <memory>
#include <vector>

#include "composite/composite_core.hpp"

namespace warden::detail {

// Throws errc::invalid_argument when there are no members or one is an empty handle (null).
std::shared_ptr<CompositeCore> make_multi_core(std::vector<std::shared_ptr<LockCore>> members);

}  // namespace warden::detail
