// Simulator: event dispatch, link serialisation, fault injection.
#include "common/sim/simulator.h"

#include <algorithm>
#include <limits>
#include <span>
#include <stdexcept>

namespace sf::sim {

namespace {
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr size_t kInitialEventCapacity = 4096;
}  // namespace

LinkStats& LinkStats::operator+=(const LinkStats& o) {
  tx_pkts += o.tx_pkts;
  tx_bytes += o.tx_bytes;
  delivered_pkts += o.delivered_pkts;
  delivered_bytes += o.delivered_bytes;
  lost_pkts += o.lost_pkts;
  corrupted_pkts += o.corrupted_pkts;
  down_dropped_pkts += o.down_dropped_pkts;
  blackholed_pkts += o.blackholed_pkts;
  return *this;
}

Simulator::Simulator(uint64_t seed) : seed_(seed) { queue_.reserve(kInitialEventCapacity); }

Simulator::~Simulator() {
  for (const Event& ev : queue_.pending()) {
    if (ev.pkt != nullptr) rte_pktmbuf_free(ev.pkt);
  }
  for (Channel& ch : channels_) {
    for (uint32_t i = 0; i < ch.fifo_count; ++i) {
      rte_pktmbuf_free(ch.fifo[(ch.fifo_head + i) & (ch.fifo.size() - 1)].pkt);
    }
  }
}

NodeId Simulator::add_node(Node& node, std::string name) {
  if (started_) throw std::logic_error("sim: add_node after the first run");
  if (find_node(name)) throw std::invalid_argument("sim: duplicate node name \"" + name + "\"");
  const uint16_t ports = node.num_ports();
  nodes_.push_back(NodeSlot{&node, std::move(name), ports, static_cast<uint32_t>(port_channel_.size()), kNever, -1,
                            node.tracks_tx_ports()});
  port_channel_.resize(port_channel_.size() + ports, kNone);
  return static_cast<NodeId>(nodes_.size() - 1);
}

LinkId Simulator::connect(NodeId a, PortId pa, NodeId b, PortId pb, const LinkParams& params) {
  if (started_) throw std::logic_error("sim: connect after the first run");
  if (a >= nodes_.size() || b >= nodes_.size()) throw std::invalid_argument("sim: connect: unknown node");
  const auto check_port = [this](NodeId n, PortId p) {
    const NodeSlot& s = nodes_[n];
    if (p >= s.num_ports) {
      throw std::invalid_argument("sim: connect: " + s.name + " has no port " + std::to_string(p));
    }
    if (port_channel_[s.first_port + p] != kNone) {
      throw std::invalid_argument("sim: connect: port " + s.name + ":" + std::to_string(p) + " already connected");
    }
  };
  check_port(a, pa);
  check_port(b, pb);
  if (a == b && pa == pb) throw std::invalid_argument("sim: connect: a port cannot be connected to itself");
  if (!(params.loss >= 0 && params.loss <= 1) || !(params.corrupt >= 0 && params.corrupt <= 1)) {
    throw std::invalid_argument("sim: connect: loss and corrupt must be probabilities in [0, 1]");
  }
  if (params.delay < TimeNs(0)) throw std::invalid_argument("sim: connect: negative delay");

  const auto link = static_cast<uint32_t>(links_.size());
  const auto add_channel = [&](NodeId src, PortId sp, NodeId dst, PortId dp) {
    const auto id = static_cast<uint32_t>(channels_.size());
    channels_.push_back(Channel{src, dst, sp, dp, link, false, params.rate, params.delay.ns(), params.loss,
                                params.corrupt, params.corrupt_skip_bytes, 0, params.rate.tx_time(wire_bytes(0)).ns(), Rng(Rng::stream_seed(seed_, id)),
                                LinkStats{}});
    port_channel_[nodes_[src].first_port + sp] = id;
    return id;
  };
  const uint32_t ab = add_channel(a, pa, b, pb);
  const uint32_t ba = add_channel(b, pb, a, pa);
  links_.push_back(Link{{ab, ba}, true, 0});
  return link;
}

void Simulator::set_link_state_at(LinkId link, TimeNs at, bool up) {
  if (link >= links_.size()) throw std::invalid_argument("sim: unknown link");
  if (at.ns() < now_ns_) throw std::invalid_argument("sim: link event in the past");
  queue_.push(at.ns(), EventKind::kLinkState, link, nullptr, up ? 1 : 0);
}

void Simulator::set_link(uint32_t l, bool up) {
  Link& link = links_[l];
  if (link.up == up) return;
  if (!up) ++link.epoch;  // frames in flight are lost
  link.up = up;
  for (const uint32_t c : link.channel) {
    const Channel& ch = channels_[c];
    nodes_[ch.src_node].node->set_port_link(ch.src_port, up, now());
  }
  if (!started_) return;
  for (const uint32_t c : link.channel) after_node_call(channels_[c].src_node);
}

std::optional<LinkId> Simulator::link_of(NodeId node, PortId port) const {
  if (node >= nodes_.size() || port >= nodes_[node].num_ports) return std::nullopt;
  const uint32_t c = port_channel_[nodes_[node].first_port + port];
  if (c == kNone) return std::nullopt;
  return channels_[c].link;
}

uint32_t Simulator::checked_link_of(NodeId node, PortId port) const {
  const auto l = link_of(node, port);
  if (!l) {
    throw std::invalid_argument("sim: " + (node < nodes_.size() ? nodes_[node].name : std::string("?")) + ":" +
                                std::to_string(port) + " is not connected");
  }
  return *l;
}

void Simulator::schedule_fault(TimeNs at, const Fault& f) {
  if (at.ns() < now_ns_) throw std::invalid_argument("sim: fault event in the past");
  queue_.push(at.ns(), EventKind::kFault, static_cast<uint32_t>(faults_.size()));
  faults_.push_back(f);
}

void Simulator::flap_link(LinkId link, TimeNs from, TimeNs until, TimeNs period, TimeNs down_for) {
  if (link >= links_.size()) throw std::invalid_argument("sim: unknown link");
  if (period <= TimeNs(0) || down_for <= TimeNs(0) || down_for >= period) {
    throw std::invalid_argument("sim: flap: want 0 < down time < period");
  }
  if (until <= from) throw std::invalid_argument("sim: flap: until must be after from");
  if ((until - from).ns() / period.ns() > 1'000'000) throw std::invalid_argument("sim: flap: more than a million periods");
  for (TimeNs t = from; t < until; t = t + period) {
    set_link_state_at(link, t, false);
    set_link_state_at(link, std::min(t + down_for, until), true);
  }
}

void Simulator::blackhole_port(NodeId node, PortId port, TimeNs at, TimeNs until) {
  const uint32_t l = checked_link_of(node, port);
  if (until <= at) throw std::invalid_argument("sim: blackhole: until must be after at");
  schedule_fault(at, {FaultKind::kBlackholeOn, l});
  if (until != TimeNs::max()) schedule_fault(until, {FaultKind::kBlackholeOff, l});
}

void Simulator::blackhole_node(NodeId node, TimeNs at, TimeNs until) {
  if (node >= nodes_.size()) throw std::invalid_argument("sim: blackhole: unknown node");
  for (PortId p = 0; p < nodes_[node].num_ports; ++p) {
    if (link_of(node, p)) blackhole_port(node, p, at, until);
  }
}

void Simulator::set_link_loss_at(LinkId link, TimeNs at, double loss) {
  if (link >= links_.size()) throw std::invalid_argument("sim: unknown link");
  if (!(loss >= 0 && loss <= 1)) throw std::invalid_argument("sim: loss must be a probability in [0, 1]");
  schedule_fault(at, {FaultKind::kLoss, link, loss});
}

void Simulator::reboot_node(NodeId node, TimeNs at, TimeNs down_for) {
  if (node >= nodes_.size()) throw std::invalid_argument("sim: reboot: unknown node");
  if (down_for <= TimeNs(0)) throw std::invalid_argument("sim: reboot: the down time must be > 0");
  schedule_fault(at, {FaultKind::kRebootDown, node});
  schedule_fault(at + down_for, {FaultKind::kRebootUp, node});
}

void Simulator::apply_fault(const Fault& f) {
  switch (f.kind) {
    case FaultKind::kBlackholeOn:
    case FaultKind::kBlackholeOff:
      for (const uint32_t c : links_[f.target].channel) {
        Channel& ch = channels_[c];
        if (f.kind == FaultKind::kBlackholeOn) {
          ++ch.blackhole;
        } else if (ch.blackhole > 0) {
          --ch.blackhole;
        }
      }
      break;
    case FaultKind::kLoss:
      for (const uint32_t c : links_[f.target].channel) channels_[c].loss = f.value;
      break;
    case FaultKind::kRebootDown:
    case FaultKind::kRebootUp: {
      const NodeSlot& slot = nodes_[f.target];
      const bool up = f.kind == FaultKind::kRebootUp;
      for (PortId p = 0; p < slot.num_ports; ++p) {
        const uint32_t c = port_channel_[slot.first_port + p];
        if (c != kNone) set_link(channels_[c].link, up);
      }
      if (!up) {
        slot.node->reset(now());
        after_node_call(f.target);
      }
      break;
    }
  }
}

std::optional<NodeId> Simulator::find_node(std::string_view name) const {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].name == name) return static_cast<NodeId>(i);
  }
  return std::nullopt;
}

