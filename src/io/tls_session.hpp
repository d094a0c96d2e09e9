// PLACEHOLDER until the TLS branch lands.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <system_error>
#include <warden/config.hpp>
namespace warden::detail {
class TlsContext {};
class TlsSession {
 public:
  TlsSession(std::shared_ptr<TlsContext> context, const std::string& server_name);
  ~TlsSession();
  void start();
  std::error_code receive(const char* data, std::size_t size, std::string& plaintext);
  std::error_code send(const char* data, std::size_t size);
  std::string take_output();
  bool established() const;
  const std::string& error_text() const;
 private:
  std::string error_;
};
}  // namespace warden::detail
