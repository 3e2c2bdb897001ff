// Character references of the HTML standard (13.5): the named ones (all 2231, the legacy ones
// without a semicolon included), and the fix-ups of numeric ones. Private to dedup/; used by the
// streaming canonicalizer. Constant data and pure functions: thread-safe.
#ifndef SHINGLED_DEDUP_INTERNAL_HTML_REFERENCES_H_
#define SHINGLED_DEDUP_INTERNAL_HTML_REFERENCES_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace shingled::dedup::internal {

struct NamedReference {
  std::string_view name;  // without '&', with ';' when the standard's name has one
  char32_t first;
  char32_t second;  // 0 when the reference is one code point
};

// The longest name has 31 letters and digits before its ';' ("CounterClockwiseContourIntegral").
inline constexpr size_t kMaxReferenceName = 31;

// The longest name without a semicolon ("frac12", "middot", ...).
inline constexpr size_t kMaxLegacyReferenceName = 6;

// The reference named exactly `name` (without '&'; with ';' to find the names that have one), or
// nullptr.
const NamedReference* FindNamedReference(std::string_view name);

// The code point a numeric reference to `value` means: U+FFFD for 0, surrogates and values above
// U+10FFFF (any larger value may be passed as 0x110000), the windows-1252 character for the C1
// controls that have one, otherwise `value` itself.
char32_t FixNumericReference(uint32_t value);

// Writes the UTF-8 of `cp` (at most U+10FFFF) to `out`, which has room for 4 bytes; returns
// the length.
size_t EncodeUtf8(char32_t cp, char* out);

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_HTML_REFERENCES_H_