const LinkStats& Simulator::stats(LinkId link, LinkDir dir) const {
  return channels_[links_.at(link).channel[static_cast<size_t>(dir)]].stats;
}

LinkStats Simulator::total_stats(LinkId link) const {
  LinkStats s = stats(link, LinkDir::kAtoB);
  s += stats(link, LinkDir::kBtoA);
  return s;
}

void Simulator::start() {
  started_ = true;
  for (uint32_t n = 0; n < nodes_.size(); ++n) after_node_call(n);
}

void Simulator::run_until(TimeNs end) {
  if (!started_) start();
  const int64_t end_ns = end.ns();
  while (!queue_.empty() && queue_.top().time_ns <= end_ns) {
    const Event ev = queue_.pop();
    now_ns_ = ev.time_ns;
    if (!queue_.empty()) prefetch(queue_.top());
    dispatch(ev);
  }
  now_ns_ = std::max(now_ns_, end_ns);
}

// The next event's state is fetched while this one runs (a large fabric's
// channels, nodes and frames are mostly out of cache): its channel, and for a
// delivery the frame's mbuf header and first data lines (at the default
// headroom, where the receiver parses). Only a hint: nothing is read.
void Simulator::prefetch(const Event& ev) const {
  switch (ev.kind) {
    case EventKind::kDeliver: {
      const auto* m = reinterpret_cast<const char*>(ev.pkt);
      __builtin_prefetch(m);
      __builtin_prefetch(m + 64);
      __builtin_prefetch(m + sizeof(rte_mbuf) + RTE_PKTMBUF_HEADROOM);
      __builtin_prefetch(m + sizeof(rte_mbuf) + RTE_PKTMBUF_HEADROOM + 64);
      [[fallthrough]];
    }
    case EventKind::kTxDone: {
      const auto* c = reinterpret_cast<const char*>(&channels_[ev.target]);
      __builtin_prefetch(c);
      __builtin_prefetch(c + 64);
      break;
    }
    case EventKind::kWakeup:
      __builtin_prefetch(&nodes_[ev.target]);
      break;
    default:
      break;
  }
}

