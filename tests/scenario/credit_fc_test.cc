// Credit-based link flow control in virtual time (seed 003), every port of
// the switch and every host in credit mode (CREDIT_FC; credit_hosts.h).
//
// e. Many-to-one at low link use. 1 MiB of buffer per VL shared by a
//    16-port switch = 64 KiB per port and VL. MTU 8 KiB with update
//    threshold 8 (8 credits: the receiver advertises only once the whole pool
//    is free) against MTU 4 KiB with threshold 2 (16 credits, updates every
//    8 KiB). Expect: credit stall events fall by a large fraction, the long
//    pool's stalls are microsecond-scale (a threshold problem, not
//    congestion), and zero loss in both.
// f. VL arbitration. Twin ports, each carrying a data VL at line rate and a
//    management VL15 flow at 45 Gb/s. A misweighted table (VL15 weight 40,
//    data 60) leaves the data VL ~60 % of its twin's (data 64, VL15 1);
//    fixing the table restores it. Zero loss.
// Each writes a JSON result file (scenario_credit_fc_<e|f>.json).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/config/json_loader.h"
#include "tests/scenario/credit_hosts.h"
#include "tests/scenario/scenario.h"

namespace sf::scenario {
namespace {

constexpr TimeNs kDelay = TimeNs::from_us(1);

struct StallSummary {
  uint64_t stalls = 0;
  TimeNs stalled{0};
  std::array<uint64_t, kStallBuckets> hist{};
  void add(const CreditCounters& c) {
    stalls += c.credit_stalls;
    stalled += c.stalled_time;
    for (int b = 0; b < kStallBuckets; ++b) hist[b] += c.stall_histogram[b];
  }
  uint64_t below_us(uint64_t us) const {  // ended stalls shorter than `us` (a bucket edge)
    uint64_t n = 0;
    for (int b = 0; b < kStallBuckets && stall_bucket_floor_us(b + 1) <= us; ++b) n += hist[b];
    return n;
  }
  uint64_t ended() const {
    uint64_t n = 0;
    for (uint64_t h : hist) n += h;
    return n;
  }
};

std::string hist_json(const std::array<uint64_t, kStallBuckets>& h) {
  std::string s = "{";
  for (int b = 0; b < kStallBuckets; ++b) {
    s += (b == 0 ? "\"" : ", \"") + std::string(b == 0 ? "<1" : ">=" + std::to_string(stall_bucket_floor_us(b))) +
         "us\": " + std::to_string(h[b]);
  }
  return s + "}";
}

std::string hist_text(const std::array<uint64_t, kStallBuckets>& h) {
  std::string s;
  for (int b = 0; b < kStallBuckets; ++b) {
    if (h[b] == 0) continue;
    s += " [" + std::to_string(stall_bucket_floor_us(b)) + "us:" + std::to_string(h[b]) + "]";
  }
  return s;
}

// ---- e ----------------------------------------------------------------------------

constexpr size_t kSenders = 8;
constexpr uint32_t kMessageBytes = 256 << 10;
constexpr uint32_t kMessages = 20;
constexpr TimeNs kPeriod = TimeNs::from_us(800);

sw::SwitchConfig config_e(uint32_t mtu, uint32_t threshold) {
  const std::string doc = "{" + port_table(kSenders + 1, 100) + R"(, "CREDIT_FC": {")" + port_list(kSenders + 1) +
                          R"(": {"mtu": )" + std::to_string(mtu) + R"(, "vl_buffer": "64KiB", "update_threshold": )" +
                          std::to_string(threshold) + "}}}";
  return sw::parse_switch_config(config::parse_text(doc));
}

struct RunE {
  uint32_t mtu = 0;
  uint32_t threshold = 0;
  uint64_t frames = 0;
  uint64_t delivered = 0;
  uint64_t drops = 0;
  uint64_t lost = 0;
  uint64_t overruns = 0;
  uint64_t updates = 0;  // credit frames sent by the switch and the sink
  StallSummary senders;  // credit stalls at the senders (toward the switch)
  StallSummary sw_egress;  // at the switch port toward the sink
  StallSummary total() const {
    StallSummary t = senders;
    t.stalls += sw_egress.stalls;
    t.stalled += sw_egress.stalled;
    for (int b = 0; b < kStallBuckets; ++b) t.hist[b] += sw_egress.hist[b];
    return t;
  }
  double gbps = 0;  // delivered over the run
  TimeNs end;
  bool finished = false;
};

RunE run_e(uint32_t mtu, uint32_t threshold) {
  // Each message posted at a random point of its period; seed 003: the same
  // posts for both MTUs.
  const std::vector<CreditSenderConfig> senders = incast_senders(kSenders, mtu, kMessageBytes, kMessages, kPeriod);
  RunE r;
  r.mtu = mtu;
  r.threshold = threshold;
  CreditFabric fab(config_e(mtu, threshold), senders, {sink_mac()}, 3, kDelay);
  r.end = fab.run(TimeNs::from_us(100), TimeNs::from_ms(40));
  r.finished = fab.finished();
  for (size_t i = 0; i < kSenders; ++i) {
    r.frames += fab.sender(i).frames_total();
    r.senders.add(fab.sender(i).credit().counters());
  }
  r.sw_egress.add(fab.sw().credit(fab.sink_port(0))->counters());
  r.delivered = fab.delivered_frames();
  r.drops = fab.switch_drops();
  r.lost = fab.lost_on_links();
  r.overruns = fab.overruns();
  for (uint16_t p = 0; p < fab.sw().num_ports(); ++p) r.updates += fab.sw().credit(p)->counters().tx_updates;
  r.updates += fab.sink(0).credit().counters().tx_updates;
  r.gbps = static_cast<double>(fab.sink(0).bytes()) * 8 / static_cast<double>(r.end.ns());
  return r;
}

std::string run_json(const RunE& r) {
  const StallSummary t = r.total();
  char buf[512];
  std::snprintf(buf, sizeof buf,
                R"({"mtu_bytes": %u, "update_threshold": %u, "credits_per_vl": %u, "frames": %lu, "delivered": %lu, )"
                R"("switch_drops": %lu, "link_losses": %lu, "overruns": %lu, "credit_updates": %lu, )"
                R"("stalls_total": %lu, "stalls_senders": %lu, "stalls_switch_egress": %lu, "stalled_us": %.1f, )"
                R"("delivered_gbps": %.2f, "end_us": %.1f, )",
                r.mtu, r.threshold, (64u << 10) / r.mtu, r.frames, r.delivered, r.drops, r.lost, r.overruns,
                r.updates, t.stalls, r.senders.stalls, r.sw_egress.stalls, t.stalled.us(), r.gbps, r.end.us());
  return std::string(buf) + "\"stall_histogram\": " + hist_json(t.hist) +
         ", \"stall_histogram_senders\": " + hist_json(r.senders.hist) +
         ", \"stall_histogram_switch_egress\": " + hist_json(r.sw_egress.hist) + "}";
}

void print_run(const RunE& r) {
  const StallSummary t = r.total();
  std::printf("MTU %u threshold %u: %lu frames, %lu delivered, drops %lu, overruns %lu, %lu updates; stalls %lu "
              "(senders %lu, switch egress %lu), %.1f us stalled, %.2f Gb/s\n  histogram:%s\n",
              r.mtu, r.threshold, r.frames, r.delivered, r.drops, r.overruns, r.updates, t.stalls, r.senders.stalls,
              r.sw_egress.stalls, t.stalled.us(), r.gbps, hist_text(t.hist).c_str());
}

TEST(CreditFcScenario, E_SmallerMtuAndThresholdCutStalls) {
  rte_mempool* pool = credit_pool();
  const unsigned free_before = rte_mempool_avail_count(pool);
  const RunE big = run_e(8192, 8);
  const RunE small = run_e(4096, 2);
  // Deterministic: the same seed gives the same run.
  const RunE again = run_e(4096, 2);
  EXPECT_EQ(again.total().stalls, small.total().stalls);
  EXPECT_EQ(again.total().stalled, small.total().stalled);
  EXPECT_EQ(rte_mempool_avail_count(pool), free_before) << "mbuf leak";
  print_run(big);
  print_run(small);
  const double cut = 1.0 - static_cast<double>(small.total().stalls) / static_cast<double>(big.total().stalls);
  std::printf("stall events cut by %.1f %%\n", cut * 100);

  const std::string path = output_dir() + "/scenario_credit_fc_e.json";
  std::ofstream(path) << "{\"scenario\": \"credit_fc_e\", \"seed\": 3, \"senders\": " << kSenders
                      << ", \"message_bytes\": " << kMessageBytes << ", \"messages\": " << kMessages
                      << ", \"period_us\": " << kPeriod.us() << ", \"vl_buffer_bytes\": " << (64 << 10)
                      << ", \"mtu8k_threshold8\": " << run_json(big) << ", \"mtu4k_threshold2\": " << run_json(small)
                      << ", \"stall_events_cut\": " << cut << "}\n";
  std::printf("wrote %s\n", path.c_str());

  for (const RunE* r : {&big, &small}) {
    // Zero loss: every frame delivered, nothing dropped, no slot overrun.
    EXPECT_TRUE(r->finished) << r->mtu;
    EXPECT_EQ(r->delivered, r->frames) << r->mtu;
    EXPECT_EQ(r->drops, 0u) << r->mtu;
    EXPECT_EQ(r->lost, 0u) << r->mtu;
    EXPECT_EQ(r->overruns, 0u) << r->mtu;
  }
  // The 8 KiB / threshold-8 pool stalls often, ...
  ASSERT_GT(big.total().stalls, 2 * kSenders * kMessages);
  // ... and its stalls are a threshold problem: most end within 4 us (one
  // credit loop), unlike the congestion stalls of scenario f (8 us and more).
  EXPECT_GE(big.total().below_us(4), big.total().ended() * 8 / 10);
  // MTU 4 KiB with threshold 2 cuts the stall events by a large fraction
  // (seed 003: ~70 %).
  EXPECT_GE(cut, 0.5);
}

// ---- f ----------------------------------------------------------------------------

constexpr uint8_t kDscpData = 26;  // SL 3 -> VL 0
constexpr uint8_t kDscpMgmt = 56;  // SL 7 -> VL 15
constexpr uint32_t kPayloadF = 4096;
constexpr uint32_t kDataFrames = 6000;  // ~24.6 MB per data sender
constexpr double kMgmtGbps = 45;
constexpr TimeNs kMgmtFor = TimeNs::from_ms(3);

std::string credit_entry(const std::string& weights) {
  return R"({"mtu": 4096, "vl_buffer": "256KiB", "update_threshold": 2, "vls": 1, "management_vl": true,
             "sl_to_vl": {"3": 0, "7": 15}, "vl_arbitration": )" + weights + "}";
}

