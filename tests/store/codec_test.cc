// Exact bytes of every persisted encoding (store/FORMAT.md) and round trips.
#include "store/internal/codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>

#include "dedup/sketch.h"

namespace shingled::store::internal {
namespace {

std::string Hex(std::string_view s) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (char c : s) {
    out.push_back(kDigits[static_cast<uint8_t>(c) >> 4]);
    out.push_back(kDigits[static_cast<uint8_t>(c) & 15]);
  }
  return out;
}

TEST(CodecTest, KeysAreBigEndian) {
  EXPECT_EQ(Hex(Key64(0x0102030405060708ull).view()), "0102030405060708");
  EXPECT_EQ(Hex(Key64(1).view()), "0000000000000001");
  EXPECT_EQ(Hex(SweepKey(0x0a0b0c0d)), "0a0b0c0d");
  EXPECT_EQ(Hex(FingerprintKey({0x1122334455667788ull, 0x99aabbccddeeff00ull})),
            "112233445566778899aabbccddeeff00");
  EXPECT_EQ(Hex(VersionKey(2, 3)), "0000000000000002" "00000003");
}

TEST(CodecTest, BigEndianKeysSortNumerically) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 10000; ++i) {
    uint64_t a = rng() >> (rng() % 64), b = rng() >> (rng() % 64);
    EXPECT_EQ(a < b, Key64(a).view() < Key64(b).view()) << a << " " << b;
    EXPECT_EQ(GetBE64(Key64(a).view().data()), a);
  }
}

TEST(CodecTest, VarintBytes) {
  std::string out;
  AppendVarint(&out, 0);
  AppendVarint(&out, 127);
  AppendVarint(&out, 128);
  AppendVarint(&out, 300);
  EXPECT_EQ(Hex(out), "00" "7f" "8001" "ac02");
  out.clear();
  AppendVarint(&out, ~uint64_t{0});
  EXPECT_EQ(Hex(out), "ffffffffffffffffff01");
  EXPECT_EQ(ZigZag(0), 0u);
  EXPECT_EQ(ZigZag(-1), 1u);
  EXPECT_EQ(ZigZag(1), 2u);
  EXPECT_EQ(ZigZag(INT64_MIN), ~uint64_t{0});
}

TEST(CodecTest, VarintRoundTripsOverRanges) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 20000; ++i) {
    uint64_t v = rng() >> (rng() % 64);
    int64_t z = static_cast<int64_t>(rng());
    std::string out;
    AppendVarint(&out, v);
    std::string_view in = out;
    uint64_t got = 0;
    ASSERT_TRUE(ReadVarint(&in, &got));
    EXPECT_EQ(got, v);
    EXPECT_TRUE(in.empty());
    EXPECT_EQ(UnZigZag(ZigZag(z)), z);
  }
  std::string_view truncated("\x80\x80", 2);
  uint64_t v;
  EXPECT_FALSE(ReadVarint(&truncated, &v));
}

TEST(CodecTest, UrlKeys) {
  EXPECT_EQ(UrlKey("http://a/"), "http://a/");
  std::string whole(kMaxWholeUrlKey, 'x');
  EXPECT_EQ(UrlKey(whole), whole);
  std::string long_url(2000, 'y');
  std::string key = UrlKey(long_url);
  ASSERT_EQ(key.size(), 480u);
  EXPECT_EQ(key.substr(0, 471), long_url.substr(0, 471));
  EXPECT_EQ(static_cast<uint8_t>(key[471]), 0xff);
  EXPECT_EQ(GetBE64(key.data() + 472), Fnv1a64(long_url));
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);  // the published FNV-1a 64 test vector
  std::string other = long_url;
  other.back() = 'z';
  EXPECT_NE(UrlKey(other), key);
}

