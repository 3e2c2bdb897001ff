// The ingest pipeline against a real store in a temp dir: order, admission bounds, a failed
// commit (the writer turns unhealthy), and stopping; and its options from [ingest].
#include "daemon/ingest/ingest.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>

#include "daemon/process/store_setup.h"
#include "store/mapped_file.h"
#include "tests/daemon/daemon_harness.h"

namespace shingled::daemon {
namespace {

using testing::TempDir;

class IngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto context = dedup::SketchContext::Create(dedup::SketchParams{});
    ASSERT_TRUE(context.ok());
    context_ = *context;
    store::StoreOptions options;
    options.durable = false;  // a throw-away store: no fsync per batch
    auto store = store::Store::Open(dir_.path() + "/store", options, *context_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    auto sweep = store_->OpenSweep("s", 1000);
    ASSERT_TRUE(sweep.ok());
    sweep_ = sweep->id;
  }

  PageJob Job(const std::string& url, const std::string& text) {
    PageJob job;
    job.url = url;
    job.sweep = sweep_;
    job.date = 2000;
    job.content_type = "text/plain";
    job.body = text;
    return job;
  }

  // Submits and waits for the outcomes.
  std::vector<PageOutcome> Run(IngestPipeline* pipeline, std::vector<PageJob> jobs) {
    std::promise<std::vector<PageOutcome>> done;
    auto future = done.get_future();
    Status s = pipeline->Submit(std::move(jobs), [&done](std::vector<PageOutcome> outcomes) {
      done.set_value(std::move(outcomes));
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return {};
    return future.get();
  }

  TempDir dir_;
  std::shared_ptr<const dedup::SketchContext> context_;
  std::unique_ptr<store::Store> store_;
  store::SweepId sweep_ = 0;
};

const char* kText = "one two three four five six seven eight nine ten eleven twelve";

TEST_F(IngestTest, PagesAreDecidedInAdmissionOrder) {
  TaskPool pool(4, 100);
  IngestPipeline pipeline(store_.get(), context_, &pool, nullptr, {});
  std::vector<PageJob> jobs;
  // A large first page sketches slowest; its copy must still come second and be the duplicate.
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "word" + std::to_string(i % 997) + " ";
  jobs.push_back(Job("https://e.com/original", big));
  jobs.push_back(Job("https://e.com/copy", big));
  jobs.push_back(Job("https://e.com/other", kText));
  std::vector<PageOutcome> out = Run(&pipeline, std::move(jobs));
  ASSERT_EQ(out.size(), 3u);
  for (const PageOutcome& o : out) ASSERT_TRUE(o.status.ok()) << o.status.ToString();
  EXPECT_EQ(out[0].result.verdict, store::Verdict::kNew);
  EXPECT_EQ(out[1].result.verdict, store::Verdict::kDuplicate);
  EXPECT_EQ(out[1].result.doc, out[0].result.doc);
  EXPECT_EQ(out[2].content_kind, "text");
}

// Bytes already stored are not sketched again: the stored document's sketch is reused, and
// the verdicts are those a fresh sketch gives.
TEST_F(IngestTest, StoredBytesReuseTheStoredSketch) {
  TaskPool pool(2, 100);
  Metrics metrics;
  IngestPipeline pipeline(store_.get(), context_, &pool, &metrics, {});
  auto reused = [&] {
    const std::string text = metrics.Scrape(nullptr, "");
    const size_t at = text.find("\nshingled_sketches_reused_total ");
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + 32));
  };
  std::string text;
  for (int i = 0; i < 300; ++i) text += "word" + std::to_string(i) + " ";
  std::vector<PageOutcome> first = Run(&pipeline, {Job("https://e.com/a", text)});
  ASSERT_TRUE(first[0].status.ok());
  EXPECT_EQ(reused(), 0);
  std::vector<PageOutcome> second =
      Run(&pipeline, {Job("https://e.com/copy", text), Job("https://e.com/b", text + "one more")});
  ASSERT_EQ(second.size(), 2u);
  for (const PageOutcome& o : second) ASSERT_TRUE(o.status.ok()) << o.status.ToString();
  EXPECT_EQ(reused(), 1);  // the copy; b is new bytes
  EXPECT_EQ(second[0].result.verdict, store::Verdict::kDuplicate);
  EXPECT_EQ(second[0].result.doc, first[0].result.doc);
  EXPECT_EQ(second[0].result.matches.at(0).features_in_common, 6);
  EXPECT_EQ(second[0].content_kind, "text");
  EXPECT_NE(second[1].result.doc, first[0].result.doc);  // sketched: its own document

