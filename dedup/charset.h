// Charsets: finding a page's character encoding and converting it to UTF-8, streaming.
//
// The encoding is taken, in this order, from: a byte order mark; the charset parameter of the
// HTTP Content-Type; for HTML, a <meta charset> or <meta http-equiv="Content-Type"> found by the
// HTML standard's prescan of the first kPrescanBytes; otherwise UTF-8 when the first
// kSniffBytes are valid UTF-8 and windows-1252 when they are not (the HTML standard's default for
// an undeclared Western page). Labels are resolved as the WHATWG Encoding Standard resolves them
// ("latin1", "iso-8859-1" and "ascii" all mean windows-1252; "x-sjis" means Shift_JIS).
// A label that names no known encoding is ignored, as browsers ignore it.
//
// Everything here is pure computation: the only state is in Utf8Converter objects.
#ifndef SHINGLED_DEDUP_CHARSET_H_
#define SHINGLED_DEDUP_CHARSET_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace shingled::dedup {

inline constexpr size_t kPrescanBytes = 1024;  // HTML standard, "prescan a byte stream"
inline constexpr size_t kSniffBytes = 8192;    // how much is checked for valid UTF-8

// What kind of content a page is, which decides how it is canonicalized.
enum class ContentKind {
  kHtml,    // text/html, application/xhtml+xml: parsed, visible text only
  kText,    // text/plain and other text/*: tokenized as it is
  kBinary,  // anything else (images, PDFs, archives): no tokens, only the raw-bytes fingerprint
};

// A parsed Content-Type header: lower-cased media type and the charset parameter (unquoted, as
// given; empty when absent). A malformed header yields an empty mime.
struct ContentType {
  std::string mime;
  std::string charset;
};
ContentType ParseContentType(std::string_view header);

// Decides the kind from the media type, or, when the media type is empty or
// application/octet-stream, from the first bytes: a NUL byte in the first kSniffBytes means
// binary (after a UTF-16 BOM: a U+0000 character, since UTF-16 text is full of NUL bytes);
// markup that starts like HTML (after an optional BOM and white space: "<!doctype html",
// "<html", "<head", "<body", "<!--", "<p", "<div", ...) means HTML; anything else is text.
ContentKind DetectContentKind(std::string_view mime, std::string_view head);

// The canonical name of the encoding a label means ("UTF-8", "windows-1252", "Shift_JIS",
// "EUC-JP", "GBK", "gb18030", "Big5", "EUC-KR", "ISO-8859-2", "KOI8-R", "UTF-16LE", ...), or ""
// when the label names no encoding we know. Case and surrounding white space are ignored.
std::string ResolveCharsetLabel(std::string_view label);

// Where an encoding decision came from.
enum class CharsetSource { kBom, kHeader, kMeta, kSniffUtf8, kDefault };
std::string_view CharsetSourceName(CharsetSource source);

struct CharsetDecision {
  std::string charset;  // canonical name, as ResolveCharsetLabel returns
  CharsetSource source;
  size_t bom_length = 0;  // bytes of BOM to skip at the start of the content
};

// Decides a page's encoding from the header's charset parameter (may be empty) and the first
// bytes of the page (`head`: at least min(kSniffBytes, page size) bytes when available; fewer only
// at the end of the page). `is_html` enables the <meta> prescan.
CharsetDecision DetectCharset(std::string_view header_charset, std::string_view head, bool is_html);

// Finds the encoding declared by <meta> in the first kPrescanBytes of `head`, following the HTML
// standard's prescan algorithm (comments, other tags and attributes are skipped correctly).
// Returns the resolved canonical name, or "" when there is none. A declared UTF-16 means UTF-8,
// as the standard says (a document that can be prescanned as ASCII is not UTF-16).
std::string PrescanMetaCharset(std::string_view head);

// Converts bytes in one encoding to UTF-8, streaming. Bytes that are invalid in the encoding
// become U+FFFD, one per invalid sequence; nothing is ever dropped silently or fails. A chunk may
// end inside a multi-byte character.
//
// A Utf8Converter is not safe for concurrent use.
class Utf8Converter {
 public:
  // InvalidArgument if `charset` is not a canonical name that ResolveCharsetLabel returns.
  static StatusOr<std::unique_ptr<Utf8Converter>> Create(std::string_view charset);
  // The converter for a page's decision: Create(decision.charset), except for a page sniffed as
  // UTF-8 (kSniffUtf8: nothing declared, the first kSniffBytes valid UTF-8). Such a page may
  // still hold windows-1252 bytes after the sniffed part (an undeclared Western page whose first
  // 8 KiB happen to be ASCII), so each byte of an invalid sequence is read as windows-1252, the
  // undeclared default, instead of becoming U+FFFD: "caf\xE9" gives the token "café", not "caf".
  static StatusOr<std::unique_ptr<Utf8Converter>> CreateFor(const CharsetDecision& decision);
  virtual ~Utf8Converter() = default;

  // Appends the UTF-8 for `bytes` to `*out`. A multi-byte character cut at the end of `bytes` is
  // held until the next call.
  virtual void Convert(std::string_view bytes, std::string* out) = 0;

  // Appends U+FFFD for a character left incomplete at the end of the input, and resets the
  // converter for reuse.
  virtual void Finish(std::string* out) = 0;
};

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_CHARSET_H_
