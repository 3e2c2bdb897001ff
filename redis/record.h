// The document record as the Redis backend keeps it (redis/FORMAT.md, "The document
// record"): what the decisions and queries read of a document, in about half the bytes of the
// LMDB record (store/FORMAT.md, "Document record"), since Redis holds every byte in memory.
//
// What changes against the LMDB record, and why each keeps the decisions:
//   - minhashes: the low 32 bits of each (336 bytes for 84, not 672). Two equal minhashes stay
//     equal; two different ones collide with probability 2^-32, so an estimate differs from the
//     64-bit one with probability under 84 * 2^-32 per pair.
//   - MOD sample: each value shifted right by the modulus' bits (which are zero in every value of
//     the sample) and cut to its low 32 bits, sorted. Filtering at a larger modulus 2^M reads the
//     low M - m bits, which are kept (M - m < 32); two values agree on the kept bits with
//     probability 2^-(32 - (M - m)) when they differ.
//   - super shingles: only the buckets they are filed in (the top bits of each value). Candidate
//     search reads the postings, which hold the full values; a takedown scans these buckets for
//     the document's id (redis/FORMAT.md, "Forgetting").
//   - the verification sample, sorted 32-bit values, delta-coded as varints.
//   - features, the three fingerprints, sizes and dates: as in the LMDB record.
// A document without a sketch (lexically or shingle equivalent to `rep`) keeps only the header.
#ifndef SHINGLED_REDIS_RECORD_H_
#define SHINGLED_REDIS_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace shingled::redis {

struct RedisDocument {
  uint64_t rep = 0;  // 0: the document has its own sketch
  bool owns_lexical = false, owns_shingle = false;
  uint64_t bytes = 0, tokens = 0, shingles = 0;
  int64_t first_seen = 0, last_seen = 0;
  // identical, lexical, shingle: high then low of each.
  uint64_t fingerprints[6] = {};
  // Only when rep == 0:
  std::vector<uint32_t> minhashes;  // MinhashKey of each, in permutation order
  std::vector<uint64_t> features;
  uint32_t log2_modulus = 0;
  std::vector<uint32_t> sample;         // ModSampleKey of each value, ascending
  std::vector<uint32_t> verify_sample;  // ascending, distinct
  // The high 32 bits of the sample values that the sample postings index (a key k with
  // k & 3 == 0: FORMAT.md's indexed quarter), in the order of `sample`, when log2_modulus < 32
  // (above, the key holds them): with the key they give the full value, which a query by
  // document looks up in the postings (the backend).
  std::vector<uint32_t> indexed_high;
  // The super shingle postings' buckets the document is filed in (the top bucket bits of each
  // value), ascending, distinct; `supershingles_listed` false for a record of a state before
  // format 4, which did not list them.
  bool supershingles_listed = false;
  std::vector<uint64_t> supershingle_buckets;

  friend bool operator==(const RedisDocument&, const RedisDocument&) = default;
};

// The 32 bits kept of a minhash, and of a MOD sample value taken at 2^log2_modulus.
inline uint32_t MinhashKey(uint64_t minhash) { return static_cast<uint32_t>(minhash); }
inline uint32_t ModSampleKey(uint64_t value, uint32_t log2_modulus) {
  return static_cast<uint32_t>(value >> log2_modulus);
}

// The bytes:
//   u8 flags (bit 0 has a sketch, bit 1 owns_lexical, bit 2 owns_shingle, bit 3 the super shingle
//   buckets are listed)
//   varint rep (without a sketch only); varint bytes, tokens, shingles;
//   varint zigzag(first_seen), zigzag(last_seen - first_seen); 6 x u64 LE fingerprints;
//   with a sketch: varint n, n x u32 LE minhashes; varint n, n x u64 LE features;
//   u8 log2_modulus, varint n, n x u32 LE sample; varint n, n varints of the verification
//   sample's differences (the first value, then each minus the one before); varint n, n x u32 LE
//   indexed_high; with bit 3, varint n, n varints of the super shingle buckets' differences.
std::string EncodeRedisDocument(const RedisDocument& doc);
// DataLoss naming the field when the bytes do not decode (or the sample or the verification
// sample, or the super shingle buckets, are not ascending).
StatusOr<RedisDocument> DecodeRedisDocument(std::string_view bytes);

}  // namespace shingled::redis

#endif  // SHINGLED_REDIS_RECORD_H_
