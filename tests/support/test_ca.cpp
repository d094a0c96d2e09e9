#include "test_ca.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>

#include "detail/process.hpp"

namespace warden::test {

namespace {

// The whole configuration openssl sees, so that the system's openssl.cnf
// (which differs between releases) adds nothing to the certificates.
constexpr const char* openssl_config = R"(# written by warden's TestCa
[req]
distinguished_name = subject
prompt = no

[subject]
CN = unused

[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyAgreement
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyAgreement
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid

[wrong_name]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyAgreement
extendedKeyUsage = serverAuth
subjectAltName = DNS:wrong.example
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
)";

std::string make_temp_directory() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/warden-ca-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  }
  return buffer.data();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TestCa::TestCa() : executable_(detail::resolve_program("openssl", "/usr/bin/openssl")) {
  directory_ = make_temp_directory();
  try {
    std::ofstream(path("openssl.cnf")) << openssl_config;
    make_ca("ca", "warden test CA");
    make_ca("wrong-ca", "warden wrong CA");
    make_leaf("server", "localhost", "ca", "server", 1001);
    make_leaf("client", "warden test client", "ca", "client", 1002);
    make_leaf("wrong-name", "wrong.example", "ca", "wrong_name", 1003);
    make_leaf("wrong-ca-client", "warden wrong client", "wrong-ca", "client", 2001);
    std::filesystem::create_directory(ca_dir());
    std::filesystem::copy_file(ca_cert(), ca_dir() + "/ca.crt");
    run_openssl({"rehash", ca_dir()});
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
    throw;
  }
}

TestCa::~TestCa() {
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

void TestCa::run_openssl(const std::vector<std::string>& args) const {
  // openssl chats on stderr even when it succeeds; keep that out of the test
  // output and show it only when a step fails.
  const std::string log_path = path("openssl.log");
  int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) throw std::system_error(errno, std::generic_category(), "open " + log_path);
  std::vector<std::string> argv{executable_};
  argv.insert(argv.end(), args.begin(), args.end());
  int status = -1;
  try {
    const pid_t pid = detail::spawn(executable_, argv, log);
    close(log);
    status = detail::wait_blocking(pid);
  } catch (...) {
    close(log);
    throw;
  }
  if (const int code = detail::exit_code_from_status(status); code != 0) {
    std::string command;
    for (const auto& arg : argv) command += (command.empty() ? "" : " ") + arg;
    throw std::runtime_error("TestCa: '" + command + "' failed with code " + std::to_string(code) + ":\n" +
                             read_file(log_path));
  }
}

void TestCa::make_ca(const std::string& name, const std::string& common_name) const {
  run_openssl({"req", "-x509", "-config", path("openssl.cnf"), "-extensions", "ca", "-newkey", "ec", "-pkeyopt",
               "ec_paramgen_curve:prime256v1", "-noenc", "-keyout", directory_ + "/" + name + ".key", "-out",
               directory_ + "/" + name + ".crt", "-days", "3", "-subj", "/CN=" + common_name});
}

void TestCa::make_leaf(const std::string& name, const std::string& common_name, const std::string& ca,
                       const std::string& extensions, int serial) const {
  const std::string base = directory_ + "/" + name;
  run_openssl({"req", "-new", "-config", path("openssl.cnf"), "-newkey", "ec", "-pkeyopt",
               "ec_paramgen_curve:prime256v1", "-noenc", "-keyout", base + ".key", "-out", base + ".csr", "-subj",
               "/CN=" + common_name});
  run_openssl({"x509", "-req", "-in", base + ".csr", "-CA", directory_ + "/" + ca + ".crt", "-CAkey",
               directory_ + "/" + ca + ".key", "-set_serial", std::to_string(serial), "-days", "3", "-extfile",
               path("openssl.cnf"), "-extensions", extensions, "-out", base + ".crt"});
}

}  // namespace warden::test
