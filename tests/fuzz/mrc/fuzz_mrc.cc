// libFuzzer target over the MRC receive path: a NicNode with two 2-port
// hosts whose MRC QPs are connected (2 planes, RTS; see mrc_fuzz_input.h for
// the node and the input encoding) gets raw frames, MRC frames the harness
// builds from header fields (data with METH / RETH / ImmDt, trimmed data,
// SACK, NACK of every reason, ACK, probes, endpoint port-status requests and
// responses; valid ICRC unless asked), WRITE / WRITE_WITH_IMM / RECV posts,
// its own frames wired to the other host (dropped, duplicated, reordered,
// held and released late, trimmed, a bit flipped), ports going down and up,
// CQ polls, time steps and MRs deregistered and registered again between
// frames, at increasing virtual times.
// Must never crash or touch memory it does not own (ASan/UBSan), and after
// every record: no byte outside a live MR changed, every frame delivered moved
// exactly one reason counter, every frame sent parses with a correct ICRC;
// at every poll: completions in order and never claiming bytes that are not
// in the peer's memory (see mrc_fuzz_input.h "Checked"); once the node is
// destroyed every mbuf is back in the pool.
//
// EAL is set up once per process (--no-huge, no PCI, no shared config); a
// fresh NicNode is built for every input, so an input reproduces alone.
// SF_FUZZ_MRC_VERBOSE=1 prints per input what each port and QP counted.
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/mrc_builder.h"
#include "common/wire/trim.h"
#include "nic/host/nic_node.h"
#include "nic/mrc/transport.h"
#include "nic/verbs/device.h"
#include "tests/fuzz/fuzz_eal.h"
#include "tests/fuzz/mrc/mrc_fuzz_input.h"
#include "tests/support/mbuf_chain.h"
#include "tests/support/nic_connect.h"
#include "tests/support/nic_hosts.h"

