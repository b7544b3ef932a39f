// MRC WRITE against RC WRITE in process: two NicNodes (one host, one port
// each) wired back to back by direct calls on one thread (a.transmit ->
// b.receive, b.transmit -> a.receive, advance() when due) in virtual time
// (a fixed step per loop turn, so no timer fires spuriously on a loaded
// machine), one QP pair per run: RC (QpType::kRc) or MRC (QpType::kMrc,
// default profile: 128 EVs, SACK every 4 packets, window one BDP), the same
// message size, path MTU (4096) and send queue depth (64 WRITEs kept posted).
// It is the CPU the NIC pair spends per data frame, sender and receiver
// together (CPU time of this thread): what SACK tracking, EV choice and
// per-packet placement bookkeeping cost over RC's go-back-N.
//
// Rounds are interleaved (RC, MRC, RC, MRC, ...) so drifting load on a
// shared host hits both alike; the medians are reported. One JSON line per
// message size:
//  {"bench":"mrc_node","size":65536,"mtu":4096,"rounds":5,"seconds":0.3,
//   "rc_ns_per_frame":..,"mrc_ns_per_frame":..,"ratio":rc/mrc (MRC throughput
//   per CPU-second relative to RC's; goal >= 0.9),"ratio_paired": the median
//   over rounds of each round's RC ns / the MRC ns of the round right after
//   it (less moved by load that changes between rounds),"rc_gbps":..,"mrc_gbps":..,
//   "mrc_rtx":retransmissions in all MRC rounds (0 expected),
//   "rc_acks_per_frame" / "mrc_acks_per_frame": ACKs / SACKs per data frame}
// Usage: mrc_node_bench [--seconds S] [--rounds N] [--sizes 65536,4096] [--only rc|mrc]
//                       [--frames N]
// (--only: run one transport, no JSON; for perf / callgrind. --frames: with
// --only, stop once the sender has sent N data frames instead of after S
// seconds of CPU, so a callgrind / cachegrind count covers the same work on
// every run: bench/nic/mrc_instr.sh.)
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "common/dpdk/eal.h"
#include "nic/host/nic_node.h"
#include "nic/mrc/transport.h"
#include "nic/verbs/device.h"

