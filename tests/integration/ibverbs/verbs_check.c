/* verbs_check: a plain libibverbs program (rdma-core's API only, linked with
 * -libverbs) run under LD_PRELOAD=libsfverbs.so by ibverbs_test.py. Two
 * processes, RC QP info exchanged over TCP on loopback (as perftest does).
 *
 * client: RDMA WRITE a pattern into the server's buffer (completion taken
 *         through a completion channel), RDMA READ it back, check every byte;
 *         a small WRITE with IBV_SEND_INLINE from an unregistered buffer;
 *         2000 WRITEs posted by one thread while a second polls the CQ;
 *         ibv_poll_cq on the empty CQ 100000 times rings no doorbell and
 *         wakes nothing (libsfverbs' counters, sfverbs_doorbell_stats; with
 *         SFVERBS_POLL_YIELD=N it yields once per N), and a
 *         WRITE posted after that still completes; arming the CQ while it
 *         holds a completion raises the channel's event at once;
 *         then a WRITE with a wrong rkey -> IBV_WC_REM_ACCESS_ERR and the QP
 *         in ERR; a WRITE posted in ERR -> IBV_WC_WR_FLUSH_ERR; the status
 *         strings checked with ibv_wc_status_str.
 * server: posts receives, waits for the client's verdict, checks its own
 *         buffer holds the pattern, moves its QP to ERR and checks that every
 *         posted receive completes with IBV_WC_WR_FLUSH_ERR.
 * both:   unsupported verbs fail with EOPNOTSUPP, never crash (AH, UD QPs,
 *         ibv_qp_to_qp_ex, ibv_create_cq_ex, ibv_create_qp_ex with send ops).
 * Prints "verbs_check: PASS" and exits 0, or names the failure and exits 1.
 *
 * Usage: verbs_check server PORT | verbs_check client PORT ADDR */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_BYTES (1u << 20)
#define MSG_BYTES (256u * 1024u)
#define NUM_RECV 4

#define CHECK(c, ...)                                  \
  do {                                                 \
    if (!(c)) {                                        \
      fprintf(stderr, "verbs_check: FAIL: " __VA_ARGS__); \
      fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__); \
      exit(1);                                         \
    }                                                  \
  } while (0)

struct peer {
  uint32_t qpn, psn, rkey;
  uint64_t addr;
  uint8_t gid[16];
};

static int tcp_connect(int server, int port, const char* addr) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  if (server) {
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(s, (struct sockaddr*)&sa, sizeof sa) == 0, "bind %d: %s", port, strerror(errno));
    CHECK(listen(s, 1) == 0, "listen");
    int c = accept(s, NULL, NULL);
    CHECK(c >= 0, "accept");
    close(s);
    return c;
  }
  inet_pton(AF_INET, addr, &sa.sin_addr);
  for (int i = 0; i < 200; ++i) {
    if (connect(s, (struct sockaddr*)&sa, sizeof sa) == 0) return s;
    usleep(50000);
    close(s);
    s = socket(AF_INET, SOCK_STREAM, 0);
  }
  CHECK(0, "connect to %s:%d", addr, port);
  return -1;
}

static void xfer(int s, void* out, void* in, size_t n) {
  CHECK(write(s, out, n) == (ssize_t)n, "tcp write");
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(s, (char*)in + got, n - got);
    CHECK(r > 0, "tcp read");
    got += (size_t)r;
  }
}

static struct ibv_wc wait_one(struct ibv_cq* cq) {
  struct ibv_wc wc;
  for (long i = 0;; ++i) {
    int n = ibv_poll_cq(cq, 1, &wc);
    CHECK(n >= 0, "ibv_poll_cq returned %d", n);
    if (n == 1) return wc;
    if (i > 200000000L) CHECK(0, "no completion");
  }
}

static uint8_t pattern(size_t i) { return (uint8_t)((i * 131u + (i >> 8) * 7u + 0x5a) & 0xff); }

/* Two application threads on one QP and CQ: this one polls while main posts
 * (libsfverbs' lock serialises them with its progress thread). */
#define MT_WRITES 2000
#define MT_CHUNK 4096
#define MT_OFFSET (512u * 1024u)
struct mt {
  struct ibv_cq* cq;
  atomic_int done;
  atomic_int bad;
};