  // The next sweep finds a unchanged.
  PageJob again = Job("https://e.com/a", text);
  again.sweep = store_->OpenSweep("s2", 3000)->id;
  std::vector<PageOutcome> third = Run(&pipeline, {again});
  ASSERT_TRUE(third[0].status.ok());
  EXPECT_EQ(reused(), 2);
  EXPECT_EQ(third[0].result.verdict, store::Verdict::kUnchanged);
  EXPECT_EQ(third[0].result.previous_resemblance, 1.0);
  EXPECT_TRUE(store_->Check()->empty());
}

// The writer takes at most its sizer's limit into a commit, and the limit is a gauge.
TEST_F(IngestTest, CommitsTakeAtMostTheWritersLimit) {
  TaskPool pool(2, 100);
  Metrics metrics;
  PipelineOptions options;
  options.min_batch_pages = 2;
  options.batch_pages = 2;
  auto value = [&](const std::string& line_start) {
    const std::string text = metrics.Scrape(nullptr, "");
    const size_t at = text.find("\n" + line_start + " ");
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + line_start.size() + 2));
  };
  {
    IngestPipeline pipeline(store_.get(), context_, &pool, &metrics, options);
    EXPECT_EQ(value("shingled_store_commit_batch_limit"), 2);
    std::vector<PageJob> jobs;
    for (int i = 0; i < 9; ++i) {
      jobs.push_back(Job("https://e.com/" + std::to_string(i), kText + std::to_string(i)));
    }
    for (const PageOutcome& o : Run(&pipeline, std::move(jobs))) {
      ASSERT_TRUE(o.status.ok()) << o.status.ToString();
    }
  }
  EXPECT_EQ(value("shingled_store_commit_batch_pages_sum"), 9);
  EXPECT_GE(value("shingled_store_commit_batch_pages_count"), 5);
  EXPECT_EQ(value("shingled_store_commit_batch_pages_bucket{le=\"2\"}"),
            value("shingled_store_commit_batch_pages_count"));
  // With room between the smallest and the largest limit, the writer starts at the largest, which
  // is at most the queue's bound.
  options.batch_pages = 8;
  {
    IngestPipeline pipeline(store_.get(), context_, &pool, &metrics, options);
    EXPECT_EQ(value("shingled_store_commit_batch_limit"), 8);
  }
  options.queue_pages = 6;
  IngestPipeline pipeline(store_.get(), context_, &pool, &metrics, options);
  EXPECT_EQ(value("shingled_store_commit_batch_limit"), 6);
}

