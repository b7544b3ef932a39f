// perftest workloads over the verbs API. See perftest_engine.h.
#include "nic/app/perftest_engine.h"

#include <functional>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace sf::nic::app {

namespace {

namespace v = verbs;

// A bw test's buffer holds up to this many message slots per QP, at most
// kRegionBytes; latency tests use two (outgoing, incoming).
constexpr uint64_t kMaxSlots = 256;
constexpr uint64_t kRegionBytes = 16ull << 20;
// write_bw / read_bw without --verify lay the buffer out as perftest does
// (perftest_resources.c: a buffer of max(size, cycle_buffer) per QP, and the
// local and remote addresses advance per message only while size <=
// cycle_buffer / 2, wrapping within cycle_buffer = the page size): every
// message of more than 2 KiB goes to the same address, smaller ones cycle
// through 4 KiB. So the receiver writes the same cache-resident bytes over
// and over, as under perftest, instead of a 16 MiB window that misses the
// caches. --verify and SEND tests keep one slot per message in flight.
constexpr uint64_t kPerftestCycleBytes = 4096;
uint64_t perftest_slots(uint64_t size_bytes) {
  return size_bytes <= kPerftestCycleBytes / 2 ? kPerftestCycleBytes / size_bytes : 1;
}
constexpr uint64_t kMsgMask = (1ull << 48) - 1;
constexpr int kPollBatch = 32;
// A poll's completion array, left uninitialised: poll_cq fills the first n
// it returns and only those are read. (v::Wc's member initialisers would
// clear all 32 x 48 bytes on every poll, ~4 % of a fabric's simulated
// events' instructions; docs/performance.md "sf-sim at scale, fifth pass".)
union WcBatch {
  WcBatch() {}
  v::Wc wc[kPollBatch];
};
// perftest's default CQ moderation (--cq-mod): a completion every 100 WRs.
constexpr uint32_t kMaxCqMod = 100;
// perftest's defaults for the QP attributes.
constexpr uint8_t kTimeout = 14;  // 4.096 us x 2^14 = 67 ms
constexpr uint8_t kRetryCnt = 7;
constexpr uint8_t kRnrRetry = 7;  // infinite
constexpr uint8_t kMinRnrTimer = 12;
constexpr uint8_t kRdAtomic = 16;

uint64_t wr_id(uint32_t qi, uint64_t msg) { return (uint64_t{qi} << 48) | (msg & kMsgMask); }

v::Mtu to_mtu(uint32_t bytes) {
  switch (bytes) {
    case 256: return v::Mtu::k256;
    case 512: return v::Mtu::k512;
    case 1024: return v::Mtu::k1024;
    case 2048: return v::Mtu::k2048;
    default: return v::Mtu::k4096;
  }
}

// Iteration i's marker is (i + 1) mod 256, perftest's `(char)++scnt`: never
// 0 before the 256th (the buffers start zeroed) and different from the one
// before it every time, which is all a poll on the last byte needs.
uint8_t marker(uint64_t i) { return static_cast<uint8_t>(i + 1); }

}  // namespace

bool copies_with_cpu(const std::string& devargs) {
  // memif's own zero-copy mode hands the peer our buffers; net_ring passes
  // mbuf pointers to whoever dequeues them: neither is a copy at tx_burst.
  if (devargs.find("zero-copy=yes") != std::string::npos) return false;
  for (const char* p : {"net_memif", "net_null", "net_pcap", "net_tap"}) {
    if (devargs.rfind(p, 0) == 0) return true;
  }
  return false;
}

NicConfig nic_config_of(const AppConfig& cfg) {
  NicConfig nc;
  for (size_t i = 0; i < cfg.hosts.size(); ++i) {
    const AppHost& h = cfg.hosts[i];
    HostConfig hc;
    hc.name = h.name;
    hc.rc.cnp_dscp = h.cnp_dscp;
    hc.max_qps = h.max_qps;
    hc.max_mrs = h.max_mrs;
    hc.max_cqs = h.max_cqs;
    hc.max_pds = h.max_pds;
    // Node ports in host order, each host's ports in port_num order.
    for (uint8_t k = 1; k <= h.num_ports(); ++k) {
      const AppPort ap = h.port(k);
      HostPortAddr a;
      a.mac.bytes = ap.mac.bytes;
      if (ap.ipv4) a.ipv4 = wire::Ipv4Addr{*ap.ipv4};
      if (ap.ipv6) a.ipv6 = wire::Ipv6Addr{*ap.ipv6};
      if (ap.gateway_mac) a.gateway_mac = wire::MacAddr{ap.gateway_mac->bytes};
      PortL3 l3;
      l3.ipv4_prefix = ap.ipv4_prefix;
      l3.ipv6_prefix = ap.ipv6_prefix;
      if (ap.gateway4) l3.gateway4 = wire::Ipv4Addr{*ap.gateway4};
      if (ap.gateway6) l3.gateway6 = wire::Ipv6Addr{*ap.gateway6};
      hc.port_l3.push_back(l3);
      if (k == 1) {
        hc.mac = a.mac;
        hc.ipv4 = a.ipv4;
        hc.ipv6 = a.ipv6;
        hc.gateway_mac = a.gateway_mac;
        hc.l3 = l3;
      }
      hc.port_addrs.push_back(a);
      hc.ports.push_back(static_cast<PortId>(nc.ports.size()));
      NicPortConfig pc;
      pc.line_rate = BitRate::gbps(ap.speed_gbps);
      pc.mtu_bytes = h.mtu_bytes;
      pc.pfc_honour = h.pfc_enable != 0;
      pc.rx_drain_rate = h.rx_drain_rate;
      pc.pfc_generate_mask = h.pfc_generate;
      pc.mrc_trimmed_dscp_mask = h.mrc_trimmed_dscp_mask;
      pc.pfc_backlog = {h.pfc_xoff_bytes, h.pfc_xon_bytes};
      nc.ports.push_back(pc);
    }
    nc.hosts.push_back(hc);
  }
  return nc;
}

