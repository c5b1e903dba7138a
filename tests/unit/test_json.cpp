#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

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

TEST(Json, ParseReadsBackWhatDumpWrote) {
  const std::string text = R"({"b":2,"a":"x\"y\n\u0041","c":[1,-2.5e-3,[]],"d":null,"e":true,"f":{}})";
  const Json j = Json::parse(text);
  EXPECT_EQ(j.dump(0), R"({"b":2,"a":"x\"y\nA","c":[1,-0.0025,[]],"d":null,"e":true,"f":{}})");
  EXPECT_EQ(j.find("b")->kind(), Json::Kind::Integer);
  EXPECT_EQ(j.find("b")->integer(), 2);
  EXPECT_DOUBLE_EQ(j.find("c")->items()[1].number(), -0.0025);
  EXPECT_EQ(j.find("a")->string(), "x\"y\nA");
  EXPECT_EQ(j.find("missing"), nullptr);
  EXPECT_EQ(Json::parse(j.dump(2)), j);  // indented, the same value
}

TEST(Json, ParseNamesWhereTextIsNotJson) {
  const std::pair<const char*, const char*> bad[] = {
      {"", "byte 1: unexpected end"},       {"{\"a\" 1}", "byte 6: expected ':'"},
      {"[1,]", "byte 4: expected a value"}, {"[1] x", "byte 5: text after the value"},
      {"\"ab", "byte 4: unterminated string"}, {"{1:2}", "byte 2: expected a key"}};
  for (const auto& [text, what] : bad) {
    try {
      Json::parse(text);
      ADD_FAILURE() << text;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), what) << text;
    }
  }
  EXPECT_THROW(Json::parse(std::string(100, '[')), std::runtime_error);  // too deep, not a crash
}
