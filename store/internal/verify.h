// The verification samples (format 10; FORMAT.md, "Verification samples"): writing a
// new document's sample, reading one, the format 9 to 10 upgrade, and Check's part. Private to
// store/; store/verify.cc.
#ifndef SHINGLED_STORE_INTERNAL_VERIFY_H_
#define SHINGLED_STORE_INTERNAL_VERIFY_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "dedup/estimate.h"
#include "dedup/sketch.h"
#include "store/internal/schema.h"
#include "store/types.h"

namespace shingled::store::internal {

// The meta entry of SketchParams::verify_sample_size.
inline constexpr char kVerifySampleSizeKey[] = "param.verify_sample_size";

// The format 9 to 10 step of Store::Open's upgrade chain: `verify_samples` was created empty with
// the other tables (the documents stored so far have no sample: their pairs are judged from the
// minhashes); records the opening process's verify_sample_size.
Status UpgradeVerifySamplesToFormat10(TxnOps& ops, const dedup::SketchParams& params);

// Records a NEW document's sample: its `verify_samples` record. Writes nothing for an empty
// sample (verify_sample_size 0, or a page without shingles). REQUIRES: `doc` is larger than
// every document in `verify_samples` (the writer's next id).
Status PutVerifySample(TxnOps& ops, DocId doc, std::span<const uint32_t> sample);
// A document's sample into `*out` (cleared first); `*known` false when it has none. DataLoss for
// a record of a size that is not a multiple of 4.
Status ReadVerifySample(TxnOps& ops, DocId doc, std::vector<uint32_t>* out, bool* known);

// The writer's and the queries' estimate for one candidate: from the verification samples when
// both have one (`page` non-empty and the candidate's found), else from the minhashes, as a
// VerifyEstimate of 84 values drawn from an unknown union. `k` is verify_sample_size.
struct PairEstimate {
  dedup::VerifyEstimate estimate;
  ResemblanceSource source = ResemblanceSource::kMinhashes;
};
PairEstimate EstimatePair(const dedup::Sketch& page, const dedup::Sketch& candidate,
                          std::span<const uint32_t> candidate_sample, bool candidate_known,
                          size_t k);

// Check's part (FORMAT.md, "Invariants" 12): every `verify_samples` record names a document with
// a sketch, is a multiple of 4 bytes, 1 to verify_sample_size values (meta), ascending without
// duplicates. Calls `problem` for each violation.
Status CheckVerifySamples(TxnOps& ops, const std::function<void(std::string)>& problem);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_VERIFY_H_
