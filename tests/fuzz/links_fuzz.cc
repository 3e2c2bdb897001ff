// Fuzzes link extraction: arbitrary bytes as a page from a fixed URL. Besides crashes, sanitizer
// reports and hangs, it checks that every link is an http(s) URL that normalizes to itself.
//
//   build-fuzz/tests/fuzz/links_fuzz -max_total_time=120 -max_len=65536
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "crawler/links.h"
#include "crawler/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view html(reinterpret_cast<const char*>(data), size);
  const shingled::crawler::ExtractedLinks got =
      shingled::crawler::ExtractLinks(html, "http://fuzz.example/dir/page.html");
  for (const std::string& link : got.links) {
    auto again = shingled::crawler::NormalizeUrl(link);
    if (!again.ok() || *again != link) abort();
  }
  return 0;
}
