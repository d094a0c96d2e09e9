// Drives a hiredis async context from a libuv loop.
#pragma once

#include <uv.h>

struct redisAsyncContext;

namespace warden::detail {

// Hooks `context` into `loop`: hiredis asks for read/write readiness and libuv
// reports it. Unlike the adapter shipped with hiredis 0.14, a poll error is
// passed on to hiredis as readiness, so it reads the socket error and reports
// the disconnect instead of the connection hanging silently.
// Returns false if the context already had an event library attached.
bool attach_to_uv(uv_loop_t* loop, redisAsyncContext* context);

}  // namespace warden::detail
