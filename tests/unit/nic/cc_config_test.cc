// nic.json "cc" and "cc_params" (nic/cc/cc_config.h, docs/cc.md
// "Configuration"): every ACK-driven name is accepted for a workload but
// nscc (MRC only), parameters land in the choice, and every mistake is
// refused naming its JSON path.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "common/config/json_loader.h"
#include "nic/app/sf_nic_config.h"
#include "nic/cc/cc_config.h"
#include "tests/support/config_errors.h"

namespace sf::nic {
namespace {

std::string doc(const std::string& cc_keys) {
  return R"({"hosts": {"h0": {"devargs": "net_memif0", "mac": "02:10:00:00:00:01", "ip": "10.0.0.1"}},
  "workloads": [{"name": "w0", "host": "h0", "type": "write_bw", "role": "client", "oob": "127.0.0.1:18600", )" +
         cc_keys + "}]}";
}
app::AppConfig parse(const std::string& cc_keys) { return app::parse_app_config(config::parse_text(doc(cc_keys))); }
std::string error_of(const std::string& cc_keys) {
  return sf::test::config_error_of([&] { parse(cc_keys); });
}

// 1. Names: swift, bbr, hpcc parse with default parameters; dcqcn and none as before.
TEST(CcConfig, AckDrivenNames) {
  EXPECT_EQ(parse(R"("cc": "swift")").workloads[0].cc.algorithm, CcAlgorithm::kSwift);
  EXPECT_EQ(parse(R"("cc": "bbr")").workloads[0].cc.algorithm, CcAlgorithm::kBbr);
  EXPECT_EQ(parse(R"("cc": "hpcc")").workloads[0].cc.algorithm, CcAlgorithm::kHpcc);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(parse(R"("cc": "hpcc")").workloads[0].cc.params));
  EXPECT_EQ(parse(R"("cc": "dcqcn-paper")").workloads[0].cc.dcqcn_params, DcqcnParamSet::kPaper);
  EXPECT_EQ(parse(R"("cc": "none")").workloads[0].cc.algorithm, CcAlgorithm::kNone);
  EXPECT_NE(error_of(R"("cc": "nscc")").find("workloads[0].cc: nscc runs on MRC QPs only"), std::string::npos)
      << error_of(R"("cc": "nscc")");
  EXPECT_NE(error_of(R"("cc": "timely")").find("workloads[0].cc: \"timely\" is not one of"), std::string::npos);
}

// 1b. MRC workloads run nscc or none; nscc's base_rtt comes from the QP
//     (MrcQpAttr::base_rtt_ns) unless cc_params names one.
TEST(CcConfig, MrcTakesNsccOnly) {
  const auto m = parse(R"("transport": "mrc", "cc": "nscc")");
  EXPECT_EQ(m.workloads[0].cc.algorithm, CcAlgorithm::kNscc);
  const auto named = parse(R"("transport": "mrc", "cc": "nscc", "cc_params": {"base_rtt": "3us"})");
  const auto* np = std::get_if<NsccParams>(&named.workloads[0].cc.params);
  ASSERT_NE(np, nullptr);
  EXPECT_FALSE(np->base_rtt_from_qp);
  EXPECT_EQ(np->base_rtt, TimeNs::from_us(3));
  const auto unnamed = parse(R"("transport": "mrc", "cc": "nscc", "cc_params": {"target_qdelay": "8us"})");
  EXPECT_TRUE(std::get<NsccParams>(unnamed.workloads[0].cc.params).base_rtt_from_qp);
  EXPECT_EQ(parse(R"("transport": "mrc", "cc": "none")").workloads[0].cc.algorithm, CcAlgorithm::kNone);
  for (const char* cc : {"dcqcn", "swift", "bbr", "hpcc"}) {
    const std::string e = error_of(std::string(R"("transport": "mrc", "cc": ")") + cc + "\"");
    EXPECT_NE(e.find("workloads[0].cc: an MRC QP runs nscc or none"), std::string::npos) << cc << ": " << e;
  }
}

// 2. Parameters: values with units land in the algorithm's struct; the rest keep their defaults.
TEST(CcConfig, ParametersLand) {
  const auto s = parse(R"("cc": "swift", "cc_params": {"base_target": "30us", "per_hop": 500, "beta": 0.5, "max_cwnd": 64})");
  const auto* sp = std::get_if<SwiftParams>(&s.workloads[0].cc.params);
  ASSERT_NE(sp, nullptr);
  EXPECT_EQ(sp->base_target, TimeNs::from_us(30));
  EXPECT_EQ(sp->per_hop, TimeNs(500));
  EXPECT_EQ(sp->beta, 0.5);
  EXPECT_EQ(sp->max_cwnd, 64);
  EXPECT_EQ(sp->max_mdf, SwiftParams{}.max_mdf);
  EXPECT_FALSE(sp->remote_delay);
  const auto sr = parse(R"("cc": "swift", "cc_params": {"remote_delay": true})");
  EXPECT_TRUE(std::get<SwiftParams>(sr.workloads[0].cc.params).remote_delay);
  EXPECT_NE(error_of(R"("cc": "swift", "cc_params": {"remote_delay": 1})").find("workloads[0].cc_params.remote_delay"),
            std::string::npos);

  const auto b = parse(R"("cc": "bbr", "cc_params": {"probe_bw_gains": [1.5, 0.5, 1, 1, 1, 1, 1, 1], "rtprop_window": "2ms"})");
  const auto* bp = std::get_if<BbrParams>(&b.workloads[0].cc.params);
  ASSERT_NE(bp, nullptr);
  EXPECT_EQ(bp->probe_bw_gains[0], 1.5);
  EXPECT_EQ(bp->rtprop_window, TimeNs::from_ms(2));

  const auto h = parse(R"("cc": "hpcc", "cc_params": {"base_rtt": "8us", "eta": 0.9, "rate_ai": "50M"})");
  const auto* hp = std::get_if<HpccParams>(&h.workloads[0].cc.params);
  ASSERT_NE(hp, nullptr);
  EXPECT_EQ(hp->base_rtt, TimeNs::from_us(8));
  EXPECT_EQ(hp->eta, 0.9);
  EXPECT_EQ(hp->rate_ai, BitRate::mbps(50));
  EXPECT_EQ(hp->initial_rate, BitRate(0));  // line rate, the paper's W_init

  // The start knobs (seed 001): HPCC's and BBR's initial_rate.
  const auto h2 = parse(R"("cc": "hpcc", "cc_params": {"initial_rate": 6.25, "eta": 0.99})");
  const auto* hp2 = std::get_if<HpccParams>(&h2.workloads[0].cc.params);
  ASSERT_NE(hp2, nullptr);
  EXPECT_EQ(hp2->initial_rate, BitRate::mbps(6250));
  EXPECT_EQ(hp2->eta, 0.99);
  const auto b2 = parse(R"("cc": "bbr", "cc_params": {"initial_rate": "10G", "initial_cwnd_pkts": 4})");
  const auto* bp2 = std::get_if<BbrParams>(&b2.workloads[0].cc.params);
  ASSERT_NE(bp2, nullptr);
  EXPECT_EQ(bp2->initial_rate, BitRate::gbps(10));
  EXPECT_EQ(bp2->initial_cwnd_pkts, 4u);
}

// 3. Errors name the path: unknown key (another algorithm's), out of range,
//    a value validate() refuses, cc_params without an algorithm that has any.
TEST(CcConfig, ErrorsNameThePath) {
  const std::string a = error_of(R"("cc": "swift", "cc_params": {"eta": 0.9})");
  EXPECT_NE(a.find("workloads[0].cc_params"), std::string::npos) << a;
  EXPECT_NE(a.find("eta"), std::string::npos) << a;
  const std::string b = error_of(R"("cc": "swift", "cc_params": {"beta": 1.5})");
  EXPECT_NE(b.find("workloads[0].cc_params.beta: must be within"), std::string::npos) << b;
  const std::string c = error_of(R"("cc": "bbr", "cc_params": {"probe_bw_gains": [1, 2]})");
  EXPECT_NE(c.find("workloads[0].cc_params.probe_bw_gains: must have 8 gains"), std::string::npos) << c;
  const std::string d = error_of(R"("cc": "dcqcn", "cc_params": {})");
  EXPECT_NE(d.find("workloads[0].cc_params: \"dcqcn\" has no cc_params"), std::string::npos) << d;
  const std::string e = error_of(R"("cc": "hpcc", "cc_params": {"base_rtt": 0})");
  EXPECT_NE(e.find("workloads[0].cc_params.base_rtt: "), std::string::npos) << e;
  const std::string g = error_of(R"("cc": "hpcc", "cc_params": {"initial_rate": "10M"})");
  EXPECT_NE(g.find("workloads[0].cc_params.initial_rate: must be >= min_rate"), std::string::npos) << g;
  const std::string h = error_of(R"("cc": "hpcc", "cc_params": {"eta": 1.2})");
  EXPECT_NE(h.find("workloads[0].cc_params.eta: must be within"), std::string::npos) << h;
  const std::string i = error_of(R"("cc": "bbr", "cc_params": {"initial_rate": "fast"})");
  EXPECT_NE(i.find("workloads[0].cc_params.initial_rate"), std::string::npos) << i;
  const std::string f = error_of(R"("cc": "swift", "cc_params": {"max_cwnd": 0.001})");
  EXPECT_NE(f.find("workloads[0].cc_params."), std::string::npos) << f;
}

}  // namespace
}  // namespace sf::nic
