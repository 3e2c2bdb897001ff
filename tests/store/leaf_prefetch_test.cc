// LeafPrefetcher reads LMDB's file format on its own: the leaf it walks to must be the one LMDB
// reads for the same key, in trees of posting buckets and of records (some on overflow pages) as
// the store has them, and a page that does not check out must stop the walk, never send it
// astray.
#include "store/internal/leaf_prefetch.h"

#include <gtest/gtest.h>
#include <lmdb.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "store/internal/codec.h"
#include "store/internal/lmdb.h"
#include "store/store.h"
#include "tests/store/synthetic.h"
#include "tests/store/test_dir.h"

namespace shingled::store::internal {
namespace {

constexpr unsigned kBucketFlags = MDB_DUPSORT | MDB_DUPFIXED;

// The low `bytes` (at most 8) bytes of `v`, big-endian.
std::string Be(uint64_t v, size_t bytes) {
  std::string s(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) s[bytes - 1 - i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// An environment in a temporary directory with the named databases a test fills.
class Env {
 public:
  explicit Env(const std::string& dir, unsigned flags = 0) {
    EXPECT_EQ(mdb_env_create(&env_), 0);
    EXPECT_EQ(mdb_env_set_maxdbs(env_, 4), 0);
    EXPECT_EQ(mdb_env_set_mapsize(env_, size_t{1} << 30), 0);
    EXPECT_EQ(mdb_env_open(env_, dir.c_str(), flags | MDB_NOSYNC, 0644), 0);
  }
  ~Env() { mdb_env_close(env_); }
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  MDB_env* get() const { return env_; }

 private:
  MDB_env* env_ = nullptr;
};

// A read transaction of an environment, with its unnamed database open; aborted when destroyed.
class Reader {
 public:
  explicit Reader(MDB_env* env) {
    EXPECT_EQ(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn_), 0);
    EXPECT_EQ(mdb_dbi_open(txn_, nullptr, 0, &main_), 0);
  }
  ~Reader() { mdb_txn_abort(txn_); }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  MDB_txn* txn() const { return txn_; }
  MDB_dbi main() const { return main_; }
  MDB_dbi Open(const char* name, unsigned flags) const {
    MDB_dbi dbi = 0;
    EXPECT_EQ(mdb_dbi_open(txn_, name, flags, &dbi), 0);
    return dbi;
  }

 private:
  MDB_txn* txn_ = nullptr;
  MDB_dbi main_ = 0;
};

struct Filled {
  std::vector<std::string> bucket_keys;
  std::vector<std::string> record_keys;
};

// "buckets": 3-byte keys with 1 to 30 12-byte entries each; "records": 8-byte keys with values of
// 40 to 3,000 bytes (those over ~2 KB on overflow pages). Both at least 3 levels deep.
Filled Fill(MDB_env* env, size_t buckets, size_t records) {
  std::mt19937_64 rng(20261121);
  Filled out;
  MDB_txn* txn = nullptr;
  EXPECT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
  MDB_dbi b = 0, r = 0;
  EXPECT_EQ(mdb_dbi_open(txn, "buckets", MDB_CREATE | kBucketFlags, &b), 0);
  EXPECT_EQ(mdb_dbi_open(txn, "records", MDB_CREATE, &r), 0);
  for (size_t i = 0; i < buckets; ++i) {
    std::string key = Be(rng() >> 40, 3);
    size_t n = 1 + rng() % 30;
    for (size_t j = 0; j < n; ++j) {
      std::string entry = Be(rng(), 8) + Be(rng(), 4);
      MDB_val k = Val(key), v = Val(entry);
      EXPECT_EQ(mdb_put(txn, b, &k, &v, 0), 0);
    }
    out.bucket_keys.push_back(key);
  }
  for (size_t i = 0; i < records; ++i) {
    std::string key = Be(rng(), 8);
    std::string value(40 + rng() % 2960, static_cast<char>('a' + i % 26));
    MDB_val k = Val(key), v = Val(value);
    EXPECT_EQ(mdb_put(txn, r, &k, &v, 0), 0);
    out.record_keys.push_back(key);
  }
  EXPECT_EQ(mdb_txn_commit(txn), 0);
  return out;
}

// The page that LMDB's cursor finds `key` on (it must be there), by the number the page holds.
uint64_t LmdbLeaf(MDB_txn* txn, MDB_dbi dbi, const std::string& key) {
  MDB_cursor* c = nullptr;
  EXPECT_EQ(mdb_cursor_open(txn, dbi, &c), 0);
  MDB_val k = Val(key), v;
  EXPECT_EQ(mdb_cursor_get(c, &k, &v, MDB_SET_KEY), 0);
  const char* p = static_cast<const char*>(k.mv_data);
  p -= reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uint64_t pgno = 0;
  std::memcpy(&pgno, p, sizeof pgno);
  mdb_cursor_close(c);
  return pgno;
}

// The value LMDB reads for `key`: its record, or for a bucket of several entries, from the sub-page
// header before them to their end (the sub-page that the node holds may have room after them).
std::string_view LmdbValue(MDB_txn* txn, MDB_dbi dbi, const std::string& key, bool bucket) {
  MDB_cursor* c = nullptr;
  EXPECT_EQ(mdb_cursor_open(txn, dbi, &c), 0);
  MDB_val k = Val(key), v;
  EXPECT_EQ(mdb_cursor_get(c, &k, &v, MDB_SET_KEY), 0);
  size_t entries = 1;
  if (bucket) {
    EXPECT_EQ(mdb_cursor_count(c, &entries), 0);
    EXPECT_EQ(mdb_cursor_get(c, &k, &v, MDB_GET_MULTIPLE), 0);
  }
  mdb_cursor_close(c);
  constexpr size_t kSubPageHeader = 16;
  if (entries > 1) return {static_cast<const char*>(v.mv_data) - kSubPageHeader, v.mv_size + kSubPageHeader};
  return View(v);  // a record, or a bucket's one entry (in the node itself)
}

struct Tree {
  uint64_t root = 0;
  int depth = 0;
};

Tree TreeOf(MDB_env* env, const char* table) {
  Reader reader(env);
  MDB_val k{std::strlen(table), const_cast<char*>(table)}, v;
  EXPECT_EQ(mdb_get(reader.txn(), reader.main(), &k, &v), 0);
  EXPECT_EQ(v.mv_size, 48u);
  Tree t;
  uint16_t depth = 0;
  std::memcpy(&depth, static_cast<const char*>(v.mv_data) + 6, 2);
  std::memcpy(&t.root, static_cast<const char*>(v.mv_data) + 40, 8);
  t.depth = depth;
  return t;
}

TEST(LeafPrefetcherTest, WalksToTheLeafLmdbReadsForEveryKey) {
  testing::TestDir dir;
  Env env(dir.path());
  const Filled filled = Fill(env.get(), 60000, 20000);
  Reader reader(env.get());
  MDB_txn* txn = reader.txn();
  const MDB_dbi main = reader.main(), b = reader.Open("buckets", kBucketFlags), r = reader.Open("records", 0);
  MapBase map;
  for (auto [table, dbi, keys] : {std::tuple{"buckets", b, &filled.bucket_keys}, std::tuple{"records", r, &filled.record_keys}}) {
    SCOPED_TRACE(table);
    MDB_stat st;
    ASSERT_EQ(mdb_stat(txn, dbi, &st), 0);
    ASSERT_GE(st.ms_depth, 3u) << "too small a tree to walk two branch levels";
    LeafPrefetcher prefetcher(txn, main, table, &map);
    ASSERT_TRUE(prefetcher.usable());
    EXPECT_EQ(prefetcher.leaf_pages(), st.ms_leaf_pages);
    std::vector<std::string_view> views;
    for (const std::string& key : *keys) {
      ASSERT_EQ(prefetcher.LeafOf(key), LmdbLeaf(txn, dbi, key));
      // The value it would load: a record where LMDB reads it (in the leaf or on its overflow
      // pages), or the page of a bucket's entries that LMDB hands out.
      const std::string_view value = prefetcher.ValueOf(key);
      ASSERT_FALSE(value.empty());
      const std::string_view lmdb = LmdbValue(txn, dbi, key, dbi == b);
      ASSERT_EQ(value.data(), lmdb.data());
      if (dbi == b) {
        ASSERT_GE(value.size(), lmdb.size()) << "a sub-page keeps room to grow";
      } else {
        ASSERT_EQ(value.size(), lmdb.size());
      }
      views.push_back(key);
    }
    EXPECT_EQ(prefetcher.Prefetch(views), views.size());
    // Walked in groups, each step interleaved over the group's keys, as Prefetch walks them.
    const std::vector<uint64_t> leaves = prefetcher.LeavesOf(views);
    const std::vector<std::string_view> values = prefetcher.ValuesOf(views);
    for (size_t i = 0; i < views.size(); ++i) {
      ASSERT_EQ(leaves[i], prefetcher.LeafOf(views[i])) << i;
      ASSERT_EQ(values[i].data(), prefetcher.ValueOf(views[i]).data()) << i;
    }
    // Keys that are not there still lead to a leaf: the one a put would start from.
    for (uint64_t i = 0; i < 1000; ++i) EXPECT_NE(prefetcher.LeafOf(Be(i * 7919, 5)), 0u);
  }
}

// Keys of 1 to 12 bytes, many of them prefixes of others and rich in 0x00 and 0xff bytes: the walk
// compares keys of up to 8 bytes as numbers (zero-padded, the shorter first on a tie) and longer
// ones byte by byte; either must order them as LMDB does.
TEST(LeafPrefetcherTest, KeysOfEveryLengthOrderAsLmdbOrdersThem) {
  testing::TestDir dir;
  Env env(dir.path());
  std::mt19937_64 rng(20261122);
  std::vector<std::string> keys;
  {
    MDB_txn* txn = nullptr;
    ASSERT_EQ(mdb_txn_begin(env.get(), nullptr, 0, &txn), 0);
    MDB_dbi names = 0;
    ASSERT_EQ(mdb_dbi_open(txn, "names", MDB_CREATE, &names), 0);
    const char bytes[] = {'\x00', '\x00', '\xff', '\xff', '\x01', '\x7f', '\x80', 'a'};
    for (int i = 0; i < 20000; ++i) {
      std::string key(1 + rng() % 12, '\0');
      for (char& c : key) c = rng() % 2 ? bytes[rng() % sizeof bytes] : static_cast<char>(rng());
      // Half of them are a prefix of a stored key or a stored key extended.
      if (!keys.empty() && rng() % 2) {
        const std::string& other = keys[rng() % keys.size()];
        key = rng() % 2 ? other.substr(0, 1 + rng() % other.size())
                        : other + key.substr(0, 1 + rng() % 4);
      }
      if (key.size() > 12) key.resize(12);
      std::string value(1 + rng() % 100, 'v');
      MDB_val k = Val(key), v = Val(value);
      ASSERT_EQ(mdb_put(txn, names, &k, &v, 0), 0);
      keys.push_back(key);
    }
    ASSERT_EQ(mdb_txn_commit(txn), 0);
  }
  Reader reader(env.get());
  const MDB_dbi names = reader.Open("names", 0);
  MDB_stat st;
  ASSERT_EQ(mdb_stat(reader.txn(), names, &st), 0);
  ASSERT_GE(st.ms_depth, 3u) << "too small a tree to walk two branch levels";
  MapBase map;
  LeafPrefetcher prefetcher(reader.txn(), reader.main(), "names", &map);
  ASSERT_TRUE(prefetcher.usable());
  std::shuffle(keys.begin(), keys.end(), rng);
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  const std::vector<uint64_t> leaves = prefetcher.LeavesOf(views);
  const std::vector<std::string_view> values = prefetcher.ValuesOf(views);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(leaves[i], LmdbLeaf(reader.txn(), names, keys[i])) << i;
    ASSERT_EQ(values[i].data(), LmdbValue(reader.txn(), names, keys[i], false).data()) << i;
  }
  // Keys that are not stored: found nowhere, each walk still ends on a leaf.
  std::vector<std::string> absent;
  for (const std::string& key : keys) {
    for (std::string other :
         {key + std::string(1, '\0'), key.substr(0, key.size() - 1) + "\xfe\xfe"}) {
      if (other.empty() || other.size() > 12) continue;
      MDB_val k = Val(other), v;
      if (mdb_get(reader.txn(), names, &k, &v) == MDB_NOTFOUND) absent.push_back(other);
    }
  }
  ASSERT_GT(absent.size(), 10000u);
  const std::vector<std::string_view> absent_views(absent.begin(), absent.end());
  const std::vector<uint64_t> absent_leaves = prefetcher.LeavesOf(absent_views);
  const std::vector<std::string_view> absent_values = prefetcher.ValuesOf(absent_views);
  for (size_t i = 0; i < absent.size(); ++i) {
    EXPECT_NE(absent_leaves[i], 0u) << i;
    EXPECT_TRUE(absent_values[i].empty()) << i;
  }
}

TEST(LeafPrefetcherTest, AOneLeafTreeIsItsOwnLeafAndAnEmptyOrMissingOneIsNotUsable) {
  testing::TestDir dir;
  Env env(dir.path());
  const Filled filled = Fill(env.get(), 5, 0);  // "records" stays empty
  Reader reader(env.get());
  MDB_txn* txn = reader.txn();
  const MDB_dbi main = reader.main(), b = reader.Open("buckets", kBucketFlags);
  MapBase map;
  LeafPrefetcher buckets(txn, main, "buckets", &map);
  ASSERT_TRUE(buckets.usable());
  EXPECT_EQ(buckets.leaf_pages(), 1u);
  for (const std::string& key : filled.bucket_keys) EXPECT_EQ(buckets.LeafOf(key), LmdbLeaf(txn, b, key));
  for (const char* table : {"records", "absent"}) {
    LeafPrefetcher none(txn, main, table, &map);
    EXPECT_FALSE(none.usable()) << table;
    EXPECT_EQ(none.leaf_pages(), 0u);
    EXPECT_EQ(none.LeafOf("abc"), 0u);
    std::string_view keys[] = {"abc"};
    EXPECT_EQ(none.Prefetch(keys), 0u);
  }
}

// Writes `bytes` at `offset` of the environment's data file.
void Patch(const std::string& dir, uint64_t offset, const void* bytes, size_t n) {
  std::fstream f(dir + "/data.mdb", std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
  ASSERT_TRUE(f.good());
}

TEST(LeafPrefetcherTest, APageThatDoesNotCheckOutStopsTheWalk) {
  testing::TestDir dir;
  Filled filled;
  Tree tree;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  std::string root_page(page, '\0');
  {
    Env env(dir.path());
    filled = Fill(env.get(), 0, 20000);
    tree = TreeOf(env.get(), "records");
  }
  ASSERT_GE(tree.depth, 3);
  {
    std::ifstream f(dir.path() + "/data.mdb", std::ios::binary);
    f.seekg(static_cast<std::streamoff>(tree.root * page));
    f.read(root_page.data(), static_cast<std::streamsize>(page));
  }
  // The root's node 1 now names a page far past the end of the file: the keys it leads to (from
  // its key to node 2's) find no leaf, the others still do.
  auto node_at = [&](size_t i) {
    uint16_t at = 0;
    std::memcpy(&at, root_page.data() + 16 + 2 * i, 2);
    return at;
  };
  auto key_of = [&](size_t i) {
    uint16_t size = 0;
    std::memcpy(&size, root_page.data() + node_at(i) + 6, 2);
    return std::string(root_page.data() + node_at(i) + 8, size);
  };
  uint16_t lower = 0;
  std::memcpy(&lower, root_page.data() + 12, 2);
  ASSERT_GE((lower - 16) / 2, 3) << "the root should have at least 3 children";
  const std::string from = key_of(1), to = key_of(2);
  const uint16_t far[3] = {0xffff, 0xffff, 0x00ff};
  Patch(dir.path(), tree.root * page + node_at(1), far, sizeof far);
  {
    Env env(dir.path(), MDB_RDONLY);
    Reader reader(env.get());
    MDB_txn* txn = reader.txn();
    const MDB_dbi main = reader.main();
    MapBase map;
    LeafPrefetcher prefetcher(txn, main, "records", &map);
    ASSERT_TRUE(prefetcher.usable());
    size_t stopped = 0;
    for (const std::string& key : filled.record_keys) {
      if (key >= from && key < to) {
        EXPECT_EQ(prefetcher.LeafOf(key), 0u);
        ++stopped;
      } else {
        EXPECT_NE(prefetcher.LeafOf(key), 0u);
      }
    }
    EXPECT_GT(stopped, 0u);
  }
  // The root no longer names itself: the tree is not walked at all.
  const uint64_t wrong = tree.root + 1;
  Patch(dir.path(), tree.root * page, &wrong, sizeof wrong);
  {
    Env env(dir.path(), MDB_RDONLY);
    Reader reader(env.get());
    MDB_txn* txn = reader.txn();
    const MDB_dbi main = reader.main();
    MapBase map;
    EXPECT_FALSE(LeafPrefetcher(txn, main, "records", &map).usable());
  }
}

// A bucket's entries as LMDB hands them out (MDB_GET_MULTIPLE: one array, in the map), and
// whether they are all of them (false for a nested tree, whose first page alone comes back).
std::string_view LmdbEntries(MDB_txn* txn, MDB_dbi dbi, const std::string& key, bool* whole) {
  MDB_cursor* c = nullptr;
  EXPECT_EQ(mdb_cursor_open(txn, dbi, &c), 0);
  MDB_val k = Val(key), v;
  size_t n = 0;
  EXPECT_EQ(mdb_cursor_get(c, &k, &v, MDB_SET_KEY), 0);
  EXPECT_EQ(mdb_cursor_count(c, &n), 0);
  EXPECT_EQ(mdb_cursor_get(c, &k, &v, MDB_GET_MULTIPLE), 0);
  mdb_cursor_close(c);
  *whole = v.mv_size == n * 12;
  return View(v);
}

// What Prefetch reports it found is what LMDB reads: for every inline bucket (of 1 to 30 entries)
// the very entries MDB_GET_MULTIPLE hands out, a nested bucket left to LMDB, and absent keys
// absent (or left to LMDB, past the last key of their leaf), never given entries.
TEST(LeafPrefetcherTest, FoundBucketsHoldTheEntriesLmdbHandsOut) {
  testing::TestDir dir;
  Env env(dir.path());
  Filled filled = Fill(env.get(), 60000, 0);
  const std::string nested = Be(0xabcdef, 3);
  {
    MDB_txn* txn = nullptr;
    ASSERT_EQ(mdb_txn_begin(env.get(), nullptr, 0, &txn), 0);
    MDB_dbi b = 0;
    ASSERT_EQ(mdb_dbi_open(txn, "buckets", kBucketFlags, &b), 0);
    for (uint64_t i = 0; i < 1200; ++i) {
      const std::string entry = Be(i * 7919, 8) + Be(i, 4);
      MDB_val k = Val(nested), v = Val(entry);
      ASSERT_EQ(mdb_put(txn, b, &k, &v, 0), 0);
    }
    ASSERT_EQ(mdb_txn_commit(txn), 0);
  }
  filled.bucket_keys.push_back(nested);
  Reader reader(env.get());
  MDB_txn* txn = reader.txn();
  const MDB_dbi b = reader.Open("buckets", kBucketFlags);
  MapBase map;
  LeafPrefetcher prefetcher(txn, reader.main(), "buckets", &map);
  ASSERT_TRUE(prefetcher.usable());
  const std::vector<std::string_view> views(filled.bucket_keys.begin(), filled.bucket_keys.end());
  std::vector<Found> found(views.size());
  ASSERT_EQ(prefetcher.Prefetch(views, found), views.size());
  size_t singles = 0, inline_pages = 0;
  for (size_t i = 0; i < views.size(); ++i) {
    bool whole = false;
    const std::string_view lmdb = LmdbEntries(txn, b, filled.bucket_keys[i], &whole);
    std::string_view entries;
    const bool settled = FixedDuplicates(found[i], 12, &entries);
    if (!whole) {
      ASSERT_EQ(filled.bucket_keys[i], nested);
      EXPECT_FALSE(settled) << "a nested tree is LMDB's to read";
      continue;
    }
    ASSERT_TRUE(settled) << i;
    ASSERT_EQ(entries.data(), lmdb.data()) << i;
    ASSERT_EQ(entries.size(), lmdb.size()) << i;
    singles += entries.size() == 12;
    inline_pages += entries.size() > 12;
    // The wrong entry size is refused, not cut.
    EXPECT_FALSE(FixedDuplicates(found[i], 8, &entries));
  }
  EXPECT_GT(singles, 1000u);
  EXPECT_GT(inline_pages, 50000u);
  // Keys not stored: absent, or unsettled; never entries.
  std::mt19937_64 rng(5);
  std::vector<std::string> absent;
  while (absent.size() < 20000) {
    std::string key = Be(rng() >> 40, 3);
    MDB_val k = Val(key), v;
    if (mdb_get(txn, b, &k, &v) == MDB_NOTFOUND) absent.push_back(std::move(key));
  }
  const std::vector<std::string_view> absent_views(absent.begin(), absent.end());
  std::vector<Found> absent_found(absent.size());
  prefetcher.Prefetch(absent_views, absent_found);
  size_t settled = 0;
  for (const Found& f : absent_found) {
    std::string_view entries = "x";
    if (FixedDuplicates(f, 12, &entries)) {
      ++settled;
      EXPECT_EQ(f.kind, Found::Kind::kAbsent);
      EXPECT_TRUE(entries.empty());
    }
  }
  EXPECT_GT(settled, absent.size() * 3 / 4);  // 91%: those past their leaf's last key are not
  // Without `found`, or with the prefetcher not usable, nothing is settled.
  EnableLeafPrefetch(false);
  LeafPrefetcher off(txn, reader.main(), "buckets", &map);
  EnableLeafPrefetch(true);
  std::vector<Found> none(views.size(), Found{Found::Kind::kAbsent, 0, {}});
  EXPECT_EQ(off.Prefetch(views, none), 0u);
  for (const Found& f : none) EXPECT_EQ(f.kind, Found::Kind::kUnknown);
}

// An inline page of duplicates whose header does not check out is left to LMDB: one not of the
// kind LEAF2 sub-page, one whose entries run past the node's value.
TEST(LeafPrefetcherTest, AnInlineBucketThatDoesNotCheckOutIsNotSettled) {
  testing::TestDir dir;
  std::vector<std::string> keys;
  std::vector<uint64_t> headers;  // file offsets of the first two buckets' sub-page headers
  {
    Env env(dir.path());
    const Filled filled = Fill(env.get(), 2000, 0);
    Reader reader(env.get());
    const MDB_dbi b = reader.Open("buckets", kBucketFlags);
    for (const std::string& key : filled.bucket_keys) {
      bool whole = false;
      const std::string_view entries = LmdbEntries(reader.txn(), b, key, &whole);
      if (!whole || entries.size() < 3 * 12) continue;
      uintptr_t begin = 0, end = 0;
      ASSERT_TRUE(MappingOf(entries.data(), &begin, &end));
      keys.push_back(key);
      headers.push_back(reinterpret_cast<uintptr_t>(entries.data()) - 16 - begin);
      if (keys.size() == 3) break;
    }
  }
  ASSERT_EQ(keys.size(), 3u);
  const uint16_t no_leaf2 = 0x02 | 0x40, far_lower = 0x7ff0;
  Patch(dir.path(), headers[0] + 10, &no_leaf2, sizeof no_leaf2);
  Patch(dir.path(), headers[1] + 12, &far_lower, sizeof far_lower);
  Env env(dir.path(), MDB_RDONLY);
  Reader reader(env.get());
  MapBase map;
  LeafPrefetcher prefetcher(reader.txn(), reader.main(), "buckets", &map);
  ASSERT_TRUE(prefetcher.usable());
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<Found> found(views.size());
  ASSERT_EQ(prefetcher.Prefetch(views, found), views.size());
  std::string_view entries;
  EXPECT_FALSE(FixedDuplicates(found[0], 12, &entries));
  EXPECT_FALSE(FixedDuplicates(found[1], 12, &entries));
  EXPECT_TRUE(FixedDuplicates(found[2], 12, &entries));
  EXPECT_GE(entries.size(), 3u * 12);
}

TEST(MapBaseTest, ConfirmsTheMapsStartAndRefusesAnythingElseForGood) {
  testing::TestDir dir;
  Env env(dir.path());
  Fill(env.get(), 10, 10);
  Reader reader(env.get());
  MDB_txn* txn = reader.txn();
  const MDB_dbi main = reader.main();
  MDB_val k{7, const_cast<char*>("records")}, v;
  ASSERT_EQ(mdb_get(txn, main, &k, &v), 0);
  uintptr_t begin = 0, end = 0;
  ASSERT_TRUE(MappingOf(v.mv_data, &begin, &end));
  MapBase good;
  EXPECT_TRUE(good.Confirm(begin, static_cast<const char*>(v.mv_data)));
  EXPECT_TRUE(good.Confirm(begin, static_cast<const char*>(v.mv_data)));
  MapBase bad;
  EXPECT_FALSE(bad.Confirm(begin + 4096, static_cast<const char*>(v.mv_data)));
  EXPECT_FALSE(bad.Confirm(begin, static_cast<const char*>(v.mv_data)));
  EXPECT_FALSE(LeafPrefetcher(txn, main, "records", &bad).usable());
  EXPECT_TRUE(LeafPrefetcher(txn, main, "records", &good).usable());
}

// The store's own trees, as the writer leaves them (with its comparator set): the sample buckets
// and the documents walk to LMDB's leaves.
TEST(LeafPrefetcherTest, WalksTheStoresSamplesAndDocuments) {
  testing::TestDir dir;
  const dedup::SketchParams params;
  std::vector<uint64_t> sample_values;
  {
    StoreOptions options;
    options.durable = false;
    options.write_buffer = false;  // every posting in the B-tree, where the walk looks
    auto store = std::move(Store::Open(dir.path(), options, params, 0x42)).value();
    const SweepId sweep = store->OpenSweep("s", 1).value().id;
    for (uint64_t batch = 0; batch < 20; ++batch) {
      std::vector<PageInput> pages;
      for (uint64_t j = batch * 500; j < (batch + 1) * 500; ++j) {
        PageInput p;
        p.url = "http://t/" + std::to_string(j);
        p.sweep = sweep;
        p.date = 1;
        p.sketch = testing::SyntheticSketch(params, testing::Variant(j * 1000, 200, 150, j));
        for (uint64_t value : p.sketch.sample.values) {
          if (IndexedSampleValue(value, p.sketch.sample.log2_modulus)) sample_values.push_back(value);
        }
        pages.push_back(std::move(p));
      }
      ASSERT_TRUE(store->Apply(pages).ok());
    }
  }
  Env env(dir.path(), MDB_RDONLY);
  Reader reader(env.get());
  MDB_txn* txn = reader.txn();
  const MDB_dbi main = reader.main(), samples = reader.Open("samples", kBucketFlags),
                documents = reader.Open("documents", 0);
  MapBase map;
  LeafPrefetcher by_bucket(txn, main, "samples", &map), by_doc(txn, main, "documents", &map);
  ASSERT_TRUE(by_bucket.usable());
  ASSERT_TRUE(by_doc.usable());
  MDB_stat st;
  ASSERT_EQ(mdb_stat(txn, samples, &st), 0);
  EXPECT_GE(st.ms_depth, 2u);
  for (uint64_t value : sample_values) {
    const std::string key(PostingKey(value).view());
    ASSERT_EQ(by_bucket.LeafOf(key), LmdbLeaf(txn, samples, key));
  }
  for (DocId doc = 1; doc <= 10000; ++doc) {
    const std::string key(Key64(doc).view());
    ASSERT_EQ(by_doc.LeafOf(key), LmdbLeaf(txn, documents, key));
  }
}

}  // namespace
}  // namespace shingled::store::internal
