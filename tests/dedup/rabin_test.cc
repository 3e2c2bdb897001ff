#include "dedup/rabin.h"

#include "dedup/internal/rabin_avx512.h"
#include "dedup/internal/rabin_clmul.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace shingled::dedup {
namespace {

// Irreducibility by trial division: the slow, obviously correct reference.
bool IrreducibleByTrialDivision(uint32_t poly) {
  auto degree = [](uint32_t p) { return 31 - __builtin_clz(p); };
  const int n = degree(poly);
  for (uint32_t d = 2; d < poly; ++d) {
    if (2 * degree(d) > n) break;
    uint32_t r = poly;
    while (r != 0 && degree(r) >= degree(d)) r ^= d << (degree(r) - degree(d));
    if (r == 0) return false;
  }
  return true;
}

TEST(RabinTest, GeneralIrreducibilityTestAgreesWithTrialDivision) {
  int irreducible = 0;
  for (uint32_t p = 2; p < (1u << 13); ++p) {
    ASSERT_EQ(IsIrreducible(p), IrreducibleByTrialDivision(p)) << "polynomial " << p;
    irreducible += IrreducibleByTrialDivision(p);
  }
  // Known count of irreducible polynomials over GF(2) of degree 1..12 (OEIS A001037):
  // 2+1+2+3+6+9+18+30+56+99+186+335 = 747.
  EXPECT_EQ(irreducible, 747);
}

TEST(RabinTest, KnownDegree64Polynomials) {
  // x^64 + x^4 + x^3 + x + 1 is the standard irreducible polynomial of GF(2^64).
  EXPECT_TRUE(IsIrreducible64(0x1B));
  EXPECT_TRUE(IsIrreducible(Gf2Poly128{0x1B} | (Gf2Poly128{1} << 64)));
  // x^64 + 1 = (x + 1)^64.
  EXPECT_FALSE(IsIrreducible64(0x1));
  // Divisible by x.
  EXPECT_FALSE(IsIrreducible64(0x1A));
}

// The product of two distinct irreducible polynomials of degree 32 passes the first half of
// Rabin's test (x^(2^64) = x mod P, since GF(2^32) lies in GF(2^64)); only the gcd catches it.
TEST(RabinTest, ProductOfTwoDegree32IrreduciblesIsRejected) {
  std::vector<uint64_t> found;
  for (uint64_t low = 1; found.size() < 2; low += 2) {
    const uint64_t p = (uint64_t{1} << 32) | low;
    if (IsIrreducible(p)) found.push_back(p);
  }
  Gf2Poly128 product = 0;
  for (int i = 0; i < 64; ++i) {
    if ((found[1] >> i) & 1) product ^= Gf2Poly128{found[0]} << i;
  }
  ASSERT_EQ(static_cast<uint64_t>(product >> 64), 1u);  // degree exactly 64
  EXPECT_FALSE(IsIrreducible64(static_cast<uint64_t>(product)));
  EXPECT_FALSE(IsIrreducible(product));
  // x^(2^64) = x holds, showing the test needed the gcd.
  uint64_t t = 2;
  for (int i = 0; i < 64; ++i) t = Gf2MulMod(t, t, static_cast<uint64_t>(product));
  EXPECT_EQ(t, 2u);
}

TEST(RabinTest, PickedPolynomialIsIrreducibleAndDeterministic) {
  for (uint64_t seed : {0ull, 1ull, 42ull, 0x5348494e474c4544ull}) {
    const uint64_t p = PickIrreduciblePolynomial(seed);
    EXPECT_TRUE(IsIrreducible64(p));
    EXPECT_TRUE(IsIrreducible(Gf2Poly128{p} | (Gf2Poly128{1} << 64)));
    EXPECT_EQ(p, PickIrreduciblePolynomial(seed));
  }
  EXPECT_NE(PickIrreduciblePolynomial(1), PickIrreduciblePolynomial(2));
}

// Slow reference: A(x) mod P by long division, bit by bit.
uint64_t FingerprintBitwise(std::string_view bytes, uint64_t low) {
  uint64_t fp = 0;
  for (unsigned char c : bytes) {
    for (int bit = 7; bit >= 0; --bit) {
      const bool carry = fp >> 63;
      fp = (fp << 1) | ((c >> bit) & 1);
      if (carry) fp ^= low;
    }
  }
  return fp;
}

TEST(RabinTest, TableDrivenEqualsBitwiseDivision) {
  const uint64_t low = PickIrreduciblePolynomial(7);
  const RabinFingerprinter rabin(low);
  std::mt19937_64 rng(1);
  for (int len = 0; len < 200; ++len) {
    std::string s(static_cast<size_t>(len), '\0');
    for (char& c : s) c = static_cast<char>(rng());
    ASSERT_EQ(rabin.Fingerprint(s), FingerprintBitwise(s, low)) << "length " << len;
  }
}

TEST(RabinTest, ExtensionProperty) {
  // f(a . b) = f(f(a) . b), with f(a) written as 8 big-endian bytes.
  const RabinFingerprinter rabin(PickIrreduciblePolynomial(9));
  std::mt19937_64 rng(2);
  for (int trial = 0; trial < 500; ++trial) {
    std::string a(rng() % 40, '\0'), b(rng() % 40, '\0');
    for (char& c : a) c = static_cast<char>(rng());
    for (char& c : b) c = static_cast<char>(rng());
    const uint64_t fa = rabin.Fingerprint(a);
    std::string fa_bytes(8, '\0');
    for (int i = 0; i < 8; ++i) fa_bytes[i] = static_cast<char>(fa >> (56 - 8 * i));
    ASSERT_EQ(rabin.Fingerprint(a + b), rabin.Fingerprint(fa_bytes + b));
    ASSERT_EQ(rabin.Fingerprint(a + b), rabin.Extend(fa, b));
  }
}

std::string BigEndian(uint64_t w) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(w >> (56 - 8 * i));
  return s;
}

