// CompareBytes must order keys and duplicates exactly as LMDB's default comparator does: stores
// written with it are read by tools (and processes) that use the default.
#include "store/internal/lmdb.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/store/test_dir.h"

namespace shingled::store::internal {
namespace {

int Sign(int x) { return (x > 0) - (x < 0); }

// Pairs that stress the comparator: random bytes, shared prefixes that differ at one byte (in
// every position of the 8- and 4-byte steps and the tail), one a prefix of the other, equal.
std::vector<std::pair<std::string, std::string>> Pairs() {
  std::mt19937_64 rng(20261121);
  std::vector<std::pair<std::string, std::string>> out;
  auto random_bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  };
  for (size_t n = 0; n <= 24; ++n) {
    for (int rep = 0; rep < 200; ++rep) {
      std::string a = random_bytes(n);
      out.emplace_back(a, random_bytes(rng() % 25));
      out.emplace_back(a, a);
      if (n > 0) {
        std::string b = a;
        size_t at = rng() % n;
        b[at] = static_cast<char>(b[at] ^ (1u << (rng() % 8)));
        out.emplace_back(a, b);
        out.emplace_back(a, a.substr(0, rng() % n));
        out.emplace_back(a + random_bytes(1 + rng() % 8), a);
      }
    }
  }
  out.emplace_back(std::string("\x00\xff", 2), std::string("\x01\x00", 2));
  out.emplace_back(std::string(8, '\x7f') + "\x80", std::string(8, '\x7f') + "\x7f");
  return out;
}

TEST(CompareBytesTest, OrdersLikeLmdbsDefaultComparatorForKeysAndDuplicates) {
  testing::TestDir dir;
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  ASSERT_EQ(mdb_env_set_maxdbs(env, 2), 0);
  ASSERT_EQ(mdb_env_open(env, dir.path().c_str(), 0, 0644), 0);
  MDB_txn* txn = nullptr;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
  MDB_dbi plain = 0, dups = 0;
  ASSERT_EQ(mdb_dbi_open(txn, "plain", MDB_CREATE, &plain), 0);
  ASSERT_EQ(mdb_dbi_open(txn, "dups", MDB_CREATE | MDB_DUPSORT, &dups), 0);
  size_t checked = 0;
  for (const auto& [a, b] : Pairs()) {
    MDB_val x = Val(a), y = Val(b);
    const int ours = Sign(CompareBytes(&x, &y));
    ASSERT_EQ(ours, Sign(mdb_cmp(txn, plain, &x, &y))) << "keys of sizes " << a.size() << ", " << b.size();
    ASSERT_EQ(ours, Sign(mdb_dcmp(txn, dups, &x, &y))) << "duplicates of sizes " << a.size() << ", " << b.size();
    ASSERT_EQ(Sign(CompareBytes(&y, &x)), -ours);
    ++checked;
  }
  EXPECT_GT(checked, 20000u);
  mdb_txn_abort(txn);
  mdb_env_close(env);
}

}  // namespace
}  // namespace shingled::store::internal
