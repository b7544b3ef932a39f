// libFuzzer target over the NIC receive path: a NicNode with two hosts whose
// RC QPs are connected and in RTS (see nic_fuzz_input.h for the node and the
// input encoding) gets raw frames (any bytes, any length, chained mbufs),
// frames the harness builds from header fields with a correct ICRC (so the
// fuzzer gets past the ICRC check to the QP engine) or a corrupted one, verbs
// posts, the node's own frames wired to the other host (possibly with a bit
// flipped), CQ polls, time steps and MRs deregistered and registered again
// between frames (mid-message), all at increasing virtual times.
// Must never crash or touch memory it does not own (ASan/UBSan); after every
// input: no byte outside the registered regions changed (4 KiB guards around
// each host's MR, an MR of another PD never addressable by the QPs, an MR's
// bytes while it is deregistered); every
// frame the node sends parses and carries a correct ICRC; and once the node
// is destroyed every mbuf is back in the pool.
//
// EAL is set up once per process (--no-huge, no PCI, no shared config); a
// fresh NicNode is built for every input, so an input reproduces alone.
// SF_FUZZ_NIC_VERBOSE=1 prints per input what each port and QP counted.
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

#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "nic/host/nic_node.h"
#include "nic/verbs/device.h"
#include "tests/fuzz/fuzz_eal.h"
#include "tests/fuzz/nic/nic_fuzz_input.h"
#include "tests/support/mbuf_chain.h"
#include "tests/support/nic_connect.h"
#include "tests/support/nic_hosts.h"

