/* cm_check: a plain librdmacm C program (linked with -lrdmacm -libverbs, run
 * under LD_PRELOAD="libsfverbs.so libsfrdmacm.so"; docs/ibverbs.md "RDMA CM").
 *
 *   cm_check server PORT        cm_check client PORT SERVER_RDMA_IP
 *
 * Connection 1: the client's REQ carries private data and READ depths; the
 * server checks its CONNECT_REQUEST (new id, listen_id, context, device,
 * private data) and rejects it with private data; the client gets REJECTED
 * (status 28, consumer defined) with that data.
 * Connection 2: QPs created by rdma_create_qp with the CM's own CQs and PD;
 * the server accepts with private data, the client's ESTABLISHED carries it,
 * the client SENDs "ping" into the server's receive, the server disconnects
 * and both see DISCONNECTED.
 * Connection 3: the server destroys its listener while the request's
 * CONNECT_REQUEST waits on its channel: the client gets REJECTED (28) and
 * the server's channel fd is no longer readable. Every event is awaited with poll() on the
 * channel's fd. Also: the refusals (UD port space, oversize private data, a
 * host name) fail with errors, not crashes; an empty non-blocking channel
 * says EAGAIN. Prints "cm_check: PASS (role)". */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *role = "?";

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "cm_check (%s): FAIL: ", role);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

#define CHECK(c, ...) \
  do {                \
    if (!(c)) die(__VA_ARGS__); \
  } while (0)

static struct rdma_cm_event *wait_event(struct rdma_event_channel *ch, enum rdma_cm_event_type want) {
  struct pollfd pf = {ch->fd, POLLIN, 0};
  CHECK(poll(&pf, 1, 15000) == 1, "no CM event within 15 s (waiting for %s)", rdma_event_str(want));
  struct rdma_cm_event *e = NULL;
  CHECK(rdma_get_cm_event(ch, &e) == 0, "rdma_get_cm_event: %s", strerror(errno));
  CHECK(e->event == want, "event %s (status %d), wanted %s", rdma_event_str(e->event), e->status,
        rdma_event_str(want));
  return e;
}

static void make_qp(struct rdma_cm_id *id) {
  struct ibv_qp_init_attr a;
  memset(&a, 0, sizeof a);
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = 8;
  a.cap.max_recv_wr = 8;
  a.cap.max_send_sge = 1;
  a.cap.max_recv_sge = 1;
  CHECK(rdma_create_qp(id, NULL, &a) == 0, "rdma_create_qp: %s", strerror(errno));
  CHECK(id->qp != NULL && id->pd != NULL && id->send_cq != NULL && id->recv_cq != NULL &&
            id->qp->pd == id->pd && a.send_cq == id->send_cq,
        "rdma_create_qp left qp %p pd %p send_cq %p recv_cq %p", (void *)id->qp, (void *)id->pd,
        (void *)id->send_cq, (void *)id->recv_cq);
}

static void poll_one(struct ibv_cq *cq, enum ibv_wc_opcode op) {
  struct ibv_wc wc;
  for (long i = 0; i < 2000000000L; ++i) {
    int n = ibv_poll_cq(cq, 1, &wc);
    CHECK(n >= 0, "ibv_poll_cq %d", n);
    if (n == 1) {
      CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == op, "completion status %s opcode %d",
            ibv_wc_status_str(wc.status), wc.opcode);
      return;
    }
  }
  die("no completion");
}

static void refusals(struct rdma_event_channel *ch) {
  struct rdma_cm_id *id = NULL;
  CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP) == -1 && errno == EOPNOTSUPP, "RDMA_PS_UDP not refused");
  struct rdma_addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_port_space = RDMA_PS_TCP;
  CHECK(rdma_getaddrinfo("server.invalid", "1", &hints, &res) != 0 && res == NULL, "a host name not refused");
  CHECK(strcmp(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED), "RDMA_CM_EVENT_ESTABLISHED") == 0, "rdma_event_str");
  /* a non-blocking channel with no event: EAGAIN, as the kernel's */
  int fl = fcntl(ch->fd, F_GETFL);
  CHECK(fl >= 0 && fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) == 0, "fcntl");
  struct rdma_cm_event *ev = NULL;
  CHECK(rdma_get_cm_event(ch, &ev) == -1 && errno == EAGAIN, "an empty non-blocking channel did not say EAGAIN");
  CHECK(fcntl(ch->fd, F_SETFL, fl) == 0, "fcntl");
  CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0, "rdma_create_id");
  CHECK(rdma_resolve_route(id, 100) == -1 && errno == EINVAL, "resolve_route before resolve_addr not refused");
  CHECK(rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &hints, 1) == -1 && errno == ENOSYS,
        "RDMA_OPTION_IB_PATH not refused");
  CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id");
}

