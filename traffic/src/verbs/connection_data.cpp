#include "rocelab/traffic/verbs/connection_data.hpp"

#include <cstring>

#include "rocelab/captures/wire/byte_order.hpp"

namespace rocelab::traffic::verbs {
namespace {

namespace w = captures::wire;

constexpr std::uint8_t wire_version = 1;

// The exchanged record. Big-endian fields through the wire types, so a forgotten swap
// does not compile; no padding (every member is a byte array).
struct connection_wire {
  std::uint8_t version;
  std::uint8_t mtu;
  w::be16 lid;
  w::be32 qpn;
  w::be32 psn;
  w::be32 rkey;
  std::array<std::uint8_t, 16> gid;
  w::be64 addr;
  w::be32 length;
  std::array<std::uint8_t, 4> reserved;
};
static_assert(sizeof(connection_wire) == connection_data_bytes, "connection record is 48 bytes on the wire");

constexpr std::uint32_t max_24bit = 0xFFFFFF;

}  // namespace

std::array<std::uint8_t, connection_data_bytes> to_bytes(const connection_data& c) {
  connection_wire wire{};
  wire.version = wire_version;
  wire.mtu = c.mtu;
  wire.lid.set(c.lid);
  wire.qpn.set(c.qpn);
  wire.psn.set(c.psn);
  wire.rkey.set(c.rkey);
  wire.gid = c.gid;
  wire.addr.set(c.addr);
  wire.length.set(c.length);
  std::array<std::uint8_t, connection_data_bytes> out{};
  std::memcpy(out.data(), &wire, sizeof wire);
  return out;
}

result<connection_data> connection_data_from_bytes(const std::uint8_t* data, std::size_t size) {
  if (size != connection_data_bytes)
    return status(error_code::malformed_input, "connection data is " + std::to_string(size) + " bytes, expected " +
                                                   std::to_string(connection_data_bytes));
  connection_wire wire{};
  std::memcpy(&wire, data, sizeof wire);
  if (wire.version != wire_version)
    return status(error_code::malformed_input, "connection data version " + std::to_string(wire.version) + " (this code reads " +
                                                   std::to_string(wire_version) + ")");
  connection_data c;
  c.mtu = wire.mtu;
  c.lid = wire.lid.value();
  c.qpn = wire.qpn.value();
  c.psn = wire.psn.value();
  c.rkey = wire.rkey.value();
  c.gid = wire.gid;
  c.addr = wire.addr.value();
  c.length = wire.length.value();
  if (c.qpn > max_24bit || c.psn > max_24bit)
    return status(error_code::malformed_input, "connection data: QPN or PSN beyond 24 bits");
  return c;
}

nlohmann::json to_json(const connection_data& c) {
  return {{"qpn", c.qpn}, {"psn", c.psn}, {"gid", format_gid(c.gid)}, {"rkey", c.rkey},
          {"addr", c.addr}, {"length", c.length}, {"lid", c.lid},       {"mtu", c.mtu}};
}

result<connection_data> connection_data_from_json(const nlohmann::json& j) {
  try {
    connection_data c;
    c.qpn = j.at("qpn").get<std::uint32_t>();
    c.psn = j.at("psn").get<std::uint32_t>();
    auto gid = parse_sysfs_gid(j.at("gid").get<std::string>());
    if (!gid.ok()) return gid.error().with_context("connection data");
    c.gid = *gid;
    c.rkey = j.at("rkey").get<std::uint32_t>();
    c.addr = j.at("addr").get<std::uint64_t>();
    c.length = j.at("length").get<std::uint32_t>();
    c.lid = j.value("lid", std::uint16_t{0});
    c.mtu = j.value("mtu", std::uint8_t{0});
    if (c.qpn > max_24bit || c.psn > max_24bit)
      return status(error_code::malformed_input, "connection data: QPN or PSN beyond 24 bits");
    return c;
  } catch (const nlohmann::json::exception& e) {
    return status(error_code::malformed_input, std::string("connection data: ") + e.what());
  }
}

}  // namespace rocelab::traffic::verbs