// Ports 0-3: data A, management A, data B, management B; 4: sink A; 5: sink B.
sw::SwitchConfig config_f(const std::string& port_a_weights) {
  const std::string fixed = R"({"0": 64, "15": 1})";
  const std::string doc = "{" + port_table(6, 100) + R"(, "CREDIT_FC": {
      "Ethernet0,Ethernet4,Ethernet8,Ethernet12,Ethernet20": )" + credit_entry(fixed) + R"(,
      "Ethernet16": )" + credit_entry(port_a_weights) + "}}";
  return sw::parse_switch_config(config::parse_text(doc));
}

wire::MacAddr sink_f(size_t i) { return {{0x02, 0x00, 0x00, 0x00, 0x02, static_cast<uint8_t>(i + 1)}}; }

struct RunF {
  double data_a_gbps = 0;  // data VL at sink A over the window
  double data_b_gbps = 0;
  double mgmt_a_gbps = 0;
  double mgmt_b_gbps = 0;
  double ratio = 0;        // data A / data B
  double data_share_a = 0; // data / (data + mgmt) at sink A
  uint64_t frames = 0;
  uint64_t delivered = 0;
  uint64_t drops = 0;
  uint64_t overruns = 0;
  StallSummary data_sender_a;
  TimeNs end;
  bool finished = false;
};

