"""Tests of shingled_client.Client.

RetryTest and ErrorTest talk to a scripted HTTP server on 127.0.0.1 (http.server in a thread)
that answers what each test lists, 503 with Retry-After, a body that is not JSON, nothing at
all: what a real daemon does only under load or failure. DaemonTest talks to a real `shingled
serve` (the binary in SHINGLED_BINARY, which CTest sets; skipped without it) on a free loopback
port with a temporary store, and runs the Python examples of docs/CLIENTS.md.

    PYTHONPATH=clients/python SHINGLED_BINARY=build/daemon/shingled \\
        /usr/bin/python3 -m unittest discover -s clients/python/tests -v
"""

import contextlib
import http.server
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

import shingled_client
from shingled_client import (Client, ConnectionFailed, InsufficientStorage, InvalidArgument,
                             NotFound, RetryPolicy, ServerError, Unauthenticated, Unavailable)

SOURCE_DIR = os.environ.get(
    "SHINGLED_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))


class ScriptedServer:
    """An HTTP/1.1 server on 127.0.0.1 that answers each request with the next of `answers`
    (status, headers, body), and records every request (method, path, headers, body).

    An answer of None closes the connection without answering; an answer with the header
    "X-Delay" waits that many seconds first; "X-Close" closes the connection after answering
    without saying so (as a server whose keep-alive timeout ran out).
    """

    def __init__(self, answers):
        self.answers = list(answers)
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_one(self):
                length = int(self.headers.get("Content-Length", "0") or "0")
                body = self.rfile.read(length) if length else b""
                server.requests.append((self.command, self.path, dict(self.headers), body))
                answer = server.answers.pop(0) if server.answers else (500, {}, b"no answer left")
                if answer is None:
                    self.close_connection = True
                    return
                status, headers, payload = answer
                headers = dict(headers)
                if "X-Delay" in headers:
                    time.sleep(float(headers.pop("X-Delay")))
                close = headers.pop("X-Close", None) is not None
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except OSError:  # the client gave up waiting (the timeout test)
                    self.close_connection = True
                    return
                if close:
                    self.close_connection = True

            do_GET = do_POST = handle_one

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def json_answer(status, obj, **headers):
    return (status, dict(headers, **{"Content-Type": "application/json"}),
            json.dumps(obj).encode())


def error_answer(status, code, message, **headers):
    return json_answer(status, {"error": {"code": code, "message": message}}, **headers)


PAGE = {"url": "https://example.com/a", "verdict": "new", "doc": 1, "cluster": 1, "url_id": 1,
        "matches": [], "replayed": False}


class Recorder:
    """A RetryPolicy.sleep that records the waits instead of sleeping."""

    def __init__(self):
        self.waits = []

    def __call__(self, seconds):
        self.waits.append(seconds)


class ScriptedTestCase(unittest.TestCase):
    def serve(self, *answers):
        server = ScriptedServer(answers)
        self.addCleanup(server.stop)
        return server

    def client_for(self, *args, **kwargs):
        client = Client(*args, **kwargs)
        self.addCleanup(client.close)
        return client


class RetryTest(ScriptedTestCase):
    def test_503_is_retried_after_retry_after(self):
        server = self.serve(error_answer(503, "unavailable", "the ingest queue is full",
                                         **{"Retry-After": "2"}),
                            json_answer(200, PAGE))
        sleep = Recorder()
        client = self.client_for(server.url, retry=RetryPolicy(backoff=0.5, sleep=sleep))
        result = client.post_page("https://example.com/a", b"<p>a</p>")
        self.assertEqual(result.verdict, "new")
        self.assertEqual(sleep.waits, [2.0])  # Retry-After, longer than the backoff
        self.assertEqual(len(server.requests), 2)
        self.assertEqual(server.requests[0][3], server.requests[1][3])  # the same body again

    def test_507_backs_off_exponentially_then_raises(self):
        answer = error_answer(507, "insufficient_storage", "disk full: /var/lib/shingled")
        server = self.serve(*[answer] * 4)
        sleep = Recorder()
        client = self.client_for(server.url, retry=RetryPolicy(attempts=4, backoff=0.5, sleep=sleep))
        with self.assertRaises(InsufficientStorage) as cm:
            client.post_page("https://example.com/a", b"<p>a</p>")
        self.assertEqual(sleep.waits, [0.5, 1.0, 2.0])
        self.assertEqual(len(server.requests), 4)
        e = cm.exception
        self.assertEqual((e.status, e.code, e.message),
                         (507, "insufficient_storage", "disk full: /var/lib/shingled"))

    def test_backoff_is_capped(self):
        policy = RetryPolicy(backoff=1, max_backoff=5)
        self.assertEqual([policy.wait_before(n, None) for n in range(5)], [1, 2, 4, 5, 5])
        self.assertEqual(policy.wait_before(4, 9), 9)

    def test_a_retry_after_over_max_wait_is_not_waited_for(self):
        server = self.serve(error_answer(503, "unavailable", "busy", **{"Retry-After": "3600"}))
        sleep = Recorder()
        client = self.client_for(server.url, retry=RetryPolicy(max_wait=60, sleep=sleep))
        with self.assertRaises(Unavailable) as cm:
            client.stats()
        self.assertEqual(cm.exception.retry_after, 3600)
        self.assertEqual(sleep.waits, [])
        self.assertEqual(len(server.requests), 1)

    def test_a_retry_after_date(self):
        now = 1_700_000_000.0
        date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now + 30))
        self.assertEqual(shingled_client.parse_retry_after(date, now=now), 30)
        self.assertEqual(shingled_client.parse_retry_after("7"), 7)
        self.assertIsNone(shingled_client.parse_retry_after("soon"))
        self.assertIsNone(shingled_client.parse_retry_after(None))

    def test_other_errors_are_not_retried(self):
        server = self.serve(error_answer(400, "invalid_argument", "url \"x\" is not absolute"))
        sleep = Recorder()
        client = self.client_for(server.url, retry=RetryPolicy(sleep=sleep))
        with self.assertRaises(InvalidArgument) as cm:
            client.post_page("x", b"<p>a</p>")
        self.assertEqual(cm.exception.message, "url \"x\" is not absolute")
        self.assertEqual(cm.exception.code, "invalid_argument")
        self.assertEqual(sleep.waits, [])

    def test_a_warc_file_is_sent_again_whole(self):
        server = self.serve(error_answer(503, "unavailable", "uploads", **{"Retry-After": "1"}),
                            json_answer(200, {"pages": 1, "records": 1, "errors": []}))
        sleep = Recorder()
        client = self.client_for(server.url, retry=RetryPolicy(sleep=sleep))
        with tempfile.NamedTemporaryFile(suffix=".warc") as f:
            f.write(b"WARC/1.1\r\n" + b"x" * 5000)
            f.flush()
            f.seek(0)
            answer = client.post_warc(f, sweep="s")
        self.assertEqual(answer["pages"], 1)
        self.assertEqual(sleep.waits, [1.0])
        self.assertEqual([len(r[3]) for r in server.requests], [5010, 5010])
        self.assertEqual(server.requests[0][2]["Content-Type"], "application/warc")
        self.assertEqual(server.requests[0][1], "/v1/pages?sweep=s")

    def test_a_stream_that_cannot_be_read_again_is_not_retried(self):
        server = self.serve(error_answer(503, "unavailable", "busy", **{"Retry-After": "1"}))
        client = self.client_for(server.url, retry=RetryPolicy(sleep=Recorder()))
        with self.assertRaises(Unavailable):
            client.post_warc(io.BytesIO(b"WARC/1.1\r\n"))
        self.assertEqual(len(server.requests), 1)


