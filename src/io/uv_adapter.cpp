#include "io/uv_adapter.hpp"

#include <hiredis/async.h>

#include <algorithm>
#include <new>

namespace warden::detail {

struct Poller {
  uv_poll_t handle;
  redisAsyncContext* context;
  WriteFlusher* flusher;
  int events;            // what libuv watches for
  bool flush_pending;    // queued for the end-of-iteration write
  bool flushing;         // inside that write: a further add_write means "socket full"
};

namespace {

void on_ready(uv_poll_t* handle, int status, int events) {
  auto* poller = static_cast<Poller*>(handle->data);
  poller->flusher->note_activity();
  if (status < 0) events = poller->events;  // let hiredis find the error itself
  // hiredis may free the context while handling a read (EOF, error): cleanup()
  // then clears poller->context, so check it before each step.
  if (poller->context != nullptr && (events & UV_READABLE)) redisAsyncHandleRead(poller->context);
  if (poller->context != nullptr && (events & UV_WRITABLE)) redisAsyncHandleWrite(poller->context);
}

void watch(Poller* poller, int events) {
  if (events == poller->events) return;
  poller->events = events;
  if (events == 0) {
    uv_poll_stop(&poller->handle);
  } else {
    uv_poll_start(&poller->handle, events, on_ready);
  }
}

void add_read(void* data) {
  auto* poller = static_cast<Poller*>(data);
  watch(poller, poller->events | UV_READABLE);
}
void del_read(void* data) {
  auto* poller = static_cast<Poller*>(data);
  watch(poller, poller->events & ~UV_READABLE);
}
void add_write(void* data) {
  auto* poller = static_cast<Poller*>(data);
  bool connected = poller->context != nullptr && (poller->context->c.flags & REDIS_CONNECTED) != 0;
  if (connected && !poller->flushing) {
    // Output of a connected context: write it at the end of this iteration.
    poller->flusher->schedule(poller);
    return;
  }
  // Connecting (writability means "connected"), or the socket was full.
  watch(poller, poller->events | UV_WRITABLE);
}
void del_write(void* data) {
  auto* poller = static_cast<Poller*>(data);
  watch(poller, poller->events & ~UV_WRITABLE);
}

void cleanup(void* data) {
  auto* poller = static_cast<Poller*>(data);
  poller->context = nullptr;
  poller->flusher->cancel(poller);
  uv_poll_stop(&poller->handle);
  uv_close(reinterpret_cast<uv_handle_t*>(&poller->handle),
           [](uv_handle_t* handle) { delete static_cast<Poller*>(handle->data); });
}

}  // namespace

WriteFlusher::WriteFlusher(uv_loop_t* loop) {
  uv_prepare_init(loop, &prepare_);
  uv_check_init(loop, &check_);
  prepare_.data = this;
  check_.data = this;
  // Unreferenced: they never keep the loop alive by themselves.
  uv_unref(reinterpret_cast<uv_handle_t*>(&prepare_));
  uv_unref(reinterpret_cast<uv_handle_t*>(&check_));
  uv_prepare_start(&prepare_, [](uv_prepare_t* handle) { static_cast<WriteFlusher*>(handle->data)->flush(); });
  uv_check_start(&check_, [](uv_check_t* handle) { static_cast<WriteFlusher*>(handle->data)->flush(); });
}

void WriteFlusher::schedule(Poller* poller) {
  if (poller->flush_pending) return;
  poller->flush_pending = true;
  pending_.push_back(poller);
}

void WriteFlusher::cancel(Poller* poller) {
  if (!poller->flush_pending) return;
  poller->flush_pending = false;
  pending_.erase(std::remove(pending_.begin(), pending_.end(), poller), pending_.end());
}

void WriteFlusher::flush() {
  // Writing can fail and free a context, which cancels its own entry: take
  // one poller at a time from the list rather than iterating it.
  while (!pending_.empty()) {
    Poller* poller = pending_.back();
    pending_.pop_back();
    poller->flush_pending = false;
    if (poller->context == nullptr) continue;
    poller->flushing = true;
    redisAsyncContext* context = poller->context;
    redisAsyncHandleWrite(context);
    // The context may be gone now (write error): the poller outlives it
    // until its close callback, which runs on a later iteration.
    poller->flushing = false;
  }
}

void WriteFlusher::close() {
  pending_.clear();
  uv_close(reinterpret_cast<uv_handle_t*>(&prepare_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&check_), nullptr);
}

bool attach_to_uv(uv_loop_t* loop, WriteFlusher& flusher, redisAsyncContext* context) {
  if (context->ev.data != nullptr) return false;
  auto* poller = new (std::nothrow) Poller{};
  if (poller == nullptr) return false;
  if (uv_poll_init_socket(loop, &poller->handle, context->c.fd) != 0) {
    delete poller;
    return false;
  }
  poller->handle.data = poller;
  poller->context = context;
  poller->flusher = &flusher;
  context->ev.addRead = add_read;
  context->ev.delRead = del_read;
  context->ev.addWrite = add_write;
  context->ev.delWrite = del_write;
  context->ev.cleanup = cleanup;
  context->ev.data = poller;
  return true;
}

}  // namespace warden::detail
