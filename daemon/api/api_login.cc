// Signing in to the report pages when reads are protected (auth.protect_reads): a browser
// cannot send Authorization: Bearer on the links it follows, so GET /login shows a form, POST
// /login takes the token and sets a session cookie that stands for it on reads, and POST
// /logout ends the session. The cookie never authorizes a write.
#include <cstdint>
#include <string>

#include "daemon/api/api.h"
#include "daemon/api/sessions.h"
#include "report/html.h"

namespace shingled::daemon {
namespace {

// The login page submits to this server and loads nothing.
constexpr const char* kLoginCsp =
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'";

// The most a login form may hold: room for a long token and the page to go back to.
constexpr size_t kMaxLoginBody = 16 * 1024;

Response Redirect(const std::string& location) {
  Response res{http::status::see_other, 11};
  res.set(http::field::location, location);
  res.set(http::field::server, "shingled");
  res.set(http::field::cache_control, "no-store");
  return res;
}

// The Set-Cookie value of a session (an empty `id` with max_age 0 removes it). Lax: sent when a
// person follows a link to a report from elsewhere, never on another site's form posts; the
// cookie only ever authorizes reads.
std::string SessionCookie(std::string_view id, int64_t max_age) {
  std::string cookie(kSessionCookie);
  cookie.append("=").append(id).append("; Path=/; Max-Age=").append(std::to_string(max_age));
  cookie.append("; HttpOnly; SameSite=Lax");
  return cookie;
}

}  // namespace

Response Api::LoginRedirect(std::string_view target) {
  return Redirect("/login?next=" + report::html::QueryValue(target));
}

Response Api::GetLogin(const Target& target) {
  const std::string next = SafeNext(target.Get("next").value_or(""));
  const std::shared_ptr<const ApiSettings> settings = this->settings();
  // Reads open to all: nothing to sign in to.
  if (settings->token.empty() || !settings->protect_reads) return Redirect(next);
  return LoginPage(next, "", http::status::ok);
}

Response Api::LoginPage(std::string_view next, std::string_view problem, http::status status) {
  report::html::Page page("Sign in to shingled");
  if (!problem.empty()) page.Note(problem);
  page.Paragraph(
      "This server's reports need its token. Sign in once: this browser then keeps a session "
      "for " +
      std::to_string(sessions_.lifetime().count() / 3600) +
      " hours (until the server restarts or its token changes).");
  page.Raw("<form method=\"post\" action=\"/login\"><input type=\"hidden\" name=\"next\" value=\"" +
           report::html::Escape(SafeNext(next)) +
           "\"><p><label for=\"token\">Token</label> <input id=\"token\" name=\"token\" "
           "type=\"password\" autocomplete=\"current-password\" required autofocus size=\"40\" "
           "style=\"max-width:100%\"> <button type=\"submit\">Sign in</button></p></form>");
  Response res{status, 11};
  res.set(http::field::content_type, "text/html; charset=utf-8");
  res.set(http::field::server, "shingled");
  res.set(http::field::cache_control, "no-store");
  res.set("Content-Security-Policy", kLoginCsp);
  res.set("X-Frame-Options", "DENY");
  res.body() = page.Finish();
  return res;
}

StatusOr<Response> Api::PostLogin(const Request& req) {
  if (req.body().size() > kMaxLoginBody) {
    return ErrorResponse(http::status::payload_too_large, "payload_too_large",
                         "a login form is at most " + std::to_string(kMaxLoginBody) + " bytes");
  }
  // A form body is encoded as a query string is.
  StatusOr<Target> form = ParseTarget("/login?" + req.body());
  if (!form.ok()) {
    return LoginPage("", "The form could not be read: " + std::string(form.status().message()),
                     http::status::bad_request);
  }
  const std::string next = SafeNext(form->Get("next").value_or(""));
  const std::shared_ptr<const ApiSettings> settings = this->settings();
  if (settings->token.empty()) return Redirect(next);  // nothing to sign in to
  if (!ConstantTimeEquals(form->Get("token").value_or(""), settings->token)) {
    return LoginPage(next, "That is not this server's token.", http::status::unauthorized);
  }
  StatusOr<std::string> id = sessions_.Create(Sessions::Clock::now());
  if (!id.ok()) return id.status();
  Response res = Redirect(next);
  res.set(http::field::set_cookie, SessionCookie(*id, sessions_.lifetime().count()));
  return res;
}

Response Api::PostLogout(const Request& req) {
  if (std::optional<std::string_view> id =
          CookieValue(ToStd(req[http::field::cookie]), kSessionCookie)) {
    sessions_.End(*id);
  }
  Response res = Redirect("/login");
  res.set(http::field::set_cookie, SessionCookie("", 0));
  return res;
}

}  // namespace shingled::daemon
