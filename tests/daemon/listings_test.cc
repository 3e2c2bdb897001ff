// The listings through the real daemon on loopback (docs/API.md, "Listings"): GET /v1/urls
// without `url`, /v1/clusters, /v1/clusters/ID paged, /v1/identical; their cursors and their
// refusals of bad parameters.
#include <nlohmann/json.hpp>
#include <set>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

// SyntheticPage(seed) with `word` added inside its text: a near-copy of it.
std::string NearCopy(int seed, const std::string& word) {
  std::string page = SyntheticPage(seed);
  page.insert(page.find("</p>"), " " + word);
  return page;
}

class ListingsApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_ = std::make_unique<Daemon>(dir_, dir_.path() + "/store", "");
    ASSERT_GT(daemon_->port(), 0) << daemon_->log();
    Ok(Call("POST", "/v1/sweeps", R"({"name": "s1", "start": "2024-01-01"})", "application/json"));
    Ok(Call("POST", "/v1/sweeps", R"({"name": "s2", "start": "2024-02-01"})", "application/json"));
  }
  HttpResponse Call(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& type = "") {
    HttpClient client(daemon_->port());
    return client.Request(method, target, body, type);
  }
  json Ok(const HttpResponse& r) {
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body, nullptr, false);
  }
  json Get(const std::string& target) { return Ok(Call("GET", target)); }
  json Post(const std::string& url, const std::string& body, const std::string& sweep = "s1",
            const std::string& more = "") {
    return Ok(Call("POST",
                   "/v1/pages?url=" + Q(url) + "&sweep=" + sweep +
                       "&fetched_at=" + (sweep == "s1" ? "2024-01-02" : "2024-02-02") + more,
                   body, "text/html"));
  }
  void ExpectBadRequest(const std::string& target, const std::string& in_message) {
    const HttpResponse r = Call("GET", target);
    EXPECT_EQ(r.status, 400) << target << ": " << r.body;
    const json j = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.body;
    EXPECT_EQ(j["error"]["code"], "invalid_argument") << r.body;
    EXPECT_NE(j["error"]["message"].get<std::string>().find(in_message), std::string::npos)
        << target << ": " << r.body;
  }
  // Every page of a listing whose items are under `key`, following "next".
  // From the cursor `start` when not empty.
  std::vector<json> Drain(const std::string& target, const std::string& key, int* pages = nullptr,
                          std::string start = "") {
    std::vector<json> items;
    std::string next = std::move(start);
    for (int n = 1; n < 1000; ++n) {
      const std::string sep = target.find('?') == std::string::npos ? "?" : "&";
      const json page = Get(next.empty() ? target : target + sep + "after=" + Q(next));
      if (!page.is_object() || !page.contains(key)) break;
      for (const json& item : page[key]) items.push_back(item);
      if (pages != nullptr) *pages = n;
      if (page["next"].is_null()) break;
      next = page["next"].get<std::string>();
    }
    return items;
  }
  static std::vector<std::string> Urls(const std::vector<json>& items) {
    std::vector<std::string> out;
    for (const json& item : items) out.push_back(item["url"]);
    return out;
  }

  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(ListingsApiTest, UrlsByEachFilterInPages) {
  std::vector<std::string> on_host;
  for (int i = 0; i < 30; ++i) {
    char url[40];
    std::snprintf(url, sizeof(url), "http://h.test/p%02d", i);
    on_host.push_back(url);
    Post(url, SyntheticPage(i + 1));
  }
  on_host.push_back("https://h.test/s");
  Post("https://h.test/s", SyntheticPage(100));
  Post("http://h.test:8080/port", SyntheticPage(101));
  Post("http://other.test/a", SyntheticPage(1));  // p00's content
  Post("http://other.test/r", "", "s1", "&status=301&location=" + Q("http://h.test/p00"));
  Post("http://h.test/p01", "", "s2", "&status=404");

  int pages = 0;
  std::vector<json> items = Drain("/v1/urls?host=h.test&limit=7", "urls", &pages);
  EXPECT_EQ(Urls(items), on_host);
  EXPECT_EQ(pages, 5);  // 31 URLs
  EXPECT_EQ(Urls(Drain("/v1/urls?host=h.test:8080", "urls")),
            std::vector<std::string>{"http://h.test:8080/port"});
  EXPECT_EQ(Urls(Drain("/v1/urls?prefix=" + Q("http://other.test/") + "&limit=1", "urls")),
            (std::vector<std::string>{"http://other.test/a", "http://other.test/r"}));
  EXPECT_EQ(Urls(Drain("/v1/urls?host=h.test&prefix=" + Q("http://h.test/p2"), "urls")).size(),
            10u);

  items = Drain("/v1/urls?status=redirect", "urls");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["url"], "http://other.test/r");
  EXPECT_EQ(items[0]["status"], "redirect");
  EXPECT_EQ(items[0]["version"]["location"], "http://h.test/p00");
  EXPECT_EQ(items[0]["version"]["status"], 301);
  items = Drain("/v1/urls?verdict=duplicate", "urls");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["url"], "http://other.test/a");
  items = Drain("/v1/urls?sweep=s2", "urls");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["url"], "http://h.test/p01");
  EXPECT_EQ(items[0]["status"], "dead");
  EXPECT_EQ(items[0]["versions"], 2);
  EXPECT_EQ(items[0]["first_seen"], "2024-01-02T00:00:00Z");
  EXPECT_EQ(items[0]["version"]["seq"], 2);
  EXPECT_EQ(items[0]["version"]["status"], 404);
  EXPECT_EQ(items[0]["version"]["date"], "2024-02-02T00:00:00Z");
  items = Drain("/v1/urls?sweep=s1&status=dead", "urls");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0]["version"]["verdict"], "new");              // its version in s1
  EXPECT_EQ(Drain("/v1/urls?status=live", "urls").size(), 32u);  // not p01, not other.test/r
  EXPECT_EQ(Drain("/v1/urls?limit=1000", "urls").size(), 34u);

  // A URL inserted between pages, after the cursor, is listed; none twice.
  const json first = Get("/v1/urls?host=h.test&limit=10");
  ASSERT_FALSE(first["next"].is_null());
  Post("http://h.test/p15b", SyntheticPage(200));
  Post("http://h.test/p00a", SyntheticPage(201));  // before the cursor
  std::vector<std::string> seen = Urls(first["urls"].get<std::vector<json>>());
  for (const std::string& u :
       Urls(Drain("/v1/urls?host=h.test&limit=10", "urls", nullptr, first["next"]))) {
    seen.push_back(u);
  }
  std::vector<std::string> expected = on_host;
  expected.insert(expected.begin() + 16, "http://h.test/p15b");
  EXPECT_EQ(seen, expected);

  // History is still there with url.
  EXPECT_EQ(Get("/v1/urls?url=" + Q("http://h.test/p01"))["versions"].size(), 2u);
}

