// The verification sample (dedup), its table (format 10) and the writer's and the
// queries' use of it, through the real store; and candidates beyond max_candidates, counted.
#include <gtest/gtest.h>
#include <lmdb.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "dedup/estimate.h"
#include "dedup/sketch.h"
#include "dedup/tokenizer.h"
#include "store/internal/codec.h"
#include "store/internal/lmdb.h"
#include "store/store.h"
#include "tests/store/store_fixture.h"

namespace shingled::store {
namespace {

// `words` words from a vocabulary large enough that every shingle of the text is distinct.
std::vector<std::string> Words(uint32_t seed, int words) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < words; ++i) out.push_back("w" + std::to_string(rng() % 10000000));
  return out;
}

// `base` with `edits` words replaced at random places (seeded).
std::string Edited(const std::vector<std::string>& base, int edits, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> copy = base;
  for (int e = 0; e < edits; ++e)
    copy[rng() % copy.size()] = "x" + std::to_string(rng() % 10000000);
  std::string out;
  for (const std::string& w : copy) {
    out.append(w);
    out.push_back(' ');
  }
  return out;
}

class VerifyTest : public testing::StoreConformance {
 protected:
  void SetUp() override {
    StoreConformance::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto ctx = dedup::SketchContext::Create(params_);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    context_ = *ctx;
  }

  dedup::Sketch SketchText(const std::string& text, size_t piece = 0) {
    dedup::Sketcher sketcher(*context_);
    dedup::Tokenizer tokenizer(&sketcher);
    sketcher.AddRawBytes(text);
    if (piece == 0) {
      tokenizer.Feed(text);
    } else {
      for (size_t i = 0; i < text.size(); i += piece)
        tokenizer.Feed(std::string_view(text).substr(i, piece));
    }
    tokenizer.Finish();
    return sketcher.Finish();
  }

  // The store with `params` (null: the fixture's), or null with the error in last_open_.
  std::unique_ptr<Store> Open(const StoreOptions& o = {},
                              const dedup::SketchParams* params = nullptr) {
    const dedup::SketchParams made = params_;
    if (params != nullptr) params_ = *params;
    auto s = TryOpenStore(o, "db");
    params_ = made;
    if (!s.ok()) {
      last_open_ = s.status();
      return nullptr;
    }
    auto sweep = (*s)->FindSweep("s");
    sweep_ = sweep.ok() ? sweep->id : (*s)->OpenSweep("s", 1)->id;
    return std::move(s).value();
  }

  PageResult Ingest(Store& store, const std::string& url, const std::string& text) {
    PageInput p;
    p.url = url;
    p.sweep = sweep_;
    p.date = 1;
    p.sketch = SketchText(text);
    auto r = store.Apply(std::span(&p, 1));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)[0] : PageResult{};
  }

  std::shared_ptr<const dedup::SketchContext> context_;
  SweepId sweep_ = 0;
  Status last_open_;
};
SHINGLED_STORE_ENGINES(VerifyTest);

// LMDB only: edits the store's files (an older format).
class LmdbVerifyTest : public VerifyTest {};
SHINGLED_STORE_LMDB_ONLY(LmdbVerifyTest);

// The sample is the bottom-k of the distinct shingles: sorted, distinct, k values for a long
// page, one per distinct shingle for a short one, whatever pieces the text arrives in; equal for
// equal shingle sets.
TEST_P(VerifyTest, SampleIsBottomKOfTheDistinctShingles) {
  const std::vector<std::string> words = Words(1, 5000);
  const std::string text = Edited(words, 0, 0);
  const dedup::Sketch a = SketchText(text);
  ASSERT_EQ(a.verify_sample.size(), 256u);
  EXPECT_TRUE(std::is_sorted(a.verify_sample.begin(), a.verify_sample.end()));
  EXPECT_EQ(std::set<uint32_t>(a.verify_sample.begin(), a.verify_sample.end()).size(), 256u);
  EXPECT_EQ(SketchText(text, 7).verify_sample, a.verify_sample);
  EXPECT_EQ(SketchText(text + text).verify_sample.size(), 256u);
  // 100 words: 93 distinct shingles, all kept; the same 93 shingles repeated keep 93.
  const std::string short_text = Edited(Words(2, 100), 0, 0);
  EXPECT_EQ(SketchText(short_text).verify_sample.size(), 93u);
  const dedup::VerifyEstimate same = dedup::ResemblanceFromVerifySample(
      SketchText(short_text).verify_sample, SketchText(short_text + short_text).verify_sample, 256);
  EXPECT_TRUE(same.exact);
  // The doubled text adds the 7 shingles across the join: J = 93 / 100, exactly.
  EXPECT_DOUBLE_EQ(same.resemblance, 0.93);
  // Off: no sample.
  dedup::SketchParams off;
  off.verify_sample_size = 0;
  auto ctx = dedup::SketchContext::Create(off);
  ASSERT_TRUE(ctx.ok());
  dedup::Sketcher sketcher(**ctx);
  dedup::Tokenizer tokenizer(&sketcher);
  tokenizer.Feed(text);
  tokenizer.Finish();
  EXPECT_TRUE(sketcher.Finish().verify_sample.empty());
  off.verify_sample_size = 8;
  EXPECT_FALSE(off.Validate().ok());
  off.verify_sample_size = 481;
  EXPECT_FALSE(off.Validate().ok());
}

