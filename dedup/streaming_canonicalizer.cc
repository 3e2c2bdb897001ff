// The streaming canonicalizer: a hand-written state machine after the HTML standard's tokenizer
// (13.2.5), with state names from the standard so that each can be checked against it.
//
// Speed comes from scanning text, comments, attribute values and raw text with SSE2 (or a byte
// table) for the few bytes that matter, and from handing whole text runs to the Tokenizer; no
// state allocates, and no call per byte is virtual.
#include "dedup/streaming_canonicalizer.h"

#include <gumbo.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <iterator>
#include <utility>

#include "dedup/internal/html_references.h"
#include "dedup/internal/html_tags.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace shingled::dedup {

std::string_view CanonicalizerKindName(CanonicalizerKind kind) {
  switch (kind) {
    case CanonicalizerKind::kStreaming:
      return "streaming";
    case CanonicalizerKind::kGumbo:
      return "gumbo";
  }
  return "unknown";
}

StatusOr<CanonicalizerKind> ParseCanonicalizerKind(std::string_view name) {
  if (name == "streaming") return CanonicalizerKind::kStreaming;
  if (name == "gumbo") return CanonicalizerKind::kGumbo;
  return Status(
      StatusCode::kInvalidArgument,
      "canonicalizer must be \"streaming\" or \"gumbo\", not \"" + std::string(name) + "\"");
}

namespace {

using internal::EncodeUtf8;
using internal::FindNamedReference;
using internal::FixNumericReference;
using internal::kBreakout;
using internal::kCloser;
using internal::kDropped;
using internal::KeyOf;
using internal::kHeadNoscriptOk;
using internal::kHeadOk;
using internal::kMaxReferenceName;
using internal::kMaxTagName;
using internal::kNotCounted;
using internal::kSeparates;
using internal::kTablePart;
using internal::kVoid;
using internal::NamedReference;
using internal::NameOf;
using internal::Tag;
using internal::TagInfo;
using internal::TagKey;
using internal::Tags;

constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";

// ---------------------------------------------------------------------------------------------
// Byte classes and scanning.

constexpr bool IsAsciiAlpha(unsigned char c) {
  return static_cast<unsigned>((c | 0x20) - 'a') < 26u;
}
constexpr bool IsAsciiDigit(unsigned char c) { return static_cast<unsigned>(c - '0') < 10u; }
constexpr bool IsAsciiAlnum(unsigned char c) { return IsAsciiAlpha(c) || IsAsciiDigit(c); }
constexpr bool IsHexDigit(unsigned char c) {
  return IsAsciiDigit(c) || static_cast<unsigned>((c | 0x20) - 'a') < 6u;
}
constexpr char ToLowerAscii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c;
}
// The HTML standard's ASCII whitespace minus CR, which the input stream preprocessing turns
// into LF before the tokenizer sees it.
constexpr bool IsHtmlSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

// Byte classes for the tag states: one table load and test per byte instead of a chain of
// comparisons.
enum TagByte : uint8_t { kSpaceByte = 1, kSlashByte = 2, kGreaterByte = 4, kEqualsByte = 8 };
constexpr std::array<uint8_t, 256> MakeTagByteTable() {
  std::array<uint8_t, 256> t{};
  for (unsigned char c : {' ', '\t', '\n', '\f', '\r'}) t[c] = kSpaceByte;
  t['/'] = kSlashByte;
  t['>'] = kGreaterByte;
  t['='] = kEqualsByte;
  return t;
}
constexpr std::array<uint8_t, 256> kTagByte = MakeTagByteTable();
uint8_t TagByteClass(char c) { return kTagByte[static_cast<unsigned char>(c)]; }

// Returns the first byte in [p, end) equal to one of `chars` (up to three; repeat one to use
// fewer), or `end`.
template <char A, char B, char C>
const char* FindAny(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i a = _mm_set1_epi8(A);
  const __m128i b = _mm_set1_epi8(B);
  const __m128i c = _mm_set1_epi8(C);
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, a), _mm_cmpeq_epi8(v, b)),
                                     _mm_cmpeq_epi8(v, c));
    const int mask = _mm_movemask_epi8(hit);
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p < end && *p != A && *p != B && *p != C) ++p;
  return p;
}

// Tracks whether the text sent so far ends inside a UTF-8 sequence. Such a tail is invalid
// whatever follows markup (a converter would have made it U+FFFD, a separator), so when markup
// interrupts the text the Tokenizer must not join it with bytes that come after the markup.
class Utf8Tail {
 public:
  void Update(std::string_view s) {
    if (!s.empty() && static_cast<unsigned char>(s.back()) < 0x80) {
      need_ = 0;  // ends in ASCII: complete (the common case)
      return;
    }
    size_t start = s.size() > 4 ? s.size() - 4 : 0;
    if (start > 0) need_ = 0;  // a sequence is at most 4 bytes: older bytes cannot matter
    for (size_t i = start; i < s.size(); ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if ((c & 0xC0) == 0x80) {
        if (need_ > 0) --need_;
      } else if (c >= 0xC2 && c <= 0xDF) {
        need_ = 1;
      } else if (c >= 0xE0 && c <= 0xEF) {
        need_ = 2;
      } else if (c >= 0xF0 && c <= 0xF4) {
        need_ = 3;
      } else {
        need_ = 0;
      }
    }
  }
  bool incomplete() const { return need_ != 0; }
  void Reset() { need_ = 0; }

 private:
  int need_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------------

class HtmlTextExtractor::Impl {
 public:
  explicit Impl(Tokenizer* tokenizer) : tokenizer_(tokenizer) {}

  void Feed(std::string_view in);
  void Finish();
  size_t Buffered() const { return name_len_ + ref_len_ + decl_len_ + temp_len_; }