std::vector<std::pair<size_t, uint8_t>> node_ports_of(const AppConfig& cfg) {
  std::vector<std::pair<size_t, uint8_t>> out;
  for (size_t i = 0; i < cfg.hosts.size(); ++i) {
    for (uint8_t k = 1; k <= cfg.hosts[i].num_ports(); ++k) out.emplace_back(i, k);
  }
  return out;
}

std::string Workload::route_error(std::span<const QpConnInfo> peer) const {
  if (peer.empty()) return "";
  const QpConnInfo& p = peer[0];
  const bool spray = cfg_.transport == Transport::kMrc && p.num_ports > 1;
  const Host& h = node_.host(cfg_.host);
  for (uint8_t k = 1; k <= h.num_ports(); ++k) {
    if (!spray && k != cfg_.port) continue;
    if (spray && k > p.num_ports) break;
    const std::array<uint8_t, 16>& gid = spray ? p.port_gid[k - 1] : p.gid;
    if (std::string e = node_.neighbors().route_error(static_cast<uint16_t>(h.node_port(k)), gid); !e.empty()) return e;
  }
  return "";
}

Workload::Workload(const AppWorkload& cfg, const AppHost& host, NicNode& node, size_t host_index)
    : cfg_(cfg), host_(host), port_(host.port(cfg.port)), node_(node) {
  auto err = [&](const std::string& what) {
    throw std::runtime_error("workload " + cfg_.name + ": " + what + " failed (errno " + std::to_string(errno) + ")");
  };
  ctx_ = v::open_device(node_, host_index);
  if (!ctx_) err("open_device");
  v::PortAttr pa;
  if (v::query_port(ctx_.get(), cfg_.port, &pa) != 0) {
    errno = EINVAL;
    err("query_port " + std::to_string(cfg_.port));
  }
  pd_ = v::alloc_pd(ctx_.get());
  if (pd_ == nullptr) err("alloc_pd");

  const bool lat = is_latency(cfg_.type);
  const bool perftest_layout = !cfg_.verify && (cfg_.type == WorkloadType::kWriteBw || cfg_.type == WorkloadType::kReadBw);
  slots_ = lat               ? 2
           : perftest_layout ? perftest_slots(cfg_.size_bytes)
                             : std::clamp<uint64_t>(kRegionBytes / cfg_.size_bytes, 1, kMaxSlots);
  target_ = cfg_.duration_s > 0 ? 0 : cfg_.iterations;
  // --verify keeps in-flight messages under half the slots, so a slot is
  // checked before a later message can land in it; so do SEND tests (the
  // server's receives).
  bw_depth_ = std::max<uint64_t>(cfg_.tx_depth, 1);
  if (cfg_.verify || is_send(cfg_.type)) bw_depth_ = std::min<uint64_t>(bw_depth_, std::max<uint64_t>(slots_ / 2, 1));
  cq_mod_ = static_cast<uint32_t>(std::clamp<uint64_t>(bw_depth_ / 4, 1, kMaxCqMod));
  // perftest's client strides by the size rounded up to a cache line
  // (INC(size, 64)) within the cycle buffer: a perftest peer's writes and
  // reads stay inside a region of the whole cycle (--oob-format perftest).
  const uint64_t region = std::max<uint64_t>(slots_ * cfg_.size_bytes,
                                             perftest_layout && slots_ > 1 ? kPerftestCycleBytes : 0);
  buf_bytes_ = region * cfg_.qps;
  buf_.reset(static_cast<uint8_t*>(std::calloc(buf_bytes_, 1)));
  if (!buf_) {
    errno = ENOMEM;
    err("calloc of " + std::to_string(buf_bytes_) + " bytes");
  }
  mr_ = v::reg_mr(pd_, buf_.get(), buf_bytes_,
                  v::kAccessLocalWrite | v::kAccessRemoteWrite | v::kAccessRemoteRead);
  if (mr_ == nullptr) err("reg_mr of " + std::to_string(buf_bytes_) + " bytes");

  const uint32_t depth = std::max<uint32_t>(cfg_.tx_depth, 2);
  scq_ = v::create_cq(ctx_.get(), static_cast<int>(cfg_.qps * (depth + 16)));
  rcq_ = v::create_cq(ctx_.get(), static_cast<int>(cfg_.qps * (slots_ + 16)));
  if (scq_ == nullptr || rcq_ == nullptr) err("create_cq");

  qps_.resize(cfg_.qps);
  for (uint32_t qi = 0; qi < cfg_.qps; ++qi) {
    QpRun& q = qps_[qi];
    v::QpInitAttr ia;
    ia.send_cq = scq_;
    ia.recv_cq = rcq_;
    ia.cap.max_send_wr = depth + 8;
    ia.cap.max_recv_wr = static_cast<uint32_t>(slots_ + 8);
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    if (cfg_.transport == Transport::kMrc) ia.qp_type = v::QpType::kMrc;
    q.qp = v::create_qp(pd_, &ia);
    if (q.qp == nullptr) err("create_qp");
    q.region = buf_.get() + qi * region;
    // READ servers expose the pattern of every slot; others start zeroed.
    if (is_read(cfg_.type) && !client()) {
      for (uint64_t s = 0; s < slots_; ++s) fill(qi, q.region + s * cfg_.size_bytes, s);
    }
    QpConnInfo info;
    info.qpn = q.qp->qp_num();
    info.psn = rc::initial_psn(node.host(host_index).config().rc.seed, info.qpn);  // docs/nic.md identifiers
    info.rkey = mr_->rkey;
    info.va = reinterpret_cast<uint64_t>(q.region);
    // The address of the port the QP is bound to (cfg_.port): what the peer
    // sends to.
    // An MRC QP in SRv6 mode talks IPv6 (its inner header): a dual-stack
    // port gives its IPv6 address (docs/mrc.md "SRv6 uSID paths").
    const bool v6 = cfg_.transport == Transport::kMrc && cfg_.mrc.ev_mode == v::MrcEvMode::kSrv6;
    if (port_.ipv4 && !(v6 && port_.ipv6)) {
      info.gid = v::gid_from_ipv4(wire::Ipv4Addr{*port_.ipv4}).bytes;
    } else {
      info.gid = *port_.ipv6;
    }
    info.mac = port_.mac.bytes;
    info.mtu_bytes = host_.mtu_bytes;
    info.msg_size_bytes = cfg_.size_bytes;
    // The host's ports (an MRC QP sprays over them; the peer sends plane p
    // to port p + 1).
    info.transport = cfg_.transport == Transport::kMrc ? 1 : 0;
    info.num_ports = std::min<uint8_t>(host_.num_ports(), static_cast<uint8_t>(kMaxConnPorts));
    for (uint8_t k = 1; k <= info.num_ports; ++k) {
      const AppPort hp = host_.port(k);
      info.port_gid[k - 1] =
          hp.ipv4 && !(v6 && hp.ipv6) ? v::gid_from_ipv4(wire::Ipv4Addr{*hp.ipv4}).bytes : *hp.ipv6;
      info.port_mac[k - 1] = hp.mac.bytes;
    }
    local_.push_back(info);
  }
}