// The estimate: exact when the union has fewer than k values, the bottom-k share otherwise;
// the stated standard error and the decision.
TEST_P(VerifyTest, EstimateAndDecision) {
  std::vector<uint32_t> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<uint32_t> b = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11};
  dedup::VerifyEstimate e = dedup::ResemblanceFromVerifySample(a, b, 256);
  EXPECT_TRUE(e.exact);
  EXPECT_DOUBLE_EQ(e.resemblance, 9.0 / 11.0);
  EXPECT_EQ(e.sampled, 11u);
  EXPECT_EQ(dedup::VerifyStandardError(e, 0.9), 0.0);
  EXPECT_FALSE(dedup::Verified(e, 0.9));  // 0.818 exactly: below the threshold
  EXPECT_TRUE(dedup::Verified(e, 0.8));
  // k = 4: the union's 4 smallest are 1..4, all in both.
  e = dedup::ResemblanceFromVerifySample(a, b, 4);
  EXPECT_FALSE(e.exact);
  EXPECT_EQ(e.sampled, 4u);
  EXPECT_DOUBLE_EQ(e.resemblance, 1.0);
  // Long pages: the standard error at 0.9 is sqrt(0.09 / 256) but for the union's finite size.
  const std::vector<std::string> words = Words(3, 20000);
  const dedup::Sketch x = SketchText(Edited(words, 0, 0));
  const dedup::Sketch y = SketchText(Edited(words, 200, 4));
  e = dedup::ResemblanceFromVerifySample(x.verify_sample, y.verify_sample, 256);
  EXPECT_FALSE(e.exact);
  EXPECT_EQ(e.sampled, 256u);
  EXPECT_NEAR(e.union_size, 21000, 4000);  // ~20,000 shingles and ~1,500 of the edits' own
  EXPECT_NEAR(dedup::VerifyStandardError(e, 0.9), std::sqrt(0.09 / 256), 0.001);
  EXPECT_NEAR(e.resemblance, 18400.0 / 21600.0, 4 * std::sqrt(0.15 * 0.85 / 256));
  // An empty sample resembles nothing.
  EXPECT_EQ(dedup::ResemblanceFromVerifySample({}, a, 256).resemblance, 0.0);
}

// The writer: a copy at J ~0.95 is "verified" (and clustered), one at ~0.7 is not; the answer
// says where the resemblance comes from; Check accepts the table.
TEST_P(VerifyTest, WriterDecidesWithTheSample) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  const std::vector<std::string> words = Words(5, 3000);
  const PageResult base = Ingest(*store, "http://a/", Edited(words, 0, 0));
  EXPECT_EQ(base.verdict, Verdict::kNew);
  // 8 edits of 3,000 words: ~64 of 3,000 shingles differ, J ~0.96.
  const PageResult near = Ingest(*store, "http://b/", Edited(words, 8, 1));
  EXPECT_EQ(near.verdict, Verdict::kNearDuplicate);
  ASSERT_FALSE(near.matches.empty());
  EXPECT_EQ(near.matches[0].relation, Relation::kVerified);
  EXPECT_EQ(near.matches[0].resemblance_from, ResemblanceSource::kVerifySample);
  EXPECT_GT(near.matches[0].resemblance, 0.9);
  EXPECT_GT(near.matches[0].resemblance_error, 0.0);
  EXPECT_EQ(near.cluster, base.cluster);
  // 60 edits: ~480 shingles differ, J ~0.72: similar (>= 0.5), not verified, not clustered.
  const PageResult far = Ingest(*store, "http://c/", Edited(words, 60, 2));
  EXPECT_EQ(far.verdict, Verdict::kNew);
  for (const Match& m : far.matches) EXPECT_NE(m.relation, Relation::kVerified);
  EXPECT_NE(far.cluster, base.cluster);
  // The paper's filter as the clustering relation instead: no "verified" match joins.
  auto problems = store->Check();
  ASSERT_TRUE(problems.ok());
  EXPECT_TRUE(problems->empty()) << (*problems)[0];
  // The similar query reports the verification estimate.
  auto similar = store->SimilarToUrl("http://a/", QueryOptions{});
  ASSERT_TRUE(similar.ok());
  ASSERT_FALSE(similar->empty());
  EXPECT_EQ((*similar)[0].resemblance_from, ResemblanceSource::kVerifySample);
}