TEST_F(ListingsApiTest, BadParametersAreRefused) {
  ExpectBadRequest("/v1/urls?limit=0", "limit \"0\" is not an integer in 1..1000");
  ExpectBadRequest("/v1/urls?limit=1001", "limit");
  ExpectBadRequest("/v1/urls?limit=ten", "limit");
  ExpectBadRequest("/v1/urls?status=zombie", "status \"zombie\" is not one of live");
  ExpectBadRequest("/v1/urls?verdict=odd", "verdict \"odd\"");
  ExpectBadRequest("/v1/urls?sweep=nope", "sweep \"nope\" is not in the store");
  ExpectBadRequest("/v1/urls?host=" + Q("a.test/docs"), "is not a host name or host:port");
  ExpectBadRequest("/v1/urls?prefix=" + Q("ftp://x/"), "prefix");
  ExpectBadRequest("/v1/urls?host=a.test&prefix=" + Q("http://b.test/"), "is not on host");
  ExpectBadRequest("/v1/urls?after=!!", "after is not a cursor");
  ExpectBadRequest("/v1/urls?colour=red", "unknown parameter \"colour\"");
  ExpectBadRequest("/v1/urls?url=" + Q("http://x.test/") + "&limit=3", "unknown parameter");
  ExpectBadRequest("/v1/clusters?min_size=1", "min_size \"1\" is not an integer in 2..");
  ExpectBadRequest("/v1/clusters?page=2", "unknown parameter \"page\"");
  ExpectBadRequest("/v1/identical?min_urls=0", "min_urls");
  ExpectBadRequest("/v1/identical?limit=2000", "limit");
  ExpectBadRequest("/v1/clusters/1?limit=0", "limit");
  ExpectBadRequest("/v1/clusters/1?sort=size", "unknown parameter \"sort\"");
  // A cursor of one listing is refused by another.
  Post("http://c.test/a", SyntheticPage(1));
  Post("http://c.test/b", SyntheticPage(2));
  const json page = Get("/v1/urls?limit=1");
  ASSERT_TRUE(page["next"].is_string()) << page;
  ExpectBadRequest("/v1/clusters?after=" + Q(page["next"].get<std::string>()), "after");
  ExpectBadRequest("/v1/identical?after=" + Q(page["next"].get<std::string>()), "after");
}

