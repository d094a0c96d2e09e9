// warden-torture-worker: one contending process of the torture test.
//
//   warden-torture-worker KIND MODE URLS RUN_DIR SLOT THREADS END_NS LOCKS
//                         WATCHDOG_MS COMMAND_TIMEOUT_MS FAIR_WAIT_MS SEED
//                         [LATE_WAKEUP_MS [HEALTH_CHECK_MS [PAUSE_MS]]]
//
// KIND: lock | fair | fenced | spin | rwlock | redlock | semaphore | pes. MODE: locked, or unlocked for the
// negative control (the same sections with no lock taken, reported valid), or
// over-release (semaphore: the negative control of the permit check, every
// fourth release gives two permits back for the one taken), or
// sweep (fair only, after the others stopped: try each lock once every
// FAIR_WAIT_MS / 4, releasing it when taken, until one round takes every lock
// or END_NS passes — so that gone waiters are dropped from the queues; pes:
// read acquired_permits() of every semaphore every 100 ms, which reclaims
// expired permits, until none is held or END_NS passes).
// semaphore, pes: each LOCK is a semaphore whose permits the controller set;
// a section holds one permit (try_acquire_for(wait, 1) / release(1); for pes
// a permit kept by the watchdog, or one with a fixed lease of 400-1400 ms,
// half and half). A permit is valid: a Semaphore's always (no owner, no
// lease); a kept one until the semaphore's valid_until(id); a leased one
// until its acquire call's start plus the lease, less 2 ms (the server
// stores expiries in whole ms). Sections write no counter (N holders at once
// are allowed); the controller checks at most N valid holders at once. The
// slot of a thread is 2 while its acquire is in flight and 3 while its
// release is, so that the controller can kill a semaphore worker at a moment
// when it knows exactly which permits the worker held.
// URLS: space-separated URLs, one per Client (three redis:// for redlock,
// else one: redis:// or a redis+cluster:// whose seeds are comma-separated).
// LOCKS: the comma-separated lock names, each NAME or NAME@NUMBER (its number
// in the records and of its counter file; default: its position).
// THREADS threads each loop until END_NS (CLOCK_MONOTONIC): pick one of the
// locks, try to take it, and inside the section read the lock's counter file,
// sleep, and write it back plus one if the hold is still valid. Every section
// and every blocking call is appended to RUN_DIR/worker-<pid>.rec (see
// torture_record.hpp); warden's log goes to RUN_DIR/worker-<pid>.log.
// All THREADS share this process's Client(s), as threads of one application
// would: a hand-off between two threads of one Client is a path of its own
// (both sides on one I/O thread), and the liveness check times it.
// LATE_WAKEUP_MS (default 0) is the liveness check's negative control: when
// set, every thread records each acquire that a wait granted that much later
// than it returned, as a waiter woken late would (the lock held meanwhile).
// HEALTH_CHECK_MS: Config::health_check_interval (default 1000). PAUSE_MS
// (default 0): after each hold a thread pauses up to that long.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <warden/red_lock.hpp>
#include <warden/warden.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "torture_record.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;
using warden::torture::monotonic_ns;

// Appends whole lines to one file; a line is one write(), so concurrent
// threads never interleave within a line and a kill leaves no half line.
class record_file {
 public:
  explicit record_file(const std::string& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error("cannot open " + path);
  }
  ~record_file() { ::close(fd_); }
  void line(const std::string& text) const {
    std::string whole = text + "\n";
    // A short write of a few dozen bytes to a regular file does not happen
    // short of a full disk; nothing useful to do about it here.
    [[maybe_unused]] auto written = ::write(fd_, whole.data(), whole.size());
  }

 private:
  int fd_;
};

std::int64_t to_ns(steady::time_point t) {
  if (t <= steady::time_point{}) return 0;  // no hold: valid_until() is the clock's epoch
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::string error_name(const std::exception& error) {
  std::string name = "exception";
  if (auto* system = dynamic_cast<const std::system_error*>(&error)) name = system->code().message();
  std::replace(name.begin(), name.end(), ' ', '_');
  return name;
}

// One lock as the loop sees it, whatever its kind.
struct target {
  std::function<bool(milliseconds wait)> try_for;
  std::function<void()> unlock;
  std::function<steady::time_point()> valid_until;
};

// A semaphore permit held by one thread (semaphore, pes): its id (pes) and
// the bound of a permit with a fixed lease.
struct permit {
  std::string id;
  bool kept = false;
  steady::time_point leased_until{};
};

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, by);) parts.push_back(part);
  return parts;
}

