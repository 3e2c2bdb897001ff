// The change reports (store/reports.cc, docs/REPORTS.md): two and three sweeps with known edits,
// moves, births, deaths and URLs a sweep did not cover; every count and list against the truth.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "dedup/estimate.h"
#include "dedup/tokenizer.h"
#include "store/store.h"
#include "tests/store/store_fixture.h"

namespace shingled::store {
namespace {

using testing::Range;
using testing::Variant;

constexpr int64_t kT0 = 1700000000;
constexpr int64_t kDay = 86400;
constexpr uint64_t kN = 1000;  // shingles per page

// n shingles sharing `shared` with Range(base, n): resemblance shared / (2n - shared).
std::vector<uint64_t> Edited(uint64_t base, uint64_t shared, uint64_t fresh) {
  return Variant(base, kN, shared, fresh);
}

class ReportsTest : public testing::StoreConformance {
 protected:
  void SetUp() override {
    StoreConformance::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
  }

  void Apply(std::vector<PageInput> pages) {
    StatusOr<std::vector<PageResult>> r = store_->Apply(pages);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (const PageResult& p : *r) ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  }
  PageInput Http(std::string url, SweepId sweep, int64_t date, int http_status,
                 std::string target = {}) const {
    PageInput p = Page(std::move(url), sweep, date, {});
    p.http_status = http_status;
    p.redirect_target = std::move(target);
    return p;
  }

  // Every row of every kind, by URL.
  std::map<std::string, ChangeRow> AllRows(SweepId from, SweepId to) {
    std::map<std::string, ChangeRow> out;
    for (int k = 0; k < kChangeKinds; ++k) {
      Status s =
          store_->StreamChanges(from, to, static_cast<ChangeKind>(k), [&](const ChangeRow& r) {
            EXPECT_EQ(r.kind, static_cast<ChangeKind>(k));
            EXPECT_TRUE(out.emplace(r.url, r).second) << "listed twice: " << r.url;
            return OkStatus();
          });
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    return out;
  }

  // The resemblance band the store's estimator gives two synthetic pages.
  int BandOf(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) const {
    return ResemblanceBand(dedup::ResemblanceFromMinhashes(testing::SyntheticSketch(params_, a),
                                                           testing::SyntheticSketch(params_, b)));
  }

  std::unique_ptr<Store> store_;
};
SHINGLED_STORE_ENGINES(ReportsTest);

// Two sweeps: s1 on day 0 over a.example, b.example and c.example; s2 on day 10 over a.example
// and b.example only.
class TwoSweepsTest : public ReportsTest {
 protected:
  void SetUp() override {
    ReportsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const std::vector<std::string> s1_scope = {"http://a.example/", "http://b.example/",
                                               "http://c.example/"};
    s1_ = store_->OpenSweep("s1", kT0, s1_scope)->id;
    Apply({Page("http://a.example/same", s1_, kT0, Range(0, kN)),
           Page("http://a.example/edit-cosmetic", s1_, kT0, Range(10000, kN)),
           Page("http://a.example/edit-small", s1_, kT0, Range(20000, kN)),
           Page("http://a.example/edit-big", s1_, kT0, Range(30000, kN)),
           Page("http://a.example/rewritten", s1_, kT0, Range(40000, kN)),
           Page("http://a.example/old1", s1_, kT0, Range(50000, kN)),
           Page("http://a.example/old2", s1_, kT0, Range(60000, kN)),
           Page("http://a.example/old3", s1_, kT0, Range(70000, kN)),
           Page("http://a.example/dies", s1_, kT0, Range(80000, kN)),
           Page("http://a.example/copy-src", s1_, kT0, Range(90000, kN)),
           Page("http://a.example/copy-dst", s1_, kT0, Range(90000, kN), 1),
           Page("http://a.example/redirect-to-dead", s1_, kT0, Range(100000, kN)),
           Http("http://a.example/dead-both", s1_, kT0, 404),
           Page("http://c.example/outside", s1_, kT0, Range(110000, kN))});
    ASSERT_TRUE(store_->CloseSweep(s1_, kT0 + 1).ok());

    const int64_t t2 = kT0 + 10 * kDay;
    s2_ = store_->OpenSweep("s2", t2, {"http://a.example/", "http://b.example/"})->id;
    cosmetic_ = Edited(10000, 995, 1u << 30);
    small_ = Edited(20000, 933, (1u << 30) + 10000);
    big_ = Edited(30000, 788, (1u << 30) + 20000);
    rewritten_ = Edited(40000, 400, (1u << 30) + 30000);
    moved_edited_ = Edited(60000, 824, (1u << 30) + 40000);  // resemblance 0.7
    Apply({Page("http://a.example/same", s2_, t2, Range(0, kN)),
           Page("http://a.example/edit-cosmetic", s2_, t2, cosmetic_),
           Page("http://a.example/edit-small", s2_, t2, small_),
           Page("http://a.example/edit-big", s2_, t2, big_),
           Page("http://a.example/rewritten", s2_, t2, rewritten_),
           // Moved as it is, within the host: the old URL answers 404.
           Http("http://a.example/old1", s2_, t2, 404),
           Page("http://a.example/new1", s2_, t2, Range(50000, kN)),
           // Moved across hosts and edited: the old URL is not seen (gone at the close).
           Page("http://b.example/new2", s2_, t2, moved_edited_),
           // Moved with a redirect, to a page of other content.
           Http("http://a.example/old3", s2_, t2, 301, "http://a.example/new3"),
           Page("http://a.example/new3", s2_, t2, Range(120000, kN)),
           Http("http://a.example/dies", s2_, t2, 410),
           // Its content lives on at copy-dst, which did not change: not a new home.
           Http("http://a.example/copy-src", s2_, t2, 404),
           Page("http://a.example/copy-dst", s2_, t2, Range(90000, kN), 1),
           Http("http://a.example/redirect-to-dead", s2_, t2, 301, "http://a.example/nowhere"),
           Http("http://a.example/nowhere", s2_, t2, 404),
           Http("http://a.example/dead-both", s2_, t2, 404),
           Page("http://b.example/born", s2_, t2, Range(130000, kN))});
    ASSERT_TRUE(store_->CloseSweep(s2_, t2 + 1).ok());
  }

