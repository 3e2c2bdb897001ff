#include "daemon/wire/json_line.h"

#include <algorithm>
#include <string>
#include <utility>

namespace shingled::daemon {
namespace {

class FlatObjectSax final : public nlohmann::json_sax<Json> {
 public:
  explicit FlatObjectSax(std::initializer_list<std::string_view> allowed) : allowed_(allowed) {}

  Json& object() { return object_; }
  Status& status() { return status_; }

  bool null() override { return Value(nullptr); }
  bool boolean(bool v) override { return Value(v); }
  bool number_integer(number_integer_t v) override { return Value(v); }
  bool number_unsigned(number_unsigned_t v) override { return Value(v); }
  bool number_float(number_float_t v, const string_t&) override { return Value(v); }
  bool string(string_t& v) override { return Value(std::move(v)); }
  bool binary(binary_t&) override { return Fail(InvalidArgumentError("invalid JSON object")); }

  bool start_object(std::size_t) override {
    if (depth_ >= kMaxBatchLineDepth) return Nested("an object");
    ++depth_;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) return Fail(InvalidArgumentError("invalid JSON object"));
    return Nested("an array");
  }
  bool end_array() override { return true; }

  bool key(string_t& key) override {
    if (std::find(allowed_.begin(), allowed_.end(), key) == allowed_.end()) {
      Json probe = Json::object();
      probe[key] = nullptr;
      return Fail(CheckMembers(probe, allowed_));
    }
    key_ = std::move(key);
    return true;
  }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    std::string message = "invalid JSON object (at byte ";
    message.append(std::to_string(position)).append(")");
    return Fail(InvalidArgumentError(message));
  }

 private:
  template <typename T>
  bool Value(T&& v) {
    if (depth_ != 1) return Fail(InvalidArgumentError("invalid JSON object"));
    object_[key_] = std::forward<T>(v);
    return true;
  }
  bool Nested(const char* what) {
    std::string message = "\"";
    message.append(key_.substr(0, 100))
        .append("\" is ")
        .append(what)
        .append(": a batch line is one JSON object nested at most ")
        .append(std::to_string(kMaxBatchLineDepth))
        .append(" level deep, whose values are strings, integers or null");
    return Fail(InvalidArgumentError(message));
  }
  bool Fail(Status status) {
    if (status_.ok()) status_ = std::move(status);
    return false;
  }

  std::initializer_list<std::string_view> allowed_;
  Json object_ = Json::object();
  std::string key_;
  int depth_ = 0;
  Status status_;
};

}  // namespace

StatusOr<Json> ParseFlatJsonObject(std::string_view line,
                                   std::initializer_list<std::string_view> allowed) {
  FlatObjectSax sax(allowed);
  const bool ok = Json::sax_parse(line, &sax);
  if (!sax.status().ok()) return sax.status();
  if (!ok) return InvalidArgumentError("invalid JSON object");
  return std::move(sax.object());
}

}  // namespace shingled::daemon
