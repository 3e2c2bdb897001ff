// Signing in to the report pages behind auth.protect_reads (docs/API.md, "Signing in"): the
// session table, and the daemon's /login, /logout and session cookie end to end.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <set>
#include <string>

#include "daemon/api/sessions.h"
#include "tests/daemon/daemon_harness.h"

namespace shingled::testing {
namespace {

using daemon::CookieValue;
using daemon::SafeNext;
using daemon::Sessions;

TEST(SessionsTest, ASessionIsValidForItsLifetimeOnly) {
  Sessions sessions(std::chrono::seconds(60), 10);
  const Sessions::Clock::time_point t0 = Sessions::Clock::now();
  StatusOr<std::string> id = sessions.Create(t0);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(id->size(), 64u);
  EXPECT_TRUE(sessions.Valid(*id, t0 + std::chrono::seconds(59)));
  EXPECT_FALSE(sessions.Valid(*id, t0 + std::chrono::seconds(60)));
  EXPECT_FALSE(sessions.Valid("not-a-session", t0));
  EXPECT_FALSE(sessions.Valid("", t0));
}

TEST(SessionsTest, IdsDifferAndTheOldestGoesPastTheBound) {
  Sessions sessions(std::chrono::seconds(60), 3);
  const Sessions::Clock::time_point t0 = Sessions::Clock::now();
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(*sessions.Create(t0 + std::chrono::seconds(i)));
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 4u);
  EXPECT_EQ(sessions.size(), 3u);
  EXPECT_FALSE(sessions.Valid(ids[0], t0 + std::chrono::seconds(4)));
  EXPECT_TRUE(sessions.Valid(ids[3], t0 + std::chrono::seconds(4)));
  sessions.End(ids[3]);
  EXPECT_FALSE(sessions.Valid(ids[3], t0 + std::chrono::seconds(4)));
  EXPECT_TRUE(sessions.Valid(ids[2], t0 + std::chrono::seconds(4)));
  sessions.EndAll();
  EXPECT_FALSE(sessions.Valid(ids[2], t0 + std::chrono::seconds(4)));
  EXPECT_EQ(sessions.size(), 0u);
}

TEST(SessionsTest, CookieValueAndSafeNext) {
  EXPECT_EQ(CookieValue("a=1; shingled_session=abc; b=2", "shingled_session"), "abc");
  EXPECT_EQ(CookieValue("shingled_session=abc", "shingled_session"), "abc");
  EXPECT_FALSE(CookieValue("xshingled_session=abc; a=b", "shingled_session").has_value());
  EXPECT_FALSE(CookieValue("", "shingled_session").has_value());
  EXPECT_EQ(SafeNext("/reports/changes?from=a&to=b"), "/reports/changes?from=a&to=b");
  EXPECT_EQ(SafeNext("//evil.example/x"), "/reports/");
  EXPECT_EQ(SafeNext("https://evil.example/"), "/reports/");
  EXPECT_EQ(SafeNext("/\\evil.example"), "/reports/");
  EXPECT_EQ(SafeNext("/reports\r\nSet-Cookie: x=y"), "/reports/");
  EXPECT_EQ(SafeNext(""), "/reports/");
}

constexpr char kToken[] = "a-read-token-of-some-length-0123456789";

class LoginTest : public ::testing::Test {
 protected:
  void Start(const std::string& token) {
    const std::string file = dir_.WriteSecret("token", token + "\n");
    daemon_ =
        std::make_unique<Daemon>(dir_, dir_.path() + "/store",
                                 "[auth]\ntoken_file = \"" + file + "\"\nprotect_reads = true\n");
    ASSERT_GT(daemon_->port(), 0) << daemon_->log();
  }
  HttpResponse Get(const std::string& target, const std::string& headers = "") {
    return HttpClient(daemon_->port()).Request("GET", target, "", "", headers);
  }
  HttpResponse Login(const std::string& form) {
    return HttpClient(daemon_->port())
        .Request("POST", "/login", form, "application/x-www-form-urlencoded");
  }
  // The session id a successful sign-in set.
  std::string SignIn() {
    HttpResponse r = Login("token=" + Q(kToken) + "&next=" + Q("/reports/"));
    EXPECT_EQ(r.status, 303) << r.body;
    const std::string cookie = r.headers["set-cookie"];
    const size_t eq = cookie.find('='), semi = cookie.find(';');
    return eq == std::string::npos ? "" : cookie.substr(eq + 1, semi - eq - 1);
  }

  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(LoginTest, AReportPageSendsABrowserToSignInAndBack) {
  Start(kToken);
  // Not signed in: a report page redirects to the form, an API read is refused.
  HttpResponse r = Get("/reports/changes?from=a&to=b");
  ASSERT_EQ(r.status, 303) << r.body;
  EXPECT_EQ(r.headers["location"], "/login?next=" + Q("/reports/changes?from=a&to=b"));
  EXPECT_EQ(Get("/v1/stats").status, 401);
  // The form, carrying where to go back to, framed by nobody.
  r = Get(r.headers["location"]);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("type=\"password\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("value=\"/reports/changes?from=a&amp;to=b\""), std::string::npos) << r.body;
  EXPECT_NE(r.headers["content-security-policy"].find("frame-ancestors 'none'"), std::string::npos);
  // A wrong token: the form again, 401, no cookie.
  r = Login("token=wrong&next=%2Freports%2F");
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(r.headers.count("set-cookie"), 0u);
  EXPECT_NE(r.body.find("not this server&#39;s token"), std::string::npos) << r.body;
  // The right one: back to the page asked for, with an HttpOnly, SameSite session cookie.
  r = Login("token=" + Q(kToken) + "&next=" + Q("/reports/changes?from=a&to=b"));
  ASSERT_EQ(r.status, 303) << r.body;
  EXPECT_EQ(r.headers["location"], "/reports/changes?from=a&to=b");
  const std::string cookie = r.headers["set-cookie"];
  EXPECT_EQ(cookie.rfind("shingled_session=", 0), 0u) << cookie;
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("SameSite=Lax"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("Path=/"), std::string::npos) << cookie;
  const std::string id = cookie.substr(17, cookie.find(';') - 17);
  const std::string with_cookie = "Cookie: shingled_session=" + id + "\r\n";
  // Reads answer with the cookie: the report index, the API's JSON (a page's CSV links).
  EXPECT_EQ(Get("/reports/", with_cookie).status, 200);
  EXPECT_EQ(Get("/v1/stats", with_cookie).status, 200);
  // Never a write.
  HttpResponse w = HttpClient(daemon_->port())
                       .Request("POST", "/v1/pages?url=" + Q("https://example.com/a"),
                                "<p>a page</p>", "text/html", with_cookie);
  EXPECT_EQ(w.status, 401) << w.body;
  // A made-up session is no session; a wrong bearer token is not rescued by a cookie.
  EXPECT_EQ(Get("/v1/stats", "Cookie: shingled_session=" + std::string(64, 'a') + "\r\n").status,
            401);
  EXPECT_EQ(Get("/v1/stats", with_cookie + "Authorization: Bearer wrong\r\n").status, 401);
  // Signing out ends the session.
  r = HttpClient(daemon_->port()).Request("POST", "/logout", "", "", with_cookie);
  EXPECT_EQ(r.status, 303);
  EXPECT_NE(r.headers["set-cookie"].find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(Get("/v1/stats", with_cookie).status, 401);
}

TEST_F(LoginTest, AnOffSiteNextIsNotFollowed) {
  Start(kToken);
  HttpResponse r = Login("token=" + Q(kToken) + "&next=" + Q("//evil.example/"));
  ASSERT_EQ(r.status, 303) << r.body;
  EXPECT_EQ(r.headers["location"], "/reports/");
  r = Login("token=" + Q(kToken) + "&next=" + Q("https://evil.example/"));
  EXPECT_EQ(r.headers["location"], "/reports/");
  // A form that is not one.
  r = Login("token=%zz");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(HttpClient(daemon_->port()).Request("DELETE", "/login").status, 405);
  EXPECT_EQ(Get("/logout").status, 405);
}

// A new token (SIGHUP) ends the sessions opened with the old one.
TEST_F(LoginTest, ANewTokenEndsTheSessions) {
  Start(kToken);
  const std::string id = SignIn();
  ASSERT_FALSE(id.empty());
  const std::string with_cookie = "Cookie: shingled_session=" + id + "\r\n";
  EXPECT_EQ(Get("/v1/stats", with_cookie).status, 200);
  dir_.WriteSecret("token", std::string(kToken) + "-rotated\n");
  daemon_->Signal(SIGHUP);
  ASSERT_TRUE(daemon_->WaitForLog("reloaded")) << daemon_->log();
  EXPECT_EQ(Get("/v1/stats", with_cookie).status, 401);
}

// In a real browser (headless Chromium driven by Selenium, tests/daemon/login_chromium.py): the
// form, a wrong token, the right one, back to the page asked for, an HttpOnly cookie scripts
// cannot read, and the navigation between report pages signed in.
TEST_F(LoginTest, SignsInWithChromium) {
  if (std::system("test -x /usr/bin/chromedriver && /usr/bin/python3 -c 'import selenium' "
                  "2>/dev/null") != 0) {
    GTEST_SKIP() << "needs chromium-driver and python3-selenium (scripts/install-deps.sh)";
  }
  Start(kToken);
  const char* env = std::getenv("SHINGLED_SCREENSHOT_DIR");
  const std::string shots = env != nullptr && *env != '\0' ? env : dir_.path();
  std::string out;
  const int rc = RunCommand("/usr/bin/python3 " SHINGLED_SOURCE_DIR
                            "/tests/daemon/login_chromium.py http://127.0.0.1:" +
                                std::to_string(daemon_->port()) + " " + kToken + " " + shots,
                            &out);
  EXPECT_EQ(rc, 0) << out;
}

// With reads open, /login has nothing to do: back to the page.
TEST(LoginOpenReadsTest, LoginRedirectsWhenReadsAreOpen) {
  TempDir dir;
  Daemon d(dir, dir.path() + "/store");
  ASSERT_GT(d.port(), 0) << d.log();
  HttpResponse r = HttpClient(d.port()).Request("GET", "/login?next=%2Freports%2Fhistory");
  EXPECT_EQ(r.status, 303);
  EXPECT_EQ(r.headers["location"], "/reports/history");
  EXPECT_EQ(HttpClient(d.port()).Request("GET", "/reports/").status, 200);
}

}  // namespace
}  // namespace shingled::testing
