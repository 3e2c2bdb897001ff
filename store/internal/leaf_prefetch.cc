#include "store/internal/leaf_prefetch.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "store/internal/lmdb.h"

namespace shingled::store::internal {

namespace {

// LMDB 0.9's page layout (mdb.c, MDB_page and MDB_node; native byte order). A page starts with
// its number (8 bytes), 2 bytes of padding, its flags, and the lower and upper bounds of its free
// space; the 2-byte offsets of its nodes follow. A branch node is the child's page number in
// three 16-bit parts (low, high, and the flags field), the key's size, and the key.
constexpr size_t kPageHeader = 16;
constexpr size_t kFlagsAt = 10, kLowerAt = 12, kUpperAt = 14;
constexpr uint16_t kBranch = 0x01, kLeaf = 0x02, kOverflow = 0x04, kMeta = 0x08, kLeaf2 = 0x20,
                   kSubPage = 0x40;
constexpr uint16_t kKinds = kBranch | kLeaf | kOverflow | kMeta | kLeaf2 | kSubPage;
constexpr size_t kNodeHeader = 8;
// A named database's record in the unnamed one (MDB_db): the flags at 4, the depth at 6, the
// root's page number at 40, 48 bytes in all.
constexpr size_t kDbRecord = 48, kDbDepthAt = 6, kDbRootAt = 40;
constexpr int kMaxDepth = 16;
constexpr size_t kLine = 64;

std::atomic<bool> enabled{true};

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

void EnableLeafPrefetch(bool on) { enabled.store(on, std::memory_order_relaxed); }

bool MappingOf(const void* p, uintptr_t* begin, uintptr_t* end) {
  std::ifstream maps("/proc/self/maps");
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long b = 0, e = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &b, &e) != 2) continue;
    if (at >= b && at < e) {
      *begin = static_cast<uintptr_t>(b);
      *end = static_cast<uintptr_t>(e);
      return true;
    }
  }
  return false;
}

bool MapBase::Confirm(uintptr_t page0, const char* inside) {
  if (page0 == confirmed_.load(std::memory_order_relaxed)) return true;
  if (refused_.load(std::memory_order_relaxed)) return false;
  uintptr_t begin = 0, end = 0;
  if (!MappingOf(inside, &begin, &end) || begin != page0) {
    refused_.store(true, std::memory_order_relaxed);
    return false;
  }
  confirmed_.store(page0, std::memory_order_relaxed);
  return true;
}

LeafPrefetcher::LeafPrefetcher(MDB_txn* txn, MDB_dbi main, const char* table, MapBase* map) {
  if (!enabled.load(std::memory_order_relaxed)) return;
  MDB_env* env = mdb_txn_env(txn);
  MDB_stat st;
  MDB_envinfo info;
  if (env == nullptr || mdb_env_stat(env, &st) != 0 || mdb_env_info(env, &info) != 0) return;
  const uint64_t page_size = st.ms_psize;
  if (page_size < 512 || (page_size & (page_size - 1)) != 0) return;
  const uint64_t last = std::min<uint64_t>(info.me_last_pgno, info.me_mapsize / page_size - 1);
  MDB_val k{std::strlen(table), const_cast<char*>(table)}, v;
  if (mdb_get(txn, main, &k, &v) != 0 || v.mv_size != kDbRecord) return;
  // The record lies in a leaf of the unnamed database, in the map (a read transaction has no
  // pages of its own). That page names itself, which places page 0.
  const char* record = static_cast<const char*>(v.mv_data);
  const char* page = record - reinterpret_cast<uintptr_t>(record) % page_size;
  const uint64_t self = Load<uint64_t>(page);
  if (self > last || (Load<uint16_t>(page + kFlagsAt) & kKinds) != kLeaf) return;
  const uintptr_t page0 = reinterpret_cast<uintptr_t>(page) - self * page_size;
  if (!map->Confirm(page0, page)) return;
  const int depth = Load<uint16_t>(record + kDbDepthAt);
  const uint64_t root = Load<uint64_t>(record + kDbRootAt);
  if (depth < 1 || depth > kMaxDepth || root < 2 || root > last) return;  // empty: root is ~0
  base_ = reinterpret_cast<const char*>(page0);
  page_size_ = page_size;
  last_pgno_ = last;
  if (Load<uint64_t>(Page(root)) != root) return;
  depth_ = depth;
  root_ = root;
}

namespace {

// A page of the map, checked: it names itself, is of the kind expected, and its bounds and each
// node it hands out lie inside it.
class CheckedPage {
 public:
  CheckedPage(const char* p, uint64_t pgno, uint16_t kind, size_t page_size) : p_(p), page_size_(page_size) {
    if (Load<uint64_t>(p) != pgno || (Load<uint16_t>(p + kFlagsAt) & kKinds) != kind) return;
    const size_t lower = Load<uint16_t>(p + kLowerAt);
    upper_ = Load<uint16_t>(p + kUpperAt);
    if (lower < kPageHeader || lower > upper_ || upper_ > page_size) return;
    n_ = (lower - kPageHeader) / 2;
  }
  size_t size() const { return n_; }  // 0 when the page did not check out
  // The node at `i` (< size()), nullptr if it does not lie in the page's used part.
  const char* Node(size_t i) const {
    const size_t at = Load<uint16_t>(p_ + kPageHeader + 2 * i);
    if (at < upper_ || at + kNodeHeader > page_size_) return nullptr;
    if (at + kNodeHeader + Load<uint16_t>(p_ + at + 6) > page_size_) return nullptr;
    return p_ + at;
  }
  const char* NodeAddress(size_t i) const { return p_ + Load<uint16_t>(p_ + kPageHeader + 2 * i); }
  static int Compare(const char* node, std::string_view key) {
    MDB_val have{Load<uint16_t>(node + 6), const_cast<char*>(node + kNodeHeader)};
    MDB_val want{key.size(), const_cast<char*>(key.data())};
    return CompareBytes(&have, &want);
  }