class ErrorTest(ScriptedTestCase):
    def test_a_body_that_is_not_json(self):
        server = self.serve((502, {"Content-Type": "text/html"}, b"<h1>Bad Gateway</h1>"))
        with self.assertRaises(ServerError) as cm:
            self.client_for(server.url).stats()
        self.assertEqual(cm.exception.status, 502)
        self.assertEqual(cm.exception.code, "")
        self.assertIn("Bad Gateway", cm.exception.message)

    def test_the_token_and_the_query(self):
        server = self.serve(json_answer(200, PAGE))
        self.client_for(server.url + "/prefix/", token="t" * 20).post_page(
            "https://example.com/a b", b"<p>a</p>", status=200, sweep="s 1",
            fetched_at="2024-05-01")
        method, path, headers, body = server.requests[0]
        self.assertEqual(method, "POST")
        self.assertEqual(path, "/prefix/v1/pages?url=https%3A%2F%2Fexample.com%2Fa%20b"
                               "&fetched_at=2024-05-01&status=200&sweep=s%201")
        self.assertEqual(headers["Authorization"], "Bearer " + "t" * 20)
        self.assertEqual(headers["Content-Type"], "text/html")
        self.assertEqual(body, b"<p>a</p>")

    def test_a_refused_connection(self):
        with socket.socket() as s:  # a port nothing listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        sleep = Recorder()
        with self.assertRaises(ConnectionFailed) as cm:
            self.client_for(f"http://127.0.0.1:{port}", retry=RetryPolicy(sleep=sleep)).stats()
        self.assertFalse(cm.exception.timed_out)
        self.assertEqual(sleep.waits, [])  # not retried by default
        with self.assertRaises(ConnectionFailed):
            self.client_for(f"http://127.0.0.1:{port}",
                   retry=RetryPolicy(attempts=3, backoff=0.1, retry_connection_errors=True,
                                     sleep=sleep)).stats()
        self.assertEqual(sleep.waits, [0.1, 0.2])

    def test_a_slow_daemon_times_out_and_is_not_retried(self):
        server = self.serve(json_answer(200, {}, **{"X-Delay": "2"}))
        sleep = Recorder()
        client = self.client_for(server.url, timeout=0.3,
                        retry=RetryPolicy(retry_connection_errors=True, sleep=sleep))
        start = time.monotonic()
        with self.assertRaises(ConnectionFailed) as cm:
            client.stats()
        self.assertTrue(cm.exception.timed_out)
        self.assertLess(time.monotonic() - start, 1.5)
        self.assertEqual(sleep.waits, [])

    def test_a_connection_the_server_closed_is_replaced(self):
        # The first answer keeps the connection open, then the server drops it (an idle
        # keep-alive timeout): the second request goes out again on a new connection, however
        # the close meets it (a closed socket, a reset, or no answer).
        server = self.serve(json_answer(200, {"documents": 1}, **{"X-Close": "1"}),
                            json_answer(200, {"documents": 2}))
        client = self.client_for(server.url, retry=RetryPolicy(attempts=1))
        self.assertEqual(client.stats()["documents"], 1)
        self.assertEqual(client.stats()["documents"], 2)
        self.assertEqual(len(server.requests), 2)

    def test_a_batch_with_bytes_that_are_not_utf8(self):
        client = self.client_for("http://127.0.0.1:1")
        with self.assertRaises(ValueError):
            client.post_pages([{"url": "https://example.com/a", "content": b"\xff\xfe"}])


