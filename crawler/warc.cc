#include "crawler/warc.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <span>

namespace shingled::crawler {
namespace {

constexpr size_t kChunk = 64 << 10;
constexpr std::string_view kGzipMagic("\x1f\x8b\x08", 3);  // with deflate, gzip's only method

// Whether the start of a file that does not begin with a gzip magic is a gzip WARC whose first
// bytes are damaged: it is not a plain WARC, and a gzip member in it decodes to a WARC record.
bool IsDamagedGzipWarc(std::string_view head) {
  if (head.starts_with("WARC/")) return false;
  for (size_t at = head.find(kGzipMagic); at != std::string_view::npos;
       at = head.find(kGzipMagic, at + 1)) {
    z_stream z;
    std::memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return false;
    std::array<char, 5> out;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(head.data() + at));
    z.avail_in = static_cast<uInt>(head.size() - at);
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&z, Z_NO_FLUSH);
    const bool warc = (rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR) && z.avail_out == 0 &&
                      std::string_view(out.data(), out.size()) == "WARC/";
    inflateEnd(&z);
    if (warc) return true;
  }
  return false;
}

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return Lower(x) == Lower(y); });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

class FileSource final : public ByteSource {
 public:
  explicit FileSource(std::FILE* file) : file_(file) {}
  ~FileSource() override { std::fclose(file_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  StatusOr<size_t> Read(char* buffer, size_t size) override {
    const size_t n = std::fread(buffer, 1, size, file_);
    if (n == 0 && std::ferror(file_)) return UnavailableError("read error");
    return n;
  }

 private:
  std::FILE* const file_;
};

class StringSource final : public ByteSource {
 public:
  explicit StringSource(std::string_view bytes) : bytes_(bytes) {}
  StatusOr<size_t> Read(char* buffer, size_t size) override {
    const size_t n = std::min(size, bytes_.size());
    std::memcpy(buffer, bytes_.data(), n);
    bytes_.remove_prefix(n);
    return n;
  }

 private:
  std::string_view bytes_;
};

}  // namespace

const std::string* FindHeader(const HeaderList& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return &value;
  }
  return nullptr;
}

std::string WarcRecord::Type() const {
  const std::string* type = Header("WARC-Type");
  std::string out = type == nullptr ? "" : *type;
  for (char& c : out) c = Lower(c);
  return out;
}

StatusOr<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return NotFoundError("cannot open " + path + ": " + std::strerror(errno));
  return std::unique_ptr<ByteSource>(std::make_unique<FileSource>(file));
}

std::unique_ptr<ByteSource> MakeStringSource(std::string_view bytes) {
  return std::make_unique<StringSource>(bytes);
}

