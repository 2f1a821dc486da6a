#pragma once
// A run's records (common/records.hpp) held by Python, and their columns as numpy arrays
// filled here in one pass each: no Python object per record, so a run of millions of
// flows becomes a DataFrame in the time of a few memcpy-sized loops (bench/python/).

#include <memory>

#include "rocelab/common/records.hpp"

namespace rocelab::bindings {

using records_ptr = std::shared_ptr<run_records>;

}  // namespace rocelab::bindings
