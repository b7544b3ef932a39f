// Runs two NicNodes through a tap in virtual time and writes every frame the
// NICs sent to a pcap, for nic_interop.py to check against scapy's RoCE layer
// (ICRC) and an independent ICRC. The workload covers WRITE FIRST/MIDDLE/
// LAST (4 KiB frames in 2 KiB mbuf segments), SEND_WITH_IMM, READ with
// several responses, WRITE_WITH_IMM, an RNR NAK, a PSN-sequence NAK (the tap
// drops one frame) and a CNP (the tap marks one frame CE).
// usage: nic-interop-helper OUT.pcap   (exit 0 when every WR succeeded)
#include <rte_mbuf.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "common/dpdk/eal.h"
#include "common/dpdk/mempool.h"
#include "common/sim/simulator.h"
#include "common/wire/ipv4.h"
#include "nic/host/nic_node.h"
#include "nic/verbs/device.h"

namespace {

using namespace sf;
using namespace sf::nic;
namespace v = sf::nic::verbs;

struct Record {
  int64_t ns;
  std::vector<uint8_t> bytes;
};

// Two ports, forwarding 0 <-> 1; records every frame; drops the 5th frame
// from port 0 once and marks the 3rd CE (IPv4 checksum fixed; the ICRC does
// not cover TOS).
class Tap final : public Node {
 public:
  uint16_t num_ports() const override { return 2; }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override {
    for (rte_mbuf* m : pkts) {
      Record r{now.ns(), std::vector<uint8_t>(m->pkt_len)};
      const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, r.bytes.data());
      if (p != r.bytes.data()) std::memcpy(r.bytes.data(), p, m->pkt_len);
      records.push_back(std::move(r));
      if (port == 0 && ++from_a_ == 5) {
        rte_pktmbuf_free(m);
        continue;
      }
      if (port == 0 && from_a_ == 3 && m->data_len >= 34) {
        auto* ip = rte_pktmbuf_mtod_offset(m, wire::Ipv4Header*, 14);
        ip->set_dscp_ecn(ip->dscp(), wire::Ecn::kCe);
        wire::ipv4_set_checksum(*ip);
      }
      q_[1 - port].push_back(m);
    }
  }
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs) override {
    if (q_[port].empty() || out.empty()) return 0;
    out[0] = q_[port].front();
    q_[port].pop_front();
    return 1;
  }
  TimeNs next_wakeup(TimeNs) const override { return TimeNs::max(); }
  void advance(TimeNs) override {}
  std::vector<Record> records;

 private:
  std::deque<rte_mbuf*> q_[2];
  int from_a_ = 0;
};

HostConfig host(int i) {
  HostConfig h;
  h.name = "h" + std::to_string(i);
  h.mac = {{0x02, 0, 0, 0, 0, static_cast<uint8_t>(i + 1)}};
  h.ipv4 = wire::Ipv4Addr{{10, 0, 0, static_cast<uint8_t>(i + 1)}};
  h.ports = {0};
  return h;
}

struct Ep {
  std::unique_ptr<v::Context> ctx;
  v::Pd* pd;
  v::Cq* cq;
  v::Qp* qp;
  std::vector<uint8_t> buf;
  v::Mr* mr;
};

Ep make(NicNode& n) {
  Ep e;
  e.ctx = v::open_device(n, 0);
  e.pd = v::alloc_pd(e.ctx.get());
  e.cq = v::create_cq(e.ctx.get(), 64);
  v::QpInitAttr ia;
  ia.send_cq = e.cq;
  ia.recv_cq = e.cq;
  ia.cap.max_send_wr = 16;
  ia.cap.max_recv_wr = 16;
  e.qp = v::create_qp(e.pd, &ia);
  e.buf.assign(1 << 16, 0);
  e.mr = v::reg_mr(e.pd, e.buf.data(), e.buf.size(),
                   v::kAccessLocalWrite | v::kAccessRemoteWrite | v::kAccessRemoteRead);
  return e;
}

