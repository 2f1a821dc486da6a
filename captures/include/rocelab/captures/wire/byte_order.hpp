#pragma once
// The wire formats' big-endian integers are the project's (common/byte_order.hpp), named
// here so that wire structs and frame walkers say wire::be16, wire::load_be16.

#include "rocelab/common/byte_order.hpp"

namespace rocelab::captures::wire {

using rocelab::wire::be16;
using rocelab::wire::be24;
using rocelab::wire::be32;
using rocelab::wire::be64;
using rocelab::wire::load;
using rocelab::wire::load_be16;
using rocelab::wire::load_be24;
using rocelab::wire::load_be32;
using rocelab::wire::load_be64;
using rocelab::wire::store;
using rocelab::wire::store_be16;
using rocelab::wire::store_be24;
using rocelab::wire::store_be32;
using rocelab::wire::store_be64;

}  // namespace rocelab::captures::wire