TEST_F(ListingsApiTest, ClustersAndTheirDocuments) {
  // A: three near-copies. B: two. C: alone.
  Post("http://k.test/a0", SyntheticPage(10));
  Post("http://k.test/a1", NearCopy(10, "one"));
  Post("http://k.test/a2", NearCopy(10, "two"));
  Post("http://k.test/b0", SyntheticPage(20));
  Post("http://k.test/b1", NearCopy(20, "one"));
  Post("http://k.test/c", SyntheticPage(30));
  Post("http://k.test/a2", "", "s2", "&status=410");

  int pages = 0;
  const std::vector<json> clusters = Drain("/v1/clusters?limit=1", "clusters", &pages);
  ASSERT_EQ(clusters.size(), 2u);
  EXPECT_EQ(pages, 2);
  EXPECT_EQ(clusters[0]["size"], 3);
  EXPECT_EQ(clusters[0]["live_urls"], 2);
  EXPECT_EQ(clusters[0]["sample_urls"], json::parse(R"(["http://k.test/a0", "http://k.test/a1"])"));
  EXPECT_EQ(clusters[0]["first_seen"], "2024-01-02T00:00:00Z");
  EXPECT_EQ(clusters[1]["size"], 2);
  EXPECT_EQ(clusters[1]["live_urls"], 2);
  const json big = Get("/v1/clusters?min_size=3");
  ASSERT_EQ(big["clusters"].size(), 1u);
  EXPECT_TRUE(big["next"].is_null());

  // A's documents, two a page.
  const std::string id = std::to_string(clusters[0]["id"].get<uint64_t>());
  json page = Get("/v1/clusters/" + id + "?limit=2");
  EXPECT_EQ(page["id"], clusters[0]["id"]);
  EXPECT_EQ(page["size"], 3);
  ASSERT_EQ(page["members"].size(), 2u);
  EXPECT_EQ(page["members"][0]["urls"], json::parse(R"(["http://k.test/a0"])"));
  ASSERT_TRUE(page["next"].is_string());
  page = Get("/v1/clusters/" + id + "?limit=2&after=" + Q(page["next"].get<std::string>()));
  ASSERT_EQ(page["members"].size(), 1u);
  EXPECT_EQ(page["members"][0]["urls"], json::parse(R"(["http://k.test/a2"])"));
  EXPECT_TRUE(page["next"].is_null());
  // Without parameters: every member of a small cluster, as before, and next null.
  page = Get("/v1/clusters/" + id);
  EXPECT_EQ(page["members"].size(), 3u);
  EXPECT_TRUE(page["next"].is_null());
}

TEST_F(ListingsApiTest, IdenticalSets) {
  for (const char* u : {"http://i.test/x1", "http://i.test/x2", "http://i.test/x3"}) {
    Post(u, SyntheticPage(40));
  }
  Post("http://i.test/y1", SyntheticPage(50));
  Post("http://i.test/y2", SyntheticPage(50));
  Post("http://i.test/z1", SyntheticPage(60));
  Post("http://i.test/z2", SyntheticPage(60));
  Post("http://i.test/z2", "", "s2", "&status=404");
  Post("http://i.test/w", SyntheticPage(70));

  int pages = 0;
  const std::vector<json> sets = Drain("/v1/identical?limit=1", "sets", &pages);
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(pages, 2);
  EXPECT_EQ(sets[0]["url_count"], 3);
  EXPECT_EQ(sets[0]["urls"],
            json::parse(R"(["http://i.test/x1", "http://i.test/x2", "http://i.test/x3"])"));
  ASSERT_EQ(sets[0]["documents"].size(), 1u);
  EXPECT_EQ(sets[0]["documents"][0]["live_urls"], 3);
  EXPECT_GT(sets[0]["bytes"].get<uint64_t>(), 1000u);
  EXPECT_EQ(sets[1]["url_count"], 2);
  EXPECT_EQ(sets[1]["urls"], json::parse(R"(["http://i.test/y1", "http://i.test/y2"])"));
  EXPECT_EQ(Get("/v1/identical?min_urls=3")["sets"].size(), 1u);
}

}  // namespace
}  // namespace shingled::testing
