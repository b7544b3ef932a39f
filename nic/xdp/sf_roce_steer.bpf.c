// SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
// sf_roce_steer: the XDP program that lets sf-nic share a NIC with the
// kernel (docs/guide.md "Sharing a NIC with the kernel"). Loaded by DPDK's
// af_xdp PMD (--port net_af_xdp0,iface=IF,xdp_prog=PATH/sf_roce_steer.bpf.o),
// which binds its AF_XDP socket into the map named xsks_map (the name the PMD
// looks up) at the key of its queue.
//
// Steers to the socket of the receiving queue only RoCEv2 / MRC frames: UDP
// destination port 4791 over IPv4 or IPv6 (also IPv6-in-IPv6, the SRv6 uSID
// encapsulation of MRC's srv6 entropy mode), with zero, one or two VLAN tags
// (802.1Q / 802.1ad). Everything else (ARP, IPv6 ND, ICMP, TCP such as SSH,
// LLDP, IPv4 fragments, a queue with no socket bound) is XDP_PASS: the
// kernel's, as if no program were there. The program keeps per-CPU counts of
// what it steered and what it passed (bpftool map dump name sf_steer_stats).
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ROCE_UDP_PORT 4791
#define MAX_QUEUES 256

struct {
  __uint(type, BPF_MAP_TYPE_XSKMAP);
  __uint(max_entries, MAX_QUEUES);
  __type(key, __u32);
  __type(value, __u32);
} xsks_map SEC(".maps");

// Index 0: frames steered to a socket; 1: passed to the kernel (not RoCE);
// 2: RoCE on a queue without a socket (passed).
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 3);
  __type(key, __u32);
  __type(value, __u64);
} sf_steer_stats SEC(".maps");

struct vlan_hdr {
  __be16 tci;
  __be16 proto;
};

static __always_inline void count(__u32 what) {
  __u64 *c = bpf_map_lookup_elem(&sf_steer_stats, &what);
  if (c) *c += 1;
}

// True if the UDP header at `p` is in the frame and its destination is 4791.
static __always_inline int roce_udp(void *p, void *end) {
  struct udphdr *u = p;
  if ((void *)(u + 1) > end) return 0;
  return u->dest == bpf_htons(ROCE_UDP_PORT);
}

static __always_inline int is_roce(void *data, void *end) {
  struct ethhdr *eth = data;
  if ((void *)(eth + 1) > end) return 0;
  void *p = eth + 1;
  __be16 proto = eth->h_proto;
#pragma unroll
  for (int i = 0; i < 2; i++) {
    if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD)) break;
    struct vlan_hdr *v = p;
    if ((void *)(v + 1) > end) return 0;
    proto = v->proto;
    p = v + 1;
  }
  if (proto == bpf_htons(ETH_P_IP)) {
    struct iphdr *ip = p;
    if ((void *)(ip + 1) > end) return 0;
    if (ip->protocol != IPPROTO_UDP || ip->ihl < 5) return 0;
    if (ip->frag_off & bpf_htons(0x3FFF)) return 0;  // a fragment: the kernel reassembles
    return roce_udp(p + ip->ihl * 4, end);
  }
  if (proto == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr *ip6 = p;
    if ((void *)(ip6 + 1) > end) return 0;
    if (ip6->nexthdr == IPPROTO_IPV6) {  // SRv6 uSID: IPv6-in-IPv6
      ip6 = (void *)(ip6 + 1);
      if ((void *)(ip6 + 1) > end) return 0;
    }
    if (ip6->nexthdr != IPPROTO_UDP) return 0;
    return roce_udp(ip6 + 1, end);
  }
  return 0;
}

SEC("xdp")
int sf_roce_steer(struct xdp_md *ctx) {
  void *data = (void *)(long)ctx->data;
  void *end = (void *)(long)ctx->data_end;
  if (!is_roce(data, end)) {
    count(1);
    return XDP_PASS;
  }
  __u32 q = ctx->rx_queue_index;
  if (!bpf_map_lookup_elem(&xsks_map, &q)) {
    count(2);
    return XDP_PASS;
  }
  count(0);
  return bpf_redirect_map(&xsks_map, q, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
