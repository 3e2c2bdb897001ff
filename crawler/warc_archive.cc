// The crawler's WARC output (crawler/warc_archive.h).
#include "crawler/warc_archive.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "crawler/cdxj.h"

namespace shingled::crawler {
namespace {

// The one translation of errno for this file: a full disk, quota or file size limit is a limit
// hit; anything else (no permission, read-only file system, not a directory) is a state the
// operator must fix.
Status ErrnoStatus(std::string_view what, const std::string& path, int error) {
  std::string message =
      "WARC output: cannot " + std::string(what) + " " + path + ": " + std::strerror(error);
  if (error == ENOSPC || error == EDQUOT || error == EFBIG)
    return ResourceExhaustedError(std::move(message));
  return FailedPreconditionError(std::move(message));
}

std::string FileTimestamp() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y%m%d%H%M%S", &tm);
  return buffer;
}

// The sweep's part of a file name: at most this many bytes, so that a whole name ("shingled-",
// this, "-", the UTC time, "-", the serial and ".warc.gz.cdxj.open": 48 bytes more) stays well
// within NAME_MAX, 255 bytes on Linux file systems. A sweep's name may be 400 bytes.
constexpr size_t kMaxSweepPartBytes = 120;

// Letters, digits, '.', '_' and '-' of `name`, anything else (a '/', bytes past ASCII) as '-'. A
// longer name than kMaxSweepPartBytes keeps its first bytes and ends with 16 characters of the
// SHA-1 of the whole name (Base32), so that two long names alike at the start keep files of
// their own, and one name always gives the same part.
std::string SafeName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '-';
  }
  if (out.size() > kMaxSweepPartBytes) {
    constexpr size_t kHashChars = 16;
    const std::string digest = WarcSha1Digest(name).substr(std::string_view("sha1:").size());
    out.resize(kMaxSweepPartBytes - kHashChars - 1);
    out.append("-").append(digest.substr(0, kHashChars));
  }
  return out;
}

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", path, errno);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return OkStatus();
}

Status FsyncDir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open", dir, errno);
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus("fsync", dir, error);
  return OkStatus();
}

}  // namespace

std::string Base32(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (const char c : bytes) {
    buffer = (buffer << 8) | static_cast<unsigned char>(c);
    bits += 8;
    while (bits >= 5) {
      out.push_back(kAlphabet[(buffer >> (bits - 5)) & 31]);
      bits -= 5;
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (5 - bits)) & 31]);
  while (out.size() % 8 != 0) out.push_back('=');
  return out;
}

std::string WarcSha1Digest(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  // EVP_Digest cannot fail for SHA-1 with valid arguments short of memory exhaustion; a failure
  // would leave size 0 and give the digest of nothing, so it is checked.
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha1(), nullptr) != 1) size = 0;
  return "sha1:" + Base32(std::string_view(reinterpret_cast<const char*>(digest), size));
}

// A file written through a descriptor, counting bytes, fsynced on Finish(). Each Write() of the
// WarcWriter is one whole gzip member: the record's offset and length.
class WarcArchive::FileSink final : public ByteSink {
 public:
  FileSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FileSink() override {
    if (fd_ >= 0) ::close(fd_);
  }
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  Status Write(std::string_view bytes) override {
    if (fd_ < 0) return FailedPreconditionError("WARC output: write after close: " + path_);
    last_offset_ = size_;
    Status s = WriteAll(fd_, bytes, path_);
    if (!s.ok()) return s;
    size_ += bytes.size();
    return OkStatus();
  }
  // The WarcWriter's Close(): nothing; Finish() is the real end.
  Status Close() override { return OkStatus(); }
  // fsync and close.
  Status Finish() {
    if (fd_ < 0) return OkStatus();
    const int fd = fd_;
    fd_ = -1;
    if (::fsync(fd) != 0) {
      const int error = errno;
      ::close(fd);
      return ErrnoStatus("fsync", path_, error);
    }
    if (::close(fd) != 0) return ErrnoStatus("close", path_, errno);
    return OkStatus();
  }