// The decoded byte stream: plain bytes, or gzip members inflated one after the other. Corrupt
// members are reported and skipped by scanning for the next gzip magic.
//
// The scan starts just past the failed member's magic, not where inflate gave up: damaged
// deflate data can decode without error across the members after it (a stored block's length
// is any 16 bits), up to the end of the file. So the input of the member being inflated is kept,
// up to `max_rewind` bytes; past that, a corrupt member's scan starts where inflate stopped.
class WarcReader::Stream {
 public:
  Stream(std::unique_ptr<ByteSource> source, std::vector<WarcProblem>* problems, Status* status,
         uint64_t max_rewind)
      : source_(std::move(source)), problems_(problems), status_(status), max_rewind_(max_rewind) {
    std::memset(&z_, 0, sizeof(z_));
  }
  ~Stream() {
    if (z_ready_) inflateEnd(&z_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  bool gzip() const { return gzip_; }
  uint64_t offset() const { return out_base_ + out_pos_; }

  // The file offset of the gzip member holding decoded offset `at` (at <= offset()).
  uint64_t FileOffsetOf(uint64_t at) {
    if (!gzip_) return at;
    while (members_.size() > 1 && members_[1].first <= at) members_.pop_front();
    return members_.empty() ? 0 : members_.front().second;
  }

  // Whether the stream was broken (a corrupt member skipped) since the last call.
  bool TakeDiscontinuity() { return std::exchange(discontinuity_, false); }

  // -1 at the end.
  int Peek() {
    if (out_pos_ == out_.size() && !Fill()) return -1;
    return static_cast<unsigned char>(out_[out_pos_]);
  }
  int Get() {
    const int c = Peek();
    if (c >= 0) ++out_pos_;
    return c;
  }

  // Reads a line up to and including '\n' into *line (without CR LF). Returns false at the end
  // with nothing read. Sets *too_long and keeps only max bytes when the line is longer.
  bool ReadLine(std::string* line, size_t max, bool* too_long) {
    line->clear();
    *too_long = false;
    bool any = false;
    for (;;) {
      if (out_pos_ == out_.size() && (!Fill() || discontinuity_)) return any;
      any = true;
      const char* begin = out_.data() + out_pos_;
      const size_t avail = out_.size() - out_pos_;
      const void* nl = std::memchr(begin, '\n', avail);
      const size_t take = nl ? static_cast<size_t>(static_cast<const char*>(nl) - begin) : avail;
      if (line->size() < max) line->append(begin, std::min(take, max - line->size()));
      if (line->size() >= max && take > 0) *too_long = true;
      out_pos_ += take;
      if (nl) {
        ++out_pos_;
        if (!line->empty() && line->back() == '\r') line->pop_back();
        return true;
      }
    }
  }

  // Appends up to n bytes to *out (or drops them when out is null); returns how many were read.
  uint64_t Read(uint64_t n, std::string* out) {
    uint64_t done = 0;
    while (done < n) {
      // Stop at a skipped corrupt member: what follows belongs to another record.
      if (out_pos_ == out_.size() && (!Fill() || discontinuity_)) break;
      const size_t take = static_cast<size_t>(std::min<uint64_t>(n - done, out_.size() - out_pos_));
      if (out) out->append(out_.data() + out_pos_, take);
      out_pos_ += take;
      done += take;
    }
    return done;
  }

 private:
  // Reads more raw input. False at the end or on error.
  bool ReadInput() {
    if (in_eof_) return false;
    size_t keep_from = in_pos_;
    if (in_member_ && rewindable_) {
      const size_t member_at = MemberIndex();
      if (in_.size() - member_at + kChunk <= max_rewind_) {
        keep_from = member_at;
      } else {
        rewindable_ = false;
      }
    }
    if (keep_from > 0) {
      in_.erase(0, keep_from);
      in_pos_ -= keep_from;
      // The room a long member took is given back once it is no longer kept.
      if (in_.capacity() > 8 * kChunk && in_.size() < kChunk) in_.shrink_to_fit();
    }
    const size_t old = in_.size();
    in_.resize(old + kChunk);
    StatusOr<size_t> n = source_->Read(in_.data() + old, kChunk);
    if (!n.ok()) {
      *status_ = n.status();
      in_.resize(old);
      in_eof_ = true;
      return false;
    }
    in_.resize(old + *n);
    if (*n == 0) in_eof_ = true;
    return *n > 0;
  }

  uint64_t InputOffset() const { return in_base_consumed_; }

  void Consume(size_t n) {
    in_pos_ += n;
    in_base_consumed_ += n;
  }

  // Where the current member starts in in_ (kept while rewindable_).
  size_t MemberIndex() const {
    return in_pos_ - static_cast<size_t>(in_base_consumed_ - member_start_);
  }

  // After the current member failed: the scan for the next magic starts one byte into it, so it
  // finds the members that the failed inflate ran over. What the member decoded is dropped with
  // it: the record it held is incomplete, and the reader drops it on seeing the discontinuity.
  void AbandonMember(std::string message) {
    problems_->push_back({member_start_, DataLossError(std::move(message))});
    in_member_ = false;
    discontinuity_ = true;
    skipping_corrupt_ = true;
    out_.clear();
    if (rewindable_) {
      in_pos_ = MemberIndex() + 1;
      in_base_consumed_ = member_start_ + 1;
    } else if (InputOffset() == member_start_) {
      Consume(1);
    }
  }

  // Refills out_ with at least one byte. False at the end.
  bool Fill() {
    out_base_ += out_.size();
    out_.clear();
    out_pos_ = 0;
    if (!detected_) {
      while (in_.size() - in_pos_ < 2 && ReadInput()) {
      }
      detected_ = true;
      const std::string_view head(in_.data() + in_pos_, in_.size() - in_pos_);
      gzip_ = head.starts_with("\x1f\x8b") || IsDamagedGzipWarc(head);
    }
    if (!gzip_) {
      if (in_pos_ == in_.size() && !ReadInput()) return false;
      out_.assign(in_, in_pos_, std::string::npos);
      Consume(in_.size() - in_pos_);
      return true;
    }
    while (out_.empty()) {
      if (!in_member_ && !StartMember()) return false;
      if (in_pos_ == in_.size() && !ReadInput()) {
        AbandonMember("gzip member does not end: the file is truncated or the member corrupt");
        if (!status_->ok()) return false;
        continue;
      }
      out_.resize(kChunk);
      z_.next_in = reinterpret_cast<Bytef*>(in_.data() + in_pos_);
      z_.avail_in = static_cast<uInt>(in_.size() - in_pos_);
      z_.next_out = reinterpret_cast<Bytef*>(out_.data());
      z_.avail_out = static_cast<uInt>(out_.size());
      const int rc = inflate(&z_, Z_NO_FLUSH);
      Consume(in_.size() - in_pos_ - z_.avail_in);
      out_.resize(out_.size() - z_.avail_out);
      if (rc == Z_STREAM_END) {
        in_member_ = false;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        AbandonMember(std::string("corrupt gzip member: ") + (z_.msg ? z_.msg : "inflate error"));
      }
    }
    return true;
  }

  // At a member boundary: skips to the next gzip magic and resets inflate. False when the input
  // ends first. Bytes skipped outside a corrupt member are reported once as junk.
  bool StartMember() {
    const uint64_t junk_start = InputOffset();
    bool junk = false;
    for (;;) {
      const size_t found = in_.find(kGzipMagic, in_pos_);
      if (found != std::string::npos) {
        junk = junk || found > in_pos_;
        Consume(found - in_pos_);
        break;
      }
      // Keep the last two bytes: a magic may straddle two reads.
      const size_t keep = std::min<size_t>(2, in_.size() - in_pos_);
      junk = junk || in_.size() - in_pos_ > keep;
      Consume(in_.size() - in_pos_ - keep);
      if (!ReadInput()) {
        junk = junk || in_pos_ < in_.size();
        Consume(in_.size() - in_pos_);
        if (junk && !skipping_corrupt_) {
          problems_->push_back({junk_start, DataLossError("junk after the last gzip member")});
        }
        return false;
      }
    }
    if (junk && !skipping_corrupt_) {
      problems_->push_back(
          {junk_start, DataLossError(junk_start == 0 ? "junk before the first gzip member"
                                                     : "junk between gzip members")});
      discontinuity_ = true;
    }
    skipping_corrupt_ = false;
    if (!z_ready_) {
      if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) return false;
      z_ready_ = true;
    } else {
      inflateReset(&z_);
    }
    in_member_ = true;
    rewindable_ = true;
    member_start_ = InputOffset();
    members_.emplace_back(out_base_ + out_.size(), member_start_);
    return true;
  }

  std::unique_ptr<ByteSource> source_;
  std::vector<WarcProblem>* problems_;
  Status* status_;
  const uint64_t max_rewind_;
  std::string in_;
  size_t in_pos_ = 0;
  uint64_t in_base_consumed_ = 0;
  std::string out_;
  size_t out_pos_ = 0;
  uint64_t out_base_ = 0;
  z_stream z_;
  uint64_t member_start_ = 0;
  std::deque<std::pair<uint64_t, uint64_t>> members_;  // (decoded offset, file offset)
  bool in_eof_ = false;
  bool detected_ = false;
  bool gzip_ = false;
  bool z_ready_ = false;
  bool in_member_ = false;
  bool rewindable_ = false;  // in_ still holds the current member from its first byte
  bool skipping_corrupt_ = false;
  bool discontinuity_ = false;
};

WarcReader::WarcReader(std::unique_ptr<ByteSource> source, WarcReaderOptions options)
    : stream_(
          std::make_unique<Stream>(std::move(source), &problems_, &status_,
                                   options.max_record_bytes >= UINT64_MAX - options.max_header_bytes
                                       ? UINT64_MAX
                                       : options.max_record_bytes + options.max_header_bytes)),
      options_(options),
      targets_(options.max_remembered_records) {}

WarcReader::~WarcReader() = default;

bool WarcReader::gzip() const { return stream_->gzip(); }

bool WarcReader::Next(WarcRecord* record) {
  std::string line;
  bool too_long = false;
  for (;;) {
    // Find the version line, skipping blank lines (records end with CRLF CRLF) and, after a
    // malformed record, everything up to the next "WARC/" line.
    uint64_t start = 0;
    bool reported = false;
    for (;;) {
      stream_->TakeDiscontinuity();
      start = stream_->offset();
      if (!stream_->ReadLine(&line, options_.max_header_bytes, &too_long)) {
        // A skipped corrupt gzip member is not the end: the next member follows.
        if (status_.ok() && stream_->TakeDiscontinuity()) continue;
        return false;
      }
      if (!status_.ok()) return false;
      if (line.starts_with("WARC/")) break;
      if (Trim(line).empty()) continue;
      if (!reported) {
        problems_.push_back({stream_->FileOffsetOf(start),
                             InvalidArgumentError("expected a WARC version line; skipping to the "
                                                  "next record")});
        reported = true;
      }
    }
    record->offset = start;
    record->member_offset = stream_->FileOffsetOf(start);
    record->version = std::string(Trim(line));
    record->headers.clear();
    record->block.clear();
    auto problem = [&](Status status) {
      problems_.push_back({record->member_offset, std::move(status)});
    };

    size_t header_bytes = 0;
    bool complete = false, malformed = false;
    while (stream_->ReadLine(&line, options_.max_header_bytes, &too_long)) {
      header_bytes += line.size() + 2;
      if (too_long || header_bytes > options_.max_header_bytes) {
        malformed = true;
        problem(InvalidArgumentError("WARC header too long"));
        break;
      }
      if (line.empty()) {
        complete = true;
        break;
      }
      if ((line[0] == ' ' || line[0] == '\t') && !record->headers.empty()) {
        record->headers.back().second += " " + std::string(Trim(line));  // folded line
        continue;
      }
      const size_t colon = line.find(':');
      if (colon == std::string::npos || colon == 0) {
        malformed = true;
        problem(InvalidArgumentError("malformed WARC header line"));
        break;
      }
      record->headers.emplace_back(std::string(Trim(std::string_view(line).substr(0, colon))),
                                   std::string(Trim(std::string_view(line).substr(colon + 1))));
    }
    if (!status_.ok()) return false;
    if (malformed) continue;
    if (!complete) {
      if (!stream_->TakeDiscontinuity()) problem(DataLossError("record truncated in its header"));
      continue;
    }

    const std::string* length_text = record->Header("Content-Length");
    uint64_t length = 0;
    if (length_text == nullptr ||
        std::from_chars(length_text->data(), length_text->data() + length_text->size(), length)
                .ec != std::errc() ||
        std::from_chars(length_text->data(), length_text->data() + length_text->size(), length)
                .ptr != length_text->data() + length_text->size()) {
      problem(InvalidArgumentError("missing or bad Content-Length"));
      continue;
    }
    const bool keep = length <= options_.max_record_bytes;
    if (keep) record->block.reserve(static_cast<size_t>(length));
    const uint64_t got = stream_->Read(length, keep ? &record->block : nullptr);
    if (!status_.ok()) return false;
    if (got < length) {
      if (!stream_->TakeDiscontinuity()) {
        problem(DataLossError("record truncated: Content-Length " + std::to_string(length) + ", " +
                              std::to_string(got) + " bytes present"));
      }
      continue;
    }
    if (!keep) {
      problem(ResourceExhaustedError("record of " + std::to_string(length) +
                                     " bytes is over the limit; skipped"));
      continue;
    }
    targets_.Remember(*record);
    return true;
  }
}

namespace {

std::string_view StripAngles(std::string_view s) {
  s = Trim(s);
  if (s.size() >= 2 && s.front() == '<' && s.back() == '>') s = s.substr(1, s.size() - 2);
  return s;
}

std::string CharsetOf(std::string_view content_type) {
  std::string lower(content_type);
  for (char& c : lower) c = Lower(c);
  const size_t at = lower.find("charset=");
  if (at == std::string::npos) return "";
  std::string_view value = std::string_view(content_type).substr(at + 8);
  value = value.substr(0, value.find(';'));
  value = Trim(value);
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) {
    value = value.substr(1, value.size() - 2);
  }
  return std::string(value);
}

// Parses "HTTP/1.1 200 OK\r\nName: value\r\n...\r\n\r\n"; returns the body's offset.
StatusOr<size_t> ParseHttpHead(std::string_view block, int* status, HeaderList* headers) {
  size_t pos = 0;
  bool first = true;
  while (pos < block.size()) {
    const size_t nl = block.find('\n', pos);
    if (nl == std::string_view::npos) return InvalidArgumentError("HTTP head not terminated");
    std::string_view line = block.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (first) {
      first = false;
      if (!line.starts_with("HTTP/")) return InvalidArgumentError("no HTTP status line");
      const size_t space = line.find(' ');
      if (space == std::string_view::npos || line.size() < space + 4) {
        return InvalidArgumentError("bad HTTP status line");
      }
      int code = 0;
      const auto [ptr, ec] =
          std::from_chars(line.data() + space + 1, line.data() + space + 4, code);
      if (ec != std::errc() || ptr != line.data() + space + 4 || code < 100 || code > 999) {
        return InvalidArgumentError("bad HTTP status code");
      }
      *status = code;
      continue;
    }
    if (line.empty()) return pos;
    if ((line[0] == ' ' || line[0] == '\t') && !headers->empty()) {
      headers->back().second += " " + std::string(Trim(line));
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // tolerate junk header lines, as browsers do
    headers->emplace_back(std::string(Trim(line.substr(0, colon))),
                          std::string(Trim(line.substr(colon + 1))));
  }
  if (first) return InvalidArgumentError("empty HTTP head");
  return InvalidArgumentError("HTTP head not terminated");
}

bool ListHas(const std::string* list, std::string_view token) {
  if (list == nullptr) return false;
  std::string lower = *list;
  for (char& c : lower) c = Lower(c);
  return lower.find(token) != std::string::npos;
}

}  // namespace

StatusOr<std::string> DecodeChunked(std::string_view body, uint64_t max_bytes) {
  std::string out;
  size_t pos = 0;
  for (;;) {
    const size_t nl = body.find('\n', pos);
    if (nl == std::string_view::npos) return InvalidArgumentError("truncated chunked body");
    std::string_view size_line = Trim(body.substr(pos, nl - pos));
    size_line = Trim(size_line.substr(0, size_line.find(';')));
    uint64_t size = 0;
    const auto [ptr, ec] =
        std::from_chars(size_line.data(), size_line.data() + size_line.size(), size, 16);
    if (ec != std::errc() || ptr != size_line.data() + size_line.size() || size_line.empty()) {
      return InvalidArgumentError("bad chunk size");
    }
    pos = nl + 1;
    if (size == 0) return out;  // trailers, if any, are ignored
    if (size > body.size() - pos) return InvalidArgumentError("truncated chunked body");
    if (out.size() + size > max_bytes) return ResourceExhaustedError("decoded body over the limit");
    out.append(body.substr(pos, static_cast<size_t>(size)));
    pos += static_cast<size_t>(size);
    if (body.substr(pos, 2) == "\r\n") {
      pos += 2;
    } else if (body.substr(pos, 1) == "\n") {
      pos += 1;
    } else {
      return InvalidArgumentError("chunk not followed by CRLF");
    }
  }
}

StatusOr<std::string> InflateBody(std::string_view body, bool gzip, uint64_t max_bytes) {
  // deflate in HTTP is meant to be zlib-wrapped, but some servers send raw deflate; try both.
  // gzip bodies may hold several members one after the other (RFC 1952 2.2; `cat a.gz b.gz`,
  // pigz): each is decoded, and the body is their concatenation. Bytes after the last member, or
  // after a deflate stream, are refused: a body that is not wholly understood is not stored.
  static constexpr int kGzipBits[] = {16 + MAX_WBITS};
  static constexpr int kDeflateBits[] = {MAX_WBITS, -MAX_WBITS};
  if (body.size() > UINT32_MAX) return ResourceExhaustedError("compressed body over 4 GiB");
  for (const int window_bits :
       gzip ? std::span<const int>(kGzipBits) : std::span<const int>(kDeflateBits)) {
    z_stream z;
    std::memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, window_bits) != Z_OK) return InternalError("inflateInit2 failed");
    std::string out;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
    z.avail_in = static_cast<uInt>(body.size());
    int rc = Z_OK;
    int members = 0;
    for (;;) {
      const size_t old = out.size();
      out.resize(old + kChunk);
      z.next_out = reinterpret_cast<Bytef*>(out.data() + old);
      z.avail_out = kChunk;
      rc = inflate(&z, Z_NO_FLUSH);
      out.resize(old + kChunk - z.avail_out);
      if (out.size() > max_bytes) {
        inflateEnd(&z);
        return ResourceExhaustedError("decoded body over the limit of " +
                                      std::to_string(max_bytes) + " bytes");
      }
      if (rc == Z_STREAM_END) {
        ++members;
        if (z.avail_in == 0) break;
        const uint64_t at = body.size() - z.avail_in;
        // Another gzip member follows; anything else is trailing garbage.
        if (gzip && body.substr(at).starts_with(kGzipMagic)) {
          inflateReset(&z);
          continue;
        }
        inflateEnd(&z);
        std::string message = std::to_string(body.size() - at);
        message.append(" bytes of trailing garbage at offset ").append(std::to_string(at));
        if (gzip) {
          message.append(", after gzip member ").append(std::to_string(members));
        } else {
          message.append(", after the deflate stream");
        }
        return InvalidArgumentError(message);
      }
      if (rc != Z_OK) break;  // Z_BUF_ERROR: the input ended inside a member
    }
    inflateEnd(&z);
    if (rc == Z_STREAM_END) return out;
    if (rc == Z_DATA_ERROR && !gzip && window_bits > 0) continue;
    std::string message =
        rc == Z_BUF_ERROR ? "compressed body truncated" : "corrupt compressed body";
    if (gzip) message.append(" (gzip member ").append(std::to_string(members + 1)).append(")");
    return InvalidArgumentError(message);
  }
  return InvalidArgumentError("corrupt compressed body");
}

