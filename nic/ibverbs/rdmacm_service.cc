// libsfrdmacm: the device, the CM messages over TCP, the service thread
// and the event queues (rdmacm_state.h; docs/ibverbs.md "RDMA CM").
#include "nic/ibverbs/rdmacm_state.h"

namespace sf::nic::ibverbs::cm {

void wake(State& s) {
  if (s.wake_fd >= 0) {
    const uint64_t one = 1;
    (void)!write(s.wake_fd, &one, sizeof one);
  }
}

// SFVERBS_CM_HOSTS=RDMA_IP=TCP_IP,...: the TCP address that reaches the
// process owning an RDMA address (default: the address itself). Under mu.
bool parse_hosts(State& s) {
  if (s.hosts_parsed) return s.hosts_ok;
  s.hosts_parsed = true;
  if (const char* ms = getenv("SFVERBS_CM_CONNECT_MS"); ms != nullptr && *ms != '\0') {
    char* end = nullptr;
    const long n = strtol(ms, &end, 10);
    if (*end != '\0' || n < 0 || n > 600000) {
      std::fprintf(stderr, "libsfrdmacm: SFVERBS_CM_CONNECT_MS: '%s' is not 0..600000 (docs/ibverbs.md)\n", ms);
      s.hosts_ok = false;
      return false;
    }
    s.connect_ms = static_cast<int>(n);
  }
  const char* v = getenv("SFVERBS_CM_HOSTS");
  if (v == nullptr || *v == '\0') return true;
  std::string all(v);
  size_t pos = 0;
  while (pos <= all.size()) {
    const size_t comma = all.find(',', pos);
    const std::string item = all.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const size_t eq = item.find('=');
    in_addr a{}, b{};
    if (eq == std::string::npos || inet_pton(AF_INET, item.substr(0, eq).c_str(), &a) != 1 ||
        inet_pton(AF_INET, item.substr(eq + 1).c_str(), &b) != 1) {
      std::fprintf(stderr, "libsfrdmacm: SFVERBS_CM_HOSTS: '%s' is not RDMA_IPv4=TCP_IPv4 (docs/ibverbs.md)\n",
                   item.c_str());
      s.hosts_ok = false;
      return false;
    }
    s.hosts.emplace_back(a.s_addr, b.s_addr);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

uint32_t tcp_addr(State& s, uint32_t rdma_ip) {
  for (const auto& [r, t] : s.hosts) {
    if (r == rdma_ip) return t;
  }
  return rdma_ip;
}

// Opens the process's device once (under mu): its context, a PD for ids
// (librdmacm's per-device PD), the IPv4 GID and the active MTU.
bool open_device(State& s) {
  if (s.dev_tried) return s.ctx != nullptr;
  s.dev_tried = true;
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr || n == 0) {
    if (list != nullptr) ibv_free_device_list(list);
    std::fprintf(stderr, "libsfrdmacm: no RDMA device (is libsfverbs.so preloaded with SFVERBS_PORT set?)\n");
    return false;
  }
  ibv_context* ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  if (ctx == nullptr) return false;
  for (int i = 0; i < 2; ++i) {
    ibv_gid g{};
    if (ibv_query_gid(ctx, 1, i, &g) != 0) continue;
    static const uint8_t kV4Prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(g.raw, kV4Prefix, 12) == 0) {
      s.gid = g;
      s.gid_index = i;
      std::memcpy(&s.ip, g.raw + 12, 4);
      break;
    }
  }
  if (s.gid_index < 0) {
    std::fprintf(stderr, "libsfrdmacm: the device has no IPv4 GID (SFVERBS_IP): the CM supports IPv4 only\n");
    ibv_close_device(ctx);
    return false;
  }
  ibv_port_attr pa{};
  if (ibv_query_port(ctx, 1, &pa) == 0) s.mtu = pa.active_mtu;
  s.pd = ibv_alloc_pd(ctx);
  if (s.pd == nullptr) {
    ibv_close_device(ctx);
    return false;
  }
  s.ctx = ctx;
  return true;
}

void attach_device(State& s, Id* id) {
  id->id.verbs = s.ctx;
  id->id.pd = s.pd;
  id->id.port_num = 1;
}

// Queues an event on the id's channel (under mu).
void queue_event(Id* id, rdma_cm_event_type type, int status, Id* listen, const Msg* m, uint8_t pd_len) {
  Channel* ch = ch_of(id->id.channel);
  if (ch == nullptr) return;
  auto* e = new (std::nothrow) Event();
  if (e == nullptr) return;
  e->ev.id = &id->id;
  e->ev.listen_id = listen != nullptr ? &listen->id : nullptr;
  e->ev.event = type;
  e->ev.status = status;
  if (m != nullptr) {
    rdma_conn_param& c = e->ev.param.conn;
    std::memcpy(e->pdata, m->private_data, std::min<size_t>(m->pd_len, kMaxPrivate));
    c.private_data = pd_len != 0 ? e->pdata : nullptr;
    c.private_data_len = pd_len;
    c.responder_resources = m->responder_resources;
    c.initiator_depth = m->initiator_depth;
    c.flow_control = m->flow_control;
    c.retry_count = m->retry_count;
    c.rnr_retry_count = m->rnr_retry_count;
    c.srq = m->srq;
    c.qp_num = ntohl(m->qpn);
  }
  ch->q.push_back(e);
  if (!ch->signalled) {
    const uint64_t one = 1;
    (void)!write(ch->ch.fd, &one, sizeof one);
    ch->signalled = true;
  }
}

// The service thread's poll may hold a reference to the socket: close()
// alone would leave a listener listening (a second rdma_listen on the port
// fails with EADDRINUSE) and a connection open (the peer's DISCONNECTED
// late) until that poll returns. shutdown() acts at once.
void close_fd(Id* id) {
  if (id->fd >= 0) {
    shutdown(id->fd, SHUT_RDWR);
    close(id->fd);
  }
  id->fd = -1;
  id->rx_len = 0;
}

bool send_msg(Id* id, MsgType t, const void* pdata, uint8_t pd_len, State& s, uint16_t reason) {
  if (id->fd < 0) return false;
  Msg m{};
  m.magic = htonl(kMagic);
  m.version = kVersion;
  m.type = static_cast<uint8_t>(t);
  m.pd_len = pd_len;
  m.responder_resources = id->resp_res;
  m.initiator_depth = id->init_depth;
  m.retry_count = id->retry;
  m.rnr_retry_count = id->rnr_retry;
  m.reason = htons(reason);
  m.qpn = htonl(id->id.qp != nullptr ? id->id.qp->qp_num : 0);
  m.psn = htonl(id->psn);
  std::memcpy(m.gid, s.gid.raw, 16);
  m.ip = s.ip;
  if (pd_len != 0 && pdata != nullptr) std::memcpy(m.private_data, pdata, pd_len);
  const auto* p = reinterpret_cast<const uint8_t*>(&m);
  size_t off = 0;
  while (off < sizeof m) {
    const ssize_t n = send(id->fd, p + off, sizeof m - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd pf{id->fd, POLLOUT, 0};
      if (poll(&pf, 1, 1000) <= 0) return false;
    } else {
      return false;
    }
  }
  return true;
}

// The QP's INIT -> RTR -> RTS, from the peer's REQ or REP (librdmacm's
// ucma_modify_qp_rtr / ucma_modify_qp_rts). Returns 0 or an errno.
int connect_qp(State& s, Id* id) {
  ibv_qp* qp = id->id.qp;
  if (qp == nullptr) return 0;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = s.mtu;
  a.dest_qp_num = id->rem.qpn;
  a.rq_psn = id->rem.psn;
  a.max_dest_rd_atomic = id->resp_res;
  a.min_rnr_timer = 12;  // 0.64 ms
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | (id->resp_res != 0 ? IBV_ACCESS_REMOTE_READ : 0);
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = id->rem.gid;
  a.ah_attr.grh.sgid_index = static_cast<uint8_t>(s.gid_index);
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.grh.traffic_class = id->tos;
  a.ah_attr.port_num = 1;
  int r = ibv_modify_qp(qp, &a,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                            IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS);
  if (r != 0) return r;
  ibv_qp_attr b{};
  b.qp_state = IBV_QPS_RTS;
  b.sq_psn = id->psn;
  b.timeout = id->timeout;
  b.retry_cnt = id->retry;
  b.rnr_retry = id->rnr_retry;
  b.max_rd_atomic = id->init_depth;
  return ibv_modify_qp(qp, &b,
                       IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_MAX_QP_RD_ATOMIC);
}

void qp_to_err(Id* id) {
  if (id->id.qp == nullptr) return;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_ERR;
  (void)ibv_modify_qp(id->id.qp, &a, IBV_QP_STATE);
}

void remember_remote(Id* id, const Msg& m) {
  id->rem.qpn = ntohl(m.qpn) & 0xffffff;
  id->rem.psn = ntohl(m.psn) & 0xffffff;
  std::memcpy(id->rem.gid.raw, m.gid, 16);
  id->rem.responder_resources = m.responder_resources;
  id->rem.initiator_depth = m.initiator_depth;
  id->rem.retry_count = m.retry_count;
  id->rem.rnr_retry_count = m.rnr_retry_count;
}


// The peer's connection ended (EOF, error, or a message out of turn).
void lost(State& s, Id* id, int err) {
  close_fd(id);
  switch (id->st) {
    case IdState::kAwaitReq:
      free_id(s, id);  // never reported
      return;
    case IdState::kReqSent:
    case IdState::kTcpConnecting:
    case IdState::kTcpRetry:
      id->st = IdState::kRejected;
      queue_event(id, RDMA_CM_EVENT_UNREACHABLE, -err);
      return;
    case IdState::kRepSent:
      id->st = IdState::kDisconnected;
      queue_event(id, RDMA_CM_EVENT_CONNECT_ERROR, -err);
      return;
    case IdState::kConnected:
    case IdState::kDisconnecting:
      id->st = IdState::kDisconnected;
      queue_event(id, RDMA_CM_EVENT_DISCONNECTED, 0);
      return;
    default:
      return;
  }
}

void handle_msg(State& s, Id* id, const Msg& m) {
  if (ntohl(m.magic) != kMagic || m.version != kVersion || m.pd_len > kMaxPrivate) {
    std::fprintf(stderr, "libsfrdmacm: a CM message that is not ours (magic/version/length): connection dropped\n");
    lost(s, id, EPROTO);
    return;
  }
  const auto t = static_cast<MsgType>(m.type);
  if (t == MsgType::kReq && id->st == IdState::kAwaitReq) {
    remember_remote(id, m);
    Id* l = id->listen;
    id->st = IdState::kReqRcvd;
    id->visible = true;
    attach_device(s, id);
    id->id.channel = l->id.channel;
    id->id.context = l->id.context;
    id->id.ps = l->id.ps;
    id->id.qp_type = l->id.qp_type;
    id->id.route.addr.src_sin.sin_family = AF_INET;
    id->id.route.addr.src_sin.sin_addr.s_addr = s.ip;
    id->id.route.addr.src_sin.sin_port = l->id.route.addr.src_sin.sin_port;
    id->id.route.addr.dst_sin.sin_family = AF_INET;
    id->id.route.addr.dst_sin.sin_addr.s_addr = m.ip;
    // The passive side's QP takes the REQ's retry counts (IBA 12.7.27-28).
    id->retry = m.retry_count;
    id->rnr_retry = m.rnr_retry_count;
    queue_event(id, RDMA_CM_EVENT_CONNECT_REQUEST, 0, l, &m, kReqPrivate);
  } else if (t == MsgType::kRep && id->st == IdState::kReqSent) {
    remember_remote(id, m);
    // The active side: the peer's answer fixes the READ depths; the REP's
    // RNR retry count is the one this side's QP uses.
    id->init_depth = std::min(id->init_depth, m.responder_resources);
    id->resp_res = std::min(id->resp_res, m.initiator_depth);
    id->rnr_retry = m.rnr_retry_count;
    const int r = connect_qp(s, id);
    if (r != 0) {
      send_msg(id, MsgType::kRej, nullptr, 0, s, kRejConsumerDefined);
      close_fd(id);
      id->st = IdState::kRejected;
      queue_event(id, RDMA_CM_EVENT_CONNECT_ERROR, -r);
      return;
    }
    send_msg(id, MsgType::kRtu, nullptr, 0, s);
    id->st = IdState::kConnected;
    queue_event(id, RDMA_CM_EVENT_ESTABLISHED, 0, nullptr, &m, kRepPrivate);
  } else if (t == MsgType::kRtu && id->st == IdState::kRepSent) {
    id->st = IdState::kConnected;
    queue_event(id, RDMA_CM_EVENT_ESTABLISHED, 0);
  } else if (t == MsgType::kRej && (id->st == IdState::kReqSent || id->st == IdState::kRepSent)) {
    close_fd(id);
    const bool active = id->st == IdState::kReqSent;
    id->st = IdState::kRejected;
    queue_event(id, active ? RDMA_CM_EVENT_REJECTED : RDMA_CM_EVENT_CONNECT_ERROR, ntohs(m.reason), nullptr, &m,
                kRejPrivate);
  } else if (t == MsgType::kDreq && (id->st == IdState::kConnected || id->st == IdState::kRepSent ||
                                     id->st == IdState::kDisconnecting)) {
    // The DREP goes at once (the kernel CM sends it when the application
    // disconnects or destroys the id; nobody waits on it here).
    send_msg(id, MsgType::kDrep, nullptr, 0, s);
    close_fd(id);
    id->st = IdState::kDisconnected;
    queue_event(id, RDMA_CM_EVENT_DISCONNECTED, 0);
  } else if (t == MsgType::kDrep && id->st == IdState::kDisconnecting) {
    close_fd(id);
    id->st = IdState::kDisconnected;
    queue_event(id, RDMA_CM_EVENT_DISCONNECTED, 0);
  } else {
    std::fprintf(stderr, "libsfrdmacm: CM message type %u out of turn: connection dropped\n", m.type);
    lost(s, id, EPROTO);
  }
}

void on_listener(State& s, Id* l) {
  for (;;) {
    const int fd = accept4(l->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto* id = new (std::nothrow) Id();
    if (id == nullptr) {
      close(fd);
      return;
    }
    std::memset(&id->id, 0, sizeof id->id);
    id->fd = fd;
    id->st = IdState::kAwaitReq;
    id->listen = l;
    id->visible = false;
    id->psn = s.rng() & 0xffffff;
    id->tos = l->tos;
    id->timeout = l->timeout;
    s.ids.push_back(id);
  }
}

void on_readable(State& s, Id* id) {
  for (;;) {
    auto* p = reinterpret_cast<uint8_t*>(&id->rx);
    const ssize_t n = recv(id->fd, p + id->rx_len, sizeof(Msg) - id->rx_len, 0);
    if (n == 0) {
      lost(s, id, ECONNRESET);
      return;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      lost(s, id, errno);
      return;
    }
    id->rx_len += static_cast<size_t>(n);
    if (id->rx_len == sizeof(Msg)) {
      id->rx_len = 0;
      const Msg m = id->rx;
      handle_msg(s, id, m);
      if (!live(s, id) || id->fd < 0) return;
    }
  }
}

// A TCP connection that failed: refused while the window is open (the
// peer's listener may be moments away, as perftest's server re-listens after
// its first connection) is tried again in 20 ms; else the CM's event.
void refused(State& /*s*/, Id* id, int err) {
  close_fd(id);
  const auto now = std::chrono::steady_clock::now();
  if (err == ECONNREFUSED && now < id->refused_until) {
    id->st = IdState::kTcpRetry;
    id->retry_at = now + std::chrono::milliseconds(20);
    return;
  }
  id->st = IdState::kRejected;
  if (err == ECONNREFUSED) {
    // No listener: the peer's CM would answer the REQ with REJ (invalid service ID).
    queue_event(id, RDMA_CM_EVENT_REJECTED, kRejInvalidServiceId);
  } else {
    queue_event(id, RDMA_CM_EVENT_UNREACHABLE, -err);
  }
}

// Starts the TCP connection to the destination's CM (under mu).
void tcp_connect(State& s, Id* x) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    refused(s, x, errno);
    return;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in t = x->id.route.addr.dst_sin;
  t.sin_addr.s_addr = tcp_addr(s, t.sin_addr.s_addr);
  x->fd = fd;
  x->st = IdState::kTcpConnecting;
  if (connect(fd, reinterpret_cast<sockaddr*>(&t), sizeof t) != 0 && errno != EINPROGRESS) refused(s, x, errno);
}

void on_connected(State& s, Id* id) {
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(id->fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err == EINPROGRESS) return;
  if (err != 0) {
    refused(s, id, err);
    return;
  }
  id->st = IdState::kReqSent;
  if (!send_msg(id, MsgType::kReq, id->rx.private_data, id->rx.pd_len, s)) lost(s, id, EPIPE);
}

void service_main() {
  State& s = S();
  std::vector<pollfd> pfds;
  std::vector<Id*> who;
  for (;;) {
    int timeout_ms = -1;
    {
      std::lock_guard<std::mutex> g(s.mu);
      const auto now = std::chrono::steady_clock::now();
      for (Id* id : s.ids) {
        if (id->st != IdState::kTcpRetry) continue;
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(id->retry_at - now).count() + 1;
        timeout_ms = timeout_ms < 0 ? static_cast<int>(std::max<int64_t>(ms, 0))
                                    : std::min(timeout_ms, static_cast<int>(std::max<int64_t>(ms, 0)));
      }
      pfds.assign(1, pollfd{s.wake_fd, POLLIN, 0});
      who.assign(1, nullptr);
      for (Id* id : s.ids) {
        if (id->fd < 0) continue;
        pfds.push_back(pollfd{id->fd, static_cast<short>(id->st == IdState::kTcpConnecting ? POLLOUT : POLLIN), 0});
        who.push_back(id);
      }
    }
    if (poll(pfds.data(), pfds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    std::lock_guard<std::mutex> g(s.mu);
    const auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < s.ids.size(); ++i) {  // tcp_connect may not add or remove ids
      Id* id = s.ids[i];
      if (id->st == IdState::kTcpRetry && id->retry_at <= now) tcp_connect(s, id);
    }
    if ((pfds[0].revents & POLLIN) != 0) {
      uint64_t v;
      (void)!read(s.wake_fd, &v, sizeof v);
    }
    for (size_t i = 1; i < pfds.size(); ++i) {
      Id* id = who[i];
      if (pfds[i].revents == 0 || !live(s, id) || id->fd != pfds[i].fd) continue;
      if (id->st == IdState::kListening) {
        on_listener(s, id);
      } else if (id->st == IdState::kTcpConnecting) {
        on_connected(s, id);
      } else {
        on_readable(s, id);
      }
    }
  }
}

// Under mu.
bool start_service(State& s) {
  if (s.thread_started) return true;
  s.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s.wake_fd < 0) return false;
  std::thread(service_main).detach();  // runs until the process exits
  s.thread_started = true;
  return true;
}

// Drops the id's undelivered events from its channel (under mu).
void drop_events(Id* id) {
  Channel* ch = ch_of(id->id.channel);
  if (ch == nullptr) return;
  for (auto it = ch->q.begin(); it != ch->q.end();) {
    if ((*it)->ev.id == &id->id || (*it)->ev.listen_id == &id->id) {
      delete *it;
      it = ch->q.erase(it);
    } else {
      ++it;
    }
  }
  if (ch->q.empty() && ch->signalled) {
    uint64_t v;
    (void)!read(ch->ch.fd, &v, sizeof v);
    ch->signalled = false;
  }
}

void free_id(State& s, Id* id) {
  close_fd(id);
  s.ids.erase(std::remove(s.ids.begin(), s.ids.end(), id), s.ids.end());
  delete id;
}


// CQs for rdma_create_qp when the application gives none (librdmacm's ucma_create_cqs).
int create_cqs(Id* id, uint32_t send_wr, uint32_t recv_wr) {
  ibv_context* ctx = id->id.verbs;
  if (recv_wr != 0) {
    id->id.recv_cq_channel = ibv_create_comp_channel(ctx);
    if (id->id.recv_cq_channel == nullptr) return -1;
    id->id.recv_cq = ibv_create_cq(ctx, static_cast<int>(recv_wr), id, id->id.recv_cq_channel, 0);
    if (id->id.recv_cq == nullptr) return -1;
  }
  if (send_wr != 0) {
    id->id.send_cq_channel = ibv_create_comp_channel(ctx);
    if (id->id.send_cq_channel == nullptr) return -1;
    id->id.send_cq = ibv_create_cq(ctx, static_cast<int>(send_wr), id, id->id.send_cq_channel, 0);
    if (id->id.send_cq == nullptr) return -1;
  }
  id->own_cqs = true;
  return 0;
}

void destroy_cqs(Id* id) {
  if (!id->own_cqs) return;
  if (id->id.send_cq != nullptr) ibv_destroy_cq(id->id.send_cq);
  if (id->id.recv_cq != nullptr) ibv_destroy_cq(id->id.recv_cq);
  if (id->id.send_cq_channel != nullptr) ibv_destroy_comp_channel(id->id.send_cq_channel);
  if (id->id.recv_cq_channel != nullptr) ibv_destroy_comp_channel(id->id.recv_cq_channel);
  id->id.send_cq = id->id.recv_cq = nullptr;
  id->id.send_cq_channel = id->id.recv_cq_channel = nullptr;
  id->own_cqs = false;
}

}  // namespace sf::nic::ibverbs::cm
