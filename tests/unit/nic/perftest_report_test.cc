// perftest report formats and statistics on known sample sets. Expected
// numbers are worked out by hand from perftest's definitions (comments show
// the arithmetic); expected rows are assembled from the format's field widths.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "nic/app/perftest_report.h"

namespace sf::nic {
namespace {

std::string sp(size_t n) { return std::string(n, ' '); }

// 1. Names: the six workloads round-trip, perftest's binary names are accepted.
TEST(PerftestNames, RoundTrip) {
  for (const char* n : {"write_bw", "write_lat", "read_bw", "read_lat", "send_bw", "send_lat"}) {
    const auto t = perftest_test_from_string(n);
    ASSERT_TRUE(t.has_value()) << n;
    EXPECT_EQ(to_string(*t), n);
  }
  EXPECT_EQ(perftest_test_from_string("ib_read_lat"), (PerftestTest{PerftestVerb::kRead, PerftestKind::kLat}));
  EXPECT_FALSE(perftest_test_from_string("atomic_bw").has_value());
  EXPECT_FALSE(perftest_test_from_string("").has_value());
  EXPECT_EQ(to_string(PerftestVerb::kWrite), "RDMA_Write");
  EXPECT_EQ(to_string(PerftestVerb::kSend), "Send");
}

// 2. Bandwidth numbers: 1000 x 64 KiB in 10 485 760 ns is exactly 50 Gb/s
// (524 288 000 bit / 10.48576 ms) and 95 367.43 msg/s; a best message time of
// 5243 ns gives 65536 * 8 / 5243 = 99.998 Gb/s peak. In MB/s: bytes/s / 2^20.
TEST(PerftestBw, ComputeGbpsAndMBps) {
  const BwResults r{65536, 1000, TimeNs(10'485'760), TimeNs(5243)};
  const BwReport g = compute_bw(r, BwUnits::kGbps);
  EXPECT_DOUBLE_EQ(g.bw_avg, 50.0);
  EXPECT_NEAR(g.msg_rate_mpps, 1000.0 / 10'485'760e-9 / 1e6, 1e-12);
  EXPECT_NEAR(g.bw_peak, 65536.0 * 8 / 5243, 1e-9);
  const BwReport m = compute_bw(r, BwUnits::kMBps);
  EXPECT_NEAR(m.bw_avg, 65536.0 * 1000 / 10'485'760e-9 / 1048576.0, 1e-9);  // 5960.46 MB/s
  // No peak (-N): 0.
  EXPECT_EQ(compute_bw(BwResults{65536, 1000, TimeNs(10'485'760), TimeNs::zero()}, BwUnits::kGbps).bw_peak, 0.0);
  EXPECT_THROW(compute_bw(BwResults{1, 1, TimeNs::zero(), TimeNs::zero()}, BwUnits::kGbps), std::invalid_argument);
}

// 3. The table exactly as ib_write_bw --report_gbits prints it.
TEST(PerftestBw, HeaderAndRowLayout) {
  EXPECT_EQ(bw_header(BwUnits::kGbps),
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n");
  EXPECT_EQ(bw_header(BwUnits::kMBps),
            " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n");
  const BwReport g = compute_bw(BwResults{65536, 1000, TimeNs(10'485'760), TimeNs(5243)}, BwUnits::kGbps);
  // " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf\n"
  const std::string expect = " 65536" + sp(2) + sp(4) + "1000" + sp(6) + sp(7) + "100.00" + sp(1) + sp(12) +
                             "50.00" + sp(2) + "\t\t   " + "0.095367" + "\n";
  EXPECT_EQ(format_bw_row(g), expect);
  EXPECT_EQ(result_line(), std::string(87, '-') + "\n");
}

// 4. Below 0.1 Gb/s perftest switches to 6 decimals (REPORT_FMT_EXT):
// 10 x 2 B in 1 ms = 160 bit / 1 ms = 0.00016 Gb/s, 0.01 Mpps.
TEST(PerftestBw, SmallRatesUseExtendedAccuracy) {
  const BwReport g = compute_bw(BwResults{2, 10, TimeNs(1'000'000), TimeNs::zero()}, BwUnits::kGbps);
  const std::string expect = " 2" + sp(6) + sp(4) + "10" + sp(11) + "0.000000" + sp(12) + "0.000160" + sp(12) +
                             "0.010000" + "\n";
  EXPECT_EQ(format_bw_row(g), expect);
}

// 5. Peak search: min over runs [i, j] of (completed[j] - posted[i]) / (j-i+1).
// posted 0,100,200,300; completed 1000,1100,1150,4000:
//   cq_mod 1: best is [0,2] = 1150/3 = 383 (integer ns).
//   cq_mod 2: j only 1 or 3 -> best [0,1] = 1100/2 = 550.
//   5 messages, cq_mod 2: the last (j = 4) is signalled too.
TEST(PerftestBw, PeakMessageTime) {
  const std::vector<TimeNs> posted{TimeNs(0), TimeNs(100), TimeNs(200), TimeNs(300)};
  const std::vector<TimeNs> done{TimeNs(1000), TimeNs(1100), TimeNs(1150), TimeNs(4000)};
  EXPECT_EQ(perftest_peak_msg_time(posted, done, 1), TimeNs(383));
  EXPECT_EQ(perftest_peak_msg_time(posted, done, 2), TimeNs(550));
  std::vector<TimeNs> posted5 = posted;
  std::vector<TimeNs> done5 = done;
  posted5.push_back(TimeNs(400));
  done5.push_back(TimeNs(1200));  // [0,4] = 1200 / 5 = 240
  EXPECT_EQ(perftest_peak_msg_time(posted5, done5, 2), TimeNs(240));
  EXPECT_THROW(perftest_peak_msg_time({}, {}, 1), std::invalid_argument);
}

// 6. Latency statistics (WRITE: half round trips). Round trips in ns:
//   4000 2000 3000 2600 2200 2400 9000 2800 50000 2100  (iterations = 11)
// sorted: 2000 2100 2200 2400 2600 2800 3000 4000 | 9000 50000 (2 dropped, m = 8)
//   t_min = 2000/2000 = 1.00 us, t_max = s[8] = 9000/2000 = 4.50 us
//   typical = (s[3] + s[4]) / 2 = 2500 ns -> 1.25 us
//   avg = 21100 / 8 / 2000 = 1.31875 us; stdev = population over the 8 kept
//   p99 = s[ceil(7.92)] = s[8] = 4.50 us, p99.9 = s[ceil(7.992)] = s[8] = 4.50 us
TEST(PerftestLat, WriteStatistics) {
  const std::vector<int64_t> rtt{4000, 2000, 3000, 2600, 2200, 2400, 9000, 2800, 50000, 2100};
  const LatReport r = compute_lat(LatResults{2, 11, PerftestVerb::kWrite, rtt});
  EXPECT_DOUBLE_EQ(r.t_min_us, 1.0);
  EXPECT_DOUBLE_EQ(r.t_max_us, 4.5);
  EXPECT_DOUBLE_EQ(r.t_typical_us, 1.25);
  EXPECT_DOUBLE_EQ(r.t_avg_us, 1.31875);
  const std::vector<double> kept{1.0, 1.05, 1.1, 1.2, 1.3, 1.4, 1.5, 2.0};
  double var = 0;
  for (double v : kept) var += (v - 1.31875) * (v - 1.31875);
  EXPECT_NEAR(r.t_stdev_us, std::sqrt(var / 8), 1e-12);  // 0.30407
  EXPECT_DOUBLE_EQ(r.p99_us, 4.5);
  EXPECT_DOUBLE_EQ(r.p999_us, 4.5);
  EXPECT_EQ(r.iterations, 11u);
}

// 7. READ reports whole round trips; odd m takes the middle sample.
//   1000 3000 2000 7000 9000 (m = 3 after dropping 7000 and 9000)
//   typical = s[1] = 2.00 us, t_max = s[3] = 7.00 us, avg = 2.00 us
TEST(PerftestLat, ReadOddCount) {
  const std::vector<int64_t> rtt{1000, 3000, 2000, 7000, 9000};
  const LatReport r = compute_lat(LatResults{64, 6, PerftestVerb::kRead, rtt});
  EXPECT_DOUBLE_EQ(r.t_min_us, 1.0);
  EXPECT_DOUBLE_EQ(r.t_typical_us, 2.0);
  EXPECT_DOUBLE_EQ(r.t_max_us, 7.0);
  EXPECT_DOUBLE_EQ(r.t_avg_us, 2.0);
  EXPECT_NEAR(r.t_stdev_us, std::sqrt(2.0 / 3.0), 1e-12);
  EXPECT_DOUBLE_EQ(r.p99_us, 7.0);  // s[ceil(2.97)] = s[3]
}

// 8. Percentile indices on 1002 samples i * 1 us (READ): m = 1000,
//   p99 = s[990] = 991 us, p99.9 = s[999] = 1000 us, t_max = s[1000] = 1001 us,
//   typical = (s[499] + s[500]) / 2 = 500.5 us, avg = 500.5 us,
//   stdev = sqrt((1000^2 - 1) / 12) = 288.675 us (uniform 1..1000).
TEST(PerftestLat, PercentileIndices) {
  std::vector<int64_t> rtt(1002);
  for (size_t i = 0; i < rtt.size(); ++i) rtt[i] = static_cast<int64_t>((i * 7919) % 1002 + 1) * 1000;  // a permutation
  const LatReport r = compute_lat(LatResults{8, 1003, PerftestVerb::kRead, rtt});
  EXPECT_DOUBLE_EQ(r.p99_us, 991.0);
  EXPECT_DOUBLE_EQ(r.p999_us, 1000.0);
  EXPECT_DOUBLE_EQ(r.t_max_us, 1001.0);
  EXPECT_DOUBLE_EQ(r.t_min_us, 1.0);
  EXPECT_DOUBLE_EQ(r.t_typical_us, 500.5);
  EXPECT_NEAR(r.t_avg_us, 500.5, 1e-9);
  EXPECT_NEAR(r.t_stdev_us, std::sqrt((1000.0 * 1000.0 - 1.0) / 12.0), 1e-9);
  EXPECT_THROW(compute_lat(LatResults{8, 3, PerftestVerb::kRead, std::vector<int64_t>{1, 2}}), std::invalid_argument);
}

// 9. The latency table exactly as ib_write_lat prints it.
TEST(PerftestLat, HeaderAndRowLayout) {
  EXPECT_EQ(lat_header(),
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
            "99% percentile[usec]   99.9% percentile[usec] \n");
  const std::vector<int64_t> rtt{4000, 2000, 3000, 2600, 2200, 2400, 9000, 2800, 50000, 2100};
  const LatReport r = compute_lat(LatResults{2, 11, PerftestVerb::kWrite, rtt});
  // " %-7lu %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n"
  const std::string expect = " 2" + sp(6) + " 11" + sp(10) + "1.00" + sp(3) + sp(8) + "4.50" + sp(3) + sp(6) +
                             "1.25" + sp(3) + "  \t       " + "1.32" + sp(3) + "     \t" + "0.30" + sp(3) + "\t\t" +
                             "4.50" + sp(3) + " \t\t" + "4.50" + sp(3) + "\n";
  EXPECT_EQ(format_lat_row(r), expect);
}

// 10. Duration-mode latency: 1000 round trips in 4 ms, WRITE -> 2 us avg, 250 000 tps.
TEST(PerftestLat, DurationMode) {
  const LatDurationReport d = compute_lat_duration(LatDurationResults{2, 1000, PerftestVerb::kWrite, TimeNs(4'000'000)});
  EXPECT_DOUBLE_EQ(d.t_avg_us, 2.0);
  EXPECT_DOUBLE_EQ(d.tps, 250000.0);
  EXPECT_EQ(lat_duration_header(), " #bytes        #iterations       t_avg[usec]    tps average\n");
  EXPECT_EQ(format_lat_duration_row(d), " 2" + sp(6) + sp(7) + "1000" + sp(12) + "2.00" + sp(3) + sp(8) + "250000.00\n");
}

// 11. JSON lines carry the same numbers.
TEST(PerftestJson, Lines) {
  const PerftestTest wb{PerftestVerb::kWrite, PerftestKind::kBw};
  const BwReport g = compute_bw(BwResults{65536, 1000, TimeNs(10'485'760), TimeNs(5243)}, BwUnits::kGbps);
  const std::string j = format_bw_json(wb, g);
  EXPECT_EQ(j.substr(0, 56), "{\"test\":\"write_bw\",\"bytes\":65536,\"iterations\":1000,\"bw_p");
  EXPECT_NE(j.find("\"bw_avg_gbps\":50.000000"), std::string::npos) << j;
  EXPECT_NE(j.find("\"msg_rate_mpps\":0.095367"), std::string::npos) << j;
  EXPECT_EQ(j.back(), '\n');
  const std::vector<int64_t> rtt{4000, 2000, 3000, 2600, 2200, 2400, 9000, 2800, 50000, 2100};
  const std::string l = format_lat_json({PerftestVerb::kWrite, PerftestKind::kLat},
                                        compute_lat(LatResults{2, 11, PerftestVerb::kWrite, rtt}));
  EXPECT_NE(l.find("\"test\":\"write_lat\""), std::string::npos) << l;
  EXPECT_NE(l.find("\"t_typical_us\":1.250000"), std::string::npos) << l;
  EXPECT_NE(l.find("\"p99_9_us\":4.500000"), std::string::npos) << l;
}

// 12. The banner of an ib_write_bw client and an ib_send_lat server.
TEST(PerftestBanner, Layout) {
  PerftestBanner b;
  b.test = {PerftestVerb::kWrite, PerftestKind::kBw};
  b.num_qps = 4;
  b.mtu_bytes = 4096;
  const std::string dashes = std::string(87, '-') + "\n";
  EXPECT_EQ(format_banner(b), dashes +
                                  "                    RDMA_Write BW Test\n"
                                  " Dual-port       : OFF\t\tDevice         : sf-nic0\n"
                                  " Number of qps   : 4\t\tTransport type : IB\n"
                                  " Connection type : RC\t\tUsing SRQ      : OFF\n"
                                  " TX depth        : 128\n"
                                  " CQ Moderation   : 100\n"
                                  " Mtu             : 4096[B]\n"
                                  " Link type       : Ethernet\n"
                                  " GID index       : 0\n"
                                  " Max inline data : 0[B]\n"
                                  " rdma_cm QPs\t : OFF\n"
                                  " Data ex. method : Ethernet\n" +
                                  dashes);
  PerftestBanner s;
  s.test = {PerftestVerb::kSend, PerftestKind::kLat};
  s.role = PerftestRole::kServer;
  s.gid_index = -1;
  const std::string out = format_banner(s);
  EXPECT_NE(out.find("                    Send Latency Test\n"), std::string::npos) << out;
  EXPECT_NE(out.find(" RX depth        : 512\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("TX depth"), std::string::npos) << out;
  EXPECT_EQ(out.find("CQ Moderation"), std::string::npos) << out;
  EXPECT_EQ(out.find("GID index"), std::string::npos) << out;
  PerftestBanner r;
  r.test = {PerftestVerb::kRead, PerftestKind::kBw};
  EXPECT_NE(format_banner(r).find(" Outstand reads  : 16\n"), std::string::npos);
}

// 13. QP address lines as perftest prints them (GID bytes in decimal).
TEST(PerftestBanner, QpAddressLines) {
  QpConnInfo q;
  q.qpn = 0x108;
  q.psn = 0x1e2a4b;
  q.rkey = 0x1fffbd;
  q.va = 0x7f0000001000;
  q.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 192, 168, 1, 1};
  EXPECT_EQ(format_qp_address(q, false, PerftestVerb::kWrite, 0),
            " local address: LID 0000 QPN 0x0108 PSN 0x1e2a4b RKey 0x1fffbd VAddr 0x007f0000001000\n"
            " GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:01:01\n");
  EXPECT_EQ(format_qp_address(q, true, PerftestVerb::kRead, -1, 16),
            " remote address: LID 0000 QPN 0x0108 PSN 0x1e2a4b OUT 0x10 RKey 0x1fffbd VAddr 0x007f0000001000\n");
  EXPECT_EQ(format_qp_address(q, true, PerftestVerb::kSend, -1),
            " remote address: LID 0000 QPN 0x0108 PSN 0x1e2a4b\n");
}

}  // namespace
}  // namespace sf::nic
