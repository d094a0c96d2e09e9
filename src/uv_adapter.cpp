#include "uv_adapter.hpp"

#include <hiredis/async.h>

#include <new>

namespace warden::detail {
namespace {

struct Poller {
  uv_poll_t handle;
  redisAsyncContext* context;
  int events;
};

void on_ready(uv_poll_t* handle, int status, int events) {
  auto* poller = static_cast<Poller*>(handle->data);
  if (status < 0) events = poller->events;  // let hiredis find the error itself
  // hiredis may free the context while handling a read (EOF, error): cleanup()
  // then clears poller->context, so check it before each step.
  if (poller->context != nullptr && (events & UV_READABLE)) redisAsyncHandleRead(poller->context);
  if (poller->context != nullptr && (events & UV_WRITABLE)) redisAsyncHandleWrite(poller->context);
}

void update(Poller* poller, int events) {
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
  update(poller, poller->events | UV_READABLE);
}
void del_read(void* data) {
  auto* poller = static_cast<Poller*>(data);
  update(poller, poller->events & ~UV_READABLE);
}
void add_write(void* data) {
  auto* poller = static_cast<Poller*>(data);
  update(poller, poller->events | UV_WRITABLE);
}
void del_write(void* data) {
  auto* poller = static_cast<Poller*>(data);
  update(poller, poller->events & ~UV_WRITABLE);
}

void cleanup(void* data) {
  auto* poller = static_cast<Poller*>(data);
  poller->context = nullptr;
  uv_poll_stop(&poller->handle);
  uv_close(reinterpret_cast<uv_handle_t*>(&poller->handle),
           [](uv_handle_t* handle) { delete static_cast<Poller*>(handle->data); });
}

}  // namespace

bool attach_to_uv(uv_loop_t* loop, redisAsyncContext* context) {
  if (context->ev.data != nullptr) return false;
  auto* poller = new (std::nothrow) Poller{};
  if (poller == nullptr) return false;
  if (uv_poll_init_socket(loop, &poller->handle, context->c.fd) != 0) {
    delete poller;
    return false;
  }
  poller->handle.data = poller;
  poller->context = context;
  context->ev.addRead = add_read;
  context->ev.delRead = del_read;
  context->ev.addWrite = add_write;
  context->ev.delWrite = del_write;
  context->ev.cleanup = cleanup;
  context->ev.data = poller;
  return true;
}

}  // namespace warden::detail
