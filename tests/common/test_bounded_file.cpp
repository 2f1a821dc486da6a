// read_bounded_file: regular files up to the bound; devices, FIFOs and directories
// refused before a byte is read; a file over the bound refused by its size.
#include "rocelab/common/bounded_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "../support/temp_dir.hpp"

namespace rocelab {
namespace {

TEST(bounded_file, reads_a_regular_file_whole) {
  testing::temp_dir dir("rocelab-common");
  std::ofstream(dir.file("a.txt")) << "100 0.5\n200 1\n";
  auto text = read_bounded_file(dir.file("a.txt"), 64, "CDF file");
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(*text, "100 0.5\n200 1\n");
  std::ofstream(dir.file("empty"));
  auto empty = read_bounded_file(dir.file("empty"), 64, "spec");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(bounded_file, a_file_over_the_bound_is_refused_by_its_size) {
  testing::temp_dir dir("rocelab-common");
  std::ofstream(dir.file("big")) << std::string(65, 'x');
  auto text = read_bounded_file(dir.file("big"), 64, "CDF file");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code(), error_code::resource_exhausted);
  EXPECT_NE(text.error().message().find("CDF file " + dir.file("big")), std::string::npos);
  std::ofstream(dir.file("exact")) << std::string(64, 'x');
  EXPECT_TRUE(read_bounded_file(dir.file("exact"), 64, "CDF file").ok());
}

TEST(bounded_file, devices_fifos_and_directories_are_refused_unread) {
  testing::temp_dir dir("rocelab-common");
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);  // no writer: reading would block
  for (const std::string& path : {std::string("/dev/zero"), std::string("/dev/urandom"), dir.file("fifo"),
                                  dir.path().string()}) {
    auto text = read_bounded_file(path, 1 << 20, "spec");
    ASSERT_FALSE(text.ok()) << path;
    EXPECT_EQ(text.error().code(), error_code::invalid_argument) << text.error().message();
    EXPECT_NE(text.error().message().find("only regular files are read"), std::string::npos)
        << text.error().message();
  }
}

TEST(bounded_file, a_missing_file_names_the_path) {
  auto text = read_bounded_file("/nonexistent/rocelab.yaml", 64, "spec");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message().find("spec /nonexistent/rocelab.yaml"), std::string::npos);
}

}  // namespace
}  // namespace rocelab
