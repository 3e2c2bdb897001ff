#include "store/internal/codec.h"

#include <cmath>
#include <cstdint>

namespace shingled::store::internal {
namespace {

void AppendFingerprintLE(std::string* out, const dedup::Fingerprint128& fp) {
  AppendLE64(out, fp.high);
  AppendLE64(out, fp.low);
}

void AppendValues(std::string* out, const std::vector<uint64_t>& values) {
  AppendVarint(out, values.size());
  // One resize, then the bytes in place: a record holds a few hundred values, and the writer
  // encodes one per new document.
  const size_t at = out->size();
  out->resize(at + 8 * values.size());
  char* p = out->data() + at;
  for (uint64_t v : values) {
    for (int i = 0; i < 8; ++i) *p++ = static_cast<char>((v >> (8 * i)) & 0xff);
  }
}

// last_seen is stored as its difference from first_seen, modulo 2^64: any two dates round-trip,
// and damaged bytes cannot overflow a signed sum (undefined behaviour).
int64_t WrappingSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t WrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// A cursor over a record's bytes that remembers the first failure.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  uint64_t Varint(const char* field) {
    uint64_t v = 0;
    if (ok_ && !ReadVarint(&in_, &v)) Fail(field);
    return ok_ ? v : 0;
  }
  uint8_t Byte(const char* field) {
    if (!ok_ || in_.empty()) {
      Fail(field);
      return 0;
    }
    uint8_t b = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return b;
  }
  uint64_t Fixed64(const char* field) {
    if (!ok_ || in_.size() < 8) {
      Fail(field);
      return 0;
    }
    uint64_t v = GetLE64(in_.data());
    in_.remove_prefix(8);
    return v;
  }
  std::string Bytes(const char* field) {
    uint64_t n = Varint(field);
    if (!ok_ || in_.size() < n) {
      Fail(field);
      return {};
    }
    std::string s(in_.substr(0, n));
    in_.remove_prefix(n);
    return s;
  }
  void ValuesInto(const char* field, std::vector<uint64_t>* values) {
    values->clear();
    uint64_t n = Varint(field);
    if (!ok_ || n > in_.size() / 8) {
      Fail(field);
      return;
    }
    // The size is checked once above: no check per value (the writer decodes a few records
    // per page it scores).
    values->resize(n);
    const char* p = in_.data();
    for (auto& v : *values) {
      v = GetLE64(p);
      p += 8;
    }
    in_.remove_prefix(8 * n);
  }
  // Steps over a list of 8-byte values.
  void SkipValues(const char* field) {
    uint64_t n = Varint(field);
    if (!ok_ || n > in_.size() / 8) {
      Fail(field);
      return;
    }
    in_.remove_prefix(8 * n);
  }
  Status Finish(const char* record) {
    if (ok_ && !in_.empty()) Fail("trailing bytes");
    if (ok_) return OkStatus();
    return DataLossError(std::string(record) + " record does not decode at " + failed_field_);
  }

 private:
  void Fail(const char* field) {
    if (ok_) failed_field_ = field;
    ok_ = false;
  }
  std::string_view in_;
  bool ok_ = true;
  std::string failed_field_;
};

}  // namespace

std::string SweepKey(SweepId id) {
  std::string key(4, '\0');
  PutBE32(key.data(), id);
  return key;
}

std::string FingerprintKey(const dedup::Fingerprint128& fp) {
  std::string key(16, '\0');
  PutBE64(key.data(), fp.high);
  PutBE64(key.data() + 8, fp.low);
  return key;
}

std::string VersionKey(UrlId url, uint32_t seq) {
  std::string key(12, '\0');
  PutBE64(key.data(), url);
  PutBE32(key.data() + 8, seq);
  return key;
}