TEST(RabinTest, ExtendWordEqualsEightBytes) {
  const RabinFingerprinter rabin(PickIrreduciblePolynomial(11));
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 1000; ++trial) {
    const uint64_t fp = rng(), w = rng();
    ASSERT_EQ(rabin.ExtendWord(fp, w), rabin.Extend(fp, BigEndian(w)));
  }
}

TEST(RabinTest, SlidingWindowEqualsFromScratchAtEveryOffset) {
  const RabinFingerprinter rabin(PickIrreduciblePolynomial(13));
  std::mt19937_64 rng(4);
  for (int width : {1, 2, 3, 8, 17, 32}) {
    const RabinWindowTables tables(rabin, width);
    RabinWindow window(tables);
    std::vector<uint64_t> words(300);
    for (uint64_t& w : words) w = rng();
    for (size_t i = 0; i < words.size(); ++i) {
      const uint64_t sliding = window.Push(words[i]);
      const size_t begin = i + 1 >= static_cast<size_t>(width) ? i + 1 - width : 0;
      std::string bytes;
      for (size_t j = begin; j <= i; ++j) bytes += BigEndian(words[j]);
      ASSERT_EQ(sliding, rabin.Fingerprint(bytes)) << "width " << width << " offset " << i;
    }
  }
}

// The carry-less multiply window computes the table window's fingerprints, for every width and
// polynomial tried, at every offset.
TEST(RabinTest, ClmulWindowEqualsTableWindow) {
  if (!internal::CpuHasClmul()) GTEST_SKIP() << "no PCLMULQDQ on this CPU";
  std::mt19937_64 rng(5);
  for (uint64_t seed : {1ull, 2ull, 3ull, 0x5348494e474c4544ull}) {
    const RabinFingerprinter rabin(PickIrreduciblePolynomial(seed));
    for (int width : {1, 2, 8, 13, 32}) {
      const RabinWindowTables tables(rabin, width);
      const internal::RabinClmulConstants constants =
          internal::MakeRabinClmulConstants(rabin.polynomial(), width);
      RabinWindow by_table(tables), by_clmul(tables);
      for (int i = 0; i < 2000; ++i) {
        const uint64_t word = (i % 7 == 0) ? ~0ull : rng();  // all-ones words stress carries
        const uint64_t expected = by_table.Push(word);
        const uint64_t got = by_clmul.PushWith(word, [&](uint64_t f, uint64_t old, uint64_t w) {
          return internal::RabinSlideClmul(constants, f, old, w);
        });
        ASSERT_EQ(got, expected) << "seed " << seed << " width " << width << " offset " << i;
      }
    }
  }
  // mu = floor(x^128 / P) satisfies x^128 = mu * P + r with deg r < 64: check by multiplying back.
  const uint64_t low = PickIrreduciblePolynomial(9);
  const internal::RabinClmulConstants c = internal::MakeRabinClmulConstants(low, 8);
  // (x^64 + mu_low)(x^64 + low) = x^128 + (mu_low + low) x^64 + mu_low * low; the x^64.. part of
  // mu_low * low must cancel (mu_low + low) so that the remainder has degree < 64.
  Gf2Poly128 product = 0;
  for (int i = 0; i < 64; ++i) {
    if ((c.mu_low >> i) & 1) product ^= Gf2Poly128{low} << i;
  }
  EXPECT_EQ(static_cast<uint64_t>(product >> 64), c.mu_low ^ low);
}

