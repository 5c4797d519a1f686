// The files tune writes and the user files it reads, opened one careful way.
//
// Writing: a lock, a trial log or a compile log may sit in a checkout, and git carries symbolic
// links: a `<record>.lock` that links to `~/.bashrc` would have its target truncated. Every file
// tune creates or appends to is opened here with O_NOFOLLOW (and O_EXCL where it must be new),
// and a link is refused with a message that says to remove it.
//
// Reading: a user file (a space, a record, a manifest, a log given to `show`) must be a regular
// file; `/dev/zero` or a FIFO would be read until memory runs out.
//
// File names: a name from the user (a bucket label) becomes a file name in one bounded form,
// bounded_file_name, so no label makes a name the file system cannot hold.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <tuner/core/base/result.hpp>

namespace tune {

/// Opens `path` for writing with `flags` (O_CREAT, O_APPEND, O_EXCL, O_RDWR ...) plus
/// O_NOFOLLOW and O_CLOEXEC, mode 0644 when it creates. `what` names the file in messages
/// ("lock file", "trial log"). A symbolic link at `path` is bad input: `'<path>' is a symbolic
/// link; tune never writes through one (it could point anywhere): remove it`; so is a file
/// that is not regular (`/dev/full`) and a directory. Any other failure throws tune::error
/// `cannot open <what> '<path>': <reason>`.
result<int> open_for_writing(const std::filesystem::path& path, int flags, std::string_view what);

/// Why `path` cannot be read as a user file, or nullopt: it exists and is not a regular file
/// (a device, a FIFO, a socket): `is not a regular file (a device, a FIFO or a socket)`.
/// Directories and missing files are left to the caller, whose messages name them.
std::optional<diagnostic> not_regular_problem(const std::filesystem::path& path);

/// The diagnostic of every file tune refuses to open through a symbolic link (a log, a prior, an
/// output): `<path>: is a symbolic link; tune never writes through one (it could point
/// anywhere): remove it`.
diagnostic symlink_refused(const std::filesystem::path& path);

/// The longest file name bounded_file_name makes, in bytes: room is left under the usual
/// 255-byte limit for what is added to it (`.lock`, an atomic write's `.<name>.tmp.<pid>.<n>`).
inline constexpr std::size_t max_file_name_bytes = 200;

/// `stem + suffix` when that fits in max_file_name_bytes; otherwise the readable start of `stem`
/// (not cut inside a `%XX` escape or a UTF-8 sequence), `~`, 16 hex digits of the SHA-256 of
/// the whole stem, and `suffix`. Short names are unchanged; long ones stay unique and stable.
std::string bounded_file_name(std::string_view stem, std::string_view suffix);

}  // namespace tune
