#include "daemon/http/compression.h"

#include <zlib.h>

#include <cctype>

namespace shingled::daemon {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool AcceptsGzip(std::string_view header) {
  while (!header.empty()) {
    const size_t comma = header.find(',');
    std::string_view item = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    const size_t semi = item.find(';');
    const std::string_view coding = Trim(item.substr(0, semi));
    if (!EqualsIgnoringCase(coding, "gzip") && !EqualsIgnoringCase(coding, "x-gzip")) continue;
    if (semi == std::string_view::npos) return true;
    // "q=0", "q=0.0", "q=0.000": refused; any other weight accepts.
    std::string_view param = Trim(item.substr(semi + 1));
    if (param.size() < 2 || std::tolower(static_cast<unsigned char>(param[0])) != 'q' ||
        param[1] != '=') {
      return true;
    }
    param.remove_prefix(2);
    for (const char c : param) {
      if (c != '0' && c != '.') return true;
    }
    return false;
  }
  return false;
}

StatusOr<std::string> Gzip(std::string_view data) {
  z_stream z{};
  // 16 + MAX_WBITS: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return InternalError("gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (result != Z_STREAM_END) return InternalError("gzip: deflate failed");
  return out;
}

}  // namespace shingled::daemon
