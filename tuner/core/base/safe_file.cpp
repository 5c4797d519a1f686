#include <tuner/core/base/safe_file.hpp>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include <tuner/core/base/hash.hpp>

namespace tune {

diagnostic symlink_refused(const std::filesystem::path& path) {
  return diagnostic{path.string(), 0, 0,
                    "is a symbolic link; tune never writes through one (it could point "
                    "anywhere): remove it"};
}

namespace {

diagnostic not_regular(const std::filesystem::path& path) {
  return diagnostic{path.string(), 0, 0, "is not a regular file (a device, a FIFO or a socket)"};
}

}  // namespace

result<int> open_for_writing(const std::filesystem::path& path, int flags, std::string_view what) {
  // O_NONBLOCK: opening a FIFO for writing must not wait for a reader; it is refused below.
  const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) {
    const int err = errno;
    struct stat st {};
    if ((err == ELOOP || err == EEXIST) && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      return fail(symlink_refused(path));
    if (err == ENXIO) return fail(not_regular(path));  // a FIFO without a reader
    if (err == EISDIR) return fail(path.string(), 0, 0, "is a directory, expected a file");
    throw error(fmt::format("cannot open {} '{}': {}", what, path.string(), std::strerror(err)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(not_regular(path));
  }
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0) ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

std::optional<diagnostic> not_regular_problem(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return std::nullopt;
  return not_regular(path);
}

std::string bounded_file_name(std::string_view stem, std::string_view suffix) {
  if (stem.size() + suffix.size() <= max_file_name_bytes) {
    std::string out(stem);
    out += suffix;
    return out;
  }
  const std::string hash = sha256_hex(stem).substr(0, 16);
  const std::size_t room = max_file_name_bytes - suffix.size() - 1 - hash.size();
  std::size_t keep = std::min(room, stem.size());
  // Not inside a %XX escape ...
  for (std::size_t back = 1; back <= 2 && back <= keep; ++back)
    if (stem[keep - back] == '%') keep -= back;
  // ... nor inside a UTF-8 sequence (its continuation bytes are 10xxxxxx).
  while (keep > 0 && keep < stem.size() && (static_cast<unsigned char>(stem[keep]) & 0xC0) == 0x80)
    --keep;
  std::string out(stem.substr(0, keep));
  out += '~';
  out += hash;
  out += suffix;
  return out;
}

}  // namespace tune
