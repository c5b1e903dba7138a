// Small text and file-system helpers both tools use.
#pragma once

#include <string>

namespace checkmpi {

// Creates DIR and its parents; returns an error text, empty on success.
std::string make_directories(const std::string& dir);

// printf's %.Nf
std::string fixed(double v, int precision);

// "1.5 GiB"
std::string human_bytes(double bytes);

}  // namespace checkmpi
