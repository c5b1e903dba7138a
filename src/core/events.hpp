// --events FILE: the run's progress for a program that follows it (the
// checkmpi command), one JSON line per unit of work as it starts, e.g.
//   {"event": "start", "index": 3, "count": 20, "what": "step2 (sendrecv-pack)"}
// written by rank 0 and flushed line by line. The human lines on standard
// output stay as they are and are not meant to be parsed.
#pragma once

#include <string>

namespace checkmpi::events {

// Opens FILE (rank 0; the others keep no file). UsageError if it cannot be
// created.
void open(const std::string& path, int rank);
// Unit `index` of `count` starts: a line, if a file is open.
void start(long long index, long long count, const std::string& what);

}  // namespace checkmpi::events
