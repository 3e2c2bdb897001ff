// Status and StatusOr: the error vocabulary every module returns across its border.
//
// Shaped like absl::Status (which Debian 12 does not package for our use), reduced to what the
// project needs. A Status is a code and a message; OK carries no message. A StatusOr<T> holds
// either a value or a non-OK Status. Both are values: copy them freely. Neither is synchronized.
//
// Choosing a code (after absl/status/status.h):
//   kInvalidArgument     the caller's input is wrong whatever the state of the system;
//   kNotFound            the thing asked for does not exist;
//   kFailedPrecondition  the system is not in the state the call needs (e.g. store closed);
//   kResourceExhausted   a limit was hit (size, queue, disk);
//   kUnavailable         retry later (shutting down, writer busy);
//   kDeadlineExceeded    a timeout;
//   kDataLoss            stored data is corrupt;
//   kInternal            a bug or an invariant broken.
#ifndef SHINGLED_BASE_STATUS_H_
#define SHINGLED_BASE_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace shingled {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kResourceExhausted,
  kUnavailable,
  kDeadlineExceeded,
  kDataLoss,
  kInternal,
  // The operation is not provided by this implementation (a store backend that lacks it).
  kUnimplemented,
};

// Returns the code's name in snake case ("invalid_argument"), as used in JSON error bodies.
constexpr std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid_argument";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kAlreadyExists: return "already_exists";
    case StatusCode::kFailedPrecondition: return "failed_precondition";
    case StatusCode::kResourceExhausted: return "resource_exhausted";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kDeadlineExceeded: return "deadline_exceeded";
    case StatusCode::kDataLoss: return "data_loss";
    case StatusCode::kInternal: return "internal";
    case StatusCode::kUnimplemented:
      return "unimplemented";
  }
  return "unknown";
}

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {
    if (code_ == StatusCode::kOk) message_.clear();
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "invalid_argument: shingle size must be 1..64"; "ok" for OK.
  std::string ToString() const {
    if (ok()) return "ok";
    return std::string(StatusCodeName(code_)) + ": " + message_;
  }

  // Marks a Status as deliberately dropped, so that the drop is visible at the call site.
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExistsError(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status FailedPreconditionError(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
inline Status ResourceExhaustedError(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status DeadlineExceededError(std::string m) { return {StatusCode::kDeadlineExceeded, std::move(m)}; }
inline Status DataLossError(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status UnimplementedError(std::string m) {
  return {StatusCode::kUnimplemented, std::move(m)};
}

// Holds a T or a non-OK Status. REQUIRES: the Status given to the constructor is not OK.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : rep_(status) { assert(!status.ok()); }  // NOLINT: implicit
  StatusOr(Status&& status) : rep_(std::move(status)) {                     // NOLINT: implicit
    assert(!std::get<Status>(rep_).ok());
  }
  StatusOr(const T& value) : rep_(value) {}       // NOLINT: implicit by design
  StatusOr(T&& value) : rep_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(rep_); }
  Status status() const { return ok() ? OkStatus() : std::get<Status>(rep_); }

  // REQUIRES: ok().
  const T& value() const& { return std::get<T>(rep_); }
  T& value() & { return std::get<T>(rep_); }
  T&& value() && { return std::get<T>(std::move(rep_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<Status, T> rep_;
};

}  // namespace shingled

// Returns early with the Status of `expr` when it is not OK.
#define SHINGLED_RETURN_IF_ERROR(expr)                 \
  do {                                                 \
    ::shingled::Status shingled_status_ = (expr);      \
    if (!shingled_status_.ok()) return shingled_status_; \
  } while (0)

#endif  // SHINGLED_BASE_STATUS_H_
