// Factories of the strategies listed in the catalog, one per file.
#pragma once

#include <memory>

#include "strategies/strategy.hpp"

namespace checkmpi {

template <class Real> std::unique_ptr<Strategy<Real>> make_sendrecv_dtype();   // step0
template <class Real> std::unique_ptr<Strategy<Real>> make_sendrecv_packx();   // step1
template <class Real> std::unique_ptr<Strategy<Real>> make_sendrecv_pack();    // step2
template <class Real> std::unique_ptr<Strategy<Real>> make_kernel_pack();      // step3
template <class Real> std::unique_ptr<Strategy<Real>> make_kernel_pack_aware();// step4
template <class Real> std::unique_ptr<Strategy<Real>> make_isend_recv_x();     // step5
template <class Real> std::unique_ptr<Strategy<Real>> make_isend_recv();       // step6
template <class Real> std::unique_ptr<Strategy<Real>> make_isend_irecv();      // step7
template <class Real> std::unique_ptr<Strategy<Real>> make_overlap();          // step8
template <class Real> std::unique_ptr<Strategy<Real>> make_overlap_async();    // step9
template <class Real> std::unique_ptr<Strategy<Real>> make_overlap_masked();   // step10

// Defines make_NAME<float>() and make_NAME<double>(), each returning a new
// CLASS<Real>: one line at the end of each strategy's file.
#define CHECKMPI_DEFINE_FACTORY(name, Class)                                      \
  template <class Real>                                                           \
  std::unique_ptr<Strategy<Real>> make_##name() {                                 \
    return std::make_unique<Class<Real>>();                                       \
  }                                                                               \
  template std::unique_ptr<Strategy<float>> make_##name<float>();                 \
  template std::unique_ptr<Strategy<double>> make_##name<double>();

}  // namespace checkmpi
