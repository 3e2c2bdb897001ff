#!/usr/bin/python3
"""Checks docs/openapi.yaml against the real daemon (ctest -R openapi_test).

1. The document: valid against the OpenAPI 3.1 schema (@seriousme/openapi-schema-validator, npm,
   when the build could install it), and by this script's own rules: OpenAPI 3.1, every $ref
   resolves, every schema is a valid JSON Schema 2020-12, every operation names its route
   (`x-route`) and has an operationId of its own.
2. Coverage of the source: every route daemon/api/api.cc routes (`route = "..."`, and the fixed
   paths it answers before its table: /healthz, /login, ...) is described, and nothing else.
3. Against a real `shingled serve` on a fresh store on a free 127.0.0.1 port (nothing else is
   contacted), for every operation:
   - the routes: those the daemon's /metrics names (a duration series each) are the described ones;
   - the methods: a PUT answers 405 with `Allow` listing exactly the described methods;
   - the query parameters: an unknown one answers 400 naming those the route takes, which must be
     the described ones (the union over the probes of an operation, see PARAM_PROBES);
   - a walk through the API (pages posted, sweeps opened and closed, queries, reports, templates,
     takedowns, errors, a crawler sweep of a loopback site, then reads protected by a SIGHUP reload) in
     which every answer's status must be described for its operation, its Content-Type among the
     described ones, and a JSON body valid against the described schema (answer objects say
     `additionalProperties: false`, so a field the daemon writes and the description lacks
     fails). Every operation must get at least one success (2xx or 3xx);
   - then answers that need limits of their own, each on a daemon of its own started for it, and
     provoked by ordering, never by a race (`limits`): 408 for a WARC body too slow, 507 and a
     /readyz of 503 once a small map is full, 503 for a WARC upload that finds no slot.

Usage: openapi_test.py SHINGLED_BINARY SOURCE_DIR [NODE_MODULES]
With NODE_MODULES holding @seriousme/openapi-schema-validator (scripts/install-npm-package.sh)
and node on the PATH, the document is also validated against the OpenAPI 3.1 schema with it.
(OPENAPI_TEST_VERBOSE=1 prints every request and answer of the walk.)
Needs Debian's python3-yaml and python3-jsonschema (scripts/install-deps.sh).
"""

import gzip
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

import jsonschema
import yaml

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, flush=True)


# ---------------------------------------------------------------------------------------------
# 1. The document.


def walk_refs(node, out):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out.append(v)
            else:
                walk_refs(v, out)
    elif isinstance(node, list):
        for v in node:
            walk_refs(v, out)


def resolve_pointer(doc, ref):
    if not ref.startswith("#/"):
        return None
    node = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def check_document(doc):
    if not str(doc.get("openapi", "")).startswith("3.1."):
        fail("openapi must be 3.1.x, is %r" % doc.get("openapi"))
    for key in ("title", "version"):
        if key not in doc.get("info", {}):
            fail("info.%s is missing" % key)
    refs = []
    walk_refs(doc, refs)
    for ref in sorted(set(refs)):
        if resolve_pointer(doc, ref) is None:
            fail("$ref %s does not resolve" % ref)
    for name, schema in doc.get("components", {}).get("schemas", {}).items():
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as e:
            fail("components.schemas.%s is not a valid JSON Schema: %s" % (name, e.message))
    operation_ids = set()
    for path, item in doc.get("paths", {}).items():
        if not path.startswith("/"):
            fail("path %s does not start with /" % path)
        templated = set(re.findall(r"\{([^}]+)\}", path))
        for method, op in item.items():
            if method not in HTTP_METHODS:
                if method != "parameters":
                    fail("%s: %s is not an HTTP method" % (path, method))
                continue
            where = "%s %s" % (method.upper(), path)
            oid = op.get("operationId")
            if not oid or oid in operation_ids:
                fail("%s: operationId missing or repeated (%r)" % (where, oid))
            operation_ids.add(oid)
            if not op.get("x-route"):
                fail("%s: no x-route" % where)
            if not op.get("responses"):
                fail("%s: no responses" % where)
            declared = set()
            for p in params_of(doc, item, op):
                if p.get("in") not in ("query", "path", "header", "cookie"):
                    fail("%s: parameter %s is in %r" % (where, p.get("name"), p.get("in")))
                if p.get("in") == "path":
                    declared.add(p["name"])
                    if not p.get("required"):
                        fail("%s: path parameter %s must be required" % (where, p["name"]))
                if "schema" in p:
                    try:
                        jsonschema.Draft202012Validator.check_schema(p["schema"])
                    except jsonschema.SchemaError as e:
                        fail("%s: parameter %s: %s" % (where, p.get("name"), e.message))
            if declared != templated:
                fail("%s: path parameters %s, template has %s" % (where, declared, templated))
            for status, response in op.get("responses", {}).items():
                if not re.fullmatch(r"[1-5][0-9][0-9]", str(status)):
                    fail("%s: response %r is not a status code" % (where, status))
                response = deref(doc, response)
                if "description" not in response:
                    fail("%s %s: response without a description" % (where, status))


def deref(doc, node):
    while isinstance(node, dict) and "$ref" in node:
        node = resolve_pointer(doc, node["$ref"])
    return node


def params_of(doc, item, op):
    out = {}
    for p in item.get("parameters", []) + op.get("parameters", []):
        p = deref(doc, p)
        out[(p.get("name"), p.get("in"))] = p
    return list(out.values())