TEST(CodecTest, DocumentWithSketchExactBytes) {
  DocumentRecord d;
  d.bytes = 300;
  d.tokens = 2;
  d.shingles = 1;
  d.first_seen = 1000;
  d.last_seen = 999;
  d.identical = {1, 2};
  d.lexical = {3, 4};
  d.shingle = {5, 6};
  d.owns_lexical = true;
  d.minhashes = {0x0102030405060708ull};
  d.features = {9};
  d.supershingles = {};
  d.sample.log2_modulus = 3;
  d.sample.values = {8};
  // clang-format off
  std::string expected =
      "03"                                                  // flags: has_sketch, owns_lexical
      "ac02" "02" "01"                                      // bytes, tokens, shingles
      "d00f" "01"                                           // zigzag(1000), zigzag(-1)
      "0100000000000000" "0200000000000000"                 // identical, LE
      "0300000000000000" "0400000000000000"                 // lexical
      "0500000000000000" "0600000000000000"                 // shingle
      "01" "0807060504030201"                               // minhashes
      "01" "0900000000000000"                               // features
      "00"                                                  // super shingles
      "03" "01" "0800000000000000";                         // sample
  // clang-format on
  EXPECT_EQ(Hex(EncodeDocument(d)), expected);
  StatusOr<DocumentRecord> back = DecodeDocument(EncodeDocument(d));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, d);
}

TEST(CodecTest, DocumentWithoutSketchExactBytes) {
  DocumentRecord d;
  d.rep = 7;
  d.bytes = 1;
  d.first_seen = -1;
  d.last_seen = 1;
  d.owns_shingle = true;
  // flags (owns_shingle), rep, bytes, tokens, shingles, first_seen, last_seen, fingerprints
  // clang-format off
  EXPECT_EQ(Hex(EncodeDocument(d)),
            "04" "07" "01" "00" "00" "01" "04" + std::string(96, '0'));
  // clang-format on
  StatusOr<DocumentRecord> back = DecodeDocument(EncodeDocument(d));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, d);
}

TEST(CodecTest, DocumentWithUnknownFlagsIsRefused) {
  DocumentRecord d;
  d.rep = 7;
  for (char flags : {'\x08', '\x80', '\xff'}) {
    std::string bytes = EncodeDocument(d);
    bytes[0] = flags;
    StatusOr<DocumentRecord> back = DecodeDocument(bytes);
    ASSERT_FALSE(back.ok());
    EXPECT_EQ(back.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(back.status().message().find("unknown flags"), std::string::npos)
        << back.status().message();
  }
}

// A record of random content: with a sketch (lists of random lengths, some empty), or naming a
// representative.
DocumentRecord RandomDocument(std::mt19937_64& rng, bool with_sketch) {
  DocumentRecord d;
  if (!with_sketch) d.rep = 1 + rng() % 1000;
  d.bytes = rng();
  d.tokens = rng() % 100000;
  d.shingles = rng() % 100000;
  d.first_seen = static_cast<int64_t>(rng() % 4000000000ull) - 1000;
  d.last_seen = d.first_seen + static_cast<int64_t>(rng() % 100000);
  d.identical = {rng(), rng()};
  d.lexical = {rng(), rng()};
  d.shingle = {rng(), rng()};
  d.owns_lexical = rng() % 2 == 0;
  d.owns_shingle = rng() % 2 == 0;
  if (with_sketch) {
    d.minhashes.resize(84);
    for (auto& v : d.minhashes) v = rng();
    d.features = {rng(), rng(), rng(), rng(), rng(), rng()};
    d.supershingles.resize(rng() % 23);
    for (auto& v : d.supershingles) v = rng();
    d.sample.log2_modulus = rng() % 20;
    d.sample.values.resize(rng() % 101);
    for (auto& v : d.sample.values) v = rng();
  }
  return d;
}

TEST(CodecTest, DocumentRoundTripsAndRejectsTruncation) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 200; ++iter) {
    const DocumentRecord d = RandomDocument(rng, /*with_sketch=*/iter % 3 != 0);
    std::string bytes = EncodeDocument(d);
    StatusOr<DocumentRecord> back = DecodeDocument(bytes);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, d);
    if (d.rep == 0) {
      // LMDB keeps values up to 2,040 bytes on the leaf page (FORMAT.md).
      EXPECT_LE(bytes.size(), 2000u);
    }
    StatusOr<DocumentRecord> cut = DecodeDocument(std::string_view(bytes).substr(0, rng() % bytes.size()));
    ASSERT_FALSE(cut.ok());
    EXPECT_EQ(cut.status().code(), StatusCode::kDataLoss);
  }
}