Workload::~Workload() {
  for (QpRun& q : qps_) {
    if (q.qp != nullptr) v::destroy_qp(q.qp);
  }
  // With zero-copy transmit the MR may still be referenced by frames the
  // driver holds (dereg_mr: EBUSY); the owner frees those first (sf-nic
  // releases the poll loop's buffers before destroying workloads).
  if (mr_ != nullptr) v::dereg_mr(mr_);
  if (scq_ != nullptr) v::destroy_cq(scq_);
  if (rcq_ != nullptr) v::destroy_cq(rcq_);
  if (pd_ != nullptr) v::dealloc_pd(pd_);
}

// MRC in INIT: the profile and tunables of nic.json "mrc", and the peer's
// address on every plane (its port p + 1) when the QP sprays over several.
std::string Workload::configure_mrc(QpRun& q, const QpConnInfo& p) {
  v::MrcQpAttr m = cfg_.mrc;
  const uint16_t planes = m.num_planes == 0 ? host_.num_ports() : m.num_planes;
  if (planes > 1) {
    if (p.num_ports < planes) {
      return "the peer has " + std::to_string(p.num_ports) + " port(s), this side sprays over " +
             std::to_string(planes) + " planes (one peer port per plane)";
    }
    m.num_peer_ports = static_cast<uint8_t>(planes);
    for (uint16_t k = 0; k < planes; ++k) {
      std::copy(p.port_gid[k].begin(), p.port_gid[k].end(), m.peer_gid[k].bytes.begin());
      std::copy(p.port_mac[k].begin(), p.port_mac[k].end(), m.peer_mac[k]);
    }
  }
  if (int rc = v::mrc_modify_qp(q.qp, &m, v::kMrcAllAttrs); rc != 0) {
    return "mrc_modify_qp: errno " + std::to_string(rc) + ": " + q.qp->mrc_error();
  }
  return "";
}

