// --events FILE: the run's progress for a program that follows it (the
// checkmpi command), one JSON line per unit of work as it starts, e.g.
//   {"event": "start", "index": 3, "count": 20, "what": "step2 (sendrecv-pack)"}
// written by rank 0 and flushed line by line. The human lines on standard
// output stay as they are and are not meant to be parsed.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace checkmpi::events {

// Opens FILE (rank 0; the others keep no file). UsageError if it cannot be
// created, is a link, a folder or not a regular file, or is one of `others`
// (path, what it is: the input file, the --json file, ...). A write that
// fails later (a full disk) is one warning of `tool`'s, and no more lines.
void open(const std::string& path, int rank, const std::string& tool,
          const std::vector<std::pair<std::string, std::string>>& others = {});
// Unit `index` of `count` starts: a line, if a file is open.
void start(long long index, long long count, const std::string& what);

}  // namespace checkmpi::events
