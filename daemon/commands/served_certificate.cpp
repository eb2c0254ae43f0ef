#include "daemon/commands/served_certificate.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>

namespace vigil {

namespace {

template <typename T, void (*Free)(T*)>
struct Freer {
  void operator()(T* p) const { Free(p); }
};
using X509Ptr = std::unique_ptr<X509, Freer<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Freer<BIO, BIO_free_all>>;
using TimePtr = std::unique_ptr<ASN1_TIME, Freer<ASN1_TIME, ASN1_TIME_free>>;
using NamesPtr = std::unique_ptr<GENERAL_NAMES, Freer<GENERAL_NAMES, GENERAL_NAMES_free>>;

// The first certificate of the PEM text (the served one; a chain follows it).
X509Ptr firstCertificate(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return nullptr;
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

bool isIpAddress(const std::string& host) {
  unsigned char buffer[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

// "DNS:hall.lan, IP:192.168.1.20": the subjectAltName entries a client checks.
std::string altNames(X509* cert) {
  NamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  std::string out;
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    std::string entry;
    if (name->type == GEN_DNS) {
      const ASN1_IA5STRING* dns = name->d.dNSName;
      entry = "DNS:" + std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                   static_cast<std::size_t>(ASN1_STRING_length(dns)));
    } else if (name->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = name->d.iPAddress;
      char text[INET6_ADDRSTRLEN] = {};
      const int family = ASN1_STRING_length(ip) == 4 ? AF_INET : AF_INET6;
      if (inet_ntop(family, ASN1_STRING_get0_data(ip), text, sizeof text)) {
        entry = std::string("IP:") + text;
      }
    }
    if (entry.empty()) continue;
    out += (out.empty() ? "" : ", ") + entry;
  }
  return out;
}

// Whether a client connecting to `host` accepts the certificate's names, reading only the
// subjectAltName as Go's crypto/x509 (Prometheus) does.
bool covers(X509* cert, const std::string& host) {
  if (isIpAddress(host)) return X509_check_ip_asc(cert, host.c_str(), 0) == 1;
  return X509_check_host(cert, host.data(), host.size(), X509_CHECK_FLAG_NEVER_CHECK_SUBJECT,
                         nullptr) == 1;
}

// The names a client would connect with: the listen address, "localhost" beside a loopback
// one, this machine's names and addresses when it listens on every address.
std::vector<std::string> namesClientsUse(const HttpConfig& http,
                                         const ServedCertificateOptions& options) {
  if (http.listensOnEveryAddress()) return options.hostNames;
  const std::string host = http.listenHost();
  std::vector<std::string> names{host};
  if (http.listensOnLoopback() && host != "localhost") names.emplace_back("localhost");
  return names;
}

SetupFinding namesFinding(X509* cert, const HttpConfig& http,
                          const ServedCertificateOptions& options) {
  const std::string sans = altNames(cert);
  SetupFinding f{"http certificate", "", false};
  std::vector<std::string> covered;
  std::vector<std::string> missed;
  for (const std::string& name : namesClientsUse(http, options)) {
    (covers(cert, name) ? covered : missed).push_back(name);
  }
  f.ok = !covered.empty();
  const std::string names = sans.empty() ? "no subjectAltName" : "names " + sans;
  if (missed.empty()) {
    f.found = fmt::format("{}: cover {}", names, fmt::join(covered, ", "));
  } else if (f.ok) {
    f.found = fmt::format("{}: cover {}; not {} (a client connecting by that name refuses it)",
                          names, fmt::join(covered, ", "), fmt::join(missed, ", "));
  } else {
    f.found = fmt::format(
        "{}: NOT {} (clients connecting there refuse it, Prometheus included; it reads only "
        "subjectAltName, never the Common Name: make it with -addext "
        "\"subjectAltName=DNS:<name>,IP:<address>\", README: Certificates)",
        names, fmt::join(missed, ", "));
  }
  return f;
}

// Days (rounded down) from `from` to `to`, negative when `to` is earlier.
int daysBetween(const ASN1_TIME* from, const ASN1_TIME* to) {
  int days = 0;
  int seconds = 0;
  if (ASN1_TIME_diff(&days, &seconds, from, to) != 1) return 0;
  return days - (seconds < 0 ? 1 : 0);
}

SetupFinding validityFinding(X509* cert, const ServedCertificateOptions& options) {
  std::time_t now = std::chrono::system_clock::to_time_t(options.now);
  TimePtr nowTime(ASN1_TIME_set(nullptr, now));
  SetupFinding f{"http certificate", "", false};
  if (!nowTime) return f;
  if (X509_cmp_time(X509_get0_notBefore(cert), &now) > 0) {
    f.found = fmt::format("NOT YET VALID (starts in {} day(s): check this machine's clock)",
                          daysBetween(nowTime.get(), X509_get0_notBefore(cert)));
    return f;
  }
  const int left = daysBetween(nowTime.get(), X509_get0_notAfter(cert));
  if (X509_cmp_time(X509_get0_notAfter(cert), &now) < 0) {
    f.found = fmt::format(
        "EXPIRED {} day(s) ago: clients refuse it; renew it (the daemon reads a renewed file "
        "without a restart)",
        -left);
    return f;
  }
  f.ok = true;
  f.found = left < kExpiryWarningDays
                ? fmt::format(
                      "WARNING: expires in {} day(s); renew it (the daemon reads a "
                      "renewed file without a restart)",
                      left)
                : fmt::format("valid for {} more day(s)", left);
  return f;
}

// The distinguished name as one line ("CN=vigil-ca,O=home").
std::string nameText(const X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253) < 0) return "?";
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

SetupFinding issuerFinding(X509* cert, const std::string& certFile) {
  const bool selfSigned = X509_check_issued(cert, cert) == X509_V_OK;
  const std::string where = certFile.empty() ? "the inline cert" : certFile;
  return {"http certificate",
          selfSigned ? fmt::format("self-signed ({}): a scraper needs this certificate itself "
                                   "as its ca_file",
                                   nameText(X509_get_subject_name(cert)))
                     : fmt::format("signed by {}: a scraper needs that CA's certificate as its "
                                   "ca_file (not {})",
                                   nameText(X509_get_issuer_name(cert)), where),
          true};
}

}  // namespace

std::vector<SetupFinding> checkServedCertificate(const HttpConfig& http,
                                                 const ServedCertificateOptions& options) {
  if (!http.enabled || !http.web || !http.web->tls) return {};
  const TlsServerConfig& tls = *http.web->tls;
  std::string pem = tls.certPem;
  if (!tls.certFile.empty()) {
    std::ifstream in(tls.certFile);
    std::ostringstream text;
    text << in.rdbuf();
    pem = text.str();
  }
  X509Ptr cert = firstCertificate(pem);
  if (!cert) {
    return {{"http certificate",
             fmt::format("CANNOT READ {}", tls.certFile.empty() ? "the inline cert" : tls.certFile),
             false}};
  }
  return {namesFinding(cert.get(), http, options), validityFinding(cert.get(), options),
          issuerFinding(cert.get(), tls.certFile)};
}

std::vector<std::string> localNames() {
  std::vector<std::string> names;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') {
    names.emplace_back(name);
    addrinfo hints{};
    hints.ai_flags = AI_CANONNAME;
    addrinfo* found = nullptr;
    if (getaddrinfo(name, nullptr, &hints, &found) == 0 && found) {
      if (found->ai_canonname && names.front() != found->ai_canonname) {
        names.emplace_back(found->ai_canonname);
      }
      freeaddrinfo(found);
    }
  }
  ifaddrs* interfaces = nullptr;
  if (getifaddrs(&interfaces) != 0) return names;
  for (const ifaddrs* i = interfaces; i; i = i->ifa_next) {
    if (!i->ifa_addr || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    const int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    char text[NI_MAXHOST] = {};
    const socklen_t size = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    if (getnameinfo(i->ifa_addr, size, text, sizeof text, nullptr, 0, NI_NUMERICHOST) != 0) {
      continue;
    }
    // A link-local IPv6 address carries its interface ("fe80::1%eth0"): no certificate names it.
    if (std::string(text).find('%') != std::string::npos) continue;
    names.emplace_back(text);
  }
  freeifaddrs(interfaces);
  return names;
}

}  // namespace vigil
