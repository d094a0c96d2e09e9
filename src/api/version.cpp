#include <warden/version.hpp>

namespace warden {

// Compiled into the library, so it reports the library's version even when
// the headers a program was built with are another's.
const char* library_version() noexcept { return WARDEN_VERSION; }

}  // namespace warden