def check_with_npm_validator(path, node_modules):
    """Validates the document against the OpenAPI schema; returns whether the validator ran."""
    cli = os.path.join(node_modules or "",
                       "@seriousme/openapi-schema-validator/bin/validate-api-cli.js")
    node = shutil.which("node")
    if not node_modules or not os.path.exists(cli) or not node:
        print("NOTE: @seriousme/openapi-schema-validator not run (no node, or not installed in %s: "
              "scripts/install-npm-package.sh)" % node_modules)
        return False
    run = subprocess.run([node, cli, path], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        fail("docs/openapi.yaml is not a valid OpenAPI document "
             "(@seriousme/openapi-schema-validator):\n" + run.stdout[-3000:] + run.stderr[-1000:])
    else:
        print("@seriousme/openapi-schema-validator: docs/openapi.yaml is valid")
    return True


# ---------------------------------------------------------------------------------------------
# 2. Coverage of daemon/api/api.cc.


def routes_in_source(source_dir):
    """The route names of api.cc's table, and the fixed paths it answers before the table."""
    with open(os.path.join(source_dir, "daemon/api/api.cc")) as f:
        text = f.read()
    serve = text[text.index("void Api::Serve("):text.index("void Api::Dispatch(")]
    # Not `std::string route = "unknown"`, the default when no route matches.
    names = set(re.findall(r'(?<!std::string )\broute = "(\w+)"', serve))
    # The probes and the sign-in pages answer before the table, under their path's name.
    head = serve[:serve.index("std::string allow;")]
    for path in re.findall(r'path == "(/[\w/]*)"', head):
        names.add(path[1:])
    return names


def check_coverage(doc, source_dir):
    in_source = routes_in_source(source_dir)
    described = set()
    for item in doc["paths"].values():
        for method, op in item.items():
            if method in HTTP_METHODS and op.get("x-route"):
                described.add(op["x-route"])
    for r in sorted(in_source - described):
        fail("route %s (daemon/api/api.cc) is not described in docs/openapi.yaml" % r)
    for r in sorted(described - in_source):
        fail("docs/openapi.yaml describes route %s, which daemon/api/api.cc does not have" % r)
    print("coverage: %d routes in daemon/api/api.cc, %d described" %
          (len(in_source), len(described)))
    return in_source


# ---------------------------------------------------------------------------------------------
# 3. The daemon.


def main_config(tmp, token, site_port):
    """The walk's daemon: a token for writes, small batches, and the crawler."""
    token_file = os.path.join(tmp, "token")
    with open(token_file, "w") as f:
        f.write(token + "\n")
    os.chmod(token_file, 0o600)
    return ('[auth]\ntoken_file = "%s"\nprotect_writes = true\nprotect_reads = false\n'
            '[limits]\nmax_batch_pages = 5\n[logging]\naccess_log = false\n'
            # The crawler on the loopback site alone, started by POST /v1/crawl only.
            '[crawler]\nenabled = true\nseeds = ["http://127.0.0.1:%d/p0"]\nevery = "off"\n'
            'allow_private_addresses = true\nobey_robots = false\nper_host_delay_ms = 0\n'
            'max_pages = 20\n' % (token_file, site_port))


class Daemon:
    def __init__(self, binary, tmp, config_text):
        os.makedirs(tmp, exist_ok=True)
        self.store = os.path.join(tmp, "store")
        self.config = config = os.path.join(tmp, "shingled.toml")
        with open(config, "w") as f:
            f.write(config_text)
        self.log_path = os.path.join(tmp, "shingled.log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "serve", "--config", config, "--store", self.store, "--listen", "127.0.0.1:0"],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.port = 0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as f:
                m = re.search(rb"listening on 127\.0\.0\.1:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)  # poll interval
        raise RuntimeError("the daemon did not start:\n" + open(self.log_path).read())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Checker:
    def __init__(self, doc, daemon, token):
        self.doc = doc
        self.daemon = daemon
        self.token = token
        self.schema_root = {"components": doc.get("components", {})}
        self.validated = 0
        self.seen = set()  # (path template, method, status) answered in the walk
        self.successes = {}  # (x-route, method) -> count of 2xx/3xx answers
        self.operations = {}  # (x-route, method) -> (path template, operation)
        self.templates = []
        for path, item in doc["paths"].items():
            rx = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$"
            self.templates.append((re.compile(rx), path, item))
            for method, op in item.items():
                if method in HTTP_METHODS:
                    self.operations[(op["x-route"], method)] = (path, op)
        # Literal paths first: /v1/clusters/{id} must not take /v1/clusters/1/template.
        self.templates.sort(key=lambda t: (t[1].count("{"), -len(t[1])))

    def find(self, path):
        for rx, template, item in self.templates:
            if rx.match(path):
                return template, item
        return None, None

    def request(self, method, target, body=None, headers=None, auth=True):
        headers = dict(headers or {})
        if auth and "Authorization" not in headers:
            headers["Authorization"] = "Bearer " + self.token
        conn = http.client.HTTPConnection("127.0.0.1", self.daemon.port, timeout=120)
        try:
            conn.request(method, target, body=body, headers=headers)
            res = conn.getresponse()
            data = res.read()
            return res.status, {k.lower(): v for k, v in res.getheaders()}, data
        finally:
            conn.close()

    def call(self, method, target, body=None, headers=None, expect=None, auth=True):
        """Sends a request, checks the answer against the description; returns (status, json)."""
        status, res_headers, data = self.request(method, target, body, headers, auth)
        return self.check(method, target, status, res_headers, data, expect)

    def check(self, method, target, status, res_headers, data, expect=None):
        """Checks an answer against the description; returns (status, json)."""
        if os.environ.get("OPENAPI_TEST_VERBOSE"):
            print("%s %s -> %d %s" % (method, target, status, data[:2000]), flush=True)
        where = "%s %s -> %d" % (method, target[:120], status)
        if expect is not None and status != expect:
            fail("%s, expected %d: %s" % (where, expect, data[:300]))
        path = urllib.parse.urlsplit(target).path
        template, item = self.find(path)
        if item is None or method.lower() not in item:
            fail("%s: no operation describes it" % where)
            return status, None
        op = item[method.lower()]
        self.seen.add((template, method.lower(), str(status)))
        response = op.get("responses", {}).get(str(status))
        if response is None:
            fail("%s: status %d is not described for %s %s" % (where, status, method, template))
            return status, None
        response = deref(self.doc, response)
        if 200 <= status < 400:
            key = (op["x-route"], method.lower())
            self.successes[key] = self.successes.get(key, 0) + 1
        content = response.get("content", {})
        mime = res_headers.get("content-type", "").split(";")[0].strip()
        if method == "HEAD" or (not content and not data):
            self.validated += 1
            return status, None
        if mime not in content:
            fail("%s: Content-Type %r is not described (%s)" % (where, mime, sorted(content)))
            return status, None
        parsed = None
        if mime == "application/json":
            if res_headers.get("content-encoding") == "gzip":
                data = gzip.decompress(data)
            parsed = json.loads(data)
            schema = content[mime].get("schema")
            if schema is None:
                fail("%s: no schema for %s" % (where, mime))
            else:
                self.validate(where, parsed, schema)
        self.validated += 1
        return status, parsed

    def validate(self, where, value, schema):
        root = dict(self.schema_root)
        root.update(schema)
        validator = jsonschema.Draft202012Validator(
            root, resolver=jsonschema.RefResolver.from_schema(root))
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        for e in errors[:5]:
            # Under oneOf/anyOf, the alternative with the fewest errors says what is wrong.
            leaf = e
            while leaf.context:
                by_branch = {}
                for sub in leaf.context:
                    by_branch.setdefault(sub.relative_schema_path[0], []).append(sub)
                leaf = min(by_branch.values(), key=len)[0]
            fail("%s: body at /%s: %s" % (where, "/".join(str(p) for p in leaf.absolute_path),
                                        leaf.message[:300]))

    def check_methods(self, path, route):
        """PUT is no route's method: 405 with Allow listing the described methods."""
        template, item = self.find(path)
        described = sorted(m.upper() for m in item if m in HTTP_METHODS)
        status, headers, data = self.request("PUT", path, body=b"")
        if status != 405:
            fail("PUT %s -> %d, expected 405" % (path, status))
            return
        allow = sorted(a.strip() for a in headers.get("allow", "").split(","))
        if allow != described:
            fail("%s (%s): the daemon allows %s, docs/openapi.yaml describes %s" %
                 (path, route, allow, described))
        self.validate("PUT %s -> 405" % path, json.loads(data),
                      {"$ref": "#/components/schemas/Error"})
        self.validated += 1

    def check_params(self, method, path, probes, headers=None, body=None):
        """The parameters the daemon says the route takes are the ones described."""
        template, item = self.find(path)
        op = item[method.lower()]
        described = {p["name"] for p in params_of(self.doc, item, op) if p.get("in") == "query"}
        taken = set()
        for probe in probes:
            sep = "&" if probe else ""
            target = path + "?" + probe + sep + "zz_not_a_parameter=1"
            status, answer = self.call(method, target, body=body, headers=headers)
            message = (answer or {}).get("error", {}).get("message", "")
            m = re.search(r"(takes none|takes ([\w, ]+))$", message)
            if status != 400 or not m:
                fail("%s %s -> %d: expected 400 naming the parameters: %s" %
                     (method, target, status, answer))
                continue
            if m.group(2):
                taken |= {t.strip() for t in m.group(2).split(",")}
        if taken != described:
            fail("%s %s: the daemon takes parameters %s, docs/openapi.yaml describes %s" %
                 (method, template, sorted(taken), sorted(described)))


# The query strings to probe each operation's parameters with: those whose set depends on others
# (GET /v1/urls takes `url` alone, or the listing's). Operations not listed take one bare probe;
# those in NO_PARAM_CHECK read their parameters without refusing unknown ones.
PARAM_PROBES = {
    ("urls", "get"): ["", "url=https://example.com/a"],
}
NO_PARAM_CHECK = {"healthz", "readyz", "metrics", "login", "logout"}
# A sample path for each route whose path has parameters.
SAMPLE_PATHS = {
    "cluster_template": "/v1/clusters/1/template",
    "clusters": "/v1/clusters/1",
    "documents": "/v1/documents/1",
    "document_common": "/v1/documents/1/common/2",
    "sweep_close": "/v1/sweeps/zz-none/close",
    "sweep_reopen": "/v1/sweeps/zz-none/reopen",
}


def ndjson(*lines):
    return ("\n".join(json.dumps(l) for l in lines) + "\n").encode()


def walk(c, source_dir):
    """Every route, its successes and its errors, in an order that builds what the next needs."""
    html = "text/html; charset=utf-8"
    # 17 MiB of zeros, over limits.max_body_bytes (16 MiB) once decoded.
    bomb = gzip.compress(b"\0" * (17 << 20))
    gz = {"Content-Encoding": "gzip"}
    with open(os.path.join(source_dir, "tests/data/samples/page-a.html"), "rb") as f:
        page_a = f.read()
    with open(os.path.join(source_dir, "tests/data/samples/page-b.html"), "rb") as f:
        page_b = f.read()
    with open(os.path.join(source_dir, "docs/examples/2024-05.warc"), "rb") as f:
        warc = f.read()

    # The routes the daemon itself names: each has its request duration series from start-up
    # (daemon/metrics/metrics.cc's kRoutes), "unknown" and "none" being no route.
    _, _, metrics = c.request("GET", "/metrics")
    named = set(re.findall(r'shingled_http_request_duration_seconds_count\{[^}]*route="(\w+)"',
                           metrics.decode())) - {"unknown", "none"}
    described = {route for route, _ in c.operations}
    if len(named) < 10 or named != described:
        fail("the daemon's /metrics names routes %s; docs/openapi.yaml describes %s" %
             (sorted(named - described), sorted(described - named)))

    # Probes and metrics.
    c.call("GET", "/healthz", expect=200)
    c.call("HEAD", "/healthz", expect=200)
    c.call("GET", "/readyz", expect=200)
    c.call("HEAD", "/readyz", expect=200)
    c.call("GET", "/metrics", expect=200)
    c.call("GET", "/metrics", headers={"Accept-Encoding": "gzip"}, expect=200)
    c.call("HEAD", "/metrics", expect=200)
    status, _, data = c.request("GET", "/v1/nothing-here")  # no operation: the Error alone
    if status != 404:
        fail("GET /v1/nothing-here -> %d, expected 404" % status)
    c.validate("GET /v1/nothing-here -> 404", json.loads(data),
               {"$ref": "#/components/schemas/Error"})

    # Sweeps.
    c.call("GET", "/v1/sweeps", expect=200)
    c.call("POST", "/v1/sweeps", json.dumps({"name": "2024-05", "start": "2024-05-01"}), expect=200)
    c.call("POST", "/v1/sweeps", json.dumps({"name": "2024-06", "start": "2024-06-01",
                                             "hosts": ["example.com"]}), expect=200)
    c.call("POST", "/v1/sweeps", json.dumps({"strat": "x"}), expect=400)
    c.call("POST", "/v1/sweeps", json.dumps({"name": "x"}), auth=False, expect=401)
    c.call("POST", "/v1/sweeps", json.dumps({"name": "x"}),
           headers={"Authorization": "Bearer wrong"}, expect=401)

    # Pages: one at a time, gzip, a batch, a WARC; and the errors.
    q = "/v1/pages?sweep=2024-05&fetched_at=2024-05-02T00:00:00Z&url="
    c.call("POST", q + "https://example.com/a", page_a, {"Content-Type": html}, expect=200)
    c.call("POST", q + "https://example.com/b", page_b, {"Content-Type": html}, expect=200)
    c.call("POST", q + "https://example.com/a-copy", gzip.compress(page_a),
           {"Content-Type": html, "Content-Encoding": "gzip"}, expect=200)
    c.call("POST", q + "https://example.com/old&status=301&location=/a", b"",
           {"Content-Type": html}, expect=200)
    c.call("POST", q + "https://example.com/dead&status=404", b"", {"Content-Type": html},
           expect=200)
    c.call("POST", q + "https://example.com/a", page_a, {"Content-Type": html}, expect=200)
    c.call("POST", q + "https://example.com/img", b"\x89PNG", {"Content-Type": "image/png"},
           expect=415)
    c.call("POST", q + "https://example.com/z", b"x",
           {"Content-Type": html, "Content-Encoding": "br"}, expect=415)
    c.call("POST", q + "https://example.com/z", b"not gzip",
           {"Content-Type": html, "Content-Encoding": "gzip"}, expect=400)
    c.call("POST", q + "not-a-url", page_a, {"Content-Type": html}, expect=400)
    c.call("POST", "/v1/pages?url=https://example.com/z&sweep=zz-none", page_a,
           {"Content-Type": html}, expect=404)
    c.call("POST", q + "https://example.com/z", page_a, {"Content-Type": html}, auth=False,
           expect=401)
    _, batch = c.call("POST", "/v1/pages?sweep=2024-05", ndjson(
        {"url": "https://example.com/x", "content": "<p>hello world, a page of its own</p>",
         "content_type": "text/html", "fetched_at": "2024-05-03T00:00:00Z"},
        {"url": "https://example.com/gone", "status": 410}),
        {"Content-Type": "application/x-ndjson"}, expect=200)
    c.call("POST", "/v1/pages?sweep=2024-05",
           ndjson(*[{"url": "https://example.com/n%d" % i, "status": 404} for i in range(6)]),
           {"Content-Type": "application/x-ndjson"}, expect=413)
    c.call("POST", "/v1/pages?sweep=2024-05", b'{"url": "https://example.com/x", "nested": {}}\n',
           {"Content-Type": "application/x-ndjson"}, expect=400)
    c.call("POST", "/v1/pages?sweep=2024-05", warc, {"Content-Type": "application/warc"},
           expect=200)
    c.call("POST", "/v1/pages?sweep=2024-05", b"this is not a WARC file\r\n\r\n",
           {"Content-Type": "application/warc"}, expect=422)

    # Similar pages.
    c.call("GET", "/v1/similar?url=https://example.com/a&threshold=0.3&limit=5", expect=200)
    c.call("GET", "/v1/similar?url=https://example.com/never", expect=404)
    c.call("GET", "/v1/similar", expect=400)
    c.call("POST", "/v1/similar?threshold=0.3", page_b, {"Content-Type": html}, expect=200)
    c.call("POST", "/v1/similar", b"", {"Content-Type": html}, expect=400)
    c.call("POST", "/v1/similar", b"x", {"Content-Type": html, "Content-Encoding": "br"},
           expect=415)
    c.call("POST", "/v1/similar", bomb, {"Content-Type": html, "Content-Encoding": "gzip"},
           expect=413)

    # URLs, documents, clusters, listings.
    _, hist = c.call("GET", "/v1/urls?url=https://example.com/a", expect=200)
    c.call("GET", "/v1/urls?url=https://example.com/old", expect=200)
    c.call("GET", "/v1/urls?url=https://example.com/never", expect=404)
    _, page = c.call("GET", "/v1/urls?limit=2", expect=200)
    if page and page.get("next"):
        c.call("GET", "/v1/urls?limit=2&after=" + urllib.parse.quote(page["next"]), expect=200)
    c.call("GET", "/v1/urls?host=example.com&status=live&verdict=new&sweep=2024-05", expect=200)
    c.call("GET", "/v1/urls?status=sleeping", expect=400)
    c.call("GET", "/v1/documents/1", expect=200)
    c.call("GET", "/v1/documents/999999", expect=404)
    c.call("GET", "/v1/documents/x", expect=400)
    c.call("GET", "/v1/documents/1/common/2?limit=3", expect=200)
    c.call("GET", "/v1/documents/x/common/2", expect=400)
    c.call("GET", "/v1/documents/1/common/999999", expect=404)
    _, clusters = c.call("GET", "/v1/clusters?limit=10", expect=200)
    c.call("GET", "/v1/clusters?min_size=1", expect=400)
    c.call("GET", "/v1/identical?limit=10", expect=200)
    c.call("GET", "/v1/identical?min_urls=1", expect=400)
    cluster = clusters["clusters"][0]["id"] if clusters and clusters.get("clusters") else 1
    c.call("GET", "/v1/clusters/%d?limit=1" % cluster, expect=200)
    c.call("GET", "/v1/clusters/999999", expect=404)
    c.call("GET", "/v1/clusters/x", expect=400)

    # Templates.
    c.call("GET", "/v1/templates", expect=200)
    c.call("POST", "/v1/clusters/%d/template" % cluster, expect=200)
    c.call("GET", "/v1/templates?limit=1", expect=200)
    c.call("GET", "/v1/templates?after=x", expect=400)
    c.call("DELETE", "/v1/clusters/x/template", expect=400)
    alone = batch["results"][0]["cluster"] if batch else 0  # a cluster of one document
    c.call("POST", "/v1/clusters/%d/template" % alone, expect=409)
    c.call("POST", "/v1/clusters/%d/template" % cluster, auth=False, expect=401)
    c.call("DELETE", "/v1/clusters/%d/template" % cluster, expect=200)
    c.call("DELETE", "/v1/clusters/%d/template" % cluster, expect=200)
    c.call("POST", "/v1/clusters/999999/template", expect=404)
    c.call("POST", "/v1/clusters/%d/template" % cluster, json.dumps({"x": 1}), expect=400)

    # Sweeps closed (a dry run first), reopened, and the lost.
    c.call("POST", "/v1/sweeps/2024-05/reopen", expect=409)  # open
    c.call("POST", "/v1/sweeps/2024-05/close", b"x", {"Content-Encoding": "br"}, expect=415)
    c.call("POST", "/v1/sweeps/2024-05/close", bomb, gz, expect=413)
    c.call("POST", "/v1/sweeps/2024-05/close", json.dumps({"end": "2024-05-31", "dry_run": True}),
           expect=200)
    c.call("POST", "/v1/sweeps/2024-05/close", json.dumps({"end": "2024-05-31", "limit": 10}),
           expect=200)
    c.call("POST", q + "https://example.com/late", page_a, {"Content-Type": html}, expect=409)
    c.call("POST", "/v1/sweeps/2024-05/reopen", expect=200)
    c.call("POST", "/v1/sweeps/2024-05/close", json.dumps({"end": "2024-05-31"}), expect=200)
    c.call("POST", "/v1/sweeps/zz-none/close", expect=404)
    c.call("POST", "/v1/sweeps/zz-none/reopen", expect=404)
    c.call("POST", "/v1/sweeps/2024-05/close", json.dumps({"dry_run": "yes"}), expect=400)
    q6 = "/v1/pages?sweep=2024-06&fetched_at=2024-06-02T00:00:00Z&url="
    c.call("POST", q6 + "https://example.com/a", page_b, {"Content-Type": html}, expect=200)
    c.call("POST", q6 + "https://example.com/b", b"", {"Content-Type": html, "Content-Length": "0"},
           expect=400)
    c.call("POST", "/v1/sweeps/2024-06/close", json.dumps({"end": "2024-06-30"}), expect=200)
    c.call("POST", "/v1/sweeps/2024-06/close", json.dumps({"end": "2024-06-30"}), expect=409)
    c.call("POST", "/v1/sweeps", json.dumps({"name": "2024-06"}), expect=409)  # closed
    c.call("POST", "/v1/sweeps", b"x", {"Content-Encoding": "br"}, expect=415)
    c.call("POST", "/v1/sweeps", bomb, gz, expect=413)
    c.call("GET", "/v1/sweeps", expect=200)
    c.call("GET", "/v1/lost?url=https://example.com/dead", expect=200)
    c.call("GET", "/v1/lost?url=https://example.com/old", expect=200)
    c.call("GET", "/v1/lost?url=https://example.com/x", expect=200)
    c.call("GET", "/v1/lost?url=https://example.com/never", expect=404)
    c.call("GET", "/v1/lost", expect=400)

    # Reports, JSON, CSV and HTML; and their pages.
    c.call("GET", "/v1/reports/changes?from=2024-05&to=2024-06", expect=200)
    c.call("GET", "/v1/reports/changes", expect=200)
    c.call("GET", "/v1/reports/changes?format=csv", expect=200)
    c.call("GET", "/v1/reports/changes?format=html", expect=200)
    c.call("GET", "/v1/reports/changes?list=died&limit=5", expect=200)
    c.call("GET", "/v1/reports/changes?list=died&format=csv", expect=200)
    c.call("GET", "/v1/reports/changes?format=xml", expect=400)
    c.call("GET", "/v1/reports/changes?from=zz-none&to=2024-06", expect=404)
    c.call("GET", "/v1/reports/history", expect=200)
    c.call("GET", "/v1/reports/history?host=example.com", expect=200)
    c.call("GET", "/v1/reports/history?format=html", expect=200)
    c.call("GET", "/v1/reports/history?format=csv", expect=400)
    c.call("GET", "/v1/reports/identical", expect=200)
    c.call("GET", "/v1/reports/identical?format=csv&limit=5&max_urls=2", expect=200)
    c.call("GET", "/v1/reports/identical?format=html", expect=200)
    c.call("GET", "/v1/reports/identical?limit=0", expect=400)
    c.call("GET", "/v1/reports/clusters", expect=200)
    c.call("GET", "/v1/reports/clusters?format=csv&min_share=0.1&min_bytes=10", expect=200)
    c.call("GET", "/v1/reports/clusters?format=html&max_chunk_docs=5&max_pairs_per_doc=5",
           expect=200)
    c.call("GET", "/v1/reports/clusters?min_share=2", expect=400)
    c.call("GET", "/reports/changes?from=2024-05&to=2024-06", expect=200)
    c.call("GET", "/reports/history?host=example.com", expect=200)
    c.call("GET", "/reports/identical?limit=5", expect=200)
    c.call("GET", "/reports/clusters?limit=5", expect=200)
    c.call("GET", "/reports/url?url=https://example.com/a", expect=200)
    c.call("GET", "/reports/url", expect=400)
    c.call("GET", "/reports/url?url=https://example.com/never", expect=404)
    c.call("GET", "/reports/changes?from=zz-none&to=2024-06", expect=404)
    c.call("GET", "/reports/", expect=200)
    c.call("GET", "/reports", expect=200)

    # Identical copies and pages sharing text, for the listings' and reports' items.
    c.call("POST", "/v1/sweeps", json.dumps({"name": "2024-07", "start": "2024-07-01"}), expect=200)
    q7 = "/v1/pages?sweep=2024-07&fetched_at=2024-07-02T00:00:00Z&url="
    for url, page in (("c1", page_a), ("c2", page_a), ("c3", page_b)):
        c.call("POST", q7 + "https://example.com/" + url, page, {"Content-Type": html}, expect=200)
    for target in ("/v1/identical", "/v1/reports/identical?max_urls=1",
                   "/v1/reports/clusters?min_share=0.1&min_bytes=10"):
        _, answer = c.call("GET", target, expect=200)
        if not answer or not answer.get("sets", answer.get("clusters")):
            fail("GET %s: no items to check: %s" % (target, answer))

    # Stats, sign-in.
    c.call("GET", "/v1/stats", expect=200)
    c.call("GET", "/login?next=/reports/", expect=303)
    c.call("POST", "/login", "next=%2Freports%2F&token=" + urllib.parse.quote(c.token),
           {"Content-Type": "application/x-www-form-urlencoded"}, expect=303)
    c.call("POST", "/login", "next=%2Freports%2F&token=wrong",
           {"Content-Type": "application/x-www-form-urlencoded"}, expect=401)
    c.call("POST", "/login", "next=%zz", {"Content-Type": "application/x-www-form-urlencoded"},
           expect=400)
    c.call("POST", "/login", "token=" + "x" * (17 << 10),
           {"Content-Type": "application/x-www-form-urlencoded"}, expect=413)
    c.call("POST", "/logout", expect=303)

    # Forgetting, last: it removes pages the steps above read. A dry run, one URL, then a prefix
    # one URL a request (`more`), and the errors.
    c.call("GET", "/v1/forgets", expect=200)
    c.call("POST", "/v1/forget", json.dumps({"host": "example.com", "dry_run": True,
                                             "list_limit": 3}), expect=200)
    c.call("POST", "/v1/forget", json.dumps({"url": "https://example.com/c3"}), expect=200)
    c.call("POST", "/v1/forget", json.dumps({"url": "https://example.com/c3"}), expect=404)
    c.call("POST", "/v1/forget", json.dumps({"prefix": "https://example.com/c", "max_urls": 1,
                                             "list_limit": 1}), expect=200)
    c.call("POST", "/v1/forget", json.dumps({}), expect=400)
    c.call("POST", "/v1/forget", json.dumps({"url": "https://example.com/a", "host": "example.com"}),
           expect=400)
    c.call("POST", "/v1/forget", json.dumps({"host": 5}), expect=400)
    c.call("POST", "/v1/forget", b"{", expect=400)
    c.call("POST", "/v1/forget", json.dumps({"host": "example.com"}), auth=False, expect=401)
    c.call("POST", "/v1/forget", b"x", {"Content-Encoding": "br"}, expect=415)
    c.call("POST", "/v1/forget", bomb, gz, expect=413)
    c.call("GET", "/v1/forgets?limit=1", expect=200)
    c.call("GET", "/v1/forgets?after=x", expect=400)


def protect_reads(c):
    """Reads behind the token (auth.protect_reads, by SIGHUP): every route without it is refused,
    a report page sends a browser to sign in, and the sign-in form and its session work."""
    with open(c.daemon.config) as f:
        config = f.read()
    with open(c.daemon.config, "w") as f:
        f.write(config.replace("protect_reads = false", "protect_reads = true"))
    c.daemon.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 60
    while c.request("GET", "/v1/stats", auth=False)[0] != 401:
        if time.monotonic() > deadline:
            fail("auth.protect_reads = true was not taken on SIGHUP")
            return
        time.sleep(0.02)  # poll interval
    for template, item in sorted(c.doc["paths"].items()):
        for method in sorted(m for m in item if m in ("get", "post", "delete")):
            route = item[method]["x-route"]
            if route in NO_PARAM_CHECK:
                continue
            path = SAMPLE_PATHS.get(route, template)
            page = method == "get" and path.startswith("/reports")
            c.call(method.upper(), path, auth=False, expect=303 if page else 401)
            if page:  # a client that sent a token is told it is wrong, not sent to a form
                c.call("GET", path, headers={"Authorization": "Bearer wrong"}, expect=401)
    c.call("GET", "/login?next=/reports/", expect=200)
    status, headers, _ = c.request(
        "POST", "/login", "next=%2Freports%2F&token=" + urllib.parse.quote(c.token),
        {"Content-Type": "application/x-www-form-urlencoded"}, auth=False)
    cookie = headers.get("set-cookie", "").split(";")[0]
    if status != 303 or not cookie:
        fail("POST /login with the token -> %d, cookie %r" % (status, cookie))
    c.call("GET", "/v1/stats", headers={"Cookie": cookie}, auth=False, expect=200)
    c.call("GET", "/reports/", headers={"Cookie": cookie}, auth=False, expect=200)
    c.call("POST", "/logout", headers={"Cookie": cookie}, auth=False, expect=303)
    c.call("GET", "/v1/stats", headers={"Cookie": cookie}, auth=False, expect=401)


def crawl(c, site):
    """The crawler: a sweep of the loopback site started, seen running, refused again, stopped.

    The site holds its first page until `site.gate` is set, so the sweep runs while it is asked
    about whatever the machine's speed."""
    c.call("GET", "/v1/crawl", expect=200)
    c.call("POST", "/v1/crawl/stop", expect=409)
    c.call("POST", "/v1/crawl/stop", json.dumps({"sweep": "x"}), expect=400)
    c.call("POST", "/v1/crawl", json.dumps({"seeds": []}), expect=400)
    c.call("POST", "/v1/crawl", auth=False, expect=401)
    c.call("POST", "/v1/crawl", expect=202)
    c.call("POST", "/v1/crawl", expect=409)
    c.call("GET", "/v1/crawl", expect=200)
    c.call("POST", "/v1/crawl/stop", expect=202)
    site.gate.set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        _, state = c.call("GET", "/v1/crawl", expect=200)
        if state is None or not state.get("running"):
            break
        time.sleep(0.05)  # poll interval
    else:
        fail("the crawler sweep did not stop")


def raw_request(port, head, body_part):
    """Sends a request's header and the first `body_part` of its body, sends nothing more, and
    reads the answer; returns (status, headers, body)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    try:
        sock.sendall(head + body_part)
        res = http.client.HTTPResponse(sock)
        res.begin()
        data = res.read()
        return res.status, {k.lower(): v for k, v in res.getheaders()}, data
    finally:
        sock.close()


def filler_page(i):
    """A page of its own (few shingles shared with the others), so that each one takes room."""
    rnd = random.Random(i)
    return ("<html><body><p>%s</p></body></html>" %
            " ".join("w%d" % rnd.randrange(20000) for _ in range(400))).encode()


def limits(c, binary, tmp):
    """Answers that need limits of their own, each on a daemon of its own, provoked by ordering
    and configuration, never by a race: the client does its part and waits for what must follow.

    Left out, as no fault can be injected into a real daemon deterministically: 503 for a full
    task pool or read queue (a worker would have to be held), for a read past
    server.read_budget_ms (a store that small may be read within any budget) and for a store that
    refuses writes after a failed commit; 504 (DeadlineExceeded comes from a Redis Cluster that
    does not answer in time, not from LMDB); 507 for the writes other than pages (a sweep opened
    or closed, a template mark: small enough to fit in pages the full map frees)."""
    main = c.daemon
    html = {"Content-Type": "text/html"}
    warc_head = (b"POST /v1/pages?sweep=s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Content-Type: application/warc\r\nContent-Length: 1000\r\n\r\n")
    try:
        # 408: a WARC body slower than server.min_body_bytes_per_window (1 MiB) in a window of
        # server.body_rate_window_ms (100): 9 of its 1,000 bytes are sent, then nothing.
        # 507, and /readyz 503: a map of 2 MiB (store.max_map_size) filled with pages.
        c.daemon = Daemon(binary, os.path.join(tmp, "full"),
                          "[store]\ninitial_map_size = 1048576\nmax_map_size = 2097152\n"
                          "[server]\nbody_rate_window_ms = 100\n"
                          "min_body_bytes_per_window = 1048576\n[logging]\naccess_log = false\n")
        c.call("POST", "/v1/sweeps", json.dumps({"name": "s", "start": "2024-05-01"}), expect=200)
        status, headers, data = raw_request(c.daemon.port, warc_head, b"WARC/1.1\r")
        c.check("POST", "/v1/pages?sweep=s", status, headers, data, expect=408)
        c.call("GET", "/readyz", expect=200)
        for i in range(5000):  # about 300 pages fill the map
            target = "/v1/pages?sweep=s&url=https://example.com/fill%d" % i
            status, headers, data = c.request("POST", target, filler_page(i), html)
            if status != 200:
                c.check("POST", target, status, headers, data, expect=507)
                break
        else:
            fail("5,000 pages did not fill a map of 2 MiB")
        c.call("GET", "/readyz", expect=503)
        c.call("HEAD", "/readyz", expect=503)
        c.daemon.stop()

        # 503 for a WARC upload that finds no slot: limits.max_warc_uploads = 1 is held by an
        # upload that has sent a part of its body and waits, whose slot is never taken back
        # (limits.warc_slot_min_bytes_per_second = 0) and which no timeout ends meanwhile (an hour).
        c.daemon = Daemon(binary, os.path.join(tmp, "slots"),
                          "[limits]\nmax_warc_uploads = 1\nwarc_slot_min_bytes_per_second = 0\n"
                          "[server]\nread_timeout_ms = 3600000\nbody_rate_window_ms = 3600000\n"
                          "min_body_bytes_per_window = 1\n[logging]\naccess_log = false\n")
        c.call("POST", "/v1/sweeps", json.dumps({"name": "s", "start": "2024-05-01"}), expect=200)
        holder = socket.create_connection(("127.0.0.1", c.daemon.port), timeout=120)
        try:
            holder.sendall(warc_head + b"WARC/1.1\r")
            # Whichever the daemon reads first: an upload before the holder's is answered (422,
            # no record) and frees the slot; once the holder has it, every upload gets 503.
            for _ in range(1000):
                status, _ = c.call("POST", "/v1/pages?sweep=s", b"WARC/1.1\r\n",
                                   {"Content-Type": "application/warc"})
                if status == 503:
                    break
                time.sleep(0.01)  # poll interval
            else:
                fail("the held WARC upload slot never refused another upload")
        finally:
            holder.close()
        c.daemon.stop()
    finally:
        if c.daemon is not main:
            c.daemon.stop()
        c.daemon = main


class Site:
    """A loopback site of linked pages for the crawler; /p0 waits for `gate`."""

    def __init__(self):
        import http.server
        import threading
        self.gate = threading.Event()
        gate = self.gate

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                m = re.fullmatch(r"/p(\d+)", self.path)
                if not m:
                    self.send_error(404)
                    return
                n = int(m.group(1))
                if n == 0:
                    gate.wait(120)
                body = ("<html><body><p>Page %d of the loopback site, with words of its own: %s."
                        "</p><a href=\"/p%d\">next</a></body></html>" %
                        (n, " ".join("w%d" % (n * 7 + i) for i in range(40)), n + 1)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    binary, source_dir = sys.argv[1], sys.argv[2]
    node_modules = sys.argv[3] if len(sys.argv) == 4 else None
    document = os.path.join(source_dir, "docs/openapi.yaml")
    with open(document) as f:
        doc = yaml.safe_load(f)
    check_with_npm_validator(document, node_modules)
    check_document(doc)
    routes = check_coverage(doc, source_dir)
    if failures:
        sys.exit("%d problems in docs/openapi.yaml" % len(failures))

    tmp = tempfile.mkdtemp(prefix="openapi_test.")
    token = "openapi-test-token"
    site = Site()
    daemon = Daemon(binary, tmp, main_config(tmp, token, site.port))
    c = Checker(doc, daemon, token)
    try:
        for template, item in sorted(doc["paths"].items()):
            methods = sorted(m for m in item if m in HTTP_METHODS)
            route = item[methods[0]]["x-route"]
            path = SAMPLE_PATHS.get(route, template)
            c.check_methods(path, route)
            if route in NO_PARAM_CHECK:
                continue
            for method in methods:
                headers = {"Content-Type": "text/html"} if route == "pages" else None
                c.check_params(method.upper(), path, PARAM_PROBES.get((route, method), [""]),
                               headers=headers, body=b"<p>x</p>" if method == "post" else None)
        walk(c, source_dir)
        crawl(c, site)
        protect_reads(c)
        limits(c, binary, tmp)
    finally:
        daemon.stop()
        site.stop()
    for key in sorted(c.operations):
        if key not in c.successes:
            fail("%s %s (%s): no successful answer was checked" %
                 (key[1].upper(), c.operations[key][0], key[0]))
    described = {(path, method, status) for path, item in doc["paths"].items()
                 for method, op in item.items() if method in HTTP_METHODS
                 for status in op["responses"]}
    print("checked %d answers of %d operations on %d routes against docs/openapi.yaml; "
          "%d of the %d described (operation, status) pairs were answered" %
          (c.validated, len(c.operations), len(routes), len(described & c.seen), len(described)))
    if os.environ.get("OPENAPI_TEST_VERBOSE"):
        for path, method, status in sorted(described - c.seen):
            print("not answered: %s %s %s" % (method.upper(), path, status))
    if failures:
        print(open(daemon.log_path).read()[-3000:])
        sys.exit("%d problems" % len(failures))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