  uint64_t size() const { return size_; }
  uint64_t last_offset() const { return last_offset_; }

 private:
  int fd_;
  const std::string path_;
  uint64_t size_ = 0;
  uint64_t last_offset_ = 0;
};

StatusOr<std::unique_ptr<WarcArchive>> WarcArchive::Open(WarcArchiveOptions options) {
  if (options.dir.empty()) return InvalidArgumentError("WARC output: no directory");
  if (options.max_file_bytes < 1) return InvalidArgumentError("WARC output: max_file_bytes < 1");
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) return ErrnoStatus("create directory", options.dir, ec.value());
  std::unique_ptr<WarcArchive> archive(new WarcArchive(std::move(options)));
  Status s = archive->BeginFile();
  if (!s.ok()) return s;
  return archive;
}

WarcArchive::WarcArchive(WarcArchiveOptions options) : options_(std::move(options)) {}

WarcArchive::~WarcArchive() { Close().IgnoreError(); }  // errors are for callers of Close()

Status WarcArchive::Fail(Status status) {
  if (status_.ok()) status_ = status;
  return status;
}

Status WarcArchive::BeginFile() {
  const std::string base = "shingled-" + SafeName(options_.sweep) + "-" + FileTimestamp() + "-";
  int fd = -1;
  std::string name;
  // A resumed sweep may begin a file in the same second as an earlier run: the serial moves on
  // past any name already taken, finished or not.
  for (int attempt = 0; attempt < 100000 && fd < 0; ++attempt, ++serial_) {
    char serial[16];
    std::snprintf(serial, sizeof(serial), "%05u", serial_);
    name = base + serial + ".warc.gz";
    const std::string path = options_.dir + "/" + name;
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) continue;
    fd = ::open((path + ".open").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) return Fail(ErrnoStatus("create", path + ".open", errno));
  }
  if (fd < 0)
    return Fail(FailedPreconditionError("WARC output: no free file name in " + options_.dir));
  const std::string open_path = options_.dir + "/" + name + ".open";
  auto sink = std::make_unique<FileSink>(fd, open_path);
  sink_ = sink.get();
  writer_ = std::make_unique<WarcWriter>(std::move(sink), /*gzip=*/true);
  name_ = name;
  cdxj_lines_.clear();

  std::string block =
      "format: WARC File Format 1.1\r\n"
      "conformsTo: "
      "http://iipc.github.io/warc-specifications/specifications/warc-format/"
      "warc-1.1/\r\n";
  for (const auto& [field, value] : options_.warcinfo) {
    block.append(field).append(": ").append(value) += "\r\n";
  }
  warcinfo_id_ = NewWarcRecordId();
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  Status s = writer_->WriteRecord("warcinfo", now,
                                  {{"WARC-Record-ID", warcinfo_id_},
                                   {"WARC-Filename", name_},
                                   {"Content-Type", "application/warc-fields"}},
                                  block);
  if (!s.ok()) return Fail(s);
  bytes_total_ += sink_->size();
  return OkStatus();
}

