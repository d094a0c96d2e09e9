// Loaded into the pes kind's workers with LD_PRELOAD: moves the process's
// wall clock by $WARDEN_CLOCK_SKEW_S seconds (clock_gettime of the realtime
// clocks, gettimeofday, time) and leaves the monotonic clocks alone. The
// workers run hours apart, so a permit expiry judged by any client's wall
// clock would reclaim live permits or keep dead ones; warden judges it by the
// server's TIME, and the torture check sees no difference.
#include <dlfcn.h>
#include <sys/time.h>

#include <cstdlib>
#include <ctime>

namespace {

long long skew_seconds() {
  static const long long skew = [] {
    const char* text = std::getenv("WARDEN_CLOCK_SKEW_S");
    return text != nullptr ? std::atoll(text) : 0LL;
  }();
  return skew;
}

template <class Function>
Function next_definition(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" int clock_gettime(clockid_t clock, struct timespec* now) noexcept {
  static const auto real = next_definition<int (*)(clockid_t, struct timespec*)>("clock_gettime");
  int result = real(clock, now);
  if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) now->tv_sec += skew_seconds();
  return result;
}

extern "C" int gettimeofday(struct timeval* __restrict now, void* __restrict zone) noexcept {
  static const auto real = next_definition<int (*)(struct timeval*, void*)>("gettimeofday");
  int result = real(now, zone);
  if (result == 0) now->tv_sec += skew_seconds();
  return result;
}

extern "C" time_t time(time_t* now) noexcept {
  struct timespec wall {};
  clock_gettime(CLOCK_REALTIME, &wall);
  if (now != nullptr) *now = wall.tv_sec;
  return wall.tv_sec;
}
