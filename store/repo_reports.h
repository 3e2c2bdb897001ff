// The repository reports (paper 003, figures 5 and 6): identical-content sets and
// clusters of documents linked by bytes in common. Types only; Store::StreamIdenticalReport and
// Store::StreamClusterReport (store/repo_reports.cc) produce them a row at a time, and
// docs/REPORTS.md defines every field.
#ifndef SHINGLED_STORE_REPO_REPORTS_H_
#define SHINGLED_STORE_REPO_REPORTS_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/types.h"

namespace shingled::store {

// What a running report has done so far, for a progress line (each pointer may be null).
struct RepoReportProgress {
  std::atomic<uint64_t>* documents = nullptr;  // documents looked at
  std::atomic<uint64_t>* clusters = nullptr;   // partitions analysed (clusters report)
};

// --- identical content (figure 6) ---

struct IdenticalReportOptions {
  uint64_t limit = UINT64_MAX;  // sets listed, largest waste first (the totals count them all)
  size_t max_urls = SIZE_MAX;   // URLs listed per set (its copies count them all)
};

// Over every set, listed or not; known before the first set is listed.
struct IdenticalReportTotals {
  uint64_t sets = 0;          // documents held by two or more live URLs
  uint64_t files = 0;         // their live URLs (the copies)
  uint64_t wasted_bytes = 0;  // the sum of the sets' wasted_bytes
  uint64_t listed = 0;        // min(sets, limit)
};

// One content (one document: the same raw bytes) held by several live URLs.
struct IdenticalReportSet {
  uint64_t rank = 0;  // 1 for the first set listed
  DocId doc = 0;
  uint64_t bytes = 0;             // the content's size (raw bytes)
  uint64_t copies = 0;            // live URLs holding it (>= 2)
  uint64_t wasted_bytes = 0;      // bytes * (copies - 1): what keeping one copy frees
  std::vector<std::string> urls;  // in URL id order, at most max_urls
};

// --- clusters by bytes in common (figure 5) ---

struct ClusterReportOptions {
  // A link joins two live documents whose bytes in common (Store::BytesInCommon) reach
  // min_bytes, or are at least min_share of the shorter one's text (and not 0).
  uint64_t min_bytes = 1000;
  double min_share = 0.5;
  // Chunks held by more than max_chunk_docs documents join no documents and propose no pairs
  // (paper 003 section 2.5: common text, likely template). Per partition (documents joined by
  // the other chunks) of n live documents, at most max_pairs_per_doc * n / 2 pairs (those sharing
  // the most chunk bytes first, at least 1) are checked with BytesInCommon; the rest are counted.
  uint64_t max_chunk_docs = 100;
  uint64_t max_pairs_per_doc = 50;
  uint64_t limit = UINT64_MAX;  // clusters listed
  size_t max_urls = 10;         // URLs listed per document
};

enum class ClusterReportType {
  kPair,      // two documents, neither containing the other
  kContains,  // two documents, the shorter one's text inside the longer one
  kGroup,     // three or more documents
};
std::string_view ClusterReportTypeName(ClusterReportType type);

struct ClusterReportDocument {
  DocId doc = 0;
  uint64_t bytes = 0;      // raw bytes
  uint64_t live_urls = 0;  // all of them; `urls` lists at most max_urls
  std::vector<std::string> urls;
};

struct ClusterReportLink {
  DocId a = 0, b = 0;  // a < b
  uint64_t shared_bytes = 0;
  uint64_t length_a = 0, length_b = 0;  // chunked text lengths (CommonBytes)
  double share_a = 0, share_b = 0;
  // shared / (length_a + length_b - shared): the share of the two texts' union that is shared.
  double similarity = 0;
  CommonRelation relation = CommonRelation::kNone;
};

struct ClusterReportCluster {
  uint64_t rank = 0;    // 1 for the first cluster listed
  DocId id = 0;         // its smallest document id
  DocId partition = 0;  // the partition it lies in: its smallest document id
  ClusterReportType type = ClusterReportType::kPair;
  uint64_t bytes = 0;             // the sum of its documents' bytes
  DocId keep = 0;                 // its largest document (the smallest id on a tie)
  uint64_t removable_bytes = 0;   // bytes - keep's bytes: what removing all but `keep` frees
  double average_similarity = 0;  // the mean of its links' similarity
  std::vector<ClusterReportDocument> documents;  // by id
  std::vector<ClusterReportLink> links;          // by (a, b)
  // Of its partition (the same for every cluster listed from it): pairs that shared a chunk but
  // were not checked (over the partition's budget).
  uint64_t partition_pairs_unchecked = 0;
};

struct ClusterReportTotals {
  uint64_t partitions = 0;                // partitions of two or more documents analysed
  uint64_t clusters = 0;                  // clusters listed
  uint64_t documents = 0;                 // their documents
  uint64_t links = 0;                     // their links
  uint64_t bytes = 0;                     // their bytes
  uint64_t removable_bytes = 0;           // their removable bytes
  uint64_t pairs_checked = 0;             // BytesInCommon calls
  uint64_t pairs_unchecked = 0;           // pairs over a partition's budget, left out
  uint64_t chunks_too_common = 0;         // chunks in more than max_chunk_docs documents
  uint64_t documents_without_chunks = 0;  // live members with no chunks: never linked
  bool limited = false;  // the listing stopped at `limit`: the counts cover what was analysed
};

}  // namespace shingled::store

#endif  // SHINGLED_STORE_REPO_REPORTS_H_
