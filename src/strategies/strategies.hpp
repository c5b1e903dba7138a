// Factories of the strategies listed in the catalog, one per file.
#pragma once

#include <memory>

#include "core/strategy.hpp"

namespace checkmpi {

template <class Real> std::unique_ptr<Strategy<Real>> make_sendrecv_dtype();  // step0
template <class Real> std::unique_ptr<Strategy<Real>> make_sendrecv_packx();  // step1
template <class Real> std::unique_ptr<Strategy<Real>> make_sendrecv_pack();   // step2

}  // namespace checkmpi