 private:
  const char* p_;
  size_t page_size_;
  size_t upper_ = 0;
  size_t n_ = 0;
};

}  // namespace

uint64_t LeafPrefetcher::Child(uint64_t pgno, std::string_view key) const {
  const CheckedPage page(Page(pgno), pgno, kBranch, page_size_);
  const size_t n = page.size();
  if (n < 2) return 0;
  // LMDB takes the last node whose key is at most `key`; node 0's key stands for everything
  // below node 1's and is not compared.
  size_t lo = 1, hi = n;  // the first node whose key is above `key`, in [1, n]
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const char* node = page.Node(mid);
    if (node == nullptr) return 0;
    if (CheckedPage::Compare(node, key) <= 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  const char* node = page.Node(lo - 1);
  if (node == nullptr) return 0;
  const uint64_t child = uint64_t{Load<uint16_t>(node)} | uint64_t{Load<uint16_t>(node + 2)} << 16 |
                         uint64_t{Load<uint16_t>(node + 4)} << 32;
  return child >= 2 && child <= last_pgno_ ? child : 0;
}

bool LeafPrefetcher::Value(uint64_t leaf, std::string_view key, const char** data, size_t* size) const {
  const CheckedPage page(Page(leaf), leaf, kLeaf, page_size_);
  // LMDB takes the first node whose key is at least `key`; only an equal one holds the value.
  size_t lo = 0, hi = page.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const char* node = page.Node(mid);
    if (node == nullptr) return false;
    if (CheckedPage::Compare(node, key) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == page.size()) return false;
  const char* node = page.Node(lo);
  if (node == nullptr || CheckedPage::Compare(node, key) != 0) return false;
  // A leaf node: the value's size in the low and high parts, its flags, the key, then the value
  // itself or, for a value on overflow pages (flag 1), the first one's number.
  const size_t value_size = Load<uint16_t>(node) | size_t{Load<uint16_t>(node + 2)} << 16;
  const uint16_t flags = Load<uint16_t>(node + 4);
  const char* value = node + kNodeHeader + Load<uint16_t>(node + 6);
  const size_t room = page_size_ - static_cast<size_t>(value - Page(leaf));  // Node() checked the key
  constexpr uint16_t kBigData = 0x01;
  if ((flags & kBigData) == 0) {
    if (value_size > room) return false;
    *data = value;
    *size = value_size;
    return true;
  }
  if (room < 8) return false;
  const uint64_t first = Load<uint64_t>(value);
  const uint64_t pages = (kPageHeader + value_size + page_size_ - 1) / page_size_;
  if (first < 2 || first > last_pgno_ || pages > last_pgno_ + 1 - first) return false;
  const char* overflow = Page(first);
  if (Load<uint64_t>(overflow) != first || (Load<uint16_t>(overflow + kFlagsAt) & kKinds) != kOverflow) return false;
  *data = overflow + kPageHeader;
  *size = value_size;
  return true;
}

size_t LeafPrefetcher::Prefetch(std::span<const std::string_view> keys) const {
  if (!usable()) return 0;
  constexpr size_t kGroup = 32;
  // A leaf's nodes are fetched ahead of its search when it has at most this many (a posting
  // bucket's or a record's leaf has ~2 to ~20); the search of a fuller one waits on them.
  constexpr size_t kMaxNodesAhead = 48;
  size_t found = 0;
  uint64_t at[kGroup];
  for (size_t from = 0; from < keys.size(); from += kGroup) {
    const size_t n = std::min(kGroup, keys.size() - from);
    std::fill_n(at, n, root_);
    // Each pass asks for what the next needs for every key before it reads any of it, so that
    // loads that miss the cache overlap: down the branch pages a level at a time, to each leaf's
    // header and node offsets (its first two lines), ...
    for (int level = 1; level < depth_; ++level) {
      for (size_t i = 0; i < n; ++i) {
        if (at[i] == 0) continue;
        at[i] = Child(at[i], keys[from + i]);
        if (at[i] != 0) PrefetchLines({Page(at[i]), 2 * kLine});
      }
    }
    // ... its nodes' keys, ...
    for (size_t i = 0; i < n; ++i) {
      if (at[i] == 0) continue;
      const CheckedPage leaf(Page(at[i]), at[i], kLeaf, page_size_);
      if (leaf.size() <= kMaxNodesAhead) {
        for (size_t j = 0; j < leaf.size(); ++j) __builtin_prefetch(leaf.NodeAddress(j));
      }
    }
    // ... and the value of the key's node.
    for (size_t i = 0; i < n; ++i) {
      if (at[i] == 0) continue;
      ++found;
      const char* data = nullptr;
      size_t size = 0;
      if (Value(at[i], keys[from + i], &data, &size)) PrefetchLines({data, std::min<size_t>(size, page_size_)});
    }
  }
  return found;
}

uint64_t LeafPrefetcher::LeafOf(std::string_view key) const {
  if (!usable()) return 0;
  uint64_t pgno = root_;
  for (int level = 1; level < depth_ && pgno != 0; ++level) pgno = Child(pgno, key);
  if (pgno == 0) return 0;
  return CheckedPage(Page(pgno), pgno, kLeaf, page_size_).size() > 0 ? pgno : 0;
}

std::string_view LeafPrefetcher::ValueOf(std::string_view key) const {
  const uint64_t leaf = LeafOf(key);
  const char* data = nullptr;
  size_t size = 0;
  if (leaf == 0 || !Value(leaf, key, &data, &size)) return {};
  return {data, size};
}

}  // namespace shingled::store::internal
