#pragma once
// Every file rocelab writes for its user (run directories, reports, tables, exports) goes
// through here, so a planted symlink is never followed and an existing output is never
// replaced silently.
//
// Contract: the data go to a new temporary file in the output's own directory (created
// with O_EXCL, so nothing already there is opened); commit() renames it over the output
// name. A symlink at the output name is replaced by the file, never written through, and
// a reader sees the old file or the whole new one, never a half-written one. With
// existing_output::refuse an output that exists already (a file, a symlink, anything) is
// an error naming it, checked when the file is created and again, atomically, at the
// rename (renameat2 RENAME_NOREPLACE); with ::replace (the commands' --force) it is
// replaced. An output_file destroyed before commit() removes its temporary file.
// Threading: one output_file per thread. Files are created mode 0666 less the umask.

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rocelab/common/result.hpp"

namespace rocelab {

enum class existing_output : std::uint8_t { refuse, replace };

class output_file {
 public:
  // Errors: invalid_argument naming `path` when it exists and `existing` is refuse (the
  // message says --force replaces it); io_error with errno when the directory refuses
  // the temporary file.
  [[nodiscard]] static result<output_file> create(const std::string& path, existing_output existing);

  output_file(output_file&& other) noexcept;
  output_file& operator=(output_file&&) = delete;
  ~output_file();

  // The temporary file, open for writing; valid until commit().
  [[nodiscard]] std::FILE* stream() noexcept { return stream_; }
  // Flushes, checks every write, closes and renames over the output name.
  [[nodiscard]] status commit();

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  // The temporary file's name, for a writer that opens it by name (an SQLite file); it
  // exists, empty, until written; commit() renames it.
  [[nodiscard]] const std::string& temporary_path() const noexcept { return temporary_; }

 private:
  output_file(std::string path, std::string temporary, std::FILE* stream, existing_output existing) noexcept
      : path_(std::move(path)), temporary_(std::move(temporary)), stream_(stream), existing_(existing) {}
  std::string path_;
  std::string temporary_;  // empty once committed or moved from
  std::FILE* stream_ = nullptr;
  existing_output existing_ = existing_output::refuse;
};

// create(), write `text`, commit().
[[nodiscard]] status write_output_file(const std::string& path, std::string_view text, existing_output existing);

// Creates `dir` (and its parents) and writes each (name, text) into it with
// write_output_file. With refuse, every name is checked before any is written: a
// directory holding one of the outputs already is refused whole, naming that file.
[[nodiscard]] status write_output_files(const std::string& dir,
                                        const std::vector<std::pair<std::string, std::string>>& files,
                                        existing_output existing);
// The same check alone, for a writer that streams its files (run_directory.hpp).
[[nodiscard]] status check_outputs_absent(const std::string& dir, const std::vector<std::string>& names);

// The error for an output that exists and may not be replaced, naming it (also used by a
// command that checks a whole directory's outputs before writing any).
[[nodiscard]] status output_exists_error(const std::string& path);

}  // namespace rocelab
