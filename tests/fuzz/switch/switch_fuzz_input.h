// Input format of the switch receive-path fuzz target (fuzz_switch.cc), shared
// with the seed generator (make_seeds.cc) so both agree on the encoding.
//
// An input is a sequence of records, each starting with an op byte:
// The port of every op is port_of(op): bits 0..1, with 3 meaning port 0.
//   op < 0x80          RX: a frame arrives on port port_of(op). Bits 2..6
//                      pick the mbuf segment size (0 = one segment as far as
//                      the data room allows, k = k x 64 bytes per segment).
//                      Then a big-endian u16 length and that many frame bytes
//                      (fewer when the input ends first). Consecutive RX
//                      records for one port form one receive() burst (<= 32).
//   0x80 <= op < 0xC0  TX: transmit() on port port_of(op) with room for
//                      ((op >> 2) & 0xF) + 1 packets; what comes out is freed.
//   op >= 0xC0         CTRL, kind (op >> 2) & 0xF, port port_of(op):
//                      0 pause:  next byte is the paused-queue mask of the port
//                      1 time:   now += next byte x 1 us (0xFF: + 2 s, past FDB ageing)
//                      2 flush:  ends the current RX burst
//                      3 clear:  clear_watermarks()
//                      4 repeat: the last RX frame arrives again next byte + 1
//                                times on the port (fills buffers from small inputs)
//                      5..15:    no-op
// Virtual time advances 50 ns per record. After the input, every port is
// unpaused and drained, and the target checks that no MMU cell, queued packet
// or mbuf is left over.
#pragma once

#include <cstdint>