namespace {

using sf::TimeNs;
using sf::nic::NicNode;
namespace v = sf::nic::verbs;
namespace w = sf::wire;
namespace mrc = sf::nic::mrc;
using namespace sf::fuzz;

constexpr const char* kTarget = "fuzz_mrc";
constexpr uint32_t kPoolMbufs = 8191;
constexpr uint16_t kDataRoom = 2048;
constexpr uint32_t kMaxBurst = 32;
constexpr TimeNs kRecordStep(50);
constexpr size_t kGuardBytes = 4096;
constexpr size_t kMrBytes = 8192;
constexpr size_t kOtherBytes = 1024;
constexpr uint32_t kSlots = 8;
constexpr uint32_t kSlotBytes = 2048;
constexpr size_t kSrcBytes = size_t{kSlots} * kSlotBytes;
constexpr uint8_t kGuardByte = 0xA5;
constexpr uint8_t kOtherByte = 0x3C;
constexpr uint8_t kTrimDscp = 46;
constexpr uint8_t kLastHopDscp = 47;
constexpr size_t kMaxHeld = 8;
constexpr size_t kMaxRecs = 256;
constexpr int kAllAccess = v::kAccessLocalWrite | v::kAccessRemoteWrite | v::kAccessRemoteRead;

rte_mempool* g_pool = nullptr;
std::array<rte_mbuf*, 64> g_reserve{};
bool g_verbose = false;

[[noreturn]] void fail(const char* what) { sf::fuzz::fail(kTarget, what); }

sf::nic::HostPortAddr port_addr(int host, int k) {
  sf::nic::HostPortAddr a;
  a.mac = sf::nic::test::host_mac(host * 16 + k);
  w::Ipv4Addr ip4 = sf::nic::test::host_ip4(host);
  ip4.bytes[2] = static_cast<uint8_t>(k);
  a.ipv4 = ip4;
  w::Ipv6Addr ip6 = sf::nic::test::host_ip6(host);
  ip6.bytes[14] = static_cast<uint8_t>(k);
  a.ipv6 = ip6;
  return a;
}

sf::nic::NicConfig node_config() {
  sf::nic::NicConfig c;
  for (int h = 0; h < 2; ++h) {
    sf::nic::HostConfig hc = sf::nic::test::host_cfg(h, {static_cast<sf::PortId>(2 * h), static_cast<sf::PortId>(2 * h + 1)});
    hc.port_addrs = {port_addr(h, 0), port_addr(h, 1)};
    hc.max_qps = 4;
    hc.max_mrs = 8;
    hc.max_cqs = 4;
    hc.max_pds = 4;
    c.hosts.push_back(hc);
    for (int k = 0; k < 2; ++k) {
      sf::nic::NicPortConfig p;
      p.wheel_slots = 1024;
      c.ports.push_back(p);
    }
  }
  return c;
}

// One host's verbs objects and its guarded memory.
struct Side {
  std::unique_ptr<v::Context> ctx;
  v::Pd* pd = nullptr;
  v::Pd* other_pd = nullptr;
  v::Cq* scq = nullptr;
  v::Cq* rcq = nullptr;
  v::Qp* qp = nullptr;       // MRC, connected
  v::Qp* idle_qp = nullptr;  // MRC, left in RESET
  v::Qp* rc_qp = nullptr;    // RC, connected
  std::vector<uint8_t> region = std::vector<uint8_t>(kGuardBytes + kMrBytes + kGuardBytes, kGuardByte);
  std::vector<uint8_t> other_buf = std::vector<uint8_t>(kOtherBytes, kOtherByte);
  std::vector<uint8_t> src = std::vector<uint8_t>(kSrcBytes, 0);
  std::vector<uint8_t> src_shadow = std::vector<uint8_t>(kSrcBytes, 0);
  std::array<bool, kSlots> slot_busy{};
  v::Mr* mr = nullptr;  // nullptr while deregistered (remr)
  uint32_t key = 0;     // mr's lkey = rkey, or its last one while deregistered
  v::Mr* mr_ro = nullptr;
  v::Mr* other = nullptr;
  v::Mr* src_mr = nullptr;
  bool foreign = false;     // a crafted or raw frame was ever delivered to this host
  std::vector<bool> imm_posted;  // by wr_id: a WRITE_WITH_IMM this host posted
  uint64_t last_send_wr = 0;
  uint64_t last_imm_wr = 0;
  uint8_t* mr_base() { return region.data() + kGuardBytes; }
  uint64_t va() { return reinterpret_cast<uint64_t>(mr_base()); }
};

// A WRITE posted by the harness, until its send completion (and, with an
// immediate, the peer's receive completion) has been polled.
struct WriteRec {
  uint64_t wr_id = 0;
  int from = 0;
  uint32_t slot = 0;
  uint32_t len = 0;
  uint64_t dst_off = 0;
  bool imm = false;
  bool verifiable = true;   // nothing else could have written its bytes
  bool forgeable = false;   // a crafted / raw frame could have acknowledged it
  bool send_done = false;
  bool recv_done = false;
  bool in_mr() const { return dst_off + len <= kMrBytes; }
};

v::Qp* new_qp(Side& s, v::QpType type) {
  v::QpInitAttr ia;
  ia.send_cq = s.scq;
  ia.recv_cq = s.rcq;
  ia.qp_type = type;
  ia.cap.max_send_wr = 64;
  ia.cap.max_recv_wr = 64;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  v::Qp* qp = v::create_qp(s.pd, &ia);
  if (qp == nullptr) fail("create_qp");
  return qp;
}

void setup_side(NicNode& node, size_t host, Side& s) {
  s.ctx = v::open_device(node, host);
  s.pd = v::alloc_pd(s.ctx.get());
  s.other_pd = v::alloc_pd(s.ctx.get());
  s.scq = v::create_cq(s.ctx.get(), 512);
  s.rcq = v::create_cq(s.ctx.get(), 512);
  if (s.ctx == nullptr || s.pd == nullptr || s.other_pd == nullptr || s.scq == nullptr || s.rcq == nullptr) {
    fail("verbs setup");
  }
  s.qp = new_qp(s, v::QpType::kMrc);
  s.idle_qp = new_qp(s, v::QpType::kMrc);
  s.rc_qp = new_qp(s, v::QpType::kRc);
  std::memset(s.mr_base(), 0, kMrBytes);
  s.mr = v::reg_mr(s.pd, s.mr_base(), kMrBytes, kAllAccess);
  s.mr_ro = v::reg_mr(s.pd, s.mr_base(), kMrBytes, v::kAccessLocalWrite);
  s.other = v::reg_mr(s.other_pd, s.other_buf.data(), kOtherBytes, kAllAccess);
  s.src_mr = v::reg_mr(s.pd, s.src.data(), kSrcBytes, 0);
  if (s.mr == nullptr || s.mr_ro == nullptr || s.other == nullptr || s.src_mr == nullptr) fail("reg_mr");
  s.key = s.mr->rkey;
}

sf::nic::test::ConnParams conn_params(int host) {
  sf::nic::test::ConnParams p;
  p.mtu = v::Mtu::k256;
  p.timeout = 8;
  p.retry_cnt = 2;
  p.rnr_retry = 2;
  p.sq_psn = host == 0 ? 0xFFFFF0 : 0x100;  // host 0's send PSNs wrap soon
  p.rq_psn = host == 0 ? 0x100 : 0xFFFFF0;
  p.traffic_class = 26 << 2 | 2;
  p.rd_atomic = 4;
  p.access = kAllAccess;
  return p;
}

void connect(NicNode& node, int host, Side& self, const Side& peer) {
  v::MrcQpAttr a;
  a.num_evs = 8;
  a.backup_per_plane = 1;
  a.mpr = host == 0 ? 16 : 256;  // host 1 tracks 256 PSNs (crafted ones past CACK + 64 too)
  a.sack_align = host == 0 ? 1 : 8;  // and sends UET-style 8-aligned SACK bases
  a.window_bytes = 4096;
  a.rto_ns = 20'000;
  a.ooo_tolerance_ns = 5'000;
  a.probe_interval_ns = 5'000;
  a.ev_probe_interval_ns = 10'000;
  a.sack_every_pkts = 4;
  a.sack_delay_ns = 1'000;
  a.max_timeouts = 3;
  a.trim_lasthop_dscp = kLastHopDscp;
  a.seed = 0x5EED + static_cast<uint64_t>(host);
  a.num_peer_ports = 2;
  for (uint8_t k = 0; k < 2; ++k) {
    const sf::nic::rc::LocalAddr& l = node.host(static_cast<size_t>(host ^ 1)).local(static_cast<uint8_t>(k + 1));
    a.peer_gid[k] = v::gid_from_ipv4(l.ipv4);
    for (int i = 0; i < 6; ++i) a.peer_mac[k][i] = l.mac.bytes[i];
  }
  const int mask = v::kMrcNumEvs | v::kMrcBackupPerPlane | v::kMrcMpr | v::kMrcWindowBytes | v::kMrcRto |
                   v::kMrcOooTolerance | v::kMrcProbeInterval | v::kMrcEvProbeInterval | v::kMrcSackCoalesce |
                   v::kMrcMaxTimeouts | v::kMrcTrimLastHopDscp | v::kMrcSeed | v::kMrcPeerPorts | v::kMrcSackAlign;
  if (v::mrc_modify_qp(self.qp, &a, mask) != 0) fail(self.qp->mrc_error());
  const sf::nic::test::ConnParams p = conn_params(host);
  if (sf::nic::test::connect_qp(self.qp, *peer.ctx, *peer.qp, p) != 0) fail("connecting the MRC QP");
  if (sf::nic::test::connect_qp(self.rc_qp, *peer.ctx, *peer.rc_qp, p) != 0) fail("connecting the RC QP");
}

// Every frame the node sends must parse and carry a correct ICRC: whatever
// it received, the NIC never emits a malformed frame.
void check_sent(const rte_mbuf* m) {
  static std::array<uint8_t, 16384> buf;
  if (m->pkt_len > buf.size()) fail("the node sent a frame longer than 16 KiB");
  const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, buf.data());
  if (p == nullptr) fail("the node sent an mbuf whose pkt_len exceeds its segments");
  if (p != buf.data()) std::memcpy(buf.data(), p, m->pkt_len);
  const std::span<const uint8_t> f(buf.data(), m->pkt_len);
  const w::FrameInfo fi = w::parse_frame(f);
  if (!fi.ok()) {
    std::fprintf(stderr, "fuzz_mrc: sent frame rejected by parse_frame: %s\n", w::to_string(fi.reason));
    std::abort();
  }
  if (fi.bth != nullptr && w::icrc_verify(f, fi) != w::IcrcStatus::kOk) fail("the node sent a frame with a bad ICRC");
  if (fi.kind == w::FrameKind::kMrc && fi.mrc.trimmed) fail("the node sent a frame that parses as trimmed");
}

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t be32(const uint8_t* p) { return uint32_t{be16(p)} << 16 | be16(p + 2); }
uint64_t be64(const uint8_t* p) { return uint64_t{be32(p)} << 32 | be32(p + 4); }