TEST_F(IngestTest, AdmissionIsBoundedByPagesAndBytes) {
  TaskPool pool(1, 100);
  PipelineOptions options;
  options.queue_pages = 2;
  options.queue_bytes = 100;
  IngestPipeline pipeline(store_.get(), context_, &pool, nullptr, options);
  std::vector<PageJob> three = {Job("https://e.com/1", "a"), Job("https://e.com/2", "b"),
                                Job("https://e.com/3", "c")};
  EXPECT_EQ(pipeline.Submit(three, [](std::vector<PageOutcome>) {}).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(pipeline.Submit({Job("https://e.com/big", std::string(101, 'x'))},
                            [](std::vector<PageOutcome>) {})
                .code(),
            StatusCode::kResourceExhausted);
  // Nothing was admitted by the refusals: a page that fits goes through.
  EXPECT_EQ(pipeline.queued_pages(), 0u);
  EXPECT_TRUE(Run(&pipeline, {Job("https://e.com/1", kText)})[0].status.ok());
}

TEST_F(IngestTest, FailedCommitMakesTheWriterUnhealthy) {
  TaskPool pool(1, 100);
  IngestPipeline pipeline(store_.get(), context_, &pool, nullptr, {});
  store_->mapped_file()->FailNextCommitForTesting(EIO);
  std::vector<PageOutcome> out = Run(&pipeline, {Job("https://e.com/1", kText)});
  EXPECT_EQ(out[0].status.code(), StatusCode::kUnavailable);
  EXPECT_FALSE(pipeline.healthy());
  EXPECT_FALSE(store_->health().ok());
  // Later pages fail too (the store refuses writes until reopened), and are answered.
  out = Run(&pipeline, {Job("https://e.com/2", kText)});
  EXPECT_EQ(out[0].status.code(), StatusCode::kUnavailable);
}

// A commit that fails for lack of space answers its pages with that error (what is
// full), leaves the writer healthy, and writes resume on their own once the store has room (the
// temp dir has: the failure is injected), without a new pipeline or store.
TEST_F(IngestTest, CommitFailedForLackOfSpaceResumesWhenThereIsRoom) {
  TaskPool pool(1, 100);
  Metrics metrics;
  IngestPipeline pipeline(store_.get(), context_, &pool, &metrics, {});
  store_->mapped_file()->FailNextCommitForTesting(ENOSPC);
  std::vector<PageOutcome> out = Run(&pipeline, {Job("https://e.com/1", kText)});
  EXPECT_EQ(store::OutOfSpaceReason(out[0].status), "disk_full") << out[0].status.ToString();
  EXPECT_NE(out[0].status.message().find(dir_.path() + "/store"), std::string::npos)
      << out[0].status.ToString();
  EXPECT_TRUE(pipeline.healthy());
  EXPECT_TRUE(store_->health().ok());
  const std::string scraped = metrics.Scrape(store_.get(), dir_.path() + "/store");
  EXPECT_NE(scraped.find("shingled_store_commit_failures_total{reason=\"disk_full\"} 1"),
            std::string::npos)
      << scraped;
  // The writer finds room at its first check (after kFirstRoomCheck).
  const testing::Clock::time_point deadline = testing::Clock::now() + std::chrono::seconds(30);
  while (!pipeline.out_of_space().ok() && testing::Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll interval
  }
  ASSERT_TRUE(pipeline.out_of_space().ok()) << pipeline.out_of_space().ToString();
  out = Run(&pipeline, {Job("https://e.com/1", kText)});
  ASSERT_TRUE(out[0].status.ok()) << out[0].status.ToString();
  EXPECT_EQ(out[0].result.verdict, store::Verdict::kNew);
}

TEST_F(IngestTest, StopCommitsWhatWasAdmittedThenRefuses) {
  TaskPool pool(2, 100);
  IngestPipeline pipeline(store_.get(), context_, &pool, nullptr, {});
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(pipeline
                    .Submit({Job("https://e.com/" + std::to_string(i), kText)},
                            [&](std::vector<PageOutcome> out) {
                              EXPECT_TRUE(out[0].status.ok()) << out[0].status.ToString();
                              std::lock_guard<std::mutex> lock(mu);
                              ++done;
                              cv.notify_all();
                            })
                    .ok());
  }
  pipeline.Stop();
  EXPECT_EQ(done, 20);
  EXPECT_EQ(pipeline.Submit({Job("https://e.com/late", kText)}, [](std::vector<PageOutcome>) {})
                .code(),
            StatusCode::kUnavailable);
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(store_->History("https://e.com/" + std::to_string(i)).ok()) << i;
  }
}

// [ingest] maps to the pipeline's options: the bounds and the canonicalizer, which every command
// that stores pages uses (serve, crawl, ingest).
TEST(IngestPipelineOptionsTest, MapsTheIngestTable) {
  config::IngestOptions ingest;
  ingest.queue_pages = 300;
  ingest.queue_bytes = int64_t{5} << 20;
  ingest.batch_pages = 200;
  ingest.min_batch_pages = 100;
  ingest.canonicalizer = "gumbo";
  ingest.measure_batch_size = true;
  StatusOr<PipelineOptions> options = IngestPipelineOptions(ingest);
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->queue_pages, 300u);
  EXPECT_EQ(options->queue_bytes, uint64_t{5} << 20);
  EXPECT_EQ(options->batch_pages, 200u);
  EXPECT_EQ(options->min_batch_pages, 100u);
  EXPECT_TRUE(options->measure_batch_size);
  EXPECT_EQ(options->canonicalizer, dedup::CanonicalizerKind::kGumbo);

  ingest.canonicalizer = "streaming";
  EXPECT_EQ(IngestPipelineOptions(ingest)->canonicalizer, dedup::CanonicalizerKind::kStreaming);
  // The config loader refuses an unknown name; a config made in code gets the same answer here.
  ingest.canonicalizer = "lxml";
  options = IngestPipelineOptions(ingest);
  EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(options.status().message().find("ingest.canonicalizer"), std::string::npos)
      << options.status().message();
}

// [store] maps to the store's options (those a Store reports back).
TEST(OpenStoreTest, MapsTheStoreTable) {
  TempDir dir;
  config::Config config;
  config.store.path = dir.path() + "/store";
  config.store.durable = false;
  config.store.max_readers = 7;
  config.store.common_value_limit = 33;
  config.store.key_filter = false;
  StatusOr<OpenedStore> opened = OpenStore(config, /*create=*/true);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const store::StoreOptions& o = opened->store->options();
  EXPECT_FALSE(o.durable);
  EXPECT_EQ(o.max_readers, 7u);
  EXPECT_EQ(o.common_value_limit, 33u);
  EXPECT_FALSE(o.key_filter);
  opened->store.reset();
  config.store.key_filter = true;
  opened = OpenStore(config, /*create=*/false);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_TRUE(opened->store->options().key_filter);
}

}  // namespace
}  // namespace shingled::daemon
