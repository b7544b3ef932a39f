// libFuzzer target over the NIC receive path: frames arrive at a NicNode
// whose host has two connected RC QPs (a responder with receives posted and
// MRs surrounded by canaries, a requester with WRITEs and READs in flight).
// Input: a sequence of records
//   [kind u8][seg u8][time step u8][n u8] then n bytes
// kind & 1 = 0: the n bytes are a raw frame (any bytes);
// kind & 1 = 1: a structured RoCE frame to one of our QPs built from the n
//   bytes (opcode, PSN offset from the expected one, RETH, AETH syndrome,
//   payload length, CE mark), with a valid ICRC, so the QP logic is reached.
// seg = mbuf segment size (0 = one segment). Between records the node
// transmits (frames freed) and time advances.
// Must never crash or touch memory it does not own (ASan/UBSan); after each
// input: no byte outside the registered regions changed, every mbuf is back
// in the pool. QPs driven to ERR are reset and reconnected between inputs.
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/wire/frame_builder.h"
#include "nic/host/nic_node.h"
#include "nic/verbs/device.h"
#include "tests/support/mbuf_chain.h"

namespace {

using namespace sf;
using namespace sf::nic;
namespace v = sf::nic::verbs;

constexpr size_t kRegion = 16384;
constexpr size_t kCanary = 4096;

rte_mempool* g_pool = nullptr;
NicNode* g_node = nullptr;
std::unique_ptr<v::Context> g_ctx;
v::Pd* g_pd = nullptr;
v::Cq* g_cq = nullptr;
v::Qp* g_qp[2] = {};
v::Mr* g_mr = nullptr;
std::vector<uint8_t>* g_mem = nullptr;  // canary | region | canary
TimeNs g_now = TimeNs::from_us(1);

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_nic: %s\n", what);
  std::abort();
}

const wire::MacAddr kOurMac{{0x02, 0, 0, 0, 0, 1}};
const wire::MacAddr kPeerMac{{0x02, 0, 0, 0, 0, 2}};
const wire::Ipv4Addr kOurIp{{10, 0, 0, 1}};
const wire::Ipv4Addr kPeerIp{{10, 0, 0, 2}};
constexpr uint32_t kPeerQpn[2] = {0x51, 0x52};

uint64_t region() { return reinterpret_cast<uint64_t>(g_mem->data() + kCanary); }

void connect(v::Qp* qp, uint32_t peer_qpn) {
  v::QpAttr a;
  a.qp_state = v::QpState::kReset;
  if (v::modify_qp(qp, &a, v::kQpState) != 0) fail("reset");
  a = {};
  a.qp_state = v::QpState::kInit;
  a.port_num = 1;
  a.qp_access_flags = v::kAccessRemoteWrite | v::kAccessRemoteRead;
  if (v::modify_qp(qp, &a, v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags) != 0) fail("init");
  a = {};
  a.qp_state = v::QpState::kRtr;
  a.path_mtu = v::Mtu::k256;
  a.dest_qp_num = peer_qpn;
  a.rq_psn = 0x100;
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = 1;
  a.ah_attr.is_global = 1;
  a.ah_attr.sl = 3;
  a.ah_attr.grh.dgid = v::gid_from_ipv4(kPeerIp);
  std::memcpy(a.ah_attr.dmac, kPeerMac.bytes.data(), 6);
  if (v::modify_qp(qp, &a, v::kQpState | v::kQpAv | v::kQpPathMtu | v::kQpDestQpn | v::kQpRqPsn |
                               v::kQpMaxDestRdAtomic | v::kQpMinRnrTimer) != 0) {
    fail("rtr");
  }
  a = {};
  a.qp_state = v::QpState::kRts;
  a.sq_psn = 0x200;
  a.max_rd_atomic = 4;
  a.retry_cnt = 3;
  a.rnr_retry = 3;
  a.timeout = 4;
  if (v::modify_qp(qp, &a, v::kQpState | v::kQpSqPsn | v::kQpMaxQpRdAtomic | v::kQpRetryCnt | v::kQpRnrRetry |
                               v::kQpTimeout) != 0) {
    fail("rts");
  }
  for (int i = 0; i < 4; ++i) {
    v::Sge sge{region() + 1024 * i, 1024, g_mr->lkey};
    v::RecvWr rw;
    rw.sg_list = &sge;
    rw.num_sge = 1;
    v::post_recv(qp, &rw, nullptr);
    v::SendWr wr;
    v::Sge ssge{region() + 8192 + 512 * i, 600, g_mr->lkey};
    wr.sg_list = &ssge;
    wr.num_sge = 1;
    wr.opcode = i % 2 ? v::WrOpcode::kRdmaRead : v::WrOpcode::kRdmaWrite;
    wr.rdma.remote_addr = 0x1000;
    wr.rdma.rkey = 0x77;
    v::post_send(qp, &wr, nullptr);
  }
}