  // The truth of s1 -> s2.
  std::map<std::string, ChangeKind> Truth() const {
    return {{"http://a.example/same", ChangeKind::kUnchanged},
            {"http://a.example/edit-cosmetic", ChangeKind::kChanged},
            {"http://a.example/edit-small", ChangeKind::kChanged},
            {"http://a.example/edit-big", ChangeKind::kChanged},
            {"http://a.example/rewritten", ChangeKind::kChanged},
            {"http://a.example/old1", ChangeKind::kMoved},
            {"http://a.example/new1", ChangeKind::kMovedIn},
            {"http://a.example/old2", ChangeKind::kMoved},
            {"http://b.example/new2", ChangeKind::kMovedIn},
            {"http://a.example/old3", ChangeKind::kMoved},
            {"http://a.example/new3", ChangeKind::kMovedIn},
            {"http://a.example/dies", ChangeKind::kDied},
            {"http://a.example/copy-src", ChangeKind::kDied},
            {"http://a.example/copy-dst", ChangeKind::kUnchanged},
            {"http://a.example/redirect-to-dead", ChangeKind::kDied},
            {"http://a.example/nowhere", ChangeKind::kNotLive},
            {"http://a.example/dead-both", ChangeKind::kNotLive},
            {"http://c.example/outside", ChangeKind::kNotSeen},
            {"http://b.example/born", ChangeKind::kBorn}};
  }

