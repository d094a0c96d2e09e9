#include "io/tls_session.hpp"

#include <arpa/inet.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <new>
#include <utility>

#include <fmt/format.h>

#include <warden/error.hpp>

namespace warden::detail {
namespace {

// The reasons on OpenSSL's (thread-local) error queue, oldest first, joined
// with "; ", and the queue emptied. "system lib" only says that the next
// entry is an errno, so it is left out.
std::string drain_openssl_errors() {
  std::string text;
  while (unsigned long error = ERR_get_error()) {
    std::string part;
    if (ERR_SYSTEM_ERROR(error)) {
      // An errno from a system call (fopen): OpenSSL 3.0 has no text for it.
      part = std::generic_category().message(ERR_GET_REASON(error));
    } else if (const char* reason = ERR_reason_error_string(error)) {
      part = reason;
    } else {
      part = fmt::format("OpenSSL error {:#x}", error);
    }
    if (part == "system lib" || text.find(part) != std::string::npos) continue;
    if (!text.empty()) text += "; ";
    text += part;
  }
  return text.empty() ? "no reason given by OpenSSL" : text;
}

[[noreturn]] void bad_file(std::string_view field, const std::string& path, std::string_view what) {
  throw Error(errc::invalid_argument, fmt::format("warden: cannot load Config::tls.{} '{}': {}", field, path, what));
}

// Keeps OpenSSL from prompting on the terminal for an encrypted key's passphrase.
int refuse_passphrase(char*, int, int, void*) { return 0; }

bool is_ip_literal(const std::string& name) {
  unsigned char address[sizeof(in6_addr)];
  return inet_pton(AF_INET, name.c_str(), address) == 1 || inet_pton(AF_INET6, name.c_str(), address) == 1;
}

// The first bytes of a TLS stream are a record header whose content type is
// one of change_cipher_spec, alert, handshake or application_data.
bool looks_like_tls(unsigned char first_byte) { return first_byte >= 0x14 && first_byte <= 0x17; }

// "+OK\r\n" style rendering of what a non-TLS server sent.
std::string printable(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

// The subject alternative names of `certificate`, as "DNS:a, IP:1.2.3.4", for
// a name-mismatch message.
std::string subject_alt_names(X509* certificate) {
  if (certificate == nullptr) return {};
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return {};
  std::string out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    std::string item;
    if (name->type == GEN_DNS) {
      const ASN1_IA5STRING* dns = name->d.dNSName;
      item = "DNS:" + std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                  static_cast<std::size_t>(ASN1_STRING_length(dns)));
    } else if (name->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = name->d.iPAddress;
      char text[INET6_ADDRSTRLEN] = {};
      const int length = ASN1_STRING_length(ip);
      const int family = length == 4 ? AF_INET : length == 16 ? AF_INET6 : AF_UNSPEC;
      if (family != AF_UNSPEC && inet_ntop(family, ASN1_STRING_get0_data(ip), text, sizeof text) != nullptr) {
        item = std::string("IP:") + text;
      }
    }
    if (item.empty()) continue;
    if (!out.empty()) out += ", ";
    out += item;
  }
  GENERAL_NAMES_free(names);
  return out;
}

// Alerts a server sends about the client's certificate.
bool is_client_certificate_alert(int alert) {
  switch (alert) {
    case SSL_AD_BAD_CERTIFICATE:
    case SSL_AD_UNSUPPORTED_CERTIFICATE:
    case SSL_AD_CERTIFICATE_REVOKED:
    case SSL_AD_CERTIFICATE_EXPIRED:
    case SSL_AD_CERTIFICATE_UNKNOWN:
    case SSL_AD_UNKNOWN_CA:
    case SSL_AD_ACCESS_DENIED:
    case SSL_AD_CERTIFICATE_REQUIRED:
      return true;
    default:
      return false;
  }
}

// The session a verify callback runs for.
TlsSession* session_of(X509_STORE_CTX* store) {
  auto* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  return ssl != nullptr ? static_cast<TlsSession*>(SSL_get_app_data(ssl)) : nullptr;
}

std::string alert_text(int alert) {
  // OpenSSL 3.0 names no alert added by TLS 1.3.
  if (alert == SSL_AD_CERTIFICATE_REQUIRED) return "alert \"certificate required\"";
  const std::string name = SSL_alert_desc_string_long(alert);
  return name == "unknown" ? fmt::format("alert {}", alert) : fmt::format("alert \"{}\"", name);
}

}  // namespace

std::string tls_server_name(const warden::Config& config) {
  return config.tls.server_name.empty() ? config.host : config.tls.server_name;
}

// ---------------------------------------------------------------- TlsContext

