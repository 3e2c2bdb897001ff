// Fuzzes CanonicalizePage with an arbitrary Content-Type and arbitrary bytes.
//
// Input: the Content-Type header value up to the first '\n' (when there is one in the first
// 200 bytes; otherwise no header), then the page. Besides crashes, sanitizer reports and hangs,
// it checks two properties that tests can only sample:
//   - info.tokens equals the number of tokens delivered;
//   - converting the page to UTF-8 in two pieces gives the same text as in one.
//
//   build-fuzz/tests/fuzz/canonicalize_fuzz -max_total_time=180 -max_len=65536
//       tests/fuzz/corpus/canonicalize
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "dedup/canonicalize.h"
#include "dedup/charset.h"
#include "dedup/tokenizer.h"

namespace {

using shingled::dedup::CanonicalizeInfo;
using shingled::dedup::ContentKind;
using shingled::dedup::TokenSink;
using shingled::dedup::Utf8Converter;

class CountingSink final : public TokenSink {
 public:
  void OnToken(std::string_view token) override {
    if (token.empty() || token.size() > shingled::dedup::kMaxTokenBytes) abort();
    ++count;
  }
  uint64_t count = 0;
};

std::string Convert(std::string_view charset, std::string_view bytes, size_t cut) {
  auto converter = Utf8Converter::Create(charset);
  if (!converter.ok()) abort();  // CanonicalizePage reported a charset it cannot convert
  std::string out;
  (*converter)->Convert(bytes.substr(0, cut), &out);
  (*converter)->Convert(bytes.substr(cut), &out);
  (*converter)->Finish(&out);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view content_type;
  const size_t newline = input.substr(0, 200).find('\n');
  if (newline != std::string_view::npos) {
    content_type = input.substr(0, newline);
    input.remove_prefix(newline + 1);
  }

  CountingSink sink;
  const CanonicalizeInfo info = shingled::dedup::CanonicalizePage(input, content_type, &sink);
  if (info.tokens != sink.count) abort();
  if (info.kind == ContentKind::kBinary) {
    if (!info.charset.empty() || info.tokens != 0) abort();
    return 0;
  }

  // Split invariance of the converter CanonicalizePage chose (bounded: the cut is derived from
  // the size, so each input checks one cut).
  if (input.size() <= 4096) {
    const std::string whole = Convert(info.charset, input, input.size());
    const std::string split =
        Convert(info.charset, input,
                input.size() / 3 + 1 > input.size() ? input.size() : input.size() / 3 + 1);
    if (whole != split) abort();
  }
  return 0;
}
