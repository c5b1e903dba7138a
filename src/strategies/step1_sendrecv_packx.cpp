// step1 (sendrecv-packx): step0, but the x planes (single points l+2 apart,
// the datatype MPI handles worst) are packed by hand, one field per message.
#include <optional>

#include "strategies/step0_sendrecv_dtype.hpp"
#include "strategies/strategies.hpp"

namespace checkmpi {

template <class Real>
class SendrecvPackX : public SendrecvDatatype<Real> {
 public:
  void setup(HaloState<Real>& s) override {
    SendrecvDatatype<Real>::setup(s);
    buffers_.emplace(s.grid);
  }

 protected:
  void exchange_direction(HaloState<Real>& s, int dir) override {
    if (dir != 0) return SendrecvDatatype<Real>::exchange_direction(s, dir);
    for (int sign : {Up, Down})
      for (int field = 0; field < 3; ++field) sendrecv_packed(s, {field}, dir, sign, *buffers_);
  }

 private:
  std::optional<PackBuffers<Real>> buffers_;
};

CHECKMPI_DEFINE_FACTORY(sendrecv_packx, SendrecvPackX)

}  // namespace checkmpi