void Simulator::dispatch(const Event& ev) {
  ++events_processed_;
  mix_trace(static_cast<uint64_t>(ev.time_ns));
  mix_trace((static_cast<uint64_t>(ev.kind) << 32) | ev.target);
  switch (ev.kind) {
    case EventKind::kTxDone: {
      Channel& ch = channels_[ev.target];
      ch.busy = false;
      try_transmit(ev.target);
      update_wakeup(ch.src_node);
      break;
    }
    case EventKind::kDeliver: {
      Channel& ch = channels_[ev.target];
      const Link& link = links_[ch.link];
      rte_mbuf* pkt = ev.pkt;
      mix_trace(pkt->pkt_len);
      file_next_delivery(ev.target);
      if (!link.up || link.epoch != ev.aux) {
        ++ch.stats.down_dropped_pkts;
        rte_pktmbuf_free(pkt);
        break;
      }
      ++ch.stats.delivered_pkts;
      ch.stats.delivered_bytes += pkt->pkt_len;
      nodes_[ch.dst_node].node->receive(ch.dst_port, std::span<rte_mbuf*>(&pkt, 1), now());
      after_node_call(ch.dst_node);
      break;
    }
    case EventKind::kWakeup: {
      NodeSlot& slot = nodes_[ev.target];
      if (slot.wakeup_ns != ev.time_ns) break;  // superseded by an earlier wakeup
      slot.wakeup_ns = kNever;
      slot.last_advance_ns = now_ns_;
      slot.node->advance(now());
      after_node_call(ev.target);
      break;
    }
    case EventKind::kLinkState:
      set_link(ev.target, ev.aux != 0);
      break;
    case EventKind::kFault:
      apply_fault(faults_[ev.target]);
      break;
  }
}

void Simulator::try_transmit(uint32_t channel) {
  Channel& ch = channels_[channel];
  rte_mbuf* pkt = nullptr;
  const uint16_t n = nodes_[ch.src_node].node->transmit(ch.src_port, std::span<rte_mbuf*>(&pkt, 1), now());
  if (n == 0 || pkt == nullptr) return;
  const uint32_t len = pkt->pkt_len;
  ++ch.stats.tx_pkts;
  ch.stats.tx_bytes += len;
  if (len != ch.last_len) {
    ch.last_len = len;
    ch.last_ser_ns = ch.rate.tx_time(wire_bytes(len)).ns();
  }
  const int64_t done_ns = now_ns_ + ch.last_ser_ns;
  ch.busy = true;
  queue_.push(done_ns, EventKind::kTxDone, channel);
  const Link& link = links_[ch.link];
  if (!link.up) {
    ++ch.stats.down_dropped_pkts;
    rte_pktmbuf_free(pkt);
    return;
  }
  if (ch.blackhole != 0) {
    ++ch.stats.blackholed_pkts;
    rte_pktmbuf_free(pkt);
    return;
  }
  if (ch.loss > 0 && ch.rng.chance(ch.loss)) {
    ++ch.stats.lost_pkts;
    rte_pktmbuf_free(pkt);
    return;
  }
  if (ch.corrupt > 0 && ch.rng.chance(ch.corrupt)) corrupt_frame(ch, pkt);
  schedule_delivery(channel, done_ns + ch.delay_ns, pkt, link.epoch);
}