std::string Workload::connect(std::span<const QpConnInfo> peer, TimeNs now) {
  if (peer.size() != qps_.size()) {
    return "peer has " + std::to_string(peer.size()) + " QPs, this side " + std::to_string(qps_.size());
  }
  mtu_bytes_ = host_.mtu_bytes;
  for (uint32_t qi = 0; qi < qps_.size(); ++qi) {
    QpRun& q = qps_[qi];
    const QpConnInfo& p = peer[qi];
    if (p.msg_size_bytes != cfg_.size_bytes) {
      return "peer uses message size " + std::to_string(p.msg_size_bytes) + ", this side " +
             std::to_string(cfg_.size_bytes);
    }
    if (p.transport != local_[qi].transport) {
      auto name = [](uint8_t t) { return std::string(t == 1 ? "mrc" : "rc"); };
      return "peer uses transport " + name(p.transport) + ", this side " + name(local_[qi].transport);
    }
    mtu_bytes_ = std::min(mtu_bytes_, p.mtu_bytes);
    q.peer = p;
    v::QpAttr a;
    a.qp_state = v::QpState::kInit;
    a.pkey_index = 0;
    a.port_num = cfg_.port;
    a.qp_access_flags = v::kAccessRemoteWrite | v::kAccessRemoteRead | v::kAccessLocalWrite;
    if (int rc = v::modify_qp(q.qp, &a, v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags); rc != 0) {
      return "modify_qp to INIT: errno " + std::to_string(rc);
    }
    if (cfg_.transport == Transport::kMrc) {
      if (std::string e = configure_mrc(q, p); !e.empty()) return e;
    }
    v::QpAttr r;
    r.qp_state = v::QpState::kRtr;
    r.path_mtu = to_mtu(mtu_bytes_);
    r.dest_qp_num = p.qpn;
    r.rq_psn = p.psn;
    r.max_dest_rd_atomic = kRdAtomic;
    r.min_rnr_timer = kMinRnrTimer;
    r.ah_attr.is_global = 1;
    const uint8_t dscp = cfg_.dscp.value_or(host_.dscp);
    r.ah_attr.sl = static_cast<uint8_t>(dscp >> 3);
    r.ah_attr.port_num = cfg_.port;
    std::copy(p.gid.begin(), p.gid.end(), r.ah_attr.grh.dgid.bytes.begin());
    r.ah_attr.grh.sgid_index = v::gid_is_ipv4(r.ah_attr.grh.dgid) ? 0 : 1;
    r.ah_attr.grh.traffic_class = static_cast<uint8_t>(dscp << 2);
    std::copy(p.mac.begin(), p.mac.end(), r.ah_attr.dmac);
    if (int rc = v::modify_qp(q.qp, &r,
                              v::kQpState | v::kQpAv | v::kQpPathMtu | v::kQpDestQpn | v::kQpRqPsn |
                                  v::kQpMaxDestRdAtomic | v::kQpMinRnrTimer);
        rc != 0) {
      return "modify_qp to RTR: errno " + std::to_string(rc);
    }
    v::QpAttr s;
    s.qp_state = v::QpState::kRts;
    s.sq_psn = local_[qi].psn;
    s.max_rd_atomic = static_cast<uint8_t>(std::clamp<unsigned>(p.out_reads, 1, kRdAtomic));
    s.retry_cnt = kRetryCnt;
    s.rnr_retry = kRnrRetry;
    s.timeout = kTimeout;
    if (int rc = v::modify_qp(q.qp, &s,
                              v::kQpState | v::kQpSqPsn | v::kQpMaxQpRdAtomic | v::kQpRetryCnt | v::kQpRnrRetry |
                                  v::kQpTimeout);
        rc != 0) {
      return "modify_qp to RTS: errno " + std::to_string(rc);
    }
    q.qp->set_congestion_control(cfg_.cc, BitRate::gbps(port_.speed_gbps));
    if (cfg_.rate_limit.bps() != 0) {
      v::QpRateLimitAttr rl;
      rl.rate_limit = static_cast<uint32_t>(std::min<uint64_t>(cfg_.rate_limit.bps() / 1000, UINT32_MAX));
      rl.max_burst_sz = cfg_.burst_bytes;
      if (int rc = v::modify_qp_rate_limit(q.qp, &rl); rc != 0) return "modify_qp_rate_limit: errno " + std::to_string(rc);
    }
    if (client() && !is_latency(cfg_.type)) {
      // The bw client's WR list: what does not change per message, once.
      q.wrs.assign(bw_depth_, v::SendWr{});
      q.sges.assign(bw_depth_, v::Sge{0, static_cast<uint32_t>(cfg_.size_bytes), mr_->lkey});
      v::WrOpcode op = v::WrOpcode::kRdmaWrite;
      if (cfg_.type == WorkloadType::kWriteBw && cfg_.verify) op = v::WrOpcode::kRdmaWriteWithImm;
      if (cfg_.type == WorkloadType::kReadBw) op = v::WrOpcode::kRdmaRead;
      if (cfg_.type == WorkloadType::kSendBw) op = v::WrOpcode::kSend;
      for (uint64_t j = 0; j < bw_depth_; ++j) {
        v::SendWr& wr = q.wrs[j];
        wr.sg_list = &q.sges[j];
        wr.num_sge = 1;
        wr.opcode = op;
        wr.rdma.rkey = p.rkey;
      }
      q.next_signal = cq_mod_ - 1;
    }
    // Receives: SEND receivers, WRITE_WITH_IMM targets (verify), both ping-pong sides of send_lat.
    const bool needs_recv = (is_send(cfg_.type) && (!client() || is_latency(cfg_.type))) ||
                            (cfg_.verify && cfg_.type == WorkloadType::kWriteBw && !client());
    if (needs_recv) {
      for (uint64_t i = 0; i < slots_; ++i) {
        if (post_recv_one(qi) != 0) return "post_recv failed";
      }
    }
  }
  if (client() || lat_starter()) {
    const uint64_t per_qp = target_ != 0 ? target_ : kMaxRecordedMessages;
    if (is_latency(cfg_.type)) {
      res_.lat_posts.reserve(std::min<uint64_t>(per_qp + 1, kMaxRecordedMessages));
      if (cfg_.interval_us != 0) res_.lat_replies.reserve(res_.lat_posts.capacity());  // paced samples only
    } else if (qps_.size() == 1) {
      res_.posted.reserve(std::min<uint64_t>(per_qp, kMaxPeakMessages));
      res_.completed.reserve(std::min<uint64_t>(per_qp, kMaxPeakMessages));
    }
  }
  start_at_ = now + TimeNs::from_ms(cfg_.start_ms);
  res_.connected_at = now;
  connected_ = true;
  // A server's own work is done at once, except answering a counted ping-pong.
  if (!client() && !(is_latency(cfg_.type) && !is_read(cfg_.type) && target_ != 0)) {
    traffic_done_.store(true, std::memory_order_release);
  }
  return "";
}

