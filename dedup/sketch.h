// Sketches: what shingled remembers of a page, computed in one streaming pass.
//
// From the page's canonical tokens (dedup/tokenizer.h) a Sketcher computes, without holding the
// page or its shingle set:
//   - shingles: each run of w consecutive tokens, fingerprinted with a 64-bit Rabin fingerprint
//     as a sliding window over fixed-width (64-bit) token fingerprints (Broder 1997, section 4.3);
//     option B semantics: the page is the *set* of its shingles;
//   - minhashes: t = k*s min-wise values, one per permutation (Broder 1997 and 2005), found with
//     Broder, Burrows and Manasse's left-to-right-minima trick (see dedup/internal/minhash.h);
//   - features: the t values in k groups of s, each group fingerprinted; two pages are fungible
//     when at least r features agree (Broder 2005);
//   - min_sample: MIN_s, the s smallest values of one permutation pi of the shingle set
//     (Broder et al. 1997);
//   - supershingles: fingerprints of the windows of consecutive values in the sorted smallest
//     values of min_sample (Broder et al. 1997, "Super shingles");
//   - sample: MOD_{2^i}(pi(S)) with i the smallest for which at most mod_sample_max values remain
//     (Broder et al. 1997: 50 to 100 values whatever the page's length);
//   - verify_sample: the bottom-k sketch of a second, independent permutation of the distinct
//     shingles, 32-bit values: the verification sample that decides the "verified" relation
//     (dedup/estimate.h, ResemblanceFromVerifySample);
//   - three 128-bit exact fingerprints: of the raw bytes (identical), of the canonical token stream
//     (lexically equivalent), and of the shingle multiset (shingle equivalent: the same shingles,
//     each as many times; exact, where paper 001's fingerprint of the selected sample calls pages
//     equivalent whose samples agree though their shingles differ).
//
// A page with fewer than w tokens, but at least one, has a single shingle made of all its tokens,
// so short pages still compare; a page with no tokens has no shingles and an empty sketch, and
// resembles nothing (not even another empty page: its raw-bytes fingerprint still finds copies).
//
// Every parameter in SketchParams is baked into stored sketches: the store records them and refuses
// to open with others. Sketches are bit-identical on every machine and every SIMD path.
#ifndef SHINGLED_DEDUP_SKETCH_H_
#define SHINGLED_DEDUP_SKETCH_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/chunker.h"
#include "dedup/simd.h"
#include "dedup/tokenizer.h"

namespace shingled::dedup {

// The sketch parameters. All of them are baked into stored data.
struct SketchParams {
  // w: tokens per shingle. Longer shingles make small edits cost more resemblance; shorter ones let
  // unrelated pages share common phrases. Broder 2005 recommends 3 to 10. Range 1..32.
  int shingle_size = 8;
  // k: feature groups. t = k * s min-wise values are kept. Range 1..32, k * s <= 256.
  int feature_groups = 6;
  // s: min-wise values per feature. Range 1..64.
  int group_size = 14;
  // r: features two pages must share to be fungible. 6 x 14 with r = 2 accepts pages of
  // resemblance 0.95 with probability 0.88 and of 0.8 with 0.03 (Broder 2005); the 8 x 25, r = 1
  // variant is sharper. Range 1..k. Not baked into sketches, but recorded with them.
  int fungible_threshold = 2;
  // Seed from which the Rabin polynomial and every permutation are derived.
  uint64_t seed = 0x5348494e474c4544ull;  // "SHINGLED"
  // MIN_s: how many smallest values of pi(S) are kept. Range 1..1024.
  int min_sample_size = 64;
  // Super shingles fingerprint each window of `supershingle_window` consecutive values among the
  // `supershingle_span` smallest of pi(S). Two pages of resemblance 0.5 share one with probability
  // about 0.9, of resemblance 0.2 with about 0.15 (tests/dedup/sketch_test.cc measures this).
  // Range: 1 <= window <= span <= min_sample_size.
  int supershingle_span = 24;
  int supershingle_window = 3;
  // The MOD sample keeps the values of pi(S) that are 0 mod 2^i, for the smallest i that leaves at
  // most this many. Range 8..4096.
  int mod_sample_max = 100;
  // The verification sample keeps the k smallest distinct 32-bit values of a second
  // permutation of the shingles (a bottom-k sketch; the whole set for a page with fewer). Its
  // resemblance estimate has a standard error of sqrt(J(1-J)/k) or less (0.019 at J = 0.9 and
  // 0.025 at J = 0.8 with k = 256), against 0.033 and 0.044 for the 84 minhashes. 4 bytes a
  // value. 0: no sample (the paper's relations only). Range 0 or 16..480 (480 keeps a record on
  // its LMDB leaf page).
  int verify_sample_size = 256;
  // Content-defined chunks (dedup/chunker.h). Eshghi and Tang's TTTD thresholds (460/2800/540/270,
  // ~1,000 bytes) halved, keeping their ratios: chunks of ~490 bytes on average. On the canonical
  // text of the Debian documentation (median page 1.2 KB) a run of 1,200 bytes shared by two pages
  // holds a whole shared chunk 73% of the time instead of 21%, and of 2,000 bytes 95% instead of
  // 62%, for twice the chunks (35 a page instead of 18): docs/notes/performance-studies.md, "Chunking".
  ChunkParams chunking{.input = ChunkInput::kCanonicalText,
                       .min_size = 230,
                       .max_size = 1400,
                       .main_divisor = 270,
                       .backup_divisor = 135};

