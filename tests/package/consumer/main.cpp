// Compiles against warden's public headers only and links warden with
// whatever its package brings along (CMake target, or pkg-config flags): if
// this builds and runs, consumers can. It touches the exported API across the
// library boundary: the version, a typed error thrown inside the library and
// caught here by type, and a Client with handles of each kind.
#include <warden/warden.hpp>

#include <cstring>
#include <iostream>

int main() {
  if (std::strcmp(warden::library_version(), WARDEN_VERSION) != 0) {
    std::cerr << "headers are " WARDEN_VERSION ", library is " << warden::library_version() << '\n';
    return 1;
  }
  try {
    (void)warden::Config::from_url("nonsense://x");
    std::cerr << "a bad URL was accepted\n";
    return 1;
  } catch (const warden::Error& error) {
    if (error.code() != warden::errc::invalid_argument) {
      std::cerr << "unexpected error: " << error.what() << '\n';
      return 1;
    }
  }
  const warden::Config config = warden::Config::from_url("redis://127.0.0.1:6399/2");
  {
    // A Client connects in the background: making and destroying one needs
    // no server.
    warden::Client client(config);
    warden::Lock lock = client.get_lock("consumer");
    warden::FairLock fair = client.get_fair_lock("consumer-fair");
    warden::ReadWriteLock rw = client.get_read_write_lock("consumer-rw");
    warden::FencedLock fenced = client.get_fenced_lock("consumer-fenced");
    warden::SpinLock spin = client.get_spin_lock("consumer-spin");
    warden::MultiLock both{lock, fair};
    warden::cancel_source cancel;
    cancel.cancel();
    if (lock.name() != "consumer" || !cancel.token().cancelled() || rw.read_lock().name() != "consumer-rw" ||
        fenced.name() != "consumer-fenced" || spin.name() != "consumer-spin") {
      std::cerr << "unexpected handle state\n";
      return 1;
    }
  }
  // The driver checks this line.
  std::cout << "port=" << config.port << " thread_id=" << warden::current_thread_id()
            << " version=" << WARDEN_VERSION_MAJOR << '.' << WARDEN_VERSION_MINOR << '.' << WARDEN_VERSION_PATCH
            << '\n';
  return 0;
}
