// Loading ahead the leaf pages that a query's next lookups will read (FORMAT.md, "Lookups").
// Private to store/.
//
// A query looks up ~20 keys at random places in one tree (its sample values' buckets). Each LMDB
// lookup descends alone: the branch pages are in the cache, but the leaf is not, and its header,
// node offsets, node keys and value are loads that wait for one another, at 1M documents on a
// leaf among ~100,000 (400 MB). LeafPrefetcher first walks every key's branch pages itself, in
// the map and by LMDB's file format, all keys a level at a time, the binary searches of a level
// interleaved (a probe of every key per round, so that their misses overlap, and in LMDB's own
// probe order, so that its descent later finds in the cache the lines it reads); then, a pass
// over all keys per step, it asks the CPU for each leaf's header, then for its nodes, then for
// the key's value. The lookups that follow go through LMDB as before and find what they read in
// the cache (group prefetching: Chen, Ailamaki, Gibbons and Mowry, "Improving hash join
// performance through prefetching", ICDE 2004).
//
// It reads the data file format of LMDB 0.9 (a page: its number, flags, the bounds of its free
// space, its node offsets; a node: the child's page number or the value's size, flags, key,
// value), which every 0.9 release shares, since files move between them. Each page it reads must
// name itself, lie inside the file and be of the kind expected, and each node must lie inside its
// page, or the walk of that key stops there (Found::kUnknown). The map's start is checked against
// the process's mappings once (MapBase), so that a file of another format is not read at all.
//
// What the walk found may also be read instead of asking LMDB again (Prefetch's `found`): the
// queries take a sample bucket's entries from it (FixedDuplicates), saving LMDB's lookup of the
// bucket, which costs more in instructions than the walk's loads. Any key the walk did not settle
// (a check failed, a bucket in a nested tree, a key past its leaf's last) is read through LMDB.
//
// Read transactions only: a write transaction's changed pages are not in the map.
#ifndef SHINGLED_STORE_INTERNAL_LEAF_PREFETCH_H_
#define SHINGLED_STORE_INTERNAL_LEAF_PREFETCH_H_

#include <lmdb.h>

#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace shingled::store::internal {

// Asks the CPU to load every cache line of `bytes` without waiting for them.
inline void PrefetchLines(std::string_view bytes) {
  constexpr uintptr_t kLine = 64;
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  for (p -= reinterpret_cast<uintptr_t>(p) % kLine; p < end; p += kLine) __builtin_prefetch(p);
}

// The [begin, end) of the mapping of this process that holds `p`, from /proc/self/maps; false if
// none does. LMDB does not tell where it mapped the file (mdb_env_info's address is that of a
// fixed map only), so the map is found through a pointer into it.
bool MappingOf(const void* p, uintptr_t* begin, uintptr_t* end);

// Where this process mapped a store's file, as far as LeafPrefetcher may trust it (one per
// environment; thread-safe).
//
// A page in the map names itself, so a pointer into page N places page 0 N pages before it. That
// is only as good as the format's reading, and the walk reads pages by it: the first time a page
// 0 is derived (and after a map growth moves the map), MapBase checks it against the process's
// mappings, where LMDB maps the whole file from its start. A derived page 0 that is not the
// start of the mapping (a file format other than LMDB 0.9's) turns prefetching off for good.
class MapBase {
 public:
  // Whether `page0` is the start of the map that holds `inside`.
  bool Confirm(uintptr_t page0, const char* inside);

 private:
  std::atomic<uintptr_t> confirmed_{0};
  std::atomic<bool> refused_{false};
};

// Whether new LeafPrefetchers may be usable (on unless switched off), for every store of the
// process: store_bench switches it query by query to measure what prefetching saves.
void EnableLeafPrefetch(bool on);

// What the walk found for a key (Prefetch), valid while the read transaction lasts.
struct Found {
  enum class Kind : uint8_t {
    kUnknown,  // not settled: not walked, or a page or node did not check out
    kAbsent,   // the tree does not hold the key: its leaf's search ended on a greater key
    kPresent,  // `value` and `flags` are those of the key's node
  };
  Kind kind = Kind::kUnknown;
  // kPresent: the node's flags (F_BIGDATA 1, F_SUBDATA 2, F_DUPDATA 4), and its value: the record
  // (on its overflow pages for F_BIGDATA), the one duplicate of a key that has one, the inline
  // page of its duplicates (F_DUPDATA), or a nested tree's record (F_SUBDATA).
  uint16_t flags = 0;
  std::string_view value;
};