 private:
  // States of the HTML standard's tokenizer (13.2.5), less those that only matter for
  // attribute values and doctype fields, which are skipped.
  enum class State : uint8_t {
    kData,
    kRcdata,
    kRawtext,
    kScriptData,
    kPlaintext,
    kTagOpen,
    kEndTagOpen,
    kTagName,
    kRawLessThan,    // RCDATA/RAWTEXT less-than sign; raw_return_ says which
    kRawEndTagOpen,  // also script data (escaped) end tag open
    kRawEndTagName,  // also script data (escaped) end tag name
    kScriptLessThan,
    kScriptEscapeStart,
    kScriptEscapeStartDash,
    kScriptEscaped,
    kScriptEscapedDash,
    kScriptEscapedDashDash,
    kScriptEscapedLessThan,
    kScriptDoubleEscapeStart,
    kScriptDoubleEscaped,
    kScriptDoubleEscapedDash,
    kScriptDoubleEscapedDashDash,
    kScriptDoubleEscapedLessThan,
    kScriptDoubleEscapeEnd,
    kBeforeAttrName,
    kAttrName,
    kAfterAttrName,
    kBeforeAttrValue,
    kAttrValueDoubleQuoted,
    kAttrValueSingleQuoted,
    kAttrValueUnquoted,
    kAfterAttrValueQuoted,
    kSelfClosingStartTag,
    kBogusComment,
    kMarkupDeclarationOpen,
    kCommentStart,
    kCommentStartDash,
    kComment,
    kCommentEndDash,
    kCommentEnd,
    kCommentEndBang,
    kDoctype,  // all doctype states: a doctype always ends at the first '>'
    kCdataSection,
    kCdataSectionBracket,
    kCdataSectionEnd,
    kCharacterReference,
    kNamedCharacterReference,
    kNumericCharacterReference,
    kHexadecimalReferenceStart,
    kDecimalCharacterReference,
    kHexadecimalCharacterReference,
  };

  bool Visible() const {
    return (template_depth_ | noscript_depth_ | foreign_drop_depth_ | frameset_) == 0;
  }

  // Sends text to the Tokenizer.
  void Text(std::string_view s) {
    tokenizer_->Feed(s);
    tail_.Update(s);
  }
  // Markup (or a dropped NUL) interrupts the text: see Utf8Tail.
  void EndTextRun() {
    if (tail_.incomplete()) {
      tokenizer_->Break();
      tail_.Reset();
    }
  }
  void Break() {
    tokenizer_->Break();
    tail_.Reset();
  }
  // Text in the data state: visible unless inside a dropped element; non-whitespace text ends
  // the document's head (the tree builder then opens <body>).
  void DataText(std::string_view s) {
    if (!body_started_) MaybeStartBody(s);
    if (Visible()) Text(s);
  }
  void MaybeStartBody(std::string_view s) {
    for (char c : s) {
      if (!IsHtmlSpace(static_cast<unsigned char>(c))) {
        StartBody();
        return;
      }
    }
  }
  void StartBody() {
    in_head_ = false;
    head_noscript_ = false;
    body_started_ = true;
  }
  // Text of an RCDATA, RAWTEXT or PLAINTEXT element: kept for title, textarea, xmp, plaintext.
  void RawText(std::string_view s) {
    if (raw_kept_) Text(s);
  }
  // Text that a character reference produced, or gave back when it matched nothing.
  void ReferenceText(std::string_view s) {
    if (ref_return_ == State::kData) {
      DataText(s);
    } else {
      RawText(s);
    }
  }
  void ReferenceCodePoint(char32_t cp) {
    char buf[4];
    ReferenceText(std::string_view(buf, EncodeUtf8(cp, buf)));
  }

  void StartTag(State next) {
    state_ = next;
    is_end_tag_ = false;
    self_closing_ = false;
    name_ = TagKey();
    name_len_ = 0;
    name_too_long_ = false;
  }
  void AppendName(char c) {
    if (name_len_ < kMaxTagName) {
      // Built in two words rather than in bytes: the lookup then reads the words straight from
      // registers or from same-size stores, where byte stores would stall its loads.
      const uint64_t byte = static_cast<unsigned char>(c == '\0' ? '\xFF' : ToLowerAscii(c));
      if (name_len_ < 8) {
        name_.lo |= byte << (8 * name_len_);
      } else {
        name_.hi |= byte << (8 * (name_len_ - 8));
      }
      ++name_len_;
    } else {
      name_too_long_ = true;
    }
  }

  // The tag is complete: the tree-builder part.
  void EmitTag();
  void OnStartTag(TagInfo info);
  void OnEndTag(TagInfo info);
  // Returns true when "in select" ignores the tag; may close the select first.
  bool SelectIgnoresStartTag(TagInfo info);
  bool SelectIgnoresEndTag(TagInfo info);
  void CloseSelect() {
    in_select_ = false;
    if (open_[GUMBO_TAG_SELECT] > 0) --open_[GUMBO_TAG_SELECT];
    if (Visible()) Break();
  }
  void EnterRaw(State state, std::string_view end_tag, bool kept) {
    state_ = state;
    raw_end_tag_ = end_tag;
    raw_end_key_ = KeyOf(end_tag);
    raw_kept_ = kept;
  }

  // Named reference held in ref_: resolves the longest match and sends the text.
  void ResolveNamedReference(bool semicolon);
  void ResolveNumericReference();

  // Appropriate end tag check for RCDATA, RAWTEXT and script data.
  bool AppropriateEndTag() const { return !name_too_long_ && name_ == raw_end_key_; }
  // A "</name" in raw text that is not the end tag: give it back as text.
  void GiveBackEndTag() {
    RawText("</");
    char buf[kMaxTagName];
    RawText(NameOf(name_, name_len_, buf));
    state_ = raw_return_;
  }

  // Inlined into Feed, its only caller: a state change is then a jump, not a call and return,
  // which halves the cost of markup.
  [[gnu::always_inline]] inline const char* Step(const char* p, const char* end);
  const char* TagStates(const char* p, const char* end);

  Tokenizer* tokenizer_;                      // not const, so that Finish() can reset by assignment
  const internal::TagTable* tags_ = &Tags();  // cached: Tags() is a call in another file
  Utf8Tail tail_;