namespace {

using sf::TimeNs;
using sf::nic::NicNode;
using sf::nic::test::host_ip4;
using sf::nic::test::host_ip6;
using sf::nic::test::host_mac;
namespace v = sf::nic::verbs;
namespace w = sf::wire;

constexpr const char* kTarget = "fuzz_nic";
constexpr uint32_t kPoolMbufs = 8191;
constexpr uint16_t kDataRoom = 2048;
constexpr uint32_t kMaxBurst = 32;
constexpr TimeNs kRecordStep(50);
constexpr size_t kGuardBytes = 4096;
constexpr size_t kMrBytes = 8192;
constexpr size_t kOtherBytes = 1024;
constexpr uint8_t kGuardByte = 0xA5;
constexpr uint8_t kOtherByte = 0x3C;
constexpr int kAllAccess = v::kAccessLocalWrite | v::kAccessRemoteWrite | v::kAccessRemoteRead;

rte_mempool* g_pool = nullptr;
std::array<rte_mbuf*, 64> g_reserve{};
bool g_verbose = false;

[[noreturn]] void fail(const char* what) { sf::fuzz::fail(kTarget, what); }

sf::nic::NicConfig node_config() {
  sf::nic::NicConfig c;
  for (int i = 0; i < 2; ++i) {
    sf::nic::HostConfig h = sf::nic::test::host_cfg(i, {static_cast<sf::PortId>(i)});
    h.max_qps = 4;
    h.max_mrs = 8;
    h.max_cqs = 4;
    h.max_pds = 4;
    c.hosts.push_back(h);
    sf::nic::NicPortConfig p;
    p.wheel_slots = 1024;
    if (i == 1) {
      p.rx_drain_rate = sf::BitRate::gbps(10);
      p.rx_ring_pkts = 16;
      p.pfc_generate_mask = 1u << 3;
      p.pfc_backlog = sf::Hysteresis{4096, 2048};
    }
    c.ports.push_back(p);
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
  v::Qp* qp = nullptr;
  v::Qp* idle_qp = nullptr;  // created, left in RESET
  std::vector<uint8_t> region = std::vector<uint8_t>(kGuardBytes + kMrBytes + kGuardBytes, kGuardByte);
  std::vector<uint8_t> other_buf = std::vector<uint8_t>(kOtherBytes, kOtherByte);
  v::Mr* mr = nullptr;     // nullptr while deregistered (remr)
  uint32_t key = 0;        // mr's lkey = rkey, or its last one while deregistered
  v::Mr* mr_ro = nullptr;
  v::Mr* other = nullptr;
  uint8_t* mr_base() { return region.data() + kGuardBytes; }
  uint64_t va() { return reinterpret_cast<uint64_t>(mr_base()); }
};

v::Qp* new_qp(Side& s) {
  v::QpInitAttr ia;
  ia.send_cq = s.scq;
  ia.recv_cq = s.rcq;
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
  s.scq = v::create_cq(s.ctx.get(), 256);
  s.rcq = v::create_cq(s.ctx.get(), 256);
  if (s.ctx == nullptr || s.pd == nullptr || s.other_pd == nullptr || s.scq == nullptr || s.rcq == nullptr) {
    fail("verbs setup");
  }
  s.qp = new_qp(s);
  s.idle_qp = new_qp(s);
  std::memset(s.mr_base(), 0, kMrBytes);
  s.mr = v::reg_mr(s.pd, s.mr_base(), kMrBytes, kAllAccess);
  s.mr_ro = v::reg_mr(s.pd, s.mr_base(), kMrBytes, v::kAccessLocalWrite);
  s.other = v::reg_mr(s.other_pd, s.other_buf.data(), kOtherBytes, kAllAccess);
  if (s.mr == nullptr || s.mr_ro == nullptr || s.other == nullptr) fail("reg_mr");
  s.key = s.mr->rkey;
}

void connect(Side& self, const Side& peer, uint32_t sq_psn, uint32_t rq_psn) {
  sf::nic::test::ConnParams p;
  p.mtu = v::Mtu::k256;
  p.timeout = 8;  // 1 ms
  p.retry_cnt = 2;
  p.rnr_retry = 2;
  p.sq_psn = sq_psn;
  p.rq_psn = rq_psn;
  p.traffic_class = 26 << 2 | 2;
  p.rd_atomic = 4;
  p.access = kAllAccess;
  if (sf::nic::test::connect_qp(self.qp, *peer.ctx, *peer.qp, p) != 0) fail("connecting a QP (INIT, RTR or RTS)");
}

// Every frame the node sends must parse and, if RoCE, carry a correct ICRC:
// whatever it received, the NIC never emits a malformed frame.
void check_sent(const rte_mbuf* m) {
  static std::array<uint8_t, 16384> buf;
  if (m->pkt_len > buf.size()) fail("the node sent a frame longer than 16 KiB");
  const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, buf.data());
  if (p == nullptr) fail("the node sent an mbuf whose pkt_len exceeds its segments");
  if (p != buf.data()) std::memcpy(buf.data(), p, m->pkt_len);
  const std::span<const uint8_t> f(buf.data(), m->pkt_len);
  const w::FrameInfo fi = w::parse_frame(f);
  if (!fi.ok()) {
    std::fprintf(stderr, "fuzz_nic: sent frame rejected by parse_frame: %s\n", w::to_string(fi.reason));
    std::abort();
  }
  if (fi.bth != nullptr && w::icrc_verify(f, fi) != w::IcrcStatus::kOk) fail("the node sent a frame with a bad ICRC");
}

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

bool is_response(uint8_t op) { return op >= 0x0D && op <= 0x12; }

class Replay {
 public:
  Replay() : node_(node_config(), g_pool) {
    setup_side(node_, 0, side_[0]);
    setup_side(node_, 1, side_[1]);
    connect(side_[0], side_[1], 0xFFFFF0, 0x100);  // host 0's send PSNs wrap soon
    connect(side_[1], side_[0], 0x100, 0xFFFFF0);
    // Host 0's QP runs DCQCN (CNPs from host 1 or crafted ones cut its rate).
    sf::nic::CcChoice cc;
    cc.algorithm = sf::nic::CcAlgorithm::kDcqcn;
    side_[0].qp->set_congestion_control(cc, sf::BitRate::gbps(100));
  }

