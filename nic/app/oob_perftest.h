// perftest's own out-of-band exchange, so one sf-nic process and one
// unmodified perftest process (ib_write_bw / ib_read_bw under libsfverbs,
// or on a hardware RNIC) run a test together (`--oob-format perftest`,
// docs/nic-app.md "Interop with perftest").
//
// The format is perftest 4.5's (Debian 12's perftest 4.5-0.17, version
// string "6.06"), as read off the wire between two ib_write_bw processes
// (there is no specification; docs/wire-formats.md "perftest's out-of-band
// exchange" has the capture). Every step is one message each way; perftest's
// client writes first and its server reads first, except "done", which the
// server writes first. sf-nic writes its message and then reads the peer's
// in every step, whichever role it has: the messages are small enough to sit
// in the socket's buffer, so that order never deadlocks against either of
// perftest's orders.
//   1. version   16 bytes: "6.06" and NULs
//   2. sys data  4 + 4 bytes, each an int in network order: the cycle buffer
//                (the page size: a bw client's remote address wraps within
//                it) and the cache line size
//   3. MTU       2 bytes: the IBV_MTU enum as a decimal digit and a NUL; the
//                path MTU is the smaller of the two
//   4. QP info   108 bytes per QP, QP order (perftest's pingpong_dest):
//                "LLLL:OOOO:QQQQQQ:PPPPPP:RRRRRRRR:VVVVVVVVVVVVVVVV:" lid,
//                out_reads, QPN, PSN, rkey, VA in lower-case hex, then the
//                GID as 16 "xx:" and "SSSSSSSS:" (the SRQ number), and a NUL
// Then, in a bw test (write_bw, read_bw) with N QPs: the QP info again for
// every QP and once for QP 0 (both sides' QPs are in RTR: traffic starts);
// after the traffic one more (QP 0); the report, five 8-byte fields in
// network order (size and iterations as integers, peak and average
// bandwidth and the message rate as IEEE doubles, in the sender's units);
// the QP info once more and "done" + NUL.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "nic/app/qp_conn_info.h"

namespace sf::nic {

inline constexpr std::string_view kPerftestVersion = "6.06";
inline constexpr size_t kPerftestVersionBytes = 16;
inline constexpr size_t kPerftestDestBytes = 108;
inline constexpr size_t kPerftestBwRepBytes = 40;
inline constexpr std::string_view kPerftestDone{"done\0", 5};
inline constexpr uint32_t kPerftestCycleBuffer = 4096;  // what sf-nic announces: its perftest layout (perftest_engine.cc)
inline constexpr uint32_t kPerftestCacheLine = 64;

// One QP as perftest's exchange carries it.
struct PerftestDest {
  uint16_t lid = 0;
  uint16_t out_reads = 1;  // the side's max_rd_atomic; the peer's max_dest_rd_atomic
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint32_t rkey = 0;
  uint64_t vaddr = 0;
  std::array<uint8_t, 16> gid{};
  uint32_t srqn = 0;
  bool operator==(const PerftestDest&) const = default;
};

// The client's result after a bw test (perftest's bw_report_data).
struct PerftestBwRep {
  uint64_t size = 0;
  uint64_t iters = 0;
  double bw_peak = 0;  // in the sender's units (MB/s, or Gb/s with --report_gbits)
  double bw_avg = 0;
  double msg_rate_mpps = 0;
};

// The steps after the MTU, per tool (read off the wire, docs/perftest.md
// "perftest's own exchange"). Every tool sends each QP's info twice (two
// rounds), then QP 0's info more times; sf-nic connects its QPs after the
// first round (perftest connects somewhere before its last handshake that
// precedes the traffic, and sends nothing before it). The RDMA bw tools
// (write_bw, read_bw) add an end handshake and the client's report after
// the traffic; a SEND bw test handshakes once between the rounds; the
// latency tools (one QP) handshake twice after the second round; every bw
// tool, read_lat and send_lat close with QP 0's info and "done", write_lat
// just closes the socket. In write_lat perftest's server starts the
// ping-pong (Workload::lat_starter follows it).
struct PerftestPlan {
  int between_rounds = 0;   // QP-0 handshakes between the two rounds
  int before_traffic = 1;   // QP-0 handshakes after the second round; the last starts the traffic
  int after_traffic = 0;    // QP-0 handshakes after the traffic
  bool bw_report = false;   // the client's report (40 bytes) after those
  bool close = true;        // QP 0's info and "done" last
  // read_lat, write_lat: perftest announces the address of its receive
  // slot (where its peer WRITEs or READs), sf-nic its region: sf-nic
  // announces its slot 1 (region + size) and takes the peer's address as
  // its slot 1.
  bool slot1_address = false;
};
// The plan of the named test (sf-nic's names: write_bw ...); nullopt where
// sf-nic does not speak perftest's exchange for it.
std::optional<PerftestPlan> perftest_plan(std::string_view test);

// The codec. parse_* throw OobError naming `what` and the field.
std::string encode_perftest_version();
// The peer's version string (e.g. "6.06"); not a perftest version -> OobError.
std::string parse_perftest_version(std::string_view msg, std::string_view what);
std::string encode_perftest_u32(uint32_t v);
uint32_t parse_perftest_u32(std::string_view msg, std::string_view what);
// MTU in bytes <-> the 2-byte message ("5\0" for 4096). 256..4096.
std::string encode_perftest_mtu(uint32_t mtu_bytes);
uint32_t parse_perftest_mtu(std::string_view msg, std::string_view what);
std::string encode_perftest_dest(const PerftestDest& d);
PerftestDest parse_perftest_dest(std::string_view msg, std::string_view what);
std::string encode_perftest_bw_rep(const PerftestBwRep& r);
PerftestBwRep parse_perftest_bw_rep(std::string_view msg, std::string_view what);

// sf-nic's QP info <-> perftest's. perftest carries no MAC, message size,
// MTU (exchanged once, step 3) or transport (always RC): to_conn_info
// leaves the MAC zero (the port's gateway / gateway_mac is the next hop) and
// takes the size and MTU given.
PerftestDest to_perftest_dest(const QpConnInfo& q, uint16_t out_reads);
QpConnInfo to_conn_info(const PerftestDest& d, uint32_t mtu_bytes, uint64_t msg_size_bytes);

}  // namespace sf::nic
