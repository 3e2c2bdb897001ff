#include "store/internal/leaf_prefetch.h"

#include <algorithm>
#include <bit>
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
constexpr size_t kPadAt = 8, kFlagsAt = 10, kLowerAt = 12, kUpperAt = 14;
constexpr uint16_t kBranch = 0x01, kLeaf = 0x02, kOverflow = 0x04, kMeta = 0x08, kLeaf2 = 0x20,
                   kSubPage = 0x40;
constexpr uint16_t kKinds = kBranch | kLeaf | kOverflow | kMeta | kLeaf2 | kSubPage;
constexpr size_t kNodeHeader = 8;
// A named database's record in the unnamed one (MDB_db): the flags at 4, the depth at 6, the
// number of leaf pages at 16, the root's page number at 40, 48 bytes in all.
constexpr size_t kDbRecord = 48, kDbDepthAt = 6, kDbLeavesAt = 16, kDbRootAt = 40;
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
  leaf_pages_ = Load<uint64_t>(record + kDbLeavesAt);
  root_ = root;
}

namespace {

// The first `size` (at most 8) bytes at `p` as a number that orders as they do (CompareBytes):
// big-endian, the bytes past `size` zero. `wide`: 8 bytes may be read at `p`.
uint64_t PaddedBits(const char* p, size_t size, bool wide) {
  uint64_t x = 0;
  if (!wide) {
    for (size_t i = 0; i < 8; ++i) x = x << 8 | (i < size ? static_cast<unsigned char>(p[i]) : 0u);
    return x;
  }
  std::memcpy(&x, p, 8);
  if constexpr (std::endian::native == std::endian::little) x = __builtin_bswap64(x);
  return size == 0 ? 0 : x & (~uint64_t{0} << (64 - 8 * size));
}

// A key searched for, with the number PaddedBits makes of it when it is at most 8 bytes (the
// store's keys are: 3-byte buckets, 8-byte ids), which compares with a node's short key in a few
// instructions instead of a call.
struct SearchKey {
  SearchKey() = default;
  explicit SearchKey(std::string_view k)
      : key(k), bits(k.size() <= 8 ? PaddedBits(k.data(), k.size(), false) : 0) {}
  std::string_view key;
  uint64_t bits = 0;
};

// A page of the map, checked: it names itself, is of the kind expected, and its bounds and each
// node it hands out lie inside it.
class CheckedPage {
 public:
  CheckedPage() = default;  // of no nodes
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
  const char* OffsetAddress(size_t i) const { return p_ + kPageHeader + 2 * i; }
  const char* NodeAddress(size_t i) const { return p_ + Load<uint16_t>(OffsetAddress(i)); }
  static int Compare(const char* node, std::string_view key) {
    MDB_val have{Load<uint16_t>(node + 6), const_cast<char*>(node + kNodeHeader)};
    MDB_val want{key.size(), const_cast<char*>(key.data())};
    return CompareBytes(&have, &want);
  }
  // Compare(node, key.key), for a node Node() handed out: keys of up to 8 bytes as numbers.
  int Compare(const char* node, const SearchKey& key) const {
    const size_t size = Load<uint16_t>(node + 6);
    if (key.key.size() > 8 || size > 8) return Compare(node, key.key);
    const char* k = node + kNodeHeader;
    const uint64_t bits = PaddedBits(k, size, static_cast<size_t>(k - p_) + 8 <= page_size_);
    if (bits != key.bits) return bits < key.bits ? -1 : 1;
    return size < key.key.size() ? -1 : (size > key.key.size() ? 1 : 0);
  }

 private:
  const char* p_ = nullptr;
  size_t page_size_ = 0;
  size_t upper_ = 0;
  size_t n_ = 0;
};

}  // namespace

