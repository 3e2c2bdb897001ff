// HTML element names for the streaming canonicalizer: what each element does to the text
// (dedup/internal/html_elements.h, by Gumbo's list of known names) and to the tokenizer and tree
// builder, in a hash table keyed by the lower-case name packed into two words. Private to
// dedup/. The table is immutable once built: thread-safe.
#ifndef SHINGLED_DEDUP_INTERNAL_HTML_TAGS_H_
#define SHINGLED_DEDUP_INTERNAL_HTML_TAGS_H_

#include <gumbo.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace shingled::dedup::internal {

// Elements with behaviour of their own; the rest matter only for word breaks.
enum class Tag : uint8_t {
  kOther,
  kScript,
  kStyle,
  kXmp,
  kIframe,
  kNoembed,
  kNoframes,
  kNoscript,
  kTitle,
  kTextarea,
  kPlaintext,
  kTemplate,
  kSvg,
  kMath,
  kHtml,
  kHead,
  kBody,
  kBr,
  kSelect,
  kOption,
  kOptgroup,
  kInput,
  kKeygen,
  kTable,
  kFrameset,
};

// Flags of TagInfo.
enum TagFlag : uint8_t {
  kSeparates = 1,       // an HTML element whose edges separate words (html_elements.h)
  kBreakout = 2,        // leaves SVG/MathML content (HTML standard, 13.2.6.5)
  kHeadOk = 4,          // a start tag that keeps the "in head" insertion mode
  kHeadNoscriptOk = 8,  // a start tag allowed in "in head noscript"
  kVoid = 16,           // never has content: no end edge to wait for
  kCloser = 32,         // phrasing, but its end tag closes the elements opened inside it
  kDropped = 64,        // content dropped, edges invisible (html_elements.h)
  kTablePart = 128,     // ignored by the tree builder outside a table
};

// Counted elements: those whose open count decides whether an end tag has an element to close.
// The GumboTag value, or kNotCounted.
inline constexpr uint8_t kNotCounted = 0xFF;
static_assert(GUMBO_TAG_UNKNOWN < kNotCounted);

// Four bytes, aligned: it is copied as one word. As three bytes it was built with narrow stores
// and read back wide, and the failed store forwarding cost a tenth of the canonicalizer's time.
struct alignas(4) TagInfo {
  Tag tag = Tag::kOther;
  uint8_t flags = 0;
  uint8_t counter = kNotCounted;
};

// Tag names longer than this are no element we know; only whether they are too long is kept.
inline constexpr size_t kMaxTagName = 16;

// A tag name zero-padded to two words, so that a lookup compares two integers. NUL cannot occur
// in a stored name (AppendName replaces it, as the standard replaces it with U+FFFD), so the
// padding is unambiguous.
struct TagKey {
  uint64_t lo = 0;
  uint64_t hi = 0;
  friend bool operator==(const TagKey&, const TagKey&) = default;
};

inline TagKey KeyOf(std::string_view name) {
  char padded[kMaxTagName] = {};
  std::memcpy(padded, name.data(), std::min(name.size(), kMaxTagName));
  TagKey key;
  std::memcpy(&key.lo, padded, 8);
  std::memcpy(&key.hi, padded + 8, 8);
  return key;
}

// The name's bytes back from a key: `out` receives kMaxTagName bytes.
inline std::string_view NameOf(const TagKey& key, size_t length, char (&out)[kMaxTagName]) {
  std::memcpy(out, &key.lo, 8);
  std::memcpy(out + 8, &key.hi, 8);
  return std::string_view(out, length);
}

// An open-addressing hash table from tag name to TagInfo, built once: a tag costs two
// multiplications and usually one comparison, where binary search over ~155 names would cost
// seven string comparisons.
class TagTable {
 public:
  // Every name the HTML parser (Gumbo) knows, classified by html_elements.h, plus the names with
  // behaviour of their own.
  TagTable();

  TagInfo Lookup(TagKey key) const {
    for (size_t i = Hash(key);; i = (i + 1) & kMask) {
      const Slot& slot = slots_[i];
      if (slot.key == key) return slot.info;
      if (slot.key.lo == 0) return {};
    }
  }

 private:
  static constexpr int kBits = 9;  // 512 slots, above three times the ~155 names
  static constexpr size_t kMask = (size_t{1} << kBits) - 1;

  struct Slot {
    TagKey key;  // all zero: empty
    TagInfo info;
  };

  static size_t Hash(TagKey key) {
    return static_cast<size_t>((key.lo * 0x9E3779B97F4A7C15ull ^ key.hi * 0xC2B2AE3D27D4EB4Full) >>
                               (64 - kBits));
  }

  void Insert(std::string_view name, Tag tag, uint8_t flags);
  Slot& Find(std::string_view name);
  void SetCounter(std::string_view name, uint8_t counter) { Find(name).info.counter = counter; }
  void ClearFlag(std::string_view name, uint8_t flag) {
    Slot& slot = Find(name);
    slot.info.flags = static_cast<uint8_t>(slot.info.flags & ~flag);
  }

  std::array<Slot, kMask + 1> slots_;
};

// The one table, built on first use (thread-safe) and never destroyed.
const TagTable& Tags();

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_HTML_TAGS_H_
