#include "daemon/config/tls_context.h"

// clang-format off
// Boost 1.74's asio uses std::exchange without including <utility> (fails with g++ 12, C++20).
#include <utility>
#include <boost/asio/ssl/context.hpp>
// clang-format on
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace vigil {

namespace {

struct VersionName {
  const char* name;
  int version;
};
constexpr std::array<VersionName, 4> kVersions{{{"TLS10", TLS1_VERSION},
                                                {"TLS11", TLS1_1_VERSION},
                                                {"TLS12", TLS1_2_VERSION},
                                                {"TLS13", TLS1_3_VERSION}}};

struct CurveName {
  const char* go;
  const char* openssl;
};
constexpr std::array<CurveName, 4> kCurves{
    {{"CurveP256", "P-256"}, {"CurveP384", "P-384"}, {"CurveP521", "P-521"}, {"X25519", "X25519"}}};

// OpenSSL's reason for the last failure, and the queue emptied for the next call.
std::string opensslReason() {
  unsigned long code = ERR_get_error();
  unsigned long last = code;
  while (unsigned long next = ERR_get_error()) last = next;
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  const char* reason = ERR_reason_error_string(last);
  return reason ? reason : fmt::format("OpenSSL error {:#x}", last);
}

Error tlsError(std::string_view what) {
  return Error{ErrorCode::kInvalidData, fmt::format("{}: {}", what, opensslReason())};
}

// A BIO over text, for the inline `cert` and `key`.
struct MemoryBio {
  explicit MemoryBio(const std::string& text)
      : bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size()))) {}
  ~MemoryBio() { BIO_free(bio); }
  MemoryBio(const MemoryBio&) = delete;
  MemoryBio& operator=(const MemoryBio&) = delete;
  BIO* bio;
};

// Accepts whatever certificate the client shows: for RequestClientCert and RequireAnyClientCert,
// which ask for one without verifying it (as Go's crypto/tls does).
int acceptAnyCertificate(int, X509_STORE_CTX*) { return 1; }

}  // namespace

const std::vector<std::string>& tlsVersionNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& v : kVersions) out.emplace_back(v.name);
    return out;
  }();
  return names;
}

TlsContextBuilder::TlsContextBuilder()
    : context_(std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_server)) {
  SSL_CTX* ctx = context_->native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_options(
      ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // No session resumption across a reload's contexts is needed; tickets stay on (the default).
}

TlsContextBuilder::~TlsContextBuilder() = default;

Expected<void> TlsContextBuilder::certificateFile(const std::string& path) {
  if (SSL_CTX_use_certificate_chain_file(context_->native_handle(), path.c_str()) != 1) {
    return tl::unexpected(tlsError(fmt::format("cannot load the certificate from {}", path)));
  }
  haveCertificate_ = true;
  return {};
}

Expected<void> TlsContextBuilder::certificate(const std::string& pem) {
  SSL_CTX* ctx = context_->native_handle();
  MemoryBio in(pem);
  X509* leaf = PEM_read_bio_X509_AUX(in.bio, nullptr, nullptr, nullptr);
  if (leaf == nullptr || SSL_CTX_use_certificate(ctx, leaf) != 1) {
    X509_free(leaf);
    return tl::unexpected(tlsError("cannot load the inline certificate"));
  }
  X509_free(leaf);
  SSL_CTX_clear_chain_certs(ctx);
  while (X509* chain = PEM_read_bio_X509(in.bio, nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx, chain) != 1) {
      X509_free(chain);
      return tl::unexpected(tlsError("cannot add the inline certificate's chain"));
    }
  }
  ERR_clear_error();  // the end of the PEM text reads as "no start line"
  haveCertificate_ = true;
  return {};
}

Expected<void> TlsContextBuilder::privateKeyFile(const std::string& path) {
  SSL_CTX* ctx = context_->native_handle();
  if (SSL_CTX_use_PrivateKey_file(ctx, path.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    return tl::unexpected(tlsError(fmt::format("cannot load the private key from {}", path)));
  }
  haveKey_ = true;
  return {};
}

Expected<void> TlsContextBuilder::privateKey(const std::string& pem) {
  SSL_CTX* ctx = context_->native_handle();
  MemoryBio in(pem);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(in.bio, nullptr, nullptr, nullptr);
  const bool ok = key != nullptr && SSL_CTX_use_PrivateKey(ctx, key) == 1 &&
                  SSL_CTX_check_private_key(ctx) == 1;
  EVP_PKEY_free(key);
  if (!ok) return tl::unexpected(tlsError("cannot load the inline private key"));
  haveKey_ = true;
  return {};
}

Expected<void> TlsContextBuilder::clientCaFile(const std::string& path) {
  SSL_CTX* ctx = context_->native_handle();
  if (SSL_CTX_load_verify_locations(ctx, path.c_str(), nullptr) != 1) {
    return tl::unexpected(tlsError(fmt::format("cannot load client CAs from {}", path)));
  }
  // The CA names sent in the CertificateRequest, so that clients pick the right certificate.
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(path.c_str());
  if (names == nullptr) {
    return tl::unexpected(tlsError(fmt::format("cannot read client CA names from {}", path)));
  }
  SSL_CTX_set_client_CA_list(ctx, names);
  return {};
}

Expected<void> TlsContextBuilder::clientAuth(ClientAuth policy) {
  SSL_CTX* ctx = context_->native_handle();
  switch (policy) {
    case ClientAuth::kNone:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
      break;
    case ClientAuth::kRequest:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, acceptAnyCertificate);
      break;
    case ClientAuth::kRequireAny:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                         acceptAnyCertificate);
      break;
    case ClientAuth::kVerifyIfGiven:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
      break;
    case ClientAuth::kRequireAndVerify:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  return {};
}

