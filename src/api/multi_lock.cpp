// MultiLock: a CompositeLock whose core's policy is composite/multi_core.
#include <warden/multi_lock.hpp>

#include "api/composite_async.hpp"
#include "composite/multi_core.hpp"

namespace warden {

MultiLock::MultiLock(std::initializer_list<Lock> members) : MultiLock(std::vector<Lock>(members)) {}

MultiLock::MultiLock(std::vector<Lock> members)
    : CompositeLock(detail::make_multi_core(detail::member_cores(members)), std::move(members)) {}

}  // namespace warden