static void server(const char *port) {
  struct rdma_event_channel *ch = rdma_create_event_channel();
  CHECK(ch != NULL, "rdma_create_event_channel");
  refusals(ch);
  int tag = 42;
  struct rdma_cm_id *lid = NULL;
  CHECK(rdma_create_id(ch, &lid, &tag, RDMA_PS_TCP) == 0, "rdma_create_id");
  struct rdma_addrinfo hints, *rai = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_flags = RAI_PASSIVE;
  hints.ai_port_space = RDMA_PS_TCP;
  CHECK(rdma_getaddrinfo(NULL, port, &hints, &rai) == 0 && rai->ai_src_addr != NULL, "rdma_getaddrinfo passive");
  CHECK(rdma_bind_addr(lid, rai->ai_src_addr) == 0, "rdma_bind_addr: %s", strerror(errno));
  rdma_freeaddrinfo(rai);
  CHECK(rdma_listen(lid, 4) == 0, "rdma_listen: %s", strerror(errno));

  /* 1: checked, then rejected with private data */
  struct rdma_cm_event *e = wait_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
  struct rdma_cm_id *id = e->id;
  CHECK(id != lid && e->listen_id == lid && id->context == &tag && id->verbs != NULL && id->channel == ch,
        "CONNECT_REQUEST: id %p listen_id %p context %p verbs %p", (void *)id, (void *)e->listen_id, id->context,
        (void *)id->verbs);
  CHECK(e->param.conn.private_data_len == 56 && e->param.conn.private_data != NULL &&
            strcmp((const char *)e->param.conn.private_data, "hello-req") == 0,
        "REQ private data (%u bytes)", e->param.conn.private_data_len);
  CHECK(e->param.conn.initiator_depth == 4 && e->param.conn.responder_resources == 2 && e->param.conn.qp_num != 0,
        "REQ depths %u/%u qpn %u", e->param.conn.initiator_depth, e->param.conn.responder_resources,
        e->param.conn.qp_num);
  CHECK(rdma_ack_cm_event(e) == 0, "ack");
  CHECK(rdma_reject(id, "go-away", 8) == 0, "rdma_reject: %s", strerror(errno));
  CHECK(rdma_destroy_id(id) == 0, "destroy rejected id");

  /* 2: accepted, a SEND received, disconnected by this side */
  e = wait_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
  id = e->id;
  CHECK(rdma_ack_cm_event(e) == 0, "ack");
  make_qp(id);
  static char buf[64];
  struct ibv_mr *mr = ibv_reg_mr(id->pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE);
  CHECK(mr != NULL, "ibv_reg_mr");
  struct ibv_sge sge = {(uintptr_t)buf, sizeof buf, mr->lkey};
  struct ibv_recv_wr rwr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1}, *bad_r = NULL;
  CHECK(ibv_post_recv(id->qp, &rwr, &bad_r) == 0, "ibv_post_recv");
  struct rdma_conn_param p;
  memset(&p, 0, sizeof p);
  p.private_data = "hello-rep";
  p.private_data_len = 10;
  p.responder_resources = 4;
  p.initiator_depth = 2;
  p.rnr_retry_count = 7;
  CHECK(rdma_accept(id, &p) == 0, "rdma_accept: %s", strerror(errno));
  struct ibv_qp_attr qa;
  struct ibv_qp_init_attr qia;
  CHECK(ibv_query_qp(id->qp, &qa, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_MAX_DEST_RD_ATOMIC, &qia) == 0 &&
            qa.qp_state == IBV_QPS_RTS,
        "QP not in RTS after rdma_accept (%d)", qa.qp_state);
  struct ibv_port_attr pa;
  CHECK(ibv_query_port(id->verbs, 1, &pa) == 0, "ibv_query_port");
  CHECK(qa.path_mtu == pa.active_mtu && qa.max_dest_rd_atomic == 4, "QP path MTU %d (port %d), max_dest_rd_atomic %d",
        qa.path_mtu, pa.active_mtu, qa.max_dest_rd_atomic);
  e = wait_event(ch, RDMA_CM_EVENT_ESTABLISHED);
  CHECK(e->id == id, "ESTABLISHED for another id");
  CHECK(rdma_ack_cm_event(e) == 0, "ack");
  poll_one(id->recv_cq, IBV_WC_RECV);
  CHECK(strcmp(buf, "ping") == 0, "received '%.8s'", buf);
  CHECK(rdma_disconnect(id) == 0, "rdma_disconnect: %s", strerror(errno));
  e = wait_event(ch, RDMA_CM_EVENT_DISCONNECTED);
  CHECK(rdma_ack_cm_event(e) == 0, "ack");
  ibv_dereg_mr(mr);
  rdma_destroy_qp(id);
  CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id");

  /* 3: the listener destroyed while a CONNECT_REQUEST waits on the channel:
     the request is rejected, the event dropped (the fd no longer readable) */
  struct pollfd pf = {ch->fd, POLLIN, 0};
  CHECK(poll(&pf, 1, 15000) == 1, "no third connection request");
  CHECK(rdma_destroy_id(lid) == 0, "rdma_destroy_id (listener)");
  CHECK(poll(&pf, 1, 0) == 0, "the channel still readable after its listener's events were dropped");
  rdma_destroy_event_channel(ch);
  printf("cm_check: PASS (server)\n");
}

