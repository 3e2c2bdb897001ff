// Fuzzes the WARC reader and record interpretation on arbitrary bytes (plain or, when the input
// starts with the gzip magic, gzip). Besides crashes, sanitizer reports and hangs, it checks that
// every problem offset lies inside the input and that records come out in offset order.
//
//   build-fuzz/tests/fuzz/warc_fuzz -max_total_time=120 -max_len=65536
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "crawler/warc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shingled::crawler;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  WarcReaderOptions options;
  options.max_record_bytes = 1 << 20;
  WarcReader reader(MakeStringSource(bytes), options);
  WarcRecord record;
  uint64_t last = 0;
  bool first = true;
  while (reader.Next(&record)) {
    if (!first && record.offset <= last) abort();
    first = false;
    last = record.offset;
    WarcPageOptions page_options;
    page_options.max_body_bytes = 1 << 20;
    (void)InterpretRecord(record, page_options);  // any outcome; it must just not crash
  }
  for (const WarcProblem& problem : reader.problems()) {
    if (problem.offset > size) abort();
  }
  return 0;
}