void LeafPrefetcher::Search(uint16_t kind, std::span<const uint64_t> pages,
                            std::span<const std::string_view> keys, const char** nodes) const {
  const size_t n = pages.size();
  // LMDB's own search (mdb_node_search), probe for probe, so that the descent that follows
  // finds in the cache every line it reads: over the nodes [low, high] (node 0 of a branch page
  // stands for everything below node 1 and is not compared), the middle one, rounded down, until
  // a node equals the key or the range is empty. A leaf's answer is then the equal node or the
  // first above the key; a branch page's, the last node at most the key.
  struct State {
    CheckedPage page;
    ptrdiff_t low, high, exact;
  };
  State st[kGroup];
  const bool branch = kind == kBranch;
  for (size_t i = 0; i < n; ++i) {
    State& t = st[i];
    if (pages[i] != 0) t.page = CheckedPage(Page(pages[i]), pages[i], kind, page_size_);
    t.low = branch ? 1 : 0;
    t.high = static_cast<ptrdiff_t>(t.page.size()) - 1;
    t.exact = -1;
    if (branch && t.page.size() < 2) t.high = t.low - 1;  // no search: the page failed its check
  }
  SearchKey sk[kGroup];
  for (size_t i = 0; i < n; ++i) sk[i] = SearchKey(keys[i]);
  // One probe of every search per round: ask for the probed nodes' offsets, then for the nodes
  // (the header and the key), then compare.
  for (;;) {
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      const State& t = st[i];
      if (t.low > t.high) continue;
      __builtin_prefetch(t.page.OffsetAddress(static_cast<size_t>(t.low + t.high) / 2));
      any = true;
    }
    if (!any) break;
    for (size_t i = 0; i < n; ++i) {
      const State& t = st[i];
      if (t.low > t.high) continue;
      const char* node = t.page.NodeAddress(static_cast<size_t>(t.low + t.high) / 2);
      __builtin_prefetch(node);
      __builtin_prefetch(node + kNodeHeader + keys[i].size() - 1);
    }
    for (size_t i = 0; i < n; ++i) {
      State& t = st[i];
      if (t.low > t.high) continue;
      const ptrdiff_t mid = (t.low + t.high) / 2;
      const char* node = t.page.Node(static_cast<size_t>(mid));
      if (node == nullptr) {
        t.page = CheckedPage();  // fails the search
        t.high = t.low - 1;
        continue;
      }
      const int c = t.page.Compare(node, sk[i]);
      if (c == 0) {
        t.exact = mid;
        t.high = t.low - 1;
        continue;
      }
      // Which way is as likely as not: chosen without a branch.
      t.low = c < 0 ? mid + 1 : t.low;
      t.high = c > 0 ? mid - 1 : t.high;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const State& t = st[i];
    const size_t size = t.page.size();
    // Without an equal node, `low` is the first node above the key.
    const size_t at = t.exact >= 0 ? static_cast<size_t>(t.exact)
                      : branch     ? static_cast<size_t>(t.low) - 1
                                   : static_cast<size_t>(t.low);
    nodes[i] = size == 0 || (branch && size < 2) || at >= size ? nullptr : t.page.Node(at);
  }
}

void LeafPrefetcher::Walk(std::span<const std::string_view> keys, uint64_t* leaves) const {
  const size_t n = keys.size();
  std::fill_n(leaves, n, root_);
  const char* nodes[kGroup];
  for (int level = 1; level < depth_; ++level) {
    Search(kBranch, {leaves, n}, keys, nodes);
    for (size_t i = 0; i < n; ++i) {
      leaves[i] = 0;
      if (nodes[i] == nullptr) continue;
      const char* node = nodes[i];
      const uint64_t child = uint64_t{Load<uint16_t>(node)} |
                             uint64_t{Load<uint16_t>(node + 2)} << 16 |
                             uint64_t{Load<uint16_t>(node + 4)} << 32;
      if (child < 2 || child > last_pgno_) continue;
      leaves[i] = child;
      PrefetchLines({Page(child), 2 * kLine});
    }
  }
  // A page of the last level must be a leaf.
  for (size_t i = 0; i < n; ++i) {
    if (leaves[i] != 0 && CheckedPage(Page(leaves[i]), leaves[i], kLeaf, page_size_).size() == 0)
      leaves[i] = 0;
  }
}

