// warden-bench: the two observers of the scale mode's hold phase that run on
// threads of their own — a caller taking and releasing another lock on a
// fixed pace (what every other user of the Client feels of the renewals),
// and a sampler of the held keys' PTTL on a plain connection (what the
// server says of them).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <warden/lock.hpp>

#include "redis_sync.hpp"

namespace warden_bench {

struct probe_sample {
  std::int64_t start_ns = 0;    // steady_clock, when lock() was called
  std::int64_t latency_ns = 0;  // lock() + unlock_checked()
};

// lock(); unlock_checked(); on one Lock, one pair per `pace` tick (a pair
// that overruns a tick skips it, see pacer.hpp). Storage for `capacity`
// samples is taken at construction, so a run allocates nothing the heap
// figures around it would see; samples past it are counted, not kept.
class latency_probe {
 public:
  latency_probe(warden::Lock lock, std::chrono::nanoseconds pace, std::size_t capacity);
  ~latency_probe() { stop(); }
  latency_probe(const latency_probe&) = delete;
  latency_probe& operator=(const latency_probe&) = delete;

  // Forgets the previous run's samples and starts pairing on a new thread.
  void start();
  // Stops after the pair under way and joins.
  void stop();

  // After stop():
  const std::vector<probe_sample>& samples() const noexcept { return samples_; }
  double thread_cpu_s() const noexcept { return thread_cpu_s_; }  // the probe thread's own, last run
  std::uint64_t errors() const noexcept { return errors_; }
  const std::string& first_error() const noexcept { return first_error_; }
  std::uint64_t dropped() const noexcept { return dropped_; }

 private:
  void run();

  warden::Lock lock_;
  std::chrono::nanoseconds pace_;
  std::vector<probe_sample> samples_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  double thread_cpu_s_ = 0;
  std::uint64_t errors_ = 0;
  std::uint64_t dropped_ = 0;
  std::string first_error_;
};

// Every `every`, one pipelined round of PTTL over `names` on a connection of
// its own; keeps the smallest answer and counts keys found missing (-2) or
// without expiry (-1). Connects at construction.
class pttl_sampler {
 public:
  pttl_sampler(const warden::Config& server, std::vector<std::string> names, std::chrono::milliseconds every);
  ~pttl_sampler() { stop(); }
  pttl_sampler(const pttl_sampler&) = delete;
  pttl_sampler& operator=(const pttl_sampler&) = delete;

  void start();
  void stop();

  // After stop():
  std::int64_t min_pttl_ms() const noexcept { return min_pttl_ms_; }  // -3 when never sampled
  std::uint64_t rounds() const noexcept { return rounds_; }
  std::uint64_t missing() const noexcept { return missing_; }      // PTTL -2 answers
  std::uint64_t no_expiry() const noexcept { return no_expiry_; }  // PTTL -1 answers
  double thread_cpu_s() const noexcept { return thread_cpu_s_; }
  const std::string& error() const noexcept { return error_; }

 private:
  void run();

  redis_sync connection_;
  std::vector<std::string> names_;
  std::chrono::milliseconds every_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::int64_t min_pttl_ms_ = -3;
  std::uint64_t rounds_ = 0, missing_ = 0, no_expiry_ = 0;
  double thread_cpu_s_ = 0;
  std::string error_;
};

}  // namespace warden_bench
