// TLS for one connection without any I/O: ciphertext goes in and out as
// bytes, so the link decides how bytes reach the socket and the handshake and
// its failure modes can be tested in memory.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <system_error>

#include <warden/config.hpp>

// OpenSSL's types, kept out of every includer.
struct ssl_ctx_st;
struct ssl_st;
struct bio_st;
struct x509_store_ctx_st;

namespace warden::detail {

// The name the TLS session of a connection to `config`'s server sends as SNI
// and verifies: tls.server_name, else host (also for a unix socket, see
// TlsConfig::server_name).
std::string tls_server_name(const warden::Config& config);

// An SSL_CTX built once per Client from warden::TlsConfig and shared by all
// of its connections (OpenSSL allows sessions on several threads to share it).
class TlsContext {
 public:
  // Builds the context: CAs from ca_file/ca_dir when either is set, else the
  // system trust store (SSL_CTX_set_default_verify_paths, so SSL_CERT_FILE and
  // SSL_CERT_DIR work); the client certificate and key when set (mutual TLS);
  // the minimum protocol version; peer verification unless verify_peer is off.
  // `config.enabled` is not looked at. Throws warden::Error
  // (errc::invalid_argument) naming the field, the file and OpenSSL's reason
  // when a file cannot be loaded or the key does not match the certificate.
  // Encrypted private keys are refused rather than prompted for.
  static std::shared_ptr<TlsContext> create(const warden::TlsConfig& config);

  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  ssl_ctx_st* native() const { return context_; }
  bool verify_peer() const { return verify_peer_; }
  bool has_client_certificate() const { return has_client_certificate_; }

 private:
  TlsContext() = default;

  ssl_ctx_st* context_ = nullptr;
  bool verify_peer_ = true;
  bool has_client_certificate_ = false;
};

// The client side of one TLS connection over memory buffers. Not thread-safe:
// one session belongs to one connection on one thread.
//
// Use: start(), write take_output() to the socket; feed every byte read from
// the socket to receive() and write take_output() again after it (handshake
// replies, and data queued by send() that the finished handshake released);
// after send() write take_output() too. established() turns true when the
// handshake is done.
//
// TLS 1.3 note: the client finishes its handshake before the server has
// looked at the client certificate, so a server that refuses it (or requires
// one that is not configured) says so in an alert that arrives after
// established() turned true. receive() still reports that as
// errc::tls_handshake_failed, so the first reply after the handshake (e.g. to
// AUTH, HELLO or PING) is where such a refusal shows.
class TlsSession {
 public:
  // server_name: sent as SNI (unless it is an IP address literal, which SNI
  // cannot carry) and, when the context verifies peers, checked against the
  // certificate: an IP literal against its IP SANs, a name against its DNS
  // names (no partial wildcards). Empty: no SNI and no name check (the chain
  // is still verified); the link passes TlsConfig::server_name, else the host.
  TlsSession(std::shared_ptr<TlsContext> context, const std::string& server_name);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Starts the client handshake; the ClientHello is then in take_output().
  // Fails only when the context admits no protocol version at all; error()
  // then says so (errc::tls_handshake_failed).
  void start();

  // Bytes read from the socket. Decrypted application data is APPENDED to
  // `plaintext`. Returns {} or: errc::tls_verify_failed (the server's
  // certificate was not trusted), errc::tls_handshake_failed (the handshake
  // failed otherwise, including a client certificate refused just after a
  // TLS 1.3 handshake), errc::connection_lost (the server ended the TLS
  // session, cleanly or with a corrupt record, after the handshake). After an
  // error the session is dead and every call returns that error again;
  // error_text() says why.
  std::error_code receive(const char* data, std::size_t size, std::string& plaintext);

  // The socket reached end of file (the server closed the connection). Returns
  // errc::tls_handshake_failed before the handshake completed ("the server
  // closed the connection during the TLS handshake"), errc::connection_lost
  // after it; the session is dead either way.
  std::error_code receive_eof();

  // Application bytes to encrypt; buffered inside until the handshake
  // completes. Returns {} or the error that killed the session.
  std::error_code send(const char* data, std::size_t size);

  // Ciphertext to write to the socket (handshake records and encrypted data);
  // moves it out. After an error it may still hold an alert worth sending.
  std::string take_output();

  bool established() const;
  // The error that killed the session, or {}.
  std::error_code error() const { return error_; }
  // Why the last error happened, in words, e.g. "the server's certificate is
  // not signed by a trusted CA (unable to get local issuer certificate)" or
  // "the server does not speak TLS (it sent \"+OK\\r\\n\")". Empty before any.
  const std::string& error_text() const { return error_text_; }
  // The negotiated protocol, e.g. "TLSv1.3"; empty before the handshake.
  std::string protocol() const;

 private:
  // OpenSSL's message callback: notes what the server sent during the handshake.
  static void on_message(int write_p, int version, int content_type, const void* buf, std::size_t len, ssl_st* ssl,
                         void* arg);
  // OpenSSL's verify callback: keeps the names of the server's certificate.
  static int on_verify(int preverified, x509_store_ctx_st* store);

  std::error_code advance_handshake(std::string& plaintext);
  std::error_code read_plaintext(std::string& plaintext);
  std::error_code flush_pending();
  std::error_code fail(std::error_code code, std::string text);
  // Classifies an OpenSSL failure during the handshake or of a read.
  std::error_code fail_from_openssl(bool during_handshake);

  std::shared_ptr<TlsContext> context_;
  std::string server_name_;
  ssl_st* ssl_ = nullptr;
  bio_st* network_in_ = nullptr;   // ciphertext from the server, read by OpenSSL
  bio_st* network_out_ = nullptr;  // ciphertext OpenSSL wrote, for the socket
  std::string pending_;            // send() data waiting for the handshake
  std::string peer_names_;         // the server certificate's SANs, "DNS:a, IP:b"
  std::string first_bytes_;        // the first bytes the server sent, for "does not speak TLS"
  bool handshake_done_ = false;
  bool certificate_requested_ = false;  // the server sent a CertificateRequest
  int alert_received_ = -1;             // the last fatal alert from the server, or -1
  bool application_data_seen_ = false;  // a record of application data arrived
  std::error_code error_;
  std::string error_text_;
};

}  // namespace warden::detail
