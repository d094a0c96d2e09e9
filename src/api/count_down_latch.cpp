// The public CountDownLatch handle: validation, then the operation on the I/O
// thread, whose outcome goes to a future, a completion callback or a waiting
// caller.
#include <warden/count_down_latch.hpp>
#include <warden/error.hpp>

#include <fmt/format.h>

#include "api/lock_calls.hpp"
#include "lock/count_down_latch_core.hpp"
#include "lock/lost_listeners.hpp"

namespace warden {

using detail::CountDownLatchCore;
using std::chrono::milliseconds;

namespace {

using namespace detail::calls;
using core_ptr = std::shared_ptr<CountDownLatchCore>;

std::string moved_latch(std::string_view call) {
  return fmt::format("warden: {} called on a moved-from count-down latch handle", call);
}

// Runs op(latch, done) on the I/O thread, where done converts the core's
// answer with `convert` and tells `out`. Bad input and a closed client are
// told at once.
template <class T, class Op, class Convert>
void run(const core_ptr& core, std::string_view call, std::optional<std::string> problem, Op op, Convert convert,
         sink<T> out) {
  if (!core) return out(failure<T>(make_error_code(errc::invalid_argument), moved_latch(call)));
  if (problem) return out(failure<T>(make_error_code(errc::invalid_argument), core->message(*problem)));
  auto task = [core, op = std::move(op), convert, out]() mutable {
    op(*core, [convert, out](std::error_code error, std::int64_t value, const std::string& message) {
      if (error) return out(failure<T>(error, message));
      out(Outcome<T>{{}, {}, convert(value)});
    });
  };
  if (!core->client().post_operation(std::move(task))) {
    out(failure<T>(make_error_code(errc::shut_down), core->message("the client is shut down")));
  }
}

std::optional<std::string> bad_count(std::int64_t count) {
  if (count > 0) return std::nullopt;
  return fmt::format("the count must be greater than 0, got {}", count);
}

void set_count(const core_ptr& core, std::int64_t count, sink<bool> out) {
  run<bool>(
      core, "try_set_count", bad_count(count),
      [count](CountDownLatchCore& latch, CountDownLatchCore::done_fn done) { latch.try_set_count(count, done); },
      [](std::int64_t value) { return value == 1; }, std::move(out));
}

void count_down(const core_ptr& core, sink<none> out) {
  run<none>(
      core, "count_down", std::nullopt,
      [](CountDownLatchCore& latch, CountDownLatchCore::done_fn done) { latch.count_down(done); },
      [](std::int64_t) { return none{}; }, std::move(out));
}

void count_of(const core_ptr& core, sink<std::int64_t> out) {
  run<std::int64_t>(
      core, "count", std::nullopt,
      [](CountDownLatchCore& latch, CountDownLatchCore::done_fn done) { latch.count(done); },
      [](std::int64_t value) { return value; }, std::move(out));
}

void remove(const core_ptr& core, sink<bool> out) {
  run<bool>(
      core, "remove", std::nullopt,
      [](CountDownLatchCore& latch, CountDownLatchCore::done_fn done) { latch.remove(done); },
      [](std::int64_t value) { return value == 1; }, std::move(out));
}

void wait(const core_ptr& core, std::optional<milliseconds> limit, const cancel_token& cancel, sink<bool> out) {
  std::optional<std::string> problem;
  if (limit && limit->count() < 0) problem = fmt::format("the wait must not be negative, got {} ms", limit->count());
  run<bool>(
      core, "wait", std::move(problem),
      [limit, cancel](CountDownLatchCore& latch, CountDownLatchCore::done_fn done) {
        latch.wait(limit, cancel, std::move(done));
      },
      [](std::int64_t value) { return value == 1; }, std::move(out));
}

// The caller waits for the answer, and may read it itself (leading the loop).
template <class T, class Start>
T blocking(const core_ptr& core, std::string_view call, const Start& start) {
  if (!core) throw Error(errc::invalid_argument, moved_latch(call));
  if (core->client().loop().in_loop_thread()) {
    throw Error(errc::would_deadlock,
                core->message(std::string(call) + " blocks, and was called on the client's I/O thread (inside a "
                                                  "callback); use the _async form there"));
  }
  Promised<T> promised;
  auto future = promised.future();
  {
    detail::EventLoop::CallerWaits in_place;
    start(promised.template sink_for<T>());
    detail::lead_until_ready(core->client().loop(), future);
  }
  return future.get();
}

template <class T, class V = T, class Start>
std::future<T> as_latch_future(const Start& start) {
  Promised<T> promised;
  auto future = promised.future();
  detail::EventLoop::CallerWaits in_place;
  start(promised.template sink_for<V>());
  return future;
}

// To a user's completion callback, guarded (what it throws is logged).
template <class T, class V = T>
sink<V> as_latch_callback(const core_ptr& core, completion<T> done) {
  detail::LockHost* client = core ? &core->client() : nullptr;
  return [client, done = std::move(done)](Outcome<V> outcome) {
    if (outcome.error && client) client->log(log_level::debug, outcome.message);
    auto log = [client](log_level level, const std::string& text) {
      if (client) client->log(level, text);
    };
    if (!done) return;
    if constexpr (std::is_void_v<T>) {
      detail::call_guarded(log, "a completion callback", done, outcome.error);
    } else {
      detail::call_guarded(log, "a completion callback", done, outcome.error, std::move(outcome.value));
    }
  };
}

}  // namespace

CountDownLatch::CountDownLatch(std::shared_ptr<detail::CountDownLatchCore> core) noexcept : core_(std::move(core)) {}

const std::string& CountDownLatch::name() const noexcept {
  static const std::string none;
  return core_ ? core_->name() : none;
}

bool CountDownLatch::try_set_count(std::int64_t count) {
  return blocking<bool>(core_, "try_set_count()", [&](sink<bool> out) { set_count(core_, count, std::move(out)); });
}

void CountDownLatch::count_down() {
  blocking<none>(core_, "count_down()", [&](sink<none> out) { warden::count_down(core_, std::move(out)); });
}

std::int64_t CountDownLatch::count() const {
  return blocking<std::int64_t>(core_, "count()", [&](sink<std::int64_t> out) { count_of(core_, std::move(out)); });
}

bool CountDownLatch::remove() {
  return blocking<bool>(core_, "remove()", [&](sink<bool> out) { warden::remove(core_, std::move(out)); });
}

void CountDownLatch::wait(const cancel_token& cancel) {
  blocking<bool>(core_, "wait()", [&](sink<bool> out) { warden::wait(core_, std::nullopt, cancel, std::move(out)); });
}

bool CountDownLatch::wait_for_ms(milliseconds limit, const cancel_token& cancel) {
  return blocking<bool>(core_, "wait_for()",
                        [&](sink<bool> out) { warden::wait(core_, limit, cancel, std::move(out)); });
}

std::future<bool> CountDownLatch::try_set_count_async(std::int64_t count) {
  return as_latch_future<bool>([&](sink<bool> out) { set_count(core_, count, std::move(out)); });
}

void CountDownLatch::try_set_count_async(std::int64_t count, completion<bool> done) {
  set_count(core_, count, as_latch_callback<bool>(core_, std::move(done)));
}

std::future<void> CountDownLatch::count_down_async() {
  return as_latch_future<void, none>([&](sink<none> out) { warden::count_down(core_, std::move(out)); });
}

void CountDownLatch::count_down_async(completion<void> done) {
  warden::count_down(core_, as_latch_callback<void, none>(core_, std::move(done)));
}

std::future<std::int64_t> CountDownLatch::count_async() const {
  return as_latch_future<std::int64_t>([&](sink<std::int64_t> out) { count_of(core_, std::move(out)); });
}

void CountDownLatch::count_async(completion<std::int64_t> done) const {
  count_of(core_, as_latch_callback<std::int64_t>(core_, std::move(done)));
}

std::future<bool> CountDownLatch::remove_async() {
  return as_latch_future<bool>([&](sink<bool> out) { warden::remove(core_, std::move(out)); });
}

void CountDownLatch::remove_async(completion<bool> done) {
  warden::remove(core_, as_latch_callback<bool>(core_, std::move(done)));
}

std::future<void> CountDownLatch::wait_async(const cancel_token& cancel) {
  return as_latch_future<void, bool>(
      [&](sink<bool> out) { warden::wait(core_, std::nullopt, cancel, std::move(out)); });
}

void CountDownLatch::wait_async(const cancel_token& cancel, completion<void> done) {
  warden::wait(core_, std::nullopt, cancel, as_latch_callback<void, bool>(core_, std::move(done)));
}

std::future<bool> CountDownLatch::wait_for_async(milliseconds limit, const cancel_token& cancel) {
  return as_latch_future<bool>([&](sink<bool> out) { warden::wait(core_, limit, cancel, std::move(out)); });
}

void CountDownLatch::wait_for_async(milliseconds limit, const cancel_token& cancel, completion<bool> done) {
  warden::wait(core_, limit, cancel, as_latch_callback<bool>(core_, std::move(done)));
}

}  // namespace warden