class Daemon:
    """A `shingled serve` on a free loopback port with a store in a temporary directory."""

    def __init__(self, binary, config=""):
        self.dir = tempfile.mkdtemp(prefix="shingled-client-")
        config_path = os.path.join(self.dir, "shingled.toml")
        with open(config_path, "w") as f:
            f.write(config)
        self.log_path = os.path.join(self.dir, "log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "serve", "--config", config_path, "--store", os.path.join(self.dir, "store"),
             "--listen", "127.0.0.1:0"], stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as f:
                m = re.search(rb"listening on 127\.0\.0\.1:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.01)  # poll interval
        self.stop()
        with open(self.log_path, "rb") as f:
            raise RuntimeError("the daemon did not start: " + f.read().decode(errors="replace"))

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def words(seed, n=300):
    """A page of `n` words drawn from `seed`: pages of different seeds share almost nothing."""
    x = seed * 0x9E3779B97F4A7C15 + 1
    out = []
    for _ in range(n):
        x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 7
        x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
        out.append(f"w{x % 5000}")
    return out


def html(seed, changed=0):
    w = words(seed)
    for i in range(changed):  # the last words: the fewest shingles changed
        w[len(w) - 1 - i] = f"changed{i}"
    return ("<html><body><p>" + " ".join(w) + "</p></body></html>").encode()


def warc_record(url, body, date="2024-05-02T00:00:00Z"):
    http_part = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " +
                 str(len(body)).encode() + b"\r\n\r\n" + body)
    head = (f"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\n"
            f"WARC-Date: {date}\r\nWARC-Record-ID: <urn:uuid:{abs(hash(url)):032x}>\r\n"
            f"Content-Type: application/http; msgtype=response\r\n"
            f"Content-Length: {len(http_part)}\r\n\r\n").encode()
    return head + http_part + b"\r\n\r\n"


