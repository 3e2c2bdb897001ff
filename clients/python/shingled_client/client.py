"""A blocking client of the shingled daemon's HTTP API (docs/API.md).

A :class:`Client` is safe for concurrent use from several threads: each thread keeps its own
keep-alive connection to the daemon. It uses the standard library only.

Answers are returned as the daemon's JSON, decoded (``dict``), except a posted page, which is a
:class:`PageResult`, and a batch, a :class:`BatchResult`. Errors are raised as the classes of
:mod:`shingled_client.errors`. Answers 503 and 507 (the daemon is busy, or its store is out of
space) are retried as a :class:`RetryPolicy` says, waiting at least the ``Retry-After`` the
daemon sent; posting a page again after a lost answer is safe, as the daemon records the same
attempt in the same sweep once (a "replay").
"""

from __future__ import annotations

import datetime as _dt
import http.client
import io
import json
import os
import threading
import urllib.parse
from typing import IO, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import ApiError, ConnectionFailed, error_for
from .results import BatchResult, DateLike, PageResult, format_date
from .retry import NO_RETRY, RetryPolicy, parse_retry_after


class _Body:
    """A request body that can be sent again: bytes, or a file re-read from where it began."""

    def __init__(self, data: Union[bytes, IO[bytes], None]) -> None:
        self._data = data
        self._start: Optional[int] = None
        self.length: Optional[int] = None
        if isinstance(data, (bytes, bytearray)):
            self.length = len(data)
        elif data is not None:
            try:
                self._start = data.tell()
                self.length = os.fstat(data.fileno()).st_size - self._start
            except (OSError, AttributeError, io.UnsupportedOperation):
                self._start = None

    @property
    def replayable(self) -> bool:
        return not hasattr(self._data, "read") or self._start is not None

    def open(self) -> Union[bytes, IO[bytes], None]:
        if hasattr(self._data, "read") and self._start is not None:
            self._data.seek(self._start)  # type: ignore[union-attr]
        return self._data