void Workload::fail(std::string why) {
  if (!res_.failed) {
    res_.failed = true;
    res_.status = std::move(why);
  }
  posting_ = false;
  traffic_done_.store(true, std::memory_order_release);
}

void Workload::fill(uint32_t qi, uint8_t* dst, uint64_t msg) const {
  for (uint64_t o = 0; o < cfg_.size_bytes; ++o) dst[o] = pattern_byte(qi, msg, o);
}

bool Workload::check(uint32_t qi, const uint8_t* src, uint64_t msg) {
  // write_lat's last byte is the iteration marker, not pattern.
  const uint64_t len = cfg_.size_bytes - (cfg_.type == WorkloadType::kWriteLat ? 1 : 0);
  for (uint64_t o = 0; o < len; ++o) {
    if (src[o] != pattern_byte(qi, msg, o)) {
      if (res_.verify_errors++ == 0) res_.first_bad_message = msg;
      return false;
    }
  }
  return true;
}

int Workload::post_recv_one(uint32_t qi) {
  QpRun& q = qps_[qi];
  v::Sge sge{reinterpret_cast<uint64_t>(slot(q, q.recv_posted)), static_cast<uint32_t>(cfg_.size_bytes), mr_->lkey};
  v::RecvWr wr;
  wr.wr_id = wr_id(qi, q.recv_posted);
  // WRITE_WITH_IMM consumes a receive but places nothing through it.
  const bool imm_only = cfg_.type == WorkloadType::kWriteBw;
  wr.sg_list = imm_only ? nullptr : &sge;
  wr.num_sge = imm_only ? 0 : 1;
  v::RecvWr* bad = nullptr;
  const int rc = v::post_recv(q.qp, &wr, &bad);
  if (rc == 0) ++q.recv_posted;
  return rc;
}

int Workload::post_one(uint32_t qi, uint64_t msg, TimeNs now) {
  QpRun& q = qps_[qi];
  const bool lat = is_latency(cfg_.type);
  // Latency tests send from slot 0 into the peer's slot 1; bw tests use slot msg % slots.
  uint8_t* local = lat ? q.region : slot(q, msg);
  const uint64_t remote = q.peer.va + (lat ? cfg_.size_bytes : (msg % slots_) * cfg_.size_bytes);
  v::Sge sge{reinterpret_cast<uint64_t>(local), static_cast<uint32_t>(cfg_.size_bytes), mr_->lkey};
  v::SendWr wr;
  wr.wr_id = wr_id(qi, msg);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = v::kSendSignaled;
  switch (cfg_.type) {
    case WorkloadType::kWriteBw:
    case WorkloadType::kWriteLat:
      wr.opcode = cfg_.verify && !lat ? v::WrOpcode::kRdmaWriteWithImm : v::WrOpcode::kRdmaWrite;
      wr.imm_data = static_cast<uint32_t>(msg);
      break;
    case WorkloadType::kReadBw:
    case WorkloadType::kReadLat:
      wr.opcode = v::WrOpcode::kRdmaRead;
      break;
    case WorkloadType::kSendBw:
    case WorkloadType::kSendLat:
      wr.opcode = v::WrOpcode::kSend;
      break;
  }
  wr.rdma.remote_addr = remote;
  wr.rdma.rkey = q.peer.rkey;
  if (cfg_.verify && !is_read(cfg_.type)) fill(qi, local, msg);
  if (cfg_.type == WorkloadType::kWriteLat) local[cfg_.size_bytes - 1] = marker(msg);
  v::SendWr* bad = nullptr;
  const int rc = v::post_send(q.qp, &wr, &bad);
  if (rc != 0) return rc;
  ++q.posted;
  if (client()) ++res_.post_send_calls;
  note_first_post(now);
  return 0;
}

void Workload::note_first_post(TimeNs now) {
  if (res_.first_post != TimeNs::max()) return;
  res_.first_post = now;
  if (cfg_.duration_s > 0) stop_posting_at_ = now + TimeNs(static_cast<int64_t>(cfg_.duration_s * 1e9));
}