Status DecodeVersionKey(std::string_view key, UrlId* url, uint32_t* seq) {
  if (key.size() != 12) {
    return DataLossError("versions has a key of " + std::to_string(key.size()) + " bytes, not 12");
  }
  *url = GetBE64(key.data());
  *seq = GetBE32(key.data() + 8);
  return OkStatus();
}

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string UrlKey(std::string_view url) {
  if (url.size() <= kMaxWholeUrlKey) return std::string(url);
  // 471 + 1 + 8 = 480 bytes: a long URL is its prefix, a marker byte no URL contains, and a hash
  // of the whole, so that the key stays under LMDB's 511-byte limit and stays unique.
  std::string key(url.substr(0, kMaxWholeUrlKey - 9));
  key.push_back(static_cast<char>(0xff));
  key.resize(kMaxWholeUrlKey);
  PutBE64(key.data() + kMaxWholeUrlKey - 8, Fnv1a64(url));
  return key;
}

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool ReadVarint(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0, i = 0; i < 10; ++i, shift += 7) {
    if (i >= static_cast<int>(in->size())) return false;
    uint8_t b = static_cast<uint8_t>((*in)[i]);
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      in->remove_prefix(i + 1);
      *v = result;
      return true;
    }
  }
  return false;
}

namespace {
// The flags byte of a document record (FORMAT.md, "Document record").
constexpr uint8_t kHasSketch = 1, kOwnsLexical = 2, kOwnsShingle = 4;
}  // namespace

std::string EncodeDocument(const DocumentRecord& doc) {
  std::string out;
  out.reserve(doc.has_sketch() ? 96 + 8 * (doc.minhashes.size() + doc.features.size() +
                                           doc.supershingles.size() + doc.sample.values.size())
                               : 96);
  out.push_back(static_cast<char>((doc.has_sketch() ? kHasSketch : 0) |
                                  (doc.owns_lexical ? kOwnsLexical : 0) |
                                  (doc.owns_shingle ? kOwnsShingle : 0)));
  if (!doc.has_sketch()) AppendVarint(&out, doc.rep);
  AppendVarint(&out, doc.bytes);
  AppendVarint(&out, doc.tokens);
  AppendVarint(&out, doc.shingles);
  AppendVarint(&out, ZigZag(doc.first_seen));
  AppendVarint(&out, ZigZag(WrappingSub(doc.last_seen, doc.first_seen)));
  AppendFingerprintLE(&out, doc.identical);
  AppendFingerprintLE(&out, doc.lexical);
  AppendFingerprintLE(&out, doc.shingle);
  if (doc.has_sketch()) {
    AppendValues(&out, doc.minhashes);
    AppendValues(&out, doc.features);
    AppendValues(&out, doc.supershingles);
    out.push_back(static_cast<char>(doc.sample.log2_modulus));
    AppendValues(&out, doc.sample.values);
  }
  return out;
}

namespace {

// The part of a document record before its lists (FORMAT.md, "Document record").
struct RecordHead {
  DocId rep = 0;  // 0: the record has a sketch
  bool owns_lexical = false, owns_shingle = false;
  uint64_t bytes = 0, tokens = 0, shingles = 0;
  int64_t first_seen = 0, last_seen = 0;
  dedup::Fingerprint128 identical, lexical, shingle;
};

// Reads the head; a failed read is left in `r` for Finish to report.
Status ReadHead(Reader& r, RecordHead* h) {
  uint8_t flags = r.Byte("flags");
  if ((flags & ~(kHasSketch | kOwnsLexical | kOwnsShingle)) != 0) {
    return DataLossError("document record has unknown flags " + std::to_string(flags));
  }
  h->owns_lexical = (flags & kOwnsLexical) != 0;
  h->owns_shingle = (flags & kOwnsShingle) != 0;
  if ((flags & kHasSketch) == 0) {
    h->rep = r.Varint("rep");
    if (h->rep == 0) return DataLossError("document record without sketch names no representative");
  }
  h->bytes = r.Varint("bytes");
  h->tokens = r.Varint("tokens");
  h->shingles = r.Varint("shingles");
  h->first_seen = UnZigZag(r.Varint("first_seen"));
  h->last_seen = WrappingAdd(h->first_seen, UnZigZag(r.Varint("last_seen")));
  for (dedup::Fingerprint128* fp : {&h->identical, &h->lexical, &h->shingle}) {
    fp->high = r.Fixed64("fingerprint");
    fp->low = r.Fixed64("fingerprint");
  }
  return OkStatus();
}

}  // namespace

