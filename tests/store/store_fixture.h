// The fixture the store tests share: throw-away stores (no fsync; the crash test runs durable) in
// a temporary directory, pages with synthetic sketches, and Check's verdict.
#ifndef SHINGLED_TESTS_STORE_STORE_FIXTURE_H_
#define SHINGLED_TESTS_STORE_STORE_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "store/store.h"
#include "tests/store/synthetic.h"
#include "tests/store/test_dir.h"

namespace shingled::store::testing {

inline constexpr uint64_t kPolynomial = 0x1234567890abcdefull;

class StoreFixture : public ::testing::Test {
 protected:
  // The store in the directory `name` (under this test's directory); null, with a test failure,
  // if it does not open.
  std::unique_ptr<Store> OpenStore(StoreOptions options = {}, const std::string& name = "db") {
    options.durable = false;
    StatusOr<std::unique_ptr<Store>> s = Store::Open(dir_.Sub(name), options, params_, kPolynomial);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  PageInput Page(std::string url, SweepId sweep, int64_t date, const std::vector<uint64_t>& shingles,
                 uint64_t variant = 0) const {
    PageInput p;
    p.url = std::move(url);
    p.sweep = sweep;
    p.date = date;
    p.sketch = SyntheticSketch(params_, shingles, variant);
    return p;
  }
  static PageResult ApplyOne(Store& store, const PageInput& page) {
    StatusOr<std::vector<PageResult>> r = store.Apply(std::span(&page, 1));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)[0] : PageResult{};
  }
  // Every invariant `Store::Check` verifies holds.
  static void ExpectConsistent(const Store& store) {
    StatusOr<std::vector<std::string>> problems = store.Check();
    ASSERT_TRUE(problems.ok()) << problems.status().ToString();
    for (const std::string& p : *problems) ADD_FAILURE() << p;
  }

  TestDir dir_;
  dedup::SketchParams params_;
};

}  // namespace shingled::store::testing

#endif  // SHINGLED_TESTS_STORE_STORE_FIXTURE_H_