Status WarcArchive::FinishFile() {
  if (name_.empty()) return OkStatus();
  const std::string path = options_.dir + "/" + name_;
  Status s = writer_->Close();
  if (s.ok()) s = sink_->Finish();
  writer_.reset();
  sink_ = nullptr;
  if (!s.ok()) return Fail(s);

  SortCdxjLines(&cdxj_lines_);
  std::string index;
  for (const std::string& line : cdxj_lines_) index.append(line) += "\n";
  const std::string cdxj = path + ".cdxj";
  const int fd = ::open((cdxj + ".open").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail(ErrnoStatus("create", cdxj + ".open", errno));
  FileSink index_sink(fd, cdxj + ".open");
  s = index_sink.Write(index);
  if (s.ok()) s = index_sink.Finish();
  if (!s.ok()) return Fail(s);
  // The index first: a finished WARC file always has its index beside it.
  if (std::rename((cdxj + ".open").c_str(), cdxj.c_str()) != 0) {
    return Fail(ErrnoStatus("rename", cdxj + ".open", errno));
  }
  if (std::rename((path + ".open").c_str(), path.c_str()) != 0) {
    return Fail(ErrnoStatus("rename", path + ".open", errno));
  }
  s = FsyncDir(options_.dir);
  if (!s.ok()) return Fail(s);
  files_.push_back(path);
  name_.clear();
  cdxj_lines_.clear();
  return OkStatus();
}

StatusOr<WarcWritten> WarcArchive::Write(const HttpExchange& x, const WarcRevisitOf* revisit_of) {
  if (!status_.ok()) return status_;
  if (closed_) return FailedPreconditionError("WARC output: archive closed");
  if (sink_ != nullptr && sink_->size() >= options_.max_file_bytes) {
    Status s = FinishFile();
    if (s.ok()) s = BeginFile();
    if (!s.ok()) return s;
  }
  const uint64_t before = sink_->size();
  const std::string request_id = NewWarcRecordId();
  WarcWritten written;
  written.record_id = NewWarcRecordId();
  written.file = name_;
  Status s = writer_->WriteRecord("request", x.date_unix,
                                  {{"WARC-Record-ID", request_id},
                                   {"WARC-Target-URI", x.url},
                                   {"WARC-Concurrent-To", written.record_id},
                                   {"WARC-Warcinfo-ID", warcinfo_id_},
                                   {"WARC-Block-Digest", WarcSha1Digest(x.request_head)},
                                   {"Content-Type", "application/http; msgtype=request"}},
                                  x.request_head);
  if (!s.ok()) return Fail(s);

  std::string block = HttpResponseHead(x.http_status, x.response_headers, x.body.size());
  written.payload_digest = WarcSha1Digest(x.body);
  HeaderList fields = {{"WARC-Record-ID", written.record_id},
                       {"WARC-Target-URI", x.url},
                       {"WARC-Concurrent-To", request_id},
                       {"WARC-Warcinfo-ID", warcinfo_id_}};
  if (revisit_of != nullptr) {
    fields.push_back(
        {"WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"});
    fields.push_back({"WARC-Refers-To-Target-URI", revisit_of->url});
    fields.push_back({"WARC-Refers-To-Date", FormatWarcDate(revisit_of->date_unix)});
    if (!revisit_of->record_id.empty()) {
      fields.push_back({"WARC-Refers-To", revisit_of->record_id});
    }
  } else {
    block.append(x.body);
  }
  fields.push_back({"WARC-Payload-Digest", written.payload_digest});
  fields.push_back({"WARC-Block-Digest", WarcSha1Digest(block)});
  fields.push_back({"Content-Type", "application/http; msgtype=response"});
  s = writer_->WriteRecord(revisit_of != nullptr ? "revisit" : "response", x.date_unix, fields,
                           block);
  if (!s.ok()) return Fail(s);
  written.offset = sink_->last_offset();
  written.length = sink_->size() - written.offset;
  bytes_total_ += sink_->size() - before;
  ++(revisit_of != nullptr ? revisits_ : responses_);

  CdxjEntry entry;
  entry.url = x.url;
  entry.warc_date = FormatWarcDate(x.date_unix);
  if (revisit_of != nullptr) {
    entry.mime = "warc/revisit";
  } else if (const std::string* type = FindHeader(x.response_headers, "Content-Type")) {
    std::string mime = type->substr(0, type->find(';'));
    const size_t first = mime.find_first_not_of(" \t");
    const size_t last = mime.find_last_not_of(" \t");
    entry.mime = first == std::string::npos ? "" : mime.substr(first, last - first + 1);
  }
  entry.http_status = x.http_status;
  entry.digest = written.payload_digest;
  entry.length = written.length;
  entry.offset = written.offset;
  entry.filename = name_;
  cdxj_lines_.push_back(FormatCdxjLine(entry));
  return written;
}

Status WarcArchive::Close() {
  if (closed_) return status_;
  closed_ = true;
  if (!status_.ok()) {
    writer_.reset();  // the descriptor is closed; the file stays `.open`
    sink_ = nullptr;
    return status_;
  }
  return FinishFile();
}

}  // namespace shingled::crawler