Status DecodeDocumentInto(std::string_view bytes, DocumentRecord* out) {
  Reader r(bytes);
  DocumentRecord& doc = *out;
  RecordHead h;
  SHINGLED_RETURN_IF_ERROR(ReadHead(r, &h));
  doc.rep = h.rep;
  doc.owns_lexical = h.owns_lexical;
  doc.owns_shingle = h.owns_shingle;
  doc.bytes = h.bytes;
  doc.tokens = h.tokens;
  doc.shingles = h.shingles;
  doc.first_seen = h.first_seen;
  doc.last_seen = h.last_seen;
  doc.identical = h.identical;
  doc.lexical = h.lexical;
  doc.shingle = h.shingle;
  doc.minhashes.clear();
  doc.features.clear();
  doc.supershingles.clear();
  doc.sample.log2_modulus = 0;
  doc.sample.values.clear();
  if (doc.has_sketch()) {
    r.ValuesInto("minhashes", &doc.minhashes);
    r.ValuesInto("features", &doc.features);
    r.ValuesInto("supershingles", &doc.supershingles);
    doc.sample.log2_modulus = r.Byte("sample modulus");
    r.ValuesInto("sample", &doc.sample.values);
  }
  return r.Finish("document");
}

StatusOr<DocumentRecord> DecodeDocument(std::string_view bytes) {
  DocumentRecord doc;
  SHINGLED_RETURN_IF_ERROR(DecodeDocumentInto(bytes, &doc));
  return doc;
}

Status DecodeScoringSketch(std::string_view bytes, dedup::Sketch* out, bool* has_sketch) {
  Reader r(bytes);
  dedup::Sketch& s = *out;
  RecordHead h;
  SHINGLED_RETURN_IF_ERROR(ReadHead(r, &h));
  *has_sketch = h.rep == 0;
  s.bytes = h.bytes;
  s.tokens = h.tokens;
  s.shingles = h.shingles;
  s.identical = h.identical;
  s.lexical = h.lexical;
  s.shingle = h.shingle;
  s.min_sample.clear();
  s.supershingles.clear();
  s.minhashes.clear();
  s.features.clear();
  s.sample.log2_modulus = 0;
  s.sample.values.clear();
  if (*has_sketch) {
    r.ValuesInto("minhashes", &s.minhashes);
    r.ValuesInto("features", &s.features);
    r.SkipValues("supershingles");
    s.sample.log2_modulus = r.Byte("sample modulus");
    r.ValuesInto("sample", &s.sample.values);
  }
  return r.Finish("document");
}

void SketchInto(const DocumentRecord& doc, dedup::Sketch* s) {
  s->bytes = doc.bytes;
  s->tokens = doc.tokens;
  s->shingles = doc.shingles;
  s->minhashes.assign(doc.minhashes.begin(), doc.minhashes.end());
  s->features.assign(doc.features.begin(), doc.features.end());
  s->min_sample.clear();
  s->supershingles.assign(doc.supershingles.begin(), doc.supershingles.end());
  s->sample.log2_modulus = doc.sample.log2_modulus;
  s->sample.values.assign(doc.sample.values.begin(), doc.sample.values.end());
  s->identical = doc.identical;
  s->lexical = doc.lexical;
  s->shingle = doc.shingle;
}

dedup::Sketch SketchOf(const DocumentRecord& doc) {
  dedup::Sketch s;
  SketchInto(doc, &s);
  return s;
}

namespace {
// The flags byte of a version record (FORMAT.md, "Version record").
constexpr uint8_t kCanonicalLink = 1, kRedirectTarget = 2;
}  // namespace