int connect(Ep& e, const Ep& peer, uint32_t sq_psn, uint32_t rq_psn) {
  v::QpAttr a;
  a.qp_state = v::QpState::kInit;
  a.port_num = 1;
  a.qp_access_flags = v::kAccessRemoteWrite | v::kAccessRemoteRead;
  int rc = v::modify_qp(e.qp, &a, v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags);
  const rc::LocalAddr& pl = peer.ctx->host().local();
  a = {};
  a.qp_state = v::QpState::kRtr;
  a.path_mtu = v::Mtu::k4096;
  a.dest_qp_num = peer.qp->qp_num();
  a.rq_psn = rq_psn;
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = 1;
  a.ah_attr.is_global = 1;
  a.ah_attr.sl = 3;
  a.ah_attr.grh.dgid = v::gid_from_ipv4(pl.ipv4);
  a.ah_attr.grh.traffic_class = 26 << 2;
  std::memcpy(a.ah_attr.dmac, pl.mac.bytes.data(), 6);
  rc |= v::modify_qp(e.qp, &a, v::kQpState | v::kQpAv | v::kQpPathMtu | v::kQpDestQpn | v::kQpRqPsn |
                                   v::kQpMaxDestRdAtomic | v::kQpMinRnrTimer);
  a = {};
  a.qp_state = v::QpState::kRts;
  a.sq_psn = sq_psn;
  a.max_rd_atomic = 4;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.timeout = 8;
  rc |= v::modify_qp(e.qp, &a, v::kQpState | v::kQpSqPsn | v::kQpMaxQpRdAtomic | v::kQpRetryCnt | v::kQpRnrRetry |
                                   v::kQpTimeout);
  return rc;
}

int post(Ep& e, uint64_t id, v::WrOpcode op, uint32_t off, uint32_t len, uint64_t raddr, uint32_t rkey, uint32_t imm = 0) {
  v::Sge sge{reinterpret_cast<uint64_t>(e.buf.data()) + off, len, e.mr->lkey};
  v::SendWr wr;
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = v::kSendSignaled;
  wr.imm_data = imm;
  wr.rdma.remote_addr = raddr;
  wr.rdma.rkey = rkey;
  return v::post_send(e.qp, &wr, nullptr);
}

int post_recv(Ep& e, uint64_t id, uint32_t off, uint32_t len) {
  v::Sge sge{reinterpret_cast<uint64_t>(e.buf.data()) + off, len, e.mr->lkey};
  v::RecvWr wr;
  wr.wr_id = id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  return v::post_recv(e.qp, &wr, nullptr);
}

// Posts the late receive (after the RNR NAK) on B's thread.
class LateRecv final : public App {
 public:
  explicit LateRecv(Ep& e) : e_(e) {}
  void poll(TimeNs now) override {
    if (!done_ && now >= TimeNs::from_us(60)) {
      done_ = true;
      post_recv(e_, 22, 50000, 4096);
    }
  }
  TimeNs next_wakeup(TimeNs now) const override {
    return !done_ && now < TimeNs::from_us(60) ? TimeNs::from_us(60) : TimeNs::max();
  }

 private:
  Ep& e_;
  bool done_ = false;
};