  SweepId s1_ = 0, s2_ = 0;
  std::vector<uint64_t> cosmetic_, small_, big_, rewritten_, moved_edited_;
};
SHINGLED_STORE_ENGINES(TwoSweepsTest);

TEST_P(TwoSweepsTest, EveryUrlHasItsKind) {
  std::map<std::string, ChangeRow> rows = AllRows(s1_, s2_);
  std::map<std::string, ChangeKind> kinds;
  for (const auto& [url, row] : rows) kinds[url] = row.kind;
  EXPECT_EQ(kinds, Truth());
}

TEST_P(TwoSweepsTest, CountsEqualTheTruth) {
  StatusOr<ChangeReport> report = store_->ChangesBetween(s1_, s2_);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ChangeCounts want;
  for (const auto& [url, kind] : Truth()) want.Add(kind);
  want.moved_same_host = 2;   // old1 -> new1, old3 -> new3
  want.moved_other_host = 1;  // old2 -> b.example/new2
  want.moved_by_redirect = 1;
  // Each band's truth is the estimator's band of the two versions: they were made to fall in
  // the four bands, which the first check pins.
  EXPECT_EQ(BandOf(Range(10000, kN), cosmetic_), 0);
  EXPECT_EQ(BandOf(Range(20000, kN), small_), 1);
  EXPECT_EQ(BandOf(Range(30000, kN), big_), 2);
  EXPECT_EQ(BandOf(Range(40000, kN), rewritten_), 3);
  want.bands[0] = want.bands[1] = want.bands[2] = want.bands[3] = 1;
  const ChangeCounts& got = report->total;
  EXPECT_EQ(got.urls, 19u);
  EXPECT_EQ(got.unchanged, want.unchanged);
  EXPECT_EQ(got.changed, want.changed);
  EXPECT_EQ(got.moved, want.moved);
  EXPECT_EQ(got.moved_in, want.moved_in);
  EXPECT_EQ(got.born, want.born);
  EXPECT_EQ(got.died, want.died);
  EXPECT_EQ(got.not_seen, want.not_seen);
  EXPECT_EQ(got.not_live, want.not_live);
  EXPECT_TRUE(got == want);
  EXPECT_EQ(report->from.name, "s1");
  EXPECT_EQ(report->to.name, "s2");
}

TEST_P(TwoSweepsTest, PerHostCountsEqualTheTruth) {
  StatusOr<ChangeReport> report = store_->ChangesBetween(s1_, s2_);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  std::map<std::string, ChangeCounts> want;
  for (const auto& [url, kind] : Truth()) {
    const std::string host = url.substr(7, url.find('/', 7) - 7);
    want[host].Add(kind);
  }
  want["a.example"].moved_same_host = 2;
  want["a.example"].moved_other_host = 1;  // counted at the old URL's host
  want["a.example"].moved_by_redirect = 1;
  for (int b = 0; b < kResemblanceBands; ++b) want["a.example"].bands[b] = 1;
  ASSERT_EQ(report->hosts.size(), 3u);
  for (const HostChanges& h : report->hosts) {
    EXPECT_TRUE(h.counts == want[h.host]) << h.host << ": urls " << h.counts.urls << " moved "
                                          << h.counts.moved << " born " << h.counts.born;
  }
  EXPECT_EQ(report->hosts[0].host, "a.example");
  EXPECT_EQ(report->hosts[1].host, "b.example");
  EXPECT_EQ(report->hosts[2].host, "c.example");
}

TEST_P(TwoSweepsTest, MovesSayWhereAndWhy) {
  std::map<std::string, ChangeRow> rows = AllRows(s1_, s2_);
  const ChangeRow& m1 = rows["http://a.example/old1"];
  EXPECT_EQ(m1.new_url, "http://a.example/new1");
  EXPECT_EQ(m1.evidence, "same_content");
  EXPECT_EQ(m1.resemblance, 1.0);
  EXPECT_TRUE(m1.same_host);
  EXPECT_EQ(m1.new_doc, m1.from_doc);

  const ChangeRow& m2 = rows["http://a.example/old2"];
  EXPECT_EQ(m2.new_url, "http://b.example/new2");
  EXPECT_EQ(m2.evidence, "resemblance");
  EXPECT_FALSE(m2.same_host);
  EXPECT_NEAR(m2.resemblance, 0.7, 0.15);
  EXPECT_NE(m2.new_doc, 0u);

  const ChangeRow& m3 = rows["http://a.example/old3"];
  EXPECT_EQ(m3.new_url, "http://a.example/new3");
  EXPECT_EQ(m3.evidence, "redirect");
  EXPECT_TRUE(m3.same_host);

  const ChangeRow& changed = rows["http://a.example/edit-small"];
  EXPECT_NE(changed.from_doc, changed.to_doc);
  EXPECT_EQ(ResemblanceBand(changed.resemblance), 1);
  // Same words in other bytes: another document with the same sketch, resemblance 1.
  EXPECT_EQ(rows["http://a.example/copy-dst"].resemblance, 1.0);
}

TEST_P(TwoSweepsTest, PagesNeitherRepeatNorSkip) {
  for (size_t limit : {1u, 2u, 3u, 100u}) {
    for (int k = 0; k < kChangeKinds; ++k) {
      const auto kind = static_cast<ChangeKind>(k);
      std::vector<std::string> whole;
      ASSERT_TRUE(store_
                      ->StreamChanges(s1_, s2_, kind,
                                      [&](const ChangeRow& r) {
                                        whole.push_back(r.url);
                                        return OkStatus();
                                      })
                      .ok());
      std::vector<std::string> paged;
      ChangeListOptions options;
      options.kind = kind;
      options.limit = limit;
      for (int pages = 0; pages < 100; ++pages) {
        StatusOr<ChangeList> page = store_->ListChanges(s1_, s2_, options);
        ASSERT_TRUE(page.ok()) << page.status().ToString();
        EXPECT_LE(page->rows.size(), limit);
        UrlId last = options.after;
        for (const ChangeRow& r : page->rows) {
          EXPECT_GT(r.url_id, last);  // in id order
          last = r.url_id;
          paged.push_back(r.url);
        }
        if (page->next_after == 0) break;
        EXPECT_EQ(page->next_after, page->rows.back().url_id);
        options.after = page->next_after;
      }
      EXPECT_EQ(paged, whole) << ChangeKindName(kind) << " limit " << limit;
    }
  }
}

TEST_P(TwoSweepsTest, ANewUrlIsListedOnTheNextPage) {
  ChangeListOptions options;
  options.kind = ChangeKind::kBorn;
  options.limit = 1;
  StatusOr<ChangeList> first = store_->ListChanges(s1_, s2_, options);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->rows.size(), 1u);
  EXPECT_EQ(first->next_after, 0u);
  // A URL stored between two pages has a larger id: a page after the last row finds it.
  const int64_t t3 = kT0 + 20 * kDay;
  ASSERT_TRUE(store_->ReopenSweep(s2_).ok());
  Apply({Page("http://b.example/late", s2_, t3, Range(140000, kN))});
  options.after = first->rows[0].url_id;
  StatusOr<ChangeList> next = store_->ListChanges(s1_, s2_, options);
  ASSERT_TRUE(next.ok());
  ASSERT_EQ(next->rows.size(), 1u);
  EXPECT_EQ(next->rows[0].url, "http://b.example/late");
}

TEST_P(TwoSweepsTest, BadArguments) {
  EXPECT_EQ(store_->ChangesBetween(s1_, s1_).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ChangesBetween(s1_, 99).status().code(), StatusCode::kNotFound);
  ChangeListOptions zero;
  zero.limit = 0;
  EXPECT_EQ(store_->ListChanges(s1_, s2_, zero).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ChangeKindFromName("moved"), ChangeKind::kMoved);
  EXPECT_FALSE(ChangeKindFromName("teleported").has_value());
}

TEST_P(TwoSweepsTest, ProgressCountsTheUrlsWalked) {
  std::atomic<uint64_t> walked{0};
  ASSERT_TRUE(store_->ChangesBetween(s1_, s2_, ReportProgress{&walked}).ok());
  // Two walks over the 19 URLs.
  EXPECT_EQ(walked.load(), 38u);
}

// A third sweep: the series has one interval per consecutive pair, each equal to the pair's
// report; lifetimes and changes per URL over all versions.
TEST_P(TwoSweepsTest, ThreeSweepsMakeASeries) {
  const int64_t t3 = kT0 + 40 * kDay;
  SweepId s3 = store_->OpenSweep("s3", t3, {"http://a.example/", "http://b.example/"})->id;
  Apply({Page("http://a.example/same", s3, t3, Range(0, kN)),
         Page("http://a.example/edit-cosmetic", s3, t3, Range(10000, kN)),  // back again
         Page("http://a.example/edit-small", s3, t3, small_),
         Page("http://a.example/edit-big", s3, t3, big_),
         Page("http://a.example/rewritten", s3, t3, rewritten_),
         Page("http://a.example/new1", s3, t3, Range(50000, kN)),
         Page("http://b.example/new2", s3, t3, moved_edited_),
         Page("http://a.example/new3", s3, t3, Range(120000, kN)),
         Page("http://a.example/copy-dst", s3, t3, Range(90000, kN), 1),
         Http("http://b.example/born", s3, t3, 404)});
  ASSERT_TRUE(store_->CloseSweep(s3, t3 + 1).ok());

  StatusOr<ChangeHistory> history = store_->ChangesOverSweeps();
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->intervals.size(), 2u);
  EXPECT_EQ(history->intervals[0].from.name, "s1");
  EXPECT_EQ(history->intervals[0].to.name, "s2");
  EXPECT_EQ(history->intervals[1].from.name, "s2");
  EXPECT_EQ(history->intervals[1].to.name, "s3");
  EXPECT_TRUE(history->intervals[0].counts == store_->ChangesBetween(s1_, s2_)->total);
  const ChangeCounts second = store_->ChangesBetween(s2_, s3)->total;
  EXPECT_TRUE(history->intervals[1].counts == second);
  EXPECT_EQ(second.unchanged, 8u);  // same, edit-*, rewritten, new1..3, copy-dst but cosmetic
  EXPECT_EQ(second.changed, 1u);    // edit-cosmetic
  EXPECT_EQ(second.died, 1u);       // born
  EXPECT_EQ(second.moved, 0u);

