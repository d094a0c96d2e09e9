// The public PermitExpirableSemaphore handle: input checks, then the
// operation on the I/O thread, whose outcome goes to a future, a completion
// callback or a waiting caller.
#include <warden/error.hpp>
#include <warden/permit_expirable_semaphore.hpp>

#include <fmt/format.h>

#include "api/access.hpp"
#include "api/synchronizer_calls.hpp"
#include "base/limits.hpp"
#include "lock/acquire_claim.hpp"
#include "lock/permit_keeper.hpp"
#include "lock/permit_semaphore_core.hpp"

namespace warden {

using detail::PermitSemaphoreCore;
using std::chrono::milliseconds;

namespace {

using namespace detail::sync_calls;
using core_ptr = std::shared_ptr<PermitSemaphoreCore>;
using permit = std::optional<std::string>;

// A permit id is what acquire answered: 32 hex digits (a Redisson id is the
// same), never empty.
std::optional<std::string> id_problem(const std::string& id) {
  if (id.empty()) return std::string("the permit id must not be empty");
  return std::nullopt;
}

void acquiring(const core_ptr& core, const lock_options& options, bool forever, sink<permit> out) {
  const char* call = forever ? "acquire" : "try_acquire";
  std::optional<std::string> problem;
  if (forever && options.wait()) {
    problem = "acquire waits for ever and takes no wait: use try_acquire for a bounded wait";
  } else if (options.wait() && options.wait()->count() < 0) {
    problem = fmt::format("the wait time must not be negative, got {} ms", options.wait()->count());
  } else if (auto lease = detail::lease_problem(options.lease())) {
    problem = *lease;
  }
  if (core && problem) {
    return deliver<permit>(
        core, std::move(out),
        Outcome<permit>{make_error_code(errc::invalid_argument),
                        core->message(fmt::format("{}: {}; nothing was taken", call, *problem)), std::nullopt});
  }
  std::optional<milliseconds> wait;
  if (!forever) wait = options.wait().value_or(milliseconds{0});
  submit<permit>(
      core, call, 1,
      [wait, lease = options.lease(), cancel = options.cancel()](PermitSemaphoreCore& semaphore, sink<permit> out) {
        semaphore.acquire(lease, wait, cancel,
                          [out](std::error_code error, const permit& id, const std::string& message) {
                            out(Outcome<permit>{error, message, error ? std::nullopt : id});
                          });
      },
      std::move(out));
}

enum class count_op { available, acquired, try_set, set };

void counting(const core_ptr& core, count_op which, std::int64_t permits, sink<long long> out) {
  static constexpr const char* calls[] = {"available_permits", "acquired_permits", "try_set_permits", "set_permits"};
  bool takes_count = which == count_op::try_set || which == count_op::set;
  submit<long long>(
      core, calls[static_cast<int>(which)], takes_count ? permits : 1,
      [which, permits](PermitSemaphoreCore& semaphore, sink<long long> out) {
        auto done = [out](std::error_code error, long long value, const std::string& message) {
          out(Outcome<long long>{error, message, value});
        };
        switch (which) {
          case count_op::available:
            return semaphore.available(done);
          case count_op::acquired:
            return semaphore.acquired(done);
          case count_op::try_set:
            return semaphore.try_set(permits, done);
          case count_op::set:
            return semaphore.set(permits, done);
        }
      },
      std::move(out));
}

// A release or a lease update of permit `id`: the script's answer (1 done,
// 0 not held, -1 expired). `strict`: not held is an error.
void on_permit(const core_ptr& core, const char* call, const std::string& id, std::optional<milliseconds> lease,
               bool update, bool strict, sink<bool> out) {
  if (core) {
    std::optional<std::string> problem = id_problem(id);
    if (!problem && update) problem = detail::lease_problem(lease);
    if (problem) {
      return deliver<bool>(
          core, std::move(out),
          Outcome<bool>{make_error_code(errc::invalid_argument),
                        core->message(fmt::format("{}: {}; nothing was changed", call, *problem)), false});
    }
  }
  submit<bool>(
      core, call, 1,
      [id, lease, update, strict, call](PermitSemaphoreCore& semaphore, sink<bool> out) {
        auto done = [&semaphore, id, strict, call, out](std::error_code error, long long answer,
                                                        const std::string& message) {
          if (error) return out(Outcome<bool>{error, message, false});
          if (answer == 1 || !strict) return out(Outcome<bool>{{}, {}, answer == 1});
          auto code = answer == -1 ? errc::lease_expired : errc::not_owner;
          auto why = answer == -1 ? "its lease had run out (it went back to the pool)"
                                  : "no permit with that id is held (released already, or never taken)";
          out(Outcome<bool>{make_error_code(code), semaphore.message(fmt::format("{} of permit {}: {}", call, id, why)),
                            false});
        };
        if (update) return semaphore.update_lease(id, lease, done);
        semaphore.release(id, done);
      },
      std::move(out));
}

// The time left on permit `id`: nullopt for a permit that never expires; a
// permit not held is errc::not_owner, as for release().
using lease_left = std::optional<milliseconds>;

void reading_lease(const core_ptr& core, const std::string& id, sink<lease_left> out) {
  const char* call = "lease_time";
  if (core) {
    if (auto problem = id_problem(id)) {
      return deliver<lease_left>(
          core, std::move(out),
          Outcome<lease_left>{make_error_code(errc::invalid_argument),
                              core->message(fmt::format("{}: {}", call, *problem)), std::nullopt});
    }
  }
  submit<lease_left>(
      core, call, 1,
      [id, call](PermitSemaphoreCore& semaphore, sink<lease_left> out) {
        semaphore.lease_time(id, [&semaphore, id, call, out](std::error_code error, long long answer,
                                                             const std::string& message) {
          if (error) return out(Outcome<lease_left>{error, message, std::nullopt});
          if (answer == -1) return out(Outcome<lease_left>{{}, {}, std::nullopt});
          if (answer >= 0) return out(Outcome<lease_left>{{}, {}, milliseconds{answer}});
          out(Outcome<lease_left>{
              make_error_code(errc::not_owner),
              semaphore.message(fmt::format("{} of permit {}: no permit with that id is held (released, expired, or "
                                            "never taken)",
                                            call, id)),
              std::nullopt});
        });
      },
      std::move(out));
}

template <class T, class Start, class Convert>
AcquireFuture<T> acquire_future(const core_ptr& core, const Start& start, Convert convert) {
  auto taken = std::make_shared<std::string>();
  auto claim = std::make_shared<detail::AcquireClaim>([core, taken] {
    on_permit(core, "release", *taken, std::nullopt, false, false, [core](Outcome<bool> outcome) {
      if (outcome.error) core->client().log(log_level::warning, outcome.message);
    });
  });
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  start([claim, promise, convert, taken](Outcome<permit> outcome) {
    bool held = !outcome.error && outcome.value;
    if (held) *taken = *outcome.value;
    claim->completed(held);
    if (outcome.error) return promise->set_exception(std::make_exception_ptr(Error(outcome.error, outcome.message)));
    promise->set_value(convert(outcome.value));
  });
  auto abandon = [claim]() noexcept {
    try {
      claim->abandon();
    } catch (...) {
      // Not even started (no memory): the permit expires with its lease, if any.
    }
  };
  return detail::access::future<T>(std::move(future), abandon);
}

auto same = [](auto value) { return value; };
auto as_id = [](const permit& id) { return id.value_or(std::string()); };
auto as_count = [](long long value) { return static_cast<std::int64_t>(value); };
auto as_bool = [](long long value) { return value != 0; };
auto as_nothing = [](auto) { return 0; };

}  // namespace

PermitExpirableSemaphore::PermitExpirableSemaphore(std::shared_ptr<detail::PermitSemaphoreCore> core) noexcept
    : core_(std::move(core)) {}

const std::string& PermitExpirableSemaphore::name() const noexcept {
  static const std::string none;
  return core_ ? core_->name_string() : none;
}

std::string PermitExpirableSemaphore::acquire(const lock_options& options) {
  return blocking<std::string, permit>(
      core_, "acquire", [&](sink<permit> out) { acquiring(core_, options, true, std::move(out)); }, as_id);
}

std::optional<std::string> PermitExpirableSemaphore::try_acquire(const lock_options& options) {
  return blocking<permit, permit>(
      core_, "try_acquire", [&](sink<permit> out) { acquiring(core_, options, false, std::move(out)); }, same);
}

void PermitExpirableSemaphore::release(const std::string& id) {
  blocking<void, bool>(
      core_, "release",
      [&](sink<bool> out) { on_permit(core_, "release", id, std::nullopt, false, true, std::move(out)); }, as_nothing);
}

bool PermitExpirableSemaphore::try_release(const std::string& id) {
  return blocking<bool, bool>(
      core_, "try_release",
      [&](sink<bool> out) { on_permit(core_, "try_release", id, std::nullopt, false, false, std::move(out)); }, same);
}

bool PermitExpirableSemaphore::update_lease_ms(const std::string& id, milliseconds lease) {
  return blocking<bool, bool>(
      core_, "update_lease_time",
      [&](sink<bool> out) { on_permit(core_, "update_lease_time", id, lease, true, false, std::move(out)); }, same);
}

std::optional<milliseconds> PermitExpirableSemaphore::lease_time(const std::string& id) const {
  return blocking<lease_left, lease_left>(
      core_, "lease_time", [&](sink<lease_left> out) { reading_lease(core_, id, std::move(out)); }, same);
}

std::future<std::optional<milliseconds>> PermitExpirableSemaphore::lease_time_async(const std::string& id) const {
  return as_future<lease_left, lease_left>([&](sink<lease_left> out) { reading_lease(core_, id, std::move(out)); },
                                           same);
}

void PermitExpirableSemaphore::lease_time_async(const std::string& id,
                                                completion<std::optional<milliseconds>> done) const {
  reading_lease(core_, id, to_callback<lease_left, lease_left>(core_, std::move(done), same));
}

std::int64_t PermitExpirableSemaphore::available_permits() const {
  return blocking<std::int64_t, long long>(
      core_, "available_permits", [&](sink<long long> out) { counting(core_, count_op::available, 0, std::move(out)); },
      as_count);
}

std::int64_t PermitExpirableSemaphore::acquired_permits() const {
  return blocking<std::int64_t, long long>(
      core_, "acquired_permits", [&](sink<long long> out) { counting(core_, count_op::acquired, 0, std::move(out)); },
      as_count);
}

bool PermitExpirableSemaphore::try_set_permits(std::int64_t permits) {
  return blocking<bool, long long>(
      core_, "try_set_permits",
      [&](sink<long long> out) { counting(core_, count_op::try_set, permits, std::move(out)); }, as_bool);
}

void PermitExpirableSemaphore::set_permits(std::int64_t permits) {
  blocking<void, long long>(
      core_, "set_permits", [&](sink<long long> out) { counting(core_, count_op::set, permits, std::move(out)); },
      as_nothing);
}

AcquireFuture<std::string> PermitExpirableSemaphore::acquire_async(const lock_options& options) {
  auto core = core_;
  return acquire_future<std::string>(
      core, [&](sink<permit> out) { acquiring(core, options, true, std::move(out)); }, as_id);
}

void PermitExpirableSemaphore::acquire_async(const lock_options& options, completion<std::string> done) {
  acquiring(core_, options, true, to_callback<std::string, permit>(core_, std::move(done), as_id));
}

AcquireFuture<std::optional<std::string>> PermitExpirableSemaphore::try_acquire_async(const lock_options& options) {
  auto core = core_;
  return acquire_future<permit>(
      core, [&](sink<permit> out) { acquiring(core, options, false, std::move(out)); }, same);
}

void PermitExpirableSemaphore::try_acquire_async(const lock_options& options, completion<permit> done) {
  acquiring(core_, options, false, to_callback<permit, permit>(core_, std::move(done), same));
}

std::future<void> PermitExpirableSemaphore::release_async(const std::string& id) {
  return as_future<void, bool>(
      [&](sink<bool> out) { on_permit(core_, "release", id, std::nullopt, false, true, std::move(out)); }, as_nothing);
}

void PermitExpirableSemaphore::release_async(const std::string& id, completion<void> done) {
  on_permit(core_, "release", id, std::nullopt, false, true,
            to_callback<void, bool>(core_, std::move(done), as_nothing));
}

std::future<bool> PermitExpirableSemaphore::try_release_async(const std::string& id) {
  return as_future<bool, bool>(
      [&](sink<bool> out) { on_permit(core_, "try_release", id, std::nullopt, false, false, std::move(out)); }, same);
}

void PermitExpirableSemaphore::try_release_async(const std::string& id, completion<bool> done) {
  on_permit(core_, "try_release", id, std::nullopt, false, false,
            to_callback<bool, bool>(core_, std::move(done), same));
}

std::future<std::int64_t> PermitExpirableSemaphore::available_permits_async() const {
  return as_future<std::int64_t, long long>(
      [&](sink<long long> out) { counting(core_, count_op::available, 0, std::move(out)); }, as_count);
}

std::future<std::int64_t> PermitExpirableSemaphore::acquired_permits_async() const {
  return as_future<std::int64_t, long long>(
      [&](sink<long long> out) { counting(core_, count_op::acquired, 0, std::move(out)); }, as_count);
}

void PermitExpirableSemaphore::available_permits_async(completion<std::int64_t> done) const {
  counting(core_, count_op::available, 0, to_callback<std::int64_t, long long>(core_, std::move(done), as_count));
}

void PermitExpirableSemaphore::acquired_permits_async(completion<std::int64_t> done) const {
  counting(core_, count_op::acquired, 0, to_callback<std::int64_t, long long>(core_, std::move(done), as_count));
}

std::future<bool> PermitExpirableSemaphore::try_set_permits_async(std::int64_t permits) {
  return as_future<bool, long long>(
      [&](sink<long long> out) { counting(core_, count_op::try_set, permits, std::move(out)); }, as_bool);
}

std::future<void> PermitExpirableSemaphore::set_permits_async(std::int64_t permits) {
  return as_future<void, long long>(
      [&](sink<long long> out) { counting(core_, count_op::set, permits, std::move(out)); }, as_nothing);
}

std::future<bool> PermitExpirableSemaphore::update_lease_time_async(const std::string& id, milliseconds lease) {
  return as_future<bool, bool>(
      [&](sink<bool> out) { on_permit(core_, "update_lease_time", id, lease, true, false, std::move(out)); }, same);
}

void PermitExpirableSemaphore::try_set_permits_async(std::int64_t permits, completion<bool> done) {
  counting(core_, count_op::try_set, permits, to_callback<bool, long long>(core_, std::move(done), as_bool));
}

void PermitExpirableSemaphore::set_permits_async(std::int64_t permits, completion<void> done) {
  counting(core_, count_op::set, permits, to_callback<void, long long>(core_, std::move(done), as_nothing));
}

void PermitExpirableSemaphore::update_lease_time_async(const std::string& id, milliseconds lease,
                                                       completion<bool> done) {
  on_permit(core_, "update_lease_time", id, lease, true, false, to_callback<bool, bool>(core_, std::move(done), same));
}

std::chrono::steady_clock::time_point PermitExpirableSemaphore::valid_until(const std::string& id) const {
  if (!core_) throw Error(errc::invalid_argument, moved_from("valid_until()"));
  return core_->keeper()->valid_until(id);
}

LostSubscription PermitExpirableSemaphore::subscribe_lost(permit_lost_listener listener) {
  if (!core_) throw Error(errc::invalid_argument, moved_from("subscribe_lost()"));
  auto keeper = core_->keeper();
  // The keeper's events carry the permit id where a lock's carry its name.
  auto token = keeper->add_permit_listener(
      [semaphore = keeper->semaphore(), listener = std::move(listener)](const LockLost& event) {
        listener(PermitLost{semaphore, event.lock_name, event.cause, event.message});
      });
  return detail::access::subscription([keeper, token] { keeper->remove_permit_listener(token); });
}

}  // namespace warden
