// nic/xdp/sf_roce_steer.bpf.o run by the kernel (BPF_PROG_TEST_RUN) on
// crafted frames: RoCEv2 / MRC (UDP 4791 over IPv4, IPv6, IPv6-in-IPv6, with
// 0, 1 or 2 VLAN tags) is steered, everything else passes to the kernel
// (ARP, ICMPv6 ND, TCP, another UDP port, an IPv4 fragment, LLDP, a
// truncated header). With no socket bound the program passes RoCE too and
// counts it in slot 2 (slot 1: not RoCE), which is what tells the two
// apart here. Skips without the object (no clang) or without the right to
// load BPF programs.
#include <gtest/gtest.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<uint8_t>;

void put16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}

Bytes eth(std::initializer_list<uint16_t> tags, uint16_t type) {
  Bytes b = {0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2};
  for (uint16_t t : tags) {
    put16(b, t);
    put16(b, 0x0003);  // PCP 0, VID 3
  }
  put16(b, type);
  return b;
}

void udp(Bytes& b, uint16_t dport, size_t payload = 32) {
  put16(b, 0xC000);
  put16(b, dport);
  put16(b, static_cast<uint16_t>(8 + payload));
  put16(b, 0);
  b.insert(b.end(), payload, 0);
}

void ipv4(Bytes& b, uint8_t proto, uint16_t frag = 0, uint8_t ihl = 5) {
  b.push_back(static_cast<uint8_t>(0x40 | ihl));
  b.push_back(0);
  put16(b, 60);
  put16(b, 0);
  put16(b, frag);
  b.push_back(64);
  b.push_back(proto);
  put16(b, 0);
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(10 + i));
  for (int i = 5; i < ihl; ++i) b.insert(b.end(), 4, 1);  // options (NOPs)
}

void ipv6(Bytes& b, uint8_t next) {
  b.push_back(0x60);
  b.insert(b.end(), 3, 0);
  put16(b, 40);
  b.push_back(next);
  b.push_back(64);
  b.insert(b.end(), 32, 0xfd);
}

Bytes roce4(std::initializer_list<uint16_t> tags = {}) {
  Bytes b = eth(tags, 0x0800);
  ipv4(b, 17);
  udp(b, 4791);
  return b;
}

class XdpSteer : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("SF_ROCE_STEER_BPF");
    if (path == nullptr || *path == '\0') GTEST_SKIP() << "SF_ROCE_STEER_BPF not set (no clang: not built)";
    libbpf_set_print(nullptr);
    obj_ = bpf_object__open_file(path, nullptr);
    ASSERT_NE(obj_, nullptr) << path;
    if (bpf_object__load(obj_) != 0) GTEST_SKIP() << "cannot load BPF programs here (needs root / CAP_BPF)";
    bpf_program* prog = bpf_object__find_program_by_name(obj_, "sf_roce_steer");
    ASSERT_NE(prog, nullptr);
    prog_fd_ = bpf_program__fd(prog);
    ASSERT_NE(bpf_object__find_map_by_name(obj_, "xsks_map"), nullptr) << "the af_xdp PMD binds its socket there";
    stats_fd_ = bpf_map__fd(bpf_object__find_map_by_name(obj_, "sf_steer_stats"));
    ASSERT_GE(stats_fd_, 0);
    cpus_ = libbpf_num_possible_cpus();
    ASSERT_GT(cpus_, 0);
  }
  void TearDown() override {
    if (obj_ != nullptr) bpf_object__close(obj_);
  }
  uint64_t stat(uint32_t k) const {
    std::vector<uint64_t> v(static_cast<size_t>(cpus_));
    EXPECT_EQ(bpf_map_lookup_elem(stats_fd_, &k, v.data()), 0);
    uint64_t s = 0;
    for (uint64_t x : v) s += x;
    return s;
  }
  // True if the program took the frame for RoCE (slot 2: no socket bound), false
  // if it left it to the kernel as not RoCE (slot 1). Either way XDP_PASS.
  bool steered(const Bytes& frame) {
    const uint64_t roce = stat(2), other = stat(1);
    Bytes in = frame;
    // (LIBBPF_OPTS is a GNU statement expression, refused by clang's -Wpedantic.)
    bpf_test_run_opts o{};
    o.sz = sizeof(o);
    o.data_in = in.data();
    o.data_size_in = static_cast<uint32_t>(in.size());
    o.repeat = 1;
    EXPECT_EQ(bpf_prog_test_run_opts(prog_fd_, &o), 0);
    EXPECT_EQ(o.retval, static_cast<uint32_t>(XDP_PASS));
    const uint64_t dr = stat(2) - roce, dother = stat(1) - other;
    EXPECT_EQ(dr + dother, 1u);
    return dr == 1;
  }
  bpf_object* obj_ = nullptr;
  int prog_fd_ = -1;
  int stats_fd_ = -1;
  int cpus_ = 0;
};

TEST_F(XdpSteer, RoceOverEveryEncapsulation) {
  EXPECT_TRUE(steered(roce4()));
  EXPECT_TRUE(steered(roce4({0x8100})));
  EXPECT_TRUE(steered(roce4({0x88A8, 0x8100})));
  Bytes opt = eth({}, 0x0800);
  ipv4(opt, 17, 0, 7);  // IPv4 options
  udp(opt, 4791);
  EXPECT_TRUE(steered(opt));
  Bytes v6 = eth({}, 0x86DD);
  ipv6(v6, 17);
  udp(v6, 4791);
  EXPECT_TRUE(steered(v6));
  Bytes v6v = eth({0x8100}, 0x86DD);
  ipv6(v6v, 17);
  udp(v6v, 4791);
  EXPECT_TRUE(steered(v6v));
  Bytes srv6 = eth({}, 0x86DD);  // SRv6 uSID: IPv6-in-IPv6
  ipv6(srv6, 41);
  ipv6(srv6, 17);
  udp(srv6, 4791);
  EXPECT_TRUE(steered(srv6));
}

TEST_F(XdpSteer, EverythingElseStaysWithTheKernel) {
  Bytes arp = eth({}, 0x0806);
  arp.insert(arp.end(), 28, 0);
  EXPECT_FALSE(steered(arp));
  Bytes nd = eth({}, 0x86DD);
  ipv6(nd, 58);
  nd.insert(nd.end(), 32, 0);
  EXPECT_FALSE(steered(nd));
  Bytes ssh = eth({}, 0x0800);
  ipv4(ssh, 6);
  udp(ssh, 22);  // a TCP header's ports sit where UDP's do: port 22
  EXPECT_FALSE(steered(ssh));
  Bytes tcp4791 = eth({}, 0x0800);
  ipv4(tcp4791, 6);
  udp(tcp4791, 4791);  // TCP to 4791 is not RoCE
  EXPECT_FALSE(steered(tcp4791));
  Bytes other = eth({}, 0x0800);
  ipv4(other, 17);
  udp(other, 4792);
  EXPECT_FALSE(steered(other));
  Bytes frag = eth({}, 0x0800);
  ipv4(frag, 17, 0x2000);  // MF: the first fragment; the kernel reassembles
  udp(frag, 4791);
  EXPECT_FALSE(steered(frag));
  Bytes lldp = eth({}, 0x88CC);
  lldp.insert(lldp.end(), 40, 0);
  EXPECT_FALSE(steered(lldp));
  Bytes cut = roce4();
  cut.resize(14 + 20 + 4);  // UDP header cut short
  EXPECT_FALSE(steered(cut));
  Bytes three = roce4({0x8100, 0x8100, 0x8100});  // a third tag: not parsed
  EXPECT_FALSE(steered(three));
}

}  // namespace
