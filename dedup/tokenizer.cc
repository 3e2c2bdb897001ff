#include "dedup/tokenizer.h"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "dedup/internal/ascii_classify.h"

namespace shingled::dedup {
namespace {

// Class of a byte: kSep for ASCII separators, kMulti for bytes >= 0x80 (the slow path), otherwise
// the lower-cased byte itself (ASCII letters and digits).
constexpr unsigned char kSep = 0;
constexpr unsigned char kMulti = 1;
constexpr std::array<unsigned char, 256> MakeByteTable() {
  std::array<unsigned char, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = static_cast<unsigned char>(c);
  for (int c = 'a'; c <= 'z'; ++c) t[c] = static_cast<unsigned char>(c);
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = static_cast<unsigned char>(c - 'A' + 'a');
  for (int c = 0x80; c < 256; ++c) t[c] = kMulti;
  return t;
}
constexpr std::array<unsigned char, 256> kByteClass = MakeByteTable();

constexpr char32_t kReplacement = 0xFFFD;

// Scripts written without spaces between words: each character is a token of its own.
bool IsSegmentedScript(char32_t cp) {
  return (cp >= 0x3040 && cp <= 0x30FF) ||    // Hiragana, Katakana
         (cp >= 0x31F0 && cp <= 0x31FF) ||    // Katakana phonetic extensions
         (cp >= 0x3400 && cp <= 0x4DBF) ||    // CJK extension A
         (cp >= 0x4E00 && cp <= 0x9FFF) ||    // CJK unified ideographs
         (cp >= 0xF900 && cp <= 0xFAFF) ||    // CJK compatibility ideographs
         (cp >= 0xFF66 && cp <= 0xFF9F) ||    // half-width Katakana
         (cp >= 0x20000 && cp <= 0x3134F);    // CJK extensions B..G
}

enum class CharClass { kSeparator, kWordStart, kContinue, kSegmented };

CharClass Classify(char32_t cp) {
  if (IsSegmentedScript(cp)) return CharClass::kSegmented;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return CharClass::kWordStart;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
      return CharClass::kContinue;
    default:
      return CharClass::kSeparator;
  }
}

// Length of the UTF-8 sequence a lead byte announces, 0 for a byte that cannot lead one.
int SequenceLength(unsigned char b) {
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return 2;
  if (b >= 0xE0 && b <= 0xEF) return 3;
  if (b >= 0xF0 && b <= 0xF4) return 4;
  return 0;
}

// The valid range of the second byte after lead `b` (Unicode table 3-7), which excludes overlong
// forms, surrogates and code points above U+10FFFF.
bool ValidSecond(unsigned char lead, unsigned char b) {
  switch (lead) {
    case 0xE0: return b >= 0xA0 && b <= 0xBF;
    case 0xED: return b >= 0x80 && b <= 0x9F;
    case 0xF0: return b >= 0x90 && b <= 0xBF;
    case 0xF4: return b >= 0x80 && b <= 0x8F;
    default: return b >= 0x80 && b <= 0xBF;
  }
}

// Decodes one code point from s[0..n). Returns the bytes consumed, or 0 when s holds only the
// valid beginning of a longer sequence (more input needed). An invalid sequence decodes as
// U+FFFD consuming its maximal valid prefix (at least one byte), as the WHATWG decoder does.
size_t DecodeOne(const unsigned char* s, size_t n, char32_t* cp) {
  const unsigned char lead = s[0];
  const int len = SequenceLength(lead);
  if (len == 0) {
    *cp = kReplacement;
    return 1;
  }
  char32_t value = lead & (0x7F >> len);
  for (int i = 1; i < len; ++i) {
    if (static_cast<size_t>(i) >= n) return 0;
    const unsigned char b = s[i];
    const bool ok = (i == 1) ? ValidSecond(lead, b) : (b >= 0x80 && b <= 0xBF);
    if (!ok) {
      *cp = kReplacement;
      return static_cast<size_t>(i);
    }
    value = (value << 6) | (b & 0x3F);
  }
  *cp = value;
  return static_cast<size_t>(len);
}

}  // namespace

Tokenizer::Tokenizer(TokenSink* sink, SimdLevel simd)
    : sink_(sink), use_avx2_(ResolveSimdLevel(simd) != SimdLevel::kScalar) {}

void Tokenizer::Emit() {
  if (token_len_ == 0) return;
  ++token_count_;
  sink_->OnPaddedToken(std::string_view(token_, token_len_));
  token_len_ = 0;
}

void Tokenizer::AppendCodePoint(char32_t cp) {
  utf8proc_int32_t folded[8];
  int last_boundclass = 0;
  utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), folded, 8,
                                               UTF8PROC_CASEFOLD, &last_boundclass);
  if (n < 0 || n > 8) {  // cannot happen for a valid code point; keep the code point as it is
    folded[0] = static_cast<utf8proc_int32_t>(cp);
    n = 1;
  }
  for (utf8proc_ssize_t i = 0; i < n; ++i) {
    utf8proc_uint8_t buf[4];
    const utf8proc_ssize_t len = utf8proc_encode_char(folded[i], buf);
    if (token_len_ + static_cast<size_t>(len) > kMaxTokenBytes) Emit();
    std::memcpy(token_ + token_len_, buf, static_cast<size_t>(len));
    token_len_ += static_cast<size_t>(len);
  }
}

void Tokenizer::HandleCodePoint(char32_t cp) {
  switch (Classify(cp)) {
    case CharClass::kSeparator:
      Emit();
      break;
    case CharClass::kContinue:
      // A mark continues a token; a mark with nothing to continue is a separator.
      if (token_len_ > 0) AppendCodePoint(cp);
      break;
    case CharClass::kWordStart:
      AppendCodePoint(cp);
      break;
    case CharClass::kSegmented:
      Emit();
      AppendCodePoint(cp);
      Emit();
      break;
  }
}

