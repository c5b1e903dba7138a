// step0 (sendrecv-dtype): CheckMPI's starting point. Per field, direction and
// sign one MPI_Sendrecv of a derived datatype describing the plane in place:
// 18 calls per step, no copies by the application.
#pragma once

#include <array>

#include "strategies/sendrecv_plumbing.hpp"

namespace checkmpi {

template <class Real>
class SendrecvDatatype : public Strategy<Real> {
 public:
  ~SendrecvDatatype() override {
    for (auto& t : types_)
      if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
  }
  void setup(HaloState<Real>& s) override {
    for (int d = 0; d < 3; ++d) types_[d] = make_plane_datatype(s.grid, d, mpi_type<Real>());
  }

 protected:
  void exchange_direction(HaloState<Real>& s, int dir) override {
    for (int sign : {Up, Down})
      for (int field = 0; field < 3; ++field) sendrecv_datatype(s, field, dir, sign, types_[dir]);
  }

 private:
  std::array<MPI_Datatype, 3> types_{MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
};

}  // namespace checkmpi
