#include "dedup/tokenizer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace shingled::dedup {
namespace {

using Tokens = std::vector<std::string>;

Tokens Tokenize(std::string_view text, SimdLevel simd = SimdLevel::kAuto) {
  TokenCollector sink;
  Tokenizer tokenizer(&sink, simd);
  tokenizer.Feed(text);
  tokenizer.Finish();
  return sink.tokens;
}

TEST(TokenizerTest, AsciiWordsAreCaseFoldedRunsOfLettersAndDigits) {
  EXPECT_EQ(Tokenize("A rose is a ROSE, is a r0se!"),
            (Tokens{"a", "rose", "is", "a", "rose", "is", "a", "r0se"}));
  EXPECT_EQ(Tokenize("don't stop-me_now"), (Tokens{"don", "t", "stop", "me", "now"}));
  EXPECT_EQ(Tokenize(""), Tokens{});
  EXPECT_EQ(Tokenize("  ,.;  "), Tokens{});
}

TEST(TokenizerTest, UnicodeLettersAreFoldedWithFullCaseFolding) {
  // "Straße" folds to "strasse" (full folding), Greek final sigma folds to sigma.
  EXPECT_EQ(Tokenize("Straße ΟΔΟΣ Été"), (Tokens{"strasse", "οδοσ", "été"}));
  // Cyrillic and digits from other scripts (Arabic-Indic) are letters and numbers.
  EXPECT_EQ(Tokenize("Привет ١٢٣"), (Tokens{"привет", "١٢٣"}));
}

TEST(TokenizerTest, CombiningMarksContinueAToken) {
  // "e" + COMBINING ACUTE ACCENT stays one token; Devanagari vowel signs (Mc) too.
  EXPECT_EQ(Tokenize("cafe\xCC\x81 nice"), (Tokens{"cafe\xCC\x81", "nice"}));
  EXPECT_EQ(Tokenize("हिन्दी भाषा"), (Tokens{"हिन्दी", "भाषा"}));
  // A mark with nothing before it separates.
  EXPECT_EQ(Tokenize("\xCC\x81" "abc"), (Tokens{"abc"}));
}

TEST(TokenizerTest, IdeographsAndKanaAreTokensOfTheirOwn) {
  EXPECT_EQ(Tokenize("東京タワーabc"), (Tokens{"東", "京", "タ", "ワ", "ー", "abc"}));
  // U+30FC (prolonged sound mark) is Lm inside the Katakana block: a token of its own too.
  EXPECT_EQ(Tokenize("ー"), (Tokens{"ー"}));
}

TEST(TokenizerTest, InvalidUtf8SeparatesTokens) {
  EXPECT_EQ(Tokenize("abc\xFF" "def"), (Tokens{"abc", "def"}));
  EXPECT_EQ(Tokenize("abc\xC3" "def"), (Tokens{"abc", "def"}));       // truncated sequence
  EXPECT_EQ(Tokenize("abc\xE0\x80\x80" "def"), (Tokens{"abc", "def"}));  // overlong
  EXPECT_EQ(Tokenize("abc\xED\xA0\x80" "def"), (Tokens{"abc", "def"}));  // surrogate
  EXPECT_EQ(Tokenize("abc\xC3"), (Tokens{"abc"}));                    // truncated at the end
}

TEST(TokenizerTest, BreakEndsAToken) {
  TokenCollector sink;
  Tokenizer tokenizer(&sink);
  tokenizer.Feed("foo");
  tokenizer.Break();
  tokenizer.Feed("bar");
  tokenizer.Feed("baz");
  tokenizer.Finish();
  EXPECT_EQ(sink.tokens, (Tokens{"foo", "barbaz"}));
  EXPECT_EQ(tokenizer.token_count(), 2u);
}

TEST(TokenizerTest, LongTokensAreCutAtTheLimit) {
  const std::string a(kMaxTokenBytes * 2 + 10, 'a');
  EXPECT_EQ(Tokenize(a), (Tokens{std::string(kMaxTokenBytes, 'a'),
                                 std::string(kMaxTokenBytes, 'a'), std::string(10, 'a')}));
  // Two-byte letters are cut at a code point boundary: 128 of them fill the 256 bytes.
  std::string e;
  for (size_t i = 0; i < 200; ++i) e += "é";
  const Tokens t = Tokenize(e);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].size(), 256u);
  EXPECT_EQ(t[1].size(), 144u);
}

// Regression guard for streaming: every split of the input into two chunks, and byte-by-byte
// feeding, give the tokens of the undivided input.
TEST(TokenizerTest, ChunkingNeverChangesTheTokens) {
  const std::string text =
      "Ünïcödé wörds, 東京, cafe\xCC\x81, bad \xFF\xC3 bytes \xE2\x82 and \xF0\x9F\x98\x80 emoji "
      "Straße" + std::string(300, 'x') + " end";
  const Tokens whole = Tokenize(text);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    TokenCollector sink;
    Tokenizer tokenizer(&sink);
    tokenizer.Feed(std::string_view(text).substr(0, cut));
    tokenizer.Feed(std::string_view(text).substr(cut));
    tokenizer.Finish();
    ASSERT_EQ(sink.tokens, whole) << "cut at " << cut;
  }
  TokenCollector sink;
  Tokenizer tokenizer(&sink);
  for (char c : text) tokenizer.Feed(std::string_view(&c, 1));
  tokenizer.Finish();
  EXPECT_EQ(sink.tokens, whole);
}

// The AVX2 path classifies 64 bytes at a time; it must give the scalar path's tokens whatever the
// text and wherever blocks, tokens, non-ASCII bytes and the token cap fall.
TEST(TokenizerTest, VectorPathGivesTheScalarTokens) {
  if (!CpuSupports(SimdLevel::kAvx2)) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937_64 rng(42);
  const std::string alphabet =
      "abcXYZ0189 ,.-_\n\t<>&;'\"AZaz09@[`{";  // the range edges of the classifier
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    const size_t len = rng() % 700;
    for (size_t i = 0; i < len; ++i) {
      const uint64_t r = rng() % 100;
      if (r < 3) {
        text += "é";
      } else if (r < 4) {
        text += "\xFF";
      } else if (r < 5) {
        text += std::string(rng() % 300, 'q');  // runs past the token cap
      } else {
        text += alphabet[rng() % alphabet.size()];
      }
    }
    ASSERT_EQ(Tokenize(text, SimdLevel::kAvx2), Tokenize(text, SimdLevel::kScalar)) << text;
    // Every two-chunk split on the vector path too.
    const Tokens whole = Tokenize(text, SimdLevel::kScalar);
    for (size_t cut = 0; cut <= text.size(); cut += 1 + rng() % 40) {
      TokenCollector sink;
      Tokenizer tokenizer(&sink, SimdLevel::kAvx2);
      tokenizer.Feed(std::string_view(text).substr(0, cut));
      tokenizer.Feed(std::string_view(text).substr(cut));
      tokenizer.Finish();
      ASSERT_EQ(sink.tokens, whole) << "cut at " << cut << " of " << text;
    }
  }
  // Every byte value at every position of a block.
  for (int b = 0; b < 256; ++b) {
    for (size_t pos : {0u, 1u, 31u, 32u, 63u, 64u, 100u}) {
      std::string text(130, 'k');
      text[pos] = static_cast<char>(b);
      ASSERT_EQ(Tokenize(text, SimdLevel::kAvx2), Tokenize(text, SimdLevel::kScalar))
          << "byte " << b << " at " << pos;
    }
  }
}

}  // namespace
}  // namespace shingled::dedup