// The scoring decode reads the same bytes as DecodeDocument, minus the super shingles and dates.
TEST(CodecTest, ScoringSketchIsTheRecordsSketchWithoutSuperShingles) {
  std::mt19937_64 rng(4);
  dedup::Sketch s;
  for (int iter = 0; iter < 200; ++iter) {
    const DocumentRecord d = RandomDocument(rng, /*with_sketch=*/iter % 3 != 0);
    const std::string bytes = EncodeDocument(d);
    bool has_sketch = true;
    ASSERT_TRUE(DecodeScoringSketch(bytes, &s, &has_sketch).ok());  // `s` reused: nothing left over
    EXPECT_EQ(has_sketch, d.has_sketch());
    dedup::Sketch want = SketchOf(d);
    want.supershingles.clear();
    EXPECT_EQ(s.minhashes, want.minhashes);
    EXPECT_EQ(s.features, want.features);
    EXPECT_TRUE(s.supershingles.empty());
    EXPECT_EQ(s.sample, want.sample);
    EXPECT_EQ(s.bytes, want.bytes);
    EXPECT_EQ(s.tokens, want.tokens);
    EXPECT_EQ(s.shingles, want.shingles);
    EXPECT_EQ(s.identical, want.identical);
    EXPECT_EQ(s.lexical, want.lexical);
    EXPECT_EQ(s.shingle, want.shingle);
    Status cut = DecodeScoringSketch(std::string_view(bytes).substr(0, rng() % bytes.size()), &s, &has_sketch);
    EXPECT_EQ(cut.code(), StatusCode::kDataLoss);
  }
}

TEST(CodecTest, VersionExactBytes) {
  VersionRecord v;
  v.sweep = 2;
  v.date = 1700000000;
  v.doc = 300;
  v.http_status = 200;
  v.verdict = Verdict::kUnchanged;
  EXPECT_EQ(Hex(EncodeVersion(v)), "02" "80c49fd50c" "ac02" "c801" "02" "00");
  v.canonical_link = "ab";
  EXPECT_EQ(Hex(EncodeVersion(v)), "02" "80c49fd50c" "ac02" "c801" "02" "01" "02" "6162");
  StatusOr<VersionRecord> back = DecodeVersion(EncodeVersion(v));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, v);
  EXPECT_FALSE(DecodeVersion(std::string("\x02\x00\x00\x00\x09\x00", 6)).ok());  // verdict 9
  // A sweep id or status over 32 bits is damage: refused, not cut to its low 32 bits (2^32 + 2
  // read as sweep 2).
  StatusOr<VersionRecord> wide =
      DecodeVersion(std::string("\x82\x80\x80\x80\x10\x00\x00\x00\x02\x00", 10));
  EXPECT_EQ(wide.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(wide.status().message().find("sweep 4294967298"), std::string::npos)
      << wide.status().ToString();
  EXPECT_EQ(
      DecodeVersion(std::string("\x02\x00\x00\x80\x80\x80\x80\x10\x02\x00", 10)).status().code(),
      StatusCode::kDataLoss);
}