  void run(const uint8_t* data, size_t size) {
    size_t i = 0;
    while (i < size) {
      const uint8_t op = data[i++];
      const uint16_t port = op & 1;
      if (op < sf::fuzz::kNicOpCrafted) {
        if (i + 2 > size) break;
        const size_t len = std::min<size_t>(be16(data + i), size - i - 2);
        i += 2;
        rx(port, {data + i, len}, static_cast<uint32_t>((op >> 1) & 0x1F) * 64);
        i += len;
      } else if (op < sf::fuzz::kNicOpPost) {
        if (i + sf::fuzz::kCraftedBytes > size) break;
        crafted(port, op, data + i);
        i += sf::fuzz::kCraftedBytes;
      } else if (op < sf::fuzz::kNicOpCtrl) {
        if (i + 4 > size) break;
        post(side_[port], side_[port ^ 1], (op >> 1) & 7, be16(data + i), be16(data + i + 2));
        i += 4;
      } else {
        const uint8_t kind = (op >> 1) & 0x1F;
        if (kind == sf::fuzz::kNicCtrlDrop || kind == sf::fuzz::kNicCtrlWire) {
          if (i >= size) break;
          tx(port, uint32_t{data[i++]} % kMaxBurst + 1, kind == sf::fuzz::kNicCtrlWire);
        } else if (kind == sf::fuzz::kNicCtrlTime) {
          if (i >= size) break;
          const uint8_t step = data[i++];
          now_ += step == 0xFF ? TimeNs::from_ms(50) : TimeNs::from_us(step);
        } else if (kind == sf::fuzz::kNicCtrlCorrupt) {
          if (i + 2 > size) break;
          corrupt(port, be16(data + i));
          i += 2;
        } else if (kind == sf::fuzz::kNicCtrlPoll) {
          poll_all();
        } else if (kind == sf::fuzz::kNicCtrlRemr) {
          if (i >= size) break;
          remr(side_[port], (data[i++] & 1) != 0);
        }
      }
      now_ += kRecordStep;
      if (node_.next_wakeup(now_) <= now_) node_.advance(now_);
    }
  }

  // Time moves on until the node has nothing left to do (retries exhaust,
  // the receive ring drains, PFC expires); everything sent is freed.
  void drain() {
    for (int round = 0; round < 400; ++round) {
      now_ += TimeNs::from_ms(10);
      node_.advance(now_);
      bool sent = false;
      for (uint16_t p = 0; p < 2; ++p) {
        while (tx(p, kMaxBurst, false) > 0) sent = true;
      }
      poll_all();
      if (!sent && node_.next_wakeup(now_) == TimeNs::max() && node_.rx_backlog_bytes(1) == 0) return;
    }
    // Not idle after 4 s of virtual time: only a timer that keeps re-arming
    // without sending could do that.
    if (node_.rx_backlog_bytes(1) != 0) fail("the receive ring did not drain");
  }

  void check_memory() {
    for (const Side& s : side_) {
      if (s.mr == nullptr) check_freed(s);
      for (size_t k = 0; k < kGuardBytes; ++k) {
        if (s.region[k] != kGuardByte) fail("a guard byte before an MR changed");
        if (s.region[kGuardBytes + kMrBytes + k] != kGuardByte) fail("a guard byte after an MR changed");
      }
      for (uint8_t c : s.other_buf) {
        if (c != kOtherByte) fail("the other PD's MR changed");
      }
    }
  }

  // SF_FUZZ_NIC_VERBOSE=1: what the input did (per port and per QP).
  void print() const {
    for (uint16_t p = 0; p < 2; ++p) {
      const sf::nic::NicPortCounters& c = node_.counters(p);
      std::fprintf(stderr, "port %u: rx %lu tx %lu ctrl %lu pfc tx %lu rx %lu", p, c.rx_pkts, c.tx_pkts, c.tx_ctrl_pkts,
                   c.tx_pfc_frames, c.rx_pfc_frames);
      for (int k = 0; k < sf::nic::kNumRxDrops; ++k) {
        if (c.drops[k] != 0) std::fprintf(stderr, " %s=%lu", sf::nic::to_string(static_cast<sf::nic::RxDrop>(k)), c.drops[k]);
      }
      const v::Qp& qp = *side_[p].qp;
      std::fprintf(stderr, "\n  qp %#x state %d:", qp.qp_num(), static_cast<int>(qp.state()));
      for (int k = 0; k < sf::nic::rc::kNumRxActions; ++k) {
        const uint64_t n = qp.counters().rx[k];
        if (n != 0) std::fprintf(stderr, " %s=%lu", sf::nic::rc::to_string(static_cast<sf::nic::rc::RxAction>(k)), n);
      }
      std::fprintf(stderr, " tx_data %lu acks %lu naks %lu cnps %lu timeouts %lu\n", qp.counters().tx_data_pkts,
                   qp.counters().tx_acks, qp.counters().tx_naks, qp.counters().tx_cnps, qp.counters().timeouts);
    }
  }

 private:
  void rx(uint16_t port, std::span<const uint8_t> frame, uint32_t seg) {
    rte_mbuf* m = sf::test::make_mbuf_chain(g_pool, frame, seg);
    if (m == nullptr) return;
    node_.receive(port, {&m, 1}, now_);
  }

