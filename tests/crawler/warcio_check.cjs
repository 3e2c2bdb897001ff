// Reads WARC files with webrecorder's warcio (npm), a reader independent of shingled's, for
// tests/crawler/crawl_warc_test.cc. Usage: node warcio_check.cjs FILE... (NODE_PATH must find
// warcio). Prints one JSON object: per file, its records as warcio parses them, with each
// record's digests recomputed here (node's crypto SHA-1, base32 written below, not shingled's),
// and the CDXJ lines warcio's own indexer makes of the file.
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const { WARCParser, CDXIndexer } = require("warcio");

function base32(bytes) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let out = "", buffer = 0, bits = 0;
  for (const b of bytes) {
    buffer = (buffer << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= 0xff;
  }
  if (bits > 0) out += alphabet[(buffer << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += "=";
  return out;
}
const sha1 = (bytes) => "sha1:" + base32(crypto.createHash("sha1").update(bytes).digest());

function indexOfCrlfCrlf(bytes) {
  for (let i = 0; i + 3 < bytes.length; ++i) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}

async function readFile(file) {
  const records = [];
  // parseHttp off: the block exactly as stored, to check WARC-Block-Digest.
  const parser = new WARCParser(fs.createReadStream(file), { parseHttp: false });
  for await (const record of parser) {
    const block = await record.readFully();
    const h = (name) => record.warcHeader(name) || null;
    const r = {
      type: record.warcType,
      offset: parser.offset,
      uri: h("WARC-Target-URI"),
      date: h("WARC-Date"),
      id: h("WARC-Record-ID"),
      concurrent_to: h("WARC-Concurrent-To"),
      refers_to: h("WARC-Refers-To"),
      refers_to_uri: h("WARC-Refers-To-Target-URI"),
      refers_to_date: h("WARC-Refers-To-Date"),
      profile: h("WARC-Profile"),
      payload_digest: h("WARC-Payload-Digest"),
      block_digest: h("WARC-Block-Digest"),
      block_sha1: sha1(block),
    };
    if (record.warcType === "response") {
      const end = indexOfCrlfCrlf(block);
      r.payload_sha1 = sha1(end < 0 ? new Uint8Array() : block.subarray(end + 4));
      r.status_line = Buffer.from(block.subarray(0, block.indexOf(13))).toString();
    }
    records.push(r);
  }
  const indexer = new CDXIndexer({ format: "cdxj" });
  const lines = [];
  const files = [{ filename: path.basename(file), reader: fs.createReadStream(file) }];
  for await (const entry of indexer.iterIndex(files)) lines.push(indexer.serializeCDXJ(entry));
  return { file, records, cdxj: lines.map((l) => l.replace(/\n$/, "")) };
}

(async () => {
  const out = [];
  for (const file of process.argv.slice(2)) out.push(await readFile(file));
  process.stdout.write(JSON.stringify(out));
})().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
