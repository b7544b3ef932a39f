// Verbs-shaped types of the softfabric NIC (rdma-core libibverbs/verbs.h,
// endpoint.md section 2): work requests, scatter/gather entries, work
// completions, QP attributes and the enums with ibv's numeric values, so a
// verbs program ports by renaming (docs/nic.md has the side-by-side).
// Differences from ibv are marked "sf:" where they occur.
#pragma once

#include <cstdint>

#include "common/wire/ipv4.h"
#include "common/wire/ipv6.h"

namespace sf::nic::rc {
class Srq;
}

namespace sf::nic::verbs {

// enum ibv_wc_status: same values. to_string() returns ibv_wc_status_str()'s
// exact text ("unknown" out of range).
enum class WcStatus : uint8_t {
  kSuccess = 0,
  kLocLenErr = 1,
  kLocQpOpErr = 2,
  kLocEecOpErr = 3,
  kLocProtErr = 4,
  kWrFlushErr = 5,
  kMwBindErr = 6,
  kBadRespErr = 7,
  kLocAccessErr = 8,
  kRemInvReqErr = 9,
  kRemAccessErr = 10,
  kRemOpErr = 11,
  kRetryExcErr = 12,
  kRnrRetryExcErr = 13,
  kLocRddViolErr = 14,
  kRemInvRdReqErr = 15,
  kRemAbortErr = 16,
  kInvEecnErr = 17,
  kInvEecStateErr = 18,
  kFatalErr = 19,
  kRespTimeoutErr = 20,
  kGeneralErr = 21,
  kTmErr = 22,
  kTmRndvIncomplete = 23,
};
const char* to_string(WcStatus s);
// ibv_wc_status_str() for a raw value (out of range -> "unknown").
const char* wc_status_str(int status);

// enum ibv_wc_opcode.
enum class WcOpcode : uint8_t {
  kSend = 0,
  kRdmaWrite = 1,
  kRdmaRead = 2,
  kCompSwap = 3,
  kFetchAdd = 4,
  kBindMw = 5,
  kLocalInv = 6,
  kTso = 7,
  kRecv = 128,
  kRecvRdmaWithImm = 129,
};
const char* to_string(WcOpcode op);

// enum ibv_wr_opcode (the RC subset implemented; others are rejected with EINVAL).
enum class WrOpcode : uint8_t {
  kRdmaWrite = 0,
  kRdmaWriteWithImm = 1,
  kSend = 2,
  kSendWithImm = 3,
  kRdmaRead = 4,
};
const char* to_string(WrOpcode op);

// enum ibv_send_flags.
inline constexpr unsigned kSendFence = 1;
inline constexpr unsigned kSendSignaled = 2;
inline constexpr unsigned kSendSolicited = 4;
inline constexpr unsigned kSendInline = 8;

// enum ibv_wc_flags.
inline constexpr unsigned kWcGrh = 1;
inline constexpr unsigned kWcWithImm = 2;

// enum ibv_access_flags.
inline constexpr int kAccessLocalWrite = 1;
inline constexpr int kAccessRemoteWrite = 2;
inline constexpr int kAccessRemoteRead = 4;
inline constexpr int kAccessRemoteAtomic = 8;
// Remote addresses of the MR are offsets from 0 (IBV_ACCESS_ZERO_BASED): a
// peer can address it without learning our virtual addresses.
inline constexpr int kAccessZeroBased = 32;
inline constexpr int kAccessKnownMask = 0x3FF;  // every ibv access bit up to FLUSH_PERSISTENT

// enum ibv_qp_state.
enum class QpState : uint8_t { kReset = 0, kInit = 1, kRtr = 2, kRts = 3, kSqd = 4, kSqe = 5, kErr = 6, kUnknown = 7 };
const char* to_string(QpState s);

// enum ibv_qp_type: RC, and MRC created the way vendor QPs are
// (IBV_QPT_DRIVER = 0xFF, as libmrc does; docs/mrc.md "Verbs").
enum class QpType : uint8_t { kRc = 2, kMrc = 0xFF };

// enum ibv_mtu: 1..5 = 256..4096 bytes.
enum class Mtu : uint8_t { k256 = 1, k512 = 2, k1024 = 3, k2048 = 4, k4096 = 5 };
// Bytes of a valid Mtu; 0 for an invalid value.
uint32_t mtu_bytes(Mtu m);

// enum ibv_qp_attr_mask.
inline constexpr int kQpState = 1 << 0;
inline constexpr int kQpCurState = 1 << 1;
inline constexpr int kQpEnSqdAsyncNotify = 1 << 2;
inline constexpr int kQpAccessFlags = 1 << 3;
inline constexpr int kQpPkeyIndex = 1 << 4;
inline constexpr int kQpPort = 1 << 5;
inline constexpr int kQpQkey = 1 << 6;
inline constexpr int kQpAv = 1 << 7;
inline constexpr int kQpPathMtu = 1 << 8;
inline constexpr int kQpTimeout = 1 << 9;
inline constexpr int kQpRetryCnt = 1 << 10;
inline constexpr int kQpRnrRetry = 1 << 11;
inline constexpr int kQpRqPsn = 1 << 12;
inline constexpr int kQpMaxQpRdAtomic = 1 << 13;
inline constexpr int kQpAltPath = 1 << 14;
inline constexpr int kQpMinRnrTimer = 1 << 15;
inline constexpr int kQpSqPsn = 1 << 16;
inline constexpr int kQpMaxDestRdAtomic = 1 << 17;
inline constexpr int kQpPathMigState = 1 << 18;
inline constexpr int kQpCap = 1 << 19;
inline constexpr int kQpDestQpn = 1 << 20;
inline constexpr int kQpRateLimit = 1 << 25;

// ibv_gid: 16 bytes. RoCEv2 IPv4 GIDs are IPv4-mapped IPv6 (::ffff:a.b.c.d).
using Gid = wire::Ipv6Addr;
Gid gid_from_ipv4(const wire::Ipv4Addr& ip);
// Inline: Qp::check_peer asks on every received frame (out of line it cost
// 61 instructions a frame, callgrind).
inline bool gid_is_ipv4(const Gid& g) {
  uint64_t hi = 0;  // bytes 0..7 zero, 8..9 zero, 10..11 0xFF
  for (int i = 0; i < 8; ++i) hi |= g.bytes[i];
  return hi == 0 && g.bytes[8] == 0 && g.bytes[9] == 0 && g.bytes[10] == 0xFF && g.bytes[11] == 0xFF;
}
inline wire::Ipv4Addr gid_to_ipv4(const Gid& g) {  // the low 4 bytes
  return {{g.bytes[12], g.bytes[13], g.bytes[14], g.bytes[15]}};
}

// struct ibv_sge.
struct Sge {
  uint64_t addr = 0;    // virtual address inside a registered MR
  uint32_t length = 0;  // bytes
  uint32_t lkey = 0;
};

// struct ibv_send_wr (RC fields).
struct SendWr {
  uint64_t wr_id = 0;
  SendWr* next = nullptr;
  Sge* sg_list = nullptr;
  int num_sge = 0;
  WrOpcode opcode = WrOpcode::kSend;
  unsigned send_flags = 0;
  uint32_t imm_data = 0;  // as ibv: already in network order, carried opaque
  struct {
    uint64_t remote_addr = 0;
    uint32_t rkey = 0;
  } rdma;
};

// struct ibv_recv_wr.
struct RecvWr {
  uint64_t wr_id = 0;
  RecvWr* next = nullptr;
  Sge* sg_list = nullptr;
  int num_sge = 0;
};

// struct ibv_wc.
struct Wc {
  uint64_t wr_id = 0;
  WcStatus status = WcStatus::kSuccess;
  WcOpcode opcode = WcOpcode::kSend;
  uint32_t vendor_err = 0;
  uint32_t byte_len = 0;
  uint32_t imm_data = 0;
  uint32_t qp_num = 0;
  uint32_t src_qp = 0;
  unsigned wc_flags = 0;
  uint16_t pkey_index = 0;
  uint16_t slid = 0;
  uint8_t sl = 0;
  uint8_t dlid_path_bits = 0;
};

// struct ibv_global_route.
struct GlobalRoute {
  Gid dgid;
  uint32_t flow_label = 0;  // 20 bits; IPv6 flow label
  uint8_t sgid_index = 0;   // index in the host's GID table (docs/nic.md)
  uint8_t hop_limit = 64;
  uint8_t traffic_class = 0;  // DSCP(6) | ECN(2); sf: ECN bits are set by the NIC (ECT(0))
};

// struct ibv_ah_attr. sf: `dmac` is the peer's MAC (the kernel resolves it
// from the GID; there is no neighbour discovery here).
struct AhAttr {
  GlobalRoute grh;
  uint16_t dlid = 0;
  uint8_t sl = 0;  // service level = PFC priority of the QP's packets (0..7)
  uint8_t src_path_bits = 0;
  uint8_t static_rate = 0;
  uint8_t is_global = 0;  // must be 1 for RoCE
  uint8_t port_num = 1;
  uint8_t dmac[6] = {};
};

// struct ibv_qp_cap.
struct QpCap {
  uint32_t max_send_wr = 0;
  uint32_t max_recv_wr = 0;
  uint32_t max_send_sge = 0;
  uint32_t max_recv_sge = 0;
  uint32_t max_inline_data = 0;
};

class Cq;

// struct ibv_qp_init_attr.
struct QpInitAttr {
  Cq* send_cq = nullptr;
  Cq* recv_cq = nullptr;
  rc::Srq* srq = nullptr;  // receives from this shared receive queue (RC only); then cap.max_recv_wr is ignored
  QpCap cap;
  QpType qp_type = QpType::kRc;
  int sq_sig_all = 0;
};

// struct ibv_qp_attr (the fields RC uses).
struct QpAttr {
  QpState qp_state = QpState::kReset;
  QpState cur_qp_state = QpState::kReset;
  Mtu path_mtu = Mtu::k1024;
  uint32_t qkey = 0;
  uint32_t rq_psn = 0;
  uint32_t sq_psn = 0;
  uint32_t dest_qp_num = 0;
  int qp_access_flags = 0;
  QpCap cap;
  AhAttr ah_attr;
  uint16_t pkey_index = 0;
  uint8_t sq_draining = 0;
  uint8_t max_rd_atomic = 0;
  uint8_t max_dest_rd_atomic = 0;
  uint8_t min_rnr_timer = 0;  // 5-bit code (endpoint.md 1.5)
  uint8_t port_num = 0;
  uint8_t timeout = 0;        // 4.096 us x 2^timeout; 0 = infinite
  uint8_t retry_cnt = 0;      // 3 bits
  uint8_t rnr_retry = 0;      // 3 bits, 7 = infinite
  uint32_t rate_limit = 0;    // kbps; 0 = line rate (IBV_QP_RATE_LIMIT)
};

// struct ibv_qp_rate_limit_attr (ibv_modify_qp_rate_limit).
struct QpRateLimitAttr {
  uint32_t rate_limit = 0;      // kbps; 0 = line rate (no pacing)
  uint32_t max_burst_sz = 0;    // bytes (wire bytes, as the rate); 0 = the device default: strict, no burst
  uint16_t typical_pkt_sz = 0;  // bytes; 0 = the port MTU. Accepted, no effect: each frame is charged its own size
  uint32_t comp_mask = 0;       // no extensions: must be 0
};

// ---- MRC (docs/mrc.md "Transport", "Verbs") ---------------------------------
// The EV / transport profile of an MRC QP, set with mrc_modify_qp() (shaped
// like libmrc's mrc_modify_qp: an attribute struct and a mask of the fields
// to apply). Defaults are what a QP has when a field is never set.

// How the EV selects the path of a packet.
enum class MrcEvMode : uint8_t {
  kUdpSport = 0,  // UDP source port 0xC000 | (ev & 0x3FFF); IPv6 also flow label = ev & 0xFFFFF
  kSrv6 = 1,      // IPv6-in-IPv6, outer DA = the uSID path the EV names (MrcQpAttr::srv6)
};

// SRv6 uSID path template of an MRC QP (ev_mode kSrv6; docs/mrc.md "SRv6
// uSID paths"). F3216: a 32-bit locator block and 16-bit uSIDs, at most 6
// uSIDs in one address. Plane p's packets go to
//   block | before[0..] | uplinks[u] | after[0..] | 0
// where EV index i is on plane i % planes (as the EV set) and takes uplink
// u = (i / planes) % num_uplinks: the EV picks plane and uplink (a spine).
inline constexpr int kMrcSrv6MaxUsids = 6;     // uSIDs in one F3216 address
inline constexpr int kMrcSrv6MaxUplinks = 16;  // candidate uplink uSIDs per plane
struct MrcSrv6Plane {
  uint8_t num_before = 0;                       // uSIDs before the uplink (e.g. the first switch)
  uint8_t num_uplinks = 0;                      // 1..16 candidates
  uint8_t num_after = 0;                        // uSIDs after it, to the peer's port
  uint16_t before[kMrcSrv6MaxUsids] = {};
  uint16_t uplinks[kMrcSrv6MaxUplinks] = {};
  uint16_t after[kMrcSrv6MaxUsids] = {};
};
struct MrcSrv6Path {
  uint8_t block[4] = {};                        // locator block, not all zero
  uint8_t hop_limit = 64;                       // outer IPv6 hop limit, >= 1
  uint8_t num_planes = 0;                       // = the QP's planes
  MrcSrv6Plane plane[32] = {};
};

struct MrcQpAttr {
  uint16_t num_evs = 128;           // EVs of the profile, 1..256 (spec profiles 128-256), a multiple of num_planes
  uint16_t num_planes = 0;          // 0 = one per host port; else 1..host ports
  uint16_t backup_per_plane = 0;    // < num_evs / num_planes
  uint32_t ev_base = 0;             // EV value of index 0 (EV = ev_base + index)
  uint16_t probes_to_readmit = 3;   // >= 1
  uint16_t mpr = 64;                // SACK window: PSNs past CACK tracked (and sent), 1..256 (a SACK's
                                    // bitmap shows 64 of them: docs/mrc.md "SACK window past 64")
  uint32_t window_bytes = 0;        // payload bytes in flight; 0 = one BDP (line rate x base_rtt_ns, all planes)
  uint32_t base_rtt_ns = 10000;     // for the BDP default, 100..10,000,000
  uint32_t rto_ns = 100000;         // a PSN unacknowledged this long is lost, 1,000..1,000,000,000
  uint32_t ooo_tolerance_ns = 15000;  // a SACK hole older than this is lost (reordering tolerance), <= rto_ns
  uint32_t probe_interval_ns = 20000; // reliability probe when SACKs stopped this long (data in flight), 1,000..rto_ns
  uint32_t ev_probe_interval_ns = 50000;  // background probes of retired EVs, 1,000..1e9
  uint16_t sack_every_pkts = 4;     // coalescing: a SACK at least every N new packets, 1..64
  uint32_t sack_delay_ns = 2000;    // coalescing: or this long after the first unSACKed packet, 0..1e6
  uint8_t max_timeouts = 7;         // RTO expiries of one PSN before the QP fails (RETRY_EXC_ERR), 1..255
  MrcEvMode ev_mode = MrcEvMode::kUdpSport;
  uint8_t trim_lasthop_dscp = 0xFF; // a trimmed packet with this DSCP is TRIMMED_LASTHOP; 0xFF = never
  uint64_t seed = 0;                // EV draw seed; 0 = derived from the host seed and the QPN
  // The peer's address on each plane (its port p + 1): plane p's packets go
  // to peer_gid[p] / peer_mac[p], and arrivals from any of them are the
  // peer's. 0 = every plane uses ah_attr's dgid / dmac (a fabric that routes
  // any plane to that address).
  uint8_t num_peer_ports = 0;       // 0, or the number of planes
  Gid peer_gid[32] = {};
  uint8_t peer_mac[32][6] = {};
  // Retired EVs are probed with the connectionless ENDPOINT_REQUEST EV_PROBE
  // (op 1, answered by an EETH on the same path) instead of a reliability
  // probe on the QP (kMrcEvProbeEndpoint).
  bool ev_probe_endpoint = false;
  // ev_mode kSrv6: the path template (kMrcSrv6Path); ignored otherwise.
  MrcSrv6Path srv6 = {};
  // Responder back-pressure: the rcv_cwnd_pen each SACK carries (0..127;
  // an NSCC sender takes acked bytes x pen / 128 off its window per SACK,
  // docs/mrc.md "Back-pressure"): rcv_pen_rq while a WRITE_WITH_IMM waits
  // for a posted receive (0 = never), and, once the PSNs received past CACK
  // span more than rcv_pen_ooo_pct % of mpr, rising linearly to 127 at mpr
  // (100 = never). Both may change in any state.
  uint8_t rcv_pen_rq = 64;
  uint8_t rcv_pen_ooo_pct = 75;
  // The SACK bitmap's base PSN on send (kMrcSackAlign): 1 = CACK + 1 (or
  // the window ending at the trigger past CACK + 64); 8 = UET-style, a
  // multiple of 8 (sack_offset then -6..1). Any base is honoured on receive.
  uint8_t sack_align = 1;
};

// mrc_modify_qp mask bits (which MrcQpAttr fields apply). The EV profile
// (kMrcProfile fields) may change in RESET and INIT only; the timers,
// coalescing and window (kMrcTunables) in any state.
inline constexpr int kMrcNumEvs = 1 << 0;
inline constexpr int kMrcNumPlanes = 1 << 1;
inline constexpr int kMrcBackupPerPlane = 1 << 2;
inline constexpr int kMrcEvBase = 1 << 3;
inline constexpr int kMrcProbesToReadmit = 1 << 4;
inline constexpr int kMrcMpr = 1 << 5;
inline constexpr int kMrcEvMode = 1 << 6;
inline constexpr int kMrcSeed = 1 << 7;
inline constexpr int kMrcWindowBytes = 1 << 8;
inline constexpr int kMrcBaseRtt = 1 << 9;
inline constexpr int kMrcRto = 1 << 10;
inline constexpr int kMrcOooTolerance = 1 << 11;
inline constexpr int kMrcProbeInterval = 1 << 12;
inline constexpr int kMrcEvProbeInterval = 1 << 13;
inline constexpr int kMrcSackCoalesce = 1 << 14;  // sack_every_pkts and sack_delay_ns
inline constexpr int kMrcMaxTimeouts = 1 << 15;
inline constexpr int kMrcTrimLastHopDscp = 1 << 16;
inline constexpr int kMrcPeerPorts = 1 << 17;  // num_peer_ports, peer_gid, peer_mac
inline constexpr int kMrcSrv6Path = 1 << 18;   // srv6 (the uSID path template)
inline constexpr int kMrcEvProbeEndpoint = 1 << 19;  // ev_probe_endpoint
inline constexpr int kMrcRcvPenalty = 1 << 24;  // rcv_pen_rq and rcv_pen_ooo_pct
inline constexpr int kMrcSackAlign = 1 << 20;   // sack_align
inline constexpr int kMrcProfile = kMrcNumEvs | kMrcNumPlanes | kMrcBackupPerPlane | kMrcEvBase |
                                   kMrcProbesToReadmit | kMrcMpr | kMrcEvMode | kMrcSeed | kMrcPeerPorts |
                                   kMrcSrv6Path;
inline constexpr int kMrcTunables = kMrcWindowBytes | kMrcBaseRtt | kMrcRto | kMrcOooTolerance | kMrcProbeInterval |
                                    kMrcEvProbeInterval | kMrcSackCoalesce | kMrcMaxTimeouts | kMrcTrimLastHopDscp |
                                    kMrcEvProbeEndpoint | kMrcRcvPenalty | kMrcSackAlign;
inline constexpr int kMrcAllAttrs = kMrcProfile | kMrcTunables;

}  // namespace sf::nic::verbs
