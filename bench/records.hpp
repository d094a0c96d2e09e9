// warden-bench: what one lock+unlock pair leaves behind, and where it is kept.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace warden_bench {

// steady_clock in nanoseconds: monotonic and shared by all threads, so times
// taken on different workers can be subtracted from each other.
inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Seconds from one now_ns() reading to a later one.
inline double seconds_between(std::int64_t from_ns, std::int64_t to_ns) noexcept {
  return static_cast<double>(to_ns - from_ns) / 1e9;
}

// One acquisition as seen by the worker that made it.
struct record {
  std::int64_t t_acq_start;     // just before lock()
  std::int64_t t_enter;         // lock() returned: the critical section begins
  std::int64_t t_exit;          // the critical section ends: just before unlock()
  std::int64_t t_rel_done;      // unlock() returned (or threw)
  std::uint32_t lock;           // index of the lock within its scenario
  std::uint16_t worker;         // index of the worker within its scenario
  std::uint16_t unlock_failed;  // 1 when unlock() threw: an acquisition, but no completed pair
};

// Append-only store of one worker's records.
//
// Memory comes in fixed chunks. The first is allocated (and zeroed, which
// faults its pages in) before the clock starts; later ones are added once per
// chunk_size records, between two pairs, so no timed interval ever contains an
// allocation, a reallocating copy or a burst of page faults.
class record_buffer {
 public:
  // 64 Ki records of 40 bytes: 2.5 MiB, a couple of seconds of one worker at
  // the fastest rates a single Redis server allows.
  static constexpr std::size_t chunk_size = std::size_t{1} << 16;

  record_buffer() { add_chunk(); }

  void push(const record& r) {
    if (used_ == chunk_size) add_chunk();
    chunks_.back()[used_++] = r;
  }

  std::size_t size() const noexcept { return chunks_.empty() ? 0 : (chunks_.size() - 1) * chunk_size + used_; }

  template <class F>
  void for_each(F&& f) const {
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      const std::size_t n = c + 1 == chunks_.size() ? used_ : chunk_size;
      for (std::size_t i = 0; i < n; ++i) f(chunks_[c][i]);
    }
  }

 private:
  void add_chunk() {
    // make_unique<T[]> value-initialises, i.e. writes every byte now.
    chunks_.push_back(std::make_unique<record[]>(chunk_size));
    used_ = 0;
  }

  std::vector<std::unique_ptr<record[]>> chunks_;
  std::size_t used_ = 0;
};

}  // namespace warden_bench
