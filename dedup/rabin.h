// Rabin fingerprints over GF(2), 64-bit (Rabin 1981; Broder 1993; Broder 1997, section 4.3).
//
// A string of bits a_1 ... a_m is the polynomial A(x) = a_1 x^(m-1) + ... + a_m over GF(2); its
// fingerprint is f(A) = A(x) mod P(x) for an irreducible P of degree 64. Bytes are read most
// significant bit first, so a byte string is the big-endian number it spells. Polynomials of
// degree < 64 are held in a uint64_t with bit i the coefficient of x^i; P's x^64 term is implicit.
//
// Properties the code and the tests rely on:
//   - extension: f(a . b) = f(f(a) . b), with f(a) read as 8 bytes; so Extend() can resume a
//     fingerprint from its value alone;
//   - linearity: a sliding window's fingerprint is updated by appending the new word and
//     subtracting the oldest word times x^(64 w) (RabinWindow);
//   - leading zero bytes do not change a fingerprint (they add nothing to A(x)); callers feed
//     fixed-width words, where this does not matter.
// Two distinct strings of at most n bits collide with probability at most n / 2^63 over the random
// choice of P; a set of N strings has no collision with probability about 1 - N^2 n / 2^64.
//
// RabinFingerprinter and the tables in RabinWindow are immutable after construction and safe for
// concurrent use; a RabinWindow's sliding state is not.
#ifndef SHINGLED_DEDUP_RABIN_H_
#define SHINGLED_DEDUP_RABIN_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace shingled::dedup {

// A polynomial of degree <= 127 over GF(2), bit i the coefficient of x^i.
__extension__ typedef unsigned __int128 Gf2Poly128;

// Arithmetic in GF(2)[x] modulo x^64 + low, for table construction and tests (slow, bitwise).
uint64_t Gf2MulMod(uint64_t a, uint64_t b, uint64_t low);
// x^e mod (x^64 + low), by square-and-multiply.
uint64_t Gf2XPowMod(uint64_t e, uint64_t low);

// True if x^64 + low is irreducible over GF(2), by Rabin's test: P of degree n is irreducible iff
// x^(2^n) = x mod P and gcd(x^(2^(n/q)) - x, P) = 1 for every prime q dividing n (here q = 2).
bool IsIrreducible64(uint64_t low);

// True if the polynomial `poly` (bit i the coefficient of x^i, degree <= 127) is irreducible;
// a general Rabin test used to cross-check IsIrreducible64 against trial division in tests.
bool IsIrreducible(Gf2Poly128 poly);

// The first irreducible x^64 + low found by drawing candidates (constant term 1) from a SplitMix64
// stream started at `seed`. Deterministic; about 1 candidate in 32 with odd low is irreducible.
uint64_t PickIrreduciblePolynomial(uint64_t seed);

// Table-driven fingerprints of byte strings and 64-bit words modulo one polynomial.
class RabinFingerprinter {
 public:
  // REQUIRES: IsIrreducible64(low) for the collision bounds above to hold.
  explicit RabinFingerprinter(uint64_t low);

  uint64_t polynomial() const { return low_; }

  // f(a . bytes) given fp = f(a). Extend(0, s) is f(s).
  uint64_t Extend(uint64_t fp, std::string_view bytes) const {
    for (unsigned char c : bytes) fp = (fp << 8 | c) ^ byte_table_[fp >> 56];
    return fp;
  }
  uint64_t Fingerprint(std::string_view bytes) const { return Extend(0, bytes); }

  // f(a . w) given fp = f(a), with w appended as 8 big-endian bytes: (fp * x^64 + w) mod P.
  uint64_t ExtendWord(uint64_t fp, uint64_t word) const {
    return word ^ ShiftWord(fp);
  }

