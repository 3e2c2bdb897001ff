// Fuzzes charset detection and conversion (dedup/charset.h). The input's first line (up to 64
// bytes) is a Content-Type header, the rest the page. Besides crashes, sanitizer reports and
// hangs, it aborts when
// - a detected charset is not a canonical name (ResolveCharsetLabel does not give it back);
// - a converter's output is not valid UTF-8 (invalid input becomes U+FFFD, never passes through);
// - converting the page in pieces (cut at points taken from the input) gives other bytes than
//   converting it whole: a chunk may end inside a character.
// Each page is converted with the detected encoding and with one chosen by the input's last byte.
//
//   build-fuzz/tests/fuzz/charset_fuzz -max_total_time=600 tests/fuzz/corpus/charset
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "dedup/charset.h"

namespace {

using namespace shingled::dedup;

constexpr std::array<std::string_view, 20> kCharsets = {
    "UTF-8",       "windows-1252", "ISO-8859-2",     "KOI8-R",       "macintosh",
    "windows-874", "GBK",          "gb18030",        "Big5",         "EUC-JP",
    "ISO-2022-JP", "Shift_JIS",    "EUC-KR",         "UTF-16BE",     "UTF-16LE",
    "IBM866",      "ISO-8859-8-I", "x-user-defined", "windows-1258", "x-mac-cyrillic"};

void Check(bool ok) {
  if (!ok) abort();
}

// RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF.
bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // cut short
    for (size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF))) return false;
    if (cp >= 0xD800 && cp <= 0xDFFF) return false;
    i += n + 1;
  }
  return true;
}

std::string ConvertWhole(Utf8Converter& converter, std::string_view bytes) {
  std::string out;
  converter.Convert(bytes, &out);
  converter.Finish(&out);
  return out;
}

// Cuts `bytes` after 1, 2, 3, ... bytes in turn, the step starting at `seed`.
std::string ConvertInPieces(Utf8Converter& converter, std::string_view bytes, unsigned seed) {
  std::string out;
  size_t step = seed % 7 + 1;
  while (!bytes.empty()) {
    const size_t n = std::min(step, bytes.size());
    converter.Convert(bytes.substr(0, n), &out);
    bytes.remove_prefix(n);
    step = step % 7 + 1;
  }
  converter.Finish(&out);
  return out;
}

void FuzzConverter(std::unique_ptr<Utf8Converter> converter, std::string_view page, unsigned seed) {
  const std::string whole = ConvertWhole(*converter, page);
  Check(ValidUtf8(whole));
  // Finish resets the converter, so the same object converts again from the start.
  const std::string pieces = ConvertInPieces(*converter, page, seed);
  Check(pieces == whole);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t nl = in.find('\n');
  const std::string_view header = in.substr(0, std::min<size_t>(nl, 64));
  const std::string_view page = nl == std::string_view::npos ? in : in.substr(nl + 1);

  const ContentType type = ParseContentType(header);
  for (const char c : type.mime) Check(!(c >= 'A' && c <= 'Z'));
  const std::string label = ResolveCharsetLabel(type.charset);
  Check(label.empty() || ResolveCharsetLabel(label) == label);
  const std::string meta = PrescanMetaCharset(page);
  Check(meta.empty() || ResolveCharsetLabel(meta) == meta);
  const ContentKind kind = DetectContentKind(type.mime, page.substr(0, kSniffBytes));

  const CharsetDecision decision =
      DetectCharset(type.charset, page.substr(0, kSniffBytes), kind == ContentKind::kHtml);
  Check(ResolveCharsetLabel(decision.charset) == decision.charset);
  Check(decision.bom_length <= page.size() && decision.bom_length <= 3);
  const unsigned seed = size == 0 ? 0 : data[size - 1];
  auto detected = Utf8Converter::CreateFor(decision);
  Check(detected.ok());
  FuzzConverter(std::move(*detected), page.substr(decision.bom_length), seed);

  auto chosen = Utf8Converter::Create(kCharsets[seed % kCharsets.size()]);
  Check(chosen.ok());
  FuzzConverter(std::move(*chosen), page, seed / 3);
  return 0;
}