void write_pcap(const char* path, const std::vector<Record>& recs) {
  FILE* f = std::fopen(path, "wb");
  if (f == nullptr) return;
  const uint32_t gh[6] = {0xa1b2c3d4u, 0x00040002u, 0, 0, 65535, 1};
  std::fwrite(gh, 4, 6, f);
  for (const Record& r : recs) {
    const uint32_t rh[4] = {static_cast<uint32_t>(r.ns / 1000000000), static_cast<uint32_t>(r.ns / 1000 % 1000000),
                            static_cast<uint32_t>(r.bytes.size()), static_cast<uint32_t>(r.bytes.size())};
    std::fwrite(rh, 4, 4, f);
    std::fwrite(r.bytes.data(), 1, r.bytes.size(), f);
  }
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: nic-interop-helper OUT.pcap\n");
    return 2;
  }
  dpdk::EalOptions opts;
  opts.no_telemetry = true;
  auto eal = dpdk::init_eal({argv[0], "--no-huge", "--no-pci", "--log-level", "*:warning"}, opts);
  if (!eal) {
    std::fprintf(stderr, "%s\n", eal.error().c_str());
    return 1;
  }
  auto pool = dpdk::create_pktmbuf_pool("nic_interop", 4095, 64);  // 2 KiB segments: 4 KiB frames are chains
  if (!pool) {
    std::fprintf(stderr, "%s\n", pool.error().c_str());
    return 1;
  }
  int rc = 0;
  {
    NicConfig ca;
    ca.hosts = {host(0)};
    ca.ports = {NicPortConfig{}};
    NicConfig cb;
    cb.hosts = {host(1)};
    cb.ports = {NicPortConfig{}};
    NicNode a(ca, *pool);
    NicNode b(cb, *pool);
    Tap tap;
    sim::Simulator sim(1);
    const auto it = sim.add_node(tap, "tap");
    sim.connect(sim.add_node(a, "a"), 0, it, 0, {BitRate::gbps(100), TimeNs::from_us(1)});
    sim.connect(it, 1, sim.add_node(b, "b"), 0, {BitRate::gbps(100), TimeNs::from_us(1)});
    Ep ea = make(a);
    Ep eb = make(b);
    LateRecv late(eb);
    b.set_app(&late);
    rc |= connect(ea, eb, 0x10, 0x20);
    rc |= connect(eb, ea, 0x20, 0x10);
    for (size_t i = 0; i < ea.buf.size(); ++i) ea.buf[i] = static_cast<uint8_t>(i * 7);
    for (size_t i = 0; i < eb.buf.size(); ++i) eb.buf[i] = static_cast<uint8_t>(i * 13 + 1);
    const uint64_t bb = reinterpret_cast<uint64_t>(eb.buf.data());
    rc |= post_recv(eb, 20, 40000, 4096);
    rc |= post_recv(eb, 21, 45000, 4096);
    rc |= post(ea, 1, v::WrOpcode::kRdmaWrite, 0, 10000, bb, eb.mr->rkey);
    rc |= post(ea, 2, v::WrOpcode::kSendWithImm, 10000, 3000, 0, 0, 0xABCD);
    rc |= post(ea, 3, v::WrOpcode::kRdmaRead, 20000, 9000, bb + 20000, eb.mr->rkey);
    rc |= post(ea, 4, v::WrOpcode::kRdmaWriteWithImm, 30000, 100, bb + 30000, eb.mr->rkey, 7);
    rc |= post(ea, 5, v::WrOpcode::kSend, 31000, 1000, 0, 0);  // no receive left: RNR until 60 us
    if (rc != 0) {
      std::fprintf(stderr, "setup failed\n");
      return 1;
    }
    sim.run_for(TimeNs::from_ms(20));
    v::Wc wc[16];
    const int n = v::poll_cq(ea.cq, 16, wc);
    int ok = 0;
    for (int i = 0; i < n; ++i) ok += wc[i].status == v::WcStatus::kSuccess ? 1 : 0;
    if (ok != 5) {
      std::fprintf(stderr, "%d of 5 WRs succeeded\n", ok);
      rc = 1;
    }
    if (std::memcmp(ea.buf.data() + 20000, eb.buf.data() + 20000, 9000) != 0 ||
        std::memcmp(eb.buf.data(), ea.buf.data(), 10000) != 0) {
      std::fprintf(stderr, "data mismatch\n");
      rc = 1;
    }
    write_pcap(argv[1], tap.records);
    std::printf("%zu frames\n", tap.records.size());
  }
  return rc;
}
