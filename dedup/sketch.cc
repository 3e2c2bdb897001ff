#include "dedup/sketch.h"

// Inlined: a token is a few bytes, and a call through the shared library costs more than
// hashing it. XXH_INLINE_ALL also exposes XXH3_state_t for use as a member.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "dedup/internal/sketch_context.h"
#include "dedup/internal/small_set.h"

namespace shingled::dedup {
namespace {

uint64_t DeriveSeed(uint64_t seed, uint64_t purpose) {
  return internal::Fmix64(seed ^ internal::Fmix64(purpose));
}

// How many mixed shingle values are gathered before the minhash kernel runs over them: large
// enough to amortize the indirect call, small enough to stay in L1.
constexpr size_t kBatch = 128;
// Lexical fingerprint input is buffered, because XXH3's streaming update costs tens of
// nanoseconds per call, more than a short token.
constexpr size_t kLexicalBuffer = 4096;

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
  return OkStatus();
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
      token_seed(DeriveSeed(p.seed, 1)),
      feature_seed(DeriveSeed(p.seed, 2)),
      supershingle_seed(DeriveSeed(p.seed, 3)),
      exact_seed(DeriveSeed(p.seed, 4)) {}

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
class SketcherState {
 public:
  explicit SketcherState(const SketchContextImpl& ctx)
      : ctx_(ctx),
        window_(ctx.window_tables),
        min_set_(static_cast<size_t>(ctx.params.min_sample_size)),
        mod_set_(static_cast<size_t>(ctx.params.mod_sample_max) + 1) {
    min_heap_.reserve(static_cast<size_t>(ctx.params.min_sample_size));
    mod_values_.reserve(static_cast<size_t>(ctx.params.mod_sample_max) + 1);
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
    window_.Reset();
    minhash_.Reset();
    batch_size_ = 0;
    min_heap_.clear();
    min_set_.Clear();
    mod_values_.clear();
    mod_set_.Clear();
    log2_modulus_ = 0;
    bytes_ = tokens_ = shingles_ = 0;
  }

  void AddRawBytes(std::string_view bytes) {
    XXH3_128bits_update(&raw_hash_, bytes.data(), bytes.size());
    bytes_ += bytes.size();
  }

  void AddToken(std::string_view token) {
    // The lexical fingerprint covers the token stream: tokens never hold a space, so "a b" and
    // "ab" differ.
    if (lexical_len_ + token.size() + 1 > kLexicalBuffer) FlushLexical();
    CopyToken(token, lexical_buffer_ + lexical_len_);
    lexical_len_ += token.size();
    lexical_buffer_[lexical_len_++] = ' ';
    ++tokens_;
    const uint64_t token_fp = XXH3_64bits_withSeed(token.data(), token.size(), ctx_.token_seed);
    const uint64_t fp =
        ctx_.use_clmul ? window_.PushWith(token_fp,
                                          [this](uint64_t f, uint64_t old, uint64_t word) {
                                            return internal::RabinSlideClmul(ctx_.clmul, f, old,
                                                                             word);
                                          })
                       : window_.Push(token_fp);
    if (window_.size() == ctx_.params.shingle_size) AddShingle(fp);
  }

  Sketch Finish() {
    // A page shorter than a shingle still has one: all its tokens.
    if (tokens_ > 0 && tokens_ < static_cast<uint64_t>(ctx_.params.shingle_size)) {
      AddShingle(window_.fingerprint());
    }
    FlushBatch();
    FlushLexical();
    Sketch sketch;
    sketch.bytes = bytes_;
    sketch.tokens = tokens_;
    sketch.shingles = shingles_;
    sketch.identical = ToFingerprint(XXH3_128bits_digest(&raw_hash_));
    sketch.lexical = ToFingerprint(XXH3_128bits_digest(&lexical_hash_));
    if (shingles_ > 0) FillSample(&sketch);
    sketch.shingle = ShingleFingerprint(sketch);
    Reset();
    return sketch;
  }

  ShingleObserver* observer = nullptr;

 private:
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

  void AddShingle(uint64_t fp) {
    ++shingles_;
    if (observer != nullptr) observer->OnShingle(fp);
    const uint64_t y = internal::Fmix64(fp ^ ctx_.minhash.mix_seed);
    batch_[batch_size_++] = y;
    if (batch_size_ == kBatch) FlushBatch();
    AddToMinSample(y);
    AddToModSample(y);
  }