// The counter of one lock: a little-endian int64 at offset 0 of a file in the
// run directory, read and written with pread/pwrite (no locking of its own).
std::int64_t read_counter(int fd) {
  std::int64_t value = 0;
  if (::pread(fd, &value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) value = 0;
  return value;
}

void write_counter(int fd, std::int64_t value) {
  [[maybe_unused]] auto written = ::pwrite(fd, &value, sizeof value, 0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 13 || argc > 16) {
    std::cerr << "usage: warden-torture-worker KIND MODE URLS RUN_DIR SLOT THREADS END_NS LOCKS "
                 "WATCHDOG_MS COMMAND_TIMEOUT_MS FAIR_WAIT_MS SEED [LATE_WAKEUP_MS [HEALTH_CHECK_MS [PAUSE_MS]]]\n";
    return 2;
  }
  const std::string kind = argv[1];
  const bool locked = std::string(argv[2]) == "locked" || std::string(argv[2]) == "over-release";
  const auto urls = split(argv[3], ' ');
  const std::string run_dir = argv[4];
  const int slot = std::atoi(argv[5]);
  if (kind == "pes" && std::string(argv[2]) != "sweep") {
    // For the controller's check that the clock skew took (clock_skew.cpp;
    // the sweeper, which runs after the workers, is left unskewed).
    std::ofstream(run_dir + "/wall-offset-" + std::to_string(slot))
        << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch() -
                                                            std::chrono::steady_clock::now().time_since_epoch())
               .count()
        << '\n';
  }
  const int threads = std::atoi(argv[6]);
  const std::int64_t end_ns = std::atoll(argv[7]);
  // NAME or NAME@NUMBER: NUMBER (default: the position in the list) is the
  // lock's number in the records and names its counter file.
  std::vector<std::string> lock_names;
  std::vector<int> lock_numbers;
  for (const auto& entry : split(argv[8], ',')) {
    auto at = entry.rfind('@');
    lock_names.push_back(entry.substr(0, at));
    lock_numbers.push_back(at == std::string::npos ? static_cast<int>(lock_numbers.size())
                                                   : std::atoi(entry.c_str() + at + 1));
  }
  const int lock_count = static_cast<int>(lock_names.size());
  const milliseconds watchdog{std::atoll(argv[9])};
  const milliseconds command_timeout{std::atoll(argv[10])};
  const milliseconds fair_wait{std::atoll(argv[11])};
  const unsigned seed = static_cast<unsigned>(std::atoll(argv[12]));
  const milliseconds late_wakeup{argc >= 14 ? std::atoll(argv[13]) : 0};
  const milliseconds health_check{argc >= 15 ? std::atoll(argv[14]) : 1000};
  const int pause_ms = argc >= 16 ? std::atoi(argv[15]) : 0;

  const std::string pid = std::to_string(::getpid());
  record_file records(run_dir + "/worker-" + pid + ".rec");
  auto log = std::make_shared<record_file>(run_dir + "/worker-" + pid + ".log");

  // The slots the controller looks at to find a holder to stop.
  int slot_fd = ::open((run_dir + "/slots").c_str(), O_RDWR | O_CLOEXEC);
  void* mapped = slot_fd < 0 ? MAP_FAILED
                             : ::mmap(nullptr, warden::torture::max_slots * sizeof(int), PROT_READ | PROT_WRITE,
                                      MAP_SHARED, slot_fd, 0);
  if (mapped == MAP_FAILED) {
    std::cerr << "worker: cannot map the slot file\n";
    return 2;
  }
  auto* slots = static_cast<std::atomic<int>*>(mapped);

  std::vector<int> counter_fds;
  for (int i = 0; i < lock_count; ++i) {
    std::string path = run_dir + "/counter-" + std::to_string(lock_numbers[i]);
    counter_fds.push_back(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  }

  // warden's warnings and errors go to the log; WARDEN_TORTURE_DEBUG=1 adds
  // its info and debug lines (redirections followed, tables read).
  const char* debug = std::getenv("WARDEN_TORTURE_DEBUG");
  const auto least = debug && *debug && *debug != '0' ? warden::log_level::debug : warden::log_level::warning;
  std::vector<std::unique_ptr<warden::Client>> clients;
  for (const auto& url : urls) {
    auto config = warden::Config::from_url(url);
    config.lock_watchdog_timeout = watchdog;
    config.command_timeout = command_timeout;
    config.connect_timeout = command_timeout;
    config.fair_lock_wait_timeout = fair_wait;
    config.retry_backoff_max = 200ms;
    config.health_check_interval = health_check;
    config.logger = [log, least](warden::log_level level, std::string_view message) {
      if (level < least) return;
      log->line(std::to_string(monotonic_ns()) + " " + std::string(message));
    };
    clients.push_back(std::make_unique<warden::Client>(config));
  }

  if (std::string(argv[2]) == "sweep" && kind == "pes") {
    // Every script reclaims expired permits first: reading the held count
    // until it is zero returns those of killed holders to the pool.
    std::vector<warden::PermitExpirableSemaphore> semaphores;
    for (const auto& name : lock_names) semaphores.push_back(clients[0]->get_permit_expirable_semaphore(name));
    while (monotonic_ns() < end_ns) {
      long held = 0;
      for (auto& semaphore : semaphores) {
        try {
          held += static_cast<long>(semaphore.acquired_permits());
        } catch (const std::exception& error) {
          ++held;
          log->line(std::to_string(monotonic_ns()) + " sweep: " + error.what());
        }
      }
      if (held == 0) return 0;
      std::this_thread::sleep_for(100ms);
    }
    return 1;
  }

  if (std::string(argv[2]) == "sweep") {
    // A fair try_lock() drops gone waiters from the head of the queue and
    // succeeds only when nobody is left ahead of it: once every lock is taken
    // in one round, every queue is empty.
    std::vector<warden::FairLock> locks;
    for (const auto& name : lock_names) locks.push_back(clients[0]->get_fair_lock(name));
    while (monotonic_ns() < end_ns) {
      bool all = true;
      for (auto& lock : locks) {
        try {
          if (lock.try_lock()) {
            lock.unlock();
          } else {
            all = false;
          }
        } catch (const std::exception& error) {
          all = false;
          log->line(std::to_string(monotonic_ns()) + " sweep: " + error.what());
        }
      }
      if (all) return 0;
      std::this_thread::sleep_for(fair_wait / 4);
    }
    return 1;
  }

  std::atomic<int> crashed_threads{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 random(seed * 7919u + static_cast<unsigned>(t));
      const std::string who = pid + " " + std::to_string(t);
      std::atomic<int>& my_slot = slots[slot * threads + t];
      my_slot.store(0);
      auto uniform = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(random); };
      // Each thread builds its own handles (handles are thread-safe, but this
      // keeps the members of a RedLock per thread as a user would).
      std::vector<warden::Lock> plain, readers, writers;
      std::vector<warden::FencedLock> fenced;
      std::vector<std::unique_ptr<warden::RedLock>> red;
      std::vector<warden::Semaphore> semaphores;
      std::vector<warden::PermitExpirableSemaphore> pes;
      const bool permits = kind == "semaphore" || kind == "pes";
      long releases = 0;  // over-release: every fourth gives two permits back
      for (int i = 0; i < lock_count; ++i) {
        const std::string& name = lock_names[i];
        if (kind == "lock") plain.push_back(clients[0]->get_lock(name));
        if (kind == "fair") plain.push_back(clients[0]->get_fair_lock(name));
        if (kind == "spin") plain.push_back(clients[0]->get_spin_lock(name));
        if (kind == "fenced") fenced.push_back(clients[0]->get_fenced_lock(name));
        if (kind == "rwlock") {
          auto rw = clients[0]->get_read_write_lock(name);
          readers.push_back(rw.read_lock());
          writers.push_back(rw.write_lock());
        }
        if (kind == "semaphore") semaphores.push_back(clients[0]->get_semaphore(name));
        if (kind == "pes") pes.push_back(clients[0]->get_permit_expirable_semaphore(name));
        if (kind == "redlock") {
          std::vector<warden::Lock> members;
          for (auto& client : clients) members.push_back(client->get_lock(name));
          red.push_back(std::make_unique<warden::RedLock>(std::move(members)));
        }
      }
      try {
        while (monotonic_ns() < end_ns) {
          int index = uniform(0, lock_count - 1);
          const std::string number = std::to_string(lock_numbers[index]);
          char mode = 'x';
          target lock;
          std::int64_t token = 0;  // fenced: the hold's token
          permit held;             // semaphore, pes
          if (kind == "semaphore") {
            warden::Semaphore& one = semaphores[index];
            const bool over = std::string(argv[2]) == "over-release";
            lock = {[&one](milliseconds wait) { return one.try_acquire_for(wait, 1); },
                    [&one, over, &releases] { one.release(over && ++releases % 4 == 0 ? 2 : 1); },
                    [] { return steady::time_point::max(); }};
          } else if (kind == "pes") {
            warden::PermitExpirableSemaphore& one = pes[index];
            held.kept = uniform(0, 1) == 0;
            const milliseconds lease{uniform(400, 1400)};
            lock = {[&one, &held, lease](milliseconds wait) {
                      const auto start = steady::now();
                      auto got = held.kept ? one.try_acquire(warden::lock_options().with_wait(wait))
                                           : one.try_acquire_for(wait, lease);
                      if (!got) return false;
                      held.id = *got;
                      if (!held.kept) held.leased_until = start + lease - 2ms;
                      return true;
                    },
                    [&one, &held] { one.release(held.id); },
                    [&one, &held] { return held.kept ? one.valid_until(held.id) : held.leased_until; }};
          } else if (kind == "rwlock") {
            mode = uniform(0, 9) < 6 ? 'r' : 'w';
            warden::Lock& half = mode == 'r' ? readers[index] : writers[index];
            lock = {[&half](milliseconds wait) { return half.try_lock_for(wait); }, [&half] { half.unlock(); },
                    [&half] { return half.valid_until(); }};
          } else if (kind == "redlock") {
            warden::RedLock& whole = *red[index];
            lock = {[&whole](milliseconds wait) { return whole.try_lock_for(wait); }, [&whole] { whole.unlock(); },
                    [&whole] { return whole.valid_until(); }};
          } else if (kind == "fenced") {
            warden::FencedLock& one = fenced[index];
            lock = {[&one, &token](milliseconds wait) {
                      auto got = one.try_lock_and_get_token(warden::lock_options().with_wait(wait));
                      token = got.value_or(0);
                      return got.has_value();
                    },
                    [&one] { one.unlock(); }, [&one] { return one.valid_until(); }};
          } else {
            warden::Lock& one = plain[index];
            lock = {[&one](milliseconds wait) { return one.try_lock_for(wait); }, [&one] { one.unlock(); },
                    [&one] { return one.valid_until(); }};
          }

          // Acquire: a zero wait (one attempt) now and then, else a short wait.
          milliseconds wait{uniform(0, 4) == 0 ? 0 : uniform(100, 1500)};
          bool acquired = true;
          if (locked) {
            std::string result = "ok";
            if (permits) {
              slots[warden::torture::permit_lock_slots + slot * threads + t].store(index);
              my_slot.store(2);
            }
            std::int64_t start = monotonic_ns();
            try {
              acquired = lock.try_for(wait);
              if (!acquired) result = "no";
            } catch (const std::exception& error) {
              acquired = false;
              result = error_name(error);
              log->line(std::to_string(monotonic_ns()) + " try_lock_for: " + error.what());
            }
            // The negative control of the liveness check: this waiter takes
            // the lock as late as a lost wake-up would make it.
            if (permits) my_slot.store(acquired ? 1 : 0);
            if (acquired && wait.count() > 0 && late_wakeup.count() > 0) std::this_thread::sleep_for(late_wakeup);
            const char* call_name = permits ? (wait.count() == 0 ? "try_acquire" : "try_acquire_for")
                                            : (wait.count() == 0 ? "try_lock" : "try_lock_for");
            records.line("C " + std::string(call_name) + " " + std::to_string(start) + " " +
                         std::to_string(monotonic_ns()) + " " + std::to_string(wait.count()) + " " + result + " " +
                         who + " " + number + " " + mode + (kind == "pes" && acquired ? " " + held.id : std::string()));
            if (!acquired) continue;
          }

          // The critical section. Its recorded interval lies inside the hold:
          // it starts after the acquire returned and ends before unlock().
          my_slot.store(1);
          std::int64_t enter = monotonic_ns();
          bool wrote = false, write_valid = false;
          if (mode != 'r' && !permits) {
            std::int64_t value = read_counter(counter_fds[index]);
            std::this_thread::sleep_for(milliseconds{uniform(1, 6)});
            // Check validity before the write with room to spare, as a careful
            // user would; a holder stopped right here is caught by write_valid.
            if (!locked || steady::now() + 20ms < lock.valid_until()) {
              records.line("I " + number + " " + who);
              write_counter(counter_fds[index], value + 1);
              wrote = true;
              write_valid = !locked || steady::now() < lock.valid_until();
            }
          }
          // The rest of the work, in steps, and now and then a long one: a
          // holder stopped and resumed mid-section goes on working for a while,
          // time for its client to react to what happened meanwhile before the
          // section's validity is read at its end.
          const bool long_section = uniform(0, 9) == 0;
          for (int step = 0, steps = long_section ? 6 : uniform(1, 3); step < steps; ++step)
            std::this_thread::sleep_for(milliseconds{long_section ? uniform(20, 40) : uniform(1, 6)});
          std::int64_t exit = monotonic_ns();
          steady::time_point valid_until = locked ? lock.valid_until() : steady::time_point::max();
          // A permit is still held until the release starts (slot 3 then).
          if (!permits) my_slot.store(0);
          records.line("S " + number + " " + mode + " " + std::to_string(enter) + " " + std::to_string(exit) + " " +
                       std::to_string(locked ? to_ns(valid_until) : std::numeric_limits<std::int64_t>::max()) + " " +
                       (wrote ? "1" : "0") + " " + (write_valid ? "1" : "0") + " " + who + " " + std::to_string(token));

          if (locked) {
            std::string result = "ok";
            // pes: whether the release was answered while the permit was
            // still valid by the bound read before it (the release stops a
            // kept permit's renewal, so that bound is its last): the server
            // ran it before the answer came, so a refusal as expired then
            // means it reclaimed a permit its holder had every right to.
            const steady::time_point bound = kind == "pes" ? lock.valid_until() : steady::time_point{};
            if (permits) my_slot.store(3);
            std::int64_t start = monotonic_ns();
            try {
              lock.unlock();
            } catch (const std::exception& error) {
              result = error_name(error);
              log->line(std::to_string(monotonic_ns()) + " unlock: " + error.what());
            }
            const bool valid_at_release = steady::now() < bound;
            if (permits) my_slot.store(0);
            records.line("C " + std::string(permits ? "release " : "unlock ") + std::to_string(start) + " " +
                         std::to_string(monotonic_ns()) + " 0 " + result + " " + who + " " + number + " " + mode +
                         (kind == "pes"
                              ? std::string(valid_at_release ? " 1" : " 0") + (held.kept ? " kept" : " leased")
                              : std::string()));
          }
          if (!locked) std::this_thread::sleep_for(milliseconds{uniform(0, 2)});
          // Between two holds, other work for a while: the lock free, and
          // nobody on this Client waiting for it.
          if (pause_ms > 0) std::this_thread::sleep_for(milliseconds{uniform(0, pause_ms)});
        }
      } catch (const std::exception& error) {
        log->line(std::to_string(monotonic_ns()) + " thread " + std::to_string(t) + " died: " + error.what());
        ++crashed_threads;
      }
    });
  }
  for (auto& worker : workers) worker.join();
  return crashed_threads == 0 ? 0 : 1;
}
