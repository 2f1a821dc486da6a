#pragma once
// Reading a whole input file (a spec, a CDF, an HPCC scenario file, an inventory, a token)
// with a size bound. Only regular files are read: a device (/dev/zero, /dev/urandom), a
// FIFO, a socket or a directory is refused before any byte is read, and a regular file
// larger than `max_bytes` is refused by its size and, should it grow while being read, by
// what was read. Errors name `what` and the path and never quote the file's contents.

#include <cstddef>
#include <string>
#include <string_view>

#include "rocelab/common/result.hpp"

namespace rocelab {

// Bounds per kind of input, large enough for any real one by orders of magnitude.
inline constexpr std::size_t max_spec_file_bytes = 4u << 20;        // YAML specs, tuning specs
inline constexpr std::size_t max_cdf_file_bytes = 4u << 20;         // flow-size CDFs
inline constexpr std::size_t max_scenario_file_bytes = 256u << 20;  // HPCC config, topology, flow lists
inline constexpr std::size_t max_inventory_file_bytes = 4u << 20;   // lab inventories
inline constexpr std::size_t max_token_file_bytes = 4u << 10;       // lab tokens
inline constexpr std::size_t max_report_file_bytes = 256u << 20;    // JSON results and profiles read back
inline constexpr std::size_t max_state_file_bytes = 4u << 20;       // soft-NIC settings, lab state

// The file's bytes; invalid_argument for a file that is not regular, resource_exhausted
// for one over the bound, the errno's code otherwise. `what` starts the message
// ("reading CDF file /x: ...").
[[nodiscard]] result<std::string> read_bounded_file(const std::string& path, std::size_t max_bytes,
                                                    std::string_view what);

}  // namespace rocelab
