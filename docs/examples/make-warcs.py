#!/usr/bin/env python3
"""Writes docs/examples/2024-05.warc and 2024-06.warc, the two small crawls that docs/API.md's
examples upload (tests/docs/docs_test.cc runs them). Run it from anywhere after changing a page
here or in tests/data/samples/; the files are plain (uncompressed) WARC 1.1, so a diff shows what
changed."""
import pathlib
import uuid

HERE = pathlib.Path(__file__).resolve().parent
SAMPLES = HERE.parent.parent / "tests" / "data" / "samples"

PAGE_A = (SAMPLES / "page-a.html").read_text()
PAGE_B = (SAMPLES / "page-b.html").read_text()

TIDES = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Crossing the causeway: tide tables</title></head>
<body>
  <h1>Crossing the causeway</h1>
  <p>The causeway from the car park to Skerry Point is a ridge of shingle and old stone that the
  sea covers twice a day. At low water it is a walk of twenty minutes; at high water it lies under
  two metres of fast-moving sea, and the current around the end of the point has drowned walkers
  who thought they had time to spare.</p>
  <p>The wardens post the week's tide tables every Monday morning at the car park, at the
  keepers' cottages and on the trust's notice board in the village. Each table gives the times of
  low and high water and the last safe time to set out from either end.</p>
  <p>Allow an hour either side of high water. If you are caught on the point by the tide, stay
  at the lighthouse and ring the wardens from the telephone in the porch of the cottages: the
  crossing reopens within three hours and the trust's volunteers will keep you company.</p>
</body>
</html>
"""

MUSEUM = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>The keepers' museum</title></head>
<body>
  <h1>The keepers' museum</h1>
  <p>The two cottages beside the tower, where the keepers and their families lived for more than
  a century, now hold the trust's museum. The front rooms are furnished as they were in the
  eighteen-nineties, with a range, a dresser of blue plates and the box beds the keepers slept in
  between watches.</p>
  <p>Upstairs are the logbooks, open at the weeks of the great storm of 1877, the original
  first-order lens, taken down when the light was automated, and a model of the reef that shows
  at the turn of a handle how the sea covers it at each state of the tide.</p>
  <p>The museum opens with the tower, from Easter to October, and entry is included in the
  ticket for the lighthouse. School groups may book a morning with one of the volunteers.</p>
</body>
</html>
"""


def response(url, date, status, body="", headers=()):
    reason = {200: "OK", 301: "Moved Permanently", 404: "Not Found"}[status]
    body_bytes = body.encode()
    head = [f"HTTP/1.1 {status} {reason}"]
    if body_bytes:
        head.append("Content-Type: text/html; charset=utf-8")
    head.extend(headers)
    head.append(f"Content-Length: {len(body_bytes)}")
    block = ("\r\n".join(head) + "\r\n\r\n").encode() + body_bytes
    record_id = uuid.uuid5(uuid.NAMESPACE_URL, url + date)
    warc_head = (
        "WARC/1.1\r\n"
        "WARC-Type: response\r\n"
        f"WARC-Record-ID: <urn:uuid:{record_id}>\r\n"
        f"WARC-Date: {date}\r\n"
        f"WARC-Target-URI: {url}\r\n"
        "Content-Type: application/http; msgtype=response\r\n"
        f"Content-Length: {len(block)}\r\n\r\n"
    )
    return warc_head.encode() + block + b"\r\n\r\n"


def write(name, records):
    (HERE / name).write_bytes(b"".join(records))


may = "2024-05-10T08:00:00Z"
write("2024-05.warc", [
    response("https://example.com/a", may, 200, PAGE_A),
    response("https://example.com/b", may, 200, PAGE_B),
    response("https://example.com/a-copy", may, 200, PAGE_A.replace("autumn", "spring")),
    response("https://example.com/tides", may, 200, TIDES),
])

june = "2024-06-10T08:00:00Z"
write("2024-06.warc", [
    response("https://example.com/a", june, 200, PAGE_A),
    response("https://example.com/b", june, 200,
             PAGE_B.replace("Please note that the causeway is covered at high tide.",
                            "The causeway is covered at high tide: see the tide tables.")),
    response("https://example.com/a-copy", june, 404),
    response("https://example.com/tides", june, 301, headers=["Location: /visit/tides"]),
    response("https://example.com/visit/tides", june, 200, TIDES),
    response("https://example.com/museum", june, 200, MUSEUM),
])
