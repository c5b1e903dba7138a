#include "p2p/progress.hpp"

#include <mpi.h>

#include <cstdlib>
#include <cstring>

namespace checkmpi::p2p {

namespace {

struct LibrarySetting {
  const char* variable;  // environment variable
  const char* cvar;      // the same setting's MPI_T control variable
  const char* covers;
  bool read_before_init;  // the control variable read before MPI_Init, else after
};

// Open MPI: before MPI_Init (p2p/progress.hpp). MPICH 4.0.2: after, as its
// MPI_Init_thread crashed after an MPI_T_init_thread + MPI_T_finalize.
#if defined(MPICH_VERSION)
constexpr LibrarySetting kSetting{"MPIR_CVAR_ASYNC_PROGRESS", "MPIR_CVAR_ASYNC_PROGRESS", "all communication",
                                  false};
constexpr bool kNeedsMultiple = true;
#elif defined(OPEN_MPI)
constexpr LibrarySetting kSetting{"OMPI_MCA_btl_tcp_progress_thread", "btl_tcp_progress_thread",
                                  "TCP BTL traffic only", true};
constexpr bool kNeedsMultiple = false;
#else
constexpr LibrarySetting kSetting{nullptr, nullptr, nullptr, false};
constexpr bool kNeedsMultiple = false;
#endif
constexpr int kUnread = -2;  // request_progress_thread's value where the library reads it after MPI_Init

// The integer control variable `name`, or -1 if this library has none. At
// MPI's thread level (before MPI_Init the level it will ask for): Open MPI
// 4.1 takes MPI_T_init_thread's level as the process's.
int read_cvar(const char* name, int level) {
  int provided = 0, value = -1, index = 0, count = 0;
  if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS) return -1;
  MPI_T_cvar_handle handle;
  if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS &&
      MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
    if (count != 1 || MPI_T_cvar_read(handle, &value) != MPI_SUCCESS) value = -1;
    MPI_T_cvar_handle_free(&handle);
  }
  MPI_T_finalize();
  return value;
}

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
  }
  return "?";
}

std::string describe(const ProgressThread& p) {
  if (p.setting.empty()) return "this MPI library has no known progress-thread setting; progress only inside MPI calls";
#if defined(OPEN_MPI)
  const std::string none =
      "Open MPI has no progress thread for shared memory or for the schedules of non-blocking collectives (ompi_info: "
      "OMPI progress: no)";
  if (p.active) return "TCP BTL progress thread on (btl_tcp_progress_thread=1), TCP traffic only: " + none;
  return "no progress thread: " + none + "; --progress-thread sets btl_tcp_progress_thread=1, for TCP traffic only";
#else
  if (p.active) return "library progress thread on (" + p.setting + ", " + p.thread_level + ")";
  return std::string(p.requested ? "progress thread requested but not running" : "no progress thread") +
         ": progress only inside MPI calls (--progress-thread sets " + p.setting + ")";
#endif
}

}  // namespace

int request_progress_thread(int argc, char** argv, int level) {
  if (kSetting.variable == nullptr) return -1;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--progress-thread") == 0) ::setenv(kSetting.variable, "1", 1);
  return kSetting.read_before_init ? read_cvar(kSetting.cvar, level) : kUnread;
}

ProgressThread progress_thread_state(bool requested, int setting) {
  ProgressThread p;
  p.requested = requested;
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  p.thread_level = level_name(level);
  if (kSetting.variable != nullptr) {
    p.setting = std::string(kSetting.variable) + "=1";
    p.covers = kSetting.covers;
    if (setting == kUnread) setting = read_cvar(kSetting.cvar, level);
    p.active = setting > 0 && (!kNeedsMultiple || level == MPI_THREAD_MULTIPLE);
  }
  p.note = describe(p);
  return p;
}

Json progress_thread_json(const ProgressThread& p) {
  Json j = Json::object();
  j["requested"] = p.requested;
  j["setting"] = p.setting.empty() ? Json() : Json(p.setting);
  j["covers"] = p.covers.empty() ? Json() : Json(p.covers);
  j["active"] = p.active;
  j["thread_level"] = p.thread_level;
  j["note"] = p.note;
  return j;
}

}  // namespace checkmpi::p2p
