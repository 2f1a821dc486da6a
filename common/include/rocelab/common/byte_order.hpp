#pragma once
// Network (big-endian) integers for wire structs: captured frames (captures/wire), the
// controller's frame header and clock datagram (protocol).
//
// A be16/be24/be32/be64 is a byte array with alignment 1, so a struct built from them has
// no padding and can be memcpy'd from any offset of a captured frame. They do not convert
// implicitly to or from host integers: reading one needs value() and writing one needs
// set(), so a forgotten byte swap does not compile. The loads are written as shifts, which
// GCC and Clang turn into a single load plus bswap/rol, and which stay constexpr.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace rocelab::wire {

// Free loads/stores on raw bytes, for code that walks a frame by offset.
[[nodiscard]] constexpr std::uint16_t load_be16(const std::uint8_t* p) noexcept {
  return static_cast<std::uint16_t>((std::uint16_t{p[0]} << 8) | p[1]);
}
[[nodiscard]] constexpr std::uint32_t load_be24(const std::uint8_t* p) noexcept {
  return (std::uint32_t{p[0]} << 16) | (std::uint32_t{p[1]} << 8) | p[2];
}
[[nodiscard]] constexpr std::uint32_t load_be32(const std::uint8_t* p) noexcept {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         p[3];
}
[[nodiscard]] constexpr std::uint64_t load_be64(const std::uint8_t* p) noexcept {
  return (std::uint64_t{load_be32(p)} << 32) | load_be32(p + 4);
}
constexpr void store_be16(std::uint8_t* p, std::uint16_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}
// Only the low 24 bits of `v` are stored (QP numbers, PSNs, MSNs).
constexpr void store_be24(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v >> 16);
  p[1] = static_cast<std::uint8_t>(v >> 8);
  p[2] = static_cast<std::uint8_t>(v);
}
constexpr void store_be32(std::uint8_t* p, std::uint32_t v) noexcept {
  store_be16(p, static_cast<std::uint16_t>(v >> 16));
  store_be16(p + 2, static_cast<std::uint16_t>(v));
}
constexpr void store_be64(std::uint8_t* p, std::uint64_t v) noexcept {
  store_be32(p, static_cast<std::uint32_t>(v >> 32));
  store_be32(p + 4, static_cast<std::uint32_t>(v));
}

struct be16 {
  std::array<std::uint8_t, 2> bytes{};
  [[nodiscard]] constexpr std::uint16_t value() const noexcept { return load_be16(bytes.data()); }
  constexpr void set(std::uint16_t v) noexcept { store_be16(bytes.data(), v); }
  [[nodiscard]] static constexpr be16 from(std::uint16_t v) noexcept {
    be16 r;
    r.set(v);
    return r;
  }
  friend constexpr bool operator==(const be16&, const be16&) = default;
};

// 24-bit fields (IBTA dest QP, PSN, MSN): top bits above 24 are dropped by set().
struct be24 {
  std::array<std::uint8_t, 3> bytes{};
  [[nodiscard]] constexpr std::uint32_t value() const noexcept { return load_be24(bytes.data()); }
  constexpr void set(std::uint32_t v) noexcept { store_be24(bytes.data(), v); }
  [[nodiscard]] static constexpr be24 from(std::uint32_t v) noexcept {
    be24 r;
    r.set(v);
    return r;
  }
  friend constexpr bool operator==(const be24&, const be24&) = default;
};

struct be32 {
  std::array<std::uint8_t, 4> bytes{};
  [[nodiscard]] constexpr std::uint32_t value() const noexcept { return load_be32(bytes.data()); }
  constexpr void set(std::uint32_t v) noexcept { store_be32(bytes.data(), v); }
  [[nodiscard]] static constexpr be32 from(std::uint32_t v) noexcept {
    be32 r;
    r.set(v);
    return r;
  }
  friend constexpr bool operator==(const be32&, const be32&) = default;
};

struct be64 {
  std::array<std::uint8_t, 8> bytes{};
  [[nodiscard]] constexpr std::uint64_t value() const noexcept { return load_be64(bytes.data()); }
  constexpr void set(std::uint64_t v) noexcept { store_be64(bytes.data(), v); }
  [[nodiscard]] static constexpr be64 from(std::uint64_t v) noexcept {
    be64 r;
    r.set(v);
    return r;
  }
  friend constexpr bool operator==(const be64&, const be64&) = default;
};

static_assert(sizeof(be16) == 2 && alignof(be16) == 1);
static_assert(sizeof(be24) == 3 && alignof(be24) == 1);
static_assert(sizeof(be32) == 4 && alignof(be32) == 1);
static_assert(sizeof(be64) == 8 && alignof(be64) == 1);

// Copies a wire header out of `bytes` at `offset`. Returns false, leaving `out` untouched,
// when the header does not fit in what was captured. memcpy, because captured frames
// give no alignment guarantee.
template <typename Header>
[[nodiscard]] bool load(std::span<const std::uint8_t> bytes, std::size_t offset,
                        Header& out) noexcept {
  static_assert(std::is_trivially_copyable_v<Header> && alignof(Header) == 1);
  if (offset > bytes.size() || bytes.size() - offset < sizeof(Header)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(Header));
  return true;
}

// Writes `header` into `bytes` at `offset`; false when it does not fit.
template <typename Header>
[[nodiscard]] bool store(std::span<std::uint8_t> bytes, std::size_t offset,
                         const Header& header) noexcept {
  static_assert(std::is_trivially_copyable_v<Header> && alignof(Header) == 1);
  if (offset > bytes.size() || bytes.size() - offset < sizeof(Header)) return false;
  std::memcpy(bytes.data() + offset, &header, sizeof(Header));
  return true;
}

}  // namespace rocelab::wire
