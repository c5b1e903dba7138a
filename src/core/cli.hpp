// Command-line parsing shared by the checkmpi tools: long options as
// "--name value" or "--name=value", optional one-letter aliases ("-m 1:64"),
// flags without values, positional arguments, and old spellings that still
// work for one release with a deprecation line. Errors are UsageError.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace checkmpi {

struct OptionSpec {
  std::string name;     // long name without dashes
  char short_name;      // 0 for none
  bool takes_value;     // false: a flag
  std::string help;     // one paragraph, wrapped by help(); "(default X)" belongs here
  bool hidden = false;  // out of --help: test-only switches, and names another option's help lists
  std::string metavar = "VALUE";  // the value's name in --help
};

// A spelling an option had before (e.g. "-o" or "--iterations"): parse()
// takes it as the option `name` and records a deprecation line.
struct OldSpelling {
  std::string spelling;  // with its dashes
  std::string name;      // the option it now is
};

class CommandLine {
 public:
  CommandLine(std::string program, std::string synopsis, std::vector<OptionSpec> specs,
              std::vector<OldSpelling> old = {});

  // Throws UsageError for an unknown option, a missing value, or a value given
  // to a flag.
  void parse(int argc, const char* const* argv);

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::optional<std::string> value(const std::string& name) const;
  std::string get(const std::string& name, const std::string& fallback) const;
  long long get_int(const std::string& name, long long fallback) const;
  double get_double(const std::string& name, double fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }
  // One line per old spelling used: "-o is the old spelling of --outdir; ...".
  const std::vector<std::string>& deprecations() const { return deprecations_; }

  // The synopsis and every option, wrapped at kHelpWidth columns.
  std::string help() const;
  static constexpr std::size_t kHelpWidth = 80;

 private:
  const OptionSpec* find_long(const std::string& name) const;
  const OptionSpec* find_short(char c) const;
  const OptionSpec* find_old(const std::string& spelling);  // records the deprecation line

  std::string program_, synopsis_;
  std::vector<OptionSpec> specs_;
  std::vector<OldSpelling> old_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
  std::vector<std::string> deprecations_;
};

// Strict conversions: the whole text must be the number. `what` names the value
// in the error message ("--warmup", "key 'lx'").
long long parse_integer(const std::string& text, const std::string& what);
double parse_number(const std::string& text, const std::string& what);

}  // namespace checkmpi