RunF run_f(const std::string& port_a_weights) {
  std::vector<CreditSenderConfig> senders;
  for (size_t i = 0; i < 4; ++i) {
    const bool mgmt = i % 2 == 1;
    CreditSenderConfig s;
    s.src_mac = sender_mac(i);
    s.dst_mac = sink_f(i / 2);
    s.src_ip = sender_ip(i);
    s.dst_ip = {{10, 0, 2, static_cast<uint8_t>(i / 2 + 1)}};
    s.udp_src_port = static_cast<uint16_t>(0xC000 + i);
    s.payload_bytes = kPayloadF;
    s.dscp = mgmt ? kDscpMgmt : kDscpData;
    if (mgmt) {
      // 45 Gb/s of management traffic: one frame per frame time at 45G.
      s.period = BitRate::gbps(kMgmtGbps).tx_time(wire_bytes(kRoceWriteOverheadBytes + kPayloadF));
      s.messages = static_cast<uint32_t>(kMgmtFor.ns() / s.period.ns());
      s.message_frames = 1;
    } else {
      s.messages = 1;
      s.message_frames = kDataFrames;  // all posted at t = 0: line rate
    }
    senders.push_back(s);
  }
  CreditFabric fab(config_f(port_a_weights), senders, {sink_f(0), sink_f(1)}, 3, kDelay);
  // The window: both VLs backlogged on both ports.
  const TimeNs t0 = TimeNs::from_us(200);
  const TimeNs t1 = TimeNs::from_us(1400);
  fab.sim().run_until(t0);
  const uint64_t da0 = fab.sink(0).dscp_bytes(kDscpData), db0 = fab.sink(1).dscp_bytes(kDscpData);
  const uint64_t ma0 = fab.sink(0).dscp_bytes(kDscpMgmt), mb0 = fab.sink(1).dscp_bytes(kDscpMgmt);
  fab.sim().run_until(t1);
  const double w_ns = static_cast<double>((t1 - t0).ns());
  RunF r;
  r.data_a_gbps = static_cast<double>(fab.sink(0).dscp_bytes(kDscpData) - da0) * 8 / w_ns;
  r.data_b_gbps = static_cast<double>(fab.sink(1).dscp_bytes(kDscpData) - db0) * 8 / w_ns;
  r.mgmt_a_gbps = static_cast<double>(fab.sink(0).dscp_bytes(kDscpMgmt) - ma0) * 8 / w_ns;
  r.mgmt_b_gbps = static_cast<double>(fab.sink(1).dscp_bytes(kDscpMgmt) - mb0) * 8 / w_ns;
  EXPECT_FALSE(fab.sender(0).done()) << "data A must still be backlogged at the window's end";
  EXPECT_FALSE(fab.sender(2).done()) << "data B must still be backlogged at the window's end";
  r.ratio = r.data_a_gbps / r.data_b_gbps;
  r.data_share_a = r.data_a_gbps / (r.data_a_gbps + r.mgmt_a_gbps);
  r.end = fab.run(TimeNs::from_us(100), TimeNs::from_ms(20));
  r.finished = fab.finished();
  for (size_t i = 0; i < 4; ++i) r.frames += fab.sender(i).frames_total();
  r.delivered = fab.delivered_frames();
  r.drops = fab.switch_drops();
  r.overruns = fab.overruns();
  r.data_sender_a.add(fab.sender(0).credit().counters());
  return r;
}