// Format 8: a failed attempt (verdict 6) keeps the URL's live document; a redirect (verdict 7)
// has none and carries its target after the canonical link (flags bit 1).
TEST(CodecTest, FailedAndRedirectVersionExactBytes) {
  VersionRecord failed;
  failed.sweep = 2;
  failed.date = 1700000000;
  failed.doc = 300;
  failed.http_status = 503;
  failed.verdict = Verdict::kFailed;
  EXPECT_EQ(Hex(EncodeVersion(failed)),
            "02"
            "80c49fd50c"
            "ac02"
            "f703"
            "06"
            "00");
  failed.http_status = 0;  // no answer (a timeout)
  EXPECT_EQ(Hex(EncodeVersion(failed)),
            "02"
            "80c49fd50c"
            "ac02"
            "00"
            "06"
            "00");

  VersionRecord redirect;
  redirect.sweep = 2;
  redirect.date = 1700000000;
  redirect.http_status = 301;
  redirect.verdict = Verdict::kRedirect;
  redirect.redirect_target = "http://b/";
  EXPECT_EQ(Hex(EncodeVersion(redirect)),
            "02"
            "80c49fd50c"
            "00"
            "ad02"
            "07"
            "02"
            "09"
            "687474703a2f2f622f");
  redirect.canonical_link = "ab";
  EXPECT_EQ(Hex(EncodeVersion(redirect)),
            "02"
            "80c49fd50c"
            "00"
            "ad02"
            "07"
            "03"
            "02"
            "6162"
            "09"
            "687474703a2f2f622f");
  redirect.redirect_target.clear();  // a redirect whose target is not known
  redirect.canonical_link.clear();
  EXPECT_EQ(Hex(EncodeVersion(redirect)),
            "02"
            "80c49fd50c"
            "00"
            "ad02"
            "07"
            "00");

  // Round trips over every verdict, with and without either string.
  for (int verdict = 1; verdict <= 7; ++verdict) {
    for (int strings = 0; strings < 4; ++strings) {
      VersionRecord v;
      v.sweep = 7;
      v.date = -5;
      v.doc = verdict == 5 || verdict == 7 ? 0 : 1234567;
      v.http_status = 302;
      v.verdict = static_cast<Verdict>(verdict);
      if (strings & 1) v.canonical_link = "https://example.com/c";
      if (strings & 2) v.redirect_target = std::string(300, 'x');
      StatusOr<VersionRecord> back = DecodeVersion(EncodeVersion(v));
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_EQ(*back, v) << verdict << " " << strings;
    }
  }
  // Verdict 8 and unknown flag bits are damage.
  EXPECT_EQ(DecodeVersion(std::string("\x02\x00\x00\x00\x08\x00", 6)).status().code(),
            StatusCode::kDataLoss);
  StatusOr<VersionRecord> flags = DecodeVersion(std::string("\x02\x00\x00\x00\x07\x04", 6));
  EXPECT_EQ(flags.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(flags.status().message().find("unknown flags 4"), std::string::npos)
      << flags.status().ToString();
  // A target cut short.
  EXPECT_EQ(DecodeVersion(std::string("\x02\x00\x00\x00\x07\x02\x09http", 10)).status().code(),
            StatusCode::kDataLoss);
}

// The sweep record has no count of its own for attempts and redirects: `pages` only.
TEST(CodecTest, SweepCountsFailedAndRedirectInPagesOnly) {
  SweepRecord s;
  s.Count(Verdict::kFailed);
  s.Count(Verdict::kRedirect);
  s.Count(Verdict::kNew);
  EXPECT_EQ(s.pages, 3u);
  EXPECT_EQ(s.new_docs, 1u);
  EXPECT_EQ(s.unchanged + s.duplicate + s.near_duplicate + s.gone, 0u);
}

TEST(CodecTest, SweepExactBytes) {
  SweepRecord s;
  s.name = "s1";
  s.start = 10;
  s.end = 0;
  s.open = false;
  s.pages = 5;
  s.new_docs = 1;
  s.unchanged = 1;
  s.duplicate = 1;
  s.near_duplicate = 1;
  s.gone = 1;
  // The scope's count (0) last.
  EXPECT_EQ(Hex(EncodeSweep(s)),
            "02"
            "7331"
            "14"
            "00"
            "01"
            "05"
            "01"
            "01"
            "01"
            "01"
            "01"
            "00");
  StatusOr<SweepRecord> back = DecodeSweep(EncodeSweep(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
  // Format 7's record had no scope: read as such only when upgrading.
  std::string format7 = EncodeSweep(s);
  format7.pop_back();
  EXPECT_EQ(DecodeSweep(format7).status().code(), StatusCode::kDataLoss);
  StatusOr<SweepRecord> old = DecodeSweep(format7, /*format7=*/true);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(*old, s);

  s.scope = {"http://a/", "https://b/x"};
  EXPECT_EQ(Hex(EncodeSweep(s)),
            "02"
            "7331"
            "14"
            "00"
            "01"
            "05"
            "01"
            "01"
            "01"
            "01"
            "01"
            "02"
            "09"
            "687474703a2f2f612f"
            "0b"
            "68747470733a2f2f622f78");
  back = DecodeSweep(EncodeSweep(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
  // A count of prefixes larger than the bytes left is damage, not an allocation.
  std::string huge = EncodeSweep(s);
  huge.resize(huge.size() - 23);
  huge += "\xff\xff\xff\xff\x0f";
  EXPECT_EQ(DecodeSweep(huge).status().code(), StatusCode::kDataLoss);
}

TEST(CodecTest, PostingExactBytes) {
  // Bucket: the value's top 20 bits (3 bytes BE); entry: its low 44 bits (6 bytes BE), then the
  // document id (6 bytes BE).
  EXPECT_EQ(Hex(PostingKey(0x0102030405060708ull).view()), "001020");
  EXPECT_EQ(Hex(PostingKey(0xffffffffffffffffull).view()), "0fffff");
  EXPECT_EQ(Hex(Posting(0x0102030405060708ull, 0x0a0b0c0d0e0full).view()), "030405060708" "0a0b0c0d0e0f");
  EXPECT_EQ(Hex(Posting(0xffffffffffffffffull, 5).view()), "0fffffffffff" "000000000005");
  EXPECT_EQ(Hex(Posting(0x0102030405060708ull, 5).value_prefix()), "030405060708");
  EXPECT_EQ(kMaxDocId, 0xffffffffffffull);
}

TEST(CodecTest, PostingRoundTripsAndSortsByValueThenDocument) {
  std::mt19937_64 rng(4);
  for (int i = 0; i < 10000; ++i) {
    uint64_t value = rng() >> (rng() % 64), other = rng() >> (rng() % 64);
    DocId doc = (rng() >> (rng() % 64)) & kMaxDocId, doc2 = rng() & kMaxDocId;
    Posting p(value, doc);
    EXPECT_EQ(PostingValue(PostingKey(value).view(), p.view()), value);
    EXPECT_EQ(PostingDoc(p.view()), doc);
    // Buckets sort like the values' top bits; within a bucket, memcmp order is (value,
    // document) order.
    EXPECT_EQ((value >> 44) < (other >> 44), PostingKey(value).view() < PostingKey(other).view());
    uint64_t same_bucket = (value & ~kLowMask) | (other & kLowMask);
    auto a = std::pair(value, doc), b = std::pair(same_bucket, doc2);
    EXPECT_EQ(a < b, p.view() < Posting(same_bucket, doc2).view()) << value << " " << same_bucket;
  }
}

TEST(CodecTest, IndexedSampleValuesAreZeroModFourTimesTheModulus) {
  EXPECT_TRUE(IndexedSampleValue(0, 0));
  EXPECT_TRUE(IndexedSampleValue(4, 0));
  EXPECT_FALSE(IndexedSampleValue(2, 0));
  EXPECT_FALSE(IndexedSampleValue(8, 2));
  EXPECT_TRUE(IndexedSampleValue(16, 2));
  EXPECT_TRUE(IndexedSampleValue(uint64_t{1} << 63, 61));
  EXPECT_FALSE(IndexedSampleValue(uint64_t{1} << 63, 62));  // 2^64 would be the modulus
  EXPECT_TRUE(IndexedSampleValue(0, 64));
  // A value indexed at a larger modulus is indexed at every smaller one: two pages sharing a
  // value at the larger of their moduli both file it when it is 0 mod 4 times that modulus.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 10000; ++i) {
    uint64_t v = rng() << (rng() % 16);
    uint32_t m = rng() % 20;
    if (IndexedSampleValue(v, m + 1)) {
      EXPECT_TRUE(IndexedSampleValue(v, m));
    }
  }
}

TEST(CodecTest, LinkExactBytes) {
  EXPECT_EQ(Hex(EncodeLink(5, 1.0)), "0000000000000005" "ffff");
  EXPECT_EQ(Hex(EncodeLink(5, 0.5)), "0000000000000005" "8000");
  DocId other = 0;
  double r = 0;
  DecodeLink(EncodeLink(42, 0.73), &other, &r);
  EXPECT_EQ(other, 42u);
  EXPECT_NEAR(r, 0.73, 1.0 / 65535);  // quantized to 16 bits
}

// Found by store_codec_fuzz: a last_seen difference that overflows first_seen + difference was
// signed overflow (undefined behaviour, a UBSan report). The difference is taken modulo 2^64, so
// that the extreme dates round-trip and any bytes decode to some date.
TEST(CodecTest, LastSeenDifferenceWrapsInsteadOfOverflowing) {
  DocumentRecord d;
  d.rep = 1;
  d.first_seen = INT64_MIN;
  d.last_seen = INT64_MAX;
  StatusOr<DocumentRecord> back = DecodeDocument(EncodeDocument(d));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, d);

  // zigzag(first_seen) = 2^21 - 1 (first_seen -2^20), then the largest negative difference.
  std::string bytes = std::string("\x00\x07\x00\x00\x00", 5);
  AppendVarint(&bytes, ZigZag(-(int64_t{1} << 20)));
  AppendVarint(&bytes, ZigZag(INT64_MIN + 1));
  bytes.append(48, '\0');
  StatusOr<DocumentRecord> wrapped = DecodeDocument(bytes);
  ASSERT_TRUE(wrapped.ok()) << wrapped.status().ToString();
  EXPECT_EQ(wrapped->first_seen, -(int64_t{1} << 20));
  EXPECT_EQ(wrapped->last_seen, INT64_MAX - (int64_t{1} << 20) + 2);  // wrapped around
  EXPECT_EQ(EncodeDocument(*wrapped), bytes);
}

// A record of each kind as the store writes it: a document with a real sketch (the markup page of
// tests/data), a version with a canonical link, a closed sweep.
std::string RealDocumentBytes() {
  std::ifstream in(std::string(SHINGLED_TEST_DATA_DIR) + "/pages/markup.html", std::ios::binary);
  std::stringstream page;
  page << in.rdbuf();
  auto context = dedup::SketchContext::Create(dedup::SketchParams{});
  EXPECT_TRUE(context.ok());
  const dedup::Sketch s = dedup::SketchPage(**context, page.str(), "text/html");
  EXPECT_FALSE(s.minhashes.empty());
  DocumentRecord rec;
  rec.bytes = s.bytes;
  rec.tokens = s.tokens;
  rec.shingles = s.shingles;
  rec.first_seen = 1714564800;
  rec.last_seen = 1717243200;
  rec.identical = s.identical;
  rec.lexical = s.lexical;
  rec.shingle = s.shingle;
  rec.minhashes = s.minhashes;
  rec.features = s.features;
  rec.supershingles = s.supershingles;
  rec.sample = s.sample;
  return EncodeDocument(rec);
}

std::string RealVersionBytes() {
  VersionRecord v;
  v.sweep = 2;
  v.date = 1714564800;
  v.doc = 300;
  v.http_status = 200;
  v.verdict = Verdict::kNearDuplicate;
  v.canonical_link = "https://example.com/canonical";
  return EncodeVersion(v);
}

std::string RealSweepBytes() {
  SweepRecord s;
  s.name = "2024-05";
  s.start = 1714564800;
  s.end = 1717243200;
  s.open = false;
  s.pages = 1000;
  s.new_docs = 700;
  s.unchanged = 100;
  s.duplicate = 100;
  s.near_duplicate = 90;
  s.gone = 10;
  return EncodeSweep(s);
}

// Decodes `bytes` with every decoder of its kind: OK or DataLoss, never anything else; what
// decodes survives Encode then Decode unchanged. Returns whether it decoded. The ASan build
// catches a read outside `bytes` (each call gets a buffer of exactly its size).
bool DecodesOrFailsCleanly(const std::string& kind, const std::string& input) {
  const std::unique_ptr<char[]> copy(new char[input.size()]);
  std::memcpy(copy.get(), input.data(), input.size());
  const std::string_view bytes(copy.get(), input.size());
  if (kind == "document") {
    StatusOr<DocumentRecord> d = DecodeDocument(bytes);
    DocumentRecord into;
    into.minhashes.assign(100, 1);
    const Status into_status = DecodeDocumentInto(bytes, &into);
    dedup::Sketch sketch;
    bool has_sketch = false;
    const Status scoring = DecodeScoringSketch(bytes, &sketch, &has_sketch);
    EXPECT_EQ(into_status.ok(), d.ok());
    EXPECT_EQ(scoring.ok(), d.ok());
    if (!d.ok()) {
      EXPECT_EQ(d.status().code(), StatusCode::kDataLoss);
      EXPECT_EQ(scoring.code(), StatusCode::kDataLoss);
      return false;
    }
    EXPECT_EQ(into, *d);
    StatusOr<DocumentRecord> again = DecodeDocument(EncodeDocument(*d));
    EXPECT_TRUE(again.ok() && *again == *d);
    return true;
  }
  if (kind == "version") {
    StatusOr<VersionRecord> v = DecodeVersion(bytes);
    if (!v.ok()) {
      EXPECT_EQ(v.status().code(), StatusCode::kDataLoss);
      return false;
    }
    StatusOr<VersionRecord> again = DecodeVersion(EncodeVersion(*v));
    EXPECT_TRUE(again.ok() && *again == *v);
    return true;
  }
  StatusOr<SweepRecord> s = DecodeSweep(bytes);
  if (!s.ok()) {
    EXPECT_EQ(s.status().code(), StatusCode::kDataLoss);
    return false;
  }
  StatusOr<SweepRecord> again = DecodeSweep(EncodeSweep(*s));
  EXPECT_TRUE(again.ok() && *again == *s);
  return true;
}

// Every prefix of a real record is refused (each record ends in a count or a flag it needs), and
// every single-byte change of it either decodes or is refused, without crashing.
TEST(CodecTest, EveryTruncationAndByteChangeOfRealRecordsFailsCleanly) {
  const std::pair<std::string, std::string> records[] = {{"document", RealDocumentBytes()},
                                                         {"version", RealVersionBytes()},
                                                         {"sweep", RealSweepBytes()}};
  for (const auto& [kind, bytes] : records) {
    SCOPED_TRACE(kind);
    ASSERT_TRUE(DecodesOrFailsCleanly(kind, bytes));
    for (size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_FALSE(DecodesOrFailsCleanly(kind, bytes.substr(0, n)))
          << "prefix of " << n << " bytes";
    }
    size_t decoded = 0, changes = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
      for (int b = 0; b < 256; ++b) {
        if (static_cast<char>(b) == bytes[i]) continue;
        std::string changed = bytes;
        changed[i] = static_cast<char>(b);
        decoded += DecodesOrFailsCleanly(kind, changed);
        ++changes;
      }
    }
    // Most changes hit a value or a fingerprint and still decode; those hitting a count or a
    // flag are refused. Both happen.
    EXPECT_GT(decoded, 0u);
    EXPECT_LT(decoded, changes);
  }
}

}  // namespace
}  // namespace shingled::store::internal