  void crafted(uint16_t port, uint8_t op, const uint8_t* r) {
    Side& dst = side_[port];
    const int src = port ^ 1;
    w::RoceFrameSpec s;
    s.l2.dst = host_mac(port);
    s.l2.src = host_mac(src);
    if ((r[4] & 0x80) != 0) s.l2.vlan = w::VlanSpec{3, false, 7};
    const w::Ecn ecn = (r[4] & 0x40) != 0 ? w::Ecn::kCe : w::Ecn::kEct0;
    if ((op & 2) != 0) {
      w::Ipv6Spec ip;
      ip.src = host_ip6(src);
      ip.dst = host_ip6(port);
      ip.dscp = 26;
      ip.ecn = ecn;
      s.l3 = ip;
    } else {
      w::Ipv4Spec ip;
      ip.src = host_ip4(src);
      ip.dst = host_ip4(port);
      ip.dscp = 26;
      ip.ecn = ecn;
      s.l3 = ip;
    }
    const uint8_t opcode = r[0];
    const v::Qp* qp = r[1] == 0 ? dst.qp : r[1] == 1 ? dst.idle_qp : nullptr;
    const auto delta = static_cast<int16_t>(be16(r + 2));
    uint32_t base = 0;
    if (qp != nullptr) base = is_response(opcode) ? qp->acked_psn().value() + 1 : qp->expected_psn().value();
    s.bth.opcode = static_cast<w::Opcode>(opcode);
    s.bth.dest_qp = qp != nullptr ? qp->qp_num() : r[1];
    s.bth.psn = w::Psn((base + static_cast<uint32_t>(static_cast<int32_t>(delta))) & 0xFFFFFF);
    s.bth.ack_req = (r[4] & 1) != 0;
    s.bth.se = (r[4] & 2) != 0;
    s.bth.fecn = (r[4] & 4) != 0;
    s.bth.becn = (r[4] & 8) != 0;
    const auto va_off = static_cast<int16_t>(be16(r + 5));
    const uint8_t rsel = (op >> 3) & 7;
    s.ext.reth_va = dst.va() + static_cast<uint64_t>(static_cast<int64_t>(va_off));
    s.ext.reth_rkey = rsel == 1   ? dst.mr_ro->rkey
                      : rsel == 2 ? dst.other->rkey
                      : rsel == 3 ? uint32_t{r[1]} << 24 | uint32_t{r[11]} << 8 | r[0]
                                  : dst.key;
    if (rsel == 2) s.ext.reth_va = reinterpret_cast<uint64_t>(dst.other_buf.data()) + static_cast<uint16_t>(va_off) % 2048;
    s.ext.reth_dma_length = be16(r + 7);
    s.ext.aeth_syndrome = r[11];
    s.ext.aeth_msn = dst.qp->next_psn().value() & 0xFF;
    s.ext.immdt = uint32_t{r[11]} * 0x01010101u;
    s.ext.atomic_va = s.ext.reth_va;
    s.ext.atomic_rkey = s.ext.reth_rkey;
    const size_t pay = std::min<size_t>(be16(r + 9), sf::fuzz::kMaxCraftedPayload);
    std::array<uint8_t, sf::fuzz::kMaxCraftedPayload> payload;
    for (size_t k = 0; k < pay; ++k) payload[k] = static_cast<uint8_t>(k * 7 + r[11]);
    const size_t bytes = w::roce_frame_bytes(s, pay);
    if (bytes == 0 || bytes > frame_.size()) return;  // unknown opcode / too long: a raw record covers those
    const w::BuildResult br = w::build_roce_frame({frame_.data(), bytes}, s, {payload.data(), pay});
    if (!br.ok()) return;
    if ((op & 4) != 0) frame_[bytes - 1 - (r[11] & 3)] ^= static_cast<uint8_t>(1u << (r[11] >> 5));
    rx(port, {frame_.data(), bytes}, 0);
  }

