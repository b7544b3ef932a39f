// NicNode cost in process, without any PMD: sf-nic's write_bw workload
// (nic/app/perftest_engine) between two NicNodes whose ports are wired back
// to back by direct calls on one thread (a.transmit -> b.receive,
// b.transmit -> a.receive, advance() when due), on the real clock. It is
// the CPU a NIC pair spends per data frame with no driver, no memif and no
// second process to be descheduled, so it is stable on a shared machine
// (CPU time of this thread, not wall time) and it is the binary to run
// under callgrind or perf for where the time goes.
//
// Reference in the same run: the least a copying NIC pair pays per frame,
// the same loop without the NIC: allocate the frame's mbuf chain, copy the
// payload in, copy it out at the "receiver", free.
//
// One JSON line per message size and transmit mode ("tx": "zero_copy" =
// HostConfig::tx_zero_copy on the sender, as sf-nic runs on memif; "copy"):
//  {"bench":"nic_node","size":65536,"value":Gb/s of payload per CPU-second,
//   "unit":"Gb/s","ref":..,"ratio":..,"ns_per_frame":..,"ref_ns_per_frame":..,
//   "split_ns":{"tx":..,"rx":..,"ack_tx":..,"ack_rx":..,"timers":..}}
// Usage: nic_node_bench [--seconds S] [--messages N] [--sizes 65536,64] [--tx zero_copy|copy|both]
//                       [--mbuf-size BYTES]
// (--mbuf-size: the pool's data room, headroom included, as sf-nic's flag;
// default RTE_MBUF_DEFAULT_BUF_SIZE. 8320 makes a copied 4 KiB frame one mbuf.)
// (--messages: a fixed count instead of a duration, for callgrind; the
// reference then copies as many frames as the NIC pair sends, rounded up to
// a burst of 32, so that two runs of different counts differ only by
// per-frame work: instructions per frame = the difference / the frames.)
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "common/dpdk/clock.h"
#include "common/dpdk/eal.h"
#include "nic/app/perftest_engine.h"

