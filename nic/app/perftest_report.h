// perftest's output for sf-nic workloads: the test banner, the QP address
// lines, the bandwidth and latency tables with perftest's exact column layout
// (linux-rdma/perftest src/perftest_parameters.{h,c}: RESULT_FMT_G, REPORT_FMT,
// RESULT_FMT_LAT, REPORT_FMT_LAT, print_report_bw, print_report_lat) and a
// JSON line per result for scripts. Pure functions over result structs;
// control thread only (they allocate strings).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/time.h"
#include "nic/app/qp_conn_info.h"

namespace sf::nic {

enum class PerftestVerb : uint8_t { kSend, kWrite, kRead };
enum class PerftestKind : uint8_t { kBw, kLat };
// perftest's test names: "Send", "RDMA_Write", "RDMA_Read".
std::string_view to_string(PerftestVerb v);
std::string_view to_string(PerftestKind k);  // "bw", "lat"

// One of write_bw, write_lat, read_bw, read_lat, send_bw, send_lat.
struct PerftestTest {
  PerftestVerb verb = PerftestVerb::kWrite;
  PerftestKind kind = PerftestKind::kBw;
  bool operator==(const PerftestTest&) const = default;
};
std::string to_string(const PerftestTest& t);  // "write_bw"
// Accepts "write_bw" and perftest's binary name "ib_write_bw".
std::optional<PerftestTest> perftest_test_from_string(std::string_view s);
inline constexpr std::string_view kPerftestTestNames =
    "write_bw, write_lat, read_bw, read_lat, send_bw, send_lat";

enum class PerftestRole : uint8_t { kServer, kClient };

// Bandwidth unit: --report_gbits (Gb/s = 10^9 bit/s) or perftest's default
// MB/s (2^20 bytes/s).
enum class BwUnits : uint8_t { kGbps, kMBps };

// The dashed separator line perftest prints between blocks (87 dashes + \n).
std::string_view result_line();

// ---- banner (ctx_print_test_info) ----
struct PerftestBanner {
  PerftestTest test;
  PerftestRole role = PerftestRole::kClient;
  bool bidirectional = false;  // -b
  std::string device = "sf-nic0";
  uint32_t num_qps = 1;
  std::string transport_type = "IB";  // what perftest prints for RoCE devices
  std::string connection_type = "RC";
  bool use_srq = false;
  uint32_t tx_depth = 128;      // printed on the client (or bidirectional)
  uint32_t rx_depth = 512;      // printed for send tests on the server (or bidirectional)
  uint32_t cq_moderation = 100;  // printed for BW tests
  uint32_t mtu_bytes = 1024;
  std::string link_type = "Ethernet";
  int gid_index = 0;            // -1: not printed
  uint32_t max_inline_bytes = 0;  // write/send tests
  uint32_t outstanding_reads = 16;  // read tests
};
// From the first dashed line to the closing one, e.g.
//   ---------------------------------------------------------------------------------------
//                       RDMA_Write BW Test
//    Dual-port       : OFF		Device         : sf-nic0
//    Number of qps   : 1		Transport type : IB
//    Connection type : RC		Using SRQ      : OFF
//    TX depth        : 128
//    CQ Moderation   : 100
//    Mtu             : 1024[B]
//    Link type       : Ethernet
//    GID index       : 0
//    Max inline data : 0[B]
//    rdma_cm QPs	 : OFF
//    Data ex. method : Ethernet
//   ---------------------------------------------------------------------------------------
// perftest's PCIe relaxed-ordering and ibv_wr API lines are left out (they
// describe host hardware that sf-nic does not have).
std::string format_banner(const PerftestBanner& b);

// ---- QP address lines (ctx_print_pingpong_data) ----
// " local address: LID 0000 QPN 0x0108 PSN 0x1e2a4b RKey 0x1fffbd VAddr 0x007f0000000000\n"
// " GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:01:01\n" (decimal bytes, as perftest)
// READ tests add " OUT 0x10" before RKey; SEND tests print no RKey/VAddr.
std::string format_qp_address(const QpConnInfo& qp, bool remote, PerftestVerb verb, int gid_index,
                              uint32_t outstanding_reads = 16);

// ---- bandwidth (print_report_bw / print_full_bw_report) ----
struct BwResults {
  uint64_t size_bytes = 0;
  uint64_t iterations = 0;  // messages completed, all QPs together
  TimeNs elapsed;           // first post to last completion
  // perftest's opt_delta: the shortest average time per message over any run
  // of consecutive messages (perftest_peak_msg_time()); zero = no peak (-N).
  TimeNs best_msg_time;
};
struct BwReport {
  uint64_t size_bytes = 0;
  uint64_t iterations = 0;
  double bw_peak = 0;  // in `units`
  double bw_avg = 0;   // in `units`
  double msg_rate_mpps = 0;
  BwUnits units = BwUnits::kGbps;
};
// bw_avg = size * iterations / elapsed, msg_rate = iterations / elapsed / 10^6,
// bw_peak = size / best_msg_time; Gb/s divide bytes/s by 125 000 000, MB/s by 2^20.
// elapsed must be > 0 (std::invalid_argument otherwise).
BwReport compute_bw(const BwResults& r, BwUnits units);
// perftest's peak search with post_list 1: the minimum over message runs
// [i, j] of (completed[j] - posted[i]) / (j - i + 1) (integer ns), where j
// runs over the messages that generate a CQE (every cq_mod-th, and the last).
// posted and completed have one entry per message (same size, >= 1).
TimeNs perftest_peak_msg_time(std::span<const TimeNs> posted, std::span<const TimeNs> completed,
                              uint32_t cq_mod = 1);
// " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
std::string bw_header(BwUnits units);
// REPORT_FMT " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf\n", or
// REPORT_FMT_EXT (6 decimals) when the average is below 0.1 Gb/s, as perftest does.
std::string format_bw_row(const BwReport& r);
// {"test":"write_bw","bytes":65536,"iterations":5000,"bw_peak_gbps":..,"bw_avg_gbps":..,"msg_rate_mpps":..}
std::string format_bw_json(const PerftestTest& t, const BwReport& r);

// ---- latency (print_report_lat) ----
struct LatResults {
  uint64_t size_bytes = 0;
  uint64_t iterations = 0;  // -n
  PerftestVerb verb = PerftestVerb::kWrite;
  // perftest's samples: the time between successive posts of the ping-pong,
  // iterations - 1 of them (a round trip each; WRITE/SEND report half of it,
  // READ all of it). At least 3.
  std::span<const int64_t> deltas_ns;
};
struct LatReport {
  uint64_t size_bytes = 0;
  uint64_t iterations = 0;
  double t_min_us = 0;
  double t_max_us = 0;
  double t_typical_us = 0;  // the median
  double t_avg_us = 0;
  double t_stdev_us = 0;
  double p99_us = 0;
  double p999_us = 0;
};
// perftest's definition: sort the samples, drop the 2 largest
// (LAT_MEASURE_TAIL), m = what is left; t_min = s[0], t_max = s[m] (the
// smaller of the two dropped), typical = median of s[0..m) (mean of the two
// middle values, integer ns, when m is even), avg and population stdev over
// s[0..m), p99 = s[ceil(0.99 m)], p99.9 = s[ceil(0.999 m)]; every value
// divided by 1000 * rtt_factor (2 for WRITE/SEND, 1 for READ) to give us.
// One deviation: perftest truncates each deviation from the mean to whole
// microseconds before squaring; the stdev here is exact.
// Fewer than 3 samples: std::invalid_argument.
LatReport compute_lat(const LatResults& r);
// RESULT_FMT_LAT + "\n" (header includes the trailing space perftest prints).
std::string lat_header();
// REPORT_FMT_LAT + "\n".
std::string format_lat_row(const LatReport& r);
std::string format_lat_json(const PerftestTest& t, const LatReport& r);

// ---- latency with -D (print_report_lat_duration) ----
struct LatDurationResults {
  uint64_t size_bytes = 0;
  uint64_t iterations = 0;  // round trips completed in the sampled window
  PerftestVerb verb = PerftestVerb::kWrite;
  TimeNs elapsed;  // the sampled window
};
struct LatDurationReport {
  uint64_t size_bytes = 0;
  uint64_t iterations = 0;
  double t_avg_us = 0;     // elapsed / rtt_factor / iterations
  double tps = 0;          // iterations per second
};
LatDurationReport compute_lat_duration(const LatDurationResults& r);
std::string lat_duration_header();  // RESULT_FMT_LAT_DUR + "\n"
std::string format_lat_duration_row(const LatDurationReport& r);  // REPORT_FMT_LAT_DUR + "\n"

}  // namespace sf::nic
