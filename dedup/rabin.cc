#include "dedup/rabin.h"

#include <cassert>

#include "dedup/internal/rabin_avx512.h"
#include "dedup/internal/rabin_clmul.h"
#include "dedup/internal/splitmix.h"

namespace shingled::dedup {
namespace {

using u128 = Gf2Poly128;

int Degree(u128 p) {
  int d = -1;
  while (p != 0) {
    ++d;
    p >>= 1;
  }
  return d;
}

// a mod m over GF(2)[x]; REQUIRES m != 0.
u128 Mod(u128 a, u128 m) {
  const int dm = Degree(m);
  for (int da = Degree(a); da >= dm; da = Degree(a)) a ^= m << (da - dm);
  return a;
}

u128 MulMod(u128 a, u128 b, u128 m) {
  a = Mod(a, m);
  b = Mod(b, m);
  u128 r = 0;
  const int dm = Degree(m);
  while (b != 0) {
    if (b & 1) r ^= a;
    b >>= 1;
    a <<= 1;
    if ((a >> dm) & 1) a ^= m;
  }
  return r;
}

u128 Gcd(u128 a, u128 b) {
  while (b != 0) {
    const u128 t = Mod(a, b);
    a = b;
    b = t;
  }
  return a;
}


}  // namespace

uint64_t Gf2MulMod(uint64_t a, uint64_t b, uint64_t low) {
  // Shift-and-add with the reduction folded in: a * x mod P is (a << 1) ^ (carry ? low : 0).
  uint64_t r = 0;
  while (b != 0) {
    if (b & 1) r ^= a;
    b >>= 1;
    const bool carry = a >> 63;
    a <<= 1;
    if (carry) a ^= low;
  }
  return r;
}

uint64_t Gf2XPowMod(uint64_t e, uint64_t low) {
  uint64_t result = 1;
  uint64_t base = 2;  // x; degree 64 > 1, so x mod P is x
  while (e != 0) {
    if (e & 1) result = Gf2MulMod(result, base, low);
    base = Gf2MulMod(base, base, low);
    e >>= 1;
  }
  return result;
}

bool IsIrreducible64(uint64_t low) {
  if ((low & 1) == 0) return false;  // divisible by x
  // x^(2^32) and x^(2^64) mod P by repeated squaring of x.
  uint64_t t = 2;
  for (int i = 0; i < 32; ++i) t = Gf2MulMod(t, t, low);
  const uint64_t x_2_32 = t;
  for (int i = 0; i < 32; ++i) t = Gf2MulMod(t, t, low);
  if (t != 2) return false;
  const u128 p = (u128{1} << 64) | low;
  return Gcd(p, u128{x_2_32 ^ 2}) == 1;
}

bool IsIrreducible(u128 poly) {
  const int n = Degree(poly);
  if (n <= 0) return false;
  if (n == 1) return true;
  if ((poly & 1) == 0) return false;
  // x^(2^k) mod poly for k = 1..n, kept for the gcd checks.
  std::vector<u128> x_pow(static_cast<size_t>(n) + 1);
  x_pow[0] = Mod(2, poly);
  for (int k = 1; k <= n; ++k) x_pow[k] = MulMod(x_pow[k - 1], x_pow[k - 1], poly);
  if (x_pow[n] != Mod(2, poly)) return false;
  int m = n;
  for (int q = 2; q <= m; ++q) {
    if (m % q != 0) continue;
    while (m % q == 0) m /= q;
    if (Gcd(poly, x_pow[n / q] ^ Mod(2, poly)) != 1) return false;
  }
  return true;
}

uint64_t PickIrreduciblePolynomial(uint64_t seed) {
  uint64_t state = seed;
  for (;;) {
    const uint64_t low = internal::SplitMix64(&state) | 1;
    if (IsIrreducible64(low)) return low;
  }
}

RabinFingerprinter::RabinFingerprinter(uint64_t low) : low_(low) {
  // b * x^(64 + 8j) mod P: start from x^64 mod P = low and multiply by x^8 per step.
  for (int b = 0; b < 256; ++b) {
    uint64_t v = Gf2MulMod(static_cast<uint64_t>(b), low, low);  // b * x^64
    byte_table_[b] = v;
    for (int j = 0; j < 8; ++j) {
      word_tables_[j][b] = v;
      v = Gf2MulMod(v, uint64_t{1} << 8, low);
    }
  }
}

RabinWindowTables::RabinWindowTables(const RabinFingerprinter& fingerprinter, int width)
    : fingerprinter_(fingerprinter), width_(width) {
  assert(width >= 1 && width <= kMaxWindowWords);
  const uint64_t low = fingerprinter.polynomial();
  const uint64_t x_64w = Gf2XPowMod(64 * static_cast<uint64_t>(width), low);
  for (int j = 0; j < 8; ++j) {
    const uint64_t shift = Gf2MulMod(x_64w, Gf2XPowMod(8 * static_cast<uint64_t>(j), low), low);
    for (int b = 0; b < 256; ++b) {
      drop_tables_[j][b] = Gf2MulMod(static_cast<uint64_t>(b), shift, low);
    }
  }
}

namespace internal {

RabinWindowPowers MakeRabinWindowPowers(uint64_t low, int width) {
  assert(width >= 1 && width <= kMaxWindowWords);
  RabinWindowPowers c{};
  c.width = width;
  c.poly_low = low;
  c.mu_low = MakeRabinClmulConstants(low, width).mu_low;
  for (int j = 0; j < width; ++j) c.power[j] = Gf2XPowMod(64 * static_cast<uint64_t>(j), low);
  return c;
}

bool CpuHasAvx512Clmul() {
  // Checked here, in portable code: the kernel's file may use AVX-512 anywhere.
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq");
}

}  // namespace internal
}  // namespace shingled::dedup