uint8_t pattern(uint64_t wr_id, uint32_t k) { return static_cast<uint8_t>(wr_id * 31 + k * 7 + 1); }

class Replay {
 public:
  Replay() : node_(node_config(), g_pool) {
    setup_side(node_, 0, side_[0]);
    setup_side(node_, 1, side_[1]);
    connect(node_, 0, side_[0], side_[1]);
    connect(node_, 1, side_[1], side_[0]);
    for (int p = 0; p < 4; ++p) port_up_[p] = true;
  }
  ~Replay() {
    for (Held& h : held_) rte_pktmbuf_free(h.m);
  }

  void run(const uint8_t* data, size_t size) {
    size_t i = 0;
    while (i < size) {
      const uint8_t op = data[i++];
      const auto port = static_cast<uint16_t>(op & 3);
      if (op < kMrcOpCrafted) {
        if (i + 2 > size) break;
        const size_t len = std::min<size_t>(be16(data + i), size - i - 2);
        i += 2;
        side_[port >> 1].foreign = true;
        taint_to(port >> 1);
        forge_feedback_to(port >> 1);  // raw bytes may be a valid SACK (corpus frames are)
        rte_mbuf* m = sf::test::make_mbuf_chain(g_pool, {data + i, len}, static_cast<uint32_t>((op >> 2) & 7) * 64);
        if (m != nullptr) deliver(port, &m, 1);
        i += len;
      } else if (op < kMrcOpPost) {
        if (i + kMrcCraftedBytes > size) break;
        crafted(port, static_cast<uint8_t>(((op - kMrcOpCrafted) >> 2) & 0xF), data + i);
        i += kMrcCraftedBytes;
      } else if (op < kMrcOpCtrl) {
        if (i + 4 > size) break;
        post(op & 1, static_cast<uint8_t>((op >> 1) & 0xF), be16(data + i), be16(data + i + 2));
        i += 4;
      } else {
        const uint8_t kind = (op >> 2) & 0x1F;
        const bool arg = kind != kMrcCtrlPoll && kind != kMrcCtrlDup && kind != kMrcCtrlHold && kind <= kMrcCtrlRelease;
        const size_t need = kind == kMrcCtrlCorrupt ? 2 : arg ? 1 : 0;
        if (i + need > size) break;
        const uint8_t b = need > 0 ? data[i] : 0;
        switch (kind) {
          case kMrcCtrlDrop: tx(port, uint32_t{b} % kMaxBurst + 1, false); break;
          case kMrcCtrlWire: tx(port, uint32_t{b} % kMaxBurst + 1, true); break;
          case kMrcCtrlTime: now_ += b == 0xFF ? TimeNs::from_ms(1) : TimeNs::from_us(b); break;
          case kMrcCtrlCorrupt: corrupt(port, be16(data + i)); break;
          case kMrcCtrlPoll: poll_all(); break;
          case kMrcCtrlRemr: remr(port & 1, (b & 1) != 0); break;
          case kMrcCtrlLink:
            port_up_[port] = (b & 1) != 0;
            node_.set_port_up(port, port_up_[port]);
            break;
          case kMrcCtrlTrim: trim_one(port, (b & 1) != 0 ? kLastHopDscp : kTrimDscp); break;
          case kMrcCtrlDup: dup_one(port); break;
          case kMrcCtrlReorder: reorder(port, (b & 7u) + 2); break;
          case kMrcCtrlHold: hold(port); break;
          case kMrcCtrlRelease: release((b & 1) != 0); break;
          default: break;
        }
        i += need;
      }
      check_memory();
      now_ += kRecordStep;
      if (node_.next_wakeup(now_) <= now_) node_.advance(now_);
    }
  }

