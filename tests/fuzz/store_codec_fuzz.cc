// Fuzzes the decoders of the store's records (store/internal/codec.h) on arbitrary bytes, as a
// damaged or hostile store file would hand them back. Besides crashes, sanitizer reports, hangs
// and allocations beyond the RSS limit, it aborts when
// - a decoded record does not survive Encode then Decode unchanged;
// - a decode holds more list or string bytes than the input had (a length field trusted);
// - DecodeDocumentInto into a record full of other data, or DecodeScoringSketch, disagrees with
//   DecodeDocument;
// - a varint, a link or a posting does not encode back to what it was read from.
//
//   build-fuzz/tests/fuzz/store_codec_fuzz -max_total_time=600 -rss_limit_mb=2048
//       tests/fuzz/corpus/store_codec
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "store/internal/codec.h"

namespace {

using namespace shingled::store::internal;
using shingled::store::DocId;

void Check(bool ok) {
  if (!ok) abort();
}

// A record holding data unlike any input's, so that a decode into it that leaves something
// behind shows.
DocumentRecord Filled() {
  DocumentRecord d;
  d.bytes = d.tokens = d.shingles = 99;
  d.first_seen = -5;
  d.last_seen = 77;
  d.identical = {1, 2};
  d.minhashes.assign(200, 0xabcdef);
  d.features.assign(6, 3);
  d.supershingles.assign(20, 4);
  d.sample.log2_modulus = 9;
  d.sample.values.assign(300, 5);
  return d;
}

void FuzzDocument(std::string_view in) {
  shingled::StatusOr<DocumentRecord> doc = DecodeDocument(in);
  DocumentRecord reused = Filled();
  const shingled::Status into = DecodeDocumentInto(in, &reused);
  Check(into.ok() == doc.ok());
  shingled::dedup::Sketch sketch;
  sketch.minhashes.assign(50, 1);
  sketch.supershingles.assign(5, 1);
  sketch.min_sample.assign(5, 1);
  bool has_sketch = false;
  const shingled::Status scoring = DecodeScoringSketch(in, &sketch, &has_sketch);
  Check(scoring.ok() == doc.ok());
  if (!doc.ok()) {
    Check(doc.status().code() == shingled::StatusCode::kDataLoss);
    Check(scoring.code() == shingled::StatusCode::kDataLoss);
    return;
  }
  Check(reused == *doc);
  const size_t values = doc->minhashes.size() + doc->features.size() + doc->supershingles.size() +
                        doc->sample.values.size();
  Check(values <= in.size() / 8);
  Check(doc->has_sketch() || values == 0);

  shingled::dedup::Sketch want = SketchOf(*doc);
  want.supershingles.clear();
  Check(has_sketch == doc->has_sketch());
  Check(sketch == want);

  const std::string again = EncodeDocument(*doc);
  shingled::StatusOr<DocumentRecord> back = DecodeDocument(again);
  Check(back.ok() && *back == *doc);
}

void FuzzVersion(std::string_view in) {
  shingled::StatusOr<VersionRecord> v = DecodeVersion(in);
  if (!v.ok()) {
    Check(v.status().code() == shingled::StatusCode::kDataLoss);
    return;
  }
  Check(v->canonical_link.size() + v->redirect_target.size() <= in.size());
  const int verdict = static_cast<int>(v->verdict);
  Check(verdict >= 1 && verdict <= 7);
  shingled::StatusOr<VersionRecord> back = DecodeVersion(EncodeVersion(*v));
  Check(back.ok() && *back == *v);
}

void FuzzSweep(std::string_view in) {
  shingled::StatusOr<SweepRecord> s = DecodeSweep(in);
  if (!s.ok()) {
    Check(s.status().code() == shingled::StatusCode::kDataLoss);
    return;
  }
  Check(s->name.size() <= in.size());
  shingled::StatusOr<SweepRecord> back = DecodeSweep(EncodeSweep(*s));
  Check(back.ok() && *back == *s);
}

void FuzzVarints(std::string_view in) {
  std::string_view rest = in;
  uint64_t v = 0;
  while (!rest.empty()) {
    const size_t before = rest.size();
    if (!ReadVarint(&rest, &v)) break;
    Check(rest.size() < before && before - rest.size() <= 10);
    std::string encoded;
    AppendVarint(&encoded, v);
    std::string_view again = encoded;
    uint64_t w = 0;
    Check(ReadVarint(&again, &w) && w == v && again.empty());
    Check(UnZigZag(ZigZag(static_cast<int64_t>(v))) == static_cast<int64_t>(v));
  }
}

// The fixed-size entries: a `links` posting, and a 3-byte posting key then a 12-byte posting.
// Their readers require the size, which LMDB's DUPFIXED databases guarantee; here the input's
// first bytes are taken at that size.
void FuzzFixed(std::string_view in) {
  if (in.size() >= kLinkSize) {
    DocId other = 0;
    double resemblance = -1;
    DecodeLink(in.substr(0, kLinkSize), &other, &resemblance);
    Check(resemblance >= 0 && resemblance <= 1);
    Check(EncodeLink(other, resemblance) == in.substr(0, kLinkSize));
  }
  if (in.size() >= kPostingKeySize + kPostingSize) {
    const std::string_view key = in.substr(0, kPostingKeySize);
    const std::string_view entry = in.substr(kPostingKeySize, kPostingSize);
    const uint64_t value = PostingValue(key, entry);
    const DocId doc = PostingDoc(entry);
    Check(doc <= kMaxDocId);
    // The store writes a bucket of 20 bits and 44 low bits in 6 bytes: the top 4 bits of the
    // key and of the entry are 0. Other bytes read as some value, but not one that encodes back.
    if (static_cast<uint8_t>(key[0]) < 0x10 && static_cast<uint8_t>(entry[0]) < 0x10) {
      Check(Posting(value, doc).view() == entry);
      Check(PostingKey(value).view() == key);
    }
    // A stored modulus is one byte; indexed at a modulus means indexed at every smaller one.
    const uint32_t modulus = static_cast<uint8_t>(in[0]);
    if (IndexedSampleValue(value, modulus + 1)) Check(IndexedSampleValue(value, modulus));
  }
  const std::string url_key = UrlKey(in);
  if (in.size() <= kMaxWholeUrlKey) {
    Check(url_key == in);
  } else {
    Check(url_key.size() == kMaxWholeUrlKey && url_key.compare(0, 471, in.substr(0, 471)) == 0 &&
          static_cast<uint8_t>(url_key[471]) == 0xff &&
          GetBE64(url_key.data() + 472) == Fnv1a64(in));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  FuzzDocument(in);
  FuzzVersion(in);
  FuzzSweep(in);
  FuzzVarints(in);
  FuzzFixed(in);
  return 0;
}
