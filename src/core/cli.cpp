#include "core/cli.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "core/errors.hpp"

namespace checkmpi {

CommandLine::CommandLine(std::string program, std::string synopsis, std::vector<OptionSpec> specs,
                         std::vector<OldSpelling> old)
    : program_(std::move(program)), synopsis_(std::move(synopsis)), specs_(std::move(specs)), old_(std::move(old)) {}

const OptionSpec* CommandLine::find_long(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

const OptionSpec* CommandLine::find_short(char c) const {
  for (const auto& s : specs_)
    if (s.short_name != 0 && s.short_name == c) return &s;
  return nullptr;
}

const OptionSpec* CommandLine::find_old(const std::string& spelling) {
  for (const auto& o : old_) {
    if (o.spelling != spelling) continue;
    const OptionSpec* spec = find_long(o.name);
    const std::string line = spelling + " is the old spelling of --" + o.name + "; it works in this release only";
    if (spec && std::find(deprecations_.begin(), deprecations_.end(), line) == deprecations_.end())
      deprecations_.push_back(line);
    return spec;
  }
  return nullptr;
}

void CommandLine::parse(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const OptionSpec* spec = nullptr;
    std::optional<std::string> inline_value;
    if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
      std::string name = arg.substr(2);
      size_t eq = name.find('=');
      if (eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      spec = find_long(name);
      if (!spec) spec = find_old("--" + name);
      if (!spec) throw UsageError("unknown option '--" + name + "' (see " + program_ + " --help)");
    } else if (arg.size() >= 2 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1]))) {
      spec = arg.size() == 2 ? find_short(arg[1]) : nullptr;
      if (!spec) spec = find_old(arg);
      if (!spec) throw UsageError("unknown option '" + arg + "' (see " + program_ + " --help)");
    } else {
      positional_.push_back(arg);
      continue;
    }
    if (values_.count(spec->name))  // the last one silently won
      throw UsageError("option --" + spec->name + " is given twice; give it once");
    if (!spec->takes_value) {
      if (inline_value) throw UsageError("option --" + spec->name + " takes no value");
      values_[spec->name] = "";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) throw UsageError("option --" + spec->name + " needs a value");
      inline_value = argv[++i];
    }
    values_[spec->name] = *inline_value;
  }
}

std::optional<std::string> CommandLine::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string CommandLine::get(const std::string& name, const std::string& fallback) const {
  auto v = value(name);
  return v ? *v : fallback;
}

long long CommandLine::get_int(const std::string& name, long long fallback) const {
  auto v = value(name);
  return v ? parse_integer(*v, "--" + name) : fallback;
}

double CommandLine::get_double(const std::string& name, double fallback) const {
  auto v = value(name);
  return v ? parse_number(*v, "--" + name) : fallback;
}

namespace {

// `text` after `first` (the first line's start), wrapped at `width`; later
// lines start with `indent` spaces. A word longer than a line stays whole.
std::string wrap(const std::string& first, const std::string& text, std::size_t indent, std::size_t width) {
  std::string out, line = first;
  bool empty = true;  // no word on this line yet
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (!empty && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = std::string(indent, ' ');
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  return out + line + "\n";
}

// A synopsis line such as "  nbc        non-blocking ...": wrapped lines
// start under its second column (or two spaces in from its own start).
std::string wrap_synopsis_line(const std::string& line, std::size_t width) {
  const std::size_t lead = line.find_first_not_of(' ');
  if (lead == std::string::npos) return "\n";
  const std::size_t gap = line.find("  ", lead);
  const std::size_t column = gap == std::string::npos ? std::string::npos : line.find_first_not_of(' ', gap);
  if (column == std::string::npos) return wrap(line.substr(0, lead), line.substr(lead), lead + 2, width);
  return wrap(line.substr(0, column), line.substr(column), column, width);
}

}  // namespace

std::string CommandLine::help() const {
  const std::size_t column = 30;  // where the options' help starts
  std::string out;
  std::istringstream synopsis(synopsis_);
  std::string line;
  bool first = true;
  while (std::getline(synopsis, line)) {
    out += first ? wrap("usage: " + program_ + " ", line, 7, kHelpWidth) : wrap_synopsis_line(line, kHelpWidth);
    first = false;
  }
  out += "\noptions:\n";
  for (const auto& s : specs_) {
    if (s.hidden) continue;
    std::string left = "  ";
    left += s.short_name ? std::string("-") + s.short_name + ", " : "    ";
    left += "--" + s.name + (s.takes_value ? " " + s.metavar : "");
    if (left.size() + 1 > column) {  // too long for the column: the help starts on the next line
      out += left + "\n";
      left.clear();
    }
    left.resize(column, ' ');
    out += wrap(left, s.help, column, kHelpWidth);
  }
  return out;
}

namespace {
// A value as an error line shows it: a 100 000-character value made a 100 kB line.
std::string shown(const std::string& text) { return text.size() <= 80 ? text : text.substr(0, 77) + "..."; }
}  // namespace

long long parse_integer(const std::string& text, const std::string& what) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(begin, &end, 10);
  if (text.empty() || *end != '\0' || std::isspace(static_cast<unsigned char>(text[0])))
    throw UsageError("value of " + what + " is not an integer: '" + shown(text) + "'");
  if (errno == ERANGE) throw UsageError("value of " + what + " is out of range: '" + shown(text) + "'");
  return v;
}

double parse_number(const std::string& text, const std::string& what) {
  // Decimal only: strtod also takes hex ("0x10" was 16), "inf" and "nan".
  static const std::regex decimal(R"([-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?)");
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(begin, &end);
  if (!std::regex_match(text, decimal) || *end != '\0')
    throw UsageError("value of " + what + " is not a decimal number: '" + shown(text) + "'");
  if (errno == ERANGE) throw UsageError("value of " + what + " is out of range: '" + shown(text) + "'");
  return v;
}

}  // namespace checkmpi