// The block slides (tables, and carry-less multiplies where the CPU has them) give the window's
// fingerprint at every offset, over blocks of every length cut from one word stream, with
// olds = words - width and zeros before the first word.
TEST(RabinTest, BlockSlidesEqualTheWindow) {
  std::mt19937_64 rng(6);
  const RabinFingerprinter rabin(PickIrreduciblePolynomial(0x5348494e474c4544ull));
  for (int width : {1, 3, 8, 32}) {
    const RabinWindowTables tables(rabin, width);
    const internal::RabinClmulConstants constants =
        internal::MakeRabinClmulConstants(rabin.polynomial(), width);
    std::vector<uint64_t> words(static_cast<size_t>(width) + 1500, 0);  // zeros: before the start
    RabinWindow window(tables);
    std::vector<uint64_t> expected;
    for (size_t i = width; i < words.size(); ++i) {
      words[i] = (i % 5 == 0) ? ~0ull : rng();
      expected.push_back(window.Push(words[i]));
    }
    for (bool clmul : {false, true}) {
      if (clmul && !internal::CpuHasClmul()) continue;
      std::vector<uint64_t> out(expected.size());
      uint64_t fp = 0;
      size_t k = 0;
      for (size_t block = 0; k < out.size(); ++block) {
        const size_t n = std::min(out.size() - k, block % 9 == 0 ? size_t{0} : block * 7 % 130);
        const uint64_t* in = words.data() + width + k;
        fp = clmul ? internal::RabinSlideBlockClmul(constants, fp, in, in - width, n, &out[k])
                   : tables.SlideBlock(fp, in, in - width, n, &out[k]);
        k += n;
        if (k > 0) {
          ASSERT_EQ(fp, expected[k - 1]) << "clmul " << clmul << " width " << width;
        }
      }
      ASSERT_EQ(out, expected) << "clmul " << clmul << " width " << width;
    }
  }
}

// The AVX-512 window fingerprints, each window computed on its own, equal the sliding window's at
// every offset, for every width, over blocks of every length cut from one word stream (each block
// reading the words before it, and zeros before the first).
TEST(RabinTest, Avx512WindowsEqualTheSlidingWindow) {
  if (!internal::CpuHasAvx512Clmul()) GTEST_SKIP() << "no AVX-512 VPCLMULQDQ on this CPU";
  std::mt19937_64 rng(7);
  for (uint64_t seed : {2ull, 0x5348494e474c4544ull}) {
    const RabinFingerprinter rabin(PickIrreduciblePolynomial(seed));
    for (int width = 1; width <= kMaxWindowWords; ++width) {
      const RabinWindowTables tables(rabin, width);
      const internal::RabinWindowPowers powers =
          internal::MakeRabinWindowPowers(rabin.polynomial(), width);
      // kMaxWindowWords zeros, then the stream.
      std::vector<uint64_t> words(kMaxWindowWords + 1200, 0);
      RabinWindow window(tables);
      std::vector<uint64_t> expected;
      for (size_t i = kMaxWindowWords; i < words.size(); ++i) {
        words[i] = (i % 5 == 0) ? ~0ull : rng();  // all-ones words stress the reduction
        expected.push_back(window.Push(words[i]));
      }
      std::vector<uint64_t> out(expected.size() + 8, 0x5555);  // guard words past the end
      size_t k = 0;
      for (size_t block = 0; k < expected.size(); ++block) {
        const size_t n = std::min(expected.size() - k, block % 9 == 0 ? size_t{0} : block * 7 % 130);
        internal::RabinWindowsAvx512(powers, words.data() + kMaxWindowWords + k, n, &out[k]);
        k += n;
      }
      for (size_t i = expected.size(); i < out.size(); ++i) ASSERT_EQ(out[i], 0x5555u);
      out.resize(expected.size());
      ASSERT_EQ(out, expected) << "seed " << seed << " width " << width;
    }
  }
}

TEST(RabinTest, NoCollisionsAmongMillionsOfDistinctShingles) {
  // 4 million distinct 8-word windows over a sequence of distinct words. The chance of any
  // collision is about N^2 * 512 / 2^64 = 4.4e-4 for a random polynomial: one here is a bug.
  const RabinFingerprinter rabin(PickIrreduciblePolynomial(0x5348494e474c4544ull));
  const RabinWindowTables tables(rabin, 8);
  RabinWindow window(tables);
  constexpr size_t kShingles = 4'000'000;
  std::vector<uint64_t> fps;
  fps.reserve(kShingles);
  // Sequential and sparse word values: the structured input where a weak hash would collide.
  for (uint64_t i = 0; fps.size() < kShingles; ++i) {
    const uint64_t fp = window.Push(i * 3);
    if (window.size() == 8) fps.push_back(fp);
  }
  std::sort(fps.begin(), fps.end());
  EXPECT_EQ(std::adjacent_find(fps.begin(), fps.end()), fps.end());
}

}  // namespace
}  // namespace shingled::dedup
