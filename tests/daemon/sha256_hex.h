// The SHA-256 of a text in lowercase hex, computed with OpenSSL: what a takedown record's hash
// is checked against, independently of the product's own code.
#ifndef SHINGLED_TESTS_DAEMON_SHA256_HEX_H_
#define SHINGLED_TESTS_DAEMON_SHA256_HEX_H_

#include <openssl/sha.h>

#include <string>

namespace shingled::testing {

inline std::string Sha256Hex(const std::string& text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : digest) out += {kHex[b >> 4], kHex[b & 15]};
  return out;
}

}  // namespace shingled::testing

#endif  // SHINGLED_TESTS_DAEMON_SHA256_HEX_H_
