// Unit tests of tools/runner/file_io.hpp: what an output may be (absent or a regular file; never a FIFO,
// device or directory), same-file detection through links, whole outputs that leave the target
// untouched on failure, and bounded regular-file inputs. Every expectation is about files this
// test makes itself in a scratch directory.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tools/cli/cli_common.hpp"
#include "tools/runner/file_io.hpp"

using namespace saddle;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {
// A scratch directory removed at the end of the test.
struct Scratch {
  std::string dir;
  Scratch() {
    char buf[] = "/tmp/saddle_file_io_XXXXXX";
    dir = ::mkdtemp(buf);
  }
  ~Scratch() {
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, ec);
    fs::remove_all(dir, ec);
  }
  std::string operator/(const std::string& name) const { return dir + "/" + name; }
};
void put(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
std::string get(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
std::size_t entries(const std::string& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    (void)e;
    ++n;
  }
  return n;
}
}  // namespace

TEST_CASE("check_output: absent or regular files only", "[tools][file_io]") {
  Scratch s;
  CHECK_NOTHROW(file_io::check_output("-", "--out"));
  CHECK_NOTHROW(file_io::check_output(s / "new.csv", "--out"));
  put(s / "old.csv", "x\n");
  CHECK_NOTHROW(file_io::check_output(s / "old.csv", "--out"));
  CHECK_THROWS_WITH(file_io::check_output(s.dir, "--out"), Contains("is a directory"));
  REQUIRE(::mkfifo((s / "fifo").c_str(), 0600) == 0);
  CHECK_THROWS_WITH(file_io::check_output(s / "fifo", "--out"), Contains("a FIFO, not a regular file"));
  CHECK_THROWS_WITH(file_io::check_output("/dev/null", "--plot", false), Contains("a character device"));
  CHECK_THROWS_WITH(file_io::check_output(s / "no/such/x.csv", "--out"), Contains("no directory"));
  REQUIRE(::symlink((s / "missing").c_str(), (s / "dangling").c_str()) == 0);
  CHECK_THROWS_WITH(file_io::check_output(s / "dangling", "--out"), Contains("dangling symbolic link"));
  CHECK(file_io::kind_text(s / "fifo") == "a FIFO");
  CHECK(file_io::kind_text(s / "missing") == "missing");
}

TEST_CASE("same_file: by inode, through links, and by place when absent", "[tools][file_io]") {
  Scratch s;
  put(s / "a.csv", "a\n");
  put(s / "b.csv", "b\n");
  REQUIRE(::symlink((s / "a.csv").c_str(), (s / "link.csv").c_str()) == 0);
  REQUIRE(::link((s / "a.csv").c_str(), (s / "hard.csv").c_str()) == 0);
  CHECK(file_io::same_file(s / "a.csv", s / "link.csv"));
  CHECK(file_io::same_file(s / "a.csv", s / "hard.csv"));
  CHECK(file_io::same_file(s / "a.csv", s.dir + "/./a.csv"));
  CHECK_FALSE(file_io::same_file(s / "a.csv", s / "b.csv"));
  CHECK(file_io::same_file(s / "new.png", s.dir + "/../" + fs::path(s.dir).filename().string() + "/new.png"));
  CHECK_FALSE(file_io::same_file(s / "new.png", s / "new2.png"));
  CHECK_THROWS_WITH(file_io::check_distinct(s / "link.csv", "--out", s / "a.csv", "the input"),
                    Contains("is the same file as the input"));
  CHECK_NOTHROW(file_io::check_distinct("-", "--out", "-", "--plot"));  // stdout is no file
}