bool LeafPrefetcher::Value(uint64_t leaf, const char* node, std::string_view key, const char** data,
                           size_t* size) const {
  // Only a node of the key itself holds its value.
  if (node == nullptr || CheckedPage::Compare(node, key) != 0) return false;
  // A leaf node: the value's size in the low and high parts, its flags, the key, then the value
  // itself or, for a value on overflow pages (flag 1), the first one's number.
  const size_t value_size = Load<uint16_t>(node) | size_t{Load<uint16_t>(node + 2)} << 16;
  const uint16_t flags = Load<uint16_t>(node + 4);
  const char* value = node + kNodeHeader + Load<uint16_t>(node + 6);
  const size_t room =
      page_size_ - static_cast<size_t>(value - Page(leaf));  // Search checked the key
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

size_t LeafPrefetcher::Prefetch(std::span<const std::string_view> keys,
                                std::span<Found> found) const {
  std::fill(found.begin(), found.end(), Found{});
  if (found.size() != keys.size()) found = {};  // not as many: not filled
  if (!usable()) return 0;
  // A leaf's nodes are fetched ahead of its search when it has at most this many (a posting
  // bucket's or a record's leaf has ~2 to ~20); the search of a fuller one waits on them.
  constexpr size_t kMaxNodesAhead = 48;
  size_t walked = 0;
  uint64_t leaves[kGroup];
  const char* nodes[kGroup];
  for (size_t from = 0; from < keys.size(); from += kGroup) {
    const std::span<const std::string_view> group =
        keys.subspan(from, std::min(kGroup, keys.size() - from));
    const size_t n = group.size();
    // Each step asks for what the next needs for every key before it reads any of it, so that
    // loads that miss the cache overlap: down the branch pages a level at a time (each level's
    // searches interleaved), to each leaf's header and node offsets (its first two lines), ...
    Walk(group, leaves);
    // ... its nodes' keys, ...
    for (size_t i = 0; i < n; ++i) {
      if (leaves[i] == 0) continue;
      const CheckedPage leaf(Page(leaves[i]), leaves[i], kLeaf, page_size_);
      if (leaf.size() <= kMaxNodesAhead) {
        for (size_t j = 0; j < leaf.size(); ++j) __builtin_prefetch(leaf.NodeAddress(j));
      }
    }
    // ... the key's node (the leaves' searches interleaved), and its value.
    Search(kLeaf, {leaves, n}, group, nodes);
    for (size_t i = 0; i < n; ++i) {
      if (leaves[i] == 0) continue;
      ++walked;
      const char* data = nullptr;
      size_t size = 0;
      if (Value(leaves[i], nodes[i], group[i], &data, &size)) {
        PrefetchLines({data, std::min<size_t>(size, page_size_)});
        if (!found.empty()) {
          found[from + i] = {Found::Kind::kPresent, Load<uint16_t>(nodes[i] + 4), {data, size}};
        }
      } else if (!found.empty() && nodes[i] != nullptr &&
                 CheckedPage::Compare(nodes[i], group[i]) > 0) {
        // The leaf's search ended on a greater key: LMDB's would too, and not find this one.
        found[from + i].kind = Found::Kind::kAbsent;
      }
    }
  }
  return walked;
}

bool FixedDuplicates(const Found& found, size_t size, std::string_view* entries) {
  *entries = {};
  if (found.kind == Found::Kind::kAbsent) return true;
  if (found.kind != Found::Kind::kPresent || size == 0) return false;
  constexpr uint16_t kBigData = 0x01, kSubData = 0x02, kDupData = 0x04;
  if ((found.flags & (kBigData | kSubData)) != 0) return false;
  const std::string_view v = found.value;
  if ((found.flags & kDupData) == 0) {  // a key with one duplicate: the node's value is it
    if (v.size() != size) return false;
    *entries = v;
    return true;
  }
  // An inline page of duplicates (mdb.c, mdb_cursor_put): a page header whose padding holds
  // the duplicates' size, of the kind leaf | sub-page | LEAF2 (fixed-size entries without
  // nodes), and whose lower bound counts 2 bytes per entry; the entries follow the header.
  if (v.size() < kPageHeader) return false;
  const char* p = v.data();
  const size_t lower = Load<uint16_t>(p + kLowerAt), upper = Load<uint16_t>(p + kUpperAt);
  if (Load<uint16_t>(p + kPadAt) != size ||
      (Load<uint16_t>(p + kFlagsAt) & kKinds) != (kLeaf | kLeaf2 | kSubPage) ||
      lower < kPageHeader || lower > upper || upper > v.size()) {
    return false;
  }
  const size_t n = (lower - kPageHeader) / 2;
  if (n == 0 || kPageHeader + n * size > v.size()) return false;
  *entries = {p + kPageHeader, n * size};
  return true;
}

uint64_t LeafPrefetcher::LeafOf(std::string_view key) const { return LeavesOf({&key, 1})[0]; }

std::string_view LeafPrefetcher::ValueOf(std::string_view key) const {
  return ValuesOf({&key, 1})[0];
}

std::vector<uint64_t> LeafPrefetcher::LeavesOf(std::span<const std::string_view> keys) const {
  std::vector<uint64_t> out(keys.size(), 0);
  if (!usable()) return out;
  for (size_t from = 0; from < keys.size(); from += kGroup) {
    Walk(keys.subspan(from, std::min(kGroup, keys.size() - from)), out.data() + from);
  }
  return out;
}

std::vector<std::string_view> LeafPrefetcher::ValuesOf(
    std::span<const std::string_view> keys) const {
  std::vector<std::string_view> out(keys.size());
  const std::vector<uint64_t> leaves = LeavesOf(keys);
  const char* nodes[kGroup];
  for (size_t from = 0; from < keys.size(); from += kGroup) {
    const size_t n = std::min(kGroup, keys.size() - from);
    Search(kLeaf, {leaves.data() + from, n}, keys.subspan(from, n), nodes);
    for (size_t i = 0; i < n; ++i) {
      const char* data = nullptr;
      size_t size = 0;
      if (leaves[from + i] != 0 &&
          Value(leaves[from + i], nodes[i], keys[from + i], &data, &size)) {
        out[from + i] = {data, size};
      }
    }
  }
  return out;
}

}  // namespace shingled::store::internal
