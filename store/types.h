// The store's vocabulary: ids, options, what a page brings in and what the store answers.
//
// Plain value types: copy them freely; none is synchronized. The bytes these types are persisted
// as are described in store/FORMAT.md.
#ifndef SHINGLED_STORE_TYPES_H_
#define SHINGLED_STORE_TYPES_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/sketch.h"

namespace shingled::store {

// Ids are allocated from 1 upwards and never reused; 0 means "none".
using DocId = uint64_t;
using UrlId = uint64_t;
using SweepId = uint32_t;
// A cluster's id is the document id of its root (FORMAT.md, "Clusters"): a singleton's id is its
// document's id; joining a cluster keeps its id; a merge keeps the larger cluster's id.
using ClusterId = uint64_t;

// Which relations put two documents in the same cluster (a bit set).
enum ClusterRelation : uint32_t {
  kClusterExact = 1u << 0,     // identical, lexically or shingle equivalent
  kClusterFungible = 1u << 1,  // >= r shared features (Broder 2005)
  kClusterSimilar = 1u << 2,   // resemblance estimate >= similar_threshold (Broder et al. 1997)
  // The verification sample's estimate reaches verified_threshold (dedup/estimate.h,
  // Verified): the second stage of the decision, after any candidate search.
  kClusterVerified = 1u << 3,
};

// Per-process options of a Store. None of them is recorded in the store: the store keeps every
// posting, so the search settings can change from one run to the next.
struct StoreOptions {
  // --- behaviour ---

  // Resemblance (estimated from the minhashes) from which a super-shingle or sample candidate is
  // recorded as "similar". Broder et al. 1997 clustered at 0.5. Lower values link more unrelated
  // pages (the estimate's standard error at t = 84 is about 0.055 at 0.5). Range (0, 1].
  double similar_threshold = 0.5;
  // A MOD sample value found in more than this many documents is machine-made boilerplate and is
  // not used for candidate search (it is still stored, so the limit can change). Only the indexed
  // quarter of each sample is counted (FORMAT.md, "Posting lists"). Larger limits find more
  // candidates through common text but cost more lookups per page. Range >= 1.
  uint64_t common_value_limit = 1000;
  // Relations that merge clusters (ClusterRelation bits). Exact and verified by default (issue
  // 34); kClusterFungible is paper 004's 2-of-6 filter (accepts J = 0.9 with probability 0.42);
  // adding kClusterSimilar makes Broder et al. 1997's looser 50% clusters, which chain more.
  uint32_t cluster_relations = kClusterExact | kClusterVerified;
  // The resemblance from which a candidate is "verified": accepted when the
  // verification sample's estimate reaches it less 2 standard errors (dedup::Verified): pairs at
  // the threshold are accepted ~97.7% of the time, at threshold - 0.1 ~0.6% or less (k = 256).
  // Range (0, 1].
  double verified_threshold = 0.9;
  // At most this many candidates are scored per page (most shared index entries first); the
  // result says when some were left out. Bounds the work per page when a page has thousands of
  // near-copies. Range >= 1.
  uint32_t max_candidates = 500;
  // At most this many matches are listed per page (the strongest, SortMatches' order), and as
  // many containment matches (`contains`, `contained_in`), and only they get bytes in common; PageResult::matches_left_out counts the others. Once a page has
  // this many matches and is in a cluster, the writer does not score candidates already in that
  // cluster (PageResult::candidates_in_cluster): they cannot change its verdict or its cluster.
  // So a page's work stays the same whether it has 5 near-copies or 5,000. Larger lists more of
  // a big family, at the cost of bytes in common (chunk and template reads) per match listed.
  // Range >= 1.
  uint32_t max_matches = 20;

  // --- templates (FORMAT.md, "Templates") ---

  // A chunk in more than this many documents is template: left out of bytes in common
  // (CommonBytes::template_bytes). Range 1..1,000,000.
  uint64_t template_max_docs = 100;
  // A chunk in more than this share of one host's pages (the host of either document compared)
  // is template, once the host has at least template_min_host_pages URLs. Range (0, 1].
  double template_host_share = 0.1;
  uint64_t template_min_host_pages = 30;  // range 1..1,000,000

  // --- performance ---

