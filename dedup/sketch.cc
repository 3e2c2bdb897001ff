#include "dedup/sketch.h"

// Inlined: a token is a few bytes, and a call through the shared library costs more than
// hashing it. XXH_INLINE_ALL also exposes XXH3_state_t for use as a member.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

#include "dedup/internal/sketch_context.h"
#include "dedup/internal/small_set.h"

namespace shingled::dedup {
namespace {

uint64_t DeriveSeed(uint64_t seed, uint64_t purpose) {
  return internal::Fmix64(seed ^ internal::Fmix64(purpose));
}


}  // namespace

Status SketchParams::Validate() const {
  auto bad = [](const char* field, int value, const char* range) {
    return InvalidArgumentError(std::string(field) + " = " + std::to_string(value) +
                                " is out of range (" + range + ")");
  };
  if (shingle_size < 1 || shingle_size > kMaxWindowWords) return bad("shingle_size", shingle_size, "1..32");
  if (feature_groups < 1 || feature_groups > 32) return bad("feature_groups", feature_groups, "1..32");
  if (group_size < 1 || group_size > 64) return bad("group_size", group_size, "1..64");
  if (num_minhashes() > internal::kMaxMinhashes) {
    return bad("feature_groups * group_size", num_minhashes(), "at most 256");
  }
  if (fungible_threshold < 1 || fungible_threshold > feature_groups) {
    return bad("fungible_threshold", fungible_threshold, "1..feature_groups");
  }
  if (min_sample_size < 1 || min_sample_size > 1024) return bad("min_sample_size", min_sample_size, "1..1024");
  if (supershingle_span < 1 || supershingle_span > min_sample_size) {
    return bad("supershingle_span", supershingle_span, "1..min_sample_size");
  }
  if (supershingle_window < 1 || supershingle_window > supershingle_span) {
    return bad("supershingle_window", supershingle_window, "1..supershingle_span");
  }
  if (mod_sample_max < 8 || mod_sample_max > 4096) return bad("mod_sample_max", mod_sample_max, "8..4096");
  if (verify_sample_size != 0 && (verify_sample_size < 16 || verify_sample_size > 480)) {
    return bad("verify_sample_size", verify_sample_size, "0 or 16..480");
  }
  return chunking.Validate();
}

std::string Fingerprint128::ToHex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[15 - i] = kDigits[(high >> (4 * i)) & 15];
    out[31 - i] = kDigits[(low >> (4 * i)) & 15];
  }
  return out;
}

SketchContextImpl::SketchContextImpl(const SketchParams& p, SimdLevel level)
    : params(p),
      polynomial(PickIrreduciblePolynomial(p.seed)),
      rabin(polynomial),
      window_tables(rabin, p.shingle_size),
      minhash(p.num_minhashes(), p.seed),
      simd(ResolveSimdLevel(level)),
      kernel(internal::KernelFor(simd)),
      use_clmul(simd != SimdLevel::kScalar && internal::CpuHasClmul()),
      clmul(internal::MakeRabinClmulConstants(polynomial, p.shingle_size)),
      use_avx512_windows(simd == SimdLevel::kAvx512 && internal::CpuHasAvx512Clmul()),
      window_powers(internal::MakeRabinWindowPowers(polynomial, p.shingle_size)),
      token_seed(DeriveSeed(p.seed, 1)),
      feature_seed(DeriveSeed(p.seed, 2)),
      supershingle_seed(DeriveSeed(p.seed, 3)),
      exact_seed(DeriveSeed(p.seed, 4)),
      token_hash(internal::MakeTokenHashConstants(token_seed)),
      hash_tokens(simd == SimdLevel::kAvx512 && internal::CpuHasAvx512DqVl()
                      ? &internal::HashTokensAvx512
                      : &internal::HashTokensScalar),
      mix(simd == SimdLevel::kAvx512 && internal::CpuHasAvx512DqVl() ? &internal::MixAvx512
                                                                     : &internal::MixScalar) {}

StatusOr<std::shared_ptr<const SketchContext>> SketchContext::Create(const SketchParams& params,
                                                                     SimdLevel simd) {
  SHINGLED_RETURN_IF_ERROR(params.Validate());
  if (!CpuSupports(simd)) {
    return InvalidArgumentError("this CPU does not support SIMD level " +
                                std::string(SimdLevelName(simd)));
  }
  return std::shared_ptr<const SketchContext>(
      new SketchContext(std::make_unique<SketchContextImpl>(params, simd)));
}