int Workload::post_bw_list(uint32_t qi, uint64_t n, TimeNs now) {
  QpRun& q = qps_[qi];
  const uint64_t size = cfg_.size_bytes;
  const bool verify_data = cfg_.verify && !is_read(cfg_.type);
  uint64_t slot_i = q.next_slot;
  uint64_t sig_at = q.next_signal;
  for (uint64_t j = 0; j < n; ++j) {
    const uint64_t msg = q.posted + j;
    v::SendWr& wr = q.wrs[j];
    uint8_t* local = q.region + slot_i * size;
    wr.wr_id = wr_id(qi, msg);
    wr.next = j + 1 < n ? &q.wrs[j + 1] : nullptr;
    // Signalled: every cq_mod-th message, and the list's last (so the last
    // message posted always gets a completion, whenever posting stops).
    const bool sig = msg == sig_at || j + 1 == n;
    if (msg == sig_at) sig_at += cq_mod_;
    wr.send_flags = sig ? v::kSendSignaled : 0;
    wr.imm_data = static_cast<uint32_t>(msg);
    wr.rdma.remote_addr = q.peer.va + slot_i * size;
    q.sges[j].addr = reinterpret_cast<uint64_t>(local);
    if (verify_data) fill(qi, local, msg);
    slot_i = slot_i + 1 == slots_ ? 0 : slot_i + 1;
  }
  v::SendWr* bad = nullptr;
  const int rc = v::post_send(q.qp, q.wrs.data(), &bad);
  // On an error post_send names the first WR it did not post in `bad` (none
  // when it refused the call itself: a QP it does not know).
  const uint64_t done = rc == 0 ? n : bad != nullptr ? static_cast<uint64_t>(bad - q.wrs.data()) : 0;
  if (done == 0) return rc;
  ++res_.post_send_calls;
  q.posted += done;
  if (done == n) {
    q.next_slot = slot_i;
    q.next_signal = sig_at;
  } else {
    // Cut short at a bad WR (its unsignalled predecessors are covered by
    // the next list's last): the moderation counts from what was posted.
    q.next_slot = (q.next_slot + done) % slots_;
    while (q.next_signal < q.posted) q.next_signal += cq_mod_;
  }
  note_first_post(now);
  if (qps_.size() == 1) {
    for (uint64_t j = 0; j < done && res_.posted.size() < kMaxPeakMessages; ++j) res_.posted.push_back(now);
  }
  return rc;
}

void Workload::poll_send_cq(TimeNs now) {
  WcBatch batch;
  v::Wc* const wc = batch.wc;
  for (;;) {
    const int n = v::poll_cq(scq_, kPollBatch, wc);
    if (n < 0) return fail("send CQ overrun");
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != v::WcStatus::kSuccess) return fail(v::to_string(wc[i].status));
      const auto qi = static_cast<uint32_t>(wc[i].wr_id >> 48);
      QpRun& q = qps_[qi];
      if (client()) ++res_.send_completions;
      if (client() && !is_latency(cfg_.type)) {
        // Moderated: this completion stands for every message of the QP up
        // to its own (RC completes a QP's WRs in order).
        const uint64_t upto = q.completed + ((wc[i].wr_id - q.completed) & kMsgMask) + 1;
        const uint64_t n = upto - q.completed;
        res_.last_completion = now;
        res_.messages += n;
        res_.bytes += n * cfg_.size_bytes;
        if (qps_.size() == 1) {
          for (uint64_t k = 0; k < n && res_.completed.size() < kMaxPeakMessages; ++k) res_.completed.push_back(now);
        }
        // read_bw reads remote slot msg % slots into the same local slot.
        if (cfg_.verify && is_read(cfg_.type)) {
          for (uint64_t m = q.completed; m < upto; ++m) check(qi, slot(q, m), m % slots_);
        }
        q.completed = upto;
        continue;
      }
      ++q.completed;
      if (!client()) continue;  // a ping-pong server's responses
      res_.last_completion = now;
      if (!is_read(cfg_.type)) continue;  // the round trip ends at the reply
      ++res_.messages;
      res_.bytes += cfg_.size_bytes;
      // read_lat always reads remote slot 1 into local slot 0.
      if (cfg_.verify) check(qi, q.region, 1);
      if (cfg_.type == WorkloadType::kReadLat) {
        ++q.received;
        ++res_.lat_round_trips;
        if (res_.lat_replies.size() < res_.lat_replies.capacity()) res_.lat_replies.push_back(now);
      }
    }
    if (n < kPollBatch) return;
  }
}

void Workload::poll_recv_cq(TimeNs now) {
  WcBatch batch;
  v::Wc* const wc = batch.wc;
  for (;;) {
    const int n = v::poll_cq(rcq_, kPollBatch, wc);
    if (n < 0) return fail("receive CQ overrun");
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != v::WcStatus::kSuccess) return fail(v::to_string(wc[i].status));
      const auto qi = static_cast<uint32_t>(wc[i].wr_id >> 48);
      const uint64_t j = wc[i].wr_id & kMsgMask;  // receive index
      QpRun& q = qps_[qi];
      ++q.received;
      if (cfg_.type == WorkloadType::kWriteBw) {
        // WRITE_WITH_IMM (--verify): the data is in slot imm % slots.
        const uint64_t msg = wc[i].imm_data;
        check(qi, slot(q, msg), msg);
        ++res_.messages;
        res_.bytes += cfg_.size_bytes;
      } else if (cfg_.type == WorkloadType::kSendBw) {
        if (cfg_.verify) check(qi, slot(q, j), j);
        ++res_.messages;
        res_.bytes += cfg_.size_bytes;
        if (!client()) {
          // A send_bw server times what it received, as perftest's does: from
          // its first receive completion to its last (its row and report).
          if (res_.first_post == TimeNs::max()) res_.first_post = now;
          res_.last_completion = now;
        }
      } else if (cfg_.verify) {  // send_lat: message j landed in slot j % 2
        check(qi, slot(q, j), j);
      }
      if (post_recv_one(qi) != 0) return fail("post_recv failed");
    }
    if (n < kPollBatch) return;
  }
}

