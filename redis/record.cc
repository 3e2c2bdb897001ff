#include "redis/record.h"

#include <limits>

namespace shingled::redis {
namespace {

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutFixed(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Ascending distinct values as varints of their differences (the first value, then each minus
// the one before).
template <typename T>
void PutDeltas(const std::vector<T>& values, std::string* out) {
  PutVarint(values.size(), out);
  T previous = 0;
  for (const T v : values) {
    PutVarint(v - previous, out);
    previous = v;
  }
}

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }

constexpr uint64_t kMaxList = 1 << 16;  // far above any parameter's list

class Reader {
 public:
  explicit Reader(std::string_view bytes) : s_(bytes) {}

  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= s_.size()) return false;
      const auto b = static_cast<uint8_t>(s_[pos_++]);
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool Fixed(int bytes, uint64_t* v) {
    if (s_.size() - pos_ < static_cast<size_t>(bytes)) return false;
    *v = 0;
    for (int i = 0; i < bytes; ++i) {
      *v |= static_cast<uint64_t>(static_cast<uint8_t>(s_[pos_ + i])) << (8 * i);
    }
    pos_ += static_cast<size_t>(bytes);
    return true;
  }
  bool Count(uint64_t* n, int bytes_each) {
    return Varint(n) && *n <= kMaxList &&
           *n * static_cast<uint64_t>(bytes_each) <= s_.size() - pos_;
  }
  // What PutDeltas wrote: false unless ascending, distinct and within T.
  template <typename T>
  bool Deltas(std::vector<T>* values) {
    uint64_t n = 0;
    if (!Count(&n, 1)) return false;
    values->resize(n);
    constexpr uint64_t kMax = std::numeric_limits<T>::max();
    uint64_t previous = 0;
    for (size_t i = 0; i < n; ++i) {
      uint64_t v = 0;
      if (!Varint(&v) || (i > 0 && v == 0) || v > kMax - previous) return false;
      previous += v;
      (*values)[i] = static_cast<T>(previous);
    }
    return true;
  }
  bool AtEnd() const { return pos_ == s_.size(); }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

Status Bad(std::string_view field) {
  return DataLossError(std::string("redis document record: cannot decode ").append(field));
}

}  // namespace

std::string EncodeRedisDocument(const RedisDocument& doc) {
  std::string out;
  const bool sketch = doc.rep == 0;
  const bool listed = sketch && doc.supershingles_listed;
  out.push_back(static_cast<char>((sketch ? 1 : 0) | (doc.owns_lexical ? 2 : 0) |
                                  (doc.owns_shingle ? 4 : 0) | (listed ? 8 : 0)));
  if (!sketch) PutVarint(doc.rep, &out);
  PutVarint(doc.bytes, &out);
  PutVarint(doc.tokens, &out);
  PutVarint(doc.shingles, &out);
  PutVarint(ZigZag(doc.first_seen), &out);
  PutVarint(ZigZag(static_cast<int64_t>(static_cast<uint64_t>(doc.last_seen) -
                                        static_cast<uint64_t>(doc.first_seen))),
            &out);
  for (const uint64_t f : doc.fingerprints) PutFixed(f, 8, &out);
  if (!sketch) return out;
  PutVarint(doc.minhashes.size(), &out);
  for (const uint32_t m : doc.minhashes) PutFixed(m, 4, &out);
  PutVarint(doc.features.size(), &out);
  for (const uint64_t f : doc.features) PutFixed(f, 8, &out);
  out.push_back(static_cast<char>(doc.log2_modulus));
  PutVarint(doc.sample.size(), &out);
  for (const uint32_t v : doc.sample) PutFixed(v, 4, &out);
  PutDeltas(doc.verify_sample, &out);
  PutVarint(doc.indexed_high.size(), &out);
  for (const uint32_t v : doc.indexed_high) PutFixed(v, 4, &out);
  if (listed) PutDeltas(doc.supershingle_buckets, &out);
  return out;
}

StatusOr<RedisDocument> DecodeRedisDocument(std::string_view bytes) {
  RedisDocument doc;
  Reader r(bytes);
  uint64_t flags = 0;
  // Bit 3 (the super shingle buckets) only with bit 0 (a sketch).
  if (!r.Fixed(1, &flags) || flags > 15 || (flags & 9) == 8) return Bad("the flags");
  const bool sketch = (flags & 1) != 0;
  doc.supershingles_listed = (flags & 8) != 0;
  doc.owns_lexical = (flags & 2) != 0;
  doc.owns_shingle = (flags & 4) != 0;
  if (!sketch && (!r.Varint(&doc.rep) || doc.rep == 0)) return Bad("rep");
  uint64_t first = 0;
  uint64_t span = 0;
  if (!r.Varint(&doc.bytes) || !r.Varint(&doc.tokens) || !r.Varint(&doc.shingles)) {
    return Bad("the sizes");
  }
  if (!r.Varint(&first) || !r.Varint(&span)) return Bad("the dates");
  doc.first_seen = UnZigZag(first);
  doc.last_seen = static_cast<int64_t>(static_cast<uint64_t>(doc.first_seen) +
                                       static_cast<uint64_t>(UnZigZag(span)));
  for (uint64_t& f : doc.fingerprints) {
    if (!r.Fixed(8, &f)) return Bad("the fingerprints");
  }
  if (sketch) {
    uint64_t n = 0;
    uint64_t v = 0;
    if (!r.Count(&n, 4)) return Bad("the minhashes");
    doc.minhashes.resize(n);
    for (uint32_t& m : doc.minhashes) {
      r.Fixed(4, &v);
      m = static_cast<uint32_t>(v);
    }
    if (!r.Count(&n, 8)) return Bad("the features");
    doc.features.resize(n);
    for (uint64_t& f : doc.features) r.Fixed(8, &f);
    if (!r.Fixed(1, &v) || v > 63) return Bad("the modulus");
    doc.log2_modulus = static_cast<uint32_t>(v);
    if (!r.Count(&n, 4)) return Bad("the MOD sample");
    doc.sample.resize(n);
    for (size_t i = 0; i < n; ++i) {
      r.Fixed(4, &v);
      doc.sample[i] = static_cast<uint32_t>(v);
      if (i > 0 && doc.sample[i] < doc.sample[i - 1]) return Bad("the MOD sample's order");
    }
    if (!r.Deltas(&doc.verify_sample)) return Bad("the verification sample");
    if (!r.Count(&n, 4)) return Bad("the indexed sample values");
    doc.indexed_high.resize(n);
    for (uint32_t& h : doc.indexed_high) {
      r.Fixed(4, &v);
      h = static_cast<uint32_t>(v);
    }
    if (doc.supershingles_listed && !r.Deltas(&doc.supershingle_buckets)) {
      return Bad("the super shingle buckets");
    }
  }
  if (!r.AtEnd()) return Bad("the end (bytes left over)");
  return doc;
}

}  // namespace shingled::redis