std::string EncodeVersion(const VersionRecord& v) {
  std::string out;
  AppendVarint(&out, v.sweep);
  AppendVarint(&out, ZigZag(v.date));
  AppendVarint(&out, v.doc);
  AppendVarint(&out, v.http_status);
  out.push_back(static_cast<char>(v.verdict));
  out.push_back(static_cast<char>((v.canonical_link.empty() ? 0 : kCanonicalLink) |
                                  (v.redirect_target.empty() ? 0 : kRedirectTarget)));
  for (const std::string* text : {&v.canonical_link, &v.redirect_target}) {
    if (text->empty()) continue;
    AppendVarint(&out, text->size());
    out += *text;
  }
  return out;
}

StatusOr<VersionRecord> DecodeVersion(std::string_view bytes) {
  Reader r(bytes);
  VersionRecord v;
  const uint64_t sweep = r.Varint("sweep");
  v.date = UnZigZag(r.Varint("date"));
  v.doc = r.Varint("doc");
  const uint64_t http_status = r.Varint("http_status");
  uint8_t verdict = r.Byte("verdict");
  uint8_t flags = r.Byte("flags");
  if (flags & kCanonicalLink) v.canonical_link = r.Bytes("canonical_link");
  if (flags & kRedirectTarget) v.redirect_target = r.Bytes("redirect_target");
  SHINGLED_RETURN_IF_ERROR(r.Finish("version"));
  if ((flags & ~(kCanonicalLink | kRedirectTarget)) != 0) {
    return DataLossError("version record has unknown flags " + std::to_string(flags));
  }
  // Both are 32-bit: a larger value is damage, not a value to cut to 32 bits.
  if (sweep > UINT32_MAX || http_status > UINT32_MAX) {
    return DataLossError("version record has sweep " + std::to_string(sweep) + " and status " +
                         std::to_string(http_status) + ", over 32 bits");
  }
  v.sweep = static_cast<SweepId>(sweep);
  v.http_status = static_cast<uint32_t>(http_status);
  if (verdict < 1 || verdict > static_cast<uint8_t>(Verdict::kRedirect))
    return DataLossError("version record has verdict " + std::to_string(verdict));
  v.verdict = static_cast<Verdict>(verdict);
  return v;
}

SweepInfo SweepInfoOf(SweepId id, const SweepRecord& r) {
  SweepInfo s;
  s.id = id;
  s.name = r.name;
  s.start = r.start;
  s.end = r.end;
  s.open = r.open;
  s.pages = r.pages;
  s.new_docs = r.new_docs;
  s.unchanged = r.unchanged;
  s.duplicate = r.duplicate;
  s.near_duplicate = r.near_duplicate;
  s.gone = r.gone;
  s.scope = r.scope;
  return s;
}

void SweepRecord::Count(Verdict verdict) {
  ++pages;
  switch (verdict) {
    case Verdict::kNew: ++new_docs; break;
    case Verdict::kUnchanged: ++unchanged; break;
    case Verdict::kDuplicate: ++duplicate; break;
    case Verdict::kNearDuplicate: ++near_duplicate; break;
    case Verdict::kGone: ++gone; break;
    // Attempts and redirects are counted in `pages` only: the record has no count of its own
    // for them (FORMAT.md, "Sweep record").
    case Verdict::kFailed:
    case Verdict::kRedirect:
      break;
  }
}

void SweepRecord::Uncount(Verdict verdict) {
  --pages;
  switch (verdict) {
    case Verdict::kNew:
      --new_docs;
      break;
    case Verdict::kUnchanged:
      --unchanged;
      break;
    case Verdict::kDuplicate:
      --duplicate;
      break;
    case Verdict::kNearDuplicate:
      --near_duplicate;
      break;
    case Verdict::kGone:
      --gone;
      break;
    case Verdict::kFailed:
    case Verdict::kRedirect:
      break;
  }
}

std::string EncodeSweep(const SweepRecord& s) {
  std::string out;
  AppendVarint(&out, s.name.size());
  out += s.name;
  AppendVarint(&out, ZigZag(s.start));
  AppendVarint(&out, ZigZag(s.end));
  out.push_back(s.open ? 0 : 1);
  for (uint64_t c : {s.pages, s.new_docs, s.unchanged, s.duplicate, s.near_duplicate, s.gone}) {
    AppendVarint(&out, c);
  }
  AppendVarint(&out, s.scope.size());
  for (const std::string& prefix : s.scope) {
    AppendVarint(&out, prefix.size());
    out += prefix;
  }
  return out;
}