void Workload::poll_bw_client(TimeNs now) {
  if (now < start_at_) return;
  if (posting_ && now >= stop_posting_at_) posting_ = false;
  for (uint32_t qi = 0; qi < qps_.size() && posting_; ++qi) {
    QpRun& q = qps_[qi];
    uint64_t n = bw_depth_ - (q.posted - q.completed);
    if (target_ != 0) n = std::min(n, target_ - q.posted);
    if (n == 0) continue;
    const int rc = post_bw_list(qi, n, now);
    if (rc != 0 && rc != ENOMEM) return fail("post_send: errno " + std::to_string(rc));
    if (now >= stop_posting_at_) posting_ = false;
  }
}

void Workload::count_round_trip(TimeNs now, bool reply) {
  ++res_.lat_round_trips;
  ++res_.messages;
  res_.bytes += cfg_.size_bytes;
  if (reply && res_.lat_replies.size() < res_.lat_replies.capacity()) res_.lat_replies.push_back(now);
}

bool Workload::start_round_trip(uint32_t qi, TimeNs now, bool over) {
  QpRun& q = qps_[qi];
  const bool idle = q.posted == q.received;
  const bool more = target_ == 0 ? !over : q.posted < target_;
  if (!idle || !more || !posting_ || now < next_post_at_) return true;
  const int rc = post_one(qi, q.posted, now);
  if (rc != 0 && rc != ENOMEM) {
    fail("post_send: errno " + std::to_string(rc));
    return false;
  }
  if (rc == 0 && res_.lat_posts.size() < res_.lat_posts.capacity()) res_.lat_posts.push_back(now);
  if (rc == 0 && cfg_.interval_us != 0) next_post_at_ = now + TimeNs::from_us(cfg_.interval_us);
  return true;
}

bool Workload::lat_starter() const {
  if (cfg_.type != WorkloadType::kWriteLat) return client();
  return cfg_.oob_format == OobFormat::kPerftest ? !client() : client();
}

void Workload::poll_write_lat(TimeNs now) {
  const bool over = now >= stop_posting_at_;
  for (uint32_t qi = 0; qi < qps_.size(); ++qi) {
    QpRun& q = qps_[qi];
    uint8_t* const slot1_last = q.region + 2 * cfg_.size_bytes - 1;
    if (lat_starter()) {
      if (now < start_at_) return;
      // A round trip ends when the reply is here: its marker in slot 1.
      if (q.posted > q.received && *slot1_last == marker(q.posted - 1)) {
        if (cfg_.verify) check(qi, q.region + cfg_.size_bytes, q.posted - 1);
        ++q.received;
        count_round_trip(now, true);
      }
      if (!start_round_trip(qi, now, over)) return;
    } else if (*slot1_last == marker(q.posted)) {
      // Answer iteration j once its marker is in our slot 1. A measuring
      // answerer (a client: perftest's ib_write_lat server starts) counts
      // the round trip and times its posts, as perftest's client does.
      const uint64_t j = q.posted;
      if (cfg_.verify) check(qi, q.region + cfg_.size_bytes, j);
      const int rc = post_one(qi, j, now);
      if (rc != 0 && rc != ENOMEM) return fail("post_send: errno " + std::to_string(rc));
      if (rc == 0 && client()) {
        ++q.received;
        count_round_trip(now, false);
        if (res_.lat_posts.size() < res_.lat_posts.capacity()) res_.lat_posts.push_back(now);
      }
    }
  }
}

void Workload::poll_lat(TimeNs now) {
  if (cfg_.type == WorkloadType::kWriteLat) return poll_write_lat(now);
  const bool over = now >= stop_posting_at_;
  for (uint32_t qi = 0; qi < qps_.size(); ++qi) {
    QpRun& q = qps_[qi];
    if (client()) {
      if (now < start_at_) return;
      // A round trip ends when the reply is here: a receive completion
      // (send), the READ's completion.
      if (cfg_.type == WorkloadType::kSendLat && q.received > res_.lat_round_trips) {
        // A reply's receive completion (poll_recv_cq counted it in q.received).
        count_round_trip(now, true);
      }
      if (!start_round_trip(qi, now, over)) return;
    } else if (cfg_.type == WorkloadType::kSendLat) {
      // Answer every request received so far.
      while (q.posted < q.received) {
        const int rc = post_one(qi, q.posted, now);
        if (rc == ENOMEM) break;
        if (rc != 0) return fail("post_send: errno " + std::to_string(rc));
      }
    }
  }
}

