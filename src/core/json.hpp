// A small JSON value with ordered objects: enough to write results files that
// keep a stable, diffable key order, and to read back the files checkmpi
// wrote (earlier launches' samples).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace checkmpi {

class Json {
 public:
  enum class Kind { Null, Bool, Number, Integer, String, Array, Object };

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : kind_(Kind::Bool), bool_(b) {}
  Json(int v) : kind_(Kind::Integer), int_(v) {}
  Json(long v) : kind_(Kind::Integer), int_(v) {}
  Json(long long v) : kind_(Kind::Integer), int_(v) {}
  Json(unsigned long v) : kind_(Kind::Integer), int_(static_cast<long long>(v)) {}
  Json(unsigned long long v) : kind_(Kind::Integer), int_(static_cast<long long>(v)) {}
  Json(double v) : kind_(Kind::Number), num_(v) {}
  Json(const char* s) : kind_(Kind::String), str_(s) {}
  Json(std::string s) : kind_(Kind::String), str_(std::move(s)) {}

  static Json array() { Json j; j.kind_ = Kind::Array; return j; }
  static Json object() { Json j; j.kind_ = Kind::Object; return j; }
  template <class T>
  static Json array_of(const std::vector<T>& values) {
    Json j = array();
    for (const auto& v : values) j.push(Json(v));
    return j;
  }

  // Object member (inserted in order; an existing key is replaced in place).
  Json& operator[](const std::string& key);
  Json& push(Json value);

  // Non-finite numbers are written as null: JSON has no NaN.
  std::string dump(int indent = 2) const;

  // The value `text` holds; std::runtime_error("byte N: what") if it is not
  // JSON (or nests deeper than 64).
  static Json parse(const std::string& text);

  Kind kind() const { return kind_; }
  // Object member, or nullptr (not an object, or no such key).
  const Json* find(const std::string& key) const;
  const std::vector<Json>& items() const { return items_; }  // an array's
  double number() const { return kind_ == Kind::Integer ? double(int_) : num_; }
  long long integer() const { return kind_ == Kind::Integer ? int_ : (long long)num_; }
  bool is_number() const { return kind_ == Kind::Integer || kind_ == Kind::Number; }
  const std::string& string() const { return str_; }
  bool operator==(const Json& o) const { return dump(0) == o.dump(0); }
  bool operator!=(const Json& o) const { return !(*this == o); }

 private:
  void write(std::string& out, int indent, int depth) const;

  Kind kind_ = Kind::Null;
  bool bool_ = false;
  long long int_ = 0;
  double num_ = 0.0;
  std::string str_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

std::string json_escape(const std::string& s);

}  // namespace checkmpi
