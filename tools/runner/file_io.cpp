// The files saddle reads and writes (see tools/runner/file_io.hpp).
#include "tools/runner/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "tools/cli/input_error.hpp"

namespace saddle {
namespace file_io {
namespace {

std::string errno_text(int e) { return std::strerror(e); }

std::string kind_of_mode(mode_t m) {
  if (S_ISREG(m)) return "a regular file";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// The directory part of a path ("." for a bare name, "/" for "/x").
std::string dir_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}
std::string base_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string real_path(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

// Where `p` is or would be: its resolved path when it exists, else the resolved directory and
// the name.
std::string location(const std::string& p) {
  const std::string r = real_path(p);
  if (!r.empty()) return r;
  const std::string d = real_path(dir_of(p));
  return (d.empty() ? dir_of(p) : d) + "/" + base_of(p);
}

// The process's umask without changing it (umask() would, for every thread): /proc/self/status.
mode_t current_umask() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  return 022;
}

void write_all(int fd, const std::string& text, const std::string& what, const std::string& path) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw InputError(what + ": error while writing '" + path + "': " + errno_text(n < 0 ? errno : ENOSPC));
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

// Opens an input without blocking (a FIFO with no writer would block a plain open) and refuses
// anything but a regular file of at most max_bytes.
int open_input(const std::string& path, const std::string& what, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw InputError(what + ": cannot read '" + path + "': " + errno_text(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(what + ": '" + path + "' is " + kind_of_mode(st.st_mode) +
                     ", not a regular file (saddle reads only regular files)");
  }
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    ::close(fd);
    throw InputError(what + ": '" + path + "' has " + std::to_string(st.st_size) + " bytes, more than the " +
                     std::to_string(max_bytes) + " saddle reads from one file");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace

std::string kind_text(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return kind_of_mode(st.st_mode);
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return "a dangling symbolic link";
  return "missing";
}

bool is_regular(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void check_output(const std::string& path, const std::string& what, bool allow_stdout) {
  if (path.empty() || (allow_stdout && path == "-")) {
    if (path.empty() && !allow_stdout) throw InputError(what + ": empty path");
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw InputError(what + ": '" + path + "' is a directory");
    if (!S_ISREG(st.st_mode))
      throw InputError(what + ": '" + path + "' is " + kind_of_mode(st.st_mode) +
                       ", not a regular file (saddle writes only regular files" +
                       (allow_stdout ? std::string("; '-' or no ") + what + " for stdout)" : std::string(")")));
    if (::access(path.c_str(), W_OK) != 0) throw InputError(what + ": '" + path + "' is not writable");
    return;
  }
  const int err = errno;
  if (err != ENOENT) throw InputError(what + ": cannot write '" + path + "': " + errno_text(err));
  if (::lstat(path.c_str(), &st) == 0) {
    // Created between the two calls (another MPI rank writing the same --out, a shard): checked
    // again as it is now. Only a link whose target is still missing is refused.
    if (!S_ISLNK(st.st_mode) || ::stat(path.c_str(), &st) == 0)
      return check_output(path, what, allow_stdout);
    throw InputError(what + ": '" + path + "' is a dangling symbolic link (saddle writes only regular files)");
  }
  const std::string dir = dir_of(path);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InputError(what + ": cannot write '" + path + "': no directory '" + dir + "'");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(what + ": cannot write '" + path + "': the directory '" + dir + "' is not writable");
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  const bool ea = ::stat(a.c_str(), &sa) == 0, eb = ::stat(b.c_str(), &sb) == 0;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return false;
  return a == b || location(a) == location(b);
}

void check_distinct(const std::string& out, const std::string& what_out, const std::string& other,
                    const std::string& what_other) {
  if (out.empty() || out == "-" || other.empty() || other == "-") return;
  if (same_file(out, other))
    throw InputError(what_out + ": '" + out + "' is the same file as " + what_other + " '" + other +
                     "' (it would be overwritten)");
}

OutputFile::OutputFile(const std::string& path, const std::string& what) : path_(path), what_(what) {
  check_output(path, what, false);
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  target_ = path;
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    target_ = real_path(path);  // write the file the link names; the link stays
    if (target_.empty()) throw InputError(what + ": cannot resolve the symbolic link '" + path + "'");
  }
  std::string pattern = dir_of(target_) + "/." + base_of(target_) + ".saddle-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  fd_ = ::mkostemp(buf.data(), O_CLOEXEC);
  if (fd_ >= 0) {
    tmp_ = buf.data();
    const mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~current_umask());
    ::fchmod(fd_, mode);
    return;
  }
  const int err = errno;
  if (exists) {  // a directory we may not create in, holding a file we may write: in place
    fd_ = ::open(target_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NONBLOCK);
    struct stat now {};
    if (fd_ >= 0 && ::fstat(fd_, &now) == 0 && S_ISREG(now.st_mode)) {
      ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
      in_place_ = true;
      return;
    }
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  throw InputError(what + ": cannot write '" + path + "': " + errno_text(err));
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());  // ours (mkstemp): a failed or abandoned output
}

void OutputFile::write(const std::string& text) { write_all(fd_, text, what_, path_); }

long long OutputFile::size() const {
  struct stat st {};
  return fd_ >= 0 && ::fstat(fd_, &st) == 0 ? static_cast<long long>(st.st_size) : 0;
}

void OutputFile::commit() {
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    throw InputError(what_ + ": error while writing '" + path_ + "': " + errno_text(errno) + " (disk full?)");
  if (in_place_) return;
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))  // replaced meanwhile: not ours
    throw InputError(what_ + ": '" + path_ + "' is now " + kind_of_mode(st.st_mode) + "; left alone");
  if (::rename(tmp_.c_str(), target_.c_str()) != 0)
    throw InputError(what_ + ": cannot write '" + path_ + "': " + errno_text(errno));
  tmp_.clear();
}

void write_whole(const std::string& path, const std::string& text, const std::string& what) {
  if (path.empty() || path == "-") {
    std::cout << text;
    std::cout.flush();
    if (!std::cout) throw InputError("cannot write the output to stdout (disk full or closed?)");
    return;
  }
  OutputFile f(path, what);
  f.write(text);
  f.commit();
}

InputLines::InputLines(const std::string& path, const std::string& what, std::size_t max_bytes)
    : path_(path), what_(what), max_bytes_(max_bytes), buf_(1 << 16) {
  fd_ = open_input(path, what, max_bytes);
}

InputLines::~InputLines() {
  if (fd_ >= 0) ::close(fd_);
}

bool InputLines::fill() {
  if (eof_) return false;
  ssize_t n;
  do n = ::read(fd_, buf_.data(), buf_.size());
  while (n < 0 && errno == EINTR);
  if (n < 0) throw InputError(what_ + ": error reading '" + path_ + "': " + errno_text(errno));
  if (n == 0) {
    eof_ = true;
    return false;
  }
  total_ += static_cast<std::size_t>(n);
  if (total_ > max_bytes_)
    throw InputError(what_ + ": '" + path_ + "' has more than the " + std::to_string(max_bytes_) +
                     " bytes saddle reads from one file");
  pos_ = 0;
  end_ = static_cast<std::size_t>(n);
  return true;
}

bool InputLines::next(std::string& line) {
  line.clear();
  for (;;) {
    if (pos_ < end_) {
      const char* b = buf_.data() + pos_;
      const void* nl = std::memchr(b, '\n', end_ - pos_);
      const std::size_t len = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - b) : end_ - pos_;
      if (line.size() + len > kMaxLineBytes)
        throw InputError(what_ + ": '" + path_ + "' has a line longer than " + std::to_string(kMaxLineBytes) +
                         " bytes (not a saddle CSV)");
      line.append(b, len);
      pos_ += len;
      if (nl) {
        ++pos_;
        return true;
      }
    }
    if (!fill()) {
      torn_ = !line.empty();
      return torn_;
    }
  }
}

std::string read_text(const std::string& path, const std::string& what, std::size_t max_bytes) {
  const int fd = open_input(path, what, max_bytes);
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw InputError(what + ": error reading '" + path + "': " + errno_text(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      throw InputError(what + ": '" + path + "' has more than the " + std::to_string(max_bytes) +
                       " bytes saddle reads from one file");
    }
  }
  ::close(fd);
  return text;
}

}  // namespace file_io
}  // namespace saddle
