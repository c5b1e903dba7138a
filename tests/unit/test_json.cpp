#include <gtest/gtest.h>

#include <cmath>

#include "core/json.hpp"

using checkmpi::Json;

TEST(Json, OrderedObjectsArraysAndEscapes) {
  Json j = Json::object();
  j["b"] = 1;
  j["a"] = "x\"y\n";
  j["c"] = Json::array_of(std::vector<int>{1, 2});
  j["d"] = Json();
  j["e"] = true;
  j["b"] = 2;  // replaced in place, order kept
  EXPECT_EQ(j.dump(0), R"({"b":2,"a":"x\"y\n","c":[1,2],"d":null,"e":true})");
}

TEST(Json, NumbersRoundTripAndNonFiniteIsNull) {
  Json j = Json::array();
  j.push(0.1);
  j.push(1.5e-7);
  j.push(std::nan(""));
  j.push(12345678901LL);
  EXPECT_EQ(j.dump(0), "[0.1,1.5e-07,null,12345678901]");
}

TEST(Json, IndentedLayout) {
  Json j = Json::object();
  j["k"] = Json::array_of(std::vector<std::string>{"v"});
  EXPECT_EQ(j.dump(2), "{\n  \"k\": [\n    \"v\"\n  ]\n}");
}