namespace {

using namespace sf;
using namespace sf::nic;
namespace v = sf::nic::verbs;

constexpr uint32_t kMtu = 4096;
constexpr uint32_t kDepth = 64;
constexpr TimeNs kStep(100);  // virtual time per loop turn

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

NicConfig node_cfg(int i) {
  NicConfig c;
  HostConfig h;
  h.name = "h" + std::to_string(i);
  h.mac.bytes = {0x02, 0x4D, 0x52, 0x43, 0, static_cast<uint8_t>(i + 1)};
  h.ipv4 = wire::Ipv4Addr{{10, 8, 0, static_cast<uint8_t>(i + 1)}};
  h.ports = {0};
  c.hosts.push_back(h);
  NicPortConfig p;
  p.line_rate = BitRate::gbps(400);
  c.ports.push_back(p);
  return c;
}

struct Side {
  std::unique_ptr<v::Context> ctx;
  v::Pd* pd = nullptr;
  v::Cq* cq = nullptr;
  v::Qp* qp = nullptr;
  std::vector<uint8_t> buf;
  v::Mr* mr = nullptr;
};

void die(const char* what) {
  std::fprintf(stderr, "mrc_node_bench: %s\n", what);
  std::exit(1);
}

void setup(NicNode& n, Side& s, v::QpType type, size_t bytes) {
  s.ctx = v::open_device(n, 0);
  s.pd = v::alloc_pd(s.ctx.get());
  s.cq = v::create_cq(s.ctx.get(), 1024);
  v::QpInitAttr ia;
  ia.send_cq = s.cq;
  ia.recv_cq = s.cq;
  ia.qp_type = type;
  ia.cap.max_send_wr = kDepth;
  ia.cap.max_recv_wr = 16;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  s.qp = v::create_qp(s.pd, &ia);
  s.buf.assign(bytes, 0x5A);
  s.mr = v::reg_mr(s.pd, s.buf.data(), s.buf.size(),
                   v::kAccessLocalWrite | v::kAccessRemoteWrite | v::kAccessRemoteRead);
  if (s.qp == nullptr || s.mr == nullptr) die("verbs setup");
}

void connect(Side& self, const Side& peer, uint32_t sq_psn, uint32_t rq_psn) {
  v::QpAttr a;
  a.qp_state = v::QpState::kInit;
  a.port_num = 1;
  a.qp_access_flags = v::kAccessRemoteWrite | v::kAccessLocalWrite;
  if (v::modify_qp(self.qp, &a, v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags) != 0) die("INIT");
  const rc::LocalAddr& pl = peer.ctx->host().local();
  v::QpAttr r;
  r.qp_state = v::QpState::kRtr;
  r.path_mtu = v::Mtu::k4096;
  r.dest_qp_num = peer.qp->qp_num();
  r.rq_psn = rq_psn;
  r.max_dest_rd_atomic = 16;
  r.min_rnr_timer = 1;
  r.ah_attr.is_global = 1;
  r.ah_attr.port_num = 1;
  r.ah_attr.grh.dgid = v::gid_from_ipv4(pl.ipv4);
  r.ah_attr.grh.traffic_class = 26 << 2;
  for (int i = 0; i < 6; ++i) r.ah_attr.dmac[i] = pl.mac.bytes[i];
  if (v::modify_qp(self.qp, &r,
                   v::kQpState | v::kQpAv | v::kQpPathMtu | v::kQpDestQpn | v::kQpRqPsn | v::kQpMaxDestRdAtomic |
                       v::kQpMinRnrTimer) != 0) {
    die("RTR");
  }
  v::QpAttr s;
  s.qp_state = v::QpState::kRts;
  s.sq_psn = sq_psn;
  s.max_rd_atomic = 16;
  s.retry_cnt = 7;
  s.rnr_retry = 7;
  s.timeout = 14;
  if (v::modify_qp(self.qp, &s,
                   v::kQpState | v::kQpSqPsn | v::kQpMaxQpRdAtomic | v::kQpRetryCnt | v::kQpRnrRetry | v::kQpTimeout) !=
      0) {
    die("RTS");
  }
}

struct Run {
  double cpu_s = 0;
  uint64_t frames = 0;
  uint64_t bytes = 0;
  uint64_t rtx = 0;
  uint64_t acks = 0;  // ACKs / SACKs the responder sent
};

[[gnu::noinline]] Run run(rte_mempool* pool, bool mrc, uint32_t size, double seconds, uint64_t frames = 0) {
  NicNode a(node_cfg(0), pool);
  NicNode b(node_cfg(1), pool);
  Side x, y;
  const v::QpType type = mrc ? v::QpType::kMrc : v::QpType::kRc;
  setup(a, x, type, size);
  setup(b, y, type, size);
  connect(x, y, 0x100, 0x200);
  connect(y, x, 0x200, 0x100);
  auto post = [&](uint64_t id) {
    v::Sge sge{reinterpret_cast<uint64_t>(x.buf.data()), size, x.mr->lkey};
    v::SendWr wr;
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = v::WrOpcode::kRdmaWrite;
    wr.send_flags = v::kSendSignaled;
    wr.rdma.remote_addr = reinterpret_cast<uint64_t>(y.buf.data());
    wr.rdma.rkey = y.mr->rkey;
    v::SendWr* bad = nullptr;
    if (v::post_send(x.qp, &wr, &bad) != 0) die("post_send");
  };
  uint64_t id = 0;
  for (uint32_t i = 0; i < kDepth; ++i) post(++id);
  std::array<rte_mbuf*, 32> burst{};
  std::array<v::Wc, 32> wc{};
  TimeNs now(1000);
  Run r;
  uint64_t done = 0;
  const double cpu0 = thread_cpu_s();
  const uint64_t f0 = x.qp->counters().tx_data_pkts;
  double cpu = 0;
  for (uint64_t turn = 0;; ++turn) {
    now += kStep;
    for (NicNode* n : {&a, &b}) {
      if (n->next_wakeup(now) <= now) n->advance(now);
    }
    const uint16_t k = a.transmit(0, std::span<rte_mbuf*>(burst.data(), burst.size()), now);
    if (k > 0) b.receive(0, std::span<rte_mbuf*>(burst.data(), k), now);
    const uint16_t m = b.transmit(0, std::span<rte_mbuf*>(burst.data(), burst.size()), now);
    if (m > 0) a.receive(0, std::span<rte_mbuf*>(burst.data(), m), now);
    const int n = v::poll_cq(x.cq, static_cast<int>(wc.size()), wc.data());
    for (int i = 0; i < n; ++i) {
      if (wc[static_cast<size_t>(i)].status != v::WcStatus::kSuccess) die("a WRITE failed");
      ++done;
      post(++id);
    }
    if (frames != 0) {
      if (x.qp->counters().tx_data_pkts - f0 >= frames) {
        cpu = thread_cpu_s() - cpu0;
        break;
      }
    } else if ((turn & 1023) == 0 && (cpu = thread_cpu_s() - cpu0) >= seconds) {
      break;
    }
  }
  r.cpu_s = cpu;
  r.frames = x.qp->counters().tx_data_pkts - f0;
  r.bytes = done * size;
  r.rtx = x.qp->counters().tx_retransmit_pkts;
  r.acks = y.qp->counters().tx_acks;
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0.3;
  int rounds = 5;
  std::vector<uint32_t> sizes{65536, 4096};
  int only = -1;  // -1 both, 0 RC, 1 MRC
  uint64_t frames = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--only" && i + 1 < argc) {
      const std::string o = argv[++i];
      if (o != "rc" && o != "mrc") {
        std::fprintf(stderr, "mrc_node_bench: --only: rc or mrc\n");
        return 2;
      }
      only = o == "mrc" ? 1 : 0;
    } else if (a == "--frames" && i + 1 < argc) {
      frames = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (char* tok = std::strtok(argv[++i], ","); tok != nullptr; tok = std::strtok(nullptr, ",")) {
        sizes.push_back(static_cast<uint32_t>(std::strtoul(tok, nullptr, 10)));
      }
    } else {
      std::fprintf(stderr,
                   "usage: mrc_node_bench [--seconds S] [--rounds N] [--sizes 65536,4096] [--only rc|mrc] [--frames N]\n");
      return 2;
    }
  }
  if (frames != 0 && only < 0) {
    std::fprintf(stderr, "mrc_node_bench: --frames needs --only rc|mrc\n");
    return 2;
  }
  for (const uint32_t s : sizes) {
    if (s == 0 || s > (64u << 20)) {
      std::fprintf(stderr, "mrc_node_bench: --sizes: each 1..64 MiB\n");
      return 2;
    }
  }
  auto eal = sf::dpdk::init_eal({argv[0], "--no-huge", "--no-pci", "--log-level", "*:error", "--no-telemetry"});
  if (!eal) {
    std::fprintf(stderr, "mrc_node_bench: EAL: %s\n", eal.error().c_str());
    return 1;
  }
  rte_mempool* pool = rte_pktmbuf_pool_create("mrc_bench", 16383, 256, 0, 8320, SOCKET_ID_ANY);
  if (pool == nullptr) die("no mempool");
  for (const uint32_t size : sizes) {
    if (only >= 0) {
      const Run r = run(pool, only == 1, size, seconds, frames);
      std::fprintf(stderr, "mrc_node_bench: %s %u B: %.1f ns per frame (%lu data frames, %lu acks)\n",
                   only == 1 ? "mrc" : "rc", size, r.cpu_s * 1e9 / static_cast<double>(std::max<uint64_t>(r.frames, 1)),
                   r.frames, r.acks);
      continue;
    }
    std::vector<double> rc_ns, mrc_ns, rc_gbps, mrc_gbps, rc_acks, mrc_acks, paired;
    uint64_t mrc_rtx = 0;
    for (int round = 0; round < rounds; ++round) {
      for (const bool mrc : {false, true}) {
        const Run r = run(pool, mrc, size, seconds);
        if (r.frames == 0) die("no frames sent");
        (mrc ? mrc_ns : rc_ns).push_back(r.cpu_s * 1e9 / static_cast<double>(r.frames));
        (mrc ? mrc_gbps : rc_gbps).push_back(static_cast<double>(r.bytes) * 8 / r.cpu_s / 1e9);
        if (mrc) mrc_rtx += r.rtx;
        (mrc ? mrc_acks : rc_acks).push_back(static_cast<double>(r.acks) / static_cast<double>(r.frames));
      }
      paired.push_back(rc_ns.back() / mrc_ns.back());
    }
    const double rn = median(rc_ns), mn = median(mrc_ns);
    std::printf(
        "{\"bench\":\"mrc_node\",\"size\":%u,\"mtu\":%u,\"rounds\":%d,\"seconds\":%.2f,\"rc_ns_per_frame\":%.1f,"
        "\"mrc_ns_per_frame\":%.1f,\"ratio\":%.3f,\"ratio_paired\":%.3f,\"rc_gbps\":%.2f,\"mrc_gbps\":%.2f,\"mrc_rtx\":%llu,\"rc_acks_per_frame\":%.3f,\"mrc_acks_per_frame\":%.3f}\n",
        size, kMtu, rounds, seconds, rn, mn, rn / mn, median(paired), median(rc_gbps), median(mrc_gbps),
        static_cast<unsigned long long>(mrc_rtx), median(rc_acks), median(mrc_acks));
    std::fflush(stdout);
  }
  rte_mempool_free(pool);
  sf::dpdk::cleanup_eal();
  return 0;
}