void pull_all() {
  rte_mbuf* out[32];
  for (int guard = 0; guard < 1000; ++guard) {
    const uint16_t n = g_node->transmit(0, out, g_now);
    for (uint16_t i = 0; i < n; ++i) rte_pktmbuf_free(out[i]);
    if (n == 0) return;
  }
}

void feed(std::span<const uint8_t> bytes, uint32_t seg) {
  rte_mbuf* m = sf::test::make_mbuf_chain(g_pool, bytes, seg);
  if (m == nullptr) return;
  g_node->receive(0, {&m, 1}, g_now);
}

// A valid RoCE frame to one of our QPs from the fuzz bytes.
void structured(const uint8_t* d, size_t n, uint32_t seg) {
  auto at = [&](size_t i) -> uint8_t { return i < n ? d[i] : 0; };
  static const wire::Opcode kOps[] = {
      wire::Opcode::kRcSendFirst,         wire::Opcode::kRcSendMiddle,         wire::Opcode::kRcSendLast,
      wire::Opcode::kRcSendLastImm,       wire::Opcode::kRcSendOnly,           wire::Opcode::kRcSendOnlyImm,
      wire::Opcode::kRcWriteFirst,        wire::Opcode::kRcWriteMiddle,        wire::Opcode::kRcWriteLast,
      wire::Opcode::kRcWriteLastImm,      wire::Opcode::kRcWriteOnly,          wire::Opcode::kRcWriteOnlyImm,
      wire::Opcode::kRcReadRequest,       wire::Opcode::kRcReadResponseFirst,  wire::Opcode::kRcReadResponseMiddle,
      wire::Opcode::kRcReadResponseLast,  wire::Opcode::kRcReadResponseOnly,   wire::Opcode::kRcAck,
      wire::Opcode::kCnp,                 wire::Opcode::kRcCompareSwap};
  const wire::Opcode op = kOps[at(0) % (sizeof(kOps) / sizeof(kOps[0]))];
  const int q = at(1) & 1;
  v::Qp* qp = g_qp[q];
  const bool response = op >= wire::Opcode::kRcReadResponseFirst && op <= wire::Opcode::kRcAck;
  const uint32_t base = response ? qp->acked_psn().value() + 1 : qp->expected_psn().value();
  wire::RoceFrameSpec s;
  s.l2 = {kOurMac, kPeerMac, std::nullopt};
  wire::Ipv4Spec ip;
  ip.src = kPeerIp;
  ip.dst = kOurIp;
  ip.ecn = (at(2) & 0x80) ? wire::Ecn::kCe : wire::Ecn::kEct0;
  s.l3 = ip;
  s.bth.opcode = op;
  s.bth.dest_qp = qp->qp_num();
  s.bth.psn = wire::Psn(base + static_cast<uint32_t>(static_cast<int8_t>(at(3))));
  s.bth.ack_req = at(2) & 1;
  // RETH: mostly inside or near the region, with the right key.
  const int64_t off = static_cast<int16_t>(at(4) | (at(5) << 8));
  s.ext.reth_va = region() + static_cast<uint64_t>(off);
  s.ext.reth_rkey = (at(2) & 2) ? (at(6) | (at(7) << 8) | (at(8) << 16)) : g_mr->rkey;
  s.ext.reth_dma_length = at(9) | (at(10) << 8);
  s.ext.aeth_syndrome = at(11);
  s.ext.aeth_msn = at(12);
  s.ext.immdt = at(13);
  const auto layout = wire::opcode_layout(static_cast<uint8_t>(op));
  const size_t pay = layout && layout->payload ? std::min<size_t>(at(14) | ((at(15) & 1) << 8), 300) : 0;
  std::vector<uint8_t> payload(pay);
  for (size_t i = 0; i < pay; ++i) payload[i] = at(16 + i);
  std::vector<uint8_t> frame(wire::roce_frame_bytes(s, pay) + 8);
  const wire::BuildResult r = wire::build_roce_frame(frame, s, payload);
  if (!r.ok()) return;
  frame.resize(r.frame_bytes);
  feed(frame, seg);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  int cpu = 0;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
    while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &cpus)) ++cpu;
  }
  const std::string prefix = "--file-prefix=sf-fuzz-nic-" + std::to_string(getpid());
  std::vector<std::string> args = {(*argv)[0], "--no-huge", "-m", "256", "--no-pci", "--no-shconf",
                                   "--no-telemetry", prefix, "--log-level=*:error", "-l", std::to_string(cpu)};
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  if (rte_eal_init(static_cast<int>(cargs.size()), cargs.data()) < 0) {
    std::fprintf(stderr, "fuzz_nic: rte_eal_init: %s\n", rte_strerror(rte_errno));
    std::abort();
  }
  // No per-lcore cache: rte_mempool_avail_count is then exact.
  g_pool = rte_pktmbuf_pool_create("fuzz_nic", 4095, 0, 0, 512 + RTE_PKTMBUF_HEADROOM, SOCKET_ID_ANY);
  if (g_pool == nullptr) fail("cannot create the mbuf pool");
  NicConfig cfg;
  HostConfig h;
  h.name = "h0";
  h.mac = kOurMac;
  h.ipv4 = kOurIp;
  h.ports = {0};
  h.max_qps = 4;
  cfg.hosts = {h};
  cfg.ports = {NicPortConfig{}};
  g_node = new NicNode(cfg, g_pool);
  g_ctx = v::open_device(*g_node, 0);
  g_pd = v::alloc_pd(g_ctx.get());
  g_cq = v::create_cq(g_ctx.get(), 1 << 16);
  g_mem = new std::vector<uint8_t>(kCanary + kRegion + kCanary, 0);
  g_mr = v::reg_mr(g_pd, g_mem->data() + kCanary, kRegion,
                   v::kAccessLocalWrite | v::kAccessRemoteWrite | v::kAccessRemoteRead);
  for (int q = 0; q < 2; ++q) {
    v::QpInitAttr ia;
    ia.send_cq = g_cq;
    ia.recv_cq = g_cq;
    ia.cap.max_send_wr = 16;
    ia.cap.max_recv_wr = 16;
    g_qp[q] = v::create_qp(g_pd, &ia);
    if (g_qp[q] == nullptr) fail("create_qp");
    connect(g_qp[q], kPeerQpn[q]);
  }
  pull_all();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t i = 0;
  while (i + 4 <= size) {
    const uint8_t kind = data[i];
    const uint8_t seg = data[i + 1];
    const uint8_t step = data[i + 2];
    const size_t n = std::min<size_t>(data[i + 3], size - i - 4);
    const uint8_t* body = data + i + 4;
    const uint32_t seg_bytes = seg < 64 ? 0 : seg;  // chains need room for the headers
    if (kind & 1) {
      structured(body, n, seg_bytes);
    } else {
      feed({body, n}, seg_bytes);
    }
    g_now += TimeNs(static_cast<int64_t>(step) * 100);
    if (kind & 2) g_node->advance(g_now);
    pull_all();
    i += 4 + n;
  }
  // Let every timer run out, then drain.
  g_now += TimeNs::from_ms(1);
  g_node->advance(g_now);
  pull_all();
  v::Wc wc[64];
  while (v::poll_cq(g_cq, 64, wc) > 0) {
  }
  for (size_t k = 0; k < kCanary; ++k) {
    if ((*g_mem)[k] != 0 || (*g_mem)[kCanary + kRegion + k] != 0) fail("a byte outside the registered region changed");
  }
  // Back to a known state for the next input.
  for (int q = 0; q < 2; ++q) connect(g_qp[q], kPeerQpn[q]);
  while (v::poll_cq(g_cq, 64, wc) > 0) {
  }
  pull_all();
  if (rte_mempool_in_use_count(g_pool) != 0) fail("mbuf leak: not every mbuf is back in the pool");
  return 0;
}
