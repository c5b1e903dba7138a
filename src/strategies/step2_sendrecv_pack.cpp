// step2 (sendrecv-pack): every direction packed by hand, the three fields in
// one buffer per direction and sign: 6 MPI_Sendrecv per step instead of 18.
#include <optional>

#include "strategies/sendrecv_plumbing.hpp"
#include "strategies/strategies.hpp"

namespace checkmpi {

template <class Real>
class SendrecvPack : public Strategy<Real> {
 public:
  void setup(HaloState<Real>& s) override { buffers_.emplace(s.grid); }

 protected:
  void exchange_direction(HaloState<Real>& s, int dir) override {
    for (int sign : {Up, Down}) sendrecv_packed(s, {0, 1, 2}, dir, sign, *buffers_);
  }

 private:
  std::optional<PackBuffers<Real>> buffers_;
};

CHECKMPI_DEFINE_FACTORY(sendrecv_pack, SendrecvPack)

}  // namespace checkmpi
