#include "grid/namelist.hpp"

#include <cctype>

#include "core/cli.hpp"
#include "core/errors.hpp"

namespace checkmpi {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "U+0000".
std::string hex_code(unsigned char c) {
  const char* digits = "0123456789ABCDEF";
  return std::string("U+00") + digits[c >> 4] + digits[c & 15];
}

bool is_separator(char c) { return std::isspace(static_cast<unsigned char>(c)) || c == ','; }

class Scanner {
 public:
  Scanner(const std::string& text, std::string source) : text_(text), source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError(source_ + ", line " + std::to_string(line_) + ": " + what);
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }

  void advance() {
    if (text_[pos_] == '\n') ++line_;
    ++pos_;
  }

  // Skips separators and comments; returns false at end of text.
  bool skip_blanks() {
    while (!at_end()) {
      if (peek() == '!') {
        while (!at_end() && peek() != '\n') advance();
      } else if (is_separator(peek())) {
        advance();
      } else {
        return true;
      }
    }
    return false;
  }

  std::string word() {
    size_t start = pos_;
    while (!at_end() && !is_separator(peek()) && peek() != '=' && peek() != '/' && peek() != '!')
      advance();
    return text_.substr(start, pos_ - start);
  }

  // Moves to just after "&group" (case-insensitive) at the start of a token.
  bool find_group(const std::string& group) {
    const std::string want = "&" + group;
    while (skip_blanks()) {
      size_t start = pos_;
      std::string w = word();
      if (w.empty()) advance();
      if (lower(w) == want && (start == 0 || is_separator(text_[start - 1]))) return true;
    }
    return false;
  }

  int line() const { return line_; }

 private:
  const std::string& text_;
  std::string source_;
  size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

std::map<std::string, long long> parse_namelist(const std::string& text, const std::string& group,
                                                const std::set<std::string>& allowed,
                                                const std::string& source,
                                                std::vector<std::string>* warnings) {
  // A namelist is text: a control character (a NUL once ended a value
  // unseen) is refused with its line; a UTF-8 byte-order mark is skipped.
  int line = 1;
  for (unsigned char c : text) {
    if (c == '\n') ++line;
    else if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
      throw UsageError(source + ", line " + std::to_string(line) + ": control character " + hex_code(c) +
                       "; a namelist file holds text only");
  }
  const std::string bom = "\xEF\xBB\xBF";
  const std::string body = text.compare(0, bom.size(), bom) == 0 ? text.substr(bom.size()) : text;
  Scanner in(body, source);
  if (!in.find_group(group)) throw UsageError(source + ": no &" + group + " group found");
  std::map<std::string, long long> values;
  while (true) {
    if (!in.skip_blanks()) in.fail("&" + group + " group is not closed with '/'");
    if (in.peek() == '/') return values;
    std::string key = lower(in.word());
    if (key == "&end") return values;
    if (key.empty()) in.fail(std::string("unexpected '") + in.peek() + "'");
    if (!allowed.count(key)) in.fail("unknown key '" + key + "' in &" + group);
    // Blanks may surround '=' but a newline may too, as Fortran allows.
    if (!in.skip_blanks() || in.peek() != '=') in.fail("expected '=' after '" + key + "'");
    in.advance();
    if (!in.skip_blanks() || in.peek() == '/') in.fail("missing value for '" + key + "'");
    const int line = in.line();
    std::string value = in.word();
    if (value.empty()) in.fail("missing value for '" + key + "'");
    long long v = 0;
    try {
      v = parse_integer(value, "'" + key + "'");
    } catch (const UsageError& e) {
      throw UsageError(source + ", line " + std::to_string(line) + ": " + e.what());
    }
    if (values.count(key) && warnings)
      warnings->push_back(source + ", line " + std::to_string(line) + ": '" + key + "' is given again; " +
                          "the last value (" + value + ") is used, as Fortran does");
    values[key] = v;
  }
}

}  // namespace checkmpi
