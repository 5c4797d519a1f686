#include <tuner/cli/scratch_file.hpp>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <unistd.h>

#include <tuner/core/base/result.hpp>

namespace tune::cli {

ScratchFile::ScratchFile() {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string name = (dir / "tune-scratch-XXXXXX").string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    throw error("cannot create a scratch file in '" + dir.string() +
                "': " + std::generic_category().message(errno));
  file_.open(name, std::ios::in | std::ios::out | std::ios::binary | std::ios::trunc);
  ::close(fd);
  ::unlink(name.c_str());  // the open stream keeps it until it closes
  if (!file_) throw error("cannot open the scratch file '" + name + "'");
}

std::fstream& ScratchFile::rewind() {
  file_.flush();
  if (file_.bad())
    throw error("cannot write a scratch file in the temporary directory (is it full?)");
  file_.clear();  // the end of a reading before
  file_.seekg(0);
  return file_;
}

}  // namespace tune::cli
