#include "cpu_time.hpp"

#include <sys/resource.h>

namespace warden_bench {

namespace {

double used_s(int who) {
  rusage usage{};
  if (::getrusage(who, &usage) != 0) return -1;
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

double process_cpu_s() { return used_s(RUSAGE_SELF); }

double thread_cpu_s() { return used_s(RUSAGE_THREAD); }

context_switches process_switches() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return {};
  return {usage.ru_nvcsw, usage.ru_nivcsw};
}

context_switches operator-(const context_switches& stop, const context_switches& start) {
  if (stop.voluntary < 0 || start.voluntary < 0) return {};
  return {stop.voluntary - start.voluntary, stop.involuntary - start.involuntary};
}

}  // namespace warden_bench