// A store of format 9 (this code's, with its table and param taken out) opens as format 10: old
// documents have no sample and are judged from the minhashes, and the answer says so; new ones
// get theirs. Another k is refused.
TEST_P(LmdbVerifyTest, Format9IsUpgradedAndOtherKRefused) {
  const std::vector<std::string> words = Words(7, 2000);
  {
    // As a format 9 store had it: every `chunk_docs` posting in the B-tree.
    StoreOptions unbuffered;
    unbuffered.write_buffer = false;
    auto store = Open(unbuffered);
    ASSERT_NE(store, nullptr);
    Ingest(*store, "http://a/", Edited(words, 0, 0));
  }
  {
    MDB_env* env = nullptr;
    ASSERT_EQ(mdb_env_create(&env), 0);
    ASSERT_EQ(mdb_env_set_maxdbs(env, 32), 0);
    ASSERT_EQ(mdb_env_open(env, dir_.Sub("db").c_str(), 0, 0644), 0);
    MDB_txn* txn = nullptr;
    ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
    MDB_dbi meta = 0, samples = 0;
    ASSERT_EQ(mdb_dbi_open(txn, "meta", 0, &meta), 0);
    ASSERT_EQ(mdb_dbi_open(txn, "verify_samples", 0, &samples), 0);
    ASSERT_EQ(mdb_drop(txn, samples, 1), 0);
    std::string nine;
    internal::AppendLE64(&nine, 9);
    MDB_val k = internal::Val("format_version"), v = internal::Val(nine);
    ASSERT_EQ(mdb_put(txn, meta, &k, &v, 0), 0);
    MDB_val pk = internal::Val("param.verify_sample_size");
    ASSERT_EQ(mdb_del(txn, meta, &pk, nullptr), 0);
    ASSERT_EQ(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
  }
  {
    auto store = Open();
    ASSERT_NE(store, nullptr) << last_open_.ToString();
    const PageResult near = Ingest(*store, "http://b/", Edited(words, 4, 1));
    ASSERT_FALSE(near.matches.empty());
    EXPECT_EQ(near.matches[0].resemblance_from, ResemblanceSource::kMinhashes);
    EXPECT_EQ(near.matches[0].relation, Relation::kVerified);  // J ~0.97: minhashes say so too
    const PageResult newer = Ingest(*store, "http://c/", Edited(words, 4, 2));
    bool from_sample = false;
    for (const Match& m : newer.matches) {
      if (m.doc == near.doc) from_sample = m.resemblance_from != ResemblanceSource::kMinhashes;
    }
    EXPECT_TRUE(from_sample);
    auto problems = store->Check();
    ASSERT_TRUE(problems.ok());
    EXPECT_TRUE(problems->empty()) << (*problems)[0];
  }
  dedup::SketchParams other;
  other.verify_sample_size = 128;
  EXPECT_EQ(Open({}, &other), nullptr);
  EXPECT_EQ(last_open_.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(last_open_.message().find("verify_sample_size"), std::string::npos)
      << last_open_.ToString();
}

// The 2-of-6 relation stays available: with cluster_relations exact + fungible, a match that
// joins says "fungible" even where the sample would verify it.
TEST_P(VerifyTest, PaperRelationIsASetting) {
  StoreOptions o;
  o.cluster_relations = kClusterExact | kClusterFungible;
  auto store = Open(o);
  ASSERT_NE(store, nullptr);
  const std::vector<std::string> words = Words(9, 3000);
  const PageResult base = Ingest(*store, "http://a/", Edited(words, 0, 0));
  const PageResult copy = Ingest(*store, "http://b/", Edited(words, 1, 1));  // J ~0.995
  ASSERT_FALSE(copy.matches.empty());
  EXPECT_EQ(copy.matches[0].relation, Relation::kFungible);
  EXPECT_EQ(copy.cluster, base.cluster);
  o.verified_threshold = 0;
  store.reset();
  EXPECT_EQ(Open(o), nullptr);
  EXPECT_EQ(last_open_.code(), StatusCode::kInvalidArgument);
}

// The match order: the exact levels, then verified, fungible, similar, whatever the
// resemblances. Features of 4 minhashes and r = 1 make a copy at J ~0.75 fungible (6 groups each
// agreeing with probability 0.75^4: ~0.9 that one does) though far from verified.
TEST_P(VerifyTest, VerifiedMatchesComeBeforeFungibleOnes) {
  dedup::SketchParams p;
  p.group_size = 4;
  p.fungible_threshold = 1;
  auto store = Open({}, &p);
  ASSERT_NE(store, nullptr) << last_open_.ToString();
  auto ctx = dedup::SketchContext::Create(p);
  ASSERT_TRUE(ctx.ok());
  context_ = *ctx;
  const std::vector<std::string> words = Words(13, 3000);
  // 40 edits: ~320 of 3,000 shingles differ, J ~0.8 with the page (~0.75 with the base).
  const PageResult loose = Ingest(*store, "http://loose/", Edited(words, 40, 1));
  const PageResult close = Ingest(*store, "http://close/", Edited(words, 3, 2));
  const PageResult page = Ingest(*store, "http://page/", Edited(words, 3, 3));
  std::vector<std::pair<DocId, Relation>> order;
  for (const Match& m : page.matches) order.emplace_back(m.doc, m.relation);
  const std::vector<std::pair<DocId, Relation>> want = {{close.doc, Relation::kVerified},
                                                        {loose.doc, Relation::kFungible}};
  EXPECT_EQ(order, want);  // before the fix: fungible first
}

// Pages of one site share its header and footer, and through them one or two sample values: on
// both engines such a candidate is not scored (candidates_below_floor), and a page that
// resembles another at ~0.6 still lists it.
TEST_P(VerifyTest, PagesThatShareOnlyASitesTemplateAreNotScored) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  const std::vector<std::string> header = Words(1, 30), footer = Words(2, 15);
  auto text = [&](const std::vector<std::string>& body) {
    std::string out;
    for (const auto* part : {&header, &body, &footer}) {
      for (const std::string& w : *part) out.append(w).push_back(' ');
    }
    return out;
  };
  for (int i = 0; i < 60; ++i) {
    Ingest(*store, "http://site.example/" + std::to_string(i), text(Words(100 + i, 600)));
  }
  const PageResult next = Ingest(*store, "http://site.example/next", text(Words(99, 600)));
  EXPECT_EQ(next.verdict, Verdict::kNew);
  EXPECT_TRUE(next.matches.empty());
  EXPECT_GE(next.candidates_below_floor, 20u);

  int missed = 0;
  for (int i = 0; i < 20; ++i) {
    const std::vector<std::string> a = Words(500 + i, 400);
    std::vector<std::string> b = a;
    const std::vector<std::string> tail = Words(900 + i, 100);
    std::copy(tail.begin(), tail.end(), b.end() - 100);
    const DocId first = Ingest(*store, "http://site.example/a" + std::to_string(i), text(a)).doc;
    const PageResult second = Ingest(*store, "http://site.example/b" + std::to_string(i), text(b));
    missed += std::none_of(second.matches.begin(), second.matches.end(),
                           [&](const Match& m) { return m.doc == first; });
  }
  EXPECT_EQ(missed, 0);
}

// More candidates than max_candidates: the answer says how many were left out, and the ones
// scored are the best (the most shared index entries): 5 near copies among 15 weaker ones.
TEST_P(VerifyTest, CandidatesBeyondTheLimitAreCountedAndTheBestScored) {
  StoreOptions o;
  o.max_candidates = 5;
  o.similar_threshold = 0.05;  // every candidate scored is a match: the matches show which were
  auto store = Open(o);
  ASSERT_NE(store, nullptr);
  const std::vector<std::string> words = Words(11, 3000);
  std::set<DocId> strong, weak;
  for (int i = 0; i < 15; ++i) {
    // 400 edits: J ~0.2, candidates through shared sample values.
    weak.insert(
        Ingest(*store, "http://weak/" + std::to_string(i), Edited(words, 400, 100 + i)).doc);
  }
  for (int i = 0; i < 5; ++i) {
    strong.insert(
        Ingest(*store, "http://strong/" + std::to_string(i), Edited(words, 5, 200 + i)).doc);
  }
  const PageResult page = Ingest(*store, "http://page/", Edited(words, 3, 300));
  EXPECT_TRUE(page.candidates_truncated);
  EXPECT_EQ(page.candidates_left_out, 15u);
  std::set<DocId> scored;
  for (const Match& m : page.matches) scored.insert(m.doc);
  // The strong ones may have joined one cluster, but each is scored on its own.
  EXPECT_EQ(scored, strong);

  // The similar query: the same count.
  uint64_t left_out = 99;
  QueryOptions q;
  q.threshold = 0.05;
  q.limit = 100;
  q.candidates_left_out = &left_out;
  auto similar = store->SimilarToUrl("http://page/", q);
  ASSERT_TRUE(similar.ok()) << similar.status().ToString();
  EXPECT_EQ(left_out, 15u);  // 20 documents besides the page's own: 5 kept
  std::set<DocId> results;
  for (const SimilarDoc& d : *similar) results.insert(d.doc);
  for (DocId d : results) EXPECT_TRUE(strong.count(d) == 1 || d == page.doc) << d;
}

}  // namespace
}  // namespace shingled::store
