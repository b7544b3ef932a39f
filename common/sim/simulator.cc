// Simulator: event dispatch, link serialisation, fault injection.
#include "common/sim/simulator.h"

#include <rte_lcore.h>

#include <algorithm>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>

namespace sf::sim {

namespace {
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr size_t kInitialEventCapacity = 4096;
constexpr uint32_t kMaxThreads = 256;
constexpr uint64_t kFnvBasis = 0xCBF29CE484222325ull;
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

Simulator::Simulator(uint64_t seed) : seed_(seed) {
  parts_.push_back(std::make_unique<Part>());
  parts_[0]->queue.reserve(kInitialEventCapacity);
}

Simulator::Simulator(uint64_t seed, Partitioned p) : seed_(seed), partitioned_(true) {
  if (p.threads < 1 || p.threads > kMaxThreads) {
    throw std::invalid_argument("sim: threads must be 1.." + std::to_string(kMaxThreads));
  }
  for (uint32_t i = 0; i < p.threads; ++i) {
    parts_.push_back(std::make_unique<Part>());
    parts_.back()->queue.reserve(kInitialEventCapacity);
    parts_.back()->outbox.resize(p.threads);
  }
}

Simulator::~Simulator() {
  if (!workers_.empty()) {
    stopping_ = true;
    barrier_->arrive_and_wait();  // the workers wait there between runs
    for (std::thread& t : workers_) t.join();
  }
  for (const auto& pt : parts_) {
    for (const Event& ev : pt->queue.pending()) {
      if (ev.pkt != nullptr) rte_pktmbuf_free(ev.pkt);
    }
    for (const auto& box : pt->outbox) {
      for (const Outgoing& o : box) rte_pktmbuf_free(o.pkt);
    }
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
  const auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(NodeSlot{&node, std::move(name), ports, static_cast<uint32_t>(port_channel_.size()), kNever, -1,
                            node.tracks_tx_ports()});
  nodes_.back().part = id % static_cast<uint32_t>(parts_.size());
  port_channel_.resize(port_channel_.size() + ports, kNone);
  return id;
}

void Simulator::set_partition(NodeId node, uint32_t partition) {
  if (!partitioned_) throw std::logic_error("sim: set_partition on the default (one-thread) engine");
  if (started_) throw std::logic_error("sim: set_partition after the first run");
  if (node >= nodes_.size()) throw std::invalid_argument("sim: set_partition: unknown node");
  if (partition >= parts_.size()) {
    throw std::invalid_argument("sim: set_partition: partition " + std::to_string(partition) + " of " +
                                std::to_string(parts_.size()));
  }
  nodes_[node].part = partition;
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
  const auto add_channel = [&](NodeId src, PortId sp, NodeId dst, PortId dp, uint8_t side) {
    const auto id = static_cast<uint32_t>(channels_.size());
    channels_.push_back(Channel{src, dst, sp, dp, link, false, params.rate, params.delay.ns(), params.loss,
                                params.corrupt, params.corrupt_skip_bytes, 0, params.rate.tx_time(wire_bytes(0)).ns(), Rng(Rng::stream_seed(seed_, id)),
                                LinkStats{}});
    channels_.back().src_side = side;
    port_channel_[nodes_[src].first_port + sp] = id;
    return id;
  };
  const uint32_t ab = add_channel(a, pa, b, pb, 0);
  const uint32_t ba = add_channel(b, pb, a, pa, 1);
  links_.push_back(Link{{ab, ba}, {}});
  return link;
}

void Simulator::set_link_state_at(LinkId link, TimeNs at, bool up) {
  if (link >= links_.size()) throw std::invalid_argument("sim: unknown link");
  if (at < now()) throw std::invalid_argument("sim: link event in the past");
  if (!partitioned_) {
    push(*parts_[0], at.ns(), EventKind::kLinkState, link, nullptr, up ? 1 : 0);
    return;
  }
  // Each end applies it in its own partition (aux: up | (side + 1) << 1).
  for (uint8_t s = 0; s < 2; ++s) {
    push(part_of(side_node(link, s)), at.ns(), EventKind::kLinkState, link, nullptr,
         static_cast<uint16_t>((up ? 1 : 0) | ((s + 1) << 1)));
  }
}

void Simulator::set_link(Part& pt, uint32_t l, bool up) {
  Link& link = links_[l];
  if (link.side[0].up == up) return;
  for (LinkSide& sd : link.side) {
    if (!up) ++sd.epoch;  // frames in flight are lost
    sd.up = up;
  }
  for (const uint32_t c : link.channel) {
    const Channel& ch = channels_[c];
    nodes_[ch.src_node].node->set_port_link(ch.src_port, up, TimeNs(pt.now_ns));
  }
  if (!started_) return;
  for (const uint32_t c : link.channel) after_node_call(pt, channels_[c].src_node);
}

void Simulator::set_link_side(Part& pt, uint32_t l, uint8_t side, bool up, bool call) {
  LinkSide& sd = links_[l].side[side];
  if (sd.up == up) return;
  if (!up) ++sd.epoch;  // frames in flight towards this end are lost
  sd.up = up;
  const Channel& ch = channels_[links_[l].channel[side]];
  nodes_[ch.src_node].node->set_port_link(ch.src_port, up, TimeNs(pt.now_ns));
  if (started_ && call) after_node_call(pt, ch.src_node);
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

void Simulator::schedule_fault(TimeNs at, const Fault& f, uint32_t node) {
  if (at < now()) throw std::invalid_argument("sim: fault event in the past");
  push(part_of(node), at.ns(), EventKind::kFault, static_cast<uint32_t>(faults_.size()));
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
  // The default engine applies it to both directions in one event; the
  // partitioned one on each end to the direction that end sends.
  for (uint8_t s = 0; s < (partitioned_ ? 2 : 1); ++s) {
    const uint8_t side = partitioned_ ? s : kSides;
    const uint32_t who = side_node(l, s);
    schedule_fault(at, {FaultKind::kBlackholeOn, l, 0, side}, who);
    if (until != TimeNs::max()) schedule_fault(until, {FaultKind::kBlackholeOff, l, 0, side}, who);
  }
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
  for (uint8_t s = 0; s < (partitioned_ ? 2 : 1); ++s) {
    schedule_fault(at, {FaultKind::kLoss, link, loss, partitioned_ ? s : kSides}, side_node(link, s));
  }
}

void Simulator::reboot_node(NodeId node, TimeNs at, TimeNs down_for) {
  if (node >= nodes_.size()) throw std::invalid_argument("sim: reboot: unknown node");
  if (down_for <= TimeNs(0)) throw std::invalid_argument("sim: reboot: the down time must be > 0");
  schedule_fault(at, {FaultKind::kRebootDown, node}, node);
  schedule_fault(at + down_for, {FaultKind::kRebootUp, node}, node);
  if (!partitioned_) return;
  // The far ends of its links see them go down and come up at the same times.
  const NodeSlot& slot = nodes_[node];
  for (PortId p = 0; p < slot.num_ports; ++p) {
    const uint32_t c = port_channel_[slot.first_port + p];
    if (c == kNone || channels_[c].dst_node == node) continue;
    const auto far = static_cast<uint8_t>(1 - channels_[c].src_side);
    const uint32_t l = channels_[c].link;
    Part& fp = part_of(channels_[c].dst_node);
    push(fp, at.ns(), EventKind::kLinkState, l, nullptr, static_cast<uint16_t>((far + 1) << 1));
    push(fp, (at + down_for).ns(), EventKind::kLinkState, l, nullptr, static_cast<uint16_t>(1 | ((far + 1) << 1)));
  }
}

void Simulator::apply_fault(Part& pt, const Fault& f) {
  switch (f.kind) {
    case FaultKind::kBlackholeOn:
    case FaultKind::kBlackholeOff:
      for (uint8_t s = 0; s < 2; ++s) {
        if (f.side != kSides && f.side != s) continue;
        Channel& ch = channels_[links_[f.target].channel[s]];
        if (f.kind == FaultKind::kBlackholeOn) {
          ++ch.blackhole;
        } else if (ch.blackhole > 0) {
          --ch.blackhole;
        }
      }
      break;
    case FaultKind::kLoss:
      for (uint8_t s = 0; s < 2; ++s) {
        if (f.side == kSides || f.side == s) channels_[links_[f.target].channel[s]].loss = f.value;
      }
      break;
    case FaultKind::kRebootDown:
    case FaultKind::kRebootUp: {
      const NodeSlot& slot = nodes_[f.target];
      const bool up = f.kind == FaultKind::kRebootUp;
      for (PortId p = 0; p < slot.num_ports; ++p) {
        const uint32_t c = port_channel_[slot.first_port + p];
        if (c == kNone) continue;
        if (partitioned_) {
          set_link_side(pt, channels_[c].link, channels_[c].src_side, up, up);
        } else {
          set_link(pt, channels_[c].link, up);
        }
      }
      if (!up) {
        slot.node->reset(TimeNs(pt.now_ns));
        after_node_call(pt, f.target);
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

LinkStats Simulator::stats(LinkId link, LinkDir dir) const {
  const Channel& ch = channels_[links_.at(link).channel[static_cast<size_t>(dir)]];
  LinkStats s = ch.stats;
  s.delivered_pkts += ch.rx_delivered_pkts;
  s.delivered_bytes += ch.rx_delivered_bytes;
  s.down_dropped_pkts += ch.rx_down_dropped_pkts;
  return s;
}

LinkStats Simulator::total_stats(LinkId link) const {
  LinkStats s = stats(link, LinkDir::kAtoB);
  s += stats(link, LinkDir::kBtoA);
  return s;
}

uint64_t Simulator::events_processed() const {
  uint64_t n = 0;
  for (const auto& pt : parts_) n += pt->events;
  return n;
}

uint64_t Simulator::trace_hash() const {
  if (!partitioned_) return parts_[0]->trace;
  uint64_t h = kFnvBasis;
  for (const NodeSlot& n : nodes_) h = (h ^ n.trace) * 0x100000001B3ull;
  return h;
}

uint32_t Simulator::owner(const Event& ev) const {
  switch (ev.kind) {
    case EventKind::kTxDone: return channels_[ev.target].src_node;
    case EventKind::kDeliver: return channels_[ev.target].dst_node;
    case EventKind::kWakeup: return ev.target;
    case EventKind::kLinkState: return side_node(ev.target, static_cast<uint8_t>(ev.aux >> 1 == 0 ? 0 : (ev.aux >> 1) - 1));
    case EventKind::kFault: {
      const Fault& f = faults_[ev.target];
      if (f.kind == FaultKind::kRebootDown || f.kind == FaultKind::kRebootUp) return f.target;
      return side_node(f.target, f.side == kSides ? 0 : f.side);
    }
  }
  return 0;
}

void Simulator::start() {
  started_ = true;
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    Part& pt = part_of(n);
    pt.origin = partitioned_ ? n : kNone;
    after_node_call(pt, n);
    pt.origin = kNone;
  }
  if (!partitioned_) return;
  // The lookahead: the shortest link between two partitions.
  lookahead_ns_ = kNoLookahead;
  for (const Channel& ch : channels_) {
    if (nodes_[ch.src_node].part == nodes_[ch.dst_node].part) continue;
    if (ch.delay_ns <= 0) {
      throw std::invalid_argument("sim: the link " + nodes_[ch.src_node].name + ":" + std::to_string(ch.src_port) +
                                  " - " + nodes_[ch.dst_node].name + ":" + std::to_string(ch.dst_port) +
                                  " joins partitions " + std::to_string(nodes_[ch.src_node].part) + " and " +
                                  std::to_string(nodes_[ch.dst_node].part) +
                                  " with no delay: keep its ends in one partition");
    }
    lookahead_ns_ = std::min(lookahead_ns_, ch.delay_ns);
  }
  for (uint32_t p = 0; p < parts_.size(); ++p) drain_outboxes(p);
  if (parts_.size() > 1) {
    barrier_ = std::make_unique<std::barrier<>>(static_cast<std::ptrdiff_t>(parts_.size()));
    for (uint32_t p = 1; p < parts_.size(); ++p) workers_.emplace_back(&Simulator::worker, this, p);
  }
}

void Simulator::run_until(TimeNs end) {
  if (!started_) start();
  const int64_t end_ns = end.ns();
  if (partitioned_) {
    run_partitioned(end_ns);
    for (const auto& pt : parts_) pt->now_ns = std::max(pt->now_ns, end_ns);
    return;
  }
  Part& pt = *parts_[0];
  while (!pt.queue.empty() && pt.queue.top().time_ns <= end_ns) {
    const Event ev = pt.queue.pop();
    pt.now_ns = ev.time_ns;
    if (!pt.queue.empty()) prefetch(pt.queue.top());
    dispatch(pt, ev);
  }
  pt.now_ns = std::max(pt.now_ns, end_ns);
}

void Simulator::run_window(Part& pt, int64_t limit_ns) {
  while (!pt.queue.empty() && pt.queue.top().time_ns < limit_ns) {
    const Event ev = pt.queue.pop();
    pt.now_ns = ev.time_ns;
    if (!pt.queue.empty()) prefetch(pt.queue.top());
    dispatch(pt, ev);
  }
  pt.origin = kNone;
}

void Simulator::run_partitioned(int64_t end_ns) {
  if (failed_.load(std::memory_order_relaxed)) throw std::logic_error("sim: run_until after a node threw in an earlier run");
  if (!workers_.empty()) {
    run_end_ns_ = end_ns;
    barrier_->arrive_and_wait();  // the workers start this run
  }
  partition_loop(0, end_ns);
  if (failed_.load(std::memory_order_relaxed)) std::rethrow_exception(error_);
}

void Simulator::record_error() {
  const std::lock_guard<std::mutex> g(error_lock_);
  if (!error_) error_ = std::current_exception();
  failed_.store(true, std::memory_order_relaxed);
}

// Every partition runs this loop on its own thread, in lock step: publish the
// earliest pending time, agree on the window [gmin, gmin + lookahead) (every
// thread computes the same), run it, then file the frames other partitions
// sent here. All threads leave at the same window (nothing left <= end).
void Simulator::partition_loop(uint32_t p, int64_t end_ns) {
  Part& pt = *parts_[p];
  const auto sync = [this] {
    if (barrier_) barrier_->arrive_and_wait();
  };
  while (true) {
    pt.next_ns.store(pt.queue.empty() ? kNever : pt.queue.top().time_ns, std::memory_order_relaxed);
    sync();
    int64_t gmin = kNever;
    for (const auto& q : parts_) gmin = std::min(gmin, q->next_ns.load(std::memory_order_relaxed));
    if (gmin > end_ns) return;
    const int64_t limit = std::min(gmin + lookahead_ns_, end_ns + 1);
    if (p == 0) ++windows_;
    try {
      run_window(pt, limit);
    } catch (...) {
      record_error();  // the others see it after the barrier; all leave together
    }
    sync();
    if (failed_.load(std::memory_order_relaxed)) return;
    drain_outboxes(p);
  }
}

void Simulator::drain_outboxes(uint32_t p) {
  Part& pt = *parts_[p];
  for (const auto& src : parts_) {
    std::vector<Outgoing>& box = src->outbox[p];
    for (const Outgoing& o : box) schedule_delivery(pt, o.channel, o.time_ns, o.seq, o.pkt, o.epoch);
    box.clear();
  }
}

void Simulator::worker(uint32_t p) {
  // A DPDK lcore id when EAL runs, so the mbuf pool's per-lcore cache serves
  // this thread (without one it goes to the pool's ring every time).
  const bool registered = rte_thread_register() == 0;
  while (true) {
    barrier_->arrive_and_wait();
    if (stopping_) break;
    partition_loop(p, run_end_ns_);
  }
  if (registered) rte_thread_unregister();
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

void Simulator::dispatch(Part& pt, const Event& ev) {
  ++pt.events;
  uint32_t who = 0;
  if (partitioned_) {
    who = owner(ev);
    pt.origin = who;  // what this event schedules is ordered by this node's count
  }
  mix_trace(pt, who, static_cast<uint64_t>(ev.time_ns));
  mix_trace(pt, who, (static_cast<uint64_t>(ev.kind) << 32) | ev.target);
  switch (ev.kind) {
    case EventKind::kTxDone: {
      Channel& ch = channels_[ev.target];
      ch.busy = false;
      try_transmit(pt, ev.target);
      update_wakeup(pt, ch.src_node);
      break;
    }
    case EventKind::kDeliver: {
      Channel& ch = channels_[ev.target];
      const LinkSide& side = links_[ch.link].side[1 - ch.src_side];
      rte_mbuf* pkt = ev.pkt;
      mix_trace(pt, who, pkt->pkt_len);
      file_next_delivery(pt, ev.target);
      if (!side.up || side.epoch != ev.aux) {
        ++ch.rx_down_dropped_pkts;
        rte_pktmbuf_free(pkt);
        break;
      }
      ++ch.rx_delivered_pkts;
      ch.rx_delivered_bytes += pkt->pkt_len;
      nodes_[ch.dst_node].node->receive(ch.dst_port, std::span<rte_mbuf*>(&pkt, 1), TimeNs(pt.now_ns));
      after_node_call(pt, ch.dst_node);
      break;
    }
    case EventKind::kWakeup: {
      NodeSlot& slot = nodes_[ev.target];
      if (slot.wakeup_ns != ev.time_ns) break;  // superseded by an earlier wakeup
      slot.wakeup_ns = kNever;
      slot.last_advance_ns = pt.now_ns;
      slot.node->advance(TimeNs(pt.now_ns));
      after_node_call(pt, ev.target);
      break;
    }
    case EventKind::kLinkState:
      if ((ev.aux >> 1) == 0) {
        set_link(pt, ev.target, (ev.aux & 1) != 0);
      } else {
        set_link_side(pt, ev.target, static_cast<uint8_t>((ev.aux >> 1) - 1), (ev.aux & 1) != 0, true);
      }
      break;
    case EventKind::kFault:
      apply_fault(pt, faults_[ev.target]);
      break;
  }
}

void Simulator::try_transmit(Part& pt, uint32_t channel) {
  Channel& ch = channels_[channel];
  const int64_t now_ns = pt.now_ns;
  rte_mbuf* pkt = nullptr;
  const uint16_t n = nodes_[ch.src_node].node->transmit(ch.src_port, std::span<rte_mbuf*>(&pkt, 1), TimeNs(now_ns));
  if (n == 0 || pkt == nullptr) return;
  const uint32_t len = pkt->pkt_len;
  ++ch.stats.tx_pkts;
  ch.stats.tx_bytes += len;
  if (len != ch.last_len) {
    ch.last_len = len;
    ch.last_ser_ns = ch.rate.tx_time(wire_bytes(len)).ns();
  }
  const int64_t done_ns = now_ns + ch.last_ser_ns;
  ch.busy = true;
  push(pt, done_ns, EventKind::kTxDone, channel);
  const LinkSide& side = links_[ch.link].side[ch.src_side];
  if (!side.up) {
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
  const int64_t at_ns = done_ns + ch.delay_ns;
  const uint64_t seq = next_seq(pt);
  const uint32_t dst_part = nodes_[ch.dst_node].part;
  if (partitioned_ && dst_part != nodes_[ch.src_node].part) {
    pt.outbox[dst_part].push_back(Outgoing{at_ns, seq, pkt, channel, side.epoch});  // filed there after the window
    return;
  }
  schedule_delivery(pt, channel, at_ns, seq, pkt, side.epoch);
}

void Simulator::schedule_delivery(Part& pt, uint32_t channel, int64_t time_ns, uint64_t seq, rte_mbuf* pkt,
                                  uint16_t epoch) {
  Channel& ch = channels_[channel];
  if (!ch.deliver_filed) {
    ch.deliver_filed = true;
    pt.queue.push_seq(time_ns, seq, EventKind::kDeliver, channel, pkt, epoch);
    return;
  }
  if (ch.fifo_count == ch.fifo.size()) {  // grows to the high-water mark, in order from index 0
    std::vector<InFlight> bigger(ch.fifo.empty() ? 16 : ch.fifo.size() * 2);
    for (uint32_t i = 0; i < ch.fifo_count; ++i) bigger[i] = ch.fifo[(ch.fifo_head + i) & (ch.fifo.size() - 1)];
    ch.fifo = std::move(bigger);
    ch.fifo_head = 0;
  }
  ch.fifo[(ch.fifo_head + ch.fifo_count) & (ch.fifo.size() - 1)] = InFlight{time_ns, seq, pkt, epoch};
  ++ch.fifo_count;
}

void Simulator::file_next_delivery(Part& pt, uint32_t channel) {
  Channel& ch = channels_[channel];
  if (ch.fifo_count == 0) {
    ch.deliver_filed = false;
    return;
  }
  const InFlight& f = ch.fifo[ch.fifo_head];
  pt.queue.push_seq(f.time_ns, f.seq, EventKind::kDeliver, channel, f.pkt, f.epoch);
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

void Simulator::after_node_call(Part& pt, uint32_t node) {
  const NodeSlot& slot = nodes_[node];
  const TimeNs now(pt.now_ns);
  if (slot.tracks_tx) {
    // Only the ports the node says may have work (Node::next_tx_port), in
    // port order as below: the same offers that change anything.
    Node& n = *slot.node;
    for (uint32_t p = n.next_tx_port(0, now); p < slot.num_ports; p = n.next_tx_port(static_cast<PortId>(p + 1), now)) {
      const uint32_t c = port_channel_[slot.first_port + p];
      if (c != kNone && !channels_[c].busy) try_transmit(pt, c);
    }
  } else {
    for (uint32_t p = 0; p < slot.num_ports; ++p) {
      const uint32_t c = port_channel_[slot.first_port + p];
      if (c != kNone && !channels_[c].busy) try_transmit(pt, c);
    }
  }
  update_wakeup(pt, node);
}

void Simulator::wake(NodeId node) {
  if (node >= nodes_.size()) throw std::invalid_argument("wake: no node " + std::to_string(node));
  if (started_) update_wakeup(part_of(node), node);  // else start() reads it
}

void Simulator::update_wakeup(Part& pt, uint32_t node) {
  NodeSlot& slot = nodes_[node];
  const int64_t now_ns = pt.now_ns;
  const int64_t want_ns = slot.node->next_wakeup(TimeNs(now_ns)).ns();
  if (want_ns == kNever) return;  // an already pending wakeup stays (harmless)
  int64_t at_ns = std::max(want_ns, now_ns);
  if (at_ns == now_ns && slot.last_advance_ns == now_ns) at_ns = now_ns + 1;
  if (at_ns >= slot.wakeup_ns) return;  // an earlier or equal wakeup is pending
  slot.wakeup_ns = at_ns;
  push(pt, at_ns, EventKind::kWakeup, node);
}

}  // namespace sf::sim
