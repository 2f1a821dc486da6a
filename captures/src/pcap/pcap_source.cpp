#include "rocelab/captures/pcap_source.hpp"

#include <poll.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <string_view>
#include <utility>

namespace rocelab::captures {
namespace {

// libpcap's DLT values for the link types our readers understand.
result<link_type> to_link_type(int dlt) {
  switch (dlt) {
    case DLT_EN10MB: return link_type::ethernet;
    case DLT_NULL: return link_type::null_bsd;
    case DLT_RAW: return link_type::raw;
#ifdef DLT_IPV4
    case DLT_IPV4: return link_type::ipv4;
#endif
#ifdef DLT_IPV6
    case DLT_IPV6: return link_type::ipv6;
#endif
    default: break;
  }
  const char* name = pcap_datalink_val_to_name(dlt);
  return status(error_code::unsupported,
                "link type " + std::string(name != nullptr ? name : std::to_string(dlt)) +
                    " is not supported");
}

// Maps a negative pcap_activate code to our error codes, with libpcap's own text.
status activation_error(pcap_t* p, int rc) {
  // For these codes pcap_geterr holds a specific message; for the others only the
  // generic pcap_statustostr text exists.
  const bool has_detail = rc == PCAP_ERROR || rc == PCAP_ERROR_NO_SUCH_DEVICE ||
                          rc == PCAP_ERROR_PERM_DENIED ||
                          rc == PCAP_ERROR_PROMISC_PERM_DENIED;
  std::string text = pcap_statustostr(rc);
  if (has_detail) {
    const std::string_view detail = pcap_geterr(p);
    if (!detail.empty() && detail != text) text += " (" + std::string(detail) + ")";
  }
  switch (rc) {
    case PCAP_ERROR_NO_SUCH_DEVICE: return {error_code::not_found, text};
    case PCAP_ERROR_PERM_DENIED:
    case PCAP_ERROR_PROMISC_PERM_DENIED: return {error_code::unavailable, text};
    default: return {error_code::io_error, text};
  }
}

// Chooses a hardware timestamp type when the interface lists one: ADAPTER is synced to
// the host's clock, ADAPTER_UNSYNCED is the NIC's free-running clock (see
// pcap-tstamp(7)).
int choose_tstamp_type(pcap_t* p) {
  int* types = nullptr;
  const int n = pcap_list_tstamp_types(p, &types);
  int chosen = PCAP_TSTAMP_HOST;
  for (int i = 0; i < n; ++i) {
    if (types[i] == PCAP_TSTAMP_ADAPTER) chosen = PCAP_TSTAMP_ADAPTER;
    if (types[i] == PCAP_TSTAMP_ADAPTER_UNSYNCED && chosen != PCAP_TSTAMP_ADAPTER)
      chosen = PCAP_TSTAMP_ADAPTER_UNSYNCED;
  }
  if (types != nullptr) pcap_free_tstamp_types(types);
  return chosen;
}

struct dispatch_context {
  const packet_sink* sink;
  pcap_t* handle;
  std::int64_t ns_per_fraction;  // 1 with nanosecond precision, 1000 with microsecond
  std::uint32_t interface_id;
  std::uint64_t* bytes;
  std::size_t delivered = 0;
  std::exception_ptr error;  // a throwing sink must not unwind through libpcap's C frames
};

void on_packet(u_char* user, const pcap_pkthdr* header, const u_char* data) {
  auto& ctx = *reinterpret_cast<dispatch_context*>(user);
  if (ctx.error) return;
  packet_view view;
  view.timestamp_ns = static_cast<std::int64_t>(header->ts.tv_sec) * 1'000'000'000 +
                      static_cast<std::int64_t>(header->ts.tv_usec) * ctx.ns_per_fraction;
  view.interface_id = ctx.interface_id;
  view.original_length = header->len;
  view.bytes = {data, header->caplen};
  try {
    (*ctx.sink)(view);
    ++ctx.delivered;
    *ctx.bytes += header->len;
  } catch (...) {
    ctx.error = std::current_exception();
    pcap_breakloop(ctx.handle);
  }
}

}  // namespace

void pcap_source::pcap_closer::operator()(pcap* p) const noexcept { pcap_close(p); }

pcap_source::pcap_source(pcap_handle handle, int selectable_fd, interface_info info,
                         timestamp_source timestamps, std::string notes)
    : handle_(std::move(handle)),
      selectable_fd_(selectable_fd),
      info_(std::move(info)),
      timestamps_(timestamps),
      notes_(std::move(notes)) {}

pcap_source::~pcap_source() = default;

result<std::unique_ptr<pcap_source>> pcap_source::open(const pcap_source_options& options) {
  const std::string context = "opening libpcap capture on " + options.interface;
  if (options.interface.empty())
    return status(error_code::invalid_argument, "no interface given").with_context(context);

  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_handle handle(pcap_create(options.interface.c_str(), errbuf));
  if (!handle) return status(error_code::io_error, errbuf).with_context(context);
  pcap_t* p = handle.get();

  // The setters fail only on an already activated handle; their return codes are
  // checked anyway so a libpcap change shows up as an error, not a silent default.
  const auto check = [&](int rc, std::string_view what) -> status {
    if (rc == 0) return status::success();
    return status(error_code::io_error, std::string(what) + ": " + pcap_statustostr(rc))
        .with_context(context);
  };
  ROCELAB_RETURN_IF_ERROR(check(pcap_set_snaplen(p, static_cast<int>(options.snaplen)),
                                "pcap_set_snaplen"));
  ROCELAB_RETURN_IF_ERROR(check(pcap_set_promisc(p, options.promiscuous ? 1 : 0),
                                "pcap_set_promisc"));
  ROCELAB_RETURN_IF_ERROR(check(pcap_set_immediate_mode(p, options.immediate ? 1 : 0),
                                "pcap_set_immediate_mode"));
  ROCELAB_RETURN_IF_ERROR(check(pcap_set_buffer_size(p, options.buffer_bytes),
                                "pcap_set_buffer_size"));

  std::string notes;
  // Nanosecond precision is not offered everywhere; microseconds then, and the interface
  // description says so through its timestamp unit.
  if (pcap_set_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO) != 0)
    notes += "nanosecond timestamps not supported; using microseconds. ";