class Client:
    """A client of one daemon.

    Args:
        base_url: the daemon's address, ``http://127.0.0.1:8480`` by default; a path (a proxy's
            prefix) is kept in front of every route, and ``https://`` works behind a TLS proxy.
        token: the bearer token (``auth.token_file``), sent on every request; None for none.
        timeout: seconds to wait to connect and for each read of an answer. A page's answer
            comes once it is durable, usually within milliseconds, but a busy daemon can take
            longer; a WARC upload takes a timeout of its own.
        retry: when to try again (:class:`RetryPolicy`); :data:`NO_RETRY` never does.
        user_agent: the ``User-Agent`` header.
    """

    def __init__(self, base_url: str = "http://127.0.0.1:8480", token: Optional[str] = None,
                 timeout: float = 10.0, retry: RetryPolicy = RetryPolicy(),
                 user_agent: str = "shingled-client-python/0.1") -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http:// or https:// URL, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._prefix = parts.path.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retry = retry
        self.user_agent = user_agent
        self._local = threading.local()

    # -- Pages ------------------------------------------------------------------------------

    def post_page(self, url: str, body: bytes, *, content_type: Optional[str] = "text/html",
                  status: Optional[int] = None, fetched_at: Optional[DateLike] = None,
                  location: Optional[str] = None, sweep: Optional[str] = None,
                  content_encoding: Optional[str] = None) -> PageResult:
        """Posts one page as fetched (``POST /v1/pages``) and returns its verdict.

        Args:
            url: the page's absolute URL.
            body: its bytes as fetched (only a 2xx status needs one; others are not stored).
            content_type: its ``Content-Type`` (text/*, XHTML, XML or octet-stream; others are
                refused with :class:`~shingled_client.errors.UnsupportedMediaType`).
            status: the HTTP status the crawler got (default 200). A redirect status needs
                ``location``; any status but 2xx, 404 and 410 is recorded as a failed attempt.
            fetched_at: when it was fetched (default: now, by the daemon's clock).
            location: a redirect's target, as the ``Location`` header said.
            sweep: the sweep to add it to (default: the daemon's default sweep).
            content_encoding: ``gzip`` or ``deflate`` when ``body`` is so compressed.

        Raises:
            InvalidArgument: a bad URL, date, status or location, or an empty 2xx body.
            NotFound, Conflict: no such sweep, or it is closed.
            Unavailable, InsufficientStorage: still so after the retries.
            ConnectionFailed: the daemon could not be reached or was too slow.
        """
        # Parameters left None are not sent.
        query = {"url": url, "fetched_at": _date_or_none(fetched_at),
                 "status": None if status is None else int(status), "location": location,
                 "sweep": sweep}
        headers = {}
        if content_type:
            headers["Content-Type"] = content_type
        if content_encoding:
            headers["Content-Encoding"] = content_encoding
        answer = self._request("POST", "/v1/pages", query, body=bytes(body), headers=headers)
        return PageResult.from_json(answer)

    def post_pages(self, pages: Iterable[Mapping[str, Any]], *,
                   sweep: Optional[str] = None) -> BatchResult:
        """Posts a batch of pages as JSON lines (``POST /v1/pages``, application/x-ndjson).

        Each page is a mapping with the keys of a batch line: ``url`` (required), ``content``
        (required with a 2xx status; ``str``, or ``bytes`` in UTF-8), ``content_type``,
        ``fetched_at`` (a string or a datetime), ``status``, ``location``, ``sweep``. A page
        whose bytes are not UTF-8 cannot be a JSON string: post it with :meth:`post_page`.

        A page the store refused has ``verdict`` None and its ``error``; a malformed line
        fails the whole batch (InvalidArgument naming the line).

        Raises:
            ValueError: a page is not a mapping, or its content is bytes that are not UTF-8.
            ApiError, ConnectionFailed: as :meth:`post_page`; PayloadTooLarge over
                ``limits.max_batch_pages``.
        """
        lines = []
        for i, page in enumerate(pages):
            if not isinstance(page, Mapping):
                raise ValueError(f"page {i}: a mapping with a url, not {type(page).__name__}")
            line = dict(page)
            content = line.get("content")
            if isinstance(content, (bytes, bytearray)):
                try:
                    line["content"] = bytes(content).decode("utf-8")
                except UnicodeDecodeError as e:
                    raise ValueError(f"page {i} ({line.get('url')}): its content is not UTF-8 "
                                     f"({e}); post it alone with post_page") from None
            if isinstance(line.get("fetched_at"), (_dt.datetime, _dt.date)):
                line["fetched_at"] = format_date(line["fetched_at"])
            lines.append(json.dumps(line, ensure_ascii=False))
        body = ("\n".join(lines) + "\n").encode("utf-8")
        query = {"sweep": sweep} if sweep is not None else {}
        answer = self._request("POST", "/v1/pages", query, body=body,
                               headers={"Content-Type": "application/x-ndjson"})
        return BatchResult(pages=answer.get("pages", 0), errors=answer.get("errors", 0),
                           results=[PageResult.from_json(r) for r in answer.get("results", [])])

    def post_warc(self, warc: Union[str, os.PathLike, IO[bytes]], *,
                  sweep: Optional[str] = None, timeout: Optional[float] = 600.0) -> Dict[str, Any]:
        """Uploads a WARC file, plain or ``.warc.gz`` (``POST /v1/pages``, application/warc).

        ``warc`` is a path or a binary file open for reading; it is streamed, never read into
        memory. The answer, once every record is durable, counts the pages by verdict and lists
        the records that could not be stored (``errors``, by offset). ``timeout`` (seconds for
        each read, the answer included) is longer than the client's, as the answer waits for
        the whole file; None uses the client's.

        An upload is retried (503, 507) only when its file can be read again from where it
        began: a path, or a seekable file.

        Raises:
            NoWarcRecords: no WARC record in the body.
            PayloadTooLarge, Unavailable, InsufficientStorage: cut short; ``body`` of the error
                says what was stored before.
            ConnectionFailed: as :meth:`post_page`.
        """
        query = {"sweep": sweep} if sweep is not None else {}
        headers = {"Content-Type": "application/warc"}
        if isinstance(warc, (str, os.PathLike)):
            with open(warc, "rb") as f:
                return self._request("POST", "/v1/pages", query, body=f, headers=headers,
                                     timeout=timeout)
        return self._request("POST", "/v1/pages", query, body=warc, headers=headers,
                             timeout=timeout)

    # -- Queries ----------------------------------------------------------------------------

    def similar(self, url: Optional[str] = None, *, page: Optional[bytes] = None,
                content_type: str = "text/html", threshold: Optional[float] = None,
                limit: Optional[int] = None) -> Dict[str, Any]:
        """The stored pages similar to a URL's last document, or to a page's bytes.

        Give ``url`` (``GET /v1/similar``) or ``page`` (``POST /v1/similar``), not both.
        ``threshold`` (0..1, default 0.5) keeps results whose resemblance or either
        containment reaches it; ``limit`` 1..1000 (default 20). The answer is
        ``{"results": [...], "candidates_left_out": N}``.

        Raises:
            ValueError: neither or both of ``url`` and ``page``.
            NotFound: a URL never stored.
        """
        if (url is None) == (page is None):
            raise ValueError("give url or page, not both or neither")
        query = {"threshold": threshold, "limit": limit}
        if url is not None:
            return self._request("GET", "/v1/similar", dict(query, url=url))
        return self._request("POST", "/v1/similar", query, body=bytes(page or b""),
                             headers={"Content-Type": content_type})

    def history(self, url: str) -> Dict[str, Any]:
        """A URL's dated versions (``GET /v1/urls?url=``): ``{"url", "versions": [...]}``.

        Raises NotFound for a URL never stored."""
        return self._request("GET", "/v1/urls", {"url": url})

    def lost(self, url: str) -> Dict[str, Any]:
        """Lost and found (``GET /v1/lost``): where a URL's content lives now (``status``,
        ``best``, ``candidates``, ...). Raises NotFound for a URL never stored."""
        return self._request("GET", "/v1/lost", {"url": url})

    def cluster(self, cluster_id: int, *, after: Optional[str] = None,
                limit: Optional[int] = None) -> Dict[str, Any]:
        """A cluster (by its id or any member's document id), a page of its members."""
        return self._request("GET", f"/v1/clusters/{int(cluster_id)}",
                             {"after": after, "limit": limit})

    def document(self, doc_id: int) -> Dict[str, Any]:
        """A stored document (``GET /v1/documents/ID``)."""
        return self._request("GET", f"/v1/documents/{int(doc_id)}")

    def list_urls(self, **filters: Any) -> Dict[str, Any]:
        """One page of ``GET /v1/urls`` listing: filters ``host``, ``prefix``, ``sweep``,
        ``status``, ``verdict``, ``after``, ``limit``. Pass ``next`` as ``after`` until it is
        None."""
        return self._request("GET", "/v1/urls", filters)

    def stats(self) -> Dict[str, Any]:
        """The store's counts (``GET /v1/stats``): documents, urls, versions, clusters, ..."""
        return self._request("GET", "/v1/stats")

    def ready(self) -> bool:
        """Whether the daemon takes writes now (``GET /readyz``), without retrying."""
        try:
            self._request("GET", "/readyz", retry=NO_RETRY)
        except ApiError:
            return False
        return True

    # -- Sweeps -----------------------------------------------------------------------------

    def sweeps(self) -> List[Dict[str, Any]]:
        """Every sweep (``GET /v1/sweeps``): name, open, start, end, counts by verdict, scope."""
        return self._request("GET", "/v1/sweeps")["sweeps"]

    def open_sweep(self, name: str, *, start: Optional[DateLike] = None,
                   hosts: Optional[Sequence[str]] = None,
                   prefixes: Optional[Sequence[str]] = None) -> Dict[str, Any]:
        """Opens a sweep (``POST /v1/sweeps``), or returns it if it is open already.

        ``hosts`` and ``prefixes`` are its scope: closing it records as gone the URLs of the
        scope it did not see (a sweep without a scope records nothing gone).

        Raises:
            Conflict: a closed sweep has this name, or the open one has another scope.
            InvalidArgument: a bad name, date, host or prefix.
        """
        body = {"name": name, "start": _date_or_none(start),
                "hosts": None if hosts is None else list(hosts),
                "prefixes": None if prefixes is None else list(prefixes)}
        return self._request("POST", "/v1/sweeps", json_body=_without_none(body))

    def close_sweep(self, name: str, *, end: Optional[DateLike] = None, dry_run: bool = False,
                    limit: Optional[int] = None) -> Dict[str, Any]:
        """Closes a sweep (``POST /v1/sweeps/NAME/close``): the sweep with ``closing``
        (``gone_urls``, and the first ``limit`` of them in ``urls``). ``dry_run`` changes
        nothing and answers what it would record gone.

        Raises NotFound for an unknown sweep, InvalidArgument for an ``end`` before its start.
        """
        body = {"end": _date_or_none(end), "dry_run": True if dry_run else None, "limit": limit}
        return self._request("POST", f"/v1/sweeps/{_segment(name)}/close",
                             json_body=_without_none(body))

    def reopen_sweep(self, name: str) -> Dict[str, Any]:
        """Undoes a close (``POST /v1/sweeps/NAME/reopen``): the sweep with ``removed_gone``."""
        return self._request("POST", f"/v1/sweeps/{_segment(name)}/reopen")

    # -- Reports ----------------------------------------------------------------------------

    def report_changes(self, from_sweep: Optional[str] = None, to_sweep: Optional[str] = None,
                       *, list_kind: Optional[str] = None, after: Optional[int] = None,
                       limit: Optional[int] = None,
                       format: str = "json") -> Union[Dict[str, Any], str]:
        """What changed between two sweeps (``GET /v1/reports/changes``); without them, the
        last two sweeps with pages. ``list_kind`` (``moved``, ``died``, ...) asks for a page
        of the URLs behind a count. ``format`` ``csv`` or ``html`` returns the text."""
        query = {"from": from_sweep, "to": to_sweep, "list": list_kind, "after": after,
                 "limit": limit, "format": None if format == "json" else format}
        return self._request("GET", "/v1/reports/changes", query)

    def report_history(self, host: Optional[str] = None,
                       format: str = "json") -> Union[Dict[str, Any], str]:
        """The timeline over all sweeps (``GET /v1/reports/history``), or one host's."""
        query = {"host": host, "format": None if format == "json" else format}
        return self._request("GET", "/v1/reports/history", query)

    def report_identical(self, *, limit: Optional[int] = None, max_urls: Optional[int] = None,
                         format: str = "json") -> Union[Dict[str, Any], str]:
        """Documents held by two or more live URLs (``GET /v1/reports/identical``)."""
        query = {"limit": limit, "max_urls": max_urls,
                 "format": None if format == "json" else format}
        return self._request("GET", "/v1/reports/identical", query)

    def report_clusters(self, *, format: str = "json",
                        **params: Any) -> Union[Dict[str, Any], str]:
        """Clusters by bytes in common (``GET /v1/reports/clusters``); ``params``: ``limit``,
        ``max_urls``, ``min_bytes``, ``min_share``, ``max_chunk_docs``,
        ``max_pairs_per_doc``."""
        query = dict(params)
        if format != "json":
            query["format"] = format
        return self._request("GET", "/v1/reports/clusters", query)

    # -- The wire ---------------------------------------------------------------------------

    def close(self) -> None:
        """Closes this thread's connection (others close when their threads end)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _connection(self, timeout: Optional[float]) -> Tuple[http.client.HTTPConnection, bool]:
        """This thread's connection, and whether it was used before (it may have gone stale)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            return conn, True
        cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=timeout)
        self._local.conn = conn
        return conn, False

    def _request(self, method: str, route: str, query: Optional[Mapping[str, Any]] = None, *,
                 body: Union[bytes, IO[bytes], None] = None,
                 json_body: Optional[Mapping[str, Any]] = None,
                 headers: Optional[Mapping[str, str]] = None,
                 timeout: Optional[float] = None,
                 retry: Optional[RetryPolicy] = None) -> Any:
        """Sends a request, retrying as the policy says; the decoded answer, or raises."""
        policy = retry or self.retry
        target = self._prefix + route
        params = _without_none(query or {})
        if params:
            target += "?" + urllib.parse.urlencode(params, quote_via=urllib.parse.quote)
        all_headers = {"User-Agent": self.user_agent, "Accept": "application/json"}
        if self.token:
            all_headers["Authorization"] = "Bearer " + self.token
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        payload = _Body(body)
        if payload.length is not None:
            all_headers["Content-Length"] = str(payload.length)
        elif method == "POST" and body is None:
            all_headers["Content-Length"] = "0"
        timeout = self.timeout if timeout is None else timeout
        attempt = 0
        while True:
            try:
                return self._send(method, target, payload, all_headers, timeout)
            except ApiError as e:
                if e.status not in policy.statuses or not payload.replayable:
                    raise
                error: Exception = e
                retry_after = e.retry_after
            except ConnectionFailed as e:
                if not policy.retry_connection_errors or e.timed_out or not payload.replayable:
                    raise
                error, retry_after = e, None
            if attempt + 1 >= policy.attempts:
                raise error
            wait = policy.wait_before(attempt, retry_after)
            if wait > policy.max_wait:
                raise error
            policy.sleep(wait)
            attempt += 1

    def _send(self, method: str, target: str, payload: _Body, headers: Mapping[str, str],
              timeout: Optional[float]) -> Any:
        """One try: sends, reads and decodes the answer. A connection reused from an earlier
        request that turns out closed by the daemon (idle keep-alive) is replaced once."""
        for fresh_try in (False, True):
            conn, reused = self._connection(timeout)
            try:
                conn.request(method, target, body=payload.open(), headers=dict(headers))
                response = conn.getresponse()
                data = response.read()
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                self.close()
                if reused and not fresh_try and payload.replayable and \
                        isinstance(e, (http.client.RemoteDisconnected, ConnectionResetError,
                                       BrokenPipeError)):
                    continue
                what = "timed out" if isinstance(e, TimeoutError) else f"failed: {e}"
                raise ConnectionFailed(f"{method} {self.base_url}{target.split('?')[0]} {what}",
                                       e) from e
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            return self._decode(response, data)
        raise AssertionError("unreachable")

    @staticmethod
    def _decode(response: http.client.HTTPResponse, data: bytes) -> Any:
        content_type = response.getheader("Content-Type", "")
        parsed: Any = None
        if content_type.startswith("application/json"):
            try:
                parsed = json.loads(data)
            except ValueError:
                parsed = None
        if 200 <= response.status < 300:
            if parsed is not None:
                return parsed
            return data.decode("utf-8", errors="replace")
        code, message = "", data.decode("utf-8", errors="replace").strip()[:500]
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            code = str(parsed["error"].get("code", ""))
            message = str(parsed["error"].get("message", ""))
        raise error_for(response.status, code, message or response.reason,
                        parse_retry_after(response.getheader("Retry-After")),
                        parsed if isinstance(parsed, dict) else None)


def _without_none(values: Mapping[str, Any]) -> Dict[str, Any]:
    """The entries whose value is not None: the parameters a caller gave."""
    return {k: v for k, v in values.items() if v is not None}


def _date_or_none(value: Optional[DateLike]) -> Optional[str]:
    return None if value is None else format_date(value)


def _segment(name: str) -> str:
    """A sweep name as one path segment."""
    return urllib.parse.quote(name, safe="")
