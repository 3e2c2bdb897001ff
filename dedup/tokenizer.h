// Tokenizer: canonical UTF-8 text in, canonical tokens out, streaming.
//
// A token is a maximal run of Unicode letters (L*), numbers (N*) and combining marks (M*) that
// continue a run, case-folded with utf8proc (full case folding, per code point, no normalization).
// Marks continue a token because scripts such as Devanagari write vowel signs as Mc/Mn marks:
// splitting there would shatter every word. Ideographs, Hiragana and Katakana are each a token of
// their own: those scripts put no spaces between words, and one run would make a whole sentence
// one token. Everything else (punctuation, symbols, spaces, controls, U+FFFD) separates tokens.
// Invalid UTF-8 is decoded as U+FFFD per maximal invalid subsequence, so it separates tokens.
//
// A token longer than kMaxTokenBytes is cut into pieces of at most that many bytes at code point
// boundaries; this bounds memory per page and makes a 10 MB base64 blob cost no more than text.
//
// The token stream depends only on the bytes fed, never on how they were split into Feed calls.
//
// A Tokenizer is not safe for concurrent use; use one per page in flight.
#ifndef SHINGLED_DEDUP_TOKENIZER_H_
#define SHINGLED_DEDUP_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/simd.h"

namespace shingled::dedup {

inline constexpr size_t kMaxTokenBytes = 256;
// Bytes after a token that OnPaddedToken may read (their values mean nothing).
inline constexpr size_t kTokenPadding = 16;

// Receives tokens in document order. The view is valid only during the call.
class TokenSink {
 public:
  virtual ~TokenSink() = default;
  virtual void OnToken(std::string_view token) = 0;
  // The same, for a token followed in memory by kTokenPadding readable bytes, which lets a sink
  // copy a short token with one fixed-size move instead of a branch on its length. The Tokenizer
  // calls this one. By default, OnToken.
  virtual void OnPaddedToken(std::string_view token) { OnToken(token); }
};

class Tokenizer {
 public:
  // `sink` must outlive the Tokenizer. `simd` chooses the fast path for ASCII text (kAuto: the
  // best this CPU has); every level gives the same tokens. REQUIRES: CpuSupports(simd).
  explicit Tokenizer(TokenSink* sink, SimdLevel simd = SimdLevel::kAuto);
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Consumes UTF-8 text. A chunk may end inside a code point or a token.
  void Feed(std::string_view utf8);

  // Ends the current token, if any: a word boundary that the text itself does not show, such as
  // the edge of a block element. Also drops an incomplete UTF-8 sequence held from the last Feed
  // (it decodes as U+FFFD, a separator anyway).
  void Break();

  // Ends the stream: like Break(). The tokenizer may then be reused for another document.
  void Finish() { Break(); }

  // Tokens emitted since construction.
  uint64_t token_count() const { return token_count_; }

 private:
  void Emit();
  void AppendAscii(const char* bytes, size_t n);
  void AppendAsciiRun(const char* bytes, size_t n);
  void TakeAsciiBlock(const char* lower, uint64_t alnum);
  size_t FeedScalar(const unsigned char* s, size_t i, size_t n, size_t limit);
  void AppendCodePoint(char32_t cp);
  void HandleCodePoint(char32_t cp);
  size_t FeedPending(std::string_view utf8);

  TokenSink* const sink_;
  const bool use_avx2_;
  // The token being built, case-folded UTF-8. A fixed array: appending a byte is a store, with
  // no capacity check or zero fill as std::string would do.
  char token_[kMaxTokenBytes + kTokenPadding] = {};
  size_t token_len_ = 0;
  char pending_[4] = {};    // an incomplete UTF-8 sequence carried to the next Feed
  size_t pending_len_ = 0;
  uint64_t token_count_ = 0;
};

// Collects tokens into a vector; for tests and small tools.
class TokenCollector final : public TokenSink {
 public:
  void OnToken(std::string_view token) override { tokens.emplace_back(token); }
  std::vector<std::string> tokens;
};

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_TOKENIZER_H_