  // Time moves on with every port transmitting (frames freed): retries
  // exhaust or everything is acknowledged; then a last poll.
  void drain() {
    for (int round = 0; round < 64; ++round) {
      now_ += TimeNs::from_ms(10);
      node_.advance(now_);
      for (uint16_t p = 0; p < 4; ++p) {
        while (tx(p, kMaxBurst, false) > 0) {
        }
      }
      poll_all();
      if (node_.next_wakeup(now_) == TimeNs::max()) break;
    }
    check_memory();
  }

  void check_memory() {
    for (Side& s : side_) {
      if (s.mr == nullptr) check_freed(s);
      for (size_t k = 0; k < kGuardBytes; ++k) {
        if (s.region[k] != kGuardByte) fail("a guard byte before an MR changed");
        if (s.region[kGuardBytes + kMrBytes + k] != kGuardByte) fail("a guard byte after an MR changed");
      }
      for (uint8_t c : s.other_buf) {
        if (c != kOtherByte) fail("the other PD's MR changed");
      }
      if (std::memcmp(s.src.data(), s.src_shadow.data(), kSrcBytes) != 0) fail("a local-only source MR changed");
    }
  }

  // SF_FUZZ_MRC_VERBOSE=1: what the input did (per port and per QP).
  void print() const {
    for (uint16_t p = 0; p < 4; ++p) {
      const sf::nic::NicPortCounters& c = node_.counters(p);
      std::fprintf(stderr, "port %u: rx %lu tx %lu", p, c.rx_pkts, c.tx_pkts);
      for (int k = 0; k < sf::nic::kNumRxDrops; ++k) {
        if (c.drops[k] != 0) std::fprintf(stderr, " %s=%lu", sf::nic::to_string(static_cast<sf::nic::RxDrop>(k)), c.drops[k]);
      }
      std::fprintf(stderr, "\n");
    }
    for (int h = 0; h < 2; ++h) {
      const v::Qp& qp = *side_[h].qp;
      const mrc::MrcCounters& m = qp.mrc()->counters();
      std::fprintf(stderr, "host %d mrc qp %#x state %d:", h, qp.qp_num(), static_cast<int>(qp.state()));
      for (int k = 0; k < mrc::kNumMrcRx; ++k) {
        if (m.rx[k] != 0) std::fprintf(stderr, " %s=%lu", mrc::to_string(static_cast<mrc::MrcRx>(k)), m.rx[k]);
      }
      std::fprintf(stderr, " tx_data %lu rtx %lu sacks %lu nacks %lu probes %lu timeouts %lu\n", m.tx_data_pkts,
                   m.tx_retransmits, m.tx_sacks, m.tx_nacks, m.tx_probes, m.timeouts);
    }
    std::fprintf(stderr, "writes checked byte for byte: %lu, immediates checked: %lu\n", checked_writes_,
                 checked_imms_);
  }

 private:
  struct Held {
    uint16_t port;
    rte_mbuf* m;
  };

  // Every reason counter a received frame can move, over the whole node.
  uint64_t reasons() const {
    uint64_t n = 0;
    for (uint16_t p = 0; p < 4; ++p) {
      const sf::nic::NicPortCounters& c = node_.counters(p);
      n += c.dropped() + c.rx_pfc_frames;
    }
    for (const Side& s : side_) {
      for (const v::Qp* qp : {s.qp, s.idle_qp, s.rc_qp}) {
        for (uint64_t k : qp->counters().rx) n += k;
        if (const mrc::Transport* t = qp->mrc()) {
          n += t->counters().rx[static_cast<int>(mrc::MrcRx::kPortStatus)] +
               t->counters().rx[static_cast<int>(mrc::MrcRx::kPortStatusAnswered)] +
               t->counters().rx[static_cast<int>(mrc::MrcRx::kEvProbe)] +
               t->counters().rx[static_cast<int>(mrc::MrcRx::kEvProbeAnswered)];
        }
      }
    }
    return n;
  }

  // `n` frames into node port `port`: each must move exactly one reason
  // counter (no rx ring: every frame is processed in receive()).
  void deliver(uint16_t port, rte_mbuf** m, uint16_t n) {
    const uint64_t before = reasons();
    node_.receive(port, std::span<rte_mbuf*>(m, n), now_);
    if (reasons() - before != n) {
      std::fprintf(stderr, "fuzz_mrc: %u frames moved %lu reason counters\n", n, reasons() - before);
      fail("a received frame was not counted exactly once");
    }
  }

  // Frames of the node's port `port` go to `port ^ 2` (same plane, other
  // host) unless either end is down (the link is then dead: freed).
  void wire_to_peer(uint16_t port, rte_mbuf** m, uint16_t n) {
    const auto to = static_cast<uint16_t>(port ^ 2);
    if (!port_up_[port] || !port_up_[to]) {
      for (uint16_t k = 0; k < n; ++k) rte_pktmbuf_free(m[k]);
      return;
    }
    deliver(to, m, n);
  }

