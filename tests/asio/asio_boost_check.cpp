// Compiled (syntax only) in asio.BoostAsioModeCompiles: <warden/asio.hpp>
// with WARDEN_ASIO_USE_BOOST against Boost.Asio (errors as
// boost::system::error_code; Boost before 1.77 has no cancellation slots, so
// there the options' own cancel_token is the only cancellation). Never run.
#define WARDEN_ASIO_USE_BOOST
#include <warden/asio.hpp>
#include <warden/warden.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <future>
#include <string>

[[maybe_unused]] static void every_operation(warden::Client& client, boost::asio::io_context& io) {
  warden::task_owner me;
  warden::Lock lock = client.get_lock("a");
  warden::MultiLock multi{client.get_lock("m1"), client.get_lock("m2")};
  std::future<void> taken = warden::async_lock(lock, me, boost::asio::use_future);
  warden::async_try_lock(lock, me, warden::lock_options(),
                         boost::asio::bind_executor(io, [](boost::system::error_code, bool) {}));
  warden::async_unlock(lock, me, [](boost::system::error_code error) { (void)error.message(); });
  warden::async_lock(multi, me, [](boost::system::error_code) {});
  warden::Semaphore sem = client.get_semaphore("s");
  std::future<void> permits = warden::async_acquire(sem, 1, boost::asio::use_future);
  warden::async_release(sem, 1, [](boost::system::error_code) {});
  warden::PermitExpirableSemaphore pes = client.get_permit_expirable_semaphore("p");
  warden::async_acquire(pes, boost::asio::bind_executor(io, [](boost::system::error_code, std::string) {}));
  warden::CountDownLatch latch = client.get_count_down_latch("l");
  warden::async_wait(latch, [](boost::system::error_code) {});
  warden::async_count_down(latch, [](boost::system::error_code) {});
}