SketchContext::SketchContext(std::unique_ptr<SketchContextImpl> impl) : impl_(std::move(impl)) {}
SketchContext::~SketchContext() = default;
const SketchParams& SketchContext::params() const { return impl_->params; }
uint64_t SketchContext::rabin_polynomial() const { return impl_->polynomial; }
SimdLevel SketchContext::simd_level() const { return impl_->simd; }

// The per-page state of a Sketcher: constant size whatever the page.
//
// Tokens are copied as they come into one buffer, the input of the lexical fingerprint; each full
// block of tokens then goes through the stages one after the other, each a tight loop over an
// array: the token fingerprints (XXH3, several tokens at a time), the Rabin window (shingle
// fingerprints), the mix y = pi(x), the minhash kernel, and the two samples, whose thresholds
// turn away almost every value with one comparison before any call.
class SketcherState {
 public:
  explicit SketcherState(const SketchContextImpl& ctx)
      : ctx_(ctx),
        width_(static_cast<size_t>(ctx.params.shingle_size)),
        min_size_(static_cast<size_t>(ctx.params.min_sample_size)),
        mod_max_(static_cast<size_t>(ctx.params.mod_sample_max)),
        lexical_storage_(new char[kLexicalStorage]),
        lexical_buffer_(lexical_storage_.get() + internal::kTokenHashPadding),
        min_capacity_(std::bit_ceil(min_size_)),
        min_sorted_(min_capacity_, kNoThreshold),
        mod_set_(2 * (mod_max_ + 1)),
        verify_size_(static_cast<size_t>(ctx.params.verify_sample_size)),
        verify_seed_(DeriveSeed(ctx.params.seed, 5)),
        chunk_input_(ctx.params.chunking.input),
        chunker_(chunk_input_ == ChunkInput::kNone
                     ? nullptr
                     : std::make_unique<Chunker>(ctx.params.chunking)) {
    // The padding before the first token is read (and ignored) by the token hash kernel.
    std::fill(lexical_storage_.get(), lexical_buffer_, 0);
    mod_values_.reserve(mod_max_ + 1);
    verify_values_.reserve(2 * verify_size_ + kBlock);
    // XXH3's reset skips rebuilding its secret when the state's stored seed already equals the
    // new one; on reused heap memory that stored seed can be stale while the secret was
    // overwritten, which made the raw-bytes fingerprint depend on the heap's history.
    XXH3_INITSTATE(&raw_hash_);
    XXH3_INITSTATE(&lexical_hash_);
    Reset();
  }

  void Reset() {
    XXH3_128bits_reset_withSeed(&raw_hash_, ctx_.exact_seed);
    XXH3_128bits_reset_withSeed(&lexical_hash_, ctx_.exact_seed);
    lexical_len_ = 0;
    // Zeros before the first token: the words that "leave" a window not yet full add nothing.
    std::fill(words_, words_ + kMaxWindowWords, 0);
    pending_ = 0;
    fp_ = 0;
    minhash_.Reset();
    std::fill(min_sorted_.begin(), min_sorted_.begin() + static_cast<std::ptrdiff_t>(min_count_),
              kNoThreshold);
    min_count_ = 0;
    min_threshold_ = kNoThreshold;
    mod_values_.clear();
    mod_set_.Clear();
    log2_modulus_ = 0;
    mod_mask_ = 0;
    verify_values_.clear();
    verify_threshold_ = verify_size_ > 0 ? kNoVerifyThreshold : 0;
    bytes_ = tokens_ = shingles_ = 0;
    shingle_sum_ = mixed_sum_ = 0;
  }

  void AddRawBytes(std::string_view bytes) {
    XXH3_128bits_update(&raw_hash_, bytes.data(), bytes.size());
    if (chunk_input_ == ChunkInput::kRawBytes) chunker_->Feed(bytes, &chunks_);
    bytes_ += bytes.size();
  }

  // kPadded: kTokenPadding bytes after the token are readable (TokenSink::OnPaddedToken).
  template <bool kPadded>
  void AddToken(std::string_view token) {
    // The lexical fingerprint covers the token stream: tokens never hold a space, so "a b" and
    // "ab" differ.
    // The buffer holds a whole block of the longest tokens, so it never fills within a block.
    if (kPadded && token.size() <= kTokenPadding) {
      // The buffer has room for kTokenPadding bytes past any token (the hash's padding).
      std::memcpy(lexical_buffer_ + lexical_len_, token.data(), kTokenPadding);
    } else {
      CopyToken(token, lexical_buffer_ + lexical_len_);
    }
    token_offsets_[pending_] = static_cast<uint32_t>(internal::kTokenHashPadding + lexical_len_);
    token_lengths_[pending_] = static_cast<uint32_t>(token.size());
    lexical_len_ += token.size();
    lexical_buffer_[lexical_len_++] = ' ';
    if (++pending_ == kBlock) FlushBlock();
  }