namespace {

using namespace sf;
using namespace sf::nic;

constexpr uint32_t kMtu = 4096;
constexpr uint32_t kWireHeader = 14 + 20 + 8 + 12 + 4;  // Eth + IPv4 + UDP + BTH + ICRC

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

app::AppHost app_host(int i) {
  app::AppHost h;
  h.name = "h" + std::to_string(i);
  h.devargs = "bench" + std::to_string(i);
  h.mac.bytes = {0x02, 0x50, 0x46, 0, 0, static_cast<uint8_t>(i + 1)};
  h.ipv4 = std::array<uint8_t, 4>{10, 9, 0, static_cast<uint8_t>(i + 1)};
  h.mtu_bytes = kMtu;
  h.speed_gbps = 800;
  return h;
}

NicConfig node_cfg(const app::AppHost& h) {
  NicConfig c;
  HostConfig hc;
  hc.name = h.name;
  hc.mac.bytes = h.mac.bytes;
  hc.ipv4 = wire::Ipv4Addr{*h.ipv4};
  hc.ports = {0};
  c.hosts.push_back(hc);
  NicPortConfig p;
  p.line_rate = BitRate::gbps(h.speed_gbps);
  c.ports.push_back(p);
  return c;
}

struct Split {
  uint64_t tx = 0, rx = 0, ack_tx = 0, ack_rx = 0, timers = 0;  // TSC cycles
};

struct Run {
  double cpu_s = 0;
  uint64_t frames = 0;
  uint64_t messages = 0;
  Split split;
};

[[gnu::noinline]] Run run_nic(rte_mempool* pool, uint64_t size, double seconds, uint64_t messages, bool zero_copy) {
  const app::AppHost ha = app_host(0);
  const app::AppHost hb = app_host(1);
  NicConfig ca = node_cfg(ha);
  ca.hosts[0].tx_zero_copy = zero_copy;
  NicNode a(ca, pool);
  NicNode b(node_cfg(hb), pool);
  app::AppWorkload w;
  w.type = app::WorkloadType::kWriteBw;
  w.size_bytes = size;
  w.iterations = messages;
  w.duration_s = messages > 0 ? 0 : seconds;
  w.tx_depth = 128;
  w.name = "c";
  w.role = app::Role::kClient;
  app::Workload client(w, ha, a, 0);
  w.name = "s";
  w.role = app::Role::kServer;
  app::Workload server(w, hb, b, 0);
  dpdk::TscClock clock;
  if (!server.connect(client.local_info(), clock.now()).empty() ||
      !client.connect(server.local_info(), clock.now()).empty()) {
    std::fprintf(stderr, "nic_node_bench: connect failed\n");
    std::exit(1);
  }
  app::PerftestEngine ea;
  app::PerftestEngine eb;
  ea.add(&client);
  eb.add(&server);
  a.set_app(&ea);
  b.set_app(&eb);
  std::array<rte_mbuf*, 32> burst{};
  Run r;
  const double cpu0 = thread_cpu_s();
  const uint64_t frames0 = a.counters(0).tx_pkts;
  while (!client.traffic_done()) {
    const TimeNs now = clock.now();
    uint64_t t0 = rte_rdtsc();
    for (NicNode* n : {&a, &b}) {
      if (n->next_wakeup(now) <= now) n->advance(now);
    }
    uint64_t t1 = rte_rdtsc();
    r.split.timers += t1 - t0;
    const uint16_t k = a.transmit(0, std::span<rte_mbuf*>(burst.data(), burst.size()), now);
    t0 = rte_rdtsc();
    r.split.tx += t0 - t1;
    if (k > 0) b.receive(0, std::span<rte_mbuf*>(burst.data(), k), now);
    t1 = rte_rdtsc();
    r.split.rx += t1 - t0;
    const uint16_t m = b.transmit(0, std::span<rte_mbuf*>(burst.data(), burst.size()), now);
    t0 = rte_rdtsc();
    r.split.ack_tx += t0 - t1;
    if (m > 0) a.receive(0, std::span<rte_mbuf*>(burst.data(), m), now);
    r.split.ack_rx += rte_rdtsc() - t0;
  }
  r.cpu_s = thread_cpu_s() - cpu0;
  r.frames = a.counters(0).tx_pkts - frames0;
  r.messages = client.result().messages;
  a.set_app(nullptr);
  b.set_app(nullptr);
  return r;
}

// The floor: per frame, allocate the chain a 4 KiB (or `payload`) frame
// needs, copy the payload in, copy it out, free.
Run run_ref(rte_mempool* pool, uint32_t payload, double seconds, uint64_t frames) {
  std::vector<uint8_t> src(payload + 64, 0x5A);
  std::vector<uint8_t> dst(payload + 64, 0);
  const uint32_t frame = payload + kWireHeader;
  Run r;
  const double cpu0 = thread_cpu_s();
  const uint64_t end = rte_rdtsc() + static_cast<uint64_t>(seconds * static_cast<double>(rte_get_tsc_hz()));
  while (frames > 0 ? r.frames < frames : rte_rdtsc() < end) {
    for (int i = 0; i < 32; ++i) {
      rte_mbuf* head = rte_pktmbuf_alloc(pool);
      if (head == nullptr) std::exit(1);
      rte_mbuf* tail = head;
      uint32_t left = frame;
      uint32_t off = 0;
      for (;;) {
        const uint32_t k = std::min<uint32_t>(left, rte_pktmbuf_tailroom(tail));
        std::memcpy(rte_pktmbuf_mtod(tail, uint8_t*), src.data() + (off % payload), k);
        tail->data_len = static_cast<uint16_t>(k);
        head->pkt_len += k;
        left -= k;
        off += k;
        if (left == 0) break;
        rte_mbuf* seg = rte_pktmbuf_alloc(pool);
        if (seg == nullptr) std::exit(1);
        tail->next = seg;
        tail = seg;
        head->nb_segs++;
      }
      uint32_t out = 0;
      for (rte_mbuf* s = head; s != nullptr; s = s->next) {
        const uint32_t k = std::min<uint32_t>(s->data_len, payload + 64 - out);
        std::memcpy(dst.data() + out, rte_pktmbuf_mtod(s, uint8_t*), k);
        out += k;
      }
      rte_pktmbuf_free(head);
      ++r.frames;
    }
  }
  r.cpu_s = thread_cpu_s() - cpu0;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  uint64_t messages = 0;
  std::vector<bool> modes{true, false};  // zero-copy, copy
  std::vector<uint64_t> sizes{65536, 64};
  uint32_t mbuf_size = RTE_MBUF_DEFAULT_BUF_SIZE;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--tx" && i + 1 < argc) {
      const std::string m = argv[++i];
      modes = m == "copy" ? std::vector<bool>{false} : m == "zero_copy" ? std::vector<bool>{true} : modes;
    } else if (a == "--messages" && i + 1 < argc) {
      messages = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--mbuf-size" && i + 1 < argc) {
      mbuf_size = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
      if (mbuf_size < RTE_PKTMBUF_HEADROOM + 512 || mbuf_size > UINT16_MAX) {
        std::fprintf(stderr, "nic_node_bench: --mbuf-size must be %u..%u\n", RTE_PKTMBUF_HEADROOM + 512, UINT16_MAX);
        return 2;
      }
    } else if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (char* tok = std::strtok(argv[++i], ","); tok != nullptr; tok = std::strtok(nullptr, ",")) {
        sizes.push_back(std::strtoull(tok, nullptr, 10));
      }
    } else {
      std::fprintf(stderr, "usage: nic_node_bench [--seconds S] [--messages N] [--sizes 65536,64] [--tx zero_copy|copy|both] [--mbuf-size BYTES]\n");
      return 2;
    }
  }
  auto eal = sf::dpdk::init_eal({argv[0], "--no-huge", "--no-pci", "--log-level", "*:error", "--no-telemetry"});
  if (!eal) {
    std::fprintf(stderr, "nic_node_bench: EAL: %s\n", eal.error().c_str());
    return 1;
  }
  rte_mempool* pool = rte_pktmbuf_pool_create("bench", 16383, 256, 0, static_cast<uint16_t>(mbuf_size), SOCKET_ID_ANY);
  if (pool == nullptr) {
    std::fprintf(stderr, "nic_node_bench: no mempool\n");
    return 1;
  }
  const double cyc_ns = 1e9 / static_cast<double>(rte_get_tsc_hz());
  for (const uint64_t size : sizes) {
    const uint32_t payload = static_cast<uint32_t>(std::min<uint64_t>(size, kMtu));
    const uint64_t frames_per_msg = (size + kMtu - 1) / kMtu;
    const Run ref = run_ref(pool, payload, seconds, messages * frames_per_msg);
    for (const bool zc : modes) {
    const Run nic = run_nic(pool, size, seconds, messages, zc);
    if (nic.frames == 0) {
      std::fprintf(stderr, "nic_node_bench: no frames sent\n");
      return 1;
    }
    const double ns = nic.cpu_s * 1e9 / static_cast<double>(nic.frames);
    const double ref_ns = ref.cpu_s * 1e9 / static_cast<double>(ref.frames);
    // Payload per CPU-second: Gb/s for big messages, Mpps of messages for small.
    const bool bw = size >= kMtu;
    const double value = bw ? static_cast<double>(nic.messages * size) * 8 / nic.cpu_s / 1e9
                            : static_cast<double>(nic.messages) / nic.cpu_s / 1e6;
    const double ref_value = bw ? payload * 8 / ref_ns : 1e3 / ref_ns;
    auto per = [&](uint64_t cyc) { return static_cast<double>(cyc) * cyc_ns / static_cast<double>(nic.frames); };
    std::printf(
        "{\"bench\":\"nic_node\",\"size\":%llu,\"tx\":\"%s\",\"value\":%.3f,\"unit\":\"%s\",\"ref\":%.3f,\"ratio\":%.3f,"
        "\"ns_per_frame\":%.1f,\"ref_ns_per_frame\":%.1f,\"frames\":%llu,"
        "\"split_ns\":{\"tx\":%.1f,\"rx\":%.1f,\"ack_tx\":%.1f,\"ack_rx\":%.1f,\"timers_app\":%.1f}}\n",
        static_cast<unsigned long long>(size), zc ? "zero_copy" : "copy", value, bw ? "Gb/s" : "Mpps", ref_value, value / ref_value, ns, ref_ns,
        static_cast<unsigned long long>(nic.frames), per(nic.split.tx), per(nic.split.rx), per(nic.split.ack_tx),
        per(nic.split.ack_rx), per(nic.split.timers));
    }
  }
  rte_mempool_free(pool);
  sf::dpdk::cleanup_eal();
  return 0;
}
