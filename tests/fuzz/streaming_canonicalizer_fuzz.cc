// libFuzzer target for the streaming canonicalizer: arbitrary bytes, fed whole and in a chunking
// derived from the input. Fails (traps) when the two token streams differ; ASan and UBSan catch
// the rest.
//
// Input layout: byte 0 chooses the chunking and the content type, the rest is the page.
//
//   CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DSHINGLED_BUILD_FUZZERS=ON
//   ninja -C build-fuzz streaming_canonicalizer_fuzz
//   build-fuzz/tests/fuzz/streaming_canonicalizer_fuzz -max_total_time=600 -max_len=8192
//       -dict=tests/fuzz/streaming_canonicalizer.dict work-dir tests/fuzz/corpus/streaming_canonicalizer
//   # then fold what it found back, minimized:
//   build-fuzz/tests/fuzz/streaming_canonicalizer_fuzz -merge=1 new-dir old-dir work-dir
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/streaming_canonicalizer.h"
#include "dedup/tokenizer.h"

namespace {

using shingled::dedup::HtmlTextExtractor;
using shingled::dedup::StreamingCanonicalizer;
using shingled::dedup::TokenCollector;
using shingled::dedup::Tokenizer;
using Pieces = std::vector<std::string_view>;

// Splits `input` into pieces whose sizes come from `seed`: byte by byte, small pieces (to cut
// every construct) or network-sized ones.
Pieces Chunk(std::string_view input, uint8_t seed) {
  Pieces pieces;
  uint32_t state = seed * 2654435761u + 1;
  const uint32_t max_piece = (seed & 0x30) == 0x00 ? 1 : (seed & 0x30) == 0x10 ? 8 : 1500;
  for (size_t i = 0; i < input.size();) {
    state = state * 1103515245u + 12345u;
    const size_t n = 1 + (state >> 8) % max_piece;
    pieces.push_back(input.substr(i, n));
    i += n;
  }
  return pieces;
}

std::vector<std::string> ExtractorTokens(const Pieces& pieces) {
  TokenCollector collector;
  Tokenizer tokenizer(&collector);
  HtmlTextExtractor extractor(&tokenizer);
  for (std::string_view piece : pieces) extractor.Feed(piece);
  extractor.Finish();
  tokenizer.Finish();
  return collector.tokens;
}

std::vector<std::string> PageTokens(const Pieces& pieces, std::string_view content_type) {
  TokenCollector collector;
  StreamingCanonicalizer canonicalizer(content_type, &collector);
  for (std::string_view piece : pieces) canonicalizer.Feed(piece);
  canonicalizer.Finish();
  return collector.tokens;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t seed = data[0];
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  const Pieces whole{input};
  const Pieces chunked = Chunk(input, seed);

  // The HTML reader alone, on UTF-8 (or not) input.
  if (ExtractorTokens(whole) != ExtractorTokens(chunked)) __builtin_trap();

  // The whole page: sniffing, charset conversion in slices, the sniff buffer hand-over.
  static constexpr std::string_view kContentTypes[] = {"",
                                                       "text/html",
                                                       "text/html; charset=windows-1252",
                                                       "text/html; charset=shift_jis",
                                                       "text/plain; charset=utf-16le",
                                                       "text/html; charset=gb18030",
                                                       "text/html; charset=euc-kr",
                                                       "application/octet-stream"};
  const std::string_view content_type = kContentTypes[(seed >> 6) | ((seed & 1) << 2)];
  if (PageTokens(whole, content_type) != PageTokens(chunked, content_type)) __builtin_trap();
  return 0;
}