std::shared_ptr<TlsContext> TlsContext::create(const warden::TlsConfig& config) {
  ERR_clear_error();
  std::shared_ptr<TlsContext> result(new TlsContext());
  result->context_ = SSL_CTX_new(TLS_client_method());
  if (result->context_ == nullptr) {
    throw Error(errc::invalid_argument, "warden: cannot create a TLS context: " + drain_openssl_errors());
  }
  SSL_CTX* context = result->context_;
  result->verify_peer_ = config.verify_peer;

  const int min_version = config.min_version == tls_version::tls1_3 ? TLS1_3_VERSION : TLS1_2_VERSION;
  if (SSL_CTX_set_min_proto_version(context, min_version) != 1) {
    throw Error(errc::invalid_argument, "warden: cannot set Config::tls.min_version: " + drain_openssl_errors());
  }
  SSL_CTX_set_default_passwd_cb(context, refuse_passphrase);
  // A connection idle between commands need not keep its 34 KB of buffers.
  SSL_CTX_set_mode(context, SSL_MODE_RELEASE_BUFFERS);

  if (!config.ca_file.empty() || !config.ca_dir.empty()) {
    if (!config.ca_file.empty() && SSL_CTX_load_verify_file(context, config.ca_file.c_str()) != 1) {
      bad_file("ca_file", config.ca_file, drain_openssl_errors());
    }
    if (!config.ca_dir.empty()) {
      // OpenSSL only looks into the directory during verification, so a
      // missing one would otherwise show up as an untrusted server.
      std::error_code ec;
      if (!std::filesystem::is_directory(config.ca_dir, ec)) bad_file("ca_dir", config.ca_dir, "not a directory");
      if (SSL_CTX_load_verify_dir(context, config.ca_dir.c_str()) != 1) {
        bad_file("ca_dir", config.ca_dir, drain_openssl_errors());
      }
    }
  } else if (SSL_CTX_set_default_verify_paths(context) != 1) {
    throw Error(errc::invalid_argument,
                "warden: cannot load the system's trusted CAs (set Config::tls.ca_file): " + drain_openssl_errors());
  }

  if (!config.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(context, config.cert_file.c_str()) != 1) {
      bad_file("cert_file", config.cert_file, drain_openssl_errors());
    }
    if (SSL_CTX_use_PrivateKey_file(context, config.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      // OpenSSL compares the key with the certificate while loading it.
      const unsigned long error = ERR_peek_last_error();
      const bool mismatch = ERR_GET_LIB(error) == ERR_LIB_X509 && ERR_GET_REASON(error) == X509_R_KEY_VALUES_MISMATCH;
      const std::string reasons = drain_openssl_errors();
      if (mismatch) {
        bad_file("key_file", config.key_file,
                 fmt::format("it is not the key of tls.cert_file '{}' ({})", config.cert_file, reasons));
      }
      bad_file("key_file", config.key_file, reasons);
    }
    if (SSL_CTX_check_private_key(context) != 1) {
      bad_file("key_file", config.key_file,
               fmt::format("it is not the key of tls.cert_file '{}' ({})", config.cert_file, drain_openssl_errors()));
    }
    result->has_client_certificate_ = true;
  }

  SSL_CTX_set_verify(context, config.verify_peer ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  return result;
}

TlsContext::~TlsContext() { SSL_CTX_free(context_); }

// ---------------------------------------------------------------- TlsSession

TlsSession::TlsSession(std::shared_ptr<TlsContext> context, const std::string& server_name)
    : context_(std::move(context)), server_name_(server_name) {
  ERR_clear_error();
  ssl_ = SSL_new(context_->native());
  network_in_ = BIO_new(BIO_s_mem());
  network_out_ = BIO_new(BIO_s_mem());
  if (ssl_ == nullptr || network_in_ == nullptr || network_out_ == nullptr) {
    BIO_free(network_in_);
    BIO_free(network_out_);
    SSL_free(ssl_);
    ERR_clear_error();
    throw std::bad_alloc();
  }
  // An empty input buffer means "wait for more", not end of stream.
  BIO_set_mem_eof_return(network_in_, -1);
  SSL_set_bio(ssl_, network_in_, network_out_);  // the SSL owns both from here
  SSL_set_connect_state(ssl_);
  SSL_set_msg_callback(ssl_, &TlsSession::on_message);
  SSL_set_msg_callback_arg(ssl_, this);
  SSL_set_app_data(ssl_, this);
  if (context_->verify_peer()) SSL_set_verify(ssl_, SSL_VERIFY_PEER, &TlsSession::on_verify);

  if (!server_name_.empty()) {
    const bool ip = is_ip_literal(server_name_);
    // SNI carries host names only (RFC 6066).
    if (!ip) SSL_set_tlsext_host_name(ssl_, server_name_.c_str());
    if (context_->verify_peer()) {
      X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
      if (ip) {
        X509_VERIFY_PARAM_set1_ip_asc(param, server_name_.c_str());
      } else {
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        X509_VERIFY_PARAM_set1_host(param, server_name_.c_str(), 0);
      }
    }
  }
  ERR_clear_error();
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

void TlsSession::on_message(int write_p, int, int content_type, const void* buf, std::size_t len, ssl_st*, void* arg) {
  if (write_p != 0 || len == 0) return;
  auto* self = static_cast<TlsSession*>(arg);
  const auto* bytes = static_cast<const unsigned char*>(buf);
  if (content_type == SSL3_RT_HANDSHAKE && bytes[0] == SSL3_MT_CERTIFICATE_REQUEST) {
    self->certificate_requested_ = true;
  } else if (content_type == SSL3_RT_ALERT && len >= 2 && bytes[1] != SSL_AD_CLOSE_NOTIFY) {
    self->alert_received_ = bytes[1];
  }
}

int TlsSession::on_verify(int preverified, x509_store_ctx_st* store) {
  // The peer certificate is not kept when verification fails, so its names
  // are copied here for a name-mismatch message.
  if (X509_STORE_CTX_get_error_depth(store) == 0) {
    if (TlsSession* self = session_of(store)) {
      self->peer_names_ = subject_alt_names(X509_STORE_CTX_get_current_cert(store));
    }
  }
  return preverified;
}

void TlsSession::start() {
  if (error_) return;
  std::string ignored;
  advance_handshake(ignored);
}

std::error_code TlsSession::receive(const char* data, std::size_t size, std::string& plaintext) {
  if (error_) return error_;
  if (first_bytes_.size() < 16) first_bytes_.append(data, std::min(size, 16 - first_bytes_.size()));
  ERR_clear_error();
  while (size > 0) {
    const int chunk = static_cast<int>(std::min<std::size_t>(size, INT_MAX));
    const int written = BIO_write(network_in_, data, chunk);
    if (written <= 0) throw std::bad_alloc();  // a memory BIO only refuses when out of memory
    data += written;
    size -= static_cast<std::size_t>(written);
  }
  if (!handshake_done_) return advance_handshake(plaintext);
  return read_plaintext(plaintext);
}

std::error_code TlsSession::receive_eof() {
  if (error_) return error_;
  if (!handshake_done_) {
    return fail(errc::tls_handshake_failed,
                first_bytes_.empty() ? "the server closed the connection during the TLS handshake without sending "
                                       "anything (does it speak TLS on this port?)"
                                     : "the server closed the connection during the TLS handshake");
  }
  return fail(errc::connection_lost, "the server closed the connection");
}

std::error_code TlsSession::send(const char* data, std::size_t size) {
  if (error_) return error_;
  pending_.append(data, size);
  if (!handshake_done_) return {};
  return flush_pending();
}

std::string TlsSession::take_output() {
  std::string out;
  while (const std::size_t pending = BIO_ctrl_pending(network_out_)) {
    const std::size_t start = out.size();
    out.resize(start + pending);
    const int chunk = static_cast<int>(std::min<std::size_t>(pending, INT_MAX));
    const int read = BIO_read(network_out_, out.data() + start, chunk);
    out.resize(start + static_cast<std::size_t>(read > 0 ? read : 0));
    if (read <= 0) break;
  }
  return out;
}

bool TlsSession::established() const { return handshake_done_ && !error_; }

std::string TlsSession::protocol() const { return handshake_done_ ? SSL_get_version(ssl_) : std::string(); }

std::error_code TlsSession::advance_handshake(std::string& plaintext) {
  ERR_clear_error();
  const int result = SSL_do_handshake(ssl_);
  if (result == 1) {
    handshake_done_ = true;
    if (auto error = flush_pending()) return error;
    // The server's last flight may carry more: session tickets, an alert
    // about our certificate (TLS 1.3), or data.
    return read_plaintext(plaintext);
  }
  const int reason = SSL_get_error(ssl_, result);
  if (reason == SSL_ERROR_WANT_READ || reason == SSL_ERROR_WANT_WRITE) return {};
  return fail_from_openssl(true);
}

std::error_code TlsSession::read_plaintext(std::string& plaintext) {
  char buffer[16 * 1024];
  for (;;) {
    ERR_clear_error();
    std::size_t read = 0;
    const int result = SSL_read_ex(ssl_, buffer, sizeof buffer, &read);
    if (result == 1) {
      plaintext.append(buffer, read);
      application_data_seen_ = true;
      continue;
    }
    const int reason = SSL_get_error(ssl_, result);
    if (reason == SSL_ERROR_WANT_READ || reason == SSL_ERROR_WANT_WRITE) return {};
    if (reason == SSL_ERROR_ZERO_RETURN) return fail(errc::connection_lost, "the server closed the TLS session");
    return fail_from_openssl(false);
  }
}

std::error_code TlsSession::flush_pending() {
  if (pending_.empty()) return {};
  ERR_clear_error();
  std::size_t written = 0;
  // A memory BIO takes everything, so one call writes all of it.
  if (SSL_write_ex(ssl_, pending_.data(), pending_.size(), &written) != 1) return fail_from_openssl(false);
  pending_.clear();
  return {};
}

std::error_code TlsSession::fail(std::error_code code, std::string text) {
  error_ = code;
  error_text_ = std::move(text);
  pending_.clear();
  return error_;
}

std::error_code TlsSession::fail_from_openssl(bool during_handshake) {
  const unsigned long first_error = ERR_peek_error();
  const std::string reasons = drain_openssl_errors();

  if (!first_bytes_.empty() && !looks_like_tls(static_cast<unsigned char>(first_bytes_[0]))) {
    return fail(errc::tls_handshake_failed,
                fmt::format("the server does not speak TLS (it sent \"{}\")", printable(first_bytes_)));
  }

  if (ERR_GET_LIB(first_error) == ERR_LIB_SSL && ERR_GET_REASON(first_error) == SSL_R_CERTIFICATE_VERIFY_FAILED) {
    const long verify = SSL_get_verify_result(ssl_);
    const std::string detail = X509_verify_cert_error_string(verify);
    std::string text;
    switch (verify) {
      case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
      case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
      case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
      case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
      case X509_V_ERR_CERT_UNTRUSTED:
        text = fmt::format("the server's certificate is not signed by a trusted CA ({})", detail);
        break;
      case X509_V_ERR_HOSTNAME_MISMATCH:
      case X509_V_ERR_IP_ADDRESS_MISMATCH: {
        const std::string& names = peer_names_;
        text = names.empty()
                   ? fmt::format("the server's certificate does not match {} ({})", server_name_, detail)
                   : fmt::format("the server's certificate does not match {} (it is for {})", server_name_, names);
        break;
      }
      case X509_V_ERR_CERT_HAS_EXPIRED:
        text = fmt::format("the server's certificate has expired ({})", detail);
        break;
      case X509_V_ERR_CERT_NOT_YET_VALID:
        text = fmt::format("the server's certificate is not valid yet ({})", detail);
        break;
      default:
        text = fmt::format("the server's certificate was not accepted ({})", detail);
        break;
    }
    return fail(errc::tls_verify_failed, std::move(text));
  }

  // After a TLS 1.3 handshake the server's verdict on our certificate is the
  // first thing that can arrive; until application data has come, an alert
  // about it is still a failed handshake.
  const bool still_handshaking = during_handshake || !application_data_seen_;
  if (still_handshaking && alert_received_ >= 0) {
    if (is_client_certificate_alert(alert_received_) ||
        (alert_received_ == SSL_AD_HANDSHAKE_FAILURE && certificate_requested_)) {
      if (!context_->has_client_certificate()) {
        return fail(errc::tls_handshake_failed,
                    fmt::format("the server requires a client certificate and none is configured "
                                "(Config::tls.cert_file, tls.key_file; the server sent {})",
                                alert_text(alert_received_)));
      }
      return fail(errc::tls_handshake_failed,
                  fmt::format("the server refused our client certificate ({})", alert_text(alert_received_)));
    }
    if (alert_received_ == SSL_AD_PROTOCOL_VERSION) {
      return fail(errc::tls_handshake_failed,
                  fmt::format("the server does not support our TLS versions (Config::tls.min_version; the server "
                              "sent {})",
                              alert_text(alert_received_)));
    }
    if (during_handshake) {
      return fail(errc::tls_handshake_failed,
                  fmt::format("the server ended the TLS handshake with {}", alert_text(alert_received_)));
    }
  }
  if (during_handshake) {
    const int reason = ERR_GET_LIB(first_error) == ERR_LIB_SSL ? ERR_GET_REASON(first_error) : 0;
    if (reason == SSL_R_UNSUPPORTED_PROTOCOL || reason == SSL_R_NO_PROTOCOLS_AVAILABLE) {
      return fail(errc::tls_handshake_failed,
                  fmt::format("the server does not support our TLS versions (Config::tls.min_version; {})", reasons));
    }
    return fail(errc::tls_handshake_failed, fmt::format("the TLS handshake failed ({})", reasons));
  }
  if (alert_received_ >= 0) {
    return fail(errc::connection_lost,
                fmt::format("the server ended the TLS session with {}", alert_text(alert_received_)));
  }
  return fail(errc::connection_lost, fmt::format("the TLS session failed ({})", reasons));
}

}  // namespace warden::detail