TEST_CASE("OutputFile: whole or nothing, never replacing anything but a regular file", "[tools][file_io]") {
  Scratch s;
  put(s / "t.csv", "old\n");
  ::chmod((s / "t.csv").c_str(), 0640);
  {
    file_io::OutputFile f(s / "t.csv", "--out");
    f.write("new ");
    CHECK(get(s / "t.csv") == "old\n");  // untouched until commit
  }  // abandoned: the temporary file goes, the target stays
  CHECK(get(s / "t.csv") == "old\n");
  CHECK(entries(s.dir) == 1);
  file_io::write_whole(s / "t.csv", "new\n", "--out");
  CHECK(get(s / "t.csv") == "new\n");
  struct stat st {};
  REQUIRE(::stat((s / "t.csv").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);  // the mode of the file it replaced
  // Through a symbolic link: the file it names is written, the link stays a link.
  REQUIRE(::symlink((s / "t.csv").c_str(), (s / "l.csv").c_str()) == 0);
  file_io::write_whole(s / "l.csv", "via link\n", "--out");
  CHECK(get(s / "t.csv") == "via link\n");
  struct stat lst {};
  REQUIRE(::lstat((s / "l.csv").c_str(), &lst) == 0);
  CHECK(S_ISLNK(lst.st_mode));
  // A FIFO is refused before anything is opened (no hang), and stays a FIFO.
  REQUIRE(::mkfifo((s / "fifo").c_str(), 0600) == 0);
  CHECK_THROWS_AS(file_io::write_whole(s / "fifo", "x", "--out"), InputError);
  REQUIRE(::stat((s / "fifo").c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  // write_output (tools/cli/cli_common.hpp) goes the same way.
  CHECK_THROWS_WITH(write_output("/dev/null", "x"), Contains("not a regular file"));
}

TEST_CASE("OutputFile: a directory that is not writable, a writable file in it", "[tools][file_io]") {
  if (::geteuid() == 0) return;  // root writes anywhere: nothing to check
  Scratch s;
  put(s / "t.csv", "old\n");
  ::chmod(s.dir.c_str(), 0555);
  file_io::write_whole(s / "t.csv", "in place\n", "--out");
  CHECK(get(s / "t.csv") == "in place\n");
  CHECK_THROWS_AS(file_io::write_whole(s / "new.csv", "x", "--out"), InputError);
}

TEST_CASE("InputLines and read_text: regular files, bounded", "[tools][file_io]") {
  Scratch s;
  put(s / "in.csv", "a\nbb\r\n\nlast");
  file_io::InputLines in(s / "in.csv", "merge");
  std::string line;
  REQUIRE(in.next(line));
  CHECK(line == "a");
  REQUIRE(in.next(line));
  CHECK(line == "bb\r");
  REQUIRE(in.next(line));
  CHECK(line.empty());
  CHECK_FALSE(in.torn());
  REQUIRE(in.next(line));
  CHECK(line == "last");
  CHECK(in.torn());
  CHECK_FALSE(in.next(line));
  CHECK(file_io::read_text(s / "in.csv", "x") == "a\nbb\r\n\nlast");
  // A FIFO without a writer: refused at once (a blocking open would hang).
  REQUIRE(::mkfifo((s / "fifo").c_str(), 0600) == 0);
  CHECK_THROWS_WITH(file_io::InputLines(s / "fifo", "merge"), Contains("a FIFO, not a regular file"));
  CHECK_THROWS_WITH(file_io::read_text("/dev/zero", "--resume"), Contains("a character device"));
  CHECK_THROWS_WITH(file_io::read_text(s.dir, "plot"), Contains("a directory"));
  CHECK_THROWS_WITH(file_io::read_text(s / "absent", "plot"), Contains("cannot read"));
  // Bounds: the whole file, and one line.
  put(s / "big", std::string(1000, 'x'));
  CHECK_THROWS_WITH(file_io::read_text(s / "big", "plot", 999), Contains("more than the 999"));
  CHECK(file_io::read_text(s / "big", "plot", 1000).size() == 1000);
  {
    std::ofstream f(s / "long");
    f << std::string(file_io::kMaxLineBytes + 10, 'y') << "\n";
  }
  file_io::InputLines longf(s / "long", "plot");
  CHECK_THROWS_WITH(longf.next(line), Contains("a line longer than"));
}