// The duplicates of a key of a MDB_DUPSORT | MDB_DUPFIXED database whose duplicates are `size`
// bytes each, as one array (in their order: what MDB_GET_MULTIPLE hands out), from what the walk
// found: none for an absent key, the value itself for a key with one duplicate, the entries of
// its inline page of duplicates. False (ask LMDB) when `found` is not settled, the duplicates
// are in a nested tree of their own, or the inline page does not check out (its kind, its
// entries' size, its bounds).
bool FixedDuplicates(const Found& found, size_t size, std::string_view* entries);

class LeafPrefetcher {
 public:
  // The tree of the named database `table` (opened in `main`, the environment's unnamed database)
  // in the snapshot of the read-only `txn`; `map` is the environment's. Not usable (usable()
  // false) when the tree is empty or its root or the map does not check out.
  LeafPrefetcher(MDB_txn* txn, MDB_dbi main, const char* table, MapBase* map);

  bool usable() const { return root_ != 0; }
  // The tree's leaf pages (0 when not usable).
  uint64_t leaf_pages() const { return leaf_pages_; }

  // Walks down to the leaf of each key, all keys one level at a time, and prefetches what LMDB
  // will read there: the leaf's header and node offsets, its nodes' keys, and the key's value (up
  // to a page of it; on its overflow page for a large one; a nested tree of duplicates is not
  // followed). Returns how many leaves were found (0 when not usable). Sets found[i] to what the
  // walk found for keys[i] when `found` has as many entries as `keys` (else each to kUnknown).
  size_t Prefetch(std::span<const std::string_view> keys, std::span<Found> found = {}) const;

  // For tests: the page number of the leaf where LMDB finds `key` (or would put it), 0 when not
  // usable or the walk met a page that did not check out; and the value found there under `key`
  // (a value on overflow pages, or the page of duplicates inside the leaf or a nested tree's
  // record), empty if none.
  uint64_t LeafOf(std::string_view key) const;
  std::string_view ValueOf(std::string_view key) const;
  // The same for every key, walked as Prefetch walks them (kGroup keys at a time, each step
  // interleaved over the group).
  std::vector<uint64_t> LeavesOf(std::span<const std::string_view> keys) const;
  std::vector<std::string_view> ValuesOf(std::span<const std::string_view> keys) const;

 private:
  // Keys walked together.
  static constexpr size_t kGroup = 32;

  // Binary searches of pages[i] (of kind `kind`, kBranch or kLeaf; 0: none) for keys[i], for
  // every i (at most kGroup) at once: each round probes every search once, first asking for
  // the probed nodes' offsets, then for the nodes, then comparing, so that the cache misses of
  // different searches overlap (a search alone waits for each of its ~9 probes in turn).
  // nodes[i]: in a branch page, the node LMDB descends through; in a leaf, the first node whose
  // key is at least keys[i], nullptr if none or a check fails.
  void Search(uint16_t kind, std::span<const uint64_t> pages,
              std::span<const std::string_view> keys, const char** nodes) const;
  // The leaf where LMDB finds each of `keys` (at most kGroup), all of them one level at a time,
  // asking for the first two lines of each page it steps to; leaves[i] 0 if a check fails.
  void Walk(std::span<const std::string_view> keys, uint64_t* leaves) const;
  // The value of `key` at `node` (Search's in leaf page `leaf`): false if that is not the key's
  // node or a check fails.
  bool Value(uint64_t leaf, const char* node, std::string_view key, const char** data,
             size_t* size) const;
  const char* Page(uint64_t pgno) const { return base_ + pgno * page_size_; }

  const char* base_ = nullptr;  // page 0 of the map
  uint64_t page_size_ = 0;
  uint64_t last_pgno_ = 0;  // the last page in the file (of the newest snapshot, so of ours too)
  uint64_t root_ = 0;       // 0: not usable (page 0 and 1 are meta pages, never a root)
  int depth_ = 0;           // levels, the leaves included
  uint64_t leaf_pages_ = 0;
};

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_LEAF_PREFETCH_H_