  void post(Side& self, Side& peer, uint8_t kind, uint16_t len, uint16_t off) {
    const uint32_t l = len % (kMrBytes + 512);
    const uint64_t lo = off % kMrBytes;
    const uint32_t local_len = static_cast<uint32_t>(std::min<uint64_t>(l, kMrBytes - lo));
    v::Sge sge{self.va() + lo, local_len, self.key};
    if (kind == sf::fuzz::kNicPostRecv) {
      v::RecvWr wr;
      wr.wr_id = next_wr_id_++;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      v::RecvWr* bad = nullptr;
      (void)v::post_recv(self.qp, &wr, &bad);
      return;
    }
    v::SendWr wr;
    wr.wr_id = next_wr_id_++;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = v::kSendSignaled;
    switch (kind) {
      case sf::fuzz::kNicPostSend: wr.opcode = v::WrOpcode::kSend; break;
      case sf::fuzz::kNicPostWrite: wr.opcode = v::WrOpcode::kRdmaWrite; break;
      case sf::fuzz::kNicPostWriteImm: wr.opcode = v::WrOpcode::kRdmaWriteWithImm; break;
      case sf::fuzz::kNicPostRead: wr.opcode = v::WrOpcode::kRdmaRead; break;
      default:
        wr.opcode = v::WrOpcode::kSend;
        wr.send_flags |= v::kSendSolicited | v::kSendFence;
        break;
    }
    wr.imm_data = off;
    // The remote range starts inside the peer's MR but may run past its end.
    wr.rdma.remote_addr = peer.va() + (off * 3u) % kMrBytes;
    wr.rdma.rkey = peer.key;
    v::SendWr* bad = nullptr;
    (void)v::post_send(self.qp, &wr, &bad);
  }

  uint32_t tx(uint16_t port, uint32_t room, bool wire) {
    std::array<rte_mbuf*, kMaxBurst> out{};
    const uint16_t n = node_.transmit(port, std::span<rte_mbuf*>(out.data(), room), now_);
    if (n > room) fail("transmit returned more packets than the room it was given");
    for (uint16_t k = 0; k < n; ++k) {
      if (out[k] == nullptr) fail("transmit returned a null mbuf");
      check_sent(out[k]);
    }
    if (wire && n > 0) {
      node_.receive(port ^ 1, std::span<rte_mbuf*>(out.data(), n), now_);
    } else {
      for (uint16_t k = 0; k < n; ++k) rte_pktmbuf_free(out[k]);
    }
    return n;
  }

  void corrupt(uint16_t port, uint16_t bit) {
    rte_mbuf* m = nullptr;
    if (node_.transmit(port, {&m, 1}, now_) == 0) return;
    if (m == nullptr) fail("transmit returned a null mbuf");
    check_sent(m);
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
    node_.receive(port ^ 1, {&m, 1}, now_);
  }

  // The MR's bytes while it is deregistered: nothing may write them.
  static void check_freed(const Side& s) {
    for (size_t k = 0; k < kMrBytes; ++k) {
      if (s.region[kGuardBytes + k] != sf::fuzz::kFreedByte) fail("a deregistered MR's byte changed");
    }
  }

  void remr(Side& s, bool reg) {
    if (s.mr != nullptr) {
      if (v::dereg_mr(s.mr) != 0) fail("dereg_mr");
      s.mr = nullptr;
      if (!reg) {
        std::memset(s.mr_base(), sf::fuzz::kFreedByte, kMrBytes);
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

  void poll_all() {
    std::array<v::Wc, 16> wc;
    for (Side& s : side_) {
      for (v::Cq* cq : {s.scq, s.rcq}) {
        for (int k = 0; k < 64; ++k) {
          const int n = v::poll_cq(cq, static_cast<int>(wc.size()), wc.data());
          if (n <= 0) break;
        }
      }
    }
  }

  NicNode node_;
  std::array<Side, 2> side_;
  TimeNs now_ = TimeNs::from_us(1);
  uint64_t next_wr_id_ = 1;
  std::array<uint8_t, 8192> frame_{};
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  g_pool = sf::fuzz::start_eal(kTarget, (*argv)[0], kPoolMbufs, kDataRoom, g_reserve);
  g_verbose = sf::fuzz::env_flag("SF_FUZZ_NIC_VERBOSE");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const unsigned avail_before = rte_mempool_avail_count(g_pool);
  {
    Replay r;
    r.run(data, size);
    r.check_memory();
    r.drain();
    r.check_memory();
    if (g_verbose) r.print();
  }
  sf::fuzz::check_no_leak(kTarget, g_pool, avail_before, " the node was destroyed");
  return 0;
}
