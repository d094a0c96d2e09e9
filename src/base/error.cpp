#include <warden/error.hpp>

#include <cctype>
#include <string>

namespace warden {
namespace {

class category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "warden"; }

  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::not_owner:
        return "not the owner of the lock";
      case errc::lease_expired:
        return "lease expired";
      case errc::timed_out:
        return "timed out";
      case errc::connection_lost:
        return "connection lost";
      case errc::connection_refused:
        return "connection refused";
      case errc::authentication_failed:
        return "authentication failed";
      case errc::server_error:
        return "server error";
      case errc::invalid_argument:
        return "invalid argument";
      case errc::shut_down:
        return "client shut down";
      case errc::quorum_not_reached:
        return "quorum not reached";
      case errc::would_deadlock:
        return "would deadlock";
      case errc::cancelled:
        return "cancelled";
      case errc::wrong_type:
        return "key is not a lock of this kind";
      case errc::protocol_error:
        return "protocol error";
      case errc::tls_verify_failed:
        return "TLS certificate verification failed";
      case errc::tls_handshake_failed:
        return "TLS handshake failed";
      case errc::routing_failed:
        return "no server to route the command to";
      case errc::replica_sync_failed:
        return "too few replicas attached to the master or acknowledged the lock write";
      case errc::eviction_possible:
        return "the server may evict lock keys (Config::eviction_guard is refuse)";
    }
    return "unknown warden error";
  }
};

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The message, and the code's own text when the message does not say it yet.
std::string with_cause(std::error_code code, const std::string& message) {
  std::string cause = code.message();
  if (message.empty()) return cause;
  if (lower(message).find(lower(cause)) != std::string::npos) return message;
  return message + ": " + cause;
}

}  // namespace

Error::Error(std::error_code code, const std::string& message)
    : std::system_error(code), text_(with_cause(code, message)) {}

const char* Error::what() const noexcept { return text_.what(); }

const std::error_category& error_category() noexcept {
  static const category instance;
  return instance;
}

}  // namespace warden
