// Encodings of every key and value the store persists; store/FORMAT.md is their specification and
// tests/store/codec_test.cc asserts their exact bytes. Pure functions; private to store/.
#ifndef SHINGLED_STORE_INTERNAL_CODEC_H_
#define SHINGLED_STORE_INTERNAL_CODEC_H_

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/sketch.h"
#include "store/types.h"

namespace shingled::store::internal {

inline constexpr uint64_t kFormatVersion = 14;
// Longest URL kept whole in a `urls` key (LMDB keys are at most 511 bytes).
inline constexpr size_t kMaxWholeUrlKey = 480;

// --- fixed-width integers ---

inline void PutBE64(char* out, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}
// The readers load the bytes with one memcpy and swap them if the host's order differs: GCC
// does not always merge a loop over the bytes into one load (in a query's candidate decode and
// posting reads it stayed a loop, ~10% of a lookup).
inline uint64_t GetBE64(const char* in) {
  uint64_t v;
  std::memcpy(&v, in, sizeof(v));
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  return v;
}
inline void PutBE32(char* out, uint32_t v) {
  for (int i = 3; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}
inline uint32_t GetBE32(const char* in) {
  uint32_t v;
  std::memcpy(&v, in, sizeof(v));
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap32(v);
  return v;
}
inline void AppendLE64(std::string* out, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(b, 8);
}
// 8 bytes, little-endian (a `meta` counter).
inline std::string Le64(uint64_t v) {
  std::string s;
  AppendLE64(&s, v);
  return s;
}
inline uint64_t GetLE64(const char* in) {
  uint64_t v;
  std::memcpy(&v, in, sizeof(v));
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

// An 8-byte big-endian key or posting: document ids, url ids, hash values.
class Key64 {
 public:
  explicit Key64(uint64_t v) { PutBE64(bytes_.data(), v); }
  std::string_view view() const { return {bytes_.data(), bytes_.size()}; }

 private:
  std::array<char, 8> bytes_;
};
// --- posting lists (FORMAT.md, "Posting lists") ---
//
// `features`, `supershingles` and `samples` file a hash value v under its bucket, the top 20
// bits of v (3 bytes BE), as a 12-byte DUPFIXED entry: the low 44 bits of v (6 bytes BE), then
// the document id (6 bytes BE). Entries of one bucket sort by (value, document).
inline constexpr int kBucketBits = 20;
inline constexpr int kLowBits = 64 - kBucketBits;
inline constexpr uint64_t kLowMask = (uint64_t{1} << kLowBits) - 1;
inline constexpr size_t kPostingKeySize = 3;
inline constexpr size_t kPostingSize = 12;
// Document ids must fit the 6 bytes of a posting.
inline constexpr DocId kMaxDocId = (uint64_t{1} << 48) - 1;

class PostingKey {
 public:
  explicit PostingKey(uint64_t value) {
    const uint64_t bucket = value >> kLowBits;
    bytes_[0] = static_cast<char>(bucket >> 16);
    bytes_[1] = static_cast<char>((bucket >> 8) & 0xff);
    bytes_[2] = static_cast<char>(bucket & 0xff);
  }
  std::string_view view() const { return {bytes_.data(), bytes_.size()}; }

 private:
  std::array<char, kPostingKeySize> bytes_;
};

class Posting {
 public:
  // REQUIRES: doc <= kMaxDocId.
  Posting(uint64_t value, DocId doc) {
    const uint64_t low = value & kLowMask;
    for (int i = 0; i < 6; ++i) {
      bytes_[5 - i] = static_cast<char>((low >> (8 * i)) & 0xff);
      bytes_[11 - i] = static_cast<char>((doc >> (8 * i)) & 0xff);
    }
  }
  std::string_view view() const { return {bytes_.data(), bytes_.size()}; }
  // The first 6 bytes: the value's low bits, the prefix shared by the value's entries.
  std::string_view value_prefix() const { return {bytes_.data(), 6}; }

 private:
  std::array<char, kPostingSize> bytes_;
};

inline uint64_t GetBE48(const char* in) {
  uint16_t low;
  std::memcpy(&low, in + 4, sizeof(low));
  if constexpr (std::endian::native == std::endian::little) low = __builtin_bswap16(low);
  return (uint64_t{GetBE32(in)} << 16) | low;
}
// The value and the document of an entry under `key`. REQUIRES: sizes kPostingKeySize and
// kPostingSize.
inline uint64_t PostingValue(std::string_view key, std::string_view entry) {
  uint64_t bucket = (uint64_t{static_cast<uint8_t>(key[0])} << 16) |
                    (uint64_t{static_cast<uint8_t>(key[1])} << 8) | static_cast<uint8_t>(key[2]);
  return (bucket << kLowBits) | GetBE48(entry.data());
}
inline DocId PostingDoc(std::string_view entry) { return GetBE48(entry.data() + 6); }

// Whether a MOD sample value is filed in `samples` (FORMAT.md, "Posting lists"): the values that
// are 0 mod 2^(log2_modulus + kSampleIndexShift), about a quarter of the sample. The document
// record keeps the whole sample for the estimates.
inline constexpr uint32_t kSampleIndexShift = 2;
inline bool IndexedSampleValue(uint64_t value, uint32_t log2_modulus) {
  uint32_t bits = log2_modulus + kSampleIndexShift;
  if (bits >= 64) return value == 0;
  return (value & ((uint64_t{1} << bits) - 1)) == 0;
}
// The values of a record's sample that `samples` files, into *out (cleared first).
inline void IndexedSample(const std::vector<uint64_t>& values, uint32_t log2_modulus,
                          std::vector<uint64_t>* out) {
  out->clear();
  for (uint64_t value : values) {
    if (IndexedSampleValue(value, log2_modulus)) out->push_back(value);
  }
}

std::string SweepKey(SweepId id);                 // 4 bytes BE
std::string FingerprintKey(const dedup::Fingerprint128& fp);  // 16 bytes: high BE, low BE
std::string VersionKey(UrlId url, uint32_t seq);  // 12 bytes
// A `versions` key read from the store: DataLoss, naming its size, unless it is 12 bytes.
Status DecodeVersionKey(std::string_view key, UrlId* url, uint32_t* seq);
std::string UrlKey(std::string_view url);         // FORMAT.md, "URLs"
uint64_t Fnv1a64(std::string_view bytes);

// --- varints (LEB128) and zigzag ---

void AppendVarint(std::string* out, uint64_t v);
// Reads a varint from the front of `*in`, advancing it. False if truncated or over 10 bytes.
bool ReadVarint(std::string_view* in, uint64_t* v);
inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// --- records ---

struct DocumentRecord {
  DocId rep = 0;  // 0: has its own sketch
  uint64_t bytes = 0, tokens = 0, shingles = 0;
  int64_t first_seen = 0, last_seen = 0;
  dedup::Fingerprint128 identical, lexical, shingle;
  // Whether `fp_lexical` (`fp_shingle`) maps this record's lexical (shingle) fingerprint to it:
  // the document was the first with it (format 6; records written before are false).
  bool owns_lexical = false, owns_shingle = false;
  // Only when rep == 0:
  std::vector<uint64_t> minhashes, features, supershingles;
  dedup::ModSample sample;

  bool has_sketch() const { return rep == 0; }
  friend bool operator==(const DocumentRecord&, const DocumentRecord&) = default;
};
std::string EncodeDocument(const DocumentRecord& doc);
// DataLoss naming the field when the bytes do not decode.
StatusOr<DocumentRecord> DecodeDocument(std::string_view bytes);
// The same into `*out`, reusing its vectors' memory (no allocation once they are large enough);
// on error `*out` holds a partial record.
Status DecodeDocumentInto(std::string_view bytes, DocumentRecord* out);
// What scoring a candidate reads, straight from a record's bytes into `*out` (reusing its
// memory): sizes, fingerprints, minhashes, features and the MOD sample. Super shingles (only
// candidate search uses them) and min_sample are left empty. `*has_sketch` is false for a
// document stored without a sketch (it names a representative); its lists are then empty.
// DataLoss naming the field when the bytes do not decode.
Status DecodeScoringSketch(std::string_view bytes, dedup::Sketch* out, bool* has_sketch);
// Copies the stored parts of a record into a Sketch (min_sample stays empty).
dedup::Sketch SketchOf(const DocumentRecord& doc);
// The same into `*out`, reusing its memory.
void SketchInto(const DocumentRecord& doc, dedup::Sketch* out);

struct VersionRecord {
  SweepId sweep = 0;
  int64_t date = 0;
  DocId doc = 0;
  uint32_t http_status = 0;
  Verdict verdict = Verdict::kNew;
  std::string canonical_link;
  std::string redirect_target;  // flags bit 1 (format 8): a redirect's target
  friend bool operator==(const VersionRecord&, const VersionRecord&) = default;
};
std::string EncodeVersion(const VersionRecord& v);
// DataLoss naming the field when the bytes do not decode, the verdict is unknown or the flags
// have an unknown bit.
StatusOr<VersionRecord> DecodeVersion(std::string_view bytes);
// Whether a version shows its document as the URL's live content: it has one, and it is content
// or a failed attempt that kept it (a status under 400 for the content verdicts: a format 7 store
// may hold error pages stored as content).
inline bool LiveVersion(const VersionRecord& v) {
  return v.doc != 0 && (v.http_status < 400 || v.verdict == Verdict::kFailed);
}

struct SweepRecord {
  std::string name;
  int64_t start = 0, end = 0;
  bool open = true;
  uint64_t pages = 0, new_docs = 0, unchanged = 0, duplicate = 0, near_duplicate = 0, gone = 0;
  std::vector<std::string> scope;  // URL prefixes, sorted, without duplicates
  friend bool operator==(const SweepRecord&, const SweepRecord&) = default;
  void Count(Verdict verdict);
  // Takes back one Count(verdict).
  void Uncount(Verdict verdict);
};
std::string EncodeSweep(const SweepRecord& s);
// The sweep as the API answers it: the record's name, dates, scope and counts, with its id.
SweepInfo SweepInfoOf(SweepId id, const SweepRecord& record);
// `format7`: a record of format 7, which had no scope (read only to upgrade it).
StatusOr<SweepRecord> DecodeSweep(std::string_view bytes, bool format7 = false);

// A `links` posting: the other document (8, BE) and round(r * 65535) (2, BE).
inline constexpr size_t kLinkSize = 10;
std::string EncodeLink(DocId other, double resemblance);
void DecodeLink(std::string_view bytes, DocId* other, double* resemblance);

// --- the file-chunk graph (format 9; FORMAT.md, "Chunks") ---
//
// `chunk_docs` files a chunk's 64-bit hash as the posting lists of `features` do (PostingKey,
// Posting: the hash's top 20 bits as the key, its low 44 bits and the document as the entry).
// `doc_chunks` maps a document (Key64) to its chunks in order: a varint count, then per chunk its
// hash (8 bytes BE) and its length (a varint, >= 1).
std::string EncodeDocChunks(std::span<const dedup::Chunk> chunks);
// DataLoss naming what is wrong when the bytes do not decode (truncated, a zero length, bytes
// left over, a count larger than the bytes can hold).
Status DecodeDocChunks(std::string_view bytes, std::vector<dedup::Chunk>* out);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_CODEC_H_
