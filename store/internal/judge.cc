#include "store/internal/judge.h"

#include <algorithm>

#include "store/decide.h"
#include "store/internal/candidates.h"
#include "store/internal/verify.h"

namespace shingled::store::internal {
namespace {

// The page's containment candidate `id`'s bytes in common, or null.
const CommonBytes* CommonOf(std::span<const ContainmentCandidate> containment, DocId id) {
  for (const ContainmentCandidate& c : containment) {
    if (c.doc == id) return &c.common;
  }
  return nullptr;
}

bool Reaches(const SimilarDoc& s, double threshold) {
  return std::max({s.resemblance, s.containment_of_query, s.containment_in_query}) >= threshold;
}

}  // namespace

void RankPageCandidates(std::vector<std::pair<DocId, uint32_t>>* hits,
                        std::span<const ContainmentCandidate> containment,
                        const dedup::ModSample& sample, size_t max_candidates,
                        std::vector<DocId>* out, bool* truncated, uint64_t* left_out,
                        uint64_t* below_floor) {
  if (!containment.empty()) {
    std::erase_if(*hits,
                  [&](const auto& hit) { return CommonOf(containment, hit.first) != nullptr; });
  }
  out->clear();
  RankCandidates(hits, max_candidates - std::min(containment.size(), max_candidates), out,
                 truncated, left_out, SampleOnlyFloor(sample), below_floor);
  for (const ContainmentCandidate& c : containment) out->push_back(c.doc);
}

StatusOr<bool> JudgePageCandidates(const dedup::Sketch& page, std::span<const DocId> candidates,
                                   std::span<const ContainmentCandidate> containment,
                                   const StoreOptions& options, const dedup::SketchParams& params,
                                   PageCandidates& writer, PageResult* result) {
  const bool uses_verify = UsesVerifySample(page, params);
  bool joined = false;
  for (DocId id : candidates) {
    if (joined && result->matches.size() >= options.max_matches) {
      StatusOr<bool> in = writer.InPagesCluster(id);
      if (!in.ok()) return in.status();
      if (*in) {
        ++result->candidates_in_cluster;
        continue;
      }
    }
    const dedup::Sketch* compared = nullptr;
    const dedup::Sketch* candidate = nullptr;
    StatusOr<bool> read = writer.Read(id, &compared, &candidate);
    if (!read.ok()) return read.status();
    if (!*read) continue;
    CandidateScreen screen;
    std::span<const uint32_t> verify;
    bool known = false;
    if (candidate != nullptr) {
      screen = ScreenCandidate(*compared, *candidate, options, params);
      if (screen.worth_judging && uses_verify) {
        SHINGLED_RETURN_IF_ERROR(writer.ReadVerifySample(id, &verify, &known));
      }
    }
    const CandidateDecision d = JudgeCandidate(id, *compared, candidate, screen, verify, known,
                                               CommonOf(containment, id), options, params);
    if (!d.match) continue;
    if (d.link) SHINGLED_RETURN_IF_ERROR(writer.Link(id, d.match->resemblance));
    if (d.joins) {
      SHINGLED_RETURN_IF_ERROR(writer.Join(id));
      joined = true;
    }
    result->matches.push_back(*d.match);
  }
  return joined;
}

StatusOr<std::vector<SimilarDoc>> ScoreQueryCandidates(
    std::span<const DocId> candidates, std::span<const ContainmentCandidate> containment,
    const QueryOptions& query, const dedup::SketchParams& params, CandidateRecords& records) {
  std::vector<SimilarDoc> out;
  const size_t k = static_cast<size_t>(params.verify_sample_size);
  for (DocId id : candidates) {
    const dedup::Sketch* q = nullptr;
    const dedup::Sketch* other = nullptr;
    StatusOr<bool> read = records.Read(id, &q, &other);
    if (!read.ok()) return read.status();
    if (!*read) continue;
    SimilarDoc s;
    s.doc = id;
    const CommonBytes* common = CommonOf(containment, id);
    if (common != nullptr && ContainmentRelation(*common)) {
      // Estimated from its bytes in common.
      s.resemblance = other != nullptr ? dedup::ResemblanceFromMinhashes(*q, *other) : 0;
      s.containment_of_query = common->share_a;
      s.containment_in_query = common->share_b;
      s.containment_from = ContainmentSource::kChunks;
      s.features_in_common = other != nullptr ? dedup::FeaturesInCommon(*q, *other) : 0;
      if (Reaches(s, query.threshold)) out.push_back(std::move(s));
      continue;
    }
    if (other == nullptr) continue;
    // The verification estimate when both have a sample, else the minhashes'.
    std::span<const uint32_t> verify;
    bool known = false;
    if (UsesVerifySample(*q, params)) {
      SHINGLED_RETURN_IF_ERROR(records.ReadVerifySample(id, &verify, &known));
    }
    const PairEstimate pair = EstimatePair(*q, *other, verify, known, k);
    s.resemblance = pair.estimate.resemblance;
    s.resemblance_from = pair.source;
    const dedup::Containments c = dedup::ContainmentsFromModSample(q->sample, other->sample);
    s.containment_of_query = c.a_in_b;
    s.containment_in_query = c.b_in_a;
    s.features_in_common = dedup::FeaturesInCommon(*q, *other);
    if (Reaches(s, query.threshold)) out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const SimilarDoc& a, const SimilarDoc& b) {
    if (a.resemblance != b.resemblance) return a.resemblance > b.resemblance;
    const double ca = std::max(a.containment_of_query, a.containment_in_query);
    const double cb = std::max(b.containment_of_query, b.containment_in_query);
    if (ca != cb) return ca > cb;
    return a.doc < b.doc;
  });
  if (out.size() > query.limit) out.resize(query.limit);
  return out;
}

}  // namespace shingled::store::internal