  // 19 URLs; nowhere and dead-both never lived.
  EXPECT_EQ(history->urls, 19u);
  EXPECT_EQ(history->never_live, 2u);
  auto count = [](const std::vector<Bucket>& buckets, const std::string& label) {
    for (const Bucket& b : buckets) {
      if (b.label == label) return b.count;
    }
    ADD_FAILURE() << "no bucket " << label;
    return uint64_t{0};
  };
  // Died on day 10 after living from day 0: old1, old2 (gone at s2's close), old3, dies,
  // copy-src, redirect-to-dead; born lived from day 10 to day 40.
  EXPECT_EQ(count(history->lifetimes_dead, "7-30 days"), 6u);
  EXPECT_EQ(count(history->lifetimes_dead, "30-90 days"), 1u);
  // Alive: same, edit-*, rewritten, copy-dst from day 0 to 40, new1..3 from day 10 to 40;
  // outside seen on day 0 only.
  EXPECT_EQ(count(history->lifetimes_alive, "30-90 days"), 9u);
  EXPECT_EQ(count(history->lifetimes_alive, "under 1 day"), 1u);
  EXPECT_EQ(count(history->lifetimes_alive, "7-30 days"), 0u);
  // Changes: edit-cosmetic changed twice; edit-small, edit-big, rewritten once.
  EXPECT_EQ(count(history->changes_per_url, "2"), 1u);
  EXPECT_EQ(count(history->changes_per_url, "1"), 3u);
  EXPECT_EQ(count(history->changes_per_url, "0"), 13u);
}

// Real sketches: a page moved to another folder and edited there (headers and links rewritten)
// is found by its content.
std::string Text(uint32_t seed, int words) {
  static const char* kVocabulary[] = {
      "the",      "crawler", "fetched", "page", "archive", "near",   "sketch", "shingle", "web",
      "document", "sweep",   "found",   "lost", "link",    "server", "quick",  "brown",   "fox",
      "jumps",    "over",    "lazy",    "dog",  "river",   "winter", "summer"};
  std::mt19937 rng(seed);
  std::string out;
  for (int i = 0; i < words; ++i) {
    out += kVocabulary[rng() % std::size(kVocabulary)];
    out += (i % 17 == 16) ? ". " : " ";
  }
  return out;
}

TEST_P(ReportsTest, RealSketchesFindAnEditedMove) {
  auto ctx = dedup::SketchContext::Create(params_);
  ASSERT_TRUE(ctx.ok());
  auto sketch = [&](const std::string& text) {
    dedup::Sketcher sketcher(**ctx);
    dedup::Tokenizer tokenizer(&sketcher);
    sketcher.AddRawBytes(text);
    tokenizer.Feed(text);
    tokenizer.Finish();
    return sketcher.Finish();
  };
  store_.reset();
  auto opened = OpenStore({}, "real");
  ASSERT_NE(opened, nullptr);
  Store& store = *opened;
  const std::string body = Text(7, 2000);
  // The new version: a new header, a paragraph rewritten, a new footer.
  const std::string edited =
      Text(8, 150) + body.substr(0, 6000) + Text(9, 300) + body.substr(8000) + Text(10, 150);
  auto page = [&](const std::string& url, SweepId sweep, int64_t date, const std::string& text,
                  int status = 200) {
    PageInput p;
    p.url = url;
    p.sweep = sweep;
    p.date = date;
    p.http_status = status;
    if (status == 200) p.sketch = sketch(text);
    return p;
  };
  SweepId s1 = store.OpenSweep("s1", kT0, {"https://docs.example/"})->id;
  std::vector<PageInput> first = {
      page("https://docs.example/guide/install", s1, kT0, body),
      page("https://docs.example/guide/other", s1, kT0, Text(11, 2000))};
  ASSERT_TRUE(store.Apply(first).ok());
  ASSERT_TRUE(store.CloseSweep(s1, kT0 + 1).ok());
  SweepId s2 = store.OpenSweep("s2", kT0 + kDay, {"https://docs.example/"})->id;
  std::vector<PageInput> second = {
      page("https://docs.example/v2/setup/install", s2, kT0 + kDay, edited),
      page("https://docs.example/guide/other", s2, kT0 + kDay, Text(11, 2000))};
  ASSERT_TRUE(store.Apply(second).ok());
  ASSERT_TRUE(store.CloseSweep(s2, kT0 + kDay + 1).ok());
  // The similarity query's resemblance is the verification samples' estimate.
  const double truth = dedup::ResemblanceFromVerifySample(sketch(body).verify_sample,
                                                          sketch(edited).verify_sample, 256)
                           .resemblance;
  ASSERT_LT(truth, 0.9);  // not in the old page's cluster under the default relations
  ASSERT_GT(truth, 0.5);

  StatusOr<ChangeReport> report = store.ChangesBetween(s1, s2);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->total.moved, 1u);
  EXPECT_EQ(report->total.moved_in, 1u);
  EXPECT_EQ(report->total.unchanged, 1u);
  EXPECT_EQ(report->total.born, 0u);
  EXPECT_EQ(report->total.died, 0u);
  ChangeListOptions moved;
  moved.kind = ChangeKind::kMoved;
  StatusOr<ChangeList> list = store.ListChanges(s1, s2, moved);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->rows.size(), 1u);
  EXPECT_EQ(list->rows[0].url, "https://docs.example/guide/install");
  EXPECT_EQ(list->rows[0].new_url, "https://docs.example/v2/setup/install");
  EXPECT_DOUBLE_EQ(list->rows[0].resemblance, truth);
}

}  // namespace
}  // namespace shingled::store
