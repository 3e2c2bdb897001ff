"""A Scrapy downloader middleware that posts every response to shingled, and drops copies.

Enable it in the settings (docs/CLIENTS.md lists every setting)::

    DOWNLOADER_MIDDLEWARES = {"shingled_client.scrapy.ShingledMiddleware": 585}
    SHINGLED_URL = "http://127.0.0.1:8480"
    SHINGLED_SWEEP = "crawl-2026-12"
    SHINGLED_DROP = ["duplicate", "near_duplicate"]

Each response is posted (``POST /v1/pages``) with its URL, status, Content-Type, body and the
time it arrived. The daemon's verdict, document and cluster go into
``response.meta["shingled"]``; a response whose verdict is in ``SHINGLED_DROP`` raises
:class:`scrapy.exceptions.IgnoreRequest`, so the spider never parses it and its links are not
followed.

The post is blocking HTTP, so it runs on the reactor's thread pool (``deferToThread``) and
``process_response`` awaits it as a coroutine, which Scrapy 2.x supports for downloader
middlewares with either reactor; the reactor itself never waits on the daemon. Returning the
Deferred itself would work as well in Scrapy 2.8 (the manager yields what a method returns), but
it is not what Scrapy documents, and a coroutine is.

Priority 585 places it after HttpCompressionMiddleware (590) and RedirectMiddleware (600) in
the response path: it sees decoded bodies, and a redirect only when Scrapy does not follow it
(``dont_redirect``, ``REDIRECT_ENABLED = False``); before RetryMiddleware (550), so each failed
attempt (a 5xx) is recorded as one.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
from typing import Any, Dict, List, Optional, Tuple, Union

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Request, Response
from scrapy.spiders import Spider
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.threads import deferToThread

from .client import Client
from .errors import ApiError, ConnectionFailed, ShingledError
from .results import REDIRECT_STATUSES, VERDICTS
from .retry import RetryPolicy

logger = logging.getLogger(__name__)

#: Where the middleware leaves what the daemon answered, in ``request.meta`` (and so in
#: ``response.meta`` once Scrapy attaches the request to the response).
META_KEY = "shingled"

#: Set ``request.meta["shingled_skip"] = True`` to leave a request's response alone.
SKIP_META_KEY = "shingled_skip"

ON_ERROR_CHOICES = ("pass", "fail")


def _accepted_type(mime: str) -> bool:
    """The media types the daemon takes for a page (415 otherwise)."""
    return (not mime or mime.startswith("text/") or
            mime in ("application/xhtml+xml", "application/xml", "application/octet-stream"))


def _header(response: Response, name: str) -> Optional[str]:
    value = response.headers.get(name)
    return value.decode("latin-1") if value is not None else None


def _verdict_list(value: Any) -> List[str]:
    """SHINGLED_DROP as a list: a list, "a,b", or a JSON list given with -s on the command
    line."""
    if isinstance(value, str):
        text = value.strip()
        value = json.loads(text) if text.startswith("[") else text.split(",")
    verdicts = [str(v).strip() for v in (value or []) if str(v).strip()]
    unknown = [v for v in verdicts if v not in VERDICTS]
    if unknown:
        raise ValueError(f"SHINGLED_DROP: unknown verdicts {unknown}; verdicts are "
                         f"{', '.join(VERDICTS)}")
    return verdicts


class ShingledMiddleware:
    """Posts each response to shingled; drops those whose verdict is in ``SHINGLED_DROP``.

    Stats (``crawler.stats``): ``shingled/posted`` (answered by the daemon),
    ``shingled/verdict/VERDICT``, ``shingled/dropped`` and ``shingled/dropped/VERDICT``,
    ``shingled/errors`` and ``shingled/errors/KIND`` (``connection``, ``timeout``, or the
    daemon's error code: ``unavailable``, ``invalid_argument``, ...), ``shingled/skipped`` and
    ``shingled/skipped/REASON`` (``type``: a Content-Type the daemon does not take, ``empty``:
    a 2xx without a body, ``no_location``: a redirect without ``Location``, ``encoding``: a
    body still compressed with a coding the daemon does not read, ``scheme``: not http(s),
    ``robots``: the robots.txt RobotsTxtMiddleware fetched, ``meta``: ``shingled_skip`` set).
    """

    def __init__(self, crawler: Crawler, client: Client, *, sweep: Optional[str],
                 drop: List[str], on_error: str, close_sweep: bool = False) -> None:
        if on_error not in ON_ERROR_CHOICES:
            raise ValueError(f"SHINGLED_ON_ERROR must be one of {ON_ERROR_CHOICES}, not "
                             f"{on_error!r}")
        self.crawler = crawler
        self.stats = crawler.stats
        self.client = client
        self.sweep = sweep
        self.drop = frozenset(drop)
        self.on_error = on_error
        self.close_sweep = close_sweep
        # The first URL of this crawl that showed each document and each cluster: on a
        # recrawl, a copy's verdict is "unchanged" (the same content as its own last version),
        # and these tell it is still a copy of a page this crawl kept. A few dozen bytes a
        # page; touched on the reactor thread only.
        self._doc_urls: Dict[int, str] = {}
        self._cluster_urls: Dict[int, str] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> "ShingledMiddleware":
        """Reads the settings; NotConfigured (the middleware is left out) without
        SHINGLED_URL."""
        s = crawler.settings
        url = s.get("SHINGLED_URL")
        if not url:
            raise NotConfigured("SHINGLED_URL is not set")
        retries = s.getint("SHINGLED_RETRIES", 2)
        if retries < 0:
            raise ValueError(f"SHINGLED_RETRIES must be 0 or more, not {retries}")
        # A crawler should not stall on the daemon: short waits, few retries, by default.
        retry = RetryPolicy(attempts=1 + retries,
                            backoff=s.getfloat("SHINGLED_RETRY_BACKOFF", 0.5),
                            max_backoff=s.getfloat("SHINGLED_RETRY_MAX_WAIT", 10.0),
                            max_wait=s.getfloat("SHINGLED_RETRY_MAX_WAIT", 10.0))
        timeout = s.getfloat("SHINGLED_TIMEOUT", 5.0)
        if not timeout > 0:
            raise ValueError(f"SHINGLED_TIMEOUT must be a number of seconds over 0, not {timeout}")
        client = Client(url, token=s.get("SHINGLED_TOKEN") or None, timeout=timeout, retry=retry)
        mw = cls(crawler, client, sweep=s.get("SHINGLED_SWEEP") or None,
                 drop=_verdict_list(s.get("SHINGLED_DROP", [])),
                 on_error=str(s.get("SHINGLED_ON_ERROR", "pass")),
                 close_sweep=s.getbool("SHINGLED_CLOSE_SWEEP", False))
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    # -- Signals ----------------------------------------------------------------------------

    async def spider_opened(self, spider: Spider) -> None:
        """Opens SHINGLED_SWEEP (opening an open sweep returns it), before the first page."""
        if self.sweep is None:
            return
        try:
            await maybe_deferred_to_future(deferToThread(self.client.open_sweep, self.sweep))
            logger.info("shingled: posting to sweep %r at %s", self.sweep, self.client.base_url)
        except ShingledError as e:
            # Each page's post fails the same way, and SHINGLED_ON_ERROR decides for it.
            self._count_error(e)
            logger.error("shingled: could not open sweep %r: %s", self.sweep, e)

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        """Closes SHINGLED_SWEEP with SHINGLED_CLOSE_SWEEP, when the crawl finished."""
        if self.sweep is None or not self.close_sweep:
            return
        if reason != "finished":
            # A crawl cut short did not see every URL: closing would record them gone.
            logger.info("shingled: sweep %r left open (the spider closed: %s)", self.sweep,
                        reason)
            return
        try:
            closed = await maybe_deferred_to_future(
                deferToThread(self.client.close_sweep, self.sweep))
            gone = closed.get("closing", {}).get("gone_urls", 0)
            self.stats.set_value("shingled/sweep_gone_urls", gone)
            logger.info("shingled: closed sweep %r: %d URLs gone", self.sweep, gone)
        except ShingledError as e:
            self._count_error(e)
            logger.error("shingled: could not close sweep %r: %s", self.sweep, e)

    # -- Responses --------------------------------------------------------------------------

    async def process_response(self, request: Request, response: Response,
                               spider: Spider) -> Union[Request, Response]:
        """Posts the response and records the verdict; raises IgnoreRequest to drop it."""
        fetched_at = _dt.datetime.now(_dt.timezone.utc)
        page = self._page(request, response)
        if isinstance(page, str):
            self.stats.inc_value("shingled/skipped")
            self.stats.inc_value(f"shingled/skipped/{page}")
            return response
        page["fetched_at"] = fetched_at
        try:
            result = await maybe_deferred_to_future(
                deferToThread(self.client.post_page, **page))
        except ShingledError as e:
            self._count_error(e)
            request.meta[META_KEY] = {"error": str(e), "status": getattr(e, "status", None),
                                      "code": getattr(e, "code", None)}
            logger.warning("shingled: %s not checked: %s", response.url, e)
            if self.on_error == "fail":
                raise IgnoreRequest(f"shingled: not checked: {e}") from e
            return response
        crawl_verdict, copy_of = self._crawl_verdict(result.url, result.verdict, result.doc,
                                                     result.cluster)
        request.meta[META_KEY] = {
            "verdict": result.verdict, "crawl_verdict": crawl_verdict, "copy_of": copy_of,
            "doc": result.doc, "cluster": result.cluster, "url": result.url,
            "url_id": result.url_id, "replayed": result.replayed,
            "matches": [{k: m.get(k) for k in ("doc", "relation", "resemblance")}
                        for m in result.matches],
        }
        self.stats.inc_value("shingled/posted")
        self.stats.inc_value(f"shingled/verdict/{result.verdict}")
        if crawl_verdict in self.drop:
            self.stats.inc_value("shingled/dropped")
            self.stats.inc_value(f"shingled/dropped/{crawl_verdict}")
            what = (f"a copy of document {result.doc}" if crawl_verdict == "duplicate" else
                    f"a near copy in cluster {result.cluster}"
                    if crawl_verdict == "near_duplicate" else f"{crawl_verdict}")
            seen = f", seen at {copy_of}" if copy_of else ""
            logger.debug("shingled: dropped %s: %s%s", response.url, what, seen)
            raise IgnoreRequest(f"shingled: dropped {response.url}: {what}{seen}")
        return response

    def _crawl_verdict(self, url: str, verdict: Optional[str], doc: int,
                       cluster: int) -> Tuple[Optional[str], Optional[str]]:
        """The verdict within this crawl, and the URL this crawl saw the content at first.

        The daemon's verdict, but for a page ``unchanged`` since the last crawl whose document
        (``duplicate``) or cluster (``near_duplicate``) this crawl met first at another URL. A
        copy found in the last crawl stays a copy in this one, whichever the daemon saw first.
        """
        if doc == 0:
            return verdict, None
        doc_url = self._doc_urls.setdefault(doc, url)
        cluster_url = self._cluster_urls.setdefault(cluster, url) if cluster else url
        if verdict != "unchanged":
            return verdict, None
        if doc_url != url:
            return "duplicate", doc_url
        if cluster_url != url:
            return "near_duplicate", cluster_url
        return verdict, None

    def _page(self, request: Request, response: Response) -> Union[Dict[str, Any], str]:
        """The arguments of post_page for this response, or why it is not posted."""
        if request.meta.get(SKIP_META_KEY):
            return "meta"
        if request.meta.get("dont_obey_robotstxt") and response.url.endswith("/robots.txt"):
            return "robots"  # RobotsTxtMiddleware's own fetch, not a page of the crawl
        if not response.url.startswith(("http://", "https://")):
            return "scheme"
        status = response.status
        page: Dict[str, Any] = {"url": response.url, "status": status, "body": b"",
                                "content_type": None, "sweep": self.sweep}
        if status in REDIRECT_STATUSES:
            location = _header(response, "Location")
            if not location:
                return "no_location"
            page["location"] = location
            return page
        if not 200 <= status < 300:
            return page  # dead or failed: the daemon records the status, not the body
        content_type = _header(response, "Content-Type") or ""
        if not _accepted_type(content_type.split(";")[0].strip().lower()):
            return "type"
        if not response.body:
            return "empty"
        coding = (_header(response, "Content-Encoding") or "").strip().lower()
        if coding in ("gzip", "x-gzip", "deflate"):
            page["content_encoding"] = coding  # placed before HttpCompressionMiddleware
        elif coding not in ("", "identity"):
            return "encoding"
        page["body"] = response.body
        page["content_type"] = content_type or None
        return page

    def _count_error(self, error: ShingledError) -> None:
        if isinstance(error, ConnectionFailed):
            kind = "timeout" if error.timed_out else "connection"
        elif isinstance(error, ApiError):
            kind = error.code or str(error.status)
        else:
            kind = "other"
        self.stats.inc_value("shingled/errors")
        self.stats.inc_value(f"shingled/errors/{kind}")
