// tls: take a lock over TLS. The CA that signed the server's certificate is
// given on the command line (without it, the system trust store is used); a
// client certificate and key are added when the server asks for one
// (redis-server --tls-auth-clients yes).
//
//   ./tls rediss://127.0.0.1:6380 ca.crt [client.crt client.key]
//
// What goes wrong says why: an untrusted or mismatched certificate is
// errc::tls_verify_failed, a refused client certificate or a server that
// does not speak TLS is errc::tls_handshake_failed.
#include <warden/warden.hpp>

#include <chrono>
#include <iostream>
#include <mutex>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " rediss://host:port [ca.crt [client.crt client.key]]\n";
    return 2;
  }
  try {
    warden::Config config = warden::Config::from_url(argv[1]);
    if (argc > 2) config.tls.ca_file = argv[2];
    if (argc > 4) {
      config.tls.cert_file = argv[3];
      config.tls.key_file = argv[4];
    }
    config.connect_timeout = 2s;  // bounds the TLS handshake too
    warden::Client client{config};

    warden::Lock lock = client.get_lock("tls-example:invoice:7");
    {
      std::lock_guard<warden::Lock> guard{lock};
      std::cout << "locked '" << lock.name() << "' over TLS, lease left "
                << lock.remain_time_to_live().value_or(0ms).count() << " ms\n";
    }
    std::cout << "released\n";
    return 0;
  } catch (const warden::Error& error) {
    std::cerr << "warden error (" << error.code().message() << "): " << error.what() << "\n";
    return 1;
  }
}