  int num_minhashes() const { return feature_groups * group_size; }

  // InvalidArgument naming the first field out of range.
  Status Validate() const;
};

// A 128-bit fingerprint, for the exact levels, where collisions across billions of pages matter.
struct Fingerprint128 {
  uint64_t high = 0;
  uint64_t low = 0;
  friend bool operator==(const Fingerprint128&, const Fingerprint128&) = default;
  std::string ToHex() const;  // 32 lower-case hex digits, high first
};

// MOD_{2^log2_modulus}(pi(S)), sorted ascending, without duplicates.
struct ModSample {
  uint32_t log2_modulus = 0;
  std::vector<uint64_t> values;
  friend bool operator==(const ModSample&, const ModSample&) = default;
};

struct Sketch {
  uint64_t bytes = 0;     // raw bytes given to AddRawBytes
  uint64_t tokens = 0;    // canonical tokens
  uint64_t shingles = 0;  // shingle positions: max(tokens - w + 1, 0), or 1 for short pages
  std::vector<uint64_t> minhashes;      // t values, in permutation order; empty without shingles
  std::vector<uint64_t> features;       // k values, in group order; empty without shingles
  std::vector<uint64_t> min_sample;     // MIN_s, sorted ascending
  std::vector<uint64_t> supershingles;  // sorted ascending, without duplicates
  ModSample sample;
  std::vector<uint32_t> verify_sample;  // bottom-k, sorted ascending, distinct
  Fingerprint128 identical;  // raw bytes
  Fingerprint128 lexical;    // canonical token stream
  Fingerprint128 shingle;    // the shingle multiset (order-independent)
  std::vector<Chunk> chunks;  // content-defined chunks in order; empty when chunking is off

  bool empty() const { return minhashes.empty(); }
  friend bool operator==(const Sketch&, const Sketch&) = default;
};

class SketchContextImpl;

// The immutable tables derived from SketchParams: the Rabin polynomial and its tables, and the
// permutations. Build one per process and share it: a SketchContext is safe for concurrent use.
class SketchContext {
 public:
  // InvalidArgument if the params do not validate; InvalidArgument if `simd` names a level this
  // CPU lacks. kAuto picks the best level the CPU has.
  static StatusOr<std::shared_ptr<const SketchContext>> Create(const SketchParams& params,
                                                               SimdLevel simd = SimdLevel::kAuto);
  ~SketchContext();
  SketchContext(const SketchContext&) = delete;
  SketchContext& operator=(const SketchContext&) = delete;

  const SketchParams& params() const;
  uint64_t rabin_polynomial() const;  // low 64 coefficients; x^64 is implicit
  SimdLevel simd_level() const;       // the level in use, never kAuto
  const SketchContextImpl& impl() const { return *impl_; }

 private:
  explicit SketchContext(std::unique_ptr<SketchContextImpl> impl);
  std::unique_ptr<SketchContextImpl> impl_;
};

// The `identical` fingerprint (Sketch::identical) of a page whose raw bytes are `bytes`, as a
// Sketcher fed them through AddRawBytes computes it, without canonicalizing or sketching: one
// hash pass, to recognise bytes already stored before paying for a sketch.
Fingerprint128 IdenticalFingerprint(const SketchContext& context, std::string_view bytes);

// Observes every shingle fingerprint in document order, repetitions included; for exact
// computations (`compare`) that need the whole shingle set.
class ShingleObserver {
 public:
  virtual ~ShingleObserver() = default;
  virtual void OnShingle(uint64_t fingerprint) = 0;
};

class SketcherState;

// Builds one page's sketch from its raw bytes and its tokens, in one pass and in memory that does
// not grow with the page. Reusable: Finish() resets it. Not safe for concurrent use; use one per
// page in flight. The SketchContext must outlive it.
class Sketcher final : public TokenSink {
 public:
  explicit Sketcher(const SketchContext& context);
  ~Sketcher() override;
  Sketcher(const Sketcher&) = delete;
  Sketcher& operator=(const Sketcher&) = delete;

  // Adds to the raw-bytes fingerprint. Call with every byte of the page as received.
  void AddRawBytes(std::string_view bytes);

  // Adds the next canonical token.
  void OnToken(std::string_view token) override;
  void OnPaddedToken(std::string_view token) override;

  // Completes the sketch and resets the Sketcher for the next page.
  Sketch Finish();

  // Every shingle fingerprint also goes to `observer` (nullptr: none) until Finish().
  void set_shingle_observer(ShingleObserver* observer);

 private:
  std::unique_ptr<SketcherState> state_;
};

// Which canonicalizer turns HTML into tokens (dedup/streaming_canonicalizer.h).
enum class CanonicalizerKind;

// Sketches a whole page held in memory: canonicalization and sketch, with the streaming
// canonicalizer, or with `kind`. `content_type` is the HTTP Content-Type header value, or empty.
// For a page that arrives in pieces, use PageSketcher (dedup/page.h).
Sketch SketchPage(const SketchContext& context, std::string_view bytes,
                  std::string_view content_type);
Sketch SketchPage(const SketchContext& context, std::string_view bytes,
                  std::string_view content_type, CanonicalizerKind kind);

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_SKETCH_H_
