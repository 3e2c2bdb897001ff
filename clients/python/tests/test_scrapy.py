"""Tests of the Scrapy middleware's decisions that need no crawl: which responses are posted and
how, how settings are read, and the verdict within a crawl. The crawl itself, against a real
daemon, is tests/clients/scrapy_test.cc. Skipped without Scrapy (python3-scrapy).
"""

import unittest

try:
    from scrapy.exceptions import NotConfigured
    from scrapy.http import HtmlResponse, Request, Response
    from scrapy.spiders import Spider
    from scrapy.utils.test import get_crawler

    from shingled_client.scrapy import ShingledMiddleware, _verdict_list
except ImportError:  # no Scrapy: the class below is skipped
    Spider = object

URL = "https://example.com/a"


class _Spider(Spider):
    name = "test"


def middleware(**settings):
    settings.setdefault("SHINGLED_URL", "http://127.0.0.1:1")
    return ShingledMiddleware.from_crawler(get_crawler(_Spider, settings))


@unittest.skipIf(Spider is object, "needs Scrapy (python3-scrapy)")
class MiddlewareTest(unittest.TestCase):
    def page(self, response, meta=None):
        return middleware(SHINGLED_SWEEP="s")._page(Request(response.url, meta=meta or {}),
                                                    response)

    def test_a_page_is_posted_with_its_status_type_and_body(self):
        page = self.page(HtmlResponse(URL, body=b"<p>a</p>",
                                      headers={"Content-Type": "text/html; charset=utf-8"}))
        self.assertEqual(page, {"url": URL, "status": 200, "body": b"<p>a</p>",
                                "content_type": "text/html; charset=utf-8", "sweep": "s"})

    def test_dead_failed_and_redirected_pages_go_without_their_body(self):
        page = self.page(Response(URL, status=404, body=b"not found"))
        self.assertEqual((page["status"], page["body"], page["content_type"]), (404, b"", None))
        page = self.page(Response(URL, status=503, body=b"busy"))
        self.assertEqual((page["status"], page["body"]), (503, b""))
        page = self.page(Response(URL, status=301, headers={"Location": "/b"}))
        self.assertEqual((page["status"], page["location"]), (301, "/b"))

    def test_what_is_not_posted(self):
        self.assertEqual(self.page(Response(URL, body=b"\x89PNG",
                                            headers={"Content-Type": "image/png"})), "type")
        self.assertEqual(self.page(Response(URL, body=b"",
                                            headers={"Content-Type": "text/html"})), "empty")
        self.assertEqual(self.page(Response(URL, status=302)), "no_location")
        self.assertEqual(self.page(Response(URL, body=b"x", headers={
            "Content-Type": "text/html", "Content-Encoding": "br"})), "encoding")
        self.assertEqual(self.page(Response("data:text/html,hi", body=b"hi")), "scheme")
        self.assertEqual(self.page(Response("https://example.com/robots.txt", body=b"x"),
                                   meta={"dont_obey_robotstxt": True}), "robots")
        self.assertEqual(self.page(HtmlResponse(URL, body=b"<p>a</p>"),
                                   meta={"shingled_skip": True}), "meta")

    def test_a_body_still_compressed_is_sent_so(self):
        page = self.page(Response(URL, body=b"\x1f\x8b...", headers={
            "Content-Type": "text/html", "Content-Encoding": "gzip"}))
        self.assertEqual(page["content_encoding"], "gzip")

    def test_settings(self):
        with self.assertRaises(NotConfigured):
            ShingledMiddleware.from_crawler(get_crawler(_Spider, {}))
        self.assertEqual(_verdict_list("duplicate,near_duplicate"),
                         ["duplicate", "near_duplicate"])
        self.assertEqual(_verdict_list('["duplicate"]'), ["duplicate"])
        self.assertEqual(_verdict_list(["near_duplicate"]), ["near_duplicate"])
        self.assertEqual(_verdict_list([]), [])
        with self.assertRaisesRegex(ValueError, "SHINGLED_DROP"):
            _verdict_list("dupe")
        with self.assertRaisesRegex(ValueError, "SHINGLED_ON_ERROR"):
            middleware(SHINGLED_ON_ERROR="ignore")
        with self.assertRaisesRegex(ValueError, "SHINGLED_TIMEOUT"):
            middleware(SHINGLED_TIMEOUT=0)
        with self.assertRaisesRegex(ValueError, "SHINGLED_RETRIES"):
            middleware(SHINGLED_RETRIES=-1)
        mw = middleware(SHINGLED_TOKEN="t" * 20, SHINGLED_TIMEOUT=0.5, SHINGLED_RETRIES=0)
        self.assertEqual((mw.client.token, mw.client.timeout, mw.client.retry.attempts),
                         ("t" * 20, 0.5, 1))

    def test_the_verdict_within_a_crawl(self):
        mw = middleware()
        # A first crawl: the daemon's verdicts stand.
        self.assertEqual(mw._crawl_verdict("u/x", "new", 2, 2), ("new", None))
        self.assertEqual(mw._crawl_verdict("u/y", "duplicate", 2, 2), ("duplicate", None))
        # A recrawl: every page is "unchanged" to the daemon; those whose document or cluster
        # this crawl met first at another URL are still copies.
        mw = middleware()
        self.assertEqual(mw._crawl_verdict("u/x", "unchanged", 2, 2), ("unchanged", None))
        self.assertEqual(mw._crawl_verdict("u/y", "unchanged", 2, 2), ("duplicate", "u/x"))
        self.assertEqual(mw._crawl_verdict("u/z", "unchanged", 3, 2),
                         ("near_duplicate", "u/x"))
        self.assertEqual(mw._crawl_verdict("u/x", "unchanged", 2, 2), ("unchanged", None))
        self.assertEqual(mw._crawl_verdict("u/dead", "gone", 0, 0), ("gone", None))


if __name__ == "__main__":
    unittest.main()