  Sketch Finish() {
    FlushBlock();
    // A page shorter than a shingle still has one: all its tokens.
    if (tokens_ > 0 && tokens_ < width_) {
      fps_[0] = fp_;
      AddShingles(1);
    }
    Sketch sketch;
    sketch.bytes = bytes_;
    sketch.tokens = tokens_;
    sketch.shingles = shingles_;
    sketch.identical = ToFingerprint(XXH3_128bits_digest(&raw_hash_));
    sketch.lexical = ToFingerprint(XXH3_128bits_digest(&lexical_hash_));
    if (shingles_ > 0) FillSample(&sketch);
    sketch.shingle = ShingleFingerprint(sketch);
    if (chunker_ != nullptr) {
      chunker_->Finish(&chunks_);
      sketch.chunks = std::move(chunks_);
      chunks_ = {};
    }
    Reset();
    return sketch;
  }

  ShingleObserver* observer = nullptr;

 private:
  // Tokens per block: large enough that each stage's loop runs long, small enough for L1.
  static constexpr size_t kBlock = 128;
  static constexpr uint64_t kNoThreshold = ~uint64_t{0};
  // A block's tokens, each followed by a space, and the padding the token hash may read around
  // them.
  static_assert(kTokenPadding <= internal::kTokenHashPadding);
  static constexpr size_t kLexicalStorage =
      internal::kTokenHashPadding + kBlock * (kMaxTokenBytes + 1) + internal::kTokenHashPadding;

  static Fingerprint128 ToFingerprint(XXH128_hash_t h) { return {h.high64, h.low64}; }

  // memcpy with a size unknown at compile time is a library call, dear for tokens of a few bytes:
  // short tokens are copied with two fixed-size copies that may overlap, never reading past the
  // token.
  static void CopyToken(std::string_view token, char* out) {
    const char* in = token.data();
    const size_t n = token.size();
    if (n >= 16) {
      std::memcpy(out, in, n);
    } else if (n >= 8) {
      std::memcpy(out, in, 8);
      std::memcpy(out + n - 8, in + n - 8, 8);
    } else if (n >= 4) {
      std::memcpy(out, in, 4);
      std::memcpy(out + n - 4, in + n - 4, 4);
    } else {
      for (size_t i = 0; i < n; ++i) out[i] = in[i];
    }
  }

  // Slides the window over the pending token fingerprints and passes on the fingerprints of the
  // complete windows.
  void FlushBlock() {
    if (pending_ == 0) return;
    // Defined bytes after the last token, for the token hash kernel's reads past it.
    std::fill(lexical_buffer_ + lexical_len_,
              lexical_buffer_ + lexical_len_ + internal::kTokenHashPadding, 0);
    uint64_t* block = words_ + kMaxWindowWords;
    ctx_.hash_tokens(ctx_.token_hash, lexical_storage_.get(), token_offsets_, token_lengths_,
                     pending_, block);
    FlushLexical();
    if (ctx_.use_avx512_windows) {
      // The words before the block are the kMaxWindowWords kept from earlier blocks (zeros at the
      // start of a page), as the window function requires.
      internal::RabinWindowsAvx512(ctx_.window_powers, block, pending_, fps_);
      fp_ = fps_[pending_ - 1];
    } else {
      fp_ = ctx_.use_clmul ? internal::RabinSlideBlockClmul(ctx_.clmul, fp_, block, block - width_,
                                                            pending_, fps_)
                           : ctx_.window_tables.SlideBlock(fp_, block, block - width_, pending_, fps_);
    }
    // The first width - 1 tokens of a page make no complete window.
    const size_t incomplete =
        tokens_ >= width_ - 1 ? 0 : std::min(pending_, width_ - 1 - static_cast<size_t>(tokens_));
    tokens_ += pending_;
    if (incomplete > 0) std::copy(fps_ + incomplete, fps_ + pending_, fps_);
    AddShingles(pending_ - incomplete);
    // Keep the last kMaxWindowWords fingerprints for the windows of the next block.
    std::copy(words_ + pending_, words_ + pending_ + kMaxWindowWords, words_);
    pending_ = 0;
  }