static void* mt_poller(void* arg) {
  struct mt* m = arg;
  struct ibv_wc wc[8];
  while (atomic_load(&m->done) < MT_WRITES) {
    int n = ibv_poll_cq(m->cq, 8, wc);
    if (n < 0) {
      atomic_store(&m->bad, 1);
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id < 1000) atomic_store(&m->bad, 1);
    }
    atomic_fetch_add(&m->done, n);
  }
  return NULL;
}

int main(int argc, char** argv) {
  CHECK(argc >= 3, "usage: verbs_check server PORT | client PORT ADDR");
  const int server = strcmp(argv[1], "server") == 0;
  const int port = atoi(argv[2]);

  int num = 0;
  struct ibv_device** list = ibv_get_device_list(&num);
  CHECK(list != NULL && num == 1, "ibv_get_device_list: %d devices", num);
  CHECK(strlen(ibv_get_device_name(list[0])) > 0, "device name");
  struct ibv_context* ctx = ibv_open_device(list[0]);
  CHECK(ctx != NULL, "ibv_open_device: %s", strerror(errno));
  ibv_free_device_list(list);

  struct ibv_device_attr da;
  CHECK(ibv_query_device(ctx, &da) == 0 && da.phys_port_cnt == 1 && da.max_qp > 0, "ibv_query_device");
  struct ibv_port_attr pa;
  CHECK(ibv_query_port(ctx, 1, &pa) == 0, "ibv_query_port");
  CHECK(pa.state == IBV_PORT_ACTIVE && pa.link_layer == IBV_LINK_LAYER_ETHERNET, "port state %d link layer %d",
        pa.state, pa.link_layer);
  CHECK(ibv_query_port(ctx, 2, &pa) != 0, "ibv_query_port of port 2 succeeded");
  struct ibv_gid_entry ge;
  CHECK(ibv_query_gid_ex(ctx, 1, 0, &ge, 0) == 0 && ge.gid_type == IBV_GID_TYPE_ROCE_V2, "gid 0 not RoCE v2");
  union ibv_gid gid;
  CHECK(ibv_query_gid(ctx, 1, 0, &gid) == 0, "ibv_query_gid");
  CHECK(gid.raw[10] == 0xff && gid.raw[11] == 0xff, "GID 0 is not IPv4-mapped");

  struct ibv_pd* pd = ibv_alloc_pd(ctx);
  CHECK(pd != NULL, "ibv_alloc_pd");
  uint8_t* buf = aligned_alloc(4096, BUF_BYTES);
  memset(buf, 0, BUF_BYTES);
  struct ibv_mr* mr =
      ibv_reg_mr(pd, buf, BUF_BYTES, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  CHECK(mr != NULL, "ibv_reg_mr: %s", strerror(errno));
  struct ibv_comp_channel* ch = ibv_create_comp_channel(ctx);
  CHECK(ch != NULL, "ibv_create_comp_channel");
  struct ibv_cq* cq = ibv_create_cq(ctx, 64, (void*)0x1234, ch, 0);
  CHECK(cq != NULL, "ibv_create_cq");

  /* An SRQ: created, queried, a limit (no limit event) refused, resizing
     refused, destroyed. Traffic through one: ib_send_bw --use-srq. */
  struct ibv_srq_init_attr sia;
  memset(&sia, 0, sizeof sia);
  sia.attr.max_wr = 4;
  sia.attr.max_sge = 1;
  struct ibv_srq* srq = ibv_create_srq(pd, &sia);
  CHECK(srq != NULL, "ibv_create_srq: %s", strerror(errno));
  struct ibv_srq_attr sq;
  CHECK(ibv_query_srq(srq, &sq) == 0 && sq.max_wr == 4 && sq.max_sge == 1, "ibv_query_srq");
  sq.max_wr = 8;
  CHECK(ibv_modify_srq(srq, &sq, IBV_SRQ_MAX_WR) == EOPNOTSUPP, "ibv_modify_srq resize");
  CHECK(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq");
  sia.attr.srq_limit = 2;
  errno = 0;
  CHECK(ibv_create_srq(pd, &sia) == NULL && errno == EINVAL, "ibv_create_srq with a limit: errno %d", errno);

  /* Unsupported verbs: a clean errno, never a crash. */
  struct ibv_ah_attr aa;
  memset(&aa, 0, sizeof aa);
  errno = 0;
  CHECK(ibv_create_ah(pd, &aa) == NULL && errno == EOPNOTSUPP, "ibv_create_ah: errno %d", errno);
  struct ibv_qp_init_attr ud;
  memset(&ud, 0, sizeof ud);
  ud.send_cq = ud.recv_cq = cq;
  ud.qp_type = IBV_QPT_UD;
  ud.cap.max_send_wr = ud.cap.max_recv_wr = 1;
  errno = 0;
  CHECK(ibv_create_qp(pd, &ud) == NULL && errno == EOPNOTSUPP, "UD ibv_create_qp: errno %d", errno);

  struct ibv_qp_init_attr ia;
  memset(&ia, 0, sizeof ia);
  ia.send_cq = cq;
  ia.recv_cq = cq;
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = 16;
  ia.cap.max_recv_wr = 16;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  ia.cap.max_inline_data = 64;
  struct ibv_qp* qp = ibv_create_qp(pd, &ia);
  CHECK(qp != NULL, "ibv_create_qp: %s", strerror(errno));
  CHECK(ibv_qp_to_qp_ex(qp) == NULL && errno == EOPNOTSUPP, "ibv_qp_to_qp_ex");
  /* The extended verbs (verbs.h inlines through verbs_get_ctx_op) refuse
     cleanly: the extended CQ (ibv_start_poll ...) and a QP with send ops
     for the new post-send API (ibv_wr_*). */
  {
    struct ibv_cq_init_attr_ex ca;
    memset(&ca, 0, sizeof ca);
    ca.cqe = 16;
    ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
    errno = 0;
    CHECK(ibv_create_cq_ex(ctx, &ca) == NULL && errno == EOPNOTSUPP, "ibv_create_cq_ex: errno %d", errno);
    struct ibv_qp_init_attr_ex xa;
    memset(&xa, 0, sizeof xa);
    xa.send_cq = xa.recv_cq = cq;
    xa.qp_type = IBV_QPT_RC;
    xa.cap.max_send_wr = xa.cap.max_recv_wr = 1;
    xa.cap.max_send_sge = xa.cap.max_recv_sge = 1;
    xa.pd = pd;
    xa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    xa.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
    errno = 0;
    CHECK(ibv_create_qp_ex(ctx, &xa) == NULL && errno == EOPNOTSUPP, "ibv_create_qp_ex with send ops: errno %d", errno);
  }

  struct ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE;
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0, "to INIT");
  /* A transition with a missing required attribute is refused. */
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL, "INIT->RTR without attributes accepted");

  if (server) {
    for (int i = 0; i < NUM_RECV; ++i) {
      struct ibv_sge sge = {(uintptr_t)(buf + BUF_BYTES - 4096), 64, mr->lkey};
      struct ibv_recv_wr rw = {.wr_id = 100 + (uint64_t)i, .sg_list = &sge, .num_sge = 1}, *bad = NULL;
      CHECK(ibv_post_recv(qp, &rw, &bad) == 0, "ibv_post_recv");
    }
  }

  struct peer me = {qp->qp_num, (uint32_t)(getpid() * 7919u) & 0xffffff, mr->rkey, (uintptr_t)buf, {0}}, them;
  memcpy(me.gid, gid.raw, 16);
  int s = tcp_connect(server, port, server ? NULL : argv[3]);
  xfer(s, &me, &them, sizeof me);

  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = them.qpn;
  a.rq_psn = them.psn;
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  memcpy(a.ah_attr.grh.dgid.raw, them.gid, 16);
  a.ah_attr.grh.sgid_index = 0;
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.port_num = 1;
  CHECK(ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == 0,
        "to RTR");
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = me.psn;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 4;
  CHECK(ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                          IBV_QP_MAX_QP_RD_ATOMIC) == 0,
        "to RTS");
  struct ibv_qp_init_attr qi;
  CHECK(ibv_query_qp(qp, &a, IBV_QP_STATE, &qi) == 0 && a.qp_state == IBV_QPS_RTS && a.dest_qp_num == them.qpn,
        "ibv_query_qp: state %d", a.qp_state);
  char ok = 1, peer_ok = 0;
  xfer(s, &ok, &peer_ok, 1); /* both in RTS */

  if (!server) {
    uint8_t* src = buf;
    uint8_t* back = buf + MSG_BYTES;
    for (size_t i = 0; i < MSG_BYTES; ++i) src[i] = pattern(i);
    /* 1. WRITE the pattern; its completion through the channel. */
    CHECK(ibv_req_notify_cq(cq, 0) == 0, "ibv_req_notify_cq");
    struct ibv_sge sge = {(uintptr_t)src, MSG_BYTES, mr->lkey};
    struct ibv_send_wr w, *bad = NULL;
    memset(&w, 0, sizeof w);
    w.wr_id = 1;
    w.sg_list = &sge;
    w.num_sge = 1;
    w.opcode = IBV_WR_RDMA_WRITE;
    w.send_flags = IBV_SEND_SIGNALED;
    w.wr.rdma.remote_addr = them.addr;
    w.wr.rdma.rkey = them.rkey;
    CHECK(ibv_post_send(qp, &w, &bad) == 0, "post WRITE");
    struct ibv_cq* ev_cq = NULL;
    void* ev_ctx = NULL;
    CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0 && ev_cq == cq && ev_ctx == (void*)0x1234, "ibv_get_cq_event");
    ibv_ack_cq_events(cq, 1);
    struct ibv_wc wc = wait_one(cq);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 && wc.opcode == IBV_WC_RDMA_WRITE, "WRITE wc: %s",
          ibv_wc_status_str(wc.status));
    /* 2. READ it back and check every byte. */
    memset(back, 0, MSG_BYTES);
    struct ibv_sge rs = {(uintptr_t)back, MSG_BYTES, mr->lkey};
    w.wr_id = 2;
    w.sg_list = &rs;
    w.opcode = IBV_WR_RDMA_READ;
    CHECK(ibv_post_send(qp, &w, &bad) == 0, "post READ");
    wc = wait_one(cq);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 2 && wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == MSG_BYTES,
          "READ wc: %s len %u", ibv_wc_status_str(wc.status), wc.byte_len);
    for (size_t i = 0; i < MSG_BYTES; ++i) CHECK(back[i] == pattern(i), "byte %zu read back 0x%02x", i, back[i]);
    /* 3. An inline WRITE from an unregistered buffer (lkey ignored). */
    char note[48];
    snprintf(note, sizeof note, "inline-%u", me.qpn);
    struct ibv_sge is = {(uintptr_t)note, sizeof note, 0xdeadbeef};
    w.wr_id = 3;
    w.sg_list = &is;
    w.opcode = IBV_WR_RDMA_WRITE;
    w.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
    w.wr.rdma.remote_addr = them.addr + MSG_BYTES;
    CHECK(ibv_post_send(qp, &w, &bad) == 0, "post inline WRITE");
    wc = wait_one(cq);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 3, "inline WRITE wc: %s", ibv_wc_status_str(wc.status));
    /* 3b. A second thread polls the CQ while this one posts 2000 4 KiB
       WRITEs (at most 12 outstanding), each a slice of the pattern. */
    {
      struct mt m;
      m.cq = cq;
      atomic_init(&m.done, 0);
      atomic_init(&m.bad, 0);
      pthread_t t;
      CHECK(pthread_create(&t, NULL, mt_poller, &m) == 0, "pthread_create");
      for (int i = 0; i < MT_WRITES; ++i) {
        while (i - atomic_load(&m.done) >= 12) {
        }
        const size_t k = (size_t)(i % 16);
        struct ibv_sge ms = {(uintptr_t)(src + k * MT_CHUNK), MT_CHUNK, mr->lkey};
        struct ibv_send_wr mw, *mbad = NULL;
        memset(&mw, 0, sizeof mw);
        mw.wr_id = 1000 + (uint64_t)i;
        mw.sg_list = &ms;
        mw.num_sge = 1;
        mw.opcode = IBV_WR_RDMA_WRITE;
        mw.send_flags = IBV_SEND_SIGNALED;
        mw.wr.rdma.remote_addr = them.addr + MT_OFFSET + k * MT_CHUNK;
        mw.wr.rdma.rkey = them.rkey;
        CHECK(ibv_post_send(qp, &mw, &mbad) == 0, "post WRITE %d", i);
      }
      CHECK(pthread_join(t, NULL) == 0, "pthread_join");
      CHECK(atomic_load(&m.bad) == 0 && atomic_load(&m.done) == MT_WRITES, "two-thread WRITEs: %d done, bad %d",
            atomic_load(&m.done), atomic_load(&m.bad));
    }
    /* 3c. Empty polls cost no doorbell: 100000 polls of the empty CQ ring it
       0 times and wake the progress thread 0 times (before the fix, each rang
       it: a futex wake whenever the thread slept). The datapath still moves:
       a WRITE posted now (which rings) completes, found by spinning. */
    {
      typedef int (*stats_fn)(uint64_t*, int);
      stats_fn stats = (stats_fn)dlsym(RTLD_DEFAULT, "sfverbs_doorbell_stats");
      CHECK(stats != NULL, "sfverbs_doorbell_stats not found (LD_PRELOAD=libsfverbs.so?)");
      uint64_t before[7], after[7];
      CHECK(stats(before, 7) == 7, "sfverbs_doorbell_stats: %s", strerror(errno));
      struct ibv_wc none;
      for (int i = 0; i < 100000; ++i) CHECK(ibv_poll_cq(cq, 1, &none) == 0, "a completion in the empty CQ");
      CHECK(stats(after, 7) == 7, "sfverbs_doorbell_stats");
      /* Inline progress: this thread ran loop iterations in its empty polls
         (none without it); SFVERBS_STAND_BACK_US: meanwhile the progress
         thread stood back (slept) at least once, never without it. */
      {
        const char* ip = getenv("SFVERBS_INLINE_PROGRESS");
        const char* sb = getenv("SFVERBS_STAND_BACK_US");
        const int inl = ip != NULL && strcmp(ip, "1") == 0;
        const int back = inl && sb != NULL && strtoul(sb, NULL, 10) > 0;
        const uint64_t runs = after[5] - before[5];
        const uint64_t backs = after[6] - before[6];
        CHECK(inl ? runs > 0 : runs == 0, "100000 empty polls ran %llu loop iterations (inline progress %d)",
              (unsigned long long)runs, inl);
        CHECK(back ? backs > 0 : backs == 0, "the progress thread stood back %llu times during them (stand-back %d)",
              (unsigned long long)backs, back);
      }
      CHECK(after[0] == before[0] && after[1] == before[1],
            "100000 empty polls rang the doorbell %llu times and woke the progress thread %llu times",
            (unsigned long long)(after[0] - before[0]), (unsigned long long)(after[1] - before[1]));
      /* SFVERBS_POLL_YIELD=N (inline progress or not): this thread yielded
         once per N of them (give or take the empty polls it counted before),
         never with N = 0. The effective N is the library's (its 5th counter):
         SFVERBS_POLL_YIELD as given, or auto's choice from this process's CPUs
         (1024 below 4). */
      const char* py = getenv("SFVERBS_POLL_YIELD");
      long ncpu = 0;
      {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0) ncpu = CPU_COUNT(&set);
      }
      const uint64_t want = py != NULL && strcmp(py, "auto") != 0 ? strtoull(py, NULL, 10) : (ncpu < 4 ? 1024 : 0);
      CHECK(after[4] == want, "SFVERBS_POLL_YIELD in effect %llu, expected %llu (%ld CPUs)",
            (unsigned long long)after[4], (unsigned long long)want, ncpu);
      const uint64_t yields = after[3] - before[3];
      CHECK(want == 0 ? yields == 0 : (yields == 100000 / want || yields == 100000 / want + 1),
            "100000 empty polls yielded %llu times with SFVERBS_POLL_YIELD=%llu", (unsigned long long)yields,
            (unsigned long long)want);
      struct ibv_sge es = {(uintptr_t)src, 4096, mr->lkey};
      w.wr_id = 6;
      w.sg_list = &es;
      w.opcode = IBV_WR_RDMA_WRITE;
      w.send_flags = IBV_SEND_SIGNALED;
      w.wr.rdma.remote_addr = them.addr;
      CHECK(ibv_post_send(qp, &w, &bad) == 0, "post WRITE after empty polls");
      CHECK(stats(after, 4) == 4 && after[0] > before[0], "a post did not ring the doorbell");
      wc = wait_one(cq);
      CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 6, "WRITE after empty polls: %s", ibv_wc_status_str(wc.status));
      /* Arming a CQ that already holds a completion raises its event at
         once (no later wake is needed for it): a WRITE's completion awaited
         through the channel and left in the CQ, the CQ armed again, the
         event already there (the channel's fd made non-blocking: EAGAIN
         would mean no event). */
      CHECK(ibv_req_notify_cq(cq, 0) == 0, "ibv_req_notify_cq");
      w.wr_id = 7;
      CHECK(ibv_post_send(qp, &w, &bad) == 0, "post WRITE 7");
      CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0 && ev_cq == cq, "ibv_get_cq_event for WRITE 7");
      ibv_ack_cq_events(cq, 1);
      CHECK(ibv_req_notify_cq(cq, 0) == 0, "ibv_req_notify_cq with a completion in the CQ");
      const int fl = fcntl(ch->fd, F_GETFL);
      CHECK(fl >= 0 && fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) == 0, "fcntl");
      errno = 0;
      CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0 && ev_cq == cq,
            "no event after arming a CQ that holds a completion (errno %d)", errno);
      ibv_ack_cq_events(cq, 1);
      CHECK(fcntl(ch->fd, F_SETFL, fl) == 0, "fcntl");
      wc = wait_one(cq);
      CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 7, "WRITE 7: %s", ibv_wc_status_str(wc.status));
    }
    /* 4. A wrong rkey: remote access error, the QP goes to ERR. */
    w.wr_id = 4;
    w.sg_list = &sge;
    w.send_flags = IBV_SEND_SIGNALED;
    w.wr.rdma.remote_addr = them.addr;
    w.wr.rdma.rkey = them.rkey ^ 0x00ff0000u;
    CHECK(ibv_post_send(qp, &w, &bad) == 0, "post bad-rkey WRITE");
    wc = wait_one(cq);
    CHECK(wc.status == IBV_WC_REM_ACCESS_ERR && wc.wr_id == 4, "bad rkey wc: %d %s", wc.status,
          ibv_wc_status_str(wc.status));
    CHECK(strcmp(ibv_wc_status_str(wc.status), "remote access error") == 0, "status text '%s'",
          ibv_wc_status_str(wc.status));
    CHECK(ibv_query_qp(qp, &a, IBV_QP_STATE, &qi) == 0 && a.qp_state == IBV_QPS_ERR, "after REM_ACCESS_ERR state %d",
          a.qp_state);
    /* 5. Posted in ERR: flushed. */
    w.wr_id = 5;
    CHECK(ibv_post_send(qp, &w, &bad) == 0, "post in ERR");
    wc = wait_one(cq);
    CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 5, "flush wc: %s", ibv_wc_status_str(wc.status));
    CHECK(strcmp(ibv_wc_status_str(wc.status), "Work Request Flushed Error") == 0, "status text '%s'",
          ibv_wc_status_str(wc.status));
  }
  /* The verdicts: the server checks its memory once the client is done. */
  xfer(s, &ok, &peer_ok, 1);
  CHECK(peer_ok == 1, "peer failed");
  if (server) {
    for (size_t i = 0; i < MSG_BYTES; ++i) CHECK(buf[i] == pattern(i), "server byte %zu = 0x%02x", i, buf[i]);
    for (size_t i = 0; i < 16 * MT_CHUNK; ++i) {
      CHECK(buf[MT_OFFSET + i] == pattern(i), "two-thread WRITE byte %zu = 0x%02x", i, buf[MT_OFFSET + i]);
    }
    char want[48];
    snprintf(want, sizeof want, "inline-%u", them.qpn);
    CHECK(strcmp((char*)buf + MSG_BYTES, want) == 0, "inline data '%s'", (char*)buf + MSG_BYTES);
    /* To ERR: every posted receive is flushed. */
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_ERR;
    CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0, "to ERR");
    for (int i = 0; i < NUM_RECV; ++i) {
      struct ibv_wc wc = wait_one(cq);
      CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 100 + (uint64_t)i,
            "recv %d: status '%s' wr_id %llu", i, ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
    }
    struct ibv_wc none;
    CHECK(ibv_poll_cq(cq, 1, &none) == 0, "an extra completion");
  }
  xfer(s, &ok, &peer_ok, 1);
  close(s);

  CHECK(ibv_destroy_qp(qp) == 0, "ibv_destroy_qp");
  CHECK(ibv_destroy_cq(cq) == 0, "ibv_destroy_cq");
  CHECK(ibv_destroy_comp_channel(ch) == 0, "ibv_destroy_comp_channel");
  CHECK(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr");
  CHECK(ibv_dealloc_pd(pd) == 0, "ibv_dealloc_pd");
  CHECK(ibv_close_device(ctx) == 0, "ibv_close_device");
  free(buf);
  printf("verbs_check: PASS (%s)\n", server ? "server" : "client");
  return 0;
}