namespace sf::fuzz {

inline constexpr uint8_t kFuzzPorts = 3;
inline constexpr uint8_t kOpTx = 0x80;
inline constexpr uint8_t kOpCtrl = 0xC0;
inline constexpr uint8_t kCtrlPause = 0;
inline constexpr uint8_t kCtrlTime = 1;
inline constexpr uint8_t kCtrlFlush = 2;
inline constexpr uint8_t kCtrlClear = 3;
inline constexpr uint8_t kCtrlRepeat = 4;

constexpr uint8_t port_of(uint8_t op) { return static_cast<uint8_t>((op & 0x3) % kFuzzPorts); }
constexpr uint8_t rx_op(uint8_t port, uint8_t seg64 = 0) { return static_cast<uint8_t>((seg64 & 0x1F) << 2 | port); }
constexpr uint8_t tx_op(uint8_t port, uint8_t count) {
  return static_cast<uint8_t>(kOpTx | ((count - 1) & 0xF) << 2 | port);
}
constexpr uint8_t ctrl_op(uint8_t kind, uint8_t port) {
  return static_cast<uint8_t>(kOpCtrl | (kind & 0xF) << 2 | port);
}

// The switch configuration the target runs: 3 ports (MTU 1000, 1000, 800;
// port 2 trusts PCP); a 64 KiB buffer of 64-byte cells, so that every limit,
// hold and drop cause is reachable within 1 KiB of input (lossy PG
// reservations overbook the buffer); the lossless egress limit with an empty
// pool (512 cells / 32 = 16 cells) holds the largest frame (1018 B = 16
// cells): a held lossless frame larger than its queue's whole limit would wait
// at ingress forever (a known switch issue, reported, not fuzzed here); a
// lossless PG 3 with private headroom from a shared headroom pool; a trimming
// lossy PG 4 (SWITCH_TRIMMING: 128 B, DSCP 48, queue 6); a PFC watchdog on
// port 2 with 2 us / 1 us timers (action drop, so storms, flushes and
// restorations happen within an input); PG 7 without buffer (TC 5); queue 7
// without buffer (TC 6);
// WRED/ECN on queue 3 and WRED drop on queue 1; a strict queue 6 (TC 7);
// static FDB entries, IPv4 routes (one ECMP group), an IPv6 route and an SRv6
// uN table; router interfaces on ports 0 and 2 (ARP / ND answered there) and
// routes 10.8.0.0/16, fd00:8::/32 to next hops on port 2 resolved at run time
// (switch/fwd/router_if.h).
inline constexpr const char* kFuzzSwitchConfig = R"({
  "DEVICE_METADATA": {"localhost": {"mmu_size": "64KiB", "cell_size": 64, "fdb_capacity": 64,
                                    "fdb_ageing_time": "1s", "seed": 7}},
  "PORT": {"Ethernet0": {"devargs": "fuzz0", "speed": 100, "mtu": 1000},
           "Ethernet4": {"devargs": "fuzz1", "speed": 100, "mtu": 1000},
           "Ethernet8": {"devargs": "fuzz2", "speed": 100, "mtu": 800}},
  "BUFFER_POOL": {
    "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic", "size": "24KiB", "xoff": "4KiB"},
    "ingress_lossy_pool": {"type": "ingress", "mode": "dynamic", "size": "8KiB"},
    "egress_lossless_pool": {"type": "egress", "mode": "dynamic", "size": "32KiB"},
    "egress_lossy_pool": {"type": "egress", "mode": "static", "size": "16KiB"}},
  "BUFFER_PROFILE": {
    "pg_lossless": {"pool": "ingress_lossless_pool", "size": "256", "dynamic_th": "-4",
                    "xoff": "2048", "xon": "512", "xon_offset": "256"},
    "pg_lossy": {"pool": "ingress_lossy_pool", "size": "4096", "dynamic_th": "0"},
    "pg_trim": {"pool": "ingress_lossy_pool", "size": "0", "dynamic_th": "-3", "packet_discard_action": "trim"},
    "q_lossless": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "-5"},
    "q_lossy": {"pool": "egress_lossy_pool", "size": "1518", "static_th": "4096"}},
  "BUFFER_PG": {"Ethernet0,Ethernet4,Ethernet8|0-2": {"profile": "pg_lossy"},
                "Ethernet0,Ethernet4,Ethernet8|3": {"profile": "pg_lossless"},
                "Ethernet0,Ethernet4,Ethernet8|4": {"profile": "pg_trim"},
                "Ethernet0,Ethernet4,Ethernet8|5-6": {"profile": "pg_lossy"},
                "Ethernet0,Ethernet4,Ethernet8|7": {"profile": "NULL"}},
  "BUFFER_QUEUE": {"Ethernet0,Ethernet4,Ethernet8|0-2": {"profile": "q_lossy"},
                   "Ethernet0,Ethernet4,Ethernet8|3": {"profile": "q_lossless"},
                   "Ethernet0,Ethernet4,Ethernet8|4-6": {"profile": "q_lossy"},
                   "Ethernet0,Ethernet4,Ethernet8|7": {"profile": "NULL"}},
  "DSCP_TO_TC_MAP": {"ROCE": {"26": "3", "48": "6", "46": "5", "0": "0", "10": "1"}},
  "TC_TO_PRIORITY_GROUP_MAP": {"P": {"5": "7", "7": "6"}},
  "TC_TO_QUEUE_MAP": {"Q": {"6": "7", "7": "6"}},
  "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": "ROCE", "tc_to_pg_map": "P", "tc_to_queue_map": "Q",
                              "pfc_enable": "3"},
                   "Ethernet8": {"trust": "dot1p"}},
  "WRED_PROFILE": {
    "ROCE": {"ecn": "ecn_all", "green_min_threshold": "128", "green_max_threshold": "640",
             "green_drop_probability": "50"},
    "DROP": {"ecn": "ecn_none", "wred_green_enable": "true", "green_min_threshold": "256",
             "green_max_threshold": "1024", "green_drop_probability": "100"}},
  "SWITCH_TRIMMING": {"GLOBAL": {"size": "128", "dscp_value": "48", "queue_index": "6"}},
  "PFC_WD": {"Ethernet8": {"action": "drop", "detection_time": "2us", "restoration_time": "1us"}},
  "SCHEDULER": {"s1": {"type": "DWRR", "weight": "1"}, "s3": {"type": "DWRR", "weight": "3"},
                "strict": {"type": "STRICT", "priority": "5"}},
  "QUEUE": {"Ethernet0,Ethernet4,Ethernet8|0-2": {"scheduler": "s1"},
            "Ethernet0,Ethernet4,Ethernet8|1": {"wred_profile": "DROP"},
            "Ethernet0,Ethernet4,Ethernet8|3": {"scheduler": "s3", "wred_profile": "ROCE"},
            "Ethernet0,Ethernet4,Ethernet8|6": {"scheduler": "strict"}},
  "NEIGH": {"Ethernet4|10.0.1.1": {"neigh": "02:00:00:00:01:01"},
            "Ethernet8|10.0.2.1": {"neigh": "02:00:00:00:02:01"},
            "Ethernet4|fd00:1::1": {"neigh": "02:00:00:00:01:06", "family": "IPv6"}},
  "INTERFACE": {"Ethernet0|10.0.0.254/24": {}, "Ethernet0|fd00::fe/64": {},
                "Ethernet8|10.0.3.1/24": {}, "Ethernet8|fd00:3::1/64": {}},
  "STATIC_ROUTE": {"10.1.0.0/16": {"nexthop": "10.0.1.1,10.0.2.1", "ifname": "Ethernet4,Ethernet8"},
                   "10.9.0.0/24": {"nexthop": "10.0.2.1", "ifname": "Ethernet8"},
                   "fd00:9::/32": {"nexthop": "fd00:1::1", "ifname": "Ethernet4"},
                   "10.8.0.0/16": {"nexthop": "10.0.3.2", "ifname": "Ethernet8"},
                   "fd00:8::/32": {"nexthop": "fd00:3::2", "ifname": "Ethernet8"}},
  "FDB": {"02:00:00:00:00:0b": {"port": "Ethernet4"}, "Vlan10|02:00:00:00:00:0c": {"port": "Ethernet8"}},
  "SRV6": {"locator_block": "fcbb:bbbb::/32", "usid": "100",
           "next": {"200": {"port": "Ethernet4", "mac": "02:00:00:00:01:02"},
                    "300": {"port": "Ethernet8", "mac": "02:00:00:00:02:03"}}}
})";

// Router MAC of every port of the fuzzed switch.
inline constexpr uint8_t kFuzzRouterMac[6] = {0x02, 0x53, 0x46, 0x00, 0x00, 0x01};

}  // namespace sf::fuzz
