// PLACEHOLDER until the TLS branch lands.
#include "io/tls_session.hpp"
#include <warden/error.hpp>
namespace warden::detail {
TlsSession::TlsSession(std::shared_ptr<TlsContext>, const std::string&) {}
TlsSession::~TlsSession() = default;
void TlsSession::start() {}
std::error_code TlsSession::receive(const char*, std::size_t, std::string&) { return make_error_code(errc::connection_refused); }
std::error_code TlsSession::send(const char*, std::size_t) { return make_error_code(errc::connection_refused); }
std::string TlsSession::take_output() { return {}; }
bool TlsSession::established() const { return false; }
const std::string& TlsSession::error_text() const { return error_; }
}  // namespace warden::detail
