// What forgetting removes and how a cluster falls apart, written once for every engine (FORMAT.md,
// "Forgetting"). An engine reads a URL's versions or a cluster's members its own way, asks these
// functions, then writes the removals; they read and write nothing.
#ifndef SHINGLED_STORE_INTERNAL_FORGET_RULES_H_
#define SHINGLED_STORE_INTERNAL_FORGET_RULES_H_

#include <cstddef>
#include <span>
#include <vector>

#include "dedup/sketch.h"
#include "store/internal/codec.h"
#include "store/types.h"

namespace shingled::store::internal {

// Retention's rule for one URL, its versions oldest first: the URL goes with every version when
// its last version is not live and older than max_gone_age (when set); else the versions dated
// before now - max_version_age (when set) go, but never the last one, nor a live version that a
// failed attempt kept after it names (FORMAT.md, invariant 7).
struct RetentionCut {
  bool whole_url = false;
  size_t versions = 0;  // the oldest versions that go (all of them when whole_url)
};
RetentionCut RetentionCutOf(std::span<const VersionRecord> versions, const RetentionOptions& o);

// A member of a cluster that lost members, as its recomputation reads it: its sketch holder
// (itself, or its representative), and, when it is its own holder, its sketch and verification
// sample.
struct RemainingMember {
  DocId doc = 0;
  DocId holder = 0;
  dedup::Sketch sketch;  // the holder's own only
  std::vector<uint32_t> verify;
  bool verify_known = false;
};

// The parts of a cluster recomputed from the members that remain (sorted by doc): members of one
// group are joined when the exact levels form clusters, and every pair of sketch holders is
// judged again as the writer judges a page (the later) against a candidate (the earlier),
// joined when the relations that form clusters say so. Each part, in order of its smallest
// member, has its members sorted; the part holding `old_root` keeps it as its id, every other
// takes its smallest member. Parts of one member are listed too (they are no cluster).
struct ClusterPart {
  ClusterId id = 0;
  std::vector<DocId> docs;
};
std::vector<ClusterPart> RecomputeCluster(ClusterId old_root,
                                          std::span<const RemainingMember> members,
                                          const StoreOptions& options,
                                          const dedup::SketchParams& params);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_FORGET_RULES_H_
