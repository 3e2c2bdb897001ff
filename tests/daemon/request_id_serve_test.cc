// The request id in the daemon's log lines other than the access log: a line written while a
// request is served ends with request_id=ID, the id the response's X-Request-Id carries, so that a
// client's report ("request abc-123 failed") finds why, not only the access line; a failed commit,
// which serves many requests at once, names them (request_ids=A,B).
//
// The faults are real and deterministic: a document record of the store damaged behind the
// daemon's back (as tests/daemon/cli_store_test.cc damages one for `check`), so that reading it
// fails with DataLoss, a 500 whose real message only the log has; a small map filled with pages.
#include <lmdb.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

// The lines of `log` that hold `text`.
std::vector<std::string> LinesWith(const std::string& log, const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(text) != std::string::npos) lines.push_back(line);
  }
  return lines;
}

// A store of two pages whose first document record (FORMAT.md, "Named databases": `documents`,
// doc id 1 as 8 bytes big-endian) is cut to 3 bytes: it no longer decodes.
void MakeStoreWithADamagedDocument(const TempDir& dir, const std::string& store) {
  dir.Write("site/a.html", SyntheticPage(1));
  dir.Write("site/b.html", SyntheticPage(2));
  std::string out;
  ASSERT_EQ(RunCli("ingest " + dir.path() + "/site --store " + store + " --sweep s", &out), 0)
      << out;
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), 0);
  ASSERT_EQ(mdb_env_set_maxdbs(env, 32), 0);
  ASSERT_EQ(mdb_env_open(env, store.c_str(), 0, 0644), 0);
  MDB_txn* txn = nullptr;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
  MDB_dbi documents = 0;
  ASSERT_EQ(mdb_dbi_open(txn, "documents", 0, &documents), 0);
  unsigned char key[8] = {0, 0, 0, 0, 0, 0, 0, 1};
  MDB_val k{sizeof(key), key}, v;
  ASSERT_EQ(mdb_get(txn, documents, &k, &v), 0);
  ASSERT_GT(v.mv_size, 3u);
  std::string cut(static_cast<const char*>(v.mv_data), 3);
  MDB_val nv{cut.size(), cut.data()};
  ASSERT_EQ(mdb_put(txn, documents, &k, &nv, 0), 0);
  ASSERT_EQ(mdb_txn_commit(txn), 0);
  mdb_env_close(env);
}

// A 500 logs its real message as an error, naming the request: by the client's X-Request-Id, or
// by the id the daemon made when the client sent none. The access line is not the only one.
TEST(RequestIdServeTest, TheErrorLineOfAFailedRequestNamesIt) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  ASSERT_NO_FATAL_FAILURE(MakeStoreWithADamagedDocument(dir, store));
  Daemon daemon(dir, store);
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  HttpClient client(daemon.port());
  HttpResponse r = client.Request("GET", "/v1/documents/1", "", "", "X-Request-Id: lost-doc-7\r\n");
  ASSERT_EQ(r.status, 500) << r.body;
  EXPECT_EQ(r.headers["x-request-id"], "lost-doc-7");
  // The client learns nothing of the store's insides.
  EXPECT_NE(r.body.find("\"internal error\""), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("decode"), std::string::npos) << r.body;
  // A query that reads the damaged record too, without an id of the client's.
  r = client.Request("GET", "/v1/similar?url=" + Q("file://" + dir.path() + "/site/a.html"));
  ASSERT_EQ(r.status, 500) << r.body;
  const std::string made = r.headers["x-request-id"];
  ASSERT_FALSE(made.empty());

  // The access lines are written once the responses are, after the error lines.
  ASSERT_TRUE(daemon.WaitForLog(" request_id=" + made, 2)) << daemon.log();
  const std::string log = daemon.log();
  for (const std::string& id : {std::string("lost-doc-7"), made}) {
    const std::vector<std::string> lines = LinesWith(log, " request_id=" + id);
    ASSERT_EQ(lines.size(), 2u) << log;
    std::vector<std::string> failed = LinesWith(log, "request failed: ");
    failed.erase(std::remove_if(failed.begin(), failed.end(),
                                [&](const std::string& line) {
                                  return line.find(" request_id=" + id) == std::string::npos;
                                }),
                 failed.end());
    ASSERT_EQ(failed.size(), 1u) << log;
    // The error's level and real message, and the id last.
    EXPECT_NE(failed[0].find(" error request failed: data_loss: "), std::string::npos) << failed[0];
    EXPECT_TRUE(failed[0].ends_with(" request_id=" + id)) << failed[0];
    EXPECT_EQ(failed[0].find("access client="), std::string::npos) << failed[0];
  }
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// A commit that fails is logged once for all its pages, by the store writer: the line names the
// requests the pages came from. The map is 2 MiB (store.max_map_size); pages are posted one at a
// time until one is refused, so that the failed commit holds that page alone.
TEST(RequestIdServeTest, AFailedCommitNamesTheRequestsOfItsPages) {
  TempDir dir;
  Daemon daemon(dir, dir.path() + "/store",
                "[store]\ninitial_map_size = 1048576\nmax_map_size = 2097152\n");
  ASSERT_GT(daemon.port(), 0) << daemon.log();
  HttpClient client(daemon.port());
  ASSERT_EQ(client.Request("POST", "/v1/sweeps", R"({"name": "s"})", "application/json").status,
            200);
  std::string refused;
  for (int i = 0; i < 5000 && refused.empty(); ++i) {  // about 300 pages fill the map
    const std::string id = "fill-" + std::to_string(i);
    HttpResponse r = client.Request("POST", "/v1/pages?sweep=s&url=" + Q("https://e.com/" + id),
                                    SyntheticPage(i), "text/html", "X-Request-Id: " + id + "\r\n");
    if (r.status != 200) {
      ASSERT_EQ(r.status, 507) << r.body;
      refused = id;
    }
  }
  ASSERT_FALSE(refused.empty()) << "the map never filled";
  ASSERT_TRUE(daemon.WaitForLog("store commit of 1 pages failed: ")) << daemon.log();
  const std::vector<std::string> failed = LinesWith(daemon.log(), "store commit of 1 pages failed");
  ASSERT_EQ(failed.size(), 1u) << daemon.log();
  EXPECT_NE(failed[0].find("map full"), std::string::npos) << failed[0];
  EXPECT_TRUE(failed[0].ends_with(" request_ids=" + refused)) << failed[0];
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

}  // namespace
}  // namespace shingled::testing
