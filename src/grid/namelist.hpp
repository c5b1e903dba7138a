// Reader for the one Fortran namelist group CheckMPI input files use:
//   &parameters lx = 600, ly = 600 ! comment
//               itfin=15000 /
// Keys are case-insensitive; blanks, newlines and commas separate
// assignments; '!' starts a comment; '/' (or "&end") closes the group.
// Text before the group is ignored, as Fortran's namelist read does. A key
// given twice keeps its last value, as Fortran does.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace checkmpi {

// Parses `text` (named `source` in messages). Only integer values are accepted
// and only keys in `allowed` (lower case). Throws UsageError naming the problem
// and its line. Each repeated key adds a line to `warnings` when given.
std::map<std::string, long long> parse_namelist(const std::string& text, const std::string& group,
                                                const std::set<std::string>& allowed,
                                                const std::string& source,
                                                std::vector<std::string>* warnings = nullptr);

}  // namespace checkmpi
