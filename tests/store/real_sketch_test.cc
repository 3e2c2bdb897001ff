// The store with real sketches from the sketching engine (Tokenizer + Sketcher on plain text).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "dedup/sketch.h"
#include "dedup/tokenizer.h"
#include "store/store.h"
#include "tests/store/store_fixture.h"

namespace shingled::store {
namespace {

// Pseudo-English from a fixed vocabulary and seed: `words` words.
std::string Text(uint32_t seed, int words) {
  static const char* kVocabulary[] = {"the", "crawler", "fetched", "page", "archive", "near", "duplicate",
                                      "cluster", "sketch", "shingle", "resemblance", "web", "document",
                                      "sweep", "found", "lost", "link", "server", "index", "store",
                                      "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "river",
                                      "mountain", "winter", "summer", "library", "paper", "method"};
  std::mt19937 rng(seed);
  std::string out;
  for (int i = 0; i < words; ++i) {
    out += kVocabulary[rng() % std::size(kVocabulary)];
    out += (i % 17 == 16) ? ". " : " ";
  }
  return out;
}

class RealSketchTest : public testing::StoreConformance {
 protected:
  void SetUp() override {
    StoreConformance::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto ctx = dedup::SketchContext::Create(params_);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    context_ = *ctx;
    store_ = OpenStore();
    ASSERT_NE(store_, nullptr);
    sweep_ = store_->OpenSweep("s", 1)->id;
  }

  dedup::Sketch SketchText(const std::string& text) {
    dedup::Sketcher sketcher(*context_);
    dedup::Tokenizer tokenizer(&sketcher);
    sketcher.AddRawBytes(text);
    tokenizer.Feed(text);
    tokenizer.Finish();
    return sketcher.Finish();
  }

  PageResult Ingest(const std::string& url, const std::string& text) {
    PageInput p;
    p.url = url;
    p.sweep = sweep_;
    p.date = 1;
    p.sketch = SketchText(text);
    auto r = store_->Apply(std::span(&p, 1));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)[0] : PageResult{};
  }

  std::shared_ptr<const dedup::SketchContext> context_;
  std::unique_ptr<Store> store_;
  SweepId sweep_ = 0;
};
SHINGLED_STORE_ENGINES(RealSketchTest);

TEST_P(RealSketchTest, DecisionsOnRealText) {
  const std::string base = Text(1, 3000);
  PageResult a = Ingest("http://a/", base);
  EXPECT_EQ(a.verdict, Verdict::kNew);

  // Same words, other case and punctuation: lexically equivalent.
  std::string shouted = base;
  for (char& c : shouted) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  PageResult b = Ingest("http://b/", shouted);
  EXPECT_EQ(b.verdict, Verdict::kDuplicate);
  ASSERT_FALSE(b.matches.empty());
  EXPECT_EQ(b.matches[0].relation, Relation::kLexical);
  EXPECT_EQ(b.cluster, a.cluster);

  // Five words changed in 3000: about 40 of ~3000 shingles differ, resemblance ~0.97, fungible
  // with probability ~0.99 (two changed words would usually leave the selected sample intact:
  // shingle equivalent).
  std::string edited = base;
  for (size_t i = 1; i <= 5; ++i) {
    size_t at = edited.find(' ', i * edited.size() / 6);
    edited.insert(at, " zebra");
  }
  PageResult c = Ingest("http://c/", edited);
  EXPECT_EQ(c.verdict, Verdict::kNearDuplicate);
  EXPECT_EQ(c.cluster, a.cluster);
  ASSERT_FALSE(c.matches.empty());
  EXPECT_GT(c.matches[0].resemblance, 0.9);

  // Unrelated text from the same vocabulary: new.
  PageResult d = Ingest("http://d/", Text(2, 3000));
  EXPECT_EQ(d.verdict, Verdict::kNew);
  EXPECT_NE(d.cluster, a.cluster);

  // A page that contains the first 1000 words of `base` plus 2000 words of its own:
  // the query by content finds `a` with containment of the page in a of about 1/3, and
  // of... the shared third; resemblance about 0.2.
  std::string part = base.substr(0, base.size() / 3) + Text(3, 2000);
  QueryOptions q;
  q.threshold = 0.1;
  auto similar = store_->SimilarToSketch(SketchText(part), q);
  ASSERT_TRUE(similar.ok());
  bool found = false;
  for (const SimilarDoc& s : *similar) {
    if (s.doc == a.doc || s.doc == c.doc) {
      found = true;
      EXPECT_NEAR(s.resemblance, 0.2, 0.15);  // true ~1000/5000; 84 minhashes: stderr ~0.044
    }
  }
  EXPECT_TRUE(found);

  // The same URL with identical bytes in the same sweep: replayed.
  PageResult again = Ingest("http://a/", base);
  EXPECT_TRUE(again.replayed);
  EXPECT_EQ(again.verdict, Verdict::kNew);

  auto problems = store_->Check();
  ASSERT_TRUE(problems.ok());
  EXPECT_TRUE(problems->empty());
}

TEST_P(RealSketchTest, EmptyAndShortPages) {
  PageResult e1 = Ingest("http://e1/", "");
  PageResult e2 = Ingest("http://e2/", "   ...   ");  // no tokens, other bytes
  EXPECT_EQ(e1.verdict, Verdict::kNew);
  EXPECT_EQ(e2.verdict, Verdict::kNew);
  EXPECT_NE(e1.cluster, e2.cluster);
  PageResult s1 = Ingest("http://s1/", "hello world");
  PageResult s2 = Ingest("http://s2/", "Hello, World!");  // same tokens
  EXPECT_EQ(s2.verdict, Verdict::kDuplicate);
  EXPECT_EQ(s2.cluster, s1.cluster);
  auto problems = store_->Check();
  ASSERT_TRUE(problems.ok());
  EXPECT_TRUE(problems->empty());
}

}  // namespace
}  // namespace shingled::store
