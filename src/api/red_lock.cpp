// RedLock: a CompositeLock whose core's policy is composite/red_core.
#include <warden/red_lock.hpp>

#include "api/composite_async.hpp"
#include "composite/quorum.hpp"
#include "composite/red_core.hpp"

namespace warden {

RedLock::RedLock(std::initializer_list<Lock> members) : RedLock(std::vector<Lock>(members)) {}

RedLock::RedLock(std::vector<Lock> members)
    : CompositeLock(detail::make_red_core(detail::member_cores(members)), std::move(members)) {}

std::size_t RedLock::quorum() const noexcept { return core_ ? detail::quorum_of(core_->size()) : 0; }

}  // namespace warden
