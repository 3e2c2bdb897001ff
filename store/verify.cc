// The verification samples (format 10; FORMAT.md, "Verification samples").
#include "store/internal/verify.h"

#include <cstring>

#include "dedup/estimate.h"
#include "store/internal/codec.h"
#include "store/internal/lmdb.h"

namespace shingled::store::internal {
namespace {

void AppendLE32(std::string* out, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(b, 4);
}

uint32_t GetLE32(const char* in) {
  return static_cast<uint32_t>(static_cast<unsigned char>(in[0])) |
         static_cast<uint32_t>(static_cast<unsigned char>(in[1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(in[2])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(in[3])) << 24;
}

Status DecodeSample(std::string_view bytes, std::vector<uint32_t>* out) {
  if (bytes.size() % 4 != 0) {
    return DataLossError("verify_samples record of " + std::to_string(bytes.size()) +
                         " bytes is not a multiple of 4");
  }
  out->resize(bytes.size() / 4);
  for (size_t i = 0; i < out->size(); ++i) (*out)[i] = GetLE32(bytes.data() + 4 * i);
  return OkStatus();
}

}  // namespace

Status UpgradeVerifySamplesToFormat10(TxnOps& ops, const dedup::SketchParams& params) {
  std::string v;
  AppendLE64(&v, static_cast<uint64_t>(params.verify_sample_size));
  return ops.Put(ops.dbis().meta, kVerifySampleSizeKey, v, 0, "meta");
}

Status PutVerifySample(TxnOps& ops, DocId doc, std::span<const uint32_t> sample) {
  if (sample.empty()) return OkStatus();
  std::string value;
  value.reserve(4 * sample.size());
  for (uint32_t x : sample) AppendLE32(&value, x);
  return ops.Put(ops.dbis().verify_samples, Key64(doc).view(), value, MDB_APPEND, "verify_samples");
}

Status ReadVerifySample(TxnOps& ops, DocId doc, std::vector<uint32_t>* out, bool* known) {
  out->clear();
  *known = false;
  std::string_view bytes;
  Status s = ops.Get(ops.dbis().verify_samples, Key64(doc).view(), &bytes,
                     "verify_samples of document " + std::to_string(doc));
  if (s.code() == StatusCode::kNotFound) return OkStatus();
  SHINGLED_RETURN_IF_ERROR(s);
  Status decoded = DecodeSample(bytes, out);
  if (!decoded.ok()) {
    return DataLossError("document " + std::to_string(doc) + ": " + std::string(decoded.message()));
  }
  *known = true;
  return OkStatus();
}

PairEstimate EstimatePair(const dedup::Sketch& page, const dedup::Sketch& candidate,
                          std::span<const uint32_t> candidate_sample, bool candidate_known,
                          size_t k) {
  PairEstimate out;
  if (k > 0 && candidate_known && !page.verify_sample.empty() && !candidate_sample.empty()) {
    out.estimate = dedup::ResemblanceFromVerifySample(page.verify_sample, candidate_sample, k);
    out.source = out.estimate.exact ? ResemblanceSource::kVerifySampleExact
                                    : ResemblanceSource::kVerifySample;
    return out;
  }
  // A document stored before format 10 (or with the sample off): the minhashes, t values of an
  // unknown union (its size taken as infinite: no finite-population correction).
  out.estimate.resemblance = dedup::ResemblanceFromMinhashes(page, candidate);
  out.estimate.sampled = page.minhashes.size();
  out.estimate.exact = false;
  out.estimate.union_size = 1e18;
  out.source = ResemblanceSource::kMinhashes;
  return out;
}

Status CheckVerifySamples(TxnOps& ops, const std::function<void(std::string)>& problem) {
  uint64_t k = UINT64_MAX;  // without the meta entry (CheckMeta reports it), no size limit
  std::string_view meta;
  if (Status s = ops.Get(ops.dbis().meta, kVerifySampleSizeKey, &meta, "meta");
      s.ok() && meta.size() == 8) {
    k = GetLE64(meta.data());
  } else if (!s.ok() && s.code() != StatusCode::kNotFound) {
    return s;
  }
  Cursor c;
  if (int rc = c.Open(ops.txn(), ops.dbis().verify_samples); rc != 0)
    return ops.Fail(rc, "verify_samples cursor");
  MDB_val key, val;
  std::vector<uint32_t> sample;
  int rc = mdb_cursor_get(c.get(), &key, &val, MDB_FIRST);
  for (; rc == 0; rc = mdb_cursor_get(c.get(), &key, &val, MDB_NEXT)) {
    if (key.mv_size != 8) {
      problem("verify_samples key of " + std::to_string(key.mv_size) + " bytes, not 8");
      continue;
    }
    const DocId doc = GetBE64(static_cast<const char*>(key.mv_data));
    const std::string name = "verify sample of document " + std::to_string(doc);
    if (Status s = DecodeSample(View(val), &sample); !s.ok()) {
      problem(name + ": " + std::string(s.message()));
      continue;
    }
    if (sample.empty() || sample.size() > k) {
      problem(name + " holds " + std::to_string(sample.size()) + " values, not 1.." +
              std::to_string(k));
    }
    for (size_t i = 1; i < sample.size(); ++i) {
      if (sample[i - 1] >= sample[i]) {
        problem(name + " is not ascending without duplicates");
        break;
      }
    }
    std::string_view record;
    Status s = ops.Get(ops.dbis().documents, Key64(doc).view(), &record, "document");
    if (s.code() == StatusCode::kNotFound) {
      problem(name + " names a missing document");
      continue;
    }
    SHINGLED_RETURN_IF_ERROR(s);
    StatusOr<DocumentRecord> rec = DecodeDocument(record);
    if (rec.ok() && !rec->has_sketch()) problem(name + " names a document without a sketch");
  }
  if (rc != MDB_NOTFOUND) return ops.Fail(rc, "verify_samples");
  return OkStatus();
}

}  // namespace shingled::store::internal
