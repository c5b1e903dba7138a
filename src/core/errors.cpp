#include "core/errors.hpp"

#include <functional>
#include <string>
#include <vector>

namespace checkmpi {

std::string first_error(MPI_Comm comm, const std::string& local_error, int& failing_rank) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = local_error.empty() ? size : rank;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  failing_rank = first == size ? -1 : first;
  if (first == size) return "";
  int len = (rank == first) ? static_cast<int>(local_error.size()) : 0;
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  std::vector<char> text(local_error.begin(), local_error.end());
  text.resize(static_cast<size_t>(len));
  MPI_Bcast(text.data(), len, MPI_CHAR, first, comm);
  return std::string(text.begin(), text.end());
}

namespace {

// The lowest failing rank's message, prefixed with that rank unless it is 0;
// "" when no rank failed.
std::string agreed_error(MPI_Comm comm, const std::string& local_error) {
  int size = 1, first = -1;
  MPI_Comm_size(comm, &size);
  std::string message = first_error(comm, local_error, first);
  if (first < 0) return "";
  if (size > 1 && first != 0) message = "rank " + std::to_string(first) + ": " + message;
  return message;
}

}  // namespace

void agree(MPI_Comm comm, const std::string& local_error) {
  const std::string message = agreed_error(comm, local_error);
  if (!message.empty()) throw UsageError(message);
}

void agree_output(MPI_Comm comm, const std::string& local_error) {
  const std::string message = agreed_error(comm, local_error);
  if (!message.empty()) throw OutputError(message);
}

void agree_run(MPI_Comm comm, const std::string& local_error) {
  const std::string message = agreed_error(comm, local_error);
  if (!message.empty()) throw RunError(message);
}

void same_arguments(MPI_Comm comm, int argc, char** argv) {
  std::string all;  // the program's own path may differ from node to node
  for (int i = 1; i < argc; ++i) all.append(argv[i]).push_back('\0');
  const unsigned long long mine = std::hash<std::string>{}(all);
  unsigned long long both[2] = {mine, ~mine}, least[2] = {0, 0};
  MPI_Allreduce(both, least, 2, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm);
  if (least[0] != ~least[1])  // the smallest and the largest differ
    throw UsageError("the ranks were started with different options (an MPMD command line?); give every rank the "
                     "same");
}

}  // namespace checkmpi
