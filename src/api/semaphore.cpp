// The public Semaphore handle: input checks, then the operation on the I/O
// thread, whose outcome goes to a future, a completion callback or a waiting
// caller.
#include <warden/error.hpp>
#include <warden/semaphore.hpp>

#include <fmt/format.h>

#include <optional>
#include <type_traits>

#include "api/access.hpp"
#include "api/synchronizer_calls.hpp"
#include "io/event_loop.hpp"
#include "lock/acquire_claim.hpp"
#include "lock/lock_host.hpp"
#include "lock/lost_listeners.hpp"
#include "lock/semaphore_core.hpp"

namespace warden {

using detail::SemaphoreCore;
using std::chrono::milliseconds;

namespace {

using core_ptr = std::shared_ptr<SemaphoreCore>;
using namespace detail::sync_calls;

// ---- the operations ----

enum class count_op { release, available, drain, try_set, add, release_if_exists };

void counting(const core_ptr& core, count_op which, std::int64_t permits, sink<long long> out) {
  static constexpr const char* calls[] = {"release",         "available_permits", "drain_permits",
                                          "try_set_permits", "add_permits",       "release_if_exists"};
  auto call = calls[static_cast<int>(which)];
  // The queries take no count: checked as one permit.
  bool takes_count = which != count_op::available && which != count_op::drain;
  submit<long long>(
      core, call, takes_count ? permits : 1,
      [which, permits](SemaphoreCore& semaphore, sink<long long> out) {
        auto done = [out](std::error_code error, long long value, const std::string& message) {
          out(Outcome<long long>{error, message, value});
        };
        switch (which) {
          case count_op::release:
            return semaphore.release(permits, done);
          case count_op::available:
            return semaphore.available(done);
          case count_op::drain:
            return semaphore.drain(done);
          case count_op::try_set:
            return semaphore.try_set(permits, done);
          case count_op::add:
            return semaphore.add(permits, done);
          case count_op::release_if_exists:
            return semaphore.release_if_exists(permits, done);
        }
      },
      std::move(out));
}

// An acquire: `forever` refuses a wait in the options (acquire() has none).
void acquiring(const core_ptr& core, std::int64_t permits, const lock_options& options, bool forever, sink<bool> out) {
  const char* call = forever ? "acquire" : "try_acquire";
  std::optional<std::string> problem;
  if (options.lease()) {
    problem = "a Semaphore's permits have no lease (a PermitExpirableSemaphore's do)";
  } else if (forever && options.wait()) {
    problem = "acquire waits for ever and takes no wait: use try_acquire for a bounded wait";
  } else if (options.wait() && options.wait()->count() < 0) {
    problem = fmt::format("the wait time must not be negative, got {} ms", options.wait()->count());
  }
  if (core && problem) {
    return deliver<bool>(core, std::move(out),
                         Outcome<bool>{make_error_code(errc::invalid_argument),
                                       core->message(fmt::format("{}: {}; nothing was taken", call, *problem)), false});
  }
  std::optional<milliseconds> wait;
  if (!forever) wait = options.wait().value_or(milliseconds{0});
  submit<bool>(
      core, call, permits,
      [permits, wait, cancel = options.cancel()](SemaphoreCore& semaphore, sink<bool> out) {
        semaphore.acquire(permits, wait, cancel,
                          [out](std::error_code error, bool acquired, const std::string& message) {
                            out(Outcome<bool>{error, message, !error && acquired});
                          });
      },
      std::move(out));
}

// An acquire's future, which gives the permits back if nobody collects them.
template <class T, class Start, class Convert>
AcquireFuture<T> acquire_future(const core_ptr& core, std::int64_t permits, const Start& start, Convert convert) {
  auto claim = std::make_shared<detail::AcquireClaim>([core, permits] {
    counting(core, count_op::release, permits, [core](Outcome<long long> outcome) {
      if (outcome.error) core->client().log(log_level::warning, outcome.message);
    });
  });
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  start([claim, promise, convert](Outcome<bool> outcome) {
    claim->completed(!outcome.error && outcome.value);
    if (outcome.error) return promise->set_exception(std::make_exception_ptr(Error(outcome.error, outcome.message)));
    if constexpr (std::is_void_v<T>) {
      promise->set_value();
    } else {
      promise->set_value(convert(outcome.value));
    }
  });
  auto abandon = [claim]() noexcept {
    try {
      claim->abandon();
    } catch (...) {
      // Not even started (no memory): the permits stay taken.
    }
  };
  return detail::access::future<T>(std::move(future), abandon);
}

auto same = [](auto value) { return value; };
auto as_bool = [](long long value) { return value != 0; };
auto as_count = [](long long value) { return static_cast<std::int64_t>(value); };
auto as_nothing = [](auto) { return 0; };

}  // namespace

Semaphore::Semaphore(std::shared_ptr<detail::SemaphoreCore> core) noexcept : core_(std::move(core)) {}

const std::string& Semaphore::name() const noexcept {
  static const std::string none;
  return core_ ? core_->name_string() : none;
}

void Semaphore::acquire(std::int64_t permits, const lock_options& options) {
  blocking<void, bool>(
      core_, "acquire", [&](sink<bool> out) { acquiring(core_, permits, options, true, std::move(out)); }, as_nothing);
}

bool Semaphore::try_acquire(std::int64_t permits) { return try_acquire(permits, lock_options()); }

bool Semaphore::try_acquire(std::int64_t permits, const lock_options& options) {
  return blocking<bool, bool>(
      core_, "try_acquire", [&](sink<bool> out) { acquiring(core_, permits, options, false, std::move(out)); }, same);
}

void Semaphore::release(std::int64_t permits) {
  blocking<void, long long>(
      core_, "release", [&](sink<long long> out) { counting(core_, count_op::release, permits, std::move(out)); },
      as_nothing);
}

bool Semaphore::release_if_exists(std::int64_t permits) {
  return blocking<bool, long long>(
      core_, "release_if_exists",
      [&](sink<long long> out) { counting(core_, count_op::release_if_exists, permits, std::move(out)); }, as_bool);
}

std::future<bool> Semaphore::release_if_exists_async(std::int64_t permits) {
  return as_future<bool, long long>(
      [&](sink<long long> out) { counting(core_, count_op::release_if_exists, permits, std::move(out)); }, as_bool);
}

void Semaphore::release_if_exists_async(std::int64_t permits, completion<bool> done) {
  counting(core_, count_op::release_if_exists, permits, to_callback<bool, long long>(core_, std::move(done), as_bool));
}

std::int64_t Semaphore::available_permits() const {
  return blocking<std::int64_t, long long>(
      core_, "available_permits", [&](sink<long long> out) { counting(core_, count_op::available, 0, std::move(out)); },
      as_count);
}

bool Semaphore::try_set_permits(std::int64_t permits) {
  return blocking<bool, long long>(
      core_, "try_set_permits",
      [&](sink<long long> out) { counting(core_, count_op::try_set, permits, std::move(out)); }, as_bool);
}

void Semaphore::add_permits(std::int64_t permits) {
  blocking<void, long long>(
      core_, "add_permits", [&](sink<long long> out) { counting(core_, count_op::add, permits, std::move(out)); },
      as_nothing);
}

std::int64_t Semaphore::drain_permits() {
  return blocking<std::int64_t, long long>(
      core_, "drain_permits", [&](sink<long long> out) { counting(core_, count_op::drain, 0, std::move(out)); },
      as_count);
}

AcquireFuture<void> Semaphore::acquire_async(std::int64_t permits, const lock_options& options) {
  auto core = core_;
  return acquire_future<void>(
      core, permits, [&](sink<bool> out) { acquiring(core, permits, options, true, std::move(out)); }, same);
}

void Semaphore::acquire_async(std::int64_t permits, const lock_options& options, completion<void> done) {
  acquiring(core_, permits, options, true, to_callback<void, bool>(core_, std::move(done), same));
}

AcquireFuture<bool> Semaphore::try_acquire_async(std::int64_t permits, const lock_options& options) {
  auto core = core_;
  return acquire_future<bool>(
      core, permits, [&](sink<bool> out) { acquiring(core, permits, options, false, std::move(out)); }, same);
}

void Semaphore::try_acquire_async(std::int64_t permits, const lock_options& options, completion<bool> done) {
  acquiring(core_, permits, options, false, to_callback<bool, bool>(core_, std::move(done), same));
}

std::future<void> Semaphore::release_async(std::int64_t permits) {
  return as_future<void, long long>(
      [&](sink<long long> out) { counting(core_, count_op::release, permits, std::move(out)); }, as_nothing);
}

void Semaphore::release_async(std::int64_t permits, completion<void> done) {
  counting(core_, count_op::release, permits, to_callback<void, long long>(core_, std::move(done), as_nothing));
}

std::future<std::int64_t> Semaphore::available_permits_async() const {
  return as_future<std::int64_t, long long>(
      [&](sink<long long> out) { counting(core_, count_op::available, 0, std::move(out)); }, as_count);
}

void Semaphore::available_permits_async(completion<std::int64_t> done) const {
  counting(core_, count_op::available, 0, to_callback<std::int64_t, long long>(core_, std::move(done), as_count));
}

std::future<bool> Semaphore::try_set_permits_async(std::int64_t permits) {
  return as_future<bool, long long>(
      [&](sink<long long> out) { counting(core_, count_op::try_set, permits, std::move(out)); }, as_bool);
}

void Semaphore::try_set_permits_async(std::int64_t permits, completion<bool> done) {
  counting(core_, count_op::try_set, permits, to_callback<bool, long long>(core_, std::move(done), as_bool));
}

std::future<void> Semaphore::add_permits_async(std::int64_t permits) {
  return as_future<void, long long>(
      [&](sink<long long> out) { counting(core_, count_op::add, permits, std::move(out)); }, as_nothing);
}

void Semaphore::add_permits_async(std::int64_t permits, completion<void> done) {
  counting(core_, count_op::add, permits, to_callback<void, long long>(core_, std::move(done), as_nothing));
}

std::future<std::int64_t> Semaphore::drain_permits_async() {
  return as_future<std::int64_t, long long>(
      [&](sink<long long> out) { counting(core_, count_op::drain, 0, std::move(out)); }, as_count);
}

void Semaphore::drain_permits_async(completion<std::int64_t> done) {
  counting(core_, count_op::drain, 0, to_callback<std::int64_t, long long>(core_, std::move(done), as_count));
}

}  // namespace warden
