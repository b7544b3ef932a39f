// What one side of an sf-nic test tells the other about one of its QPs before
// traffic starts (perftest's pingpong_dest): exchanged by OobConnection
// (oob_exchange.h) and printed by the perftest report (perftest_report.h).
#pragma once

#include <array>
#include <cstdint>

namespace sf::nic {

inline constexpr uint32_t kMaxConnPorts = 32;  // = verbs::MrcQpAttr peer_gid's size

struct QpConnInfo {
  uint16_t lid = 0;        // always 0 on RoCE
  uint32_t qpn = 0;        // 24 bits
  uint32_t psn = 0;        // 24 bits: first PSN the peer must expect
  uint32_t rkey = 0;       // of the MR the peer may WRITE/READ
  uint64_t va = 0;         // that MR's address
  std::array<uint8_t, 16> gid{};  // RoCEv2 GID (IPv4-mapped IPv6 or IPv6), network order
  // sf: the host's MAC. A kernel resolves it from the GID (ARP / ND); sf-nic
  // on one L2 segment takes it from here (a routed port sends to its
  // ARP / ND-resolved gateway instead: nic/host/neighbor.h).
  std::array<uint8_t, 6> mac{};
  uint32_t mtu_bytes = 0;  // path MTU the side uses (256..4096, or larger for jumbo sf-nic links)
  uint64_t msg_size_bytes = 0;  // -s of the test, so both ends agree
  // Per side, the same in every QP of a workload: the transport (0 RC, 1 MRC,
  // both ends must agree) and the host's ports (verbs port k = index k - 1):
  // an MRC QP sprays over all of them, plane p to the peer's port p + 1.
  uint8_t transport = 0;
  // The READs the side serves at once (its max_dest_rd_atomic): the peer
  // issues at most this many (max_rd_atomic). perftest's exchange carries it
  // (out_reads); SFOOB does not: both sides use rc::kMaxRdAtomic.
  uint8_t out_reads = 16;
  uint8_t num_ports = 1;
  std::array<std::array<uint8_t, 16>, kMaxConnPorts> port_gid{};
  std::array<std::array<uint8_t, 6>, kMaxConnPorts> port_mac{};

  bool operator==(const QpConnInfo&) const = default;
};

}  // namespace sf::nic