  // Size of the memory map when the store is created, in bytes. It grows by doubling when full.
  uint64_t initial_map_size = uint64_t{64} << 20;
  // The map never grows beyond this; a batch that does not fit fails with ResourceExhausted.
  // Most deployments should leave this alone.
  uint64_t max_map_size = uint64_t{1} << 40;
  // false: a full map fails the batch instead of growing (tests of the full-map path).
  bool grow_map = true;
  // false: commits are not fsynced (MDB_NOSYNC). Only for throw-away stores (tests, bulk
  // experiments): a crash may then lose or corrupt committed batches.
  bool durable = true;
  // true: the posting inserts of a commit go to the write buffer, and each commit puts one
  // sixteenth of it into the B-trees (FORMAT.md, "The write buffer"); false: every commit puts
  // every posting (tests that damage the posting indexes behind the store's back).
  bool write_buffer = true;
  // true: the writer keeps in memory a filter of the keys in the posting and fingerprint
  // B-trees and skips the reads of keys it says are absent (FORMAT.md, "The key filter"):
  // 8 to 12 bits per key, ~84 MB at 1M documents. false: every read goes to the B-trees.
  bool key_filter = true;
  // LMDB reader slots: the most concurrent read transactions. Range 1..4096.
  unsigned max_readers = 126;
  // false: a directory without a store (no data.mdb) is NotFound rather than a new empty store
  // (the commands that only read or check a store).
  bool create = true;
};

// Verdicts, with their persisted values (FORMAT.md, "Version record").
enum class Verdict : uint8_t {
  kNew = 1,            // content not seen before and near nothing that forms a cluster
  kUnchanged = 2,      // same content as the URL's last version: a version, not a document
  kDuplicate = 3,      // identical, lexically or shingle equivalent to a stored document
  kNearDuplicate = 4,  // joined an existing cluster through a near relation
  kGone = 5,           // a dead URL: 404/410, or not seen in a sweep that was closed
  // A fetch that brought no content (5xx, 429, another non-content status, or no answer at all:
  // status 0): an attempt, not a version of the page. Its doc is the URL's last document when
  // its last version was live (that content stays live), else 0 (format 8).
  kFailed = 6,
  // A 3xx (301, 302, 303, 307, 308): the version records where the URL points (its redirect
  // target) and no document; the URL is not live (format 8).
  kRedirect = 7,
};
// "new", "unchanged", "duplicate", "near_duplicate", "gone", "failed", "redirect".
std::string_view VerdictName(Verdict verdict);

// What an HTTP status means for a page, the same on every road in (the hook, WARC, the crawler).
enum class StatusClass {
  kContent,   // 2xx: the body is the page
  kDead,      // 404, 410: the URL is gone
  kRedirect,  // 301, 302, 303, 307, 308: the URL points elsewhere
  kFailed,    // anything else (1xx, other 3xx and 4xx, 5xx, 429; 0 = no answer): an attempt
};
// Inline: the API's request parsing uses it without the store.
inline constexpr StatusClass ClassifyHttpStatus(int http_status) {
  if (http_status >= 200 && http_status < 300) return StatusClass::kContent;
  switch (http_status) {
    case 404:
    case 410:
      return StatusClass::kDead;
    case 301:
    case 302:
    case 303:
    case 307:
    case 308:
      return StatusClass::kRedirect;
    default:
      return StatusClass::kFailed;
  }
}

// How a matched document relates to the page.
// KVerified, the second stage's relation, is last so that the values of the others
// stay; matches list it after the exact levels (Relation order below is not the enum's).
// kContains / kContainedIn: the page holds the document's text / the document holds
// the page's (bytes in common through content-defined chunks, docs/METHOD.md "Containment").
enum class Relation : uint8_t {
  kIdentical,
  kLexical,
  kShingle,
  kFungible,
  kSimilar,
  kVerified,
  kContains,
  kContainedIn
};
std::string_view RelationName(Relation relation);

// One already-sketched page observation.
struct PageInput {
  std::string url;
  SweepId sweep = 0;  // REQUIRES: an open sweep (Store::OpenSweep)
  int64_t date = 0;   // Unix seconds, UTC
  // HTTP status, classified by ClassifyHttpStatus: 2xx is content; 404 and 410 record a dead
  // version without a document; a redirect records `redirect_target` without a document; any
  // other status (0: no answer) records a failed attempt that keeps the URL's last document. The
  // sketch is ignored but for content.
  int http_status = 200;
  std::string canonical_link;  // rel=canonical, or empty
  // A redirect's target (an absolute, normalized URL), or empty when it is not known. Only
  // recorded with a redirect status; InvalidArgument with any other.
  std::string redirect_target;
  dedup::Sketch sketch;
  // A revisit (a WARC `revisit` record): the crawler saw the same content again and did not keep
  // it. The version points at the last document of `revisit_of` (the URL the revisit refers to;
  // empty means `url` itself) and `sketch` is ignored. The verdict is "unchanged" when that
  // document is `url`'s last document (a revisit of the same URL), "duplicate" otherwise, as
  // Apply would answer for the same bytes. A revisit is a distinct observation: it is a replay
  // (nothing written) only when the URL has a version of that document at the same `date` in the
  // same sweep, so a page and its revisit at a later date in one sweep (one WARC file) make two
  // versions. The page fails with NotFound when `revisit_of` has no document in the store.
  // Ignored unless http_status is 2xx (content).
  bool revisit = false;
  std::string revisit_of;
};

// --- Bytes in common (paper 003; store/chunks.cc) ---
//
// What two documents share, from their content-defined chunks (dedup/chunker.h, FORMAT.md,
// "Chunks"): the chunks of A that also occur in B, each occurrence matched at most once, so the
// sum of their lengths is a lower bound of the text they share (a shared run loses the chunks that
// straddle its ends: about one average chunk at each end).

// The relation of two documents by their shares (share = shared bytes / the document's length).
enum class CommonRelation : uint8_t {
  kNone,           // no chunk in common
  kNearIdentical,  // both shares >= kCommonHighShare
  kAContainsB,     // B's share >= kCommonHighShare, A's below: B sits inside A
  kBContainsA,     // A's share >= kCommonHighShare, B's below
  kOverlap,        // some shared text, neither share high
};
std::string_view CommonRelationName(CommonRelation relation);
// A share from which a document counts as held by the other. Each edit costs the lower bound
// about one average chunk (~1 KB at the default TTTD parameters) on top of the edit itself, and a
// shared run about half a chunk at each end: 0.75 keeps a 10 KB page with two small edits
// near-identical to its original, and a 4 KB article quoted whole in a long page "contained".
inline constexpr double kCommonHighShare = 0.75;
// The shared spans an answer lists at most (CommonBytes::spans); the rest are counted.
inline constexpr size_t kMaxCommonSpans = 1000;

// One shared chunk: where it is in A and in B (byte offsets into the chunked text), its length.
struct CommonSpan {
  uint64_t offset_a = 0, offset_b = 0;
  uint32_t length = 0;
  friend bool operator==(const CommonSpan&, const CommonSpan&) = default;
};

struct CommonBytes {
  // False when either document has no chunks (stored before format 9, stored with chunking off,
  // or empty): "chunks: unknown", not 0. The rest is then 0, except the lengths known.
  bool known = false;
  bool a_known = false, b_known = false;
  uint64_t length_a = 0, length_b = 0;  // the chunked text: the sum of the chunk lengths
  uint64_t shared_bytes = 0;            // <= min(length_a, length_b)
  double share_a = 0, share_b = 0;      // shared_bytes / length_a, / length_b
  CommonRelation relation = CommonRelation::kNone;
  uint64_t shared_chunks = 0;     // chunk occurrences matched (spans listed or not)
  std::vector<CommonSpan> spans;  // in A's order, at most the limit asked for
  bool spans_truncated = false;   // shared_chunks > spans.size()
  // Template chunks (FORMAT.md, "Templates") are left out of everything above but length_a and
  // length_b: the bytes of the shared chunks left out (shared_bytes does not count them), and
  // the template bytes of each document (the shares are of length minus these).
  uint64_t template_bytes = 0;
  uint64_t template_chunks = 0;  // shared chunk occurrences left out
  uint64_t template_a = 0, template_b = 0;
};

// Bytes in common of two chunk lists (each in order, tiling its text). Both empty lists count as
// unknown.
CommonBytes BytesInCommonOf(std::span<const dedup::Chunk> a, std::span<const dedup::Chunk> b,
                            size_t max_spans = kMaxCommonSpans);
// The same, leaving out the chunks whose hash is in `templates` (sorted, distinct): they count
// in template_* instead, and the shares are of each document's text without them.
CommonBytes BytesInCommonOf(std::span<const dedup::Chunk> a, std::span<const dedup::Chunk> b,
                            size_t max_spans, std::span<const uint64_t> templates);

// --- templates (store/templates.cc) ---

// An operator's mark (Store::MarkTemplate): the chunks shared by at least two members of a
// cluster when it was marked, template from then on.
struct TemplateMark {
  ClusterId cluster = 0;             // the cluster's id when marked (its root document)
  uint64_t members = 0;              // its size then
  std::vector<dedup::Chunk> chunks;  // by hash; each with its length
  uint64_t chunk_bytes = 0;          // the sum of their lengths
};
// One chunk of a document and why it is template or not (Store::ChunkTemplates).
struct ChunkTemplate {
  dedup::Chunk chunk;
  bool is_template = false;
  bool marked = false;
  uint64_t documents = 0;  // its documents, counted up to template_max_docs + 1
  bool over_documents = false;
  uint64_t host_pages = 0;      // URLs on the document's host (counted up to a cap)
  uint64_t host_documents = 0;  // its documents on that host (when the share was looked at)
  bool over_host_share = false;
};

// Where a match's resemblance comes from.
enum class ResemblanceSource : uint8_t {
  kMinhashes,          // the 84 minhashes (a document stored before format 10 has no sample)
  kVerifySample,       // the verification samples (bottom-k): standard error in the answer
  kVerifySampleExact,  // both samples are whole shingle sets: exact
};
// "minhashes", "verify_sample", "verify_sample_exact".
std::string_view ResemblanceSourceName(ResemblanceSource source);
// Where a match's containments come from. The MOD samples are taken at the larger
// page's modulus, which leaves a page much shorter than the other almost no values: a containment
// candidate (found through the chunks it shares) is estimated from its bytes in common instead.
enum class ContainmentSource : uint8_t {
  kModSample,  // the MOD samples
  kChunks,     // the shares of each text in common, template chunks left out (CommonBytes)
};
// "mod_sample", "chunks".
std::string_view ContainmentSourceName(ContainmentSource source);

struct Match {
  DocId doc = 0;
  // The relation that made the match: the first of verified, fungible, similar that holds and
  // merges clusters (StoreOptions::cluster_relations), else the first that holds.
  Relation relation = Relation::kSimilar;
  double resemblance = 0;  // the verification estimate when both have a sample, else minhashes'
  double containment_of_page = 0;  // of the page in the document, from the MOD samples
  double containment_in_page = 0;  // of the document in the page
  int features_in_common = 0;
  // What the resemblance was estimated from.
  ResemblanceSource resemblance_from = ResemblanceSource::kMinhashes;
  double resemblance_error = 0;  // the standard error of `resemblance` (dedup::VerifyStandardError)
  ContainmentSource containment_from = ContainmentSource::kModSample;
};

struct PageResult {
  // Not OK for this page only (e.g. unknown sweep, URL too long); the rest of the batch applied.
  Status status;
  Verdict verdict = Verdict::kNew;
  // 0 for a dead version and a redirect; for a failed attempt, the document that stays live
  // (0 if none).
  DocId doc = 0;
  UrlId url = 0;
  ClusterId cluster = 0;        // after this batch's unions; 0 without a document
  std::string redirect_target;  // a redirect's, as recorded
  std::vector<Match> matches;  // strongest first
  // The bytes in common with each match, in the order of `matches` (spans not listed).
  std::vector<CommonBytes> match_common;
  // The URL's previous version's document and the page's resemblance to it (1 when unchanged).
  DocId previous_doc = 0;
  std::optional<double> previous_resemblance;
  // The same (URL, sweep, content) was already stored: nothing was written; verdict is the one
  // recorded then, matches are not recomputed.
  bool replayed = false;
  // More than max_candidates candidates: the weakest were not scored.
  bool candidates_truncated = false;
  uint64_t candidates_left_out = 0;  // how many were not scored
  // Matches found beyond StoreOptions::max_matches, not listed (the weakest).
  uint64_t matches_left_out = 0;
  // Candidates not scored because they were in the page's cluster already once it had
  // max_matches matches (likely more matches, not verified; LMDB store only: the Redis Cluster
  // store scores them). No link is recorded to them.
  uint64_t candidates_in_cluster = 0;
  // Documents that shared nothing with the page but a few of its sample values (fewer than
  // internal::SampleOnlyFloor: pages of the same site through its template's text), not scored.
  // A page of resemblance 0.5 or more is among them with a chance of ~5e-5 (a "similar" match
  // missed); a verified or fungible one shares features and never is.
  uint64_t candidates_below_floor = 0;
  // More documents shared the page's chunks than containment search reads (4 * max_candidates):
  // a document that holds the page, or that the page holds, may have been missed.
  bool containment_truncated = false;
};

// Per-request options of the similarity queries.
struct QueryOptions {
  double threshold = 0.5;  // keep results whose resemblance or either containment reaches it
  size_t limit = 20;
  // An output: when not null, set to how many candidates were found beyond the store's
  // max_candidates and not scored (the lowest ranked: fewest shared values).
  uint64_t* candidates_left_out = nullptr;
};

struct SimilarDoc {
  DocId doc = 0;
  ClusterId cluster = 0;
  double resemblance = 0;  // the verification estimate when both have a sample
  ResemblanceSource resemblance_from = ResemblanceSource::kMinhashes;
  double containment_of_query = 0;  // of the query in the document
  double containment_in_query = 0;  // of the document in the query
  ContainmentSource containment_from = ContainmentSource::kModSample;
  int features_in_common = 0;
  std::string url;  // the most recently seen URL of the document, if any
  CommonBytes common;  // with the query's chunks; spans not listed
};

struct UrlVersion {
  uint32_t seq = 0;
  SweepId sweep = 0;
  int64_t date = 0;
  DocId doc = 0;  // 0: dead
  int http_status = 0;  // 0: gone from a closed sweep, or a failed fetch without an answer
  Verdict verdict = Verdict::kNew;
  std::string canonical_link;
  std::string redirect_target;  // a redirect's target; empty if none or unknown
};

struct DocumentInfo {
  DocId id = 0;
  DocId representative = 0;  // the document whose sketch this one shares; itself if its own
  uint64_t bytes = 0, tokens = 0, shingles = 0;
  int64_t first_seen = 0, last_seen = 0;
  ClusterId cluster = 0;
  // min_sample is empty: the store does not keep it (FORMAT.md, "Document record").
  dedup::Sketch sketch;
};

struct ClusterMember {
  DocId doc = 0;
  int64_t first_seen = 0, last_seen = 0;
  std::vector<std::string> urls;
};

struct ClusterInfo {
  ClusterId id = 0;
  std::vector<ClusterMember> members;  // by document id
};

// --- listings (Store::ListUrls, ListClusters, ClusterPage, ListIdenticalSets) ---

// The state of a URL, from its last version.
enum class UrlStatus : uint8_t {
  kLive,      // a document shown as the URL's content (a content version, or a failed attempt
              // that kept one: FORMAT.md, "Version record")
  kDead,      // 404 or 410 (or an error page a format 7 store kept as content)
  kGone,      // not seen in a sweep that was closed (status 0)
  kRedirect,  // a 3xx redirect
  kFailed,    // a failed attempt that kept no document
};
// "live", "dead", "gone", "redirect", "failed".
std::string_view UrlStatusName(UrlStatus status);
// The inverse of UrlStatusName and VerdictName; nullopt for any other text.
std::optional<UrlStatus> UrlStatusFromName(std::string_view name);
std::optional<Verdict> VerdictFromName(std::string_view name);

// What Store::ListUrls lists. Every filter given must hold.
struct UrlListOptions {
  // URL prefixes ("https://example.com/docs/": the start of an absolute URL, at most 400 bytes,
  // at most 1000 of them); only the `urls` key ranges of these are walked. Empty: every URL.
  std::vector<std::string> prefixes;
  // Not 0: only URLs with a version in this sweep, and the version listed is their last one in it
  // (otherwise their last version).
  SweepId sweep = 0;
  std::optional<UrlStatus> status;  // of the URL's last version
  std::optional<Verdict> verdict;   // of the version listed
  // The cursor: UrlPage::next of the page before (empty: from the first URL).
  std::string after;
  // At most this many URLs per page. Range >= 1.
  size_t limit = 100;
  // The page ends after looking at this many URLs, matched or not, so that a filter that rarely
  // matches holds its read transaction briefly (a long one keeps the map from growing). Range >= 1.
  size_t max_examined = 10000;
};

struct UrlListItem {
  std::string url;
  UrlVersion version;                   // the last version, or the last in UrlListOptions::sweep
  UrlStatus status = UrlStatus::kLive;  // of the last version
  int64_t first_seen = 0;               // the date of the first version
  uint32_t versions = 0;                // how many versions the URL has
};

struct UrlPage {
  // In the order of their `urls` keys (FORMAT.md, "URLs"); on the redis-cluster backend, in URL
  // id order (docs/REDIS.md, "The listings").
  std::vector<UrlListItem> urls;
  // The cursor to pass as UrlListOptions::after for the next page (opaque bytes: the last `urls`
  // key looked at; on the redis-cluster backend the last URL id, in decimal); nullopt when every
  // URL in range was looked at. A page may be short, or empty, and still have a next one
  // (max_examined).
  std::optional<std::string> next;
};

// Where a listing of clusters goes on: after the cluster of this size and id.
struct ClusterCursor {
  uint64_t size = 0;
  ClusterId id = 0;
};

struct ClusterListOptions {
  uint64_t min_size = 2;  // documents; range >= 2 (a singleton is no listed cluster)
  std::optional<ClusterCursor> after;
  size_t limit = 100;      // range >= 1
  size_t sample_urls = 3;  // live URLs named per cluster
};

struct ClusterSummary {
  ClusterId id = 0;
  uint64_t size = 0;       // documents
  uint64_t live_urls = 0;  // URLs whose last version is live with a document of the cluster
  int64_t first_seen = 0;  // the earliest first_seen of its documents
  int64_t last_seen = 0;   // the latest last_seen
  std::vector<std::string> sample_urls;  // some of the live URLs (of the oldest documents)
};

struct ClusterListPage {
  std::vector<ClusterSummary> clusters;  // largest first, then by id
  std::optional<ClusterCursor> next;     // nullopt on the last page
};

// A page of a cluster's documents (Store::ClusterPage).
struct ClusterMembersPage {
  ClusterInfo cluster;        // the members of this page, by document id
  uint64_t size = 0;          // documents in the whole cluster
  std::optional<DocId> next;  // pass as `after` for the next page; nullopt on the last
};

// Where a listing of identical sets goes on: after the set of this many URLs and this
// representative.
struct IdenticalCursor {
  uint64_t urls = 0;
  DocId representative = 0;
};

struct IdenticalSetOptions {
  uint64_t min_urls = 2;  // range >= 2
  std::optional<IdenticalCursor> after;
  size_t limit = 100;    // sets per page; range >= 1
  size_t max_urls = 20;  // URLs named per set (the count is whole)
};

struct IdenticalDocument {
  DocId doc = 0;
  uint64_t bytes = 0;
  uint64_t live_urls = 0;  // live URLs whose last version holds it
};

// Live URLs whose last versions hold the same content: one document, or documents that share a
// representative (lexically or shingle equivalent; FORMAT.md, "Document record").
struct IdenticalSet {
  DocId representative = 0;  // the document whose sketch they share
  uint64_t url_count = 0;
  uint64_t bytes = 0;  // of the set's first document (equivalent documents differ a little)
  std::vector<IdenticalDocument> documents;  // by id
  std::vector<std::string> urls;             // at most IdenticalSetOptions::max_urls
};

struct IdenticalSetPage {
  std::vector<IdenticalSet> sets;  // most URLs first, then by representative
  std::optional<IdenticalCursor> next;
};


// --- Lost and found (Store::Lost, store/lost.cc) ---

// What lost and found says of a URL.
enum class LostStatus : uint8_t {
  kAlive,  // its last version is live: nothing was lost
  kMoved,  // not live, and a successor was found (LostAndFound::best)
  kDead,   // dead, gone, or redirecting nowhere known, with no successor found
  // Not live, never had content to search from (no live version, or only an empty page), and
  // no recorded redirect leads to a live URL: e.g. a URL that only ever failed or answered 404.
  kUnknown,
};
// "alive", "moved", "dead", "unknown".
std::string_view LostStatusName(LostStatus status);

// What makes a URL a successor.
enum class SuccessorEvidence : uint8_t {
  kRedirect,  // the URL asked about recorded a redirect (3xx with a target) that leads here
  kContent,   // a version here resembles or contains the asked URL's last live content
};
// "redirect", "content".
std::string_view SuccessorEvidenceName(SuccessorEvidence evidence);

// A URL where the content of a lost URL lives now.
struct Successor {
  std::string url;
  UrlId url_id = 0;
  DocId doc = 0;          // its live document now
  int64_t last_seen = 0;  // the date of its last version (live)
  SuccessorEvidence evidence = SuccessorEvidence::kContent;
  int redirect_status = 0;    // kRedirect: the 3xx recorded
  int64_t redirect_date = 0;  // kRedirect: when it was recorded
  // The estimates between the asked URL's last live content and the version that matched it
  // (`matched_doc`, dated `matched_date`): a version of this URL, or of the first URL of `via`
  // when the content moved on from there. Resemblance as the `similar` queries estimate it (the
  // verification samples when both have one, else the minhashes); containment of the old
  // content in the matched version, from the bytes in common when both have chunks, else the
  // MOD samples. 0 for a redirect to content that does not resemble it.
  double resemblance = 0;
  double containment = 0;
  DocId matched_doc = 0;
  int64_t matched_date = 0;
  // The resemblance of the asked URL's last live content and this URL's content now (lower than
  // `resemblance` when it was edited after the move).
  double resemblance_now = 0;
  // The URL (the first of `via`, if any) was born, or its content changed, between the asked
  // URL's last live version and its death (or soon after: LostOptions::moved_within), on
  // `born_or_changed`.
  bool born_when_died = false;
  int64_t born_or_changed = 0;
  // The URLs the content passed through on its way here, in order: a redirect chain's hops, or
  // a successor that itself moved on (died, redirected) later. Empty for a direct successor.
  std::vector<std::string> via;
  // One sentence for people, e.g. "redirect (301) recorded 2024-06-01" or "near copy,
  // resemblance 0.72, born 2024-06-01 when the old URL died".
  std::string why;
};

// Per-request bounds and thresholds of lost and found.
struct LostOptions {
  // A content candidate born or changed when the old URL died is a successor when the move rule
  // holds (docs/REPORTS.md, "Moves": the change reports apply the same rule). A content candidate
  // not born or changed when the old URL died (a copy that lived beside it) is a successor only
  // when the rule holds and from this resemblance: "its content lives on there". Such a copy is
  // no move: when it is all that was found, the URL is dead and the copies are its candidates.
  // Range (0, 1].
  double near_copy_resemblance = 0.8;
  // "When the old URL died": from its last live version to its first dead, gone or redirect
  // version, and this many seconds after (a successor the crawler found a sweep later).
  int64_t moved_within = int64_t{31} * 86400;
  // --- bounds: the answer says when one cut the search (LostAndFound::truncated) ---
  // Candidate documents scored per content search (the best-ranked by the `similar` queries'
  // candidate search, and the members of the old document's cluster).
  size_t max_scored = 500;
  // URLs whose versions are read, over the whole query.
  size_t max_urls = 2000;
  // Steps followed from a successor that itself moved on, or along a redirect chain.
  int max_depth = 4;
  // Candidates in the answer besides `best`.
  size_t max_candidates = 10;
};

// Lost and found: where the content of a URL lives now (Store::Lost).
struct LostAndFound {
  std::string url;  // the URL asked about
  LostStatus status = LostStatus::kUnknown;
  // Its last live version: date (0: never live) and document (0: none), and that document's
  // cluster.
  int64_t last_seen_live = 0;
  DocId last_doc = 0;
  ClusterId cluster = 0;
  // The date of its first version after the last live one (dead, gone, redirect, or a failed
  // attempt without content); 0 while alive or when never live.
  int64_t died = 0;
  // The last redirect it recorded after its last live version (any, when never live): target
  // (empty if none or unknown) and status.
  std::string redirect_target;
  int redirect_status = 0;
  // Set when status is kMoved: a redirect, or content born or changed when the URL died.
  std::optional<Successor> best;
  // The other successors, ranked. For a dead URL, the near copies that lived beside it (none
  // born or changed when it died): its content lives on there, but did not move there.
  std::vector<Successor> candidates;
  // A bound of LostOptions cut the search (`truncated_by` names it: "max_scored", "max_urls",
  // "max_depth" or "max_candidates"): a successor may have been missed, or left out.
  bool truncated = false;
  std::string truncated_by;
};

struct SweepInfo {
  SweepId id = 0;
  std::string name;
  int64_t start = 0;
  int64_t end = 0;  // 0 while open
  bool open = true;
  uint64_t pages = 0, new_docs = 0, unchanged = 0, duplicate = 0, near_duplicate = 0, gone = 0;
  // The URL prefixes the sweep covers, sorted: closing it records gone only the URLs that start
  // with one of them (FORMAT.md, "Sweep record"). Empty: the sweep covers nothing, and closing it
  // records nothing gone.
  std::vector<std::string> scope;
};

// What closing a sweep did, or would do (a dry run).
struct SweepClosing {
  SweepInfo sweep;    // after the close (a dry run: as it is, still open)
  uint64_t gone = 0;  // URLs the close recorded (would record) gone
  // The first of them in URL order, at most CloseSweepOptions::list_limit.
  std::vector<std::string> gone_urls;
};

// What reopening a sweep did.
struct SweepReopening {
  SweepInfo sweep;
  uint64_t removed = 0;  // gone versions its close had written, now removed
};

// --- forgetting (store/forget.cc; store/FORMAT.md, "Forgetting") ---

// Which URLs a takedown forgets (Store::Forget).
enum class ForgetScope : uint8_t {
  kUrl = 1,   // one URL, exactly as stored
  kHost = 2,  // the URLs of a host: http://H/... and https://H/... ("example.com:8080" for a port)
  kPrefix = 3,  // the URLs that start with an absolute URL's start (a sweep scope's rules)
  // A pass of retention by date (ApplyRetention records it; Forget refuses it): the value is
  // its rules (RetentionRulesText).
  kRetention = 4,
};
std::string_view ForgetScopeName(ForgetScope scope);  // "url", "host", "prefix", "retention"

struct ForgetOptions {
  ForgetScope scope = ForgetScope::kUrl;
  std::string value;  // the URL, the host or the prefix
  int64_t date = 0;   // when, for the record (Unix seconds)
  // Lists and counts what would go; writes nothing.
  bool dry_run = false;
  // At most this many URLs per call (one write transaction): a call that leaves matching URLs
  // says so (`ForgetResult::more`), and the next call goes on. Range 1..1,000,000.
  size_t max_urls = 10000;
  // The answer lists the first `list_limit` forgotten URLs in URL order (it counts them all).
  size_t list_limit = 0;
};

// What a takedown did (or would do: a dry run).
struct ForgetResult {
  uint64_t urls = 0;      // URLs forgotten, with every version
  uint64_t versions = 0;  // their versions
  // Documents that no remaining URL shows, removed with their postings, chunks, samples, links
  // and place in a cluster.
  uint64_t documents = 0;
  // Documents that no remaining URL shows but that stay, URL-less, because a remaining
  // document shares their sketch (FORMAT.md, "Forgetting").
  uint64_t documents_kept = 0;
  uint64_t clusters_recomputed = 0;  // clusters that lost a member
  uint64_t clusters_split = 0;       // of those, the ones that fell into two or more parts
  std::vector<std::string> listed;   // the first ForgetOptions::list_limit URLs, in URL order
  bool more = false;                 // more URLs match than max_urls: call again
  uint64_t record = 0;               // the forget record's id (0 for a dry run)
};

// Retention (Store::ApplyRetention): what a store keeps as sweeps go by. A rule at 0 keeps all.
struct RetentionOptions {
  int64_t now = 0;  // Unix seconds; the ages count back from it
  // A version dated more than this many seconds before `now` goes, unless it is its URL's last
  // (the URL's present state stays) or the live version a failed attempt after it still names.
  int64_t max_version_age = 0;
  // A URL whose last version is not live (gone, dead, redirected) and dated more than this many
  // seconds before `now` goes, with every version.
  int64_t max_gone_age = 0;
  // URLs looked at per step (one write transaction). Range 1..1,000,000.
  size_t max_urls = 2000;
};

// One step of retention: the URLs after the store's retention cursor, looked at and trimmed.
struct RetentionStep {
  uint64_t urls_examined = 0;
  uint64_t versions = 0;  // versions removed (those of removed URLs included)
  uint64_t urls = 0;      // URLs removed
  uint64_t documents = 0, documents_kept = 0, clusters_split = 0;  // as ForgetResult's
  // The step looked at the last URL: the pass is over, and the next step begins a new one.
  bool pass_done = false;
  // The forget record of the pass this step ended (ForgetRecords), 0 if the pass removed
  // nothing or is not over.
  uint64_t record = 0;
};

// A retention pass's rules as its forget record hashes them:
// "max_version_age=<seconds> max_gone_age=<seconds>".
std::string RetentionRulesText(const RetentionOptions& options);

// A takedown or a retention pass as recorded (Store::ForgetRecords): when, what scope and what
// went, with the SHA-256 of the scope's value instead of the value, so that a takedown can be
// shown done without keeping the forgotten URL. A retention pass's counts are its steps' sums.
struct ForgetRecord {
  uint64_t id = 0;
  int64_t date = 0;
  ForgetScope scope = ForgetScope::kUrl;
  std::array<uint8_t, 32> value_sha256{};
  uint64_t urls = 0, versions = 0, documents = 0, clusters_split = 0;
};

// --- change reports (store/reports.cc; docs/REPORTS.md defines every count) ---

// What a URL did between sweep `from` and sweep `to`, judged from its last version in each
// sweep ("live": a version with content, LiveVersion in FORMAT.md). Each URL with a version in
// either sweep has exactly one kind.
enum class ChangeKind : uint8_t {
  kUnchanged,  // live in both, the same document
  kChanged,    // live in both, another document
  kMoved,      // live in `from`; dead, gone or redirecting in `to`; its content found elsewhere
  kDied,       // live in `from`; dead, gone or redirecting in `to`; its content not found
  kNotSeen,    // live in `from`; no version in `to` (`to` did not cover it, or not yet)
  kBorn,       // live in `to`, not live in `from`, and not the new home of a moved URL
  kMovedIn,    // live in `to`, not live in `from`, and the new home of a moved URL
  kNotLive,    // live in neither (dead, gone, redirecting or failed in both)
};
inline constexpr int kChangeKinds = 8;
// "unchanged", "changed", "moved", "died", "not_seen", "born", "moved_in", "not_live".
std::string_view ChangeKindName(ChangeKind kind);
// The kind named `name`; nullopt for another name.
std::optional<ChangeKind> ChangeKindFromName(std::string_view name);

// The resemblance bands of changed URLs: >= 0.95, [0.8, 0.95), [0.5, 0.8), < 0.5.
inline constexpr int kResemblanceBands = 4;
// "0.95-1", "0.8-0.95", "0.5-0.8", "0-0.5".
std::string_view ResemblanceBandName(int band);
// The band of a resemblance (0 for >= 0.95 ... 3 for < 0.5).
int ResemblanceBand(double resemblance);

struct ChangeCounts {
  uint64_t urls = 0;  // with a version in `from` or in `to`: the sum of the kinds
  uint64_t unchanged = 0, changed = 0, moved = 0, died = 0, not_seen = 0, born = 0, moved_in = 0,
           not_live = 0;
  uint64_t moved_same_host = 0, moved_other_host = 0;  // moved = their sum
  uint64_t moved_by_redirect = 0;                      // of moved, found through a redirect
  uint64_t bands[kResemblanceBands] = {};              // changed, by resemblance band
  uint64_t Of(ChangeKind kind) const;
  void Add(ChangeKind kind, uint64_t n = 1);
  friend bool operator==(const ChangeCounts&, const ChangeCounts&) = default;
};

struct HostChanges {
  std::string host;  // "example.com" or "example.com:8080"; "" for URLs without a host (file:)
  ChangeCounts counts;
};

// The report between two sweeps.
struct ChangeReport {
  SweepInfo from, to;
  ChangeCounts total;
  std::vector<HostChanges> hosts;  // by host name
};

// One row of a list behind a count.
struct ChangeRow {
  ChangeKind kind = ChangeKind::kUnchanged;
  UrlId url_id = 0;
  std::string url;
  DocId from_doc = 0, to_doc = 0;  // the last live document in each sweep; 0 if none
  // changed: between from_doc and to_doc; moved: between from_doc and the new URL's document
  // (1 for the same document); -1 when not measured (a redirect to another document is not).
  double resemblance = -1;
  // moved: where the content went, and why the report says so.
  std::string new_url;
  DocId new_doc = 0;
  double containment = -1;  // moved by content: of the old document in the new one
  std::string evidence;     // moved: "redirect", "same_content", "resemblance", "containment"
  bool same_host = false;   // moved: the new URL is on the old URL's host
};

struct ChangeListOptions {
  ChangeKind kind = ChangeKind::kChanged;
  UrlId after = 0;     // the rows of URL ids after this one (0: from the first)
  size_t limit = 100;  // REQUIRES: >= 1
};

struct ChangeList {
  std::vector<ChangeRow> rows;  // in URL id order
  UrlId next_after = 0;         // pass as `after` for the next page; 0 when this was the last
};

// A histogram bucket over [lower, upper) (upper 0: no upper bound).
struct Bucket {
  std::string label;
  uint64_t lower = 0, upper = 0;
  uint64_t count = 0;
};

// The report over all sweeps, ordered by start (then id).
struct ChangeHistory {
  struct Interval {
    SweepInfo from, to;
    ChangeCounts counts;
  };
  std::vector<Interval> intervals;  // each consecutive pair of sweeps
  // URL lifetimes in days, from the first live version to the first version that ended its
  // last live stretch (dead URLs), or to its last live version (URLs still alive: a lower bound).
  std::vector<Bucket> lifetimes_dead, lifetimes_alive;
  // Content changes per URL: live versions whose document differs from the URL's live version
  // before (URLs with at least one live version).
  std::vector<Bucket> changes_per_url;
  uint64_t urls = 0;        // URLs with a version
  uint64_t never_live = 0;  // URLs with versions but none live
};

// Counts the URLs a report has walked so far (for a progress line); may be null.
struct ReportProgress {
  std::atomic<uint64_t>* urls_walked = nullptr;
};

struct DatabaseStats {
  std::string name;
  uint64_t entries = 0;
  uint64_t bytes = 0;  // pages (branch + leaf + overflow) times the page size
};

struct StoreStats {
  uint64_t documents = 0, urls = 0, versions = 0, clusters = 0;
  // Documents in the largest cluster (1 when no two documents are clustered, 0 in an empty
  // store). Kept in the meta record as clusters merge (clusters only grow), not counted here.
  uint64_t largest_cluster = 0;
  // Postings held in the write buffer, in memory and not in the B-trees (FORMAT.md, "The write
  // buffer"): ~53 per document above its slice's watermark, 16 bytes each.
  uint64_t buffered_postings = 0;
  // Fingerprint entries held in the write buffer (FORMAT.md, "The write buffer of the
  // fingerprint indexes"): 1 to 3 per document above its slice's watermark, 24 bytes each.
  uint64_t buffered_fingerprints = 0;
  // Memory of the writer's key filter (FORMAT.md, "The key filter"), as of its last batch; 0
  // before the first batch or with StoreOptions::key_filter off.
  uint64_t key_filter_bytes = 0;
  uint64_t map_size = 0;
  uint64_t file_bytes = 0;  // pages up to the last one in use times the page size
  // The rest: file_bytes minus every database's main tree (mdb_stat). LMDB's free pages (reused
  // by later writes), the nested trees of posting lists too long to stay on their key's leaf
  // page, which mdb_stat does not count in their database (docs/notes/performance-studies.md, "Disk per
  // document"), LMDB's meta pages and catalog. The free pages are not told apart: LMDB has no
  // public call that counts them, and its free list's records are its own business.
  uint64_t other_bytes = 0;
  std::vector<DatabaseStats> databases;
};

}  // namespace shingled::store

#endif  // SHINGLED_STORE_TYPES_H_
