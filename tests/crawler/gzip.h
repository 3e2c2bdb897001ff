// Gzip for crawler tests: builds the gzip bodies and members the code under test must decode.
#ifndef SHINGLED_TESTS_CRAWLER_GZIP_H_
#define SHINGLED_TESTS_CRAWLER_GZIP_H_

#include <zlib.h>

#include <cstring>
#include <string>
#include <string_view>

namespace shingled::testing {

// `data` compressed as one gzip member.
inline std::string Gzip(std::string_view data) {
  z_stream z;
  std::memset(&z, 0, sizeof(z));
  deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace shingled::testing

#endif  // SHINGLED_TESTS_CRAWLER_GZIP_H_