  uint16_t take(uint16_t port, rte_mbuf** out, uint32_t room) {
    const uint16_t n = node_.transmit(port, std::span<rte_mbuf*>(out, room), now_);
    if (n > room) fail("transmit returned more packets than the room it was given");
    for (uint16_t k = 0; k < n; ++k) {
      if (out[k] == nullptr) fail("transmit returned a null mbuf");
      check_sent(out[k]);
    }
    return n;
  }

  uint32_t tx(uint16_t port, uint32_t room, bool wire) {
    std::array<rte_mbuf*, kMaxBurst> out{};
    const uint16_t n = take(port, out.data(), room);
    if (wire && n > 0) {
      wire_to_peer(port, out.data(), n);
    } else {
      for (uint16_t k = 0; k < n; ++k) rte_pktmbuf_free(out[k]);
    }
    return n;
  }

  void corrupt(uint16_t port, uint16_t bit) {
    rte_mbuf* m = nullptr;
    if (take(port, &m, 1) == 0) return;
    const uint32_t nbits = m->pkt_len * 8;
    if (nbits > 0) {
      const uint32_t b = bit % nbits;
      uint32_t off = b / 8;
      rte_mbuf* seg = m;
      while (seg != nullptr && off >= seg->data_len) {
        off -= seg->data_len;
        seg = seg->next;
      }
      if (seg != nullptr) rte_pktmbuf_mtod(seg, uint8_t*)[off] ^= static_cast<uint8_t>(1u << (b % 8));
    }
    wire_to_peer(port, &m, 1);
  }

