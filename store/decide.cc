#include "store/decide.h"

#include <algorithm>

#include "dedup/estimate.h"
#include "store/internal/containment.h"
#include "store/internal/verify.h"

namespace shingled::store {

CandidateScreen ScreenCandidate(const dedup::Sketch& page, const dedup::Sketch& candidate,
                                const StoreOptions& options, const dedup::SketchParams& params) {
  CandidateScreen screen;
  screen.minhash_resemblance = dedup::ResemblanceFromMinhashes(page, candidate);
  screen.features = dedup::FeaturesInCommon(page, candidate);
  const double read_from = std::min(options.similar_threshold, options.verified_threshold) - 0.2;
  screen.worth_judging =
      screen.features >= params.fungible_threshold || screen.minhash_resemblance >= read_from;
  return screen;
}

bool UsesVerifySample(const dedup::Sketch& page, const dedup::SketchParams& params) {
  return params.verify_sample_size > 0 && !page.verify_sample.empty();
}

namespace {

// A containment match of the chunk graph's candidate, when its bytes in common make one.
CandidateDecision Contained(DocId id, const CommonBytes* containment, double resemblance,
                            int features) {
  CandidateDecision d;
  if (containment == nullptr) return d;
  const std::optional<Relation> relation = internal::ContainmentRelation(*containment);
  if (!relation) return d;
  Match m{id, *relation, resemblance, containment->share_a, containment->share_b, features};
  m.containment_from = ContainmentSource::kChunks;
  d.match = m;
  return d;
}

}  // namespace

CandidateDecision JudgeCandidate(DocId id, const dedup::Sketch& page,
                                 const dedup::Sketch* candidate, const CandidateScreen& screen,
                                 std::span<const uint32_t> verify, bool verify_known,
                                 const CommonBytes* containment, const StoreOptions& options,
                                 const dedup::SketchParams& params) {
  // Postings of the sketch indexes only name representatives; the chunks name every document.
  if (candidate == nullptr) return Contained(id, containment, 0, 0);
  if (!screen.worth_judging) {
    return Contained(id, containment, screen.minhash_resemblance, screen.features);
  }
  const internal::PairEstimate pair = internal::EstimatePair(
      page, *candidate, verify, verify_known, static_cast<size_t>(params.verify_sample_size));
  Match m{id,
          Relation::kSimilar,
          pair.estimate.resemblance,
          dedup::ContainmentFromModSample(page.sample, candidate->sample),
          dedup::ContainmentFromModSample(candidate->sample, page.sample),
          screen.features};
  m.resemblance_from = pair.source;
  m.resemblance_error = dedup::VerifyStandardError(pair.estimate, pair.estimate.resemblance);
  const bool fungible = screen.features >= params.fungible_threshold;
  const bool verified = dedup::Verified(pair.estimate, options.verified_threshold);
  const bool similar = m.resemblance >= options.similar_threshold;
  if (!fungible && !similar && !verified) {
    return Contained(id, containment, m.resemblance, screen.features);
  }
  // The relation that made the match: the first that holds and merges clusters, else the first
  // that holds.
  const uint32_t joining = options.cluster_relations;
  const bool joins_verified = verified && (joining & kClusterVerified);
  const bool joins_fungible = fungible && (joining & kClusterFungible);
  const bool joins_similar = similar && (joining & kClusterSimilar);
  if (joins_verified) {
    m.relation = Relation::kVerified;
  } else if (joins_fungible) {
    m.relation = Relation::kFungible;
  } else if (joins_similar) {
    m.relation = Relation::kSimilar;
  } else {
    m.relation = verified   ? Relation::kVerified
                 : fungible ? Relation::kFungible
                            : Relation::kSimilar;
  }
  CandidateDecision d;
  d.match = m;
  d.joins = joins_verified || joins_fungible || joins_similar;
  // Recorded for the "similar" relation whatever else holds.
  d.link = similar;
  return d;
}

Match IdenticalMatch(DocId doc, const dedup::Sketch& page) {
  return Match{doc, Relation::kIdentical, 1.0, 1.0, 1.0, static_cast<int>(page.features.size())};
}

Match EquivalentMatch(DocId doc, Relation relation, const dedup::Sketch& page,
                      const dedup::Sketch& other) {
  return Match{doc,
               relation,
               dedup::ResemblanceFromMinhashes(page, other),
               dedup::ContainmentFromModSample(page.sample, other.sample),
               dedup::ContainmentFromModSample(other.sample, page.sample),
               dedup::FeaturesInCommon(page, other)};
}

void SortMatches(std::vector<Match>* matches) {
  auto rank = [](Relation r) { return r == Relation::kVerified ? 2.5 : static_cast<double>(r); };
  std::stable_sort(matches->begin(), matches->end(), [&](const Match& a, const Match& b) {
    if (a.relation != b.relation) return rank(a.relation) < rank(b.relation);
    return a.resemblance > b.resemblance;
  });
}

uint64_t LimitMatches(size_t max_matches, std::vector<Match>* matches) {
  auto containment = [](const Match& m) {
    return m.relation == Relation::kContains || m.relation == Relation::kContainedIn;
  };
  size_t kept[2] = {0, 0};
  const size_t before = matches->size();
  std::erase_if(*matches, [&](const Match& m) { return ++kept[containment(m)] > max_matches; });
  return before - matches->size();
}

}  // namespace shingled::store