StatusOr<int64_t> ParseWarcDate(std::string_view date) {
  date = Trim(date);
  int parts[6] = {0, 1, 1, 0, 0, 0};
  // Positions of the fields in "YYYY-MM-DDThh:mm:ss" and the separator before each.
  static constexpr struct {
    size_t at, len;
    char before;
  } kFields[] = {{0, 4, 0}, {5, 2, '-'}, {8, 2, '-'}, {11, 2, 'T'}, {14, 2, ':'}, {17, 2, ':'}};
  size_t fields = 0;
  for (const auto& f : kFields) {
    if (date.size() < f.at + f.len) break;
    if (f.before != 0 && date[f.at - 1] != f.before) break;
    int v = 0;
    const auto [ptr, ec] = std::from_chars(date.data() + f.at, date.data() + f.at + f.len, v);
    if (ec != std::errc() || ptr != date.data() + f.at + f.len) break;
    parts[fields++] = v;
  }
  if (fields == 0)
    return InvalidArgumentError("bad WARC-Date \"" + std::string(date.substr(0, 40)) + "\"");
  std::string_view rest = date.substr(kFields[fields - 1].at + kFields[fields - 1].len);
  if (fields == 6 && rest.starts_with('.')) {
    rest.remove_prefix(1);
    while (!rest.empty() && rest[0] >= '0' && rest[0] <= '9') rest.remove_prefix(1);
  }
  // W3C-DTF granularities: a date alone, or a time that ends with Z.
  const bool ok = (fields == 3 && rest.empty()) || ((fields == 5 || fields == 6) && rest == "Z") ||
                  (fields == 1 && rest.empty());
  if (!ok || parts[1] < 1 || parts[1] > 12 || parts[2] < 1 || parts[2] > 31 || parts[3] > 23 ||
      parts[4] > 59 || parts[5] > 60) {
    return InvalidArgumentError("bad WARC-Date \"" + std::string(date.substr(0, 40)) + "\"");
  }
  std::tm tm{};
  tm.tm_year = parts[0] - 1900;
  tm.tm_mon = parts[1] - 1;
  tm.tm_mday = parts[2];
  tm.tm_hour = parts[3];
  tm.tm_min = parts[4];
  tm.tm_sec = parts[5];
  return static_cast<int64_t>(timegm(&tm));
}

