// The security promises: every size limit a client can reach answers with the config
// key that sets it, so that an operator (or the client) knows what to raise. Against the real
// daemon on loopback. The other promises have their tests elsewhere (docs/RELIABILITY.md lists
// them): the token and timeouts in http_limits_test, the address filter in curl_fetcher_test.
#include <zlib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

std::string ErrorMessage(const HttpResponse& r) {
  const nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
  if (!j.is_object() || !j.contains("error")) return "";
  return j["error"].value("message", "");
}

std::string Gzip(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(SecurityPromisesTest, EveryLimitNamesItsConfigKey) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store",
                "[limits]\nmax_body_bytes = 65536\nmax_batch_pages = 2\nmax_url_bytes = 1024\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  const std::string page = "/v1/pages?url=" + Q("https://example.com/a");

  // The request line and headers: limits.max_header_bytes (16 KiB by default).
  {
    HttpClient c(daemon.port());
    const HttpResponse r =
        c.Request("GET", "/v1/stats", "", "", "X-Padding: " + std::string(20000, 'a') + "\r\n");
    EXPECT_EQ(r.status, 431) << r.body;
    EXPECT_NE(ErrorMessage(r).find("limits.max_header_bytes"), std::string::npos) << r.body;
  }
  // A URL, posted or queried.
  const std::string long_url = Q("https://example.com/" + std::string(2000, 'u'));
  for (const std::string& target :
       {"/v1/pages?url=" + long_url, "/v1/similar?url=" + long_url, "/v1/lost?url=" + long_url}) {
    HttpClient c(daemon.port());
    const bool post = target.rfind("/v1/pages", 0) == 0;
    const HttpResponse r =
        c.Request(post ? "POST" : "GET", target, post ? "<p>x</p>" : "", post ? "text/html" : "");
    EXPECT_EQ(r.status, 400) << target << ": " << r.body;
    EXPECT_NE(ErrorMessage(r).find("limits.max_url_bytes"), std::string::npos) << r.body;
  }
  // A body as sent.
  {
    HttpClient c(daemon.port());
    const HttpResponse r = c.Request("POST", page, std::string(70000, 'x'), "text/html");
    EXPECT_EQ(r.status, 413) << r.body;
    EXPECT_NE(ErrorMessage(r).find("limits.max_body_bytes"), std::string::npos) << r.body;
  }
  // A body once decoded from gzip: a few hundred bytes that inflate to 1 MiB.
  {
    HttpClient c(daemon.port());
    const HttpResponse r = c.Request("POST", page, Gzip(std::string(1 << 20, 'x')), "text/html",
                                     "Content-Encoding: gzip\r\n");
    EXPECT_EQ(r.status, 413) << r.body;
    EXPECT_NE(ErrorMessage(r).find("limits.max_body_bytes"), std::string::npos) << r.body;
  }
  // The pages of one NDJSON batch.
  {
    std::string batch;
    for (int i = 0; i < 3; ++i) {
      batch.append(R"({"url": "https://example.com/)" + std::to_string(i) +
                   R"(", "content": "<p>x</p>"})" + "\n");
    }
    HttpClient c(daemon.port());
    const HttpResponse r = c.Request("POST", "/v1/pages", batch, "application/x-ndjson");
    EXPECT_EQ(r.status, 413) << r.body;
    EXPECT_NE(ErrorMessage(r).find("limits.max_batch_pages"), std::string::npos) << r.body;
  }
  // Within every limit the same daemon takes the page.
  EXPECT_EQ(HttpClient(daemon.port()).Request("POST", page, "<p>x</p>", "text/html").status, 200);
}

}  // namespace
}  // namespace shingled::testing
