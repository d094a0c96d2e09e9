// warden-bench: what the scale and waiters modes share — client heap and RSS
// readings, the server's counters, a bound on outstanding async calls, and
// error tallies fed from completion callbacks.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <system_error>

#include <warden/config.hpp>
#include <warden/error.hpp>

#include "redis_sync.hpp"

namespace warden_bench {

// This process's memory at one moment. heap: bytes malloc has handed out and
// not had back (glibc mallinfo2: uordblks, every arena, plus hblkhd, the
// chunks it mmapped for large requests such as a big hash table's buckets);
// rss: resident set (/proc/self/statm). -1 when unknown.
struct memory_sample {
  std::int64_t heap = -1;
  std::int64_t rss = -1;
};
memory_sample sample_memory();

// The smallest heap of `samples` readings `every` apart (and the RSS read with
// it): a renewal batch or a reply being parsed at the moment of one reading is
// transient, what stays across all of them is what the client keeps.
memory_sample settled_memory(int samples, std::chrono::milliseconds every);

// "812 B", "1.23 KiB", "45.6 MiB"; signed (a leftover may be negative).
std::string format_bytes(double bytes);

// The server's own counters, read on a connection of the bench's own (never
// one of warden's). Throws std::runtime_error when the server cannot be read.
class server_stats {
 public:
  explicit server_stats(const warden::Config& server);

  // Script calls so far: INFO commandstats calls of eval, evalsha and their
  // _ro variants. warden runs every lock write as EVALSHA (EVAL after
  // NOSCRIPT), so this counts acquires, releases and renewal batches.
  std::uint64_t script_calls();
  // used_cpu_user + used_cpu_sys of INFO cpu, seconds.
  double cpu_s();
  // An integer field of an INFO section ("stats", "pubsub_channels").
  std::int64_t info_integer(const char* section, const char* field);
  // Calls per command so far (INFO commandstats: "evalsha" → calls), to
  // count by type what a window of the run cost the server.
  std::map<std::string, std::uint64_t> command_calls();

  redis_sync& connection() noexcept { return connection_; }

 private:
  redis_sync connection_;
};

// At most `limit` async calls outstanding: enter() waits for a free slot
// before a call is started, leave() (from the call's completion, on warden's
// I/O thread: it only locks a mutex briefly and never waits) frees it.
class async_gate {
 public:
  explicit async_gate(std::size_t limit) : limit_(limit) {}

  void enter() {
    std::unique_lock<std::mutex> guard(mutex_);
    freed_.wait(guard, [&] { return outstanding_ < limit_; });
    ++outstanding_;
  }
  void leave() {
    std::lock_guard<std::mutex> guard(mutex_);
    --outstanding_;
    freed_.notify_all();
  }
  // Waits until nothing is outstanding; false when `timeout` passed first.
  bool drain(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> guard(mutex_);
    return freed_.wait_for(guard, timeout, [&] { return outstanding_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable freed_;
  std::size_t outstanding_ = 0;
  const std::size_t limit_;
};

// Errors of many calls: how many, how many of them timed out, and the first
// one's words.
class error_tally {
 public:
  void add(std::error_code error, const std::string& lock_name) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (count_++ == 0) first_ = lock_name + ": " + error.message();
    if (error == warden::errc::timed_out) ++timed_out_;
  }
  std::uint64_t count() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return count_;
  }
  std::uint64_t timed_out() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return timed_out_;
  }
  std::string first() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return first_;
  }
  void reset() {
    std::lock_guard<std::mutex> guard(mutex_);
    count_ = 0;
    timed_out_ = 0;
    first_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::uint64_t count_ = 0;
  std::uint64_t timed_out_ = 0;
  std::string first_;
};

inline const char* pass_mark(bool pass) { return pass ? "✓ PASS" : "✗ MISS"; }

// The 1-, 5- and 15-minute load averages ("0.12 0.30 0.25"), or "" where
// /proc is not there. Other work on the machine steals CPU from the client
// threads and the server alike; the reports show it so a noisy run can be
// told from a slow library.
std::string load_average();

// What a window cost the server by command: the calls in `after` less those
// in `before` (commands not called in it left out).
std::map<std::string, std::uint64_t> command_delta(const std::map<std::string, std::uint64_t>& before,
                                                   const std::map<std::string, std::uint64_t>& after);
// "evalsha 20000, unsubscribe 10000" (by name), or "none".
std::string format_command_calls(const std::map<std::string, std::uint64_t>& calls);

}  // namespace warden_bench
