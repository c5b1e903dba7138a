// Command-line parsing shared by the checkmpi tools: long options as
// "--name value" or "--name=value", optional one-letter aliases ("-m 1:64"),
// flags without values, and positional arguments. Errors are UsageError.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace checkmpi {

struct OptionSpec {
  std::string name;     // long name without dashes
  char short_name;      // 0 for none
  bool takes_value;     // false: a flag
  std::string help;     // one line; "(default X)" belongs here
  bool hidden = false;  // test-only switches stay out of --help
};

class CommandLine {
 public:
  CommandLine(std::string program, std::string synopsis, std::vector<OptionSpec> specs);

  // Throws UsageError for an unknown option, a missing value, or a value given
  // to a flag.
  void parse(int argc, const char* const* argv);

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::optional<std::string> value(const std::string& name) const;
  std::string get(const std::string& name, const std::string& fallback) const;
  long long get_int(const std::string& name, long long fallback) const;
  double get_double(const std::string& name, double fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }

  std::string help() const;

 private:
  const OptionSpec* find_long(const std::string& name) const;
  const OptionSpec* find_short(char c) const;

  std::string program_, synopsis_;
  std::vector<OptionSpec> specs_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

// Strict conversions: the whole text must be the number. `what` names the value
// in the error message ("--warmup", "key 'lx'").
long long parse_integer(const std::string& text, const std::string& what);
double parse_number(const std::string& text, const std::string& what);

}  // namespace checkmpi