std::string FormatWarcDate(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

void WarcRecordTargets::Remember(const WarcRecord& record) {
  if (max_records_ == 0) return;
  const std::string type = record.Type();
  if (type != "response" && type != "resource") return;
  const std::string* id = record.Header("WARC-Record-ID");
  const std::string* uri = record.Header("WARC-Target-URI");
  if (id == nullptr || uri == nullptr) return;
  std::string key(StripAngles(*id));
  std::string target(StripAngles(*uri));
  if (key.empty() || target.empty()) return;
  if (auto it = targets_.find(key); it != targets_.end()) {
    it->second = std::move(target);
    return;
  }
  if (targets_.size() >= max_records_) {
    targets_.erase(order_.front());
    order_.pop_front();
  }
  order_.push_back(key);
  targets_.emplace(std::move(key), std::move(target));
}

const std::string* WarcRecordTargets::Find(std::string_view record_id) const {
  const auto it = targets_.find(std::string(StripAngles(record_id)));
  return it == targets_.end() ? nullptr : &it->second;
}

StatusOr<std::optional<WarcPage>> InterpretRecord(const WarcRecord& record,
                                                  const WarcPageOptions& options,
                                                  const WarcRecordTargets* targets) {
  const std::string type = record.Type();
  WarcPage page;
  if (type == "response") {
    page.kind = WarcPage::Kind::kResponse;
  } else if (type == "resource") {
    page.kind = WarcPage::Kind::kResource;
  } else if (type == "revisit") {
    page.kind = WarcPage::Kind::kRevisit;
  } else {
    return std::optional<WarcPage>();
  }
  const std::string at = " (record at offset " + std::to_string(record.member_offset) + ")";
  page.offset = record.member_offset;
  const std::string* uri = record.Header("WARC-Target-URI");
  if (uri == nullptr || StripAngles(*uri).empty()) {
    return InvalidArgumentError("no WARC-Target-URI" + at);
  }
  page.url = std::string(StripAngles(*uri));
  const std::string* date = record.Header("WARC-Date");
  if (date == nullptr) return InvalidArgumentError("no WARC-Date" + at);
  StatusOr<int64_t> when = ParseWarcDate(*date);
  if (!when.ok()) return InvalidArgumentError(when.status().message() + at);
  page.date = std::string(Trim(*date));
  page.date_unix = *when;

  if (page.kind == WarcPage::Kind::kResource) {
    if (const std::string* ct = record.Header("Content-Type")) page.content_type = *ct;
    page.charset = CharsetOf(page.content_type);
    page.body = record.block;
    return std::optional<WarcPage>(std::move(page));
  }
  if (page.kind == WarcPage::Kind::kRevisit) {
    // WARC-Refers-To-Target-URI, else the target of the record WARC-Refers-To names, else
    // itself (see warc.h).
    const std::string* refers_uri = record.Header("WARC-Refers-To-Target-URI");
    const std::string* refers_id = record.Header("WARC-Refers-To");
    const std::string* resolved =
        targets != nullptr && refers_id != nullptr ? targets->Find(*refers_id) : nullptr;
    if (refers_uri != nullptr && !StripAngles(*refers_uri).empty()) {
      page.refers_to_uri = std::string(StripAngles(*refers_uri));
    } else if (resolved != nullptr) {
      page.refers_to_uri = *resolved;
    } else {
      page.refers_to_uri = page.url;
    }
    // Revisits usually keep the HTTP head; its absence is not an error.
    if (record.block.starts_with("HTTP/")) {
      if (ParseHttpHead(record.block, &page.http_status, &page.http_headers).ok()) {
        if (const std::string* ct = FindHeader(page.http_headers, "Content-Type")) {
          page.content_type = *ct;
          page.charset = CharsetOf(*ct);
        }
      }
    }
    return std::optional<WarcPage>(std::move(page));
  }

  StatusOr<size_t> body_at = ParseHttpHead(record.block, &page.http_status, &page.http_headers);
  if (!body_at.ok()) return InvalidArgumentError(body_at.status().message() + at);
  std::string_view body = std::string_view(record.block).substr(*body_at);
  std::string decoded;
  if (ListHas(FindHeader(page.http_headers, "Transfer-Encoding"), "chunked")) {
    StatusOr<std::string> dechunked = DecodeChunked(body, options.max_body_bytes);
    if (!dechunked.ok()) {
      return Status(dechunked.status().code(), dechunked.status().message() + at);
    }
    decoded = std::move(*dechunked);
    body = decoded;
  }
  const std::string* encoding = FindHeader(page.http_headers, "Content-Encoding");
  std::string coding = encoding == nullptr ? "" : std::string(Trim(*encoding));
  for (char& c : coding) c = Lower(c);
  if (coding == "gzip" || coding == "x-gzip" || coding == "deflate") {
    StatusOr<std::string> inflated = InflateBody(body, coding != "deflate", options.max_body_bytes);
    if (!inflated.ok()) return Status(inflated.status().code(), inflated.status().message() + at);
    page.body = std::move(*inflated);
  } else if (coding.empty() || coding == "identity") {
    if (body.size() > options.max_body_bytes) {
      return ResourceExhaustedError("body over the limit" + at);
    }
    page.body = std::string(body);
  } else {
    return InvalidArgumentError("unsupported Content-Encoding \"" + coding + "\"" + at);
  }
  if (const std::string* ct = FindHeader(page.http_headers, "Content-Type")) {
    page.content_type = *ct;
    page.charset = CharsetOf(*ct);
  }
  return std::optional<WarcPage>(std::move(page));
}

}  // namespace shingled::crawler
