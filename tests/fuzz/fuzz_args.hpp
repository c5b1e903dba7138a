// Fuzz inputs as command lines: arguments separated by NUL bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct FuzzArgs {
  std::vector<std::string> args;
  std::vector<const char*> argv;
  FuzzArgs(const char* program, const std::uint8_t* data, std::size_t size) {
    args.emplace_back(program);
    std::string current;
    for (std::size_t i = 0; i < size; ++i) {
      if (data[i] == 0) {
        args.push_back(current);
        current.clear();
      } else {
        current += char(data[i]);
      }
    }
    if (!current.empty()) args.push_back(current);
    for (const auto& a : args) argv.push_back(a.c_str());
  }
  int argc() const { return int(argv.size()); }
};