static struct rdma_cm_id *resolve(struct rdma_event_channel *ch, struct rdma_addrinfo *rai) {
  struct rdma_cm_id *id = NULL;
  CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0, "rdma_create_id");
  CHECK(rdma_resolve_addr(id, NULL, rai->ai_dst_addr, 2000) == 0, "rdma_resolve_addr: %s", strerror(errno));
  struct rdma_cm_event *e = wait_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
  CHECK(e->id == id && id->verbs != NULL && id->pd != NULL, "ADDR_RESOLVED: id %p verbs %p", (void *)e->id,
        (void *)id->verbs);
  rdma_ack_cm_event(e);
  CHECK(rdma_resolve_route(id, 2000) == 0, "rdma_resolve_route: %s", strerror(errno));
  rdma_ack_cm_event(wait_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
  make_qp(id);
  return id;
}

static void client(const char *port, const char *addr) {
  struct rdma_event_channel *ch = rdma_create_event_channel();
  CHECK(ch != NULL, "rdma_create_event_channel");
  refusals(ch);
  struct rdma_addrinfo hints, *rai = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_port_space = RDMA_PS_TCP;
  CHECK(rdma_getaddrinfo(addr, port, &hints, &rai) == 0 && rai->ai_dst_addr != NULL, "rdma_getaddrinfo");
  char req[64] = "hello-req";
  struct rdma_conn_param p;
  memset(&p, 0, sizeof p);
  p.private_data = req;
  p.private_data_len = 57;
  p.initiator_depth = 4;
  p.responder_resources = 2;
  p.retry_count = 7;
  p.rnr_retry_count = 7;

  /* 1: rejected */
  struct rdma_cm_id *id = resolve(ch, rai);
  CHECK(rdma_connect(id, &p) == -1 && errno == EINVAL, "57 bytes of REQ private data not refused");
  p.private_data_len = 10;
  CHECK(rdma_connect(id, &p) == 0, "rdma_connect: %s", strerror(errno));
  struct rdma_cm_event *e = wait_event(ch, RDMA_CM_EVENT_REJECTED);
  CHECK(e->status == 28 && e->param.conn.private_data != NULL &&
            strcmp((const char *)e->param.conn.private_data, "go-away") == 0,
        "REJECTED status %d", e->status);
  rdma_ack_cm_event(e);
  rdma_destroy_qp(id);
  CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id");

  /* 2: established, SEND, disconnected by the server */
  id = resolve(ch, rai);
  CHECK(rdma_connect(id, &p) == 0, "rdma_connect: %s", strerror(errno));
  e = wait_event(ch, RDMA_CM_EVENT_ESTABLISHED);
  CHECK(e->id == id && e->param.conn.private_data_len == 196 &&
            strcmp((const char *)e->param.conn.private_data, "hello-rep") == 0 &&
            e->param.conn.responder_resources == 4 && e->param.conn.initiator_depth == 2,
        "ESTABLISHED: REP private data (%u bytes), depths %u/%u", e->param.conn.private_data_len,
        e->param.conn.responder_resources, e->param.conn.initiator_depth);
  rdma_ack_cm_event(e);
  static char buf[64] = "ping";
  struct ibv_mr *mr = ibv_reg_mr(id->pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE);
  CHECK(mr != NULL, "ibv_reg_mr");
  struct ibv_sge sge = {(uintptr_t)buf, 5, mr->lkey};
  struct ibv_send_wr wr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
                           .send_flags = IBV_SEND_SIGNALED},
                     *bad = NULL;
  CHECK(ibv_post_send(id->qp, &wr, &bad) == 0, "ibv_post_send");
  poll_one(id->send_cq, IBV_WC_SEND);
  e = wait_event(ch, RDMA_CM_EVENT_DISCONNECTED);
  rdma_ack_cm_event(e);
  CHECK(rdma_disconnect(id) == 0, "rdma_disconnect after the peer's: %s", strerror(errno));
  ibv_dereg_mr(mr);
  rdma_destroy_qp(id);
  CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id");

  /* 3: the server destroys its listener with this request pending */
  id = resolve(ch, rai);
  CHECK(rdma_connect(id, &p) == 0, "rdma_connect: %s", strerror(errno));
  e = wait_event(ch, RDMA_CM_EVENT_REJECTED);
  CHECK(e->status == 28, "REJECTED status %d (pending request of a destroyed listener)", e->status);
  rdma_ack_cm_event(e);
  rdma_destroy_qp(id);
  CHECK(rdma_destroy_id(id) == 0, "rdma_destroy_id");
  rdma_freeaddrinfo(rai);
  rdma_destroy_event_channel(ch);
  printf("cm_check: PASS (client)\n");
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "server") == 0) {
    role = "server";
    server(argv[2]);
  } else if (argc >= 4 && strcmp(argv[1], "client") == 0) {
    role = "client";
    client(argv[2], argv[3]);
  } else {
    fprintf(stderr, "usage: cm_check server PORT | cm_check client PORT SERVER_RDMA_IP\n");
    return 2;
  }
  return 0;
}