  // Adds the shingles fps_[0..n).
  void AddShingles(size_t n) {
    if (n == 0) return;
    shingles_ += n;
    if (observer != nullptr) {
      for (size_t k = 0; k < n; ++k) observer->OnShingle(fps_[k]);
    }
    ctx_.mix(fps_, n, ctx_.minhash.mix_seed, ys_);
    ctx_.kernel(ctx_.minhash, ys_, n, &minhash_);
    // The shingle multiset's fingerprint: two sums, which do not depend on the order.
    for (size_t k = 0; k < n; ++k) {
      shingle_sum_ += fps_[k];
      mixed_sum_ += ys_[k];
    }
    // Early in a page, whether a value enters a sample is a coin toss, and a branch on it per
    // shingle mispredicted about once in five shingles. The values that pass the block's starting
    // thresholds are gathered first without a branch; the thresholds only fall within the block,
    // so these include every value that enters, and the calls check again.
    uint64_t* const min_candidates = candidates_;
    uint64_t* const mod_candidates = candidates_ + kBlock;
    size_t min_n = 0;
    size_t mod_n = 0;
    const uint64_t min_threshold = min_threshold_;
    const uint64_t mod_mask = mod_mask_;
    for (size_t k = 0; k < n; ++k) {
      const uint64_t y = ys_[k];
      min_candidates[min_n] = y;
      min_n += static_cast<size_t>(y < min_threshold);
      mod_candidates[mod_n] = y;
      mod_n += static_cast<size_t>((y & mod_mask) == 0);
    }
    for (size_t k = 0; k < min_n; ++k) {
      if (min_candidates[k] < min_threshold_) AddToMinSample(min_candidates[k]);
    }
    for (size_t k = 0; k < mod_n; ++k) {
      if ((mod_candidates[k] & mod_mask_) == 0) AddToModSample(mod_candidates[k]);
    }
    AddToVerifySample(n);
  }

  // The verification sample: the k smallest distinct values z = the top 32 bits of
  // Fmix64(x ^ verify_seed) of the shingles x. Values under the threshold (the k-th smallest once
  // k are known) are appended; when 2k are held they are sorted, deduplicated and cut to k, and
  // the threshold falls to the k-th: amortized O(1) per value that enters, memory 2k + a block.
  void AddToVerifySample(size_t n) {
    if (verify_size_ == 0) return;
    const uint64_t threshold = verify_threshold_;
    for (size_t k = 0; k < n; ++k) {
      const uint64_t z = internal::Fmix64(fps_[k] ^ verify_seed_) >> 32;
      if (z < threshold) verify_values_.push_back(static_cast<uint32_t>(z));
    }
    if (verify_values_.size() >= 2 * verify_size_) CompactVerifySample();
  }

  void CompactVerifySample() {
    std::sort(verify_values_.begin(), verify_values_.end());
    verify_values_.erase(std::unique(verify_values_.begin(), verify_values_.end()),
                         verify_values_.end());
    if (verify_values_.size() >= verify_size_) {
      verify_values_.resize(verify_size_);
      verify_threshold_ = verify_values_.back();
    }
  }

  void FlushLexical() {
    XXH3_128bits_update(&lexical_hash_, lexical_buffer_, lexical_len_);
    // The canonical text, each token followed by one space, is what the lexical fingerprint
    // hashes: the chunker reads the same bytes, a block of tokens at a time.
    if (chunk_input_ == ChunkInput::kCanonicalText) {
      chunker_->Feed(std::string_view(lexical_buffer_, lexical_len_), &chunks_);
    }
    lexical_len_ = 0;
  }