  void FlushBatch() {
    if (batch_size_ == 0) return;
    ctx_.kernel(ctx_.minhash, batch_, batch_size_, &minhash_);
    batch_size_ = 0;
  }

  void FlushLexical() {
    XXH3_128bits_update(&lexical_hash_, lexical_buffer_, lexical_len_);
    lexical_len_ = 0;
  }

  // MIN_s of pi(S), pi(x) = y: a max-heap of the s smallest distinct values seen.
  void AddToMinSample(uint64_t y) {
    const size_t s = static_cast<size_t>(ctx_.params.min_sample_size);
    if (min_heap_.size() == s && y >= min_heap_.front()) return;  // the common case
    // Option B: a repeated shingle must not enter twice.
    if (!min_set_.Insert(y)) return;
    if (min_heap_.size() == s) {
      std::pop_heap(min_heap_.begin(), min_heap_.end());
      min_set_.Erase(min_heap_.back());
      min_heap_.pop_back();
    }
    min_heap_.push_back(y);
    std::push_heap(min_heap_.begin(), min_heap_.end());
  }

  // MOD_{2^i}(pi(S)) with i raised whenever more than mod_sample_max values would be kept. Since
  // MOD_{2^(i+1)} is a subset of MOD_{2^i}, raising i and filtering gives exactly the sample the
  // final i would have given from the start; and i only rises when the whole page's sample at
  // that modulus is too large, so the final i is the smallest that keeps at most the maximum.
  void AddToModSample(uint64_t y) {
    if ((y & ((uint64_t{1} << log2_modulus_) - 1)) != 0) return;
    if (!mod_set_.Insert(y)) return;
    mod_values_.push_back(y);
    while (mod_values_.size() > static_cast<size_t>(ctx_.params.mod_sample_max)) {
      ++log2_modulus_;
      const uint64_t mask = (uint64_t{1} << log2_modulus_) - 1;
      std::erase_if(mod_values_, [&](uint64_t v) {
        if ((v & mask) == 0) return false;
        mod_set_.Erase(v);
        return true;
      });
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
    sketch->min_sample = min_heap_;
    std::sort(sketch->min_sample.begin(), sketch->min_sample.end());
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
    sketch->sample.log2_modulus = log2_modulus_;
    sketch->sample.values = mod_values_;
    std::sort(sketch->sample.values.begin(), sketch->sample.values.end());
  }

  // The fingerprint of the selected sample: the minhashes and the MOD sample with its modulus.
  Fingerprint128 ShingleFingerprint(const Sketch& sketch) const {
    XXH3_state_t state{};
    XXH3_128bits_reset_withSeed(&state, ctx_.exact_seed);
    const uint64_t header[2] = {sketch.minhashes.size(), sketch.sample.log2_modulus};
    XXH3_128bits_update(&state, header, sizeof(header));
    XXH3_128bits_update(&state, sketch.minhashes.data(), sizeof(uint64_t) * sketch.minhashes.size());
    XXH3_128bits_update(&state, sketch.sample.values.data(),
                        sizeof(uint64_t) * sketch.sample.values.size());
    return ToFingerprint(XXH3_128bits_digest(&state));
  }

  const SketchContextImpl& ctx_;
  XXH3_state_t raw_hash_;
  XXH3_state_t lexical_hash_;
  char lexical_buffer_[kLexicalBuffer] = {};  // holds whole tokens: kLexicalBuffer > kMaxTokenBytes
  size_t lexical_len_ = 0;
  RabinWindow window_;
  internal::MinhashState minhash_;
  uint64_t batch_[kBatch] = {};
  size_t batch_size_ = 0;
  std::vector<uint64_t> min_heap_;
  internal::SmallU64Set min_set_;  // the values in min_heap_
  std::vector<uint64_t> mod_values_;
  internal::SmallU64Set mod_set_;  // the values in mod_values_
  uint32_t log2_modulus_ = 0;
  uint64_t bytes_ = 0;
  uint64_t tokens_ = 0;
  uint64_t shingles_ = 0;
};

Sketcher::Sketcher(const SketchContext& context)
    : state_(std::make_unique<SketcherState>(context.impl())) {}
Sketcher::~Sketcher() = default;
void Sketcher::AddRawBytes(std::string_view bytes) { state_->AddRawBytes(bytes); }
void Sketcher::OnToken(std::string_view token) { state_->AddToken(token); }
Sketch Sketcher::Finish() { return state_->Finish(); }
void Sketcher::set_shingle_observer(ShingleObserver* observer) { state_->observer = observer; }

}  // namespace shingled::dedup