// Completes a sequence carried over from the last Feed. Returns the bytes of `utf8` consumed.
size_t Tokenizer::FeedPending(std::string_view utf8) {
  size_t used = 0;
  while (pending_len_ > 0 && used < utf8.size()) {
    pending_[pending_len_++] = utf8[used++];
    char32_t cp;
    const size_t n = DecodeOne(reinterpret_cast<const unsigned char*>(pending_), pending_len_, &cp);
    if (n == 0) continue;  // still incomplete
    HandleCodePoint(cp);
    // pending_ held a valid prefix, so only the byte just added can have broken the sequence;
    // it is then read again as the start of what follows, as in an undivided buffer.
    if (n < pending_len_) --used;
    pending_len_ = 0;
  }
  return used;
}

void Tokenizer::AppendAscii(const char* bytes, size_t n) {
  while (n > 0) {
    if (token_len_ == kMaxTokenBytes) Emit();
    const size_t take = std::min(n, kMaxTokenBytes - token_len_);
    std::memcpy(token_ + token_len_, bytes, take);
    token_len_ += take;
    bytes += take;
    n -= take;
  }
}

// A run of at most kAsciiBlock bytes from the classified block, whose padding makes kTokenPadding
// bytes past the run readable: copied 16 bytes at a time rather than by a memcpy of variable
// length, a library call, unless the token would then be cut.
void Tokenizer::AppendAsciiRun(const char* bytes, size_t n) {
  if (token_len_ + n > kMaxTokenBytes) return AppendAscii(bytes, n);
  // token_ has kTokenPadding bytes past kMaxTokenBytes for the last copy's overrun.
  static_assert(kTokenPadding >= 16);
  char* out = token_ + token_len_;
  for (size_t o = 0; o < n; o += 16) std::memcpy(out + o, bytes + o, 16);
  token_len_ += n;
}

// Takes 64 classified ASCII bytes: each run of set bits in `alnum` continues or starts a token,
// each clear bit ends one. Work per token, not per byte; a token wholly inside the block goes to
// the sink straight from `lower`, without a copy.
void Tokenizer::TakeAsciiBlock(const char* lower, uint64_t alnum) {
  int pos = 0;
  while (pos < internal::kAsciiBlock) {
    const uint64_t rest = alnum >> pos;
    if ((rest & 1) == 0) {
      Emit();
      if (rest == 0) return;
      pos += __builtin_ctzll(rest);
    }
    // Bits shifted in above the block are 0, so ~rest ends the run at the block's end at most;
    // ~rest is 0 only for a block that is one run of 64 letters (ctz of 0 is undefined).
    const uint64_t ends = ~(alnum >> pos);
    const int run = ends == 0 ? internal::kAsciiBlock : __builtin_ctzll(ends);
    if (token_len_ == 0 && pos + run < internal::kAsciiBlock) {
      // run <= 63 < kMaxTokenBytes: never cut.
      ++token_count_;
      sink_->OnPaddedToken(std::string_view(lower + pos, static_cast<size_t>(run)));
    } else {
      AppendAsciiRun(lower + pos, static_cast<size_t>(run));
    }
    pos += run;
  }
}

// The byte-at-a-time path, from s[i] until at least `limit` (a code point may run past it) or
// the end. Returns where it stopped; an incomplete sequence at the end goes to pending_.
size_t Tokenizer::FeedScalar(const unsigned char* s, size_t i, size_t n, size_t limit) {
  while (i < limit) {
    // ASCII letters and digits appended one store each.
    unsigned char c = kByteClass[s[i]];
    while (c > kMulti) {
      if (token_len_ == kMaxTokenBytes) Emit();
      token_[token_len_++] = static_cast<char>(c);
      if (++i == limit) return i;
      c = kByteClass[s[i]];
    }
    if (c == kSep) {
      Emit();
      // Runs of separators (white space, punctuation) are skipped in one go.
      while (++i < limit && kByteClass[s[i]] == kSep) {
      }
      continue;
    }
    char32_t cp;
    const size_t used = DecodeOne(s + i, n - i, &cp);
    if (used == 0) {
      // The chunk ends inside a sequence: keep its bytes for the next Feed.
      pending_len_ = n - i;
      std::memcpy(pending_, s + i, pending_len_);
      return n;
    }
    HandleCodePoint(cp);
    i += used;
  }
  return i;
}

void Tokenizer::Feed(std::string_view utf8) {
  size_t i = FeedPending(utf8);
  const auto* s = reinterpret_cast<const unsigned char*>(utf8.data());
  const size_t n = utf8.size();
  if (use_avx2_) {
    // The padding after the block, for OnPaddedToken: defined bytes, though never used.
    alignas(64) char lower[internal::kAsciiBlock + kTokenPadding];
    std::memset(lower + internal::kAsciiBlock, 0, kTokenPadding);
    while (n - i >= internal::kAsciiBlock) {
      uint64_t alnum;
      if (internal::ClassifyAsciiAvx2(s + i, lower, &alnum)) {
        TakeAsciiBlock(lower, alnum);
        i += internal::kAsciiBlock;
      } else {
        // Non-ASCII in this block: the byte-at-a-time path takes the block.
        i = FeedScalar(s, i, n, i + internal::kAsciiBlock);
      }
    }
  }
  FeedScalar(s, i, n, n);
}

void Tokenizer::Break() {
  if (pending_len_ > 0) {
    pending_len_ = 0;
    HandleCodePoint(kReplacement);
  }
  Emit();
}

}  // namespace shingled::dedup
