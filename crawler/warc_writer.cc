// The WARC writer (crawler/warc.h). One gzip member per record, as ISO 28500 annex D recommends,
// so that a reader can start at any record and a damaged member costs only its record.
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "crawler/warc.h"

namespace shingled::crawler {
namespace {

class FileSink final : public ByteSink {
 public:
  FileSink(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}
  ~FileSink() override {
    if (file_ != nullptr) std::fclose(file_);
  }
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  Status Write(std::string_view bytes) override {
    if (file_ == nullptr) return FailedPreconditionError("write after close: " + path_);
    if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
      return ResourceExhaustedError("cannot write " + path_ + ": " + std::strerror(errno));
    }
    return OkStatus();
  }
  Status Close() override {
    if (file_ == nullptr) return OkStatus();
    const bool ok = std::fflush(file_) == 0 && std::fclose(file_) == 0;
    file_ = nullptr;
    if (!ok) return ResourceExhaustedError("cannot write " + path_ + ": " + std::strerror(errno));
    return OkStatus();
  }

 private:
  std::FILE* file_;
  const std::string path_;
};

std::string Gzip(std::string_view data) {
  z_stream z;
  std::memset(&z, 0, sizeof(z));
  // 16 + MAX_WBITS: a gzip header and trailer around the deflate stream.
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

std::string NewWarcRecordId() {
  // A random (version 4) UUID. Uniqueness, not secrecy, is what matters here.
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const uint64_t hi = (rng() & 0xFFFFFFFFFFFF0FFFull) | 0x4000ull;
  const uint64_t lo = (rng() & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "<urn:uuid:%08x-%04x-%04x-%04x-%012llx>",
                static_cast<unsigned>(hi >> 32), static_cast<unsigned>((hi >> 16) & 0xFFFF),
                static_cast<unsigned>(hi & 0xFFFF), static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFull));
  return buffer;
}

namespace {

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 410:
      return "Gone";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

}  // namespace

StatusOr<std::unique_ptr<ByteSink>> OpenFileSink(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return InvalidArgumentError("cannot create " + path + ": " + std::strerror(errno));
  }
  return std::unique_ptr<ByteSink>(std::make_unique<FileSink>(file, path));
}

WarcWriter::WarcWriter(std::unique_ptr<ByteSink> sink, bool gzip)
    : sink_(std::move(sink)), gzip_(gzip) {}

WarcWriter::~WarcWriter() {
  // Close() reports errors; a writer dropped without it still releases the file.
  if (!closed_) Close().IgnoreError();
}

Status WarcWriter::WriteRecord(std::string_view type, int64_t date_unix, const HeaderList& fields,
                               std::string_view block) {
  if (closed_) return FailedPreconditionError("WARC writer is closed");
  std::string record = "WARC/1.1\r\nWARC-Type: " + std::string(type) + "\r\n";
  if (FindHeader(fields, "WARC-Record-ID") == nullptr) {
    record += "WARC-Record-ID: " + NewWarcRecordId() + "\r\n";
  }
  record += "WARC-Date: " + FormatWarcDate(date_unix) + "\r\n";
  for (const auto& [name, value] : fields) record.append(name).append(": ").append(value) += "\r\n";
  record += "Content-Length: " + std::to_string(block.size()) + "\r\n\r\n";
  record.append(block);
  record += "\r\n\r\n";
  return sink_->Write(gzip_ ? Gzip(record) : record);
}

std::string HttpResponseHead(int http_status, const HeaderList& http_headers, uint64_t body_size) {
  std::string head =
      "HTTP/1.1 " + std::to_string(http_status) + " " + ReasonPhrase(http_status) + "\r\n";
  for (const auto& [name, value] : http_headers) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "content-encoding" || lower == "transfer-encoding" || lower == "content-length") {
      continue;
    }
    head.append(name).append(": ").append(value) += "\r\n";
  }
  head += "Content-Length: " + std::to_string(body_size) + "\r\n\r\n";
  return head;
}

Status WarcWriter::WriteResponse(std::string_view url, int64_t date_unix, int http_status,
                                 const HeaderList& http_headers, std::string_view body) {
  std::string block = HttpResponseHead(http_status, http_headers, body.size());
  block.append(body);
  return WriteRecord("response", date_unix,
                     {{"WARC-Target-URI", std::string(url)},
                      {"Content-Type", "application/http; msgtype=response"}},
                     block);
}

Status WarcWriter::WriteWarcinfo(int64_t date_unix, const HeaderList& info_fields) {
  std::string block;
  for (const auto& [name, value] : info_fields) {
    block.append(name).append(": ").append(value) += "\r\n";
  }
  return WriteRecord("warcinfo", date_unix, {{"Content-Type", "application/warc-fields"}}, block);
}

Status WarcWriter::Close() {
  if (closed_) return OkStatus();
  closed_ = true;
  return sink_->Close();
}

}  // namespace shingled::crawler
