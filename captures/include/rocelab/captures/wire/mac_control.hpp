#pragma once
// MAC control frames (EtherType 0x8808, IEEE 802.3 annex 31B): 802.3x PAUSE and
// 802.1Qbb priority-based flow control. Both follow the Ethernet header directly, are
// sent to the reserved multicast 01:80:c2:00:00:01 (which bridges never forward), and are
// padded with zeros to the minimum frame size.
//
// A quantum is 512 bit times at the port speed (802.3 31B.2), so the same quanta value is
// a shorter pause on a faster link.

#include <array>
#include <cstddef>
#include <cstdint>

#include "rocelab/captures/wire/byte_order.hpp"
#include "rocelab/captures/wire/ethernet.hpp"

namespace rocelab::captures::wire {

inline constexpr mac_address mac_control_multicast{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};

namespace mac_control_opcode {
inline constexpr std::uint16_t pause = 0x0001;  // 802.3 annex 31B.3
inline constexpr std::uint16_t pfc = 0x0101;    // 802.1Qbb clause 36.1.3 (802.1Q-2018 36.1.3)
}  // namespace mac_control_opcode

inline constexpr std::size_t pfc_priorities = 8;

// 802.3x PAUSE: opcode and one pause time. Quanta 0 resumes transmission (XON).
class pause_frame {
 public:
  [[nodiscard]] constexpr std::uint16_t opcode() const noexcept { return opcode_.value(); }
  [[nodiscard]] constexpr std::uint16_t quanta() const noexcept { return quanta_.value(); }
  constexpr void set_opcode(std::uint16_t v) noexcept { opcode_.set(v); }
  constexpr void set_quanta(std::uint16_t v) noexcept { quanta_.set(v); }

 private:
  be16 opcode_ = be16::from(mac_control_opcode::pause);
  be16 quanta_{};
};
static_assert(sizeof(pause_frame) == 4);

// 802.1Qbb PFC (802.1Q-2018 figure 36-3): class-enable vector, then one time per
// priority 0..7. Bit n of the vector's low octet enables priority n; the high octet is
// reserved (zero on send, ignored on receipt), and the time of a disabled priority is
// ignored.
class pfc_frame {
 public:
  [[nodiscard]] constexpr std::uint16_t opcode() const noexcept { return opcode_.value(); }
  // All 16 bits, reserved ones included, as the wire carries them.
  [[nodiscard]] constexpr std::uint16_t class_enable() const noexcept { return class_enable_.value(); }
  [[nodiscard]] constexpr bool enabled(std::size_t priority) const noexcept {
    return priority < pfc_priorities && ((class_enable() >> priority) & 1) != 0;
  }
  // Priority must be below 8.
  [[nodiscard]] constexpr std::uint16_t quanta(std::size_t priority) const noexcept {
    return quanta_[priority].value();
  }

  constexpr void set_opcode(std::uint16_t v) noexcept { opcode_.set(v); }
  constexpr void set_class_enable(std::uint16_t v) noexcept { class_enable_.set(v); }
  constexpr void set_quanta(std::size_t priority, std::uint16_t v) noexcept {
    quanta_[priority].set(v);
  }

 private:
  be16 opcode_ = be16::from(mac_control_opcode::pfc);
  be16 class_enable_{};
  std::array<be16, pfc_priorities> quanta_{};
};
static_assert(sizeof(pfc_frame) == 20);

}  // namespace rocelab::captures::wire