  // One frame; an MRC data frame is trimmed to its headers as a switch does.
  void trim_one(uint16_t port, uint8_t dscp) {
    rte_mbuf* m = nullptr;
    if (take(port, &m, 1) == 0) return;
    const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, frame_.data());
    if (p != frame_.data()) std::memcpy(frame_.data(), p, m->pkt_len);
    const std::span<uint8_t> f(frame_.data(), m->pkt_len);
    const w::FrameInfo fi = w::parse_frame(f);
    if (fi.ok() && fi.kind == w::FrameKind::kMrc && w::mrc_is_data(fi.mrc.op)) {
      const w::TrimResult r = w::trim_frame(f, fi, 0, dscp);
      if (r.ok()) {
        rte_pktmbuf_free(m);
        m = sf::test::make_mbuf_chain(g_pool, {frame_.data(), r.frame_bytes});
        if (m == nullptr) return;
      }
    }
    wire_to_peer(port, &m, 1);
  }

  void dup_one(uint16_t port) {
    rte_mbuf* m = nullptr;
    if (take(port, &m, 1) == 0) return;
    rte_mbuf* c = rte_pktmbuf_copy(m, g_pool, 0, UINT32_MAX);
    wire_to_peer(port, &m, 1);
    if (c != nullptr) wire_to_peer(port, &c, 1);
  }

  void reorder(uint16_t port, uint32_t n) {
    std::array<rte_mbuf*, kMaxBurst> out{};
    const uint16_t k = take(port, out.data(), n);
    std::reverse(out.begin(), out.begin() + k);
    if (k > 0) wire_to_peer(port, out.data(), k);
  }

  void hold(uint16_t port) {
    if (held_.size() == kMaxHeld) return;
    rte_mbuf* m = nullptr;
    if (take(port, &m, 1) == 0) return;
    held_.push_back({port, m});
  }

  void release(bool newest_first) {
    if (newest_first) std::reverse(held_.begin(), held_.end());
    std::vector<Held> h;
    h.swap(held_);
    for (Held& x : h) wire_to_peer(x.port, &x.m, 1);
  }

  // Foreign bytes may land in host h's MR: the writes to it are no longer
  // verifiable byte for byte.
  void taint_to(int h) {
    for (WriteRec& r : recs_) {
      if (r.from != h) {
        r.verifiable = false;
        r.forgeable = true;
      }
    }
  }

  // A frame that may be feedback (a SACK / ACK) reached host h: the WRITEs h
  // has in flight may complete without their bytes.
  void forge_feedback_to(int h) {
    for (WriteRec& r : recs_) {
      if (r.from == h && !r.send_done) {
        r.verifiable = false;
        r.forgeable = true;
      }
    }
  }

  void crafted(uint16_t port, uint8_t kind, const uint8_t* r) {
    const int host = port >> 1;
    const int plane = port & 1;
    Side& dst = side_[host];
    const Side& src_side = side_[host ^ 1];
    (void)src_side;
    const w::MrcOp op = w::kAllMrcOps[kind % std::size(w::kAllMrcOps)];
    const sf::nic::rc::LocalAddr& me = node_.host(static_cast<size_t>(host)).local(static_cast<uint8_t>(plane + 1));
    const uint8_t srcsel = r[2] & 3;
    const sf::nic::rc::LocalAddr& from =
        srcsel == 0   ? node_.host(static_cast<size_t>(host ^ 1)).local(static_cast<uint8_t>(plane + 1))
        : srcsel == 1 ? node_.host(static_cast<size_t>(host ^ 1)).local(static_cast<uint8_t>((plane ^ 1) + 1))
        : srcsel == 2 ? node_.host(static_cast<size_t>(host)).local(static_cast<uint8_t>((plane ^ 1) + 1))
                      : node_.host(static_cast<size_t>(host ^ 1)).local(1);
    w::MrcFrameSpec s;
    s.l2.dst = me.mac;
    s.l2.src = from.mac;
    if ((r[1] & 2) != 0) s.l2.vlan = w::VlanSpec{3, false, 7};
    const w::Ecn ecn = (r[1] & 4) != 0 ? w::Ecn::kCe : w::Ecn::kEct0;
    if ((r[1] & 1) != 0 && srcsel != 3) {
      w::Ipv6Spec ip;
      ip.src = from.ipv6;
      ip.dst = me.ipv6;
      ip.dscp = 26;
      ip.ecn = ecn;
      ip.flow_label = r[14];
      s.l3 = ip;
    } else {
      w::Ipv4Spec ip;
      ip.src = from.ipv4;
      ip.dst = me.ipv4;
      ip.dscp = 26;
      ip.ecn = ecn;
      s.l3 = ip;
    }
    s.udp_src_port = static_cast<uint16_t>(0xC000 | r[14]);
    const v::Qp* qp = r[0] == 0 ? dst.qp : r[0] == 1 ? dst.idle_qp : r[0] == 2 ? dst.rc_qp : nullptr;
    const mrc::Transport* t = qp != nullptr ? qp->mrc() : nullptr;
    s.op = op;
    // 0xFF: the endpoint QPN 2 (any op: a data / SACK frame there must be
    // refused, it once reached the endpoint code without ERTH / EETH).
    s.bth.dest_qp = qp != nullptr ? qp->qp_num() : r[0] == 0xFF ? w::kMrcEndpointQpn : r[0];
    if ((r[2] & 4) != 0) s.bth.pkey = 0x7FFF;
    s.bth.ack_req = (r[2] & 0x40) != 0;
    s.bth.se = (r[2] & 0x80) != 0;
    const auto delta = static_cast<uint32_t>(static_cast<int32_t>(static_cast<int16_t>(be16(r + 3))));
    const bool feedback = op == w::MrcOp::kSack || op == w::MrcOp::kNack || op == w::MrcOp::kAck;
    w::Psn base(0);
    if (t != nullptr && feedback && t->scoreboard() != nullptr) base = t->scoreboard()->una();
    if (t != nullptr && !feedback && t->sack_tracker() != nullptr) base = t->sack_tracker()->cack() + 1;
    s.bth.psn = feedback && op != w::MrcOp::kNack ? base + (delta - 1) : base + delta;
    if (op == w::MrcOp::kNack) s.bth.psn = base + 0xFFFFFFu;  // una - 1
    // METH / RETH / ImmDt
    s.meth.rtx = (r[1] & 0x40) != 0;
    s.meth.ts_valid = (r[1] & 0x80) != 0;
    s.meth.rqmsn = r[15];
    const uint32_t msn_base = t != nullptr && t->msg_tracker() != nullptr ? t->msg_tracker()->base_msn() : 0;
    s.meth.msn = msn_base + static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(r[13])));
    s.meth.msg_offset = be16(r + 11);
    s.meth.ev = r[14];
    s.meth.tx_ts = be32(r + 16);
    const auto va_off = static_cast<int16_t>(be16(r + 5));
    const uint8_t rsel = (r[2] >> 3) & 7;
    s.reth_va = dst.va() + static_cast<uint64_t>(static_cast<int64_t>(va_off));
    s.reth_rkey = rsel == 1 ? dst.mr_ro->rkey : rsel == 2 ? dst.other->rkey : rsel == 3 ? be32(r + 16) : dst.key;
    if (rsel == 2) s.reth_va = reinterpret_cast<uint64_t>(dst.other_buf.data()) + static_cast<uint16_t>(va_off) % 2048;
    s.reth_dma_length = be16(r + 7);
    s.immdt = uint32_t{r[26]} * 0x01010101u;
    // SACK / ACK
    s.sack.skip = static_cast<w::MrcSkip>(r[26] & 3);
    s.sack.probe_response = (r[26] & 4) != 0;
    s.sack.ce = (r[26] & 8) != 0;
    s.sack.ack_psn_offset = static_cast<int16_t>(be16(r + 11));
    s.sack.ev = r[14];
    s.sack.sack_offset = static_cast<int8_t>(r[24]);
    s.sack.mpr = r[25];
    s.sack.bitmap = be64(r + 16);
    s.cc.ts_echo = be32(r + 5);
    s.cc.rcvd_bytes = be32(r + 7);
    // NACK
    s.nack.reason = static_cast<w::MrcNackReason>(r[16]);
    s.nack.vendor_code = r[17];
    s.nack.ce = (r[26] & 8) != 0;
    s.nack.rtx = (r[1] & 0x40) != 0;
    s.nack.ev = r[14];
    s.nack.nack_psn = base + delta;
    // probe
    s.probe.probe_id = static_cast<uint16_t>(uint16_t{r[15]} << 8 | r[13]);
    s.probe.ev = r[14];
    // endpoint
    s.ep_request.op = static_cast<w::MrcEndpointOp>(r[16]);
    s.ep_request.num_ports = r[17];
    s.ep_request.request_id = r[15];
    s.ep_request.ev = r[14];
    s.ep_request.port_status_mask = r[18];
    s.ep_response.op = static_cast<w::MrcEndpointOp>(r[16]);
    s.ep_response.status = static_cast<w::MrcEndpointStatus>(r[19]);
    s.ep_response.request_id = r[15];
    s.ep_response.port_status_mask = r[18];
    const bool data = w::mrc_is_data(op);
    const size_t pay = data ? std::min<size_t>(be16(r + 9), kMrcMaxPayload) : 0;
    std::array<uint8_t, kMrcMaxPayload> payload;
    for (size_t k = 0; k < pay; ++k) payload[k] = static_cast<uint8_t>(k * 13 + r[27]);
    const size_t bytes = w::mrc_frame_bytes(s, pay);
    if (bytes == 0 || bytes > frame_.size()) return;
    const w::BuildResult br = w::build_mrc_frame({frame_.data(), bytes}, s, {payload.data(), pay});
    if (!br.ok()) return;
    size_t len = br.frame_bytes;
    if ((r[1] & 8) != 0) frame_[len - 1 - (r[27] & 3)] ^= static_cast<uint8_t>(1u << (r[27] >> 5));
    if ((r[1] & 0x10) != 0 && data) {
      const w::FrameInfo fi = w::parse_frame({frame_.data(), len});
      if (fi.ok()) {
        const w::TrimResult tr =
            w::trim_frame({frame_.data(), len}, fi, 0, (r[1] & 0x20) != 0 ? kLastHopDscp : kTrimDscp);
        if (tr.ok()) len = tr.frame_bytes;
      }
    }
    dst.foreign = true;
    taint_to(host);
    if (feedback) {
      // A forged SACK / ACK acknowledges what the requester cannot tell from
      // a real one (as a forged ACK does for RC): the WRITEs host has in
      // flight may complete without their bytes; they are not verified.
      forge_feedback_to(host);
    }
    rte_mbuf* m = sf::test::make_mbuf_chain(g_pool, {frame_.data(), len});
    if (m != nullptr) deliver(port, &m, 1);
  }

  void post(int host, uint8_t kind, uint16_t len16, uint16_t off16) {
    Side& self = side_[host];
    Side& peer = side_[host ^ 1];
    if (kind == kMrcPostRecv) {
      v::Sge sge{self.va(), 64, self.key};
      v::RecvWr wr;
      wr.wr_id = next_wr_id_++;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      v::RecvWr* bad = nullptr;
      (void)v::post_recv(self.qp, &wr, &bad);
      return;
    }
    uint32_t slot = kSlots;
    for (uint32_t k = 0; k < kSlots; ++k) {
      if (!self.slot_busy[k]) {
        slot = k;
        break;
      }
    }
    if (recs_.size() == kMaxRecs) {
      // The oldest record whose immediate never completed (no receive posted,
      // or the message never finished) makes room.
      const auto it = std::find_if(recs_.begin(), recs_.end(), [](const WriteRec& r) { return r.send_done; });
      if (it == recs_.end()) return;
      recs_.erase(it);
    }
    if (slot == kSlots) return;
    WriteRec rec;
    rec.wr_id = next_wr_id_++;
    rec.from = host;
    rec.slot = slot;
    rec.len = len16 % (kSlotBytes + 1);
    rec.dst_off = off16 % kMrBytes;
    rec.imm = kind == kMrcPostWriteImm;
    uint8_t* src = self.src.data() + size_t{slot} * kSlotBytes;
    for (uint32_t k = 0; k < rec.len; ++k) src[k] = pattern(rec.wr_id, k);
    std::memcpy(self.src_shadow.data() + size_t{slot} * kSlotBytes, src, rec.len);
    v::Sge sge{reinterpret_cast<uint64_t>(src), rec.len, self.src_mr->lkey};
    v::SendWr wr;
    wr.wr_id = rec.wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = v::kSendSignaled;
    wr.opcode = rec.imm ? v::WrOpcode::kRdmaWriteWithImm : v::WrOpcode::kRdmaWrite;
    if (kind == kMrcPostSend) wr.opcode = v::WrOpcode::kSend;
    if (kind == kMrcPostRead) wr.opcode = v::WrOpcode::kRdmaRead;
    if (kind == kMrcPostWriteSolicited) wr.send_flags |= v::kSendSolicited;
    wr.imm_data = static_cast<uint32_t>(rec.wr_id);
    wr.rdma.remote_addr = peer.va() + rec.dst_off;
    wr.rdma.rkey = peer.key;
    v::SendWr* bad = nullptr;
    const int rc = v::post_send(self.qp, &wr, &bad);
    if (kind == kMrcPostSend || kind == kMrcPostRead) {
      if (rc == 0) fail("an MRC QP accepted a SEND or READ");
      return;
    }
    if (rc != 0) return;  // QP in ERR / SQ full: nothing posted
    for (WriteRec& o : recs_) {
      if (o.from == host && o.dst_off < rec.dst_off + rec.len && rec.dst_off < o.dst_off + o.len) {
        o.verifiable = false;
        rec.verifiable = false;
      }
    }
    self.slot_busy[slot] = true;
    if (rec.imm) {
      if (self.imm_posted.size() <= rec.wr_id) self.imm_posted.resize(rec.wr_id + 1, false);
      self.imm_posted[rec.wr_id] = true;
    }
    recs_.push_back(rec);
  }

  WriteRec* find(int from, uint64_t wr_id) {
    for (WriteRec& r : recs_) {
      if (r.from == from && r.wr_id == wr_id) return &r;
    }
    return nullptr;
  }

  // A crafted data frame delivered to the peer may have taken a PSN this
  // WRITE uses later (its packet is then a duplicate there and is SACKed
  // without touching memory, as RC does), whenever the WRITE was posted; a
  // forged SACK acknowledges what it names. After the first such frame the
  // WRITE's completion says nothing about the peer's memory: neither its
  // bytes nor its bounds are checked.
  bool forged(const WriteRec& r) const { return r.forgeable || side_[r.from ^ 1].foreign; }

  void verify(const WriteRec& r, const char* what) {
    if (!r.verifiable || forged(r)) return;
    const uint8_t* d = side_[r.from ^ 1].mr_base() + r.dst_off;
    for (uint32_t k = 0; k < r.len; ++k) {
      if (d[k] != pattern(r.wr_id, k)) {
        std::fprintf(stderr, "fuzz_mrc: wr %lu (%u bytes at %lu) byte %u is %#x, not %#x\n", r.wr_id, r.len, r.dst_off,
                     k, d[k], pattern(r.wr_id, k));
        fail(what);
      }
    }
    ++checked_writes_;
  }

  void on_send_wc(int h, const v::Wc& wc) {
    Side& s = side_[h];
    if (wc.wr_id <= s.last_send_wr) fail("send completions out of WQE order");
    s.last_send_wr = wc.wr_id;
    WriteRec* r = find(h, wc.wr_id);
    if (r == nullptr) fail("a send completion for a WQE never posted");
    if (wc.status == v::WcStatus::kSuccess) {
      if (!r->in_mr() && !forged(*r)) fail("a WRITE past the peer's MR completed successfully");
      verify(*r, "a successful WRITE completion claims bytes that are not in the peer's memory");
    }
    r->send_done = true;
    s.slot_busy[r->slot] = false;
  }

  // A WRITE_WITH_IMM completion at host h: the peer's message (imm = wr_id),
  // in message order, its whole length placed.
  void on_recv_wc(int h, const v::Wc& wc) {
    Side& s = side_[h];
    if (wc.status != v::WcStatus::kSuccess || wc.opcode != v::WcOpcode::kRecvRdmaWithImm) return;
    WriteRec* r = find(h ^ 1, wc.imm_data);
    if (r != nullptr && r->imm) r->recv_done = true;
    if (s.foreign) return;  // a crafted frame may have completed a message of its own
    const std::vector<bool>& posted = side_[h ^ 1].imm_posted;
    if (wc.imm_data >= posted.size() || !posted[wc.imm_data]) fail("an immediate completion for no WRITE_WITH_IMM posted");
    if (wc.imm_data <= s.last_imm_wr) fail("WRITE_WITH_IMM completions out of message order");
    s.last_imm_wr = wc.imm_data;
    if (r == nullptr) return;  // its send completion (an error) and record are gone
    if (wc.byte_len != r->len) fail("an immediate completion with the wrong length");
    verify(*r, "an immediate completion claims bytes that are not in memory");
    ++checked_imms_;
  }

  void poll_all() {
    std::array<v::Wc, 16> wc;
    for (int h = 0; h < 2; ++h) {
      for (int k = 0; k < 64; ++k) {
        const int n = v::poll_cq(side_[h].scq, static_cast<int>(wc.size()), wc.data());
        if (n <= 0) break;
        for (int j = 0; j < n; ++j) on_send_wc(h, wc[j]);
      }
    }
    for (int h = 0; h < 2; ++h) {
      for (int k = 0; k < 64; ++k) {
        const int n = v::poll_cq(side_[h].rcq, static_cast<int>(wc.size()), wc.data());
        if (n <= 0) break;
        for (int j = 0; j < n; ++j) on_recv_wc(h, wc[j]);
      }
    }
    std::erase_if(recs_, [](const WriteRec& r) { return r.send_done && (r.recv_done || !r.imm); });
  }

  // The MR's bytes while it is deregistered: nothing may write them.
  static void check_freed(const Side& s) {
    for (size_t k = 0; k < kMrBytes; ++k) {
      if (s.region[kGuardBytes + k] != kMrcFreedByte) fail("a deregistered MR's byte changed");
    }
  }

  void remr(int h, bool reg) {
    Side& s = side_[h];
    taint_to(h);
    if (s.mr != nullptr) {
      if (v::dereg_mr(s.mr) != 0) fail("dereg_mr");
      s.mr = nullptr;
      if (!reg) {
        std::memset(s.mr_base(), kMrcFreedByte, kMrBytes);
        return;
      }
    } else {
      if (!reg) return;
      check_freed(s);
    }
    s.mr = v::reg_mr(s.pd, s.mr_base(), kMrBytes, kAllAccess);
    if (s.mr == nullptr) fail("reg_mr again");
    s.key = s.mr->rkey;
  }

  NicNode node_;
  std::array<Side, 2> side_;
  std::array<bool, 4> port_up_{};
  std::vector<Held> held_;
  std::vector<WriteRec> recs_;
  TimeNs now_ = TimeNs::from_us(1);
  uint64_t next_wr_id_ = 1;
  uint64_t checked_writes_ = 0;
  uint64_t checked_imms_ = 0;
  std::array<uint8_t, 8192> frame_{};
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  g_pool = sf::fuzz::start_eal(kTarget, (*argv)[0], kPoolMbufs, kDataRoom, g_reserve);
  g_verbose = sf::fuzz::env_flag("SF_FUZZ_MRC_VERBOSE");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const unsigned avail_before = rte_mempool_avail_count(g_pool);
  {
    Replay r;
    r.run(data, size);
    r.drain();
    if (g_verbose) r.print();
  }
  sf::fuzz::check_no_leak(kTarget, g_pool, avail_before, " the node was destroyed");
  return 0;
}