void Workload::update_done(TimeNs now) {
  if (traffic_done()) return;
  bool done = true;
  for (const QpRun& q : qps_) {
    if (is_latency(cfg_.type) ? lat_starter() : client()) {
      const bool all_posted = !posting_ || (target_ != 0 ? q.posted >= target_ : now >= stop_posting_at_);
      if (is_latency(cfg_.type)) {
        done = done && all_posted && q.received >= q.posted && q.completed >= q.posted;
      } else {
        done = done && all_posted && q.completed >= q.posted;
      }
    } else {
      done = done && q.posted >= target_ && q.completed >= q.posted;  // a counted ping-pong's answerer
    }
  }
  if (done) traffic_done_.store(true, std::memory_order_release);
}

void Workload::poll(TimeNs now) {
  if (!connected_ || res_.failed) return;
  poll_send_cq(now);
  poll_recv_cq(now);
  if (res_.failed) return;
  if (is_latency(cfg_.type)) {
    poll_lat(now);
  } else if (client()) {
    poll_bw_client(now);
  }
  if (!res_.failed) update_done(now);
}

TimeNs Workload::next_wakeup(TimeNs now) const {
  const bool starts = is_latency(cfg_.type) ? lat_starter() : client();  // posts without waiting for the peer
  if (!connected_ || res_.failed || !starts || traffic_done()) return TimeNs::max();
  if (res_.first_post == TimeNs::max()) return std::max(start_at_, now);  // start traffic
  TimeNs t = TimeNs::max();
  if (stop_posting_at_ != TimeNs::max() && posting_) t = stop_posting_at_;
  if (posting_ && next_post_at_ > now) t = std::min(t, next_post_at_);  // the next paced round trip
  return t;
}

void PerftestEngine::add(Workload* w) {
  const auto i = static_cast<uint32_t>(workloads_.size());
  workloads_.push_back(w);
  const size_t h = w->config().host;
  if (by_host_.size() <= h) by_host_.resize(h + 1);
  by_host_[h].push_back(i);
  dirty_.push_back(0);
  counted_done_.push_back(0);
  wake_at_.push_back(TimeNs::max());
  const AppWorkload& c = w->config();
  if (c.stop_with_others) stop_with_others_.push_back(i);
  if (c.role == Role::kClient && !c.stop_with_others) ++others_running_;
  primed_ = false;
  mark(i);  // the first poll runs every workload
}

void PerftestEngine::mark(uint32_t w) {
  if (dirty_[w] != 0) return;
  dirty_[w] = 1;
  dirty_list_.push_back(w);
}

void PerftestEngine::touch_host(size_t host) {
  if (host >= by_host_.size()) return;
  for (const uint32_t w : by_host_[host]) mark(w);
}

void PerftestEngine::touch_all() {
  for (uint32_t w = 0; w < workloads_.size(); ++w) mark(w);
  primed_ = false;
}

void PerftestEngine::file(uint32_t w, TimeNs now) const {
  const TimeNs t = workloads_[w]->next_wakeup(now);
  if (t == wake_at_[w]) return;
  wake_at_[w] = t;
  if (t == TimeNs::max()) return;
  heap_.push_back({t, w});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
}

void PerftestEngine::prime(TimeNs now) const {
  if (primed_) return;
  primed_ = true;
  heap_.clear();
  for (uint32_t w = 0; w < workloads_.size(); ++w) {
    wake_at_[w] = TimeNs::max();
    file(w, now);
  }
}

void PerftestEngine::poll(TimeNs now) {
  prime(now);
  // Deadlines that have come.
  while (!heap_.empty() && heap_.front().at <= now) {
    const Due d = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    heap_.pop_back();
    if (wake_at_[d.w] != d.at) continue;  // stale: re-filed since
    wake_at_[d.w] = TimeNs::max();
    mark(d.w);
  }
  if (!others_done_ && others_running_ == 0 && !stop_with_others_.empty()) {
    others_done_ = true;
    for (const uint32_t w : stop_with_others_) mark(w);
  }
  if (dirty_list_.empty()) return;
  // In the order the workloads were added (as a poll of every workload
  // would run them: the same verbs calls in the same order).
  polling_.swap(dirty_list_);
  dirty_list_.clear();
  std::sort(polling_.begin(), polling_.end());
  for (const uint32_t w : polling_) dirty_[w] = 0;
  for (const uint32_t i : polling_) {
    Workload* w = workloads_[i];
    if (others_done_ && w->config().stop_with_others) w->stop_posting();
    w->poll(now);
    if (counted_done_[i] == 0 && w->traffic_done()) {
      counted_done_[i] = 1;
      const AppWorkload& c = w->config();
      if (c.role == Role::kClient && !c.stop_with_others) --others_running_;
    }
    file(i, now);
  }
  polling_.clear();
}

TimeNs PerftestEngine::next_wakeup(TimeNs now) const {
  prime(now);
  while (!heap_.empty() && wake_at_[heap_.front().w] != heap_.front().at) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    heap_.pop_back();
  }
  // Workloads touched since the last poll wait for the next receive or
  // advance, as they did when every poll ran every workload.
  return heap_.empty() ? TimeNs::max() : heap_.front().at;
}

}  // namespace sf::nic::app