  // MIN_s of pi(S), pi(x) = y: the s smallest distinct values seen, in increasing order, in the
  // first min_count_ slots of min_sorted_; the other slots hold kNoThreshold. Called only for
  // y < min_threshold_ (the largest value once there are s, else kNoThreshold), so y is never
  // kNoThreshold and the filler sorts after it. A sorted array rather than a heap and a hash set:
  // the place to insert at is found without branches, in a fixed number of steps over the
  // power-of-two array, and it shows a repeated value (option B: a repeated shingle must not
  // enter twice) by its neighbour.
  void AddToMinSample(uint64_t y) {
    uint64_t* const v = min_sorted_.data();
    const uint64_t* base = v;
    for (size_t len = min_capacity_; len > 1;) {
      const size_t half = len / 2;
      // Arithmetic rather than a conditional: GCC made the conditional a branch.
      base += half & (uint64_t{0} - static_cast<uint64_t>(base[half - 1] < y));
      len -= half;
    }
    // The first index whose value is >= y: below min_capacity_, since y < min_threshold_.
    const size_t pos = static_cast<size_t>(base - v) + static_cast<size_t>(*base < y);
    if (v[pos] == y) return;
    // The last value drops out when the sample is full.
    const size_t moved = std::min(min_count_, min_size_ - 1) - pos;
    std::memmove(v + pos + 1, v + pos, moved * sizeof(uint64_t));
    v[pos] = y;
    min_count_ = std::min(min_count_ + 1, min_size_);
    if (min_count_ == min_size_) min_threshold_ = v[min_size_ - 1];
  }

  // MOD_{2^i}(pi(S)) with i raised whenever more than mod_sample_max values would be kept. Since
  // MOD_{2^(i+1)} is a subset of MOD_{2^i}, raising i and filtering gives exactly the sample the
  // final i would have given from the start; and i only rises when the whole page's sample at
  // that modulus is too large, so the final i is the smallest that keeps at most the maximum.
  // Called only for y = 0 mod 2^i.
  void AddToModSample(uint64_t y) {
    if (!mod_set_.Insert(y)) return;
    mod_values_.push_back(y);
    if (mod_values_.size() <= mod_max_) return;
    while (mod_values_.size() > mod_max_) {
      ++log2_modulus_;
      mod_mask_ = (uint64_t{1} << log2_modulus_) - 1;
      std::erase_if(mod_values_, [this](uint64_t v) { return (v & mod_mask_) != 0; });
    }
    // The values dropped stay in mod_set_, rather than being erased one by one: no later value
    // can equal one of them (every later value is 0 mod 2^log2_modulus_, and they are not), so
    // they only take room. The set is rebuilt from the values kept once the dropped ones could
    // fill it past half (it holds 2 (mod_max + 1) values at a load of at most one half).
    if (mod_set_.size() > mod_max_ + 1) {
      mod_set_.Clear();
      for (uint64_t v : mod_values_) mod_set_.Insert(v);
    }
  }

  void FillSample(Sketch* sketch) const {
    const SketchParams& p = ctx_.params;
    const int t = p.num_minhashes();
    sketch->minhashes.assign(minhash_.tail, minhash_.tail + t);
    sketch->features.resize(static_cast<size_t>(p.feature_groups));
    for (int g = 0; g < p.feature_groups; ++g) {
      sketch->features[g] = XXH3_64bits_withSeed(
          &sketch->minhashes[static_cast<size_t>(g) * p.group_size],
          sizeof(uint64_t) * static_cast<size_t>(p.group_size), ctx_.feature_seed + g);
    }
    sketch->min_sample.assign(min_sorted_.begin(),
                              min_sorted_.begin() + static_cast<std::ptrdiff_t>(min_count_));
    // Super shingles: windows over the smallest values; a page with fewer values than a window
    // has one super shingle of all of them, as a short page has one shingle.
    const size_t span = std::min(sketch->min_sample.size(), static_cast<size_t>(p.supershingle_span));
    const size_t window = std::min(span, static_cast<size_t>(p.supershingle_window));
    for (size_t i = 0; i + window <= span; ++i) {
      sketch->supershingles.push_back(XXH3_64bits_withSeed(
          &sketch->min_sample[i], sizeof(uint64_t) * window, ctx_.supershingle_seed));
    }
    std::sort(sketch->supershingles.begin(), sketch->supershingles.end());
    sketch->supershingles.erase(
        std::unique(sketch->supershingles.begin(), sketch->supershingles.end()),
        sketch->supershingles.end());
    if (verify_size_ > 0) {
      std::vector<uint32_t>& v = sketch->verify_sample;
      v = verify_values_;
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
      if (v.size() > verify_size_) v.resize(verify_size_);
    }
    sketch->sample.log2_modulus = log2_modulus_;
    sketch->sample.values = mod_values_;
    std::sort(sketch->sample.values.begin(), sketch->sample.values.end());
  }