  State state_ = State::kData;
  // The current tag.
  TagKey name_;  // lower case, zero-padded
  size_t name_len_ = 0;
  bool name_too_long_ = false;
  bool is_end_tag_ = false;
  bool self_closing_ = false;
  // Raw text: the element's name, where to go back after a false "</", whether text is kept.
  std::string_view raw_end_tag_;
  TagKey raw_end_key_;
  State raw_return_ = State::kData;
  bool raw_kept_ = false;
  // Script data double-escape: the bytes after "<" or "</", to recognise "script".
  char temp_[7] = {};
  size_t temp_len_ = 0;
  bool temp_too_long_ = false;
  // Markup declaration lookahead: "--", "DOCTYPE" or "[CDATA[".
  char decl_[7] = {};
  size_t decl_len_ = 0;
  // Character references.
  State ref_return_ = State::kData;
  char ref_[kMaxReferenceName + 1] = {};
  size_t ref_len_ = 0;
  uint32_t ref_value_ = 0;
  // The tree builder, reduced to what changes visible text. Depths saturate rather than wrap.
  uint32_t template_depth_ = 0;
  uint32_t noscript_depth_ = 0;      // <noscript> in body
  uint32_t foreign_depth_ = 0;       // open <svg> and <math>
  uint32_t foreign_drop_depth_ = 0;  // <script>/<style> inside SVG/MathML
  // Word-separating elements opened and not yet closed since the last <ruby> start tag.
  uint32_t blocks_in_closer_ = 0;
  // Start tags minus end tags, per word-separating element: an end tag with no element to close
  // is ignored by the tree builder, so it must not break a word. Implied ends are not seen, so a
  // count may stay above the truth; the end tag then breaks, as it did without the count.
  std::array<uint32_t, GUMBO_TAG_UNKNOWN> open_{};
  bool in_head_ = true;        // "before html", "before head" or "in head"
  bool body_started_ = false;  // not "in head" nor "after head" any more
  bool in_select_ = false;     // "in select" (or "in select in table")
  // A frameset document: "in frameset" and the modes after it ignore all text (the text for
  // frameless browsers is in <noframes>, raw text that is dropped anyway).
  uint32_t frameset_ = 0;
  bool head_noscript_ = false;  // "in head noscript"
};

namespace {
constexpr uint32_t kMaxDepth = 1u << 30;
void Increment(uint32_t* depth) {
  if (*depth < kMaxDepth) ++*depth;
}
void Decrement(uint32_t* depth) {
  if (*depth > 0) --*depth;
}
}  // namespace

// Consumes at least one byte of [p, end) in the current state and returns where it stopped.
// "Reconsume" in the standard is a state change that returns `p` unchanged.
inline const char* HtmlTextExtractor::Impl::Step(const char* p, const char* end) {
  switch (state_) {
    case State::kData: {
      const char* q;
      for (;;) {
        q = FindAny<'<', '&', '\0'>(p, end);
        if (q > p) DataText(std::string_view(p, q - p));
        if (q == end) return end;
        if (*q != '<') break;
        EndTextRun();
        // The common tags, "<name" and "</name", go straight to the tag states and back here
        // while the text goes on: no trip through the dispatch for "tag open".
        p = q + 1;
        if (p < end && IsAsciiAlpha(*p)) {
          StartTag(State::kTagName);
        } else if (end - p >= 2 && *p == '/' && IsAsciiAlpha(p[1])) {
          StartTag(State::kTagName);
          is_end_tag_ = true;
          ++p;
        } else {
          state_ = State::kTagOpen;
          return p;
        }
        p = TagStates(p, end);
        if (state_ != State::kData) return p;
      }
      if (*q == '&') {
        ref_return_ = State::kData;
        state_ = State::kCharacterReference;
      } else if (foreign_depth_ > 0) {
        DataText(kReplacementUtf8);  // the tree builder's rule for NUL in foreign content
      } else {
        EndTextRun();  // "in body" ignores NUL: the text on both sides joins
      }
      return q + 1;
    }

    case State::kRcdata: {
      const char* q = FindAny<'<', '&', '\0'>(p, end);
      if (q > p) RawText(std::string_view(p, q - p));
      if (q == end) return end;
      if (*q == '<') {
        raw_return_ = State::kRcdata;
        state_ = State::kRawLessThan;
      } else if (*q == '&') {
        ref_return_ = State::kRcdata;
        state_ = State::kCharacterReference;
      } else {
        RawText(kReplacementUtf8);
      }
      return q + 1;
    }

    case State::kRawtext: {
      const char* q = FindAny<'<', '\0', '\0'>(p, end);
      if (q > p) RawText(std::string_view(p, q - p));
      if (q == end) return end;
      if (*q == '<') {
        raw_return_ = State::kRawtext;
        state_ = State::kRawLessThan;
      } else {
        RawText(kReplacementUtf8);
      }
      return q + 1;
    }

    case State::kPlaintext: {
      const char* q = FindAny<'\0', '\0', '\0'>(p, end);
      if (q > p) RawText(std::string_view(p, q - p));
      if (q == end) return end;
      RawText(kReplacementUtf8);
      return q + 1;
    }

    case State::kTagOpen: {
      const char c = *p;
      if (c == '!') {
        state_ = State::kMarkupDeclarationOpen;
        decl_len_ = 0;
        return p + 1;
      }
      if (c == '/') {
        state_ = State::kEndTagOpen;
        return p + 1;
      }
      if (IsAsciiAlpha(c)) {
        StartTag(State::kTagName);
        return p;
      }
      if (c == '?') {
        state_ = State::kBogusComment;
        return p;
      }
      state_ = State::kData;  // "invalid-first-character-of-tag-name": '<' is text
      DataText("<");
      return p;
    }

    case State::kEndTagOpen: {
      const char c = *p;
      if (IsAsciiAlpha(c)) {
        StartTag(State::kTagName);
        is_end_tag_ = true;
        return p;
      }
      if (c == '>') {  // "</>" is nothing at all
        state_ = State::kData;
        return p + 1;
      }
      state_ = State::kBogusComment;
      return p;
    }

    case State::kTagName:
    case State::kBeforeAttrName:
    case State::kAttrName:
    case State::kAfterAttrName:
    case State::kBeforeAttrValue:
    case State::kAttrValueDoubleQuoted:
    case State::kAttrValueSingleQuoted:
    case State::kAttrValueUnquoted:
    case State::kAfterAttrValueQuoted:
    case State::kSelfClosingStartTag:
      return TagStates(p, end);

    case State::kBogusComment:
    case State::kDoctype: {
      const void* q = std::memchr(p, '>', end - p);
      if (q == nullptr) return end;
      state_ = State::kData;
      return static_cast<const char*>(q) + 1;
    }

    case State::kMarkupDeclarationOpen: {
      // Bytes arrive one at a time, so that a chunk boundary inside "DOCTYPE" changes nothing.
      // The lookahead holds only bytes that still match, and none of those is '>', so on a
      // mismatch only the newest byte can end the bogus comment.
      const char c = *p;
      decl_[decl_len_++] = c;
      const std::string_view got(decl_, decl_len_);
      constexpr std::string_view kComment = "--";
      constexpr std::string_view kDoctype = "doctype";
      constexpr std::string_view kCdata = "[CDATA[";
      bool doctype_prefix = true;
      for (size_t i = 0; i < decl_len_ && doctype_prefix; ++i) {
        doctype_prefix = i < kDoctype.size() && ToLowerAscii(got[i]) == kDoctype[i];
      }
      const bool comment_prefix = kComment.starts_with(got);
      const bool cdata_prefix = kCdata.starts_with(got);
      if (comment_prefix && got.size() == kComment.size()) {
        state_ = State::kCommentStart;
      } else if (doctype_prefix && got.size() == kDoctype.size()) {
        state_ = State::kDoctype;
      } else if (cdata_prefix && got.size() == kCdata.size()) {
        // CDATA sections exist only in foreign content; elsewhere "[CDATA[" opens a bogus
        // comment.
        state_ = foreign_depth_ > 0 ? State::kCdataSection : State::kBogusComment;
      } else if (!comment_prefix && !doctype_prefix && !cdata_prefix) {
        state_ = c == '>' ? State::kData : State::kBogusComment;
      } else {
        return p + 1;
      }
      decl_len_ = 0;
      return p + 1;
    }

    case State::kCommentStart:
      if (*p == '-') {
        state_ = State::kCommentStartDash;
        return p + 1;
      }
      if (*p == '>') {  // "<!-->"
        state_ = State::kData;
        return p + 1;
      }
      state_ = State::kComment;
      return p;

    case State::kCommentStartDash:
      if (*p == '-') {
        state_ = State::kCommentEnd;
        return p + 1;
      }
      if (*p == '>') {  // "<!--->"
        state_ = State::kData;
        return p + 1;
      }
      state_ = State::kComment;
      return p;

    case State::kComment: {
      // The "comment less-than sign" states only report nested "<!--"; they never end a
      // comment, so only '-' matters.
      const void* q = std::memchr(p, '-', end - p);
      if (q == nullptr) return end;
      state_ = State::kCommentEndDash;
      return static_cast<const char*>(q) + 1;
    }

    case State::kCommentEndDash:
      state_ = *p == '-' ? State::kCommentEnd : State::kComment;
      return *p == '-' ? p + 1 : p;

    case State::kCommentEnd:
      if (*p == '>') {
        state_ = State::kData;
      } else if (*p == '!') {
        state_ = State::kCommentEndBang;
      } else if (*p != '-') {
        state_ = State::kComment;
        return p;
      }
      return p + 1;

    case State::kCommentEndBang:
      if (*p == '-') {
        state_ = State::kCommentEndDash;
      } else if (*p == '>') {  // "--!>"
        state_ = State::kData;
      } else {
        state_ = State::kComment;
        return p;
      }
      return p + 1;

    case State::kCdataSection: {
      const char* q = FindAny<']', ']', ']'>(p, end);
      if (q > p) DataText(std::string_view(p, q - p));
      if (q == end) return end;
      state_ = State::kCdataSectionBracket;
      return q + 1;
    }

    case State::kCdataSectionBracket:
      if (*p == ']') {
        state_ = State::kCdataSectionEnd;
        return p + 1;
      }
      DataText("]");
      state_ = State::kCdataSection;
      return p;

    case State::kCdataSectionEnd:
      if (*p == ']') {
        DataText("]");
        return p + 1;
      }
      if (*p == '>') {
        state_ = State::kData;
        return p + 1;
      }
      DataText("]]");
      state_ = State::kCdataSection;
      return p;

    // RCDATA and RAWTEXT end tags: only "</name" for the element that opened the raw text.
    case State::kRawLessThan:
      if (*p == '/') {
        state_ = State::kRawEndTagOpen;
        return p + 1;
      }
      RawText("<");
      state_ = raw_return_;
      return p;

    case State::kRawEndTagOpen:
      if (IsAsciiAlpha(*p)) {
        StartTag(State::kRawEndTagName);
        is_end_tag_ = true;
        return p;
      }
      RawText("</");
      state_ = raw_return_;
      return p;

    case State::kRawEndTagName: {
      for (; p < end; ++p) {
        const char c = *p;
        if (IsHtmlSpace(c) || c == '/' || c == '>') {
          if (!AppropriateEndTag()) {
            GiveBackEndTag();
            return p;
          }
          if (c == '>') {
            EmitTag();
          } else {
            state_ = c == '/' ? State::kSelfClosingStartTag : State::kBeforeAttrName;
          }
          return p + 1;
        }
        if (!IsAsciiAlpha(c) || name_len_ >= raw_end_tag_.size()) {
          // Cannot be the end tag any more: give the bytes back to the raw text.
          GiveBackEndTag();
          return p;
        }
        AppendName(c);
      }
      return end;
    }

    // Script data and its escape states: the text is dropped; they exist to find the right
    // "</script>".
    case State::kScriptData: {
      const void* q = std::memchr(p, '<', end - p);
      if (q == nullptr) return end;
      state_ = State::kScriptLessThan;
      return static_cast<const char*>(q) + 1;
    }

    case State::kScriptLessThan:
      if (*p == '/') {
        raw_return_ = State::kScriptData;
        state_ = State::kRawEndTagOpen;
        return p + 1;
      }
      if (*p == '!') {
        state_ = State::kScriptEscapeStart;
        return p + 1;
      }
      state_ = State::kScriptData;
      return p;

    case State::kScriptEscapeStart:
      if (*p == '-') {
        state_ = State::kScriptEscapeStartDash;
        return p + 1;
      }
      state_ = State::kScriptData;
      return p;

    case State::kScriptEscapeStartDash:
      if (*p == '-') {
        state_ = State::kScriptEscapedDashDash;
        return p + 1;
      }
      state_ = State::kScriptData;
      return p;

    case State::kScriptEscaped: {
      const char* q = FindAny<'-', '<', '<'>(p, end);
      if (q == end) return end;
      state_ = *q == '-' ? State::kScriptEscapedDash : State::kScriptEscapedLessThan;
      return q + 1;
    }

    case State::kScriptEscapedDash:
    case State::kScriptEscapedDashDash:
      if (*p == '-') {
        state_ = State::kScriptEscapedDashDash;
      } else if (*p == '<') {
        state_ = State::kScriptEscapedLessThan;
      } else if (*p == '>' && state_ == State::kScriptEscapedDashDash) {
        state_ = State::kScriptData;
      } else {
        state_ = State::kScriptEscaped;
      }
      return p + 1;

    case State::kScriptEscapedLessThan:
      if (*p == '/') {
        raw_return_ = State::kScriptEscaped;
        state_ = State::kRawEndTagOpen;
        return p + 1;
      }
      if (IsAsciiAlpha(*p)) {
        temp_len_ = 0;
        temp_too_long_ = false;
        state_ = State::kScriptDoubleEscapeStart;
        return p;
      }
      state_ = State::kScriptEscaped;
      return p;

    case State::kScriptDoubleEscapeStart:
    case State::kScriptDoubleEscapeEnd: {
      const bool start = state_ == State::kScriptDoubleEscapeStart;
      const State matched = start ? State::kScriptDoubleEscaped : State::kScriptEscaped;
      const State unmatched = start ? State::kScriptEscaped : State::kScriptDoubleEscaped;
      const char c = *p;
      if (IsHtmlSpace(c) || c == '/' || c == '>') {
        const bool is_script = !temp_too_long_ && std::string_view(temp_, temp_len_) == "script";
        state_ = is_script ? matched : unmatched;
        return p + 1;
      }
      if (IsAsciiAlpha(c)) {
        if (temp_len_ < sizeof(temp_)) {
          temp_[temp_len_++] = ToLowerAscii(c);
        } else {
          temp_too_long_ = true;
        }
        return p + 1;
      }
      state_ = unmatched;
      return p;
    }

    case State::kScriptDoubleEscaped: {
      const char* q = FindAny<'-', '<', '<'>(p, end);
      if (q == end) return end;
      state_ = *q == '-' ? State::kScriptDoubleEscapedDash : State::kScriptDoubleEscapedLessThan;
      return q + 1;
    }

    case State::kScriptDoubleEscapedDash:
    case State::kScriptDoubleEscapedDashDash:
      if (*p == '-') {
        state_ = State::kScriptDoubleEscapedDashDash;
      } else if (*p == '<') {
        state_ = State::kScriptDoubleEscapedLessThan;
      } else if (*p == '>' && state_ == State::kScriptDoubleEscapedDashDash) {
        state_ = State::kScriptData;
      } else {
        state_ = State::kScriptDoubleEscaped;
      }
      return p + 1;

    case State::kScriptDoubleEscapedLessThan:
      if (*p == '/') {
        temp_len_ = 0;
        temp_too_long_ = false;
        state_ = State::kScriptDoubleEscapeEnd;
        return p + 1;
      }
      state_ = State::kScriptDoubleEscaped;
      return p;

    // Character references (13.2.5.72-80).
    case State::kCharacterReference: {
      const char c = *p;
      if (IsAsciiAlnum(c)) {
        ref_len_ = 0;
        state_ = State::kNamedCharacterReference;
        return p;
      }
      if (c == '#') {
        ref_[0] = '#';
        ref_len_ = 1;
        state_ = State::kNumericCharacterReference;
        return p + 1;
      }
      ReferenceText("&");
      state_ = ref_return_;
      return p;
    }

    case State::kNamedCharacterReference: {
      for (; p < end; ++p) {
        const char c = *p;
        if (c == ';') {
          ResolveNamedReference(/*semicolon=*/true);
          return p + 1;
        }
        if (!IsAsciiAlnum(c) || ref_len_ == kMaxReferenceName) {
          // No name is longer, so the match is decided; the rest is text in the return state.
          ResolveNamedReference(/*semicolon=*/false);
          return p;
        }
        ref_[ref_len_++] = c;
      }
      return end;
    }

    case State::kNumericCharacterReference:
      ref_value_ = 0;
      if (*p == 'x' || *p == 'X') {
        ref_[ref_len_++] = *p;
        state_ = State::kHexadecimalReferenceStart;
        return p + 1;
      }
      if (IsAsciiDigit(*p)) {
        state_ = State::kDecimalCharacterReference;
        return p;
      }
      ReferenceText("&#");  // "absence-of-digits-in-numeric-character-reference"
      state_ = ref_return_;
      return p;

    case State::kHexadecimalReferenceStart:
      if (IsHexDigit(*p)) {
        state_ = State::kHexadecimalCharacterReference;
        return p;
      }
      ReferenceText("&");
      ReferenceText(std::string_view(ref_, ref_len_));
      state_ = ref_return_;
      return p;

    case State::kDecimalCharacterReference:
    case State::kHexadecimalCharacterReference: {
      const bool hex = state_ == State::kHexadecimalCharacterReference;
      for (; p < end; ++p) {
        const auto c = static_cast<unsigned char>(*p);
        uint32_t digit;
        if (IsAsciiDigit(c)) {
          digit = c - '0';
        } else if (hex && IsHexDigit(c)) {
          digit = (c | 0x20) - 'a' + 10;
        } else {
          ResolveNumericReference();
          return c == ';' ? p + 1 : p;
        }
        // Saturate above the largest code point: the value only needs to be "too large".
        ref_value_ = std::min<uint32_t>(ref_value_ * (hex ? 16 : 10) + digit, 0x110000);
      }
      return end;
    }
  }
  return end;  // unreachable: every state is handled above
}

// The tag name and attribute states (13.2.5.8, 13.2.5.32-40) as one function with a label per
// state. A tag usually lies whole in one chunk, and a jump between labels costs far less than a
// trip back through Step's dispatch at every state change; state_ is written only when the chunk
// ends inside the tag. Attributes are skipped, but their quoting decides where the tag ends.
const char* HtmlTextExtractor::Impl::TagStates(const char* p, const char* end) {
  char c;
  switch (state_) {
    case State::kBeforeAttrName:
      goto before_attr_name;
    case State::kAttrName:
      goto attr_name;
    case State::kAfterAttrName:
      goto after_attr_name;
    case State::kBeforeAttrValue:
      goto before_attr_value;
    case State::kAttrValueDoubleQuoted:
      goto attr_value_double_quoted;
    case State::kAttrValueSingleQuoted:
      goto attr_value_single_quoted;
    case State::kAttrValueUnquoted:
      goto attr_value_unquoted;
    case State::kAfterAttrValueQuoted:
      goto after_attr_value_quoted;
    case State::kSelfClosingStartTag:
      goto self_closing_start_tag;
    default:
      goto tag_name;
  }

tag_name:
  for (; p < end; ++p) {
    c = *p;
    if (TagByteClass(c) == 0) {
      AppendName(c);
      continue;
    }
    if (IsHtmlSpace(c)) {
      ++p;
      goto before_attr_name;
    }
    if (c == '/') {
      ++p;
      goto self_closing_start_tag;
    }
    if (c == '>') {
      EmitTag();
      return p + 1;
    }
    AppendName(c);
  }
  state_ = State::kTagName;
  return end;

before_attr_name:
  for (; p < end; ++p) {
    c = *p;
    if (IsHtmlSpace(c)) continue;
    if (c == '/') {
      ++p;
      goto self_closing_start_tag;
    }
    if (c == '>') {
      EmitTag();
      return p + 1;
    }
    ++p;  // the first byte of the name; '=' here starts a name too
    goto attr_name;
  }
  state_ = State::kBeforeAttrName;
  return end;

attr_name:
  for (; p < end; ++p) {
    c = *p;
    if (TagByteClass(c) == 0) continue;
    if (IsHtmlSpace(c)) {
      ++p;
      goto after_attr_name;
    }
    if (c == '/') {
      ++p;
      goto self_closing_start_tag;
    }
    if (c == '=') {
      ++p;
      goto before_attr_value;
    }
    if (c == '>') {
      EmitTag();
      return p + 1;
    }
  }
  state_ = State::kAttrName;
  return end;

after_attr_name:
  for (; p < end; ++p) {
    c = *p;
    if (IsHtmlSpace(c)) continue;
    if (c == '/') {
      ++p;
      goto self_closing_start_tag;
    }
    if (c == '=') {
      ++p;
      goto before_attr_value;
    }
    if (c == '>') {
      EmitTag();
      return p + 1;
    }
    ++p;  // the first byte of the next attribute's name
    goto attr_name;
  }
  state_ = State::kAfterAttrName;
  return end;

before_attr_value:
  for (; p < end; ++p) {
    c = *p;
    if (IsHtmlSpace(c)) continue;
    if (c == '"') {
      ++p;
      goto attr_value_double_quoted;
    }
    if (c == '\'') {
      ++p;
      goto attr_value_single_quoted;
    }
    if (c == '>') {
      EmitTag();
      return p + 1;
    }
    goto attr_value_unquoted;  // reconsume
  }
  state_ = State::kBeforeAttrValue;
  return end;

attr_value_double_quoted : {
  const void* q = std::memchr(p, '"', end - p);
  if (q == nullptr) {
    state_ = State::kAttrValueDoubleQuoted;
    return end;
  }
  p = static_cast<const char*>(q) + 1;
  goto after_attr_value_quoted;
}

attr_value_single_quoted : {
  const void* q = std::memchr(p, '\'', end - p);
  if (q == nullptr) {
    state_ = State::kAttrValueSingleQuoted;
    return end;
  }
  p = static_cast<const char*>(q) + 1;
  goto after_attr_value_quoted;
}

attr_value_unquoted:
  for (; p < end; ++p) {
    c = *p;
    if ((TagByteClass(c) & (kSpaceByte | kGreaterByte)) == 0) continue;
    if (IsHtmlSpace(c)) {
      ++p;
      goto before_attr_name;
    }
    if (c == '>') {
      EmitTag();
      return p + 1;
    }
  }
  state_ = State::kAttrValueUnquoted;
  return end;

after_attr_value_quoted:
  if (p == end) {
    state_ = State::kAfterAttrValueQuoted;
    return end;
  }
  c = *p;
  if (IsHtmlSpace(c)) {
    ++p;
    goto before_attr_name;
  }
  if (c == '/') {
    ++p;
    goto self_closing_start_tag;
  }
  if (c == '>') {
    EmitTag();
    return p + 1;
  }
  goto before_attr_name;  // "missing-whitespace-between-attributes": reconsume

self_closing_start_tag:
  if (p == end) {
    state_ = State::kSelfClosingStartTag;
    return end;
  }
  if (*p == '>') {
    self_closing_ = true;
    EmitTag();
    return p + 1;
  }
  goto before_attr_name;  // "unexpected-solidus-in-tag": reconsume
}

void HtmlTextExtractor::Impl::Feed(std::string_view in) {
  const char* p = in.data();
  const char* const end = p + in.size();
  while (p < end) p = Step(p, end);
}

void HtmlTextExtractor::Impl::ResolveNamedReference(bool semicolon) {
  const std::string_view name(ref_, ref_len_);
  state_ = ref_return_;
  ref_len_ = 0;
  const NamedReference* match = nullptr;
  size_t matched = 0;  // bytes of `name` the match used
  if (semicolon) {
    char with_semicolon[kMaxReferenceName + 1];
    std::memcpy(with_semicolon, name.data(), name.size());
    with_semicolon[name.size()] = ';';
    match = FindNamedReference(std::string_view(with_semicolon, name.size() + 1));
    matched = name.size();
  }
  if (match == nullptr) {
    // The legacy names without ';' (106 of them, "amp", "copy", "eacute", ...) match as a
    // prefix: "&notit;" is "¬it;". Try the longest prefix first.
    for (size_t len = std::min(name.size(), internal::kMaxLegacyReferenceName);
         len > 0 && match == nullptr; --len) {
      match = FindNamedReference(name.substr(0, len));
      matched = len;
    }
  }
  if (match == nullptr) {
    ReferenceText("&");
    ReferenceText(name);
    if (semicolon) ReferenceText(";");
    return;
  }
  ReferenceCodePoint(match->first);
  if (match->second != 0) ReferenceCodePoint(match->second);
  if (matched < name.size()) ReferenceText(name.substr(matched));
  if (semicolon && !match->name.ends_with(';')) ReferenceText(";");
}

void HtmlTextExtractor::Impl::ResolveNumericReference() {
  state_ = ref_return_;
  ref_len_ = 0;
  ReferenceCodePoint(FixNumericReference(ref_value_));
}

void HtmlTextExtractor::Impl::EmitTag() {
  state_ = State::kData;
  const TagInfo info = name_too_long_ ? TagInfo{} : tags_->Lookup(name_);
  if (is_end_tag_) {
    OnEndTag(info);
  } else {
    OnStartTag(info);
  }
  name_len_ = 0;
}

void HtmlTextExtractor::Impl::OnStartTag(TagInfo info) {
  const bool dropped = (info.flags & kDropped) != 0;
  if (foreign_depth_ > 0) {
    if ((info.flags & kBreakout) == 0) {
      // An SVG or MathML element: no raw text, no RCDATA, and every edge separates words.
      // Script and style keep their Gumbo tags there, so the reference drops them; so do we.
      if (!dropped && Visible()) Break();
      if (self_closing_) return;
      if (info.tag == Tag::kSvg || info.tag == Tag::kMath) {
        Increment(&foreign_depth_);
      } else if (dropped) {
        Increment(&foreign_drop_depth_);
      }
      return;
    }
    // A breakout tag closes every open SVG/MathML element and is handled as HTML.
    foreign_depth_ = 0;
    foreign_drop_depth_ = 0;
  }

  if (in_select_ && SelectIgnoresStartTag(info)) return;
  // A <frameset> before any body content replaces the body; later ones are ignored.
  if (info.tag == Tag::kFrameset) {
    if (body_started_) return;  // ignored, no edge
    frameset_ = 1;
  }
  if (head_noscript_ && (info.flags & kHeadNoscriptOk) == 0) {
    head_noscript_ = false;  // "in head noscript", anything else: pop <noscript>, reprocess
  }
  if (!body_started_ && (info.flags & kHeadOk) == 0 && info.tag != Tag::kFrameset) StartBody();
  if ((info.flags & kSeparates) != 0) {
    // Table parts outside a table are ignored: no element, no edge.
    if ((info.flags & kTablePart) != 0 && open_[GUMBO_TAG_TABLE] == 0) return;
    if (Visible()) Break();
    if ((info.flags & kVoid) == 0) {
      Increment(&blocks_in_closer_);
      if (info.counter != kNotCounted) Increment(&open_[info.counter]);
    }
  } else if ((info.flags & kCloser) != 0) {
    blocks_in_closer_ = 0;
  }

  switch (info.tag) {
    case Tag::kScript:
      EnterRaw(State::kScriptData, "script", false);
      break;
    case Tag::kStyle:
      EnterRaw(State::kRawtext, "style", false);
      break;
    case Tag::kIframe:
      EnterRaw(State::kRawtext, "iframe", false);
      break;
    case Tag::kNoembed:
      EnterRaw(State::kRawtext, "noembed", false);
      break;
    case Tag::kNoframes:
      EnterRaw(State::kRawtext, "noframes", false);
      break;
    case Tag::kXmp:
      EnterRaw(State::kRawtext, "xmp", Visible());
      break;
    case Tag::kTitle:
      EnterRaw(State::kRcdata, "title", Visible());
      break;
    case Tag::kTextarea:
      EnterRaw(State::kRcdata, "textarea", Visible());
      break;
    case Tag::kPlaintext:
      EnterRaw(State::kPlaintext, "", Visible());
      break;
    case Tag::kNoscript:
      // Scripting is disabled, as in Gumbo: the content is markup. In the head only
      // link/meta/style/... may follow, and text ends the head and shows.
      if (in_head_) {
        head_noscript_ = true;
      } else {
        Increment(&noscript_depth_);
      }
      break;
    case Tag::kTemplate:
      Increment(&template_depth_);
      break;
    case Tag::kSvg:
    case Tag::kMath:
      if (!self_closing_) Increment(&foreign_depth_);
      break;
    case Tag::kSelect:
      in_select_ = true;
      break;
    default:
      break;
  }
}

// "in select" (13.2.6.4.16) and "in select in table" (13.2.6.4.17): most tags are ignored
// there, so they neither separate words nor switch the tokenizer ("<select><style>x" shows x).
// A select left open swallows the rest of the page's markup, in the reference too.
bool HtmlTextExtractor::Impl::SelectIgnoresStartTag(TagInfo info) {
  switch (info.tag) {
    case Tag::kOption:
    case Tag::kOptgroup:
    case Tag::kScript:
    case Tag::kTemplate:
    case Tag::kHtml:
      return false;
    case Tag::kSelect:  // acts as </select>
      CloseSelect();
      return true;
    case Tag::kInput:
    case Tag::kKeygen:
    case Tag::kTextarea:  // close the select, then are processed as usual
      CloseSelect();
      return false;
    default:
      // Table parts close a select opened inside a table (approximated by "a table is open").
      if ((info.tag == Tag::kTable || (info.flags & kTablePart) != 0) &&
          open_[GUMBO_TAG_TABLE] > 0) {
        CloseSelect();
        return false;
      }
      return true;
  }
}

bool HtmlTextExtractor::Impl::SelectIgnoresEndTag(TagInfo info) {
  switch (info.tag) {
    case Tag::kOption:
    case Tag::kOptgroup:
      return false;
    case Tag::kTemplate:  // pops the template and the select inside it
      in_select_ = false;
      return false;
    case Tag::kSelect:
      CloseSelect();
      return true;
    default:
      if ((info.tag == Tag::kTable || (info.flags & kTablePart) != 0) &&
          open_[GUMBO_TAG_TABLE] > 0) {
        CloseSelect();
        return false;
      }
      return true;
  }
}

void HtmlTextExtractor::Impl::OnEndTag(TagInfo info) {
  const bool dropped = (info.flags & kDropped) != 0;
  if (foreign_depth_ > 0) {
    if (!dropped && Visible()) Break();
    if (info.tag == Tag::kSvg || info.tag == Tag::kMath) {
      Decrement(&foreign_depth_);
      if (foreign_depth_ == 0) foreign_drop_depth_ = 0;
    } else if (dropped) {
      Decrement(&foreign_drop_depth_);
    }
    return;
  }
  if (head_noscript_) {
    // "in head noscript": </noscript> closes it, </br> pops it and ends the head, every other
    // end tag is ignored (no word break either: the tree has no edge there).
    head_noscript_ = false;
    if (info.tag == Tag::kNoscript) return;
    if (info.tag != Tag::kBr) {
      head_noscript_ = true;
      return;
    }
    StartBody();
  }
  if (in_select_ && SelectIgnoresEndTag(info)) return;
  if (!body_started_) {
    // "</head>" leaves the head for "after head"; "</body>", "</html>", "</br>" there or in the
    // head open the body.
    if (info.tag == Tag::kHead) {
      in_head_ = false;
    } else if (info.tag == Tag::kBody || info.tag == Tag::kHtml || info.tag == Tag::kBr) {
      StartBody();
    }
  }
  if ((info.flags & kSeparates) != 0) {
    // "</p>" and "</br>" always make an element (an empty <p>, a <br>); any other end tag
    // with nothing to close is ignored.
    if (info.counter != kNotCounted && open_[info.counter] == 0 && info.counter != GUMBO_TAG_P &&
        info.counter != GUMBO_TAG_BR) {
      return;
    }
    if (info.counter != kNotCounted) Decrement(&open_[info.counter]);
    if (Visible()) Break();
    Decrement(&blocks_in_closer_);
  } else if ((info.flags & kCloser) != 0) {
    // "</ruby>" closes an open <rt> or <rp>: the tree has the end edge of a word-separating
    // element here, though the source shows no end tag.
    if (blocks_in_closer_ > 0 && Visible()) Break();
    blocks_in_closer_ = 0;
  }
  if (info.tag == Tag::kTemplate) {
    Decrement(&template_depth_);
  } else if (info.tag == Tag::kNoscript) {
    Decrement(&noscript_depth_);
  }
}

void HtmlTextExtractor::Impl::Finish() {
  // End of file in each state (13.2.5): what the standard emits as text, we send; an
  // unfinished tag, comment or doctype is dropped.
  switch (state_) {
    case State::kTagOpen:
      DataText("<");
      break;
    case State::kEndTagOpen:
      DataText("</");
      break;
    case State::kRawLessThan:
      RawText("<");
      break;
    case State::kRawEndTagOpen:
      RawText("</");
      break;
    case State::kRawEndTagName:
      GiveBackEndTag();
      break;
    case State::kCdataSectionBracket:
      DataText("]");
      break;
    case State::kCdataSectionEnd:
      DataText("]]");
      break;
    case State::kCharacterReference:
      ReferenceText("&");
      break;
    case State::kNamedCharacterReference:
      ResolveNamedReference(/*semicolon=*/false);
      break;
    case State::kNumericCharacterReference:
      ReferenceText("&#");
      break;
    case State::kHexadecimalReferenceStart:
      ReferenceText("&");
      ReferenceText(std::string_view(ref_, ref_len_));
      break;
    case State::kDecimalCharacterReference:
    case State::kHexadecimalCharacterReference:
      ResolveNumericReference();
      break;
    default:
      break;
  }
  EndTextRun();
  *this = Impl(tokenizer_);  // ready for the next document
}

// ---------------------------------------------------------------------------------------------

HtmlTextExtractor::HtmlTextExtractor(Tokenizer* tokenizer)
    : impl_(std::make_unique<Impl>(tokenizer)) {}
HtmlTextExtractor::~HtmlTextExtractor() = default;
void HtmlTextExtractor::Feed(std::string_view utf8_html) { impl_->Feed(utf8_html); }
void HtmlTextExtractor::Finish() { impl_->Finish(); }
size_t HtmlTextExtractor::BufferedBytesForTesting() const { return impl_->Buffered(); }

void CanonicalizeHtmlStreaming(std::string_view utf8_html, Tokenizer* tokenizer) {
  HtmlTextExtractor extractor(tokenizer);
  extractor.Feed(utf8_html);
  extractor.Finish();
}

// ---------------------------------------------------------------------------------------------

StreamingCanonicalizer::StreamingCanonicalizer(std::string_view content_type, TokenSink* sink)
    : content_type_(content_type), tokenizer_(sink), html_(&tokenizer_) {}

StreamingCanonicalizer::~StreamingCanonicalizer() = default;

void StreamingCanonicalizer::Feed(std::string_view bytes) {
  assert(!finished_);
  if (!decided_) {
    const size_t take = std::min(kSniffBytes - head_.size(), bytes.size());
    head_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (head_.size() < kSniffBytes) return;
    Decide();
  }
  Process(bytes);
}

void StreamingCanonicalizer::Decide() {
  decided_ = true;
  const ContentType type = ParseContentType(content_type_);
  info_.kind = DetectContentKind(type.mime, head_);
  if (info_.kind != ContentKind::kBinary) {
    const CharsetDecision decision =
        DetectCharset(type.charset, head_, info_.kind == ContentKind::kHtml);
    info_.charset = decision.charset;
    info_.charset_source = decision.source;
    bom_to_skip_ = decision.bom_length;
    // Declared UTF-8 needs no conversion: the Tokenizer reads invalid UTF-8 as separators,
    // exactly as it reads the U+FFFD a converter would put there, and markup never joins the two
    // sides of an invalid sequence (see Utf8Tail). Skipping the copy is a large part of the
    // speed. Sniffed UTF-8 is converted: its invalid bytes are read as windows-1252
    // (Utf8Converter::CreateFor).
    if (decision.charset != "UTF-8" || decision.source == CharsetSource::kSniffUtf8) {
      StatusOr<std::unique_ptr<Utf8Converter>> converter = Utf8Converter::CreateFor(decision);
      // DetectCharset only returns names Create accepts; should that ever break, reading the
      // bytes as UTF-8 still yields tokens rather than none.
      if (converter.ok()) converter_ = std::move(converter).value();
    }
  }
  std::string head = std::move(head_);
  head_ = std::string();  // release the sniffing buffer: it is not needed any more
  Process(head);
}

void StreamingCanonicalizer::Process(std::string_view bytes) {
  if (info_.kind == ContentKind::kBinary) return;
  if (bom_to_skip_ > 0) {
    const size_t skip = std::min(bom_to_skip_, bytes.size());
    bytes.remove_prefix(skip);
    bom_to_skip_ -= skip;
  }
  const bool html = info_.kind == ContentKind::kHtml;
  if (converter_ == nullptr) {
    if (html) {
      html_.Feed(bytes);
    } else {
      tokenizer_.Feed(bytes);
    }
    return;
  }
  while (!bytes.empty()) {
    const std::string_view slice = bytes.substr(0, kConvertSliceBytes);
    bytes.remove_prefix(slice.size());
    utf8_.clear();
    converter_->Convert(slice, &utf8_);
    if (html) {
      html_.Feed(utf8_);
    } else {
      tokenizer_.Feed(utf8_);
    }
  }
}

CanonicalizeInfo StreamingCanonicalizer::Finish() {
  assert(!finished_);
  if (!decided_) Decide();
  finished_ = true;
  if (converter_ != nullptr) {
    utf8_.clear();
    converter_->Finish(&utf8_);
    if (info_.kind == ContentKind::kHtml) {
      html_.Feed(utf8_);
    } else {
      tokenizer_.Feed(utf8_);
    }
  }
  if (info_.kind == ContentKind::kHtml) html_.Finish();
  tokenizer_.Finish();
  info_.tokens = tokenizer_.token_count();
  return info_;
}

size_t StreamingCanonicalizer::BufferedBytesForTesting() const {
  return head_.size() + html_.BufferedBytesForTesting();
}

CanonicalizeInfo CanonicalizePageWith(CanonicalizerKind kind, std::string_view bytes,
                                      std::string_view content_type, TokenSink* sink) {
  if (kind == CanonicalizerKind::kGumbo) return CanonicalizePage(bytes, content_type, sink);
  StreamingCanonicalizer canonicalizer(content_type, sink);
  canonicalizer.Feed(bytes);
  return canonicalizer.Finish();
}

}  // namespace shingled::dedup