void Simulator::schedule_delivery(uint32_t channel, int64_t time_ns, rte_mbuf* pkt, uint16_t epoch) {
  Channel& ch = channels_[channel];
  if (!ch.deliver_filed) {
    ch.deliver_filed = true;
    queue_.push(time_ns, EventKind::kDeliver, channel, pkt, epoch);
    return;
  }
  if (ch.fifo_count == ch.fifo.size()) {  // grows to the high-water mark, in order from index 0
    std::vector<InFlight> bigger(ch.fifo.empty() ? 16 : ch.fifo.size() * 2);
    for (uint32_t i = 0; i < ch.fifo_count; ++i) bigger[i] = ch.fifo[(ch.fifo_head + i) & (ch.fifo.size() - 1)];
    ch.fifo = std::move(bigger);
    ch.fifo_head = 0;
  }
  ch.fifo[(ch.fifo_head + ch.fifo_count) & (ch.fifo.size() - 1)] = InFlight{time_ns, queue_.take_seq(), pkt, epoch};
  ++ch.fifo_count;
}

void Simulator::file_next_delivery(uint32_t channel) {
  Channel& ch = channels_[channel];
  if (ch.fifo_count == 0) {
    ch.deliver_filed = false;
    return;
  }
  const InFlight& f = ch.fifo[ch.fifo_head];
  queue_.push_seq(f.time_ns, f.seq, EventKind::kDeliver, channel, f.pkt, f.epoch);
  ch.fifo_head = (ch.fifo_head + 1) & static_cast<uint32_t>(ch.fifo.size() - 1);
  --ch.fifo_count;
}

void Simulator::corrupt_frame(Channel& ch, rte_mbuf* pkt) {
  const uint32_t len = pkt->pkt_len;
  if (len == 0) return;
  const uint32_t skip = ch.corrupt_skip_bytes < len ? ch.corrupt_skip_bytes : 0;
  const uint64_t r = ch.rng.next_u64();
  uint32_t off = skip + static_cast<uint32_t>((r & 0xFFFFFFFFu) % (len - skip));
  const auto mask = static_cast<uint8_t>(1u << ((r >> 32) & 7));
  // Walk the segment chain to the byte (multi-segment frames).
  for (rte_mbuf* seg = pkt; seg != nullptr; seg = seg->next) {
    if (off < seg->data_len) {
      *rte_pktmbuf_mtod_offset(seg, uint8_t*, off) ^= mask;
      ++ch.stats.corrupted_pkts;
      return;
    }
    off -= seg->data_len;
  }
}

void Simulator::after_node_call(uint32_t node) {
  const NodeSlot& slot = nodes_[node];
  if (slot.tracks_tx) {
    // Only the ports the node says may have work (Node::next_tx_port), in
    // port order as below: the same offers that change anything.
    Node& n = *slot.node;
    for (uint32_t p = n.next_tx_port(0, now()); p < slot.num_ports; p = n.next_tx_port(static_cast<PortId>(p + 1), now())) {
      const uint32_t c = port_channel_[slot.first_port + p];
      if (c != kNone && !channels_[c].busy) try_transmit(c);
    }
  } else {
    for (uint32_t p = 0; p < slot.num_ports; ++p) {
      const uint32_t c = port_channel_[slot.first_port + p];
      if (c != kNone && !channels_[c].busy) try_transmit(c);
    }
  }
  update_wakeup(node);
}

void Simulator::wake(NodeId node) {
  if (node >= nodes_.size()) throw std::invalid_argument("wake: no node " + std::to_string(node));
  if (started_) update_wakeup(node);  // else start() reads it
}

void Simulator::update_wakeup(uint32_t node) {
  NodeSlot& slot = nodes_[node];
  const int64_t want_ns = slot.node->next_wakeup(now()).ns();
  if (want_ns == kNever) return;  // an already pending wakeup stays (harmless)
  int64_t at_ns = std::max(want_ns, now_ns_);
  if (at_ns == now_ns_ && slot.last_advance_ns == now_ns_) at_ns = now_ns_ + 1;
  if (at_ns >= slot.wakeup_ns) return;  // an earlier or equal wakeup is pending
  slot.wakeup_ns = at_ns;
  queue_.push(at_ns, EventKind::kWakeup, node);
}

}  // namespace sf::sim