StatusOr<SweepRecord> DecodeSweep(std::string_view bytes, bool format7) {
  Reader r(bytes);
  SweepRecord s;
  s.name = r.Bytes("name");
  s.start = UnZigZag(r.Varint("start"));
  s.end = UnZigZag(r.Varint("end"));
  s.open = r.Byte("state") == 0;
  for (uint64_t* c : {&s.pages, &s.new_docs, &s.unchanged, &s.duplicate, &s.near_duplicate, &s.gone}) {
    *c = r.Varint("counts");
  }
  if (!format7) {
    const uint64_t n = r.Varint("scope");
    // Each prefix takes at least one byte: a count above the bytes left is damage, not a reason
    // to reserve memory for it.
    if (n > bytes.size()) return DataLossError("sweep record does not decode at scope");
    s.scope.resize(n);
    for (std::string& prefix : s.scope) prefix = r.Bytes("scope");
  }
  SHINGLED_RETURN_IF_ERROR(r.Finish("sweep"));
  return s;
}

std::string EncodeLink(DocId other, double resemblance) {
  std::string out(kLinkSize, '\0');
  PutBE64(out.data(), other);
  double clamped = resemblance < 0 ? 0 : (resemblance > 1 ? 1 : resemblance);
  auto q = static_cast<uint16_t>(std::lround(clamped * 65535.0));
  out[8] = static_cast<char>(q >> 8);
  out[9] = static_cast<char>(q & 0xff);
  return out;
}

void DecodeLink(std::string_view bytes, DocId* other, double* resemblance) {
  *other = GetBE64(bytes.data());
  uint16_t q = static_cast<uint16_t>((static_cast<uint8_t>(bytes[8]) << 8) | static_cast<uint8_t>(bytes[9]));
  *resemblance = q / 65535.0;
}

// --- the file-chunk graph (format 9) ---

std::string EncodeDocChunks(std::span<const dedup::Chunk> chunks) {
  std::string out;
  out.reserve(2 + chunks.size() * 10);
  AppendVarint(&out, chunks.size());
  for (const dedup::Chunk& c : chunks) {
    char hash[8];
    PutBE64(hash, c.hash);
    out.append(hash, 8);
    AppendVarint(&out, c.length);
  }
  return out;
}

Status DecodeDocChunks(std::string_view bytes, std::vector<dedup::Chunk>* out) {
  out->clear();
  uint64_t count = 0;
  if (!ReadVarint(&bytes, &count)) return DataLossError("doc_chunks record: truncated count");
  // Each chunk takes at least 9 bytes: a count past that is damage, not a reason to allocate.
  if (count > bytes.size() / 9) {
    return DataLossError("doc_chunks record: " + std::to_string(count) + " chunks in " +
                         std::to_string(bytes.size()) + " bytes");
  }
  out->reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (bytes.size() < 8)
      return DataLossError("doc_chunks record: truncated hash of chunk " + std::to_string(i));
    dedup::Chunk c;
    c.hash = GetBE64(bytes.data());
    bytes.remove_prefix(8);
    uint64_t length = 0;
    if (!ReadVarint(&bytes, &length)) {
      return DataLossError("doc_chunks record: truncated length of chunk " + std::to_string(i));
    }
    if (length == 0 || length > UINT32_MAX) {
      return DataLossError("doc_chunks record: chunk " + std::to_string(i) + " has length " +
                           std::to_string(length));
    }
    c.length = static_cast<uint32_t>(length);
    out->push_back(c);
  }
  if (!bytes.empty()) {
    return DataLossError("doc_chunks record: " + std::to_string(bytes.size()) +
                         " bytes after the last chunk");
  }
  return OkStatus();
}

}  // namespace shingled::store::internal
