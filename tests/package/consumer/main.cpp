// Compiles against warden's public headers only and links warden::warden with
// whatever that target brings along: if this builds and runs, consumers can.
#include <warden/warden.hpp>

#include <iostream>

int main() {
  const warden::Config config = warden::Config::from_url("redis://127.0.0.1:6399/2");
  // The driver checks this line; no server is needed (a Config connects to nothing).
  std::cout << "port=" << config.port << " thread_id=" << warden::current_thread_id() << '\n';
  return 0;
}
