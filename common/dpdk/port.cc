// Port bring-up in the canonical DPDK order (see port.h, STYLE G14):
// dev_info_get -> capability-masked offloads -> configure ->
// adjust_nb_rx_tx_desc -> queue setup on the port's socket -> start -> link.
#include "common/dpdk/port.h"

#include "common/dpdk/burst_guard.h"
#include "common/dpdk/burst_guard_pool.h"
#include "common/dpdk/eal.h"

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_errno.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace sf::dpdk {
namespace {

Error fail(const std::string& port, const std::string& step, int rc) {
  const int e = rc < 0 ? -rc : rc;
  return Error{"port " + port + ": " + step + ": " + rte_strerror(e) + " (" + std::to_string(rc) + ")"};
}

// Port id of the ethdev named `name`, or of the first port whose device is `name`.
bool find_port(const std::string& name, uint16_t* pid) {
  if (rte_eth_dev_get_port_by_name(name.c_str(), pid) == 0) return true;
  uint16_t p = 0;
  RTE_ETH_FOREACH_DEV(p) {
    rte_eth_dev_info info{};
    if (rte_eth_dev_info_get(p, &info) == 0 && info.device != nullptr && name == rte_dev_name(info.device)) {
      *pid = p;
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> existing_port_names() {
  std::vector<std::string> out;
  uint16_t p = 0;
  RTE_ETH_FOREACH_DEV(p) {
    std::array<char, RTE_ETH_NAME_MAX_LEN> name{};
    if (rte_eth_dev_get_name_by_port(p, name.data()) == 0) out.emplace_back(name.data());
  }
  return out;
}

Port::Port(Port&& o) noexcept { *this = std::move(o); }

Port& Port::operator=(Port&& o) noexcept {
  if (this != &o) {
    close();
    name_ = std::move(o.name_);
    driver_ = std::move(o.driver_);
    mtu_note_ = std::move(o.mtu_note_);
    bus_device_ = std::move(o.bus_device_);
    bus_ = std::move(o.bus_);
    port_id_ = o.port_id_;
    mtu_ = o.mtu_;
    unenforced_mtu_ = o.unenforced_mtu_;
    open_ = o.open_;
    probed_ = o.probed_;
    multi_seg_tx_ = o.multi_seg_tx_;
    pool_ = o.pool_;
    guarded_ = o.guarded_;
    burst_faults_ = o.burst_faults_;
    burst_fault_pkts_ = o.burst_fault_pkts_;
    burst_fault_leaked_mbufs_ = o.burst_fault_leaked_mbufs_;
    burst_fault_inexact_ = o.burst_fault_inexact_;
    o.open_ = false;
    o.guarded_ = false;
    o.probed_ = false;
  }
  return *this;
}

std::string memif_devargs_for_mtu(const std::string& devargs, uint32_t mtu_bytes) {
  constexpr uint32_t kMemifDefaultBsize = 2048;
  constexpr uint32_t kFrameExtraBytes = 14 + 4 + 4;  // Ethernet + VLAN + FCS room beyond the L3 MTU
  if (devargs.rfind("net_memif", 0) != 0 || devargs.find("bsize=") != std::string::npos) return devargs;
  if (mtu_bytes == 0 || mtu_bytes + kFrameExtraBytes <= kMemifDefaultBsize) return devargs;
  uint32_t b = kMemifDefaultBsize;
  while (b < mtu_bytes + kFrameExtraBytes && b < 32768) b <<= 1;  // memif's bsize is 16 bits
  return devargs + ",bsize=" + std::to_string(b);
}

std::string memif_devargs_for_link(const std::string& devargs, uint32_t mtu_bytes) {
  constexpr uint32_t kFrameExtraBytes = 14 + 4 + 4;  // as memif_devargs_for_mtu
  return memif_devargs_for_mtu(devargs, std::max(mtu_bytes, kMemifLinkMaxFrameBytes - kFrameExtraBytes));
}

Result<Port> Port::open(const PortConfig& cfg_in, rte_mempool* pool) {
  PortConfig cfg = cfg_in;
  cfg.devargs = memif_devargs_for_mtu(cfg.devargs, cfg.mtu);
  Port p;
  // 0. Resolve the devargs to a port: existing (--vdev, -a) or hotplugged now.
  rte_devargs da{};
  if (int rc = rte_devargs_parse(&da, cfg.devargs.c_str()); rc < 0) {
    return Error{"port " + cfg.devargs + ": rte_devargs_parse: no bus recognises this device (typo in the "
                 "driver name, PMD not installed, or a PCI address that is not present?) (" + std::to_string(rc) + ")"};
  }
  const std::string dev_name = da.name;
  const std::string bus = da.bus != nullptr ? rte_bus_name(da.bus) : "";
  rte_devargs_reset(&da);
  p.name_ = dev_name;
  uint16_t pid = 0;
  if (!find_port(dev_name, &pid)) {
    if (int rc = rte_dev_probe(cfg.devargs.c_str()); rc < 0) return fail(dev_name, "rte_dev_probe(" + cfg.devargs + ")", rc);
    p.probed_ = true;
    p.bus_ = bus;
    p.bus_device_ = dev_name;
    if (!find_port(dev_name, &pid)) return Error{"port " + dev_name + ": probed but no ethdev port found"};
  }
  p.port_id_ = pid;
  p.open_ = true;  // from here on close() cleans up

  // 1. Device info and capability-masked offloads.
  rte_eth_dev_info info{};
  if (int rc = rte_eth_dev_info_get(pid, &info); rc != 0) return fail(dev_name, "rte_eth_dev_info_get", rc);
  p.driver_ = info.driver_name != nullptr ? info.driver_name : "";
  p.pool_ = pool;
  // DPDK 22.11's memif unmaps its regions under a running burst when the
  // peer leaves (burst_guard.h).
  if (p.driver_ == "net_memif") {
    install_burst_fault_handler();
    p.guarded_ = true;
  }
  if (cfg.rx_queues > info.max_rx_queues || cfg.tx_queues > info.max_tx_queues) {
    return Error{"port " + dev_name + ": wants " + std::to_string(cfg.rx_queues) + " rx / " +
                 std::to_string(cfg.tx_queues) + " tx queues, device has " + std::to_string(info.max_rx_queues) +
                 " / " + std::to_string(info.max_tx_queues)};
  }
  // The pool's mbufs must hold what the PMD writes into one receive buffer
  // (sf-nic --mbuf-size, sf-switch's pool): a clear error, not the PMD's EINVAL.
  const uint32_t pool_room = rte_pktmbuf_data_room_size(pool);
  if (pool_room < RTE_PKTMBUF_HEADROOM + info.min_rx_bufsize) {
    return Error{"port " + dev_name + ": mbuf data room " + std::to_string(pool_room) + " B is below the " +
                 std::to_string(RTE_PKTMBUF_HEADROOM + info.min_rx_bufsize) + " B the device needs (headroom " +
                 std::to_string(RTE_PKTMBUF_HEADROOM) + " + min_rx_bufsize " + std::to_string(info.min_rx_bufsize) +
                 "): a larger mbuf size"};
  }
  rte_eth_conf conf{};
  if (cfg.multi_seg_tx && (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0) {
    conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    p.multi_seg_tx_ = true;
  }
  uint16_t mtu = cfg.mtu;
  if (mtu != 0) {
    // Some PMDs (memif) report max_mtu 65535 but a 1518 B max frame.
    const uint32_t frame_max = info.max_rx_pktlen > RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN
                                   ? info.max_rx_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN
                                   : info.max_mtu;
    const uint16_t max_mtu = static_cast<uint16_t>(std::min<uint32_t>(info.max_mtu, frame_max));
    // DPDK 22.11's memif reports a 1518 B max frame but never enforces it:
    // it chains any frame over its buffers both ways. Configure its maximum
    // and report the MTU the port really carries (the one asked for).
    if (mtu > max_mtu && p.driver_ == "net_memif") {
      p.unenforced_mtu_ = mtu;
      mtu = max_mtu;
    }
    if (mtu > max_mtu && cfg.mtu_best_effort) {
      p.mtu_note_ = "mtu " + std::to_string(mtu) + " above the device maximum " + std::to_string(max_mtu) +
                    "; using " + std::to_string(max_mtu);
      mtu = max_mtu;
    }
    if (mtu > max_mtu || mtu < info.min_mtu) {
      return Error{"port " + dev_name + ": mtu " + std::to_string(mtu) + " outside [" +
                   std::to_string(info.min_mtu) + ", " + std::to_string(max_mtu) + "]"};
    }
    conf.rxmode.mtu = mtu;
    const uint32_t room = rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM;
    if (uint32_t{mtu} + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN > room &&
        (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) != 0) {
      conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
    }
  }

  // 2. Configure; 3. adjust descriptor counts to the device limits.
  if (int rc = rte_eth_dev_configure(pid, cfg.rx_queues, cfg.tx_queues, &conf); rc != 0) {
    return fail(dev_name, "rte_eth_dev_configure", rc);
  }
  uint16_t nb_rxd = cfg.rx_desc;
  uint16_t nb_txd = cfg.tx_desc;
  if (int rc = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &nb_rxd, &nb_txd); rc != 0) {
    return fail(dev_name, "rte_eth_dev_adjust_nb_rx_tx_desc", rc);
  }

  // 4. Queues on the port's NUMA socket.
  const int sock = rte_eth_dev_socket_id(pid);
  const unsigned socket = sock < 0 ? static_cast<unsigned>(SOCKET_ID_ANY) : static_cast<unsigned>(sock);
  rte_eth_rxconf rxconf = info.default_rxconf;
  rxconf.offloads = conf.rxmode.offloads;
  for (uint16_t q = 0; q < cfg.rx_queues; ++q) {
    if (int rc = rte_eth_rx_queue_setup(pid, q, nb_rxd, socket, &rxconf, pool); rc != 0) {
      return fail(dev_name, "rte_eth_rx_queue_setup(q=" + std::to_string(q) + ")", rc);
    }
  }
  rte_eth_txconf txconf = info.default_txconf;
  txconf.offloads = conf.txmode.offloads;
  for (uint16_t q = 0; q < cfg.tx_queues; ++q) {
    if (int rc = rte_eth_tx_queue_setup(pid, q, nb_txd, socket, &txconf); rc != 0) {
      return fail(dev_name, "rte_eth_tx_queue_setup(q=" + std::to_string(q) + ")", rc);
    }
  }
  if (cfg.promiscuous) (void)rte_eth_promiscuous_enable(pid);  // not every vdev supports it

  // 5. Start; 6. bounded link wait.
  if (int rc = rte_eth_dev_start(pid); rc != 0) return fail(dev_name, "rte_eth_dev_start", rc);
  mtu = 0;
  if (rte_eth_dev_get_mtu(pid, &mtu) == 0) p.mtu_ = mtu;
  if (p.unenforced_mtu_ != 0) p.mtu_ = p.unenforced_mtu_;
  LinkWait mode = cfg.link_wait;
  if (mode == LinkWait::kAuto) mode = (bus == "pci") ? LinkWait::kRequireUp : LinkWait::kBestEffort;
  if (mode != LinkWait::kSkip) {
    Status st = p.wait_link_up(cfg.link_timeout);
    if (!st && mode == LinkWait::kRequireUp) return Error{st.error()};
  }
  return p;
}

namespace {
struct BurstCall {
  uint16_t port;
  uint16_t queue;
  rte_mbuf** pkts;
  uint16_t n;
  bool tx;
  uint16_t got;
};
void do_burst(void* ctx) {
  auto* c = static_cast<BurstCall*>(ctx);
  c->got = c->tx ? rte_eth_tx_burst(c->port, c->queue, c->pkts, c->n) : rte_eth_rx_burst(c->port, c->queue, c->pkts, c->n);
}
}  // namespace

// The segment counts of a tx burst's packets, taken before the burst: after
// a fault some of them are freed and may not be read. exact: every packet is
// ours alone (refcnt 1) and from a counted pool, so what the PMD freed shows
// in thread_pool_balance() as whole packets.
struct TxScan {
  static constexpr uint16_t kMax = 64;
  uint16_t segs[kMax];
  bool exact = true;
  void scan(rte_mbuf* const* pkts, uint16_t n) {
    if (n > kMax) {
      exact = false;
      return;
    }
    for (uint16_t i = 0; i < n; ++i) {
      segs[i] = pkts[i]->nb_segs;
      exact = exact && rte_mbuf_refcnt_read(pkts[i]) == 1 && pool_is_counted(pkts[i]->pool);
    }
  }
};

uint16_t Port::burst_guarded(rte_mbuf** pkts, uint16_t n, uint16_t queue, bool tx) {
  BurstCall c{port_id_, queue, pkts, n, tx, 0};
  TxScan scan;
  if (tx) {
    scan.scan(pkts, n);
  } else {
    std::fill_n(pkts, n, nullptr);  // the PMD writes a packet's slot once the packet is complete
  }
  const int64_t balance0 = thread_pool_balance();
  if (!run_guarded(do_burst, &c)) [[likely]] return c.got;
  const int64_t moved = thread_pool_balance() - balance0;  // mbufs the PMD took (+) or freed (-)
  // memif_disconnect marks the link down before it unmaps: a fault with the
  // link up is not the peer leaving but a real bug, and stays a crash.
  if (link_up()) {
    std::fprintf(stderr, "port %s: memory fault inside the PMD's %s burst with the link up\n", name_.c_str(),
                 tx ? "tx" : "rx");
    std::abort();
  }
  if (burst_faults_++ == 0) {
    std::fprintf(stderr,
                 "port %s: the peer left during a %s burst (DPDK's memif unmapped the link's memory under it); "
                 "burst abandoned%s\n",
                 name_.c_str(), tx ? "tx" : "rx", tx ? ", its unsent packets dropped" : "");
  }
  if (!tx) {
    // The completed packets are ours (copies made before the unmap): handed
    // over. What the PMD allocated beyond them is the packet it was building
    // (memif's copy path allocates every mbuf it delivers within the burst):
    // lost with the PMD's stack, counted. A PMD that delivers mbufs it held
    // from before (a ring, zero-copy) moved fewer than it delivered: nothing lost.
    uint16_t k = 0;
    int64_t delivered_segs = 0;
    while (k < n && pkts[k] != nullptr) delivered_segs += pkts[k++]->nb_segs;
    if (pool_is_counted(pool_)) {
      burst_fault_leaked_mbufs_ += static_cast<uint64_t>(std::max<int64_t>(0, moved - delivered_segs));
    } else {
      ++burst_fault_inexact_;
    }
    return k;
  }
  // tx: the PMD copies and frees packets in order, so it freed a prefix of
  // the burst: the one whose segments add up to what returned to the pools.
  // The rest it never freed: free them here (dropped, counted).
  const int64_t returned = -moved;
  if (scan.exact) {
    int64_t sum = 0;
    uint16_t j = 0;
    while (j < n && sum < returned) sum += scan.segs[j++];
    if (sum == returned) {
      for (uint16_t i = j; i < n; ++i) rte_pktmbuf_free(pkts[i]);
      burst_fault_pkts_ += n - j;
      return n;
    }
  }
  // Not exact (a shared or foreign mbuf, a burst over TxScan::kMax, or a
  // return that is no prefix): memif may have freed any of them, so none may
  // be freed again: they leak, counted as before.
  ++burst_fault_inexact_;
  burst_fault_pkts_ += n;
  return n;
}

bool Port::link_up() const {
  rte_eth_link link{};
  return rte_eth_link_get_nowait(port_id_, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
}

uint32_t Port::link_speed_mbps() const {
  rte_eth_link link{};
  return rte_eth_link_get_nowait(port_id_, &link) == 0 ? link.link_speed : 0;
}

std::array<uint8_t, 6> Port::mac() const {
  std::array<uint8_t, 6> out{};
  rte_ether_addr a{};
  if (open_ && rte_eth_macaddr_get(port_id_, &a) == 0) std::copy_n(a.addr_bytes, 6, out.begin());
  return out;
}

Status Port::wait_link_up(TimeNs timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout.ns());
  while (!link_up()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return Error{"port " + name_ + ": link still down after " + std::to_string(timeout.ns() / 1000000) +
                   " ms (cable, peer process or link partner?)"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // bounded wait on hardware/peer
  }
  return {};
}

Result<PortStats> Port::stats() const {
  rte_eth_stats s{};
  if (int rc = rte_eth_stats_get(port_id_, &s); rc != 0) return fail(name_, "rte_eth_stats_get", rc);
  PortStats out;
  out.rx_pkts = s.ipackets;
  out.tx_pkts = s.opackets;
  out.rx_bytes = s.ibytes;
  out.tx_bytes = s.obytes;
  out.rx_missed = s.imissed;
  out.rx_errors = s.ierrors;
  out.tx_errors = s.oerrors;
  out.rx_nombuf = s.rx_nombuf;
  return out;
}

Result<std::map<std::string, uint64_t>> Port::xstats() const {
  const int n = rte_eth_xstats_get_names(port_id_, nullptr, 0);
  if (n < 0) return fail(name_, "rte_eth_xstats_get_names", n);
  std::vector<rte_eth_xstat_name> names(static_cast<size_t>(n));
  std::vector<rte_eth_xstat> vals(static_cast<size_t>(n));
  if (int rc = rte_eth_xstats_get_names(port_id_, names.data(), static_cast<unsigned>(n)); rc != n) {
    return fail(name_, "rte_eth_xstats_get_names", rc);
  }
  if (int rc = rte_eth_xstats_get(port_id_, vals.data(), static_cast<unsigned>(n)); rc != n) {
    return fail(name_, "rte_eth_xstats_get", rc);
  }
  std::map<std::string, uint64_t> out;
  for (const auto& v : vals) {
    if (v.id < names.size()) out[names[v.id].name] = v.value;
  }
  return out;
}

Result<uint64_t> Port::xstat(const std::string& name) const {
  uint64_t id = 0;
  if (int rc = rte_eth_xstats_get_id_by_name(port_id_, name.c_str(), &id); rc != 0) {
    return fail(name_, "xstat '" + name + "'", rc);
  }
  uint64_t value = 0;
  if (int rc = rte_eth_xstats_get_by_id(port_id_, &id, &value, 1); rc != 1) {
    return fail(name_, "rte_eth_xstats_get_by_id(" + name + ")", rc);
  }
  return value;
}

Status Port::reset_stats() {
  if (int rc = rte_eth_stats_reset(port_id_); rc != 0) return fail(name_, "rte_eth_stats_reset", rc);
  (void)rte_eth_xstats_reset(port_id_);
  return {};
}

void Port::close() {
  if (!open_) return;
  open_ = false;
  (void)rte_eth_dev_stop(port_id_);
  // A PMD callback on EAL's interrupt thread that was running as we stopped
  // (memif: the peer hanging up) finishes before the device is freed.
  (void)interrupt_thread_barrier();
  (void)rte_eth_dev_close(port_id_);
  if (probed_ && !bus_.empty()) (void)rte_eal_hotplug_remove(bus_.c_str(), bus_device_.c_str());
  probed_ = false;
  // And the work close queued there (memif's deferred socket cleanup) is done
  // before the caller frees the pool or EAL.
  (void)interrupt_thread_barrier();
}

}  // namespace sf::dpdk
