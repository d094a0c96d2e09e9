// RedLock's policy on the composite core: a majority of independent nodes
// within the validity of the lease, the hold's validity judged from what the
// nodes confirmed, a lost node taken back while a majority holds, the whole
// hold lost once no majority is confirmed valid.
#pragma once

#include <memory>
#include <vector>

#include "composite/composite_core.hpp"

namespace warden::detail {

// Throws errc::invalid_argument for fewer than 3 members, an empty handle (null), or
// two members on one server.
std::shared_ptr<CompositeCore> make_red_core(std::vector<std::shared_ptr<LockCore>> members);

}  // namespace warden::detail