std::string run_json(const RunF& r, const std::string& weights) {
  char buf[640];
  std::snprintf(buf, sizeof buf,
                R"({"port_a_vl_arbitration": %s, "data_a_gbps": %.2f, "data_b_gbps": %.2f, "mgmt_a_gbps": %.2f, )"
                R"("mgmt_b_gbps": %.2f, "data_a_over_b": %.4f, "data_share_a": %.4f, "frames": %lu, "delivered": %lu, )"
                R"("switch_drops": %lu, "overruns": %lu, "data_sender_a_stalls": %lu, "end_us": %.1f, )",
                weights.c_str(), r.data_a_gbps, r.data_b_gbps, r.mgmt_a_gbps, r.mgmt_b_gbps, r.ratio, r.data_share_a,
                r.frames, r.delivered, r.drops, r.overruns, r.data_sender_a.stalls, r.end.us());
  return std::string(buf) + "\"data_sender_a_stall_histogram\": " + hist_json(r.data_sender_a.hist) + "}";
}

TEST(CreditFcScenario, F_MisweightedManagementVlStarvesDataVl) {
  rte_mempool* pool = credit_pool();
  const unsigned free_before = rte_mempool_avail_count(pool);
  const std::string bad_w = R"({"0": 60, "15": 40})";
  const std::string fixed_w = R"({"0": 64, "15": 1})";
  const RunF bad = run_f(bad_w);
  const RunF fixed = run_f(fixed_w);
  EXPECT_EQ(rte_mempool_avail_count(pool), free_before) << "mbuf leak";
  for (const auto& [name, r] : {std::pair{"misweighted", &bad}, std::pair{"fixed", &fixed}}) {
    std::printf("%s: data A %.2f Gb/s, data B %.2f Gb/s (A/B %.3f), mgmt A %.2f, mgmt B %.2f; data share at A %.3f; "
                "data sender A stalls %lu:%s\n",
                name, r->data_a_gbps, r->data_b_gbps, r->ratio, r->mgmt_a_gbps, r->mgmt_b_gbps, r->data_share_a,
                r->data_sender_a.stalls, hist_text(r->data_sender_a.hist).c_str());
  }
  const std::string path = output_dir() + "/scenario_credit_fc_f.json";
  std::ofstream(path) << "{\"scenario\": \"credit_fc_f\", \"seed\": 3, \"mgmt_offered_gbps\": " << kMgmtGbps
                      << ", \"window_us\": [200, 1400], \"misweighted\": " << run_json(bad, bad_w)
                      << ", \"fixed\": " << run_json(fixed, fixed_w) << "}\n";
  std::printf("wrote %s\n", path.c_str());

  // Misweighted: the data VL gets its 60 % of the port, ~60 % of its twin's.
  EXPECT_NEAR(bad.data_share_a, 0.60, 0.02);
  EXPECT_NEAR(bad.ratio, 0.60, 0.05);
  EXPECT_GT(bad.mgmt_a_gbps, 35.0);  // VL15 takes its 40 %
  // The twin with the intended table runs its data VL near line rate.
  EXPECT_GT(bad.data_b_gbps, 90.0);
  // The data sender behind the misweighted port stalls for congestion: its
  // stalls last one arbitration round or more (>= 4 us), not one credit loop.
  ASSERT_GT(bad.data_sender_a.ended(), 0u);
  EXPECT_LE(bad.data_sender_a.below_us(4), bad.data_sender_a.ended() / 10);
  // Fixed table: the port matches its twin again.
  EXPECT_NEAR(fixed.ratio, 1.0, 0.02);
  for (const RunF* r : {&bad, &fixed}) {
    EXPECT_TRUE(r->finished);
    EXPECT_EQ(r->delivered, r->frames);
    EXPECT_EQ(r->drops, 0u);
    EXPECT_EQ(r->overruns, 0u);
  }
}

}  // namespace
}  // namespace sf::scenario
