// tools/csv: the RFC 4180 writer and reader.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tools/runner/csv.hpp"

using namespace saddle;

TEST_CASE("csv_field quotes what needs quoting and nothing else", "[tools][csv]") {
  CHECK(csv_field("0.5") == "0.5");
  CHECK(csv_field("") == "");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("#1") == "\"#1\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_record({"a", "b,c", ""}) == "a,\"b,c\",");
  CHECK(csv_comment("# command: x\ny") == "# command: x?y");
}

TEST_CASE("parse_csv_record reads back what csv_record writes", "[tools][csv]") {
  const std::vector<std::vector<std::string>> cases{
      {"a"}, {""}, {"", ""}, {"1", "x, y", "\"q\"", "#"}, {"note, with \"quotes\", and commas", "2"}};
  for (const auto& fields : cases) {
    std::vector<std::string> back;
    REQUIRE(parse_csv_record(csv_record(fields), back));
    CHECK(back == fields);
  }
  std::vector<std::string> f;
  CHECK_FALSE(parse_csv_record("\"open", f));
  CHECK_FALSE(parse_csv_record("\"a\"b", f));
  CHECK_FALSE(parse_csv_record("a\"b", f));
  CHECK(parse_csv_record("a,b\r", f));
  CHECK(f == std::vector<std::string>{"a", "b"});
}

TEST_CASE("parse_csv: comments, CRLF, empty lines, a quoted line break", "[tools][csv]") {
  const std::string text = "# saddle 1\r\n# x: 1,2\na,b\n\n1,\"two\nlines\"\r\n\"#3\",4";
  std::vector<std::string> comments;
  std::vector<std::vector<std::string>> records;
  std::vector<std::size_t> lines;
  const std::string why = parse_csv(
      text, [&](const std::string& c) { comments.push_back(c); },
      [&](std::vector<std::string>&& r, std::size_t line) {
        records.push_back(r);
        lines.push_back(line);
      });
  CHECK(why.empty());
  CHECK(comments == std::vector<std::string>{"# saddle 1", "# x: 1,2"});
  REQUIRE(records.size() == 3);
  CHECK(records[1] == std::vector<std::string>{"1", "two\nlines"});
  CHECK(records[2] == std::vector<std::string>{"#3", "4"});
  CHECK(lines == std::vector<std::size_t>{3, 5, 7});
  CHECK(parse_csv("a\n\"b", [](const std::string&) {}, [](std::vector<std::string>&&, std::size_t) {})
            .find("line 2") != std::string::npos);
}