  int tstamp_type = PCAP_TSTAMP_HOST;
  if (options.prefer_hardware_timestamps) {
    tstamp_type = choose_tstamp_type(p);
    if (tstamp_type != PCAP_TSTAMP_HOST && pcap_set_tstamp_type(p, tstamp_type) != 0) {
      notes += "setting hardware timestamp type failed; using host timestamps. ";
      tstamp_type = PCAP_TSTAMP_HOST;
    }
  }

  int rc = pcap_activate(p);
  if (rc == PCAP_WARNING_TSTAMP_TYPE_NOTSUP) {
    notes += "interface refused hardware timestamps; using host timestamps. ";
    tstamp_type = PCAP_TSTAMP_HOST;
  } else if (rc == PCAP_WARNING_PROMISC_NOTSUP) {
    notes += "promiscuous mode not supported. ";
  } else if (rc > 0) {
    notes += std::string("pcap_activate warning: ") + pcap_statustostr(rc) + " (" +
             pcap_geterr(p) + "). ";
  } else if (rc < 0) {
    return activation_error(p, rc).with_context(context);
  }

  auto link = to_link_type(pcap_datalink(p));
  if (!link) return link.error().with_context(context);

  if (pcap_setnonblock(p, 1, errbuf) != 0)
    return status(error_code::io_error, std::string("pcap_setnonblock: ") + errbuf)
        .with_context(context);
  const int fd = pcap_get_selectable_fd(p);
  if (fd < 0)
    return status(error_code::unsupported, "interface has no selectable descriptor")
        .with_context(context);

  interface_info info;
  info.link = *link;
  info.snaplen = static_cast<std::uint32_t>(pcap_snapshot(p));
  info.name = options.interface;
  info.description = "libpcap live capture";
  const bool nano = pcap_get_tstamp_precision(p) == PCAP_TSTAMP_PRECISION_NANO;
  info.timestamp_unit_ns_num = nano ? 1 : 1000;
  info.timestamp_unit_ns_den = 1;

  if (tstamp_type == PCAP_TSTAMP_ADAPTER_UNSYNCED)
    notes += "hardware timestamps are the adapter's unsynced clock, not epoch time. ";

  const auto timestamps =
      tstamp_type == PCAP_TSTAMP_HOST ? timestamp_source::software : timestamp_source::hardware;
  return std::unique_ptr<pcap_source>(
      new pcap_source(std::move(handle), fd, std::move(info), timestamps, std::move(notes)));
}

result<std::size_t> pcap_source::poll(std::chrono::milliseconds timeout,
                                      const packet_sink& sink) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + timeout;
  dispatch_context ctx{&sink, handle_.get(), info_.timestamp_unit_ns_num, 0, &bytes_, 0, {}};

  for (bool first = true;; first = false) {
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (!first && remaining.count() <= 0) break;
    pollfd pfd{selectable_fd_, POLLIN, 0};
    const auto wait_ms = std::max<std::int64_t>(remaining.count(), 0);
    const int ready = ::poll(&pfd, 1, static_cast<int>(wait_ms));
    if (ready < 0) {
      if (errno == EINTR) break;  // a signal: let the caller look at its stop flag
      return status::from_errno("poll").with_context("capturing on " + info_.name);
    }
    if (ready == 0) {
      if (remaining.count() <= 0) break;
      continue;
    }
    if ((pfd.revents & (POLLERR | POLLNVAL)) != 0 && (pfd.revents & POLLIN) == 0)
      return status(error_code::io_error, "capture descriptor reported an error")
          .with_context("capturing on " + info_.name);

    const int n = pcap_dispatch(handle_.get(), -1, on_packet, reinterpret_cast<u_char*>(&ctx));
    if (ctx.error) {
      received_ += ctx.delivered;
      std::rethrow_exception(ctx.error);
    }
    if (n == PCAP_ERROR)
      return status(error_code::io_error,
                    std::string("pcap_dispatch: ") + pcap_geterr(handle_.get()))
          .with_context("capturing on " + info_.name);
    if (ctx.delivered > 0) break;
  }
  received_ += ctx.delivered;
  return ctx.delivered;
}

capture_stats pcap_source::stats() {
  capture_stats s;
  s.received = received_;
  s.bytes = bytes_;
  s.notes = notes_;
  pcap_stat ps{};
  if (pcap_stats(handle_.get(), &ps) == 0) {
    s.kernel_dropped = ps.ps_drop;
    s.if_dropped = ps.ps_ifdrop;
  } else {
    s.notes += std::string("pcap_stats failed: ") + pcap_geterr(handle_.get()) + ". ";
  }
  s.notes += "imissed, rx_nombuf and ierrors are DPDK counters; 0 here. ";
  return s;
}

std::vector<interface_info> pcap_source::interfaces() const { return {info_}; }

}  // namespace rocelab::captures