TOKEN = "a-write-token-of-some-length-0123"


@unittest.skipUnless(os.environ.get("SHINGLED_BINARY"),
                     "needs SHINGLED_BINARY, the shingled binary (CTest sets it)")
class DaemonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="shingled-client-token-")
        token_file = os.path.join(cls.tmp, "token")
        with open(token_file, "w") as f:
            f.write(TOKEN + "\n")
        os.chmod(token_file, 0o600)
        cls.daemon = Daemon(os.environ["SHINGLED_BINARY"],
                            f'[auth]\ntoken_file = "{token_file}"\n')
        cls.client = Client(cls.daemon.url, token=TOKEN)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.daemon.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_pages_batches_warc_queries_sweeps_and_reports(self):
        c = self.client
        self.assertTrue(c.ready())
        c.open_sweep("s1", start="2024-05-01", hosts=["example.com"])
        a = c.post_page("https://example.com/a", html(1), sweep="s1",
                        fetched_at="2024-05-01T10:00:00Z")
        self.assertEqual((a.verdict, a.doc, a.cluster), ("new", a.doc, a.doc))
        copy = c.post_page("https://example.com/copy", html(1), sweep="s1",
                           fetched_at="2024-05-01T10:00:01Z")
        self.assertEqual((copy.verdict, copy.doc), ("duplicate", a.doc))
        near = c.post_page("https://example.com/near", html(1, changed=6), sweep="s1",
                           content_type="text/html; charset=utf-8",
                           fetched_at="2024-05-01T10:00:02Z")
        self.assertEqual((near.verdict, near.cluster), ("near_duplicate", a.cluster))
        self.assertEqual(near.matches[0]["doc"], a.doc)
        # Posting the same attempt again (a lost answer) is a replay.
        again = c.post_page("https://example.com/copy", html(1), sweep="s1",
                            fetched_at="2024-05-01T10:00:01Z")
        self.assertTrue(again.replayed)

        batch = c.post_pages([
            {"url": "https://example.com/b", "content": html(2).decode(), "content_type":
             "text/html", "fetched_at": "2024-05-01T11:00:00Z"},
            {"url": "https://example.com/dead", "status": 404},
            {"url": "https://example.com/old", "status": 301, "location": "/a"},
        ], sweep="s1")
        self.assertEqual((batch.pages, batch.errors), (3, 0))
        self.assertEqual([r.verdict for r in batch.results], ["new", "gone", "redirect"])

        c.open_sweep("s2", start="2024-05-02", hosts=["example.com"])
        with tempfile.NamedTemporaryFile(suffix=".warc") as f:
            f.write(warc_record("https://example.com/a", html(1)) +
                    warc_record("https://example.com/moved", html(2)))
            f.flush()
            summary = c.post_warc(f.name, sweep="s2")
        self.assertEqual((summary["pages"], summary["unchanged"], summary["duplicate"]),
                         (2, 1, 1), summary)

        similar = c.similar("https://example.com/a", threshold=0.3)
        self.assertIn("https://example.com/near", [r["url"] for r in similar["results"]])
        by_page = c.similar(page=html(1, changed=3), threshold=0.3)
        self.assertIn(a.doc, [r["doc"] for r in by_page["results"]])
        history = c.history("HTTPS://Example.com:443/a")
        self.assertEqual(history["url"], "https://example.com/a")
        self.assertEqual([v["verdict"] for v in history["versions"]], ["new", "unchanged"])
        self.assertEqual(c.cluster(a.cluster)["size"], 2)
        self.assertGreater(c.document(a.doc)["bytes"], 0)
        self.assertEqual(c.stats()["documents"], 3)

        dry = c.close_sweep("s2", end="2024-05-03", dry_run=True)
        self.assertTrue(dry["closing"]["dry_run"])
        closed = c.close_sweep("s2", end="2024-05-03")
        self.assertFalse(closed["open"])
        self.assertEqual(closed["closing"]["gone_urls"], dry["closing"]["gone_urls"])
        self.assertGreater(closed["closing"]["gone_urls"], 0)
        lost = c.lost("https://example.com/b")
        self.assertEqual(lost["status"], "moved", lost)
        self.assertEqual(lost["best"]["url"], "https://example.com/moved")
        reopened = c.reopen_sweep("s2")
        self.assertEqual(reopened["removed_gone"], closed["closing"]["gone_urls"])
        self.assertEqual({s["name"] for s in c.sweeps()} >= {"s1", "s2"}, True)

        changes = c.report_changes("s1", "s2")
        self.assertEqual(changes["from"]["name"], "s1")
        self.assertIn("moved", changes)
        self.assertTrue(c.report_changes("s1", "s2", format="csv").startswith("host,"))
        self.assertIn("sweeps", c.report_history())
        self.assertIn("totals", c.report_identical(limit=10))
        self.assertIn("clusters", c.report_clusters(min_bytes=100))
        self.assertIn("urls", c.list_urls(host="example.com", limit=2))

    def test_errors_carry_the_daemons_message(self):
        with self.assertRaises(NotFound) as cm:
            self.client.lost("https://example.com/never")
        self.assertEqual(cm.exception.status, 404)
        self.assertEqual(cm.exception.code, "not_found")
        self.assertIn("https://example.com/never", cm.exception.message)
        with self.assertRaises(Unauthenticated) as cm, \
                Client(self.daemon.url, token="wrong-token-0123456789") as wrong:
            wrong.post_page("https://example.com/z", b"<p>z</p>")
        self.assertEqual(cm.exception.message, "the bearer token is wrong")
        with self.assertRaises(Unauthenticated), Client(self.daemon.url) as none:
            none.open_sweep("s9")
        with self.assertRaises(InvalidArgument) as cm:
            self.client.post_page("not a url", b"<p>z</p>")
        self.assertIn("url", cm.exception.message)
        with self.assertRaises(shingled_client.UnsupportedMediaType):
            self.client.post_page("https://example.com/img", b"\x89PNG", content_type="image/png")
        self.client.open_sweep("closed")
        self.client.close_sweep("closed")
        with self.assertRaises(shingled_client.Conflict) as cm:
            self.client.post_page("https://example.com/z", b"<p>z</p>", sweep="closed")
        self.assertIn("closed", cm.exception.message)
        with self.assertRaises(shingled_client.NoWarcRecords):
            self.client.post_warc(io.BytesIO(b"not a warc file at all"))

    def test_the_examples_of_docs_clients_md(self):
        # Each ```python block after a "<!-- clients-test: python -->" line, in order, in one
        # namespace, against a daemon of its own (the examples' URLs and sweep are theirs);
        # the examples' token is this daemon's.
        with open(os.path.join(SOURCE_DIR, "docs", "CLIENTS.md")) as f:
            text = f.read()
        blocks = re.findall(r"<!-- clients-test: python -->\s*```python\n(.*?)```", text, re.S)
        self.assertGreaterEqual(len(blocks), 3)
        token_file = os.path.join(self.tmp, "token")
        daemon = Daemon(os.environ["SHINGLED_BINARY"], f'[auth]\ntoken_file = "{token_file}"\n')
        self.addCleanup(daemon.stop)
        namespace = {}
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                for block in blocks:
                    code = block.replace("http://127.0.0.1:8480", daemon.url)
                    code = code.replace('os.environ["SHINGLED_TOKEN"]', repr(TOKEN))
                    exec(compile(code, "docs/CLIENTS.md", "exec"), namespace)
        finally:
            for value in namespace.values():
                if isinstance(value, Client):
                    value.close()
        # What the examples' comments say they print.
        printed = out.getvalue().splitlines()
        self.assertEqual(printed[0], "new duplicate True")
        self.assertEqual(printed[1], "['new', 'gone']")
        self.assertEqual(printed[2], "new")
        self.assertIn("404 not_found URL never stored: https://example.com/never-seen", printed)
        self.assertEqual(printed[-1], "True")

if __name__ == "__main__":
    unittest.main()
