#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "grid/namelist.hpp"

using checkmpi::parse_namelist;
using checkmpi::UsageError;

namespace {
const std::set<std::string> kKeys{"lx", "ly", "lz", "proc_x", "itfin", "icheck"};

std::map<std::string, long long> parse(const std::string& text) {
  return parse_namelist(text, "parameters", kKeys, "file.input");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(Namelist, CheckMpiExampleSpreadOverLines) {
  auto v = parse("&parameters\nlx = 600\nly = 600\nlz = 600\nproc_x = 2\nitfin=15000\nicheck=1510  /\n");
  EXPECT_EQ(v.at("lx"), 600);
  EXPECT_EQ(v.at("ly"), 600);
  EXPECT_EQ(v.at("proc_x"), 2);
  EXPECT_EQ(v.at("itfin"), 15000);
  EXPECT_EQ(v.at("icheck"), 1510);
  EXPECT_EQ(v.size(), 6u);
}

TEST(Namelist, OneLineCommasCaseAndComments) {
  auto v = parse("junk before\n &PARAMETERS LX=8, Ly = 4,lz=2 ! a comment / not the end\n ITFIN=+3/ trailing");
  EXPECT_EQ(v.at("lx"), 8);
  EXPECT_EQ(v.at("ly"), 4);
  EXPECT_EQ(v.at("lz"), 2);
  EXPECT_EQ(v.at("itfin"), 3);
}

TEST(Namelist, AmpersandEndClosesAndLastValueWins) {
  auto v = parse("&parameters lx=1 lx=5 &end");
  EXPECT_EQ(v.at("lx"), 5);
}

TEST(Namelist, EmptyGroupIsValid) { EXPECT_TRUE(parse("&parameters /").empty()); }

TEST(Namelist, MissingGroup) { EXPECT_EQ(error_of("lx = 5 /"), "file.input: no &parameters group found"); }

TEST(Namelist, OtherGroupIsNotOurs) {
  EXPECT_EQ(error_of("&params lx=5 /"), "file.input: no &parameters group found");
}

TEST(Namelist, NotClosed) {
  EXPECT_EQ(error_of("&parameters\nlx = 5\n"), "file.input, line 3: &parameters group is not closed with '/'");
}

TEST(Namelist, UnknownKeyNamesKeyAndLine) {
  EXPECT_EQ(error_of("&parameters\n lx=4\n  nx = 5 /"), "file.input, line 3: unknown key 'nx' in &parameters");
}

TEST(Namelist, NonIntegerValues) {
  EXPECT_EQ(error_of("&parameters lx = 6x0 /"),
            "file.input, line 1: value of 'lx' is not an integer: '6x0'");
  EXPECT_EQ(error_of("&parameters\nlx = 1.5 /"), "file.input, line 2: value of 'lx' is not an integer: '1.5'");
  EXPECT_EQ(error_of("&parameters lx = 99999999999999999999 /"),
            "file.input, line 1: value of 'lx' is out of range: '99999999999999999999'");
}

TEST(Namelist, MissingEqualsOrValue) {
  EXPECT_EQ(error_of("&parameters lx 5 /"), "file.input, line 1: expected '=' after 'lx'");
  EXPECT_EQ(error_of("&parameters lx = /"), "file.input, line 1: missing value for 'lx'");
}

TEST(Namelist, ControlCharactersAreRefusedAndAByteOrderMarkSkipped) {
  // A NUL once ended a value unseen: lx=8<NUL>junk read as lx=8.
  EXPECT_EQ(error_of(std::string("&parameters lx=8\0junk /", 23)),
            "file.input, line 1: control character U+0000; a namelist file holds text only");
  EXPECT_EQ(error_of("&parameters\nlx=8\n ly=4\x1b /"),
            "file.input, line 3: control character U+001B; a namelist file holds text only");
  EXPECT_EQ(parse("&parameters\tlx=8\r\nly=4 /\r\n").at("ly"), 4);  // tab and CRLF are text
  EXPECT_EQ(parse("\xEF\xBB\xBF&parameters lx=8 /").at("lx"), 8);
}