  // The fingerprint of the shingle multiset: its size and the sums, modulo 2^64, of its
  // shingles' Rabin fingerprints x and of their mixed values pi(x). Equal multisets give equal
  // fingerprints whatever the order; two different ones agree in both sums with probability
  // about 2^-128 (pi is a bijective mix of x, so the second sum is not a function of the first).
  // A multiset and not a set: a set's fingerprint cannot be had without holding the set, and
  // two pages whose sets are equal but repeat a shingle a different number of times are left to
  // the resemblance relations, which estimate them at 1.0.
  Fingerprint128 ShingleFingerprint(const Sketch& sketch) const {
    const uint64_t fields[3] = {sketch.shingles, shingle_sum_, mixed_sum_};
    return ToFingerprint(XXH3_128bits_withSeed(fields, sizeof(fields), ctx_.exact_seed));
  }

  const SketchContextImpl& ctx_;
  const size_t width_;     // w
  const size_t min_size_;  // s of MIN_s
  const size_t mod_max_;
  XXH3_state_t raw_hash_;
  XXH3_state_t lexical_hash_;
  // The pending block's tokens; not zero-filled, the Sketcher of each page would pay for it.
  std::unique_ptr<char[]> lexical_storage_;
  char* const lexical_buffer_;  // after the padding
  size_t lexical_len_ = 0;
  // Where each pending token starts in lexical_storage_, and its length.
  uint32_t token_offsets_[kBlock] = {};
  uint32_t token_lengths_[kBlock] = {};
  // Token fingerprints: the last kMaxWindowWords of earlier blocks, then the pending block.
  uint64_t words_[kMaxWindowWords + kBlock] = {};
  size_t pending_ = 0;
  uint64_t fp_ = 0;  // the window's fingerprint after the last token flushed
  uint64_t fps_[kBlock] = {};  // the block's shingle fingerprints
  alignas(64) uint64_t ys_[kBlock] = {};  // and their mixed values, pi(x)
  internal::MinhashState minhash_;
  // The values of each block that may enter MIN_s, then those that may enter the MOD sample.
  uint64_t candidates_[2 * kBlock] = {};
  const size_t min_capacity_;  // s rounded up to a power of two
  std::vector<uint64_t> min_sorted_;  // min_capacity_ slots
  size_t min_count_ = 0;
  uint64_t min_threshold_ = kNoThreshold;  // the largest value of MIN_s once it is full
  std::vector<uint64_t> mod_values_;
  internal::SmallU64Set mod_set_;  // the values in mod_values_, and some dropped from it
  uint32_t log2_modulus_ = 0;
  uint64_t mod_mask_ = 0;  // 2^log2_modulus_ - 1
  // The verification sample's values so far (at most 2k + a block), and the bound below which a
  // value may still enter: 2^32 (none) until k distinct values are known.
  static constexpr uint64_t kNoVerifyThreshold = uint64_t{1} << 32;
  const size_t verify_size_;
  const uint64_t verify_seed_;
  std::vector<uint32_t> verify_values_;
  uint64_t verify_threshold_ = kNoVerifyThreshold;
  uint64_t shingle_sum_ = 0;  // of the shingle fingerprints x, modulo 2^64
  uint64_t mixed_sum_ = 0;    // of their mixed values pi(x)
  uint64_t bytes_ = 0;
  uint64_t tokens_ = 0;
  uint64_t shingles_ = 0;
  // Content-defined chunks (dedup/chunker.h): no chunker when chunking is off.
  const ChunkInput chunk_input_;
  const std::unique_ptr<Chunker> chunker_;
  std::vector<Chunk> chunks_;  // the page's chunks so far
};

Fingerprint128 IdenticalFingerprint(const SketchContext& context, std::string_view bytes) {
  // XXH3_128bits_withSeed over the whole input equals the streaming state's digest.
  const XXH128_hash_t h =
      XXH3_128bits_withSeed(bytes.data(), bytes.size(), context.impl().exact_seed);
  return {h.high64, h.low64};
}

Sketcher::Sketcher(const SketchContext& context)
    : state_(std::make_unique<SketcherState>(context.impl())) {}
Sketcher::~Sketcher() = default;
void Sketcher::AddRawBytes(std::string_view bytes) { state_->AddRawBytes(bytes); }
void Sketcher::OnToken(std::string_view token) { state_->AddToken<false>(token); }
void Sketcher::OnPaddedToken(std::string_view token) { state_->AddToken<true>(token); }
Sketch Sketcher::Finish() { return state_->Finish(); }
void Sketcher::set_shingle_observer(ShingleObserver* observer) { state_->observer = observer; }

}  // namespace shingled::dedup