Expected<void> TlsContextBuilder::versions(const std::string& min, const std::string& max) {
  auto find = [](const std::string& name) -> int {
    for (const auto& v : kVersions) {
      if (name == v.name) return v.version;
    }
    return 0;
  };
  const int low = find(min);
  const int high = find(max);
  if (low == 0 || high == 0) {
    return makeError(ErrorCode::kInvalidArgument, "'{}' is not a TLS version (one of {})",
                     low == 0 ? min : max, fmt::join(tlsVersionNames(), ", "));
  }
  if (low > high) {
    return makeError(ErrorCode::kInvalidArgument, "min_version {} is above max_version {}", min,
                     max);
  }
  SSL_CTX* ctx = context_->native_handle();
  if (SSL_CTX_set_min_proto_version(ctx, low) != 1 ||
      SSL_CTX_set_max_proto_version(ctx, high) != 1) {
    return tl::unexpected(tlsError(fmt::format("cannot use {} to {}", min, max)));
  }
  return {};
}

Expected<void> TlsContextBuilder::cipherSuites(const std::vector<std::string>& names,
                                               bool preferServerOrder) {
  SSL_CTX* ctx = context_->native_handle();
  if (!preferServerOrder) SSL_CTX_clear_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (names.empty()) return {};
  // Go names suites by their IANA names; OpenSSL's list takes its own names.
  STACK_OF(SSL_CIPHER)* known = SSL_CTX_get_ciphers(ctx);
  std::vector<std::string> openssl;
  for (const std::string& name : names) {
    const char* found = nullptr;
    for (int i = 0; i < sk_SSL_CIPHER_num(known) && found == nullptr; ++i) {
      const SSL_CIPHER* cipher = sk_SSL_CIPHER_value(known, i);
      const char* standard = SSL_CIPHER_standard_name(cipher);
      if (standard != nullptr && name == standard) {
        if (std::string_view(SSL_CIPHER_get_version(cipher)) == "TLSv1.3") {
          return makeError(ErrorCode::kInvalidArgument,
                           "{} is a TLS 1.3 suite, which is not configurable (as in Go)", name);
        }
        found = SSL_CIPHER_get_name(cipher);
      }
    }
    if (found == nullptr) {
      return makeError(ErrorCode::kInvalidArgument,
                       "'{}' is not a cipher suite this OpenSSL offers (IANA names such as "
                       "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)",
                       name);
    }
    openssl.emplace_back(found);
  }
  const std::string list = fmt::format("{}", fmt::join(openssl, ":"));
  if (SSL_CTX_set_cipher_list(ctx, list.c_str()) != 1) {
    return tl::unexpected(tlsError(fmt::format("cannot use the cipher suites {}", list)));
  }
  return {};
}

Expected<void> TlsContextBuilder::curves(const std::vector<std::string>& names) {
  if (names.empty()) return {};
  std::vector<std::string> groups;
  for (const std::string& name : names) {
    auto it = std::find_if(kCurves.begin(), kCurves.end(),
                           [&](const CurveName& c) { return name == c.go; });
    if (it == kCurves.end()) {
      return makeError(ErrorCode::kInvalidArgument,
                       "'{}' is not a curve (one of CurveP256, CurveP384, CurveP521, X25519)",
                       name);
    }
    groups.emplace_back(it->openssl);
  }
  const std::string list = fmt::format("{}", fmt::join(groups, ":"));
  if (SSL_CTX_set1_groups_list(context_->native_handle(), list.c_str()) != 1) {
    return tl::unexpected(tlsError(fmt::format("cannot use the curves {}", list)));
  }
  return {};
}

Expected<std::shared_ptr<boost::asio::ssl::context>> TlsContextBuilder::finish() {
  if (!haveCertificate_ || !haveKey_) {
    return makeError(ErrorCode::kInvalidArgument,
                     "a certificate (cert_file or cert) and its key (key_file or key) are needed");
  }
  return std::move(context_);
}

}  // namespace vigil
