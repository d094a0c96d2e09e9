// A throw-away certificate authority for TLS tests: keys and certificates made
// with the openssl command-line tool in a fresh temporary directory.
#pragma once

#include <string>
#include <vector>

namespace warden::test {

// Everything is made by the constructor; the accessors return paths of PEM
// files inside directory(). Keys are P-256 (quick to make) and unencrypted;
// certificates are valid from now for 3 days. Each TestCa has its own
// directory, so several may exist at once.
class TestCa {
 public:
  // Runs `openssl` (from PATH, else /usr/bin/openssl). Throws
  // std::runtime_error with openssl's output when a step fails.
  TestCa();
  // Removes the directory. Never throws.
  ~TestCa();
  TestCa(const TestCa&) = delete;
  TestCa& operator=(const TestCa&) = delete;

  const std::string& directory() const { return directory_; }

  // The CA to trust (Config::tls.ca_file, redis --tls-ca-cert-file).
  std::string ca_cert() const { return path("ca.crt"); }
  // A directory holding only ca_cert(), prepared with `openssl rehash`
  // (Config::tls.ca_dir).
  std::string ca_dir() const { return path("ca-dir"); }
  // The server's certificate, signed by the CA: CN=localhost, subject
  // alternative names IP:127.0.0.1 and DNS:localhost, usable for server and
  // client authentication (Redis uses it both ways for replication).
  std::string server_cert() const { return path("server.crt"); }
  std::string server_key() const { return path("server.key"); }
  // A client certificate signed by the CA (CN=warden test client).
  std::string client_cert() const { return path("client.crt"); }
  std::string client_key() const { return path("client.key"); }
  // A second CA that signed nothing of the above: trusting only it makes
  // every certificate above untrusted.
  std::string wrong_ca_cert() const { return path("wrong-ca.crt"); }
  // A client certificate signed by the wrong CA, which a server trusting
  // ca_cert() refuses.
  std::string wrong_ca_client_cert() const { return path("wrong-ca-client.crt"); }
  std::string wrong_ca_client_key() const { return path("wrong-ca-client.key"); }
  // A server certificate signed by the CA but for another name only
  // (subject alternative name DNS:wrong.example).
  std::string wrong_name_cert() const { return path("wrong-name.crt"); }
  std::string wrong_name_key() const { return path("wrong-name.key"); }

 private:
  std::string path(const char* name) const { return directory_ + "/" + name; }
  void run_openssl(const std::vector<std::string>& args) const;
  void make_ca(const std::string& name, const std::string& common_name) const;
  void make_leaf(const std::string& name, const std::string& common_name, const std::string& ca,
                 const std::string& extensions, int serial) const;

  std::string executable_;
  std::string directory_;
};

}  // namespace warden::test