  // (v * x^64) mod P.
  uint64_t ShiftWord(uint64_t v) const {
    // Unrolled: eight independent loads, not a loop with a shift by a variable count.
    uint64_t r = 0;
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) r ^= word_tables_[j][(v >> (8 * j)) & 0xFF];
    return r;
  }

 private:
  uint64_t low_;
  std::array<uint64_t, 256> byte_table_;                   // b * x^64 mod P
  std::array<std::array<uint64_t, 256>, 8> word_tables_;   // b * x^(64 + 8j) mod P
};

inline constexpr int kMaxWindowWords = 32;

// The tables that slide a window of `width` words: b * x^(8j + 64 width) mod P, which remove the
// oldest word's contribution. Immutable; share one per width.
class RabinWindowTables {
 public:
  // REQUIRES: 1 <= width <= kMaxWindowWords; `fingerprinter` outlives the tables.
  RabinWindowTables(const RabinFingerprinter& fingerprinter, int width);

  const RabinFingerprinter& fingerprinter() const { return fingerprinter_; }
  int width() const { return width_; }

  // Slides a window over a block of words: for k in [0, n), fp = f(window . words[k]) with
  // olds[k] leaving it (0 while the window is not full; Drop(0) = 0), and out[k] = fp. Returns the
  // last fp (`fp` itself when n = 0). The words of a window are usually one array, with
  // olds = words - width.
  uint64_t SlideBlock(uint64_t fp, const uint64_t* words, const uint64_t* olds, size_t n,
                      uint64_t* out) const {
    for (size_t k = 0; k < n; ++k) {
      fp = fingerprinter_.ExtendWord(fp, words[k]) ^ Drop(olds[k]);
      out[k] = fp;
    }
    return fp;
  }
  // (v * x^(64 width)) mod P.
  uint64_t Drop(uint64_t v) const {
    uint64_t r = 0;
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) r ^= drop_tables_[j][(v >> (8 * j)) & 0xFF];
    return r;
  }

 private:
  const RabinFingerprinter& fingerprinter_;
  const int width_;
  std::array<std::array<uint64_t, 256>, 8> drop_tables_;
};

// The fingerprint of the last `width` 64-bit words pushed, updated in O(1) per word: 16 table
// lookups whatever the width. Before `width` words have been pushed, it is the fingerprint of all
// words pushed so far. Not safe for concurrent use.
class RabinWindow {
 public:
  // `tables` must outlive the window.
  explicit RabinWindow(const RabinWindowTables& tables) : tables_(tables) {}

  // Appends a word; returns the fingerprint of the window's words, oldest first.
  uint64_t Push(uint64_t word) {
    fp_ = tables_.fingerprinter().ExtendWord(fp_, word);
    if (count_ == tables_.width()) {
      fp_ ^= tables_.Drop(ring_[head_]);
    } else {
      ++count_;
    }
    ring_[head_] = word;
    head_ = head_ + 1 == tables_.width() ? 0 : head_ + 1;
    return fp_;
  }

  // Like Push, with the update (fp * x^64 + old * x^(64 width) + word) mod P computed by
  // `slide(fp, old, word)`, old being 0 until the window is full; for the carry-less multiply
  // path (dedup/internal/rabin_clmul.h), which computes the same values.
  template <typename Slide>
  uint64_t PushWith(uint64_t word, Slide&& slide) {
    const uint64_t old = count_ == tables_.width() ? ring_[head_] : 0;
    fp_ = slide(fp_, old, word);
    if (count_ < tables_.width()) ++count_;
    ring_[head_] = word;
    head_ = head_ + 1 == tables_.width() ? 0 : head_ + 1;
    return fp_;
  }

  // Words in the window: min(pushed, width).
  int size() const { return count_; }
  uint64_t fingerprint() const { return fp_; }
  void Reset() {
    head_ = 0;
    count_ = 0;
    fp_ = 0;
  }

 private:
  const RabinWindowTables& tables_;
  std::array<uint64_t, kMaxWindowWords> ring_{};
  int head_ = 0;
  int count_ = 0;
  uint64_t fp_ = 0;
};

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_RABIN_H_
