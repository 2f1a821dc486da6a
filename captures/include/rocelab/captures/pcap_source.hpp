#pragma once
// Live capture on one network interface through libpcap (adapter target
// rocelab::captures_pcap).
//
// Timestamps are nanoseconds since the Unix epoch. When the interface offers hardware
// timestamps (PCAP_TSTAMP_ADAPTER, else PCAP_TSTAMP_ADAPTER_UNSYNCED) and they are asked
// for, they are used and timestamps() says `hardware`; otherwise the kernel's host clock
// is used. Unsynced adapter time is not epoch time: stats().notes says so when chosen.
//
// poll() waits on the pcap selectable descriptor with poll(2), so it never blocks longer
// than its timeout; it returns as soon as one read delivered packets, or when the timeout
// ends, or early (0 packets) when a signal interrupts the wait, so a caller's stop flag
// set by a signal handler is seen promptly.
//
// Threading: one thread at a time per source. Needs CAP_NET_RAW (root) to open.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rocelab/captures/capture_source.hpp"
#include "rocelab/common/result.hpp"

struct pcap;  // libpcap's pcap_t, kept out of this header

namespace rocelab::captures {

struct pcap_source_options {
  std::string interface;                 // e.g. "eth0", "veth-b"
  std::uint32_t snaplen = 65535;         // bytes kept per packet
  bool promiscuous = true;
  bool immediate = true;                 // deliver each packet without batching delay
  int buffer_bytes = 32 << 20;           // kernel ring size; small rings drop under bursts
  bool prefer_hardware_timestamps = true;
};

class pcap_source final : public capture_source {
 public:
  // Creates and activates the capture. Errors name the interface and carry libpcap's
  // text: not_found (no such interface), unavailable (no permission), io_error otherwise.
  static result<std::unique_ptr<pcap_source>> open(const pcap_source_options& options);

  pcap_source(const pcap_source&) = delete;
  pcap_source& operator=(const pcap_source&) = delete;
  ~pcap_source() override;

  // See the header comment for when it returns. The sink may throw; the exception
  // propagates after libpcap's loop has been left cleanly.
  result<std::size_t> poll(std::chrono::milliseconds timeout,
                           const packet_sink& sink) override;
  // received/bytes count what this source delivered; kernel_dropped and if_dropped come
  // from pcap_stats (ps_drop, ps_ifdrop) since open.
  capture_stats stats() override;
  [[nodiscard]] timestamp_source timestamps() const override { return timestamps_; }
  [[nodiscard]] std::vector<interface_info> interfaces() const override;

 private:
  struct pcap_closer {
    void operator()(pcap* p) const noexcept;
  };
  using pcap_handle = std::unique_ptr<pcap, pcap_closer>;

  pcap_source(pcap_handle handle, int selectable_fd, interface_info info,
              timestamp_source timestamps, std::string notes);

  pcap_handle handle_;
  int selectable_fd_;  // owned by handle_, never closed here
  interface_info info_;
  timestamp_source timestamps_;
  std::string notes_;
  std::uint64_t received_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace rocelab::captures
