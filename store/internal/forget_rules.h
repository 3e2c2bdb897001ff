// What forgetting removes and how a cluster falls apart, written once for every engine (FORMAT.md,
// "Forgetting"). An engine reads the URLs a step looks at its own way, trims them by these rules,
// plans the step (PlanRemovals, which reads through the engine's ForgetReads and writes nothing),
// then writes the plan. A dry run is the plan alone.
#ifndef SHINGLED_STORE_INTERNAL_FORGET_RULES_H_
#define SHINGLED_STORE_INTERNAL_FORGET_RULES_H_

#include <array>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/sketch.h"
#include "store/internal/codec.h"
#include "store/types.h"

namespace shingled::store::internal {

// A takedown or retention pass as recorded (FORMAT.md, "Forgetting": the same bytes on every
// engine), and its decoding (DataLoss naming what is wrong).
std::string EncodeForgetRecord(const ForgetRecord& record);
StatusOr<ForgetRecord> DecodeForgetRecord(uint64_t id, std::string_view bytes);
// The SHA-256 a forget record keeps of its scope's value.
std::array<uint8_t, 32> Sha256(std::string_view bytes);
// A takedown's record: its scope, the SHA-256 of its value, and what `result` counts went.
ForgetRecord TakedownRecord(const ForgetOptions& options, const ForgetResult& result);

// A retention pass between its steps: the counts so far (ForgetRecord's urls, versions,
// documents, clusters_split), kept as 4 varints. JoinRetentionStep adds a step's counts to
// `*pass`; when the step ends the pass (step->pass_done) and the pass removed something, it
// fills `*record` (the pass's forget record, scope retention) and answers true.
std::string EncodePassCounts(const ForgetRecord& pass);
StatusOr<ForgetRecord> DecodePassCounts(std::string_view bytes);  // "" is a pass not begun
bool JoinRetentionStep(const RetentionOptions& options, const RetentionStep& step,
                       ForgetRecord* pass, ForgetRecord* record);
// Whether a pass so far removed something (its counts are worth keeping).
bool PassRemovedSomething(const ForgetRecord& pass);

// A takedown's options checked: the URL prefixes its scope covers (none for one URL: a host is
// "http://H/" and "https://H/", a prefix is itself, by a sweep scope's rules), or InvalidArgument
// for an empty value, a host or prefix that is not one, or max_urls out of 1..1,000,000. An
// engine walks its URLs under these prefixes (on LMDB, a prefix of at most 400 bytes is a prefix
// of the `urls` key: FORMAT.md, "URLs").
StatusOr<std::vector<std::string>> ValidateTakedown(const ForgetOptions& options);
// A retention step's options checked: max_urls in 1..1,000,000, no negative age.
Status ValidateRetention(const RetentionOptions& options);

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
// `compare`, when set, gives two members' sketches as the engine compares them (the later's
// first): the Redis Cluster backend keeps 32 bits of each value and masks a pair to the bits both
// keep.
using ComparePair = std::function<void(dedup::Sketch* later, dedup::Sketch* earlier)>;
std::vector<ClusterPart> RecomputeCluster(ClusterId old_root,
                                          std::span<const RemainingMember> members,
                                          const StoreOptions& options,
                                          const dedup::SketchParams& params,
                                          const ComparePair& compare = nullptr);

// A URL a forgetting step looks at: its versions, oldest first, of which the `cut` oldest go.
// A whole URL goes with every version (cut == versions.size()).
struct UrlTrim {
  UrlId url = 0;
  std::string name;
  std::vector<VersionRecord> versions;
  size_t cut = 0;
  bool whole = false;
};

// The documents of `trim`'s versions that go and that none of its remaining versions shows: the
// URL shows them no more.
std::vector<DocId> DroppedDocuments(const UrlTrim& trim);

// What planning reads, each engine from its own layout, before anything is written. Each read
// takes many ids and answers in their order, so that an engine that pays a round trip a read
// (Redis) pays it once for all.
class ForgetReads {
 public:
  virtual ~ForgetReads() = default;
  // The URLs with a version showing each document.
  virtual StatusOr<std::vector<std::vector<UrlId>>> UrlsShowing(std::span<const DocId> docs) = 0;
  // The document whose sketch each document uses: itself, or its representative.
  virtual StatusOr<std::vector<DocId>> HoldersOf(std::span<const DocId> docs) = 0;
  // The documents that name each holder as their representative.
  virtual StatusOr<std::vector<std::vector<DocId>>> SharersOf(std::span<const DocId> holders) = 0;
  // The id (root) of each document's cluster: itself when it is in none.
  virtual StatusOr<std::vector<ClusterId>> RootsOf(std::span<const DocId> docs) = 0;
  // The members of each cluster, by id ({root} for a document in none).
  virtual StatusOr<std::vector<std::vector<DocId>>> MembersOf(std::span<const ClusterId> roots) = 0;
  // Each document as its cluster's recomputation reads it.
  virtual StatusOr<std::vector<RemainingMember>> ReadMembers(std::span<const DocId> docs) = 0;
  // How two of them are compared (RecomputeCluster): as they are unless the engine says.
  virtual ComparePair PairComparison() const { return nullptr; }
};

// A cluster that loses members: its members before, and the parts the rest fall into.
struct Recomputation {
  ClusterId root = 0;
  std::vector<DocId> members;  // by id, the removed ones included
  std::vector<ClusterPart> parts;
};

// What a step removes beyond its URLs and versions.
struct RemovalPlan {
  // The documents that go, by id: those no URL shows any more, each with its holder's whole
  // group (the holder and its sharers), and only when no member of the group is still shown.
  std::vector<DocId> removed;
  // Documents no URL shows any more that stay, because a member of their group is still shown.
  uint64_t documents_kept = 0;
  std::vector<Recomputation> clusters;  // by root
};

// Plans a step that trims `trims` (one entry per URL).
StatusOr<RemovalPlan> PlanRemovals(std::span<const UrlTrim> trims, ForgetReads& reads,
                                   const StoreOptions& options, const dedup::SketchParams& params);

// A step's answer: the URLs and versions of `trims`, the first `list_limit` whole URLs' names,
// and the plan's documents and clusters. Leaves `more` and `record` as they are.
void CountPlan(std::span<const UrlTrim> trims, const RemovalPlan& plan, size_t list_limit,
               ForgetResult* result);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_FORGET_RULES_H_
