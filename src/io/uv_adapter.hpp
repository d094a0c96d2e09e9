// Drives hiredis async contexts from a libuv loop.
#pragma once

#include <uv.h>

#include <cstdint>
#include <vector>

struct redisAsyncContext;

namespace warden::detail {

struct Poller;

// Writes are not started per command. When a connected context has output,
// it is written once at the end of the loop iteration — every command queued
// in that iteration leaves in one write(2), without switching the socket's
// write interest on and off (two epoll_ctl calls and a wake-up per command).
// Only a socket that cannot take everything is polled for writability.
class WriteFlusher {
 public:
  explicit WriteFlusher(uv_loop_t* loop);
  WriteFlusher(const WriteFlusher&) = delete;
  WriteFlusher& operator=(const WriteFlusher&) = delete;

  void schedule(Poller* poller);
  void cancel(Poller* poller);
  // Stops and closes the loop handles (before the loop itself is closed).
  void close();

  // Counts socket events handled, so the event loop can tell a busy spell
  // from an idle one.
  std::uint64_t activity() const { return activity_; }
  void note_activity() { ++activity_; }

 private:
  static void run(uv_handle_t* handle);
  void flush();

  uv_prepare_t prepare_{};  // before the loop blocks: output of timers and tasks
  uv_check_t check_{};      // after I/O callbacks: output they queued
  std::vector<Poller*> pending_;
  std::uint64_t activity_ = 0;
};

// Hooks `context` into `loop`. A poll error is passed on to hiredis as
// readiness, so it reads the socket error and reports the disconnect instead
// of the connection hanging silently (as the adapter shipped with hiredis 0.14
// does). Returns false if the context already had an event library attached.
bool attach_to_uv(uv_loop_t* loop, WriteFlusher& flusher, redisAsyncContext* context);

}  // namespace warden::detail
