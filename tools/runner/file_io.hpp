// The files `saddle` reads and writes, named by the user: every command goes through here, so that
// (a) a path given as an output is written only when it is absent or a regular file (a directory,
// FIFO, device or socket is refused before anything is computed: `--plot /dev/null` never
// unlinks /dev/null, `--out FIFO` never hangs), (b) an output that is the same file (device and
// inode, or the same place when it does not exist yet) as an input or as the other output is
// refused, (c) a whole output (a table, a merged file, a PNG) is written to a private temporary
// file in the target's directory and renamed onto it when complete: a failure leaves the target
// as it was and removes only the temporary file, and (d) an input is read only when it is a
// regular file (opened without blocking, so a FIFO never hangs), at most kMaxInputBytes in all
// and kMaxLineBytes per line. Errors are InputError naming the option and the path.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace saddle {
namespace file_io {

// Bounds of an input file (a saddle CSV of the largest grid, 1e6 rows, is far below both).
constexpr std::size_t kMaxInputBytes = std::size_t(2) << 30;  // 2 GiB
constexpr std::size_t kMaxLineBytes = std::size_t(8) << 20;   // 8 MiB (a '# command:' line)

// What `path` names (symbolic links followed): "missing", "a regular file", "a directory",
// "a FIFO", "a character device", "a block device", "a socket", "a dangling symbolic link".
std::string kind_text(const std::string& path);

// Checks a path given as an output (`what`, e.g. "--out"), creating nothing: "" and "-" are
// stdout when `allow_stdout`; otherwise the path must be absent in an existing writable directory,
// or a writable regular file. Throws InputError naming what it is otherwise.
void check_output(const std::string& path, const std::string& what, bool allow_stdout = true);

// True when `a` and `b` name the same file: the same device and inode when both exist, otherwise
// the same place (directory resolved, a symbolic link followed).
bool same_file(const std::string& a, const std::string& b);

// Throws InputError when `out` (the output `what_out`) is the same file as `other` (`what_other`,
// an input or another output). Empty paths and "-" (stdout) are never the same as anything.
void check_distinct(const std::string& out, const std::string& what_out, const std::string& other,
                    const std::string& what_other);

// An output written whole: the bytes go to a private temporary file beside the target (the
// target of a symbolic link), which commit() renames onto it; destroyed without commit(), the
// temporary file is removed and the target left as it was. The target must be absent or a
// regular file (checked when opened and again at commit(): nothing else is ever replaced). When no
// temporary file can be made there (a directory that is not writable), an existing writable
// regular file is written in place.
class OutputFile {
 public:
  OutputFile(const std::string& path, const std::string& what);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();
  int fd() const { return fd_; }
  // Appends `text`; throws InputError when it cannot be written (a full disk).
  void write(const std::string& text);
  // Size written so far (for a child that writes into fd()).
  long long size() const;
  // Closes and renames the temporary file onto the target; throws InputError on failure.
  void commit();

 private:
  std::string path_, what_, target_, tmp_;
  int fd_ = -1;
  bool in_place_ = false;
};

// Writes `text` to `path` (stdout when empty or "-") as a whole (OutputFile); InputError names
// `what` when it cannot be written completely.
void write_whole(const std::string& path, const std::string& text, const std::string& what);

// An input read line by line: only a regular file (a FIFO is opened without blocking and
// refused), at most `max_bytes` in all and kMaxLineBytes per line; throws InputError naming
// `what` (e.g. "merge") and the path otherwise.
class InputLines {
 public:
  InputLines(const std::string& path, const std::string& what, std::size_t max_bytes = kMaxInputBytes);
  InputLines(const InputLines&) = delete;
  InputLines& operator=(const InputLines&) = delete;
  ~InputLines();
  // The next line, without its '\n' (a last line without one is returned too, and torn() is
  // then true); false at the end.
  bool next(std::string& line);
  bool torn() const { return torn_; }

 private:
  bool fill();
  std::string path_, what_;
  int fd_ = -1;
  std::size_t max_bytes_ = 0, total_ = 0;
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0;
  bool eof_ = false, torn_ = false;
};

// The whole text of an input (the rules of InputLines).
std::string read_text(const std::string& path, const std::string& what, std::size_t max_bytes = kMaxInputBytes);

// True when `path` exists and is a regular file (symbolic links followed).
bool is_regular(const std::string& path);

}  // namespace file_io
}  // namespace saddle
