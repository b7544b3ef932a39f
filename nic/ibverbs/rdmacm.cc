// libsfrdmacm: librdmacm's ABI (Debian 12's rdma-core 44, RDMACM_1.0) in user
// space, for unmodified RDMA CM applications (perftest -R) over libsfverbs'
// device (docs/ibverbs.md "RDMA CM"). Preloaded beside libsfverbs.so:
//   LD_PRELOAD="libsfverbs.so libsfrdmacm.so"
// It is a plain verbs consumer: every device operation goes through the
// exported ibv_* calls (which libsfverbs serves under the preload).
//
// The CM exchange (REQ, REP, RTU, REJ, DREQ, DREP) runs over one TCP
// connection per connected cm_id, to the address and port the application
// names (rdma_listen's bound address, rdma_connect's resolved destination;
// SFVERBS_CM_HOSTS maps an RDMA address to the TCP address that reaches its
// process). A hardware CM sends MADs on QP1; this datapath has no QP1.
//
// Threading: one mutex guards every CM object. A service thread (started by
// the first rdma_listen / rdma_connect) polls the listening and connected
// sockets, handles each message under the mutex (moving QPs to RTR/RTS as
// librdmacm does on the connection's behalf) and queues events on their
// channel. A channel's fd is an eventfd that is readable while its queue is
// non-empty (level, not count), so the fd works with poll/epoll and
// rdma_destroy_id can drop an id's undelivered events.
#include "nic/ibverbs/rdmacm_state.h"

using namespace sf::nic::ibverbs::cm;

namespace {

const char* const kEventNames[] = {
    "RDMA_CM_EVENT_ADDR_RESOLVED",    "RDMA_CM_EVENT_ADDR_ERROR",       "RDMA_CM_EVENT_ROUTE_RESOLVED",
    "RDMA_CM_EVENT_ROUTE_ERROR",      "RDMA_CM_EVENT_CONNECT_REQUEST",  "RDMA_CM_EVENT_CONNECT_RESPONSE",
    "RDMA_CM_EVENT_CONNECT_ERROR",    "RDMA_CM_EVENT_UNREACHABLE",      "RDMA_CM_EVENT_REJECTED",
    "RDMA_CM_EVENT_ESTABLISHED",      "RDMA_CM_EVENT_DISCONNECTED",     "RDMA_CM_EVENT_DEVICE_REMOVAL",
    "RDMA_CM_EVENT_MULTICAST_JOIN",   "RDMA_CM_EVENT_MULTICAST_ERROR",  "RDMA_CM_EVENT_ADDR_CHANGE",
    "RDMA_CM_EVENT_TIMEWAIT_EXIT",
};


}  // namespace

#define SF_EXPORT extern "C" __attribute__((visibility("default")))

SF_EXPORT rdma_event_channel* rdma_create_event_channel(void) {
  auto* c = new (std::nothrow) Channel();
  if (c == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  c->ch.fd = eventfd(0, EFD_CLOEXEC);
  if (c->ch.fd < 0) {
    delete c;
    return nullptr;
  }
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  s.channels.push_back(c);
  return &c->ch;
}

SF_EXPORT void rdma_destroy_event_channel(rdma_event_channel* channel) {
  if (channel == nullptr) return;
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Channel* c = ch_of(channel);
  for (Event* e : c->q) delete e;
  c->q.clear();
  for (Id* id : s.ids) {
    if (id->id.channel == channel) id->id.channel = nullptr;  // no more events for it
  }
  close(c->ch.fd);
  s.channels.erase(std::remove(s.channels.begin(), s.channels.end(), c), s.channels.end());
  delete c;
}

SF_EXPORT int rdma_create_id(rdma_event_channel* channel, rdma_cm_id** id, void* context, rdma_port_space ps) {
  if (id == nullptr) return fail(EINVAL);
  // Synchronous mode (no channel: every call blocks until its event) is not offered.
  if (channel == nullptr) return fail(EOPNOTSUPP);
  if (ps != RDMA_PS_TCP && ps != RDMA_PS_IB) return fail(EOPNOTSUPP);  // UD port spaces: no UD QPs here
  auto* x = new (std::nothrow) Id();
  if (x == nullptr) return fail(ENOMEM);
  std::memset(&x->id, 0, sizeof x->id);
  x->id.channel = channel;
  x->id.context = context;
  x->id.ps = ps;
  x->id.qp_type = IBV_QPT_RC;
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  x->psn = s.rng() & 0xffffff;
  s.ids.push_back(x);
  *id = &x->id;
  return 0;
}

SF_EXPORT int rdma_destroy_id(rdma_cm_id* id) {
  if (id == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);
  // A listener's connections the application never saw: accepted sockets
  // whose REQ has not come, and requests whose CONNECT_REQUEST is still
  // queued (those are rejected, as a kernel CM rejects them). The ones
  // reported are the application's.
  std::vector<Id*> orphans;
  if (Channel* ch = ch_of(x->id.channel); ch != nullptr) {
    for (Event* e : ch->q) {
      if (e->ev.listen_id == &x->id) id_of(e->ev.id)->visible = false;
    }
  }
  drop_events(x);
  for (Id* o : s.ids) {
    if (o->listen == x) {
      if (o->visible) {
        o->listen = nullptr;
      } else {
        orphans.push_back(o);
      }
    }
  }
  for (Id* o : orphans) {
    if (o->st == IdState::kReqRcvd) send_msg(o, MsgType::kRej, nullptr, 0, s, kRejConsumerDefined);
    free_id(s, o);
  }
  destroy_cqs(x);
  free_id(s, x);  // closing the socket: a connected peer sees DISCONNECTED
  return 0;
}

SF_EXPORT int rdma_bind_addr(rdma_cm_id* id, sockaddr* addr) {
  if (id == nullptr || addr == nullptr) return fail(EINVAL);
  if (!is_v4(addr)) return fail(EAFNOSUPPORT);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  if (x->st != IdState::kIdle) return fail(EINVAL);
  if (!parse_hosts(s)) return fail(EINVAL);
  const sockaddr_in* a = v4(addr);
  if (a->sin_addr.s_addr != htonl(INADDR_ANY)) {
    if (!open_device(s)) return fail(ENODEV);
    if (a->sin_addr.s_addr != s.ip) return fail(EADDRNOTAVAIL);  // not the device's address
    attach_device(s, x);
  }
  id->route.addr.src_sin = *a;
  x->st = IdState::kBound;
  return 0;
}

SF_EXPORT int rdma_listen(rdma_cm_id* id, int backlog) {
  if (id == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  if (x->st != IdState::kBound) return fail(EINVAL);
  // The CM's connection requests come from any address of the process's
  // device: a listener needs the device (its GID goes into the REP).
  if (!open_device(s)) return fail(ENODEV);
  sockaddr_in t = id->route.addr.src_sin;
  if (t.sin_addr.s_addr != htonl(INADDR_ANY)) t.sin_addr.s_addr = tcp_addr(s, t.sin_addr.s_addr);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&t), sizeof t) != 0 || listen(fd, backlog > 0 ? backlog : 16) != 0) {
    const int e = errno;
    close(fd);
    return fail(e);
  }
  socklen_t len = sizeof t;
  getsockname(fd, reinterpret_cast<sockaddr*>(&t), &len);
  id->route.addr.src_sin.sin_port = t.sin_port;  // port 0: the one the system chose
  if (!start_service(s)) {
    close(fd);
    return fail(ENOMEM);
  }
  x->fd = fd;
  x->st = IdState::kListening;
  wake(s);
  return 0;
}

SF_EXPORT int rdma_resolve_addr(rdma_cm_id* id, sockaddr* src_addr, sockaddr* dst_addr, int /*timeout_ms*/) {
  if (id == nullptr || dst_addr == nullptr) return fail(EINVAL);
  if (!is_v4(dst_addr) || (src_addr != nullptr && !is_v4(src_addr))) return fail(EAFNOSUPPORT);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  if (x->st != IdState::kIdle && x->st != IdState::kBound) return fail(EINVAL);
  if (!parse_hosts(s)) return fail(EINVAL);
  if (!open_device(s)) return fail(ENODEV);
  const in_addr_t want = src_addr != nullptr ? v4(src_addr)->sin_addr.s_addr
                                             : id->route.addr.src_sin.sin_addr.s_addr;
  if (want != htonl(INADDR_ANY) && want != s.ip) return fail(EADDRNOTAVAIL);
  attach_device(s, x);
  id->route.addr.src_sin.sin_family = AF_INET;
  id->route.addr.src_sin.sin_addr.s_addr = s.ip;
  id->route.addr.dst_sin = *v4(dst_addr);
  x->st = IdState::kAddrResolved;
  queue_event(x, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
  return 0;
}

SF_EXPORT int rdma_resolve_route(rdma_cm_id* id, int /*timeout_ms*/) {
  if (id == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  if (x->st != IdState::kAddrResolved) return fail(EINVAL);
  x->st = IdState::kRouteResolved;
  queue_event(x, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
  return 0;
}

SF_EXPORT int rdma_set_option(rdma_cm_id* id, int level, int optname, void* optval, size_t optlen) {
  if (id == nullptr || optval == nullptr) return fail(EINVAL);
  if (level != RDMA_OPTION_ID) return fail(ENOSYS);  // RDMA_OPTION_IB (path records): no SA here
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  switch (optname) {
    case RDMA_OPTION_ID_TOS:
      if (optlen != sizeof(uint8_t)) return fail(EINVAL);
      x->tos = *static_cast<uint8_t*>(optval);
      return 0;
    case RDMA_OPTION_ID_ACK_TIMEOUT:
      if (optlen != sizeof(uint8_t)) return fail(EINVAL);
      x->timeout = std::min<uint8_t>(*static_cast<uint8_t*>(optval), 31);
      return 0;
    case RDMA_OPTION_ID_REUSEADDR:  // listeners always reuse (SO_REUSEADDR)
    case RDMA_OPTION_ID_AFONLY:     // IPv4 only anyway
      if (optlen != sizeof(int)) return fail(EINVAL);
      return 0;
    default:
      return fail(ENOSYS);
  }
}

SF_EXPORT int rdma_create_qp_ex(rdma_cm_id* id, ibv_qp_init_attr_ex* attr) {
  if (id == nullptr || attr == nullptr) return fail(EINVAL);
  if ((attr->comp_mask & ~static_cast<uint32_t>(IBV_QP_INIT_ATTR_PD)) != 0 || attr->qp_type != IBV_QPT_RC)
    return fail(EOPNOTSUPP);  // extended QP features and non-RC QPs are not offered
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  if (id->verbs == nullptr || id->qp != nullptr) return fail(EINVAL);
  ibv_pd* pd = (attr->comp_mask & IBV_QP_INIT_ATTR_PD) != 0 && attr->pd != nullptr ? attr->pd : id->pd;
  if (pd == nullptr || pd->context != id->verbs) return fail(EINVAL);
  if ((id->recv_cq != nullptr && attr->recv_cq != nullptr && id->recv_cq != attr->recv_cq) ||
      (id->send_cq != nullptr && attr->send_cq != nullptr && id->send_cq != attr->send_cq))
    return fail(EINVAL);
  if (create_cqs(x, attr->send_cq != nullptr || id->send_cq != nullptr ? 0 : attr->cap.max_send_wr,
                 attr->recv_cq != nullptr || id->recv_cq != nullptr ? 0 : attr->cap.max_recv_wr) != 0) {
    const int e = errno;
    destroy_cqs(x);
    return fail(e != 0 ? e : ENOMEM);
  }
  ibv_qp_init_attr ia{};
  ia.qp_context = attr->qp_context;
  ia.send_cq = attr->send_cq != nullptr ? attr->send_cq : id->send_cq;
  ia.recv_cq = attr->recv_cq != nullptr ? attr->recv_cq : id->recv_cq;
  ia.srq = attr->srq != nullptr ? attr->srq : id->srq;
  ia.cap = attr->cap;
  ia.qp_type = IBV_QPT_RC;
  ia.sq_sig_all = attr->sq_sig_all;
  ibv_qp* qp = ibv_create_qp(pd, &ia);
  if (qp == nullptr) {
    const int e = errno;
    destroy_cqs(x);
    return fail(e);
  }
  // INIT (librdmacm's ucma_init_conn_qp): remote access is granted at RTR
  // from the negotiated responder resources.
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = 0;
  const int r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (r != 0) {
    ibv_destroy_qp(qp);
    destroy_cqs(x);
    return fail(r);
  }
  attr->cap = ia.cap;
  attr->send_cq = ia.send_cq;
  attr->recv_cq = ia.recv_cq;
  attr->pd = pd;
  id->pd = pd;
  id->qp = qp;
  return 0;
}

SF_EXPORT int rdma_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* qp_init_attr) {
  if (id == nullptr || qp_init_attr == nullptr) return fail(EINVAL);
  ibv_qp_init_attr_ex ax{};
  ax.qp_context = qp_init_attr->qp_context;
  ax.send_cq = qp_init_attr->send_cq;
  ax.recv_cq = qp_init_attr->recv_cq;
  ax.srq = qp_init_attr->srq;
  ax.cap = qp_init_attr->cap;
  ax.qp_type = qp_init_attr->qp_type;
  ax.sq_sig_all = qp_init_attr->sq_sig_all;
  ax.comp_mask = IBV_QP_INIT_ATTR_PD;
  ax.pd = pd;
  const int r = rdma_create_qp_ex(id, &ax);
  if (r != 0) return r;
  qp_init_attr->send_cq = ax.send_cq;
  qp_init_attr->recv_cq = ax.recv_cq;
  qp_init_attr->cap = ax.cap;
  return 0;
}

SF_EXPORT void rdma_destroy_qp(rdma_cm_id* id) {
  if (id == nullptr) return;
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  if (!live(s, id_of(id)) || id->qp == nullptr) return;
  ibv_destroy_qp(id->qp);
  id->qp = nullptr;
  destroy_cqs(id_of(id));
}

SF_EXPORT int rdma_connect(rdma_cm_id* id, rdma_conn_param* p) {
  if (id == nullptr) return fail(EINVAL);
  if (p != nullptr && p->private_data_len > kReqPrivate) return fail(EINVAL);
  if (p != nullptr && p->private_data_len != 0 && p->private_data == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  if (x->st != IdState::kRouteResolved) return fail(EINVAL);
  if (id->qp == nullptr && (p == nullptr || p->qp_num == 0)) return fail(EINVAL);
  x->resp_res = p != nullptr ? std::min(p->responder_resources, kMaxRdAtomic) : kMaxRdAtomic;
  x->init_depth = p != nullptr ? std::min(p->initiator_depth, kMaxRdAtomic) : kMaxRdAtomic;
  x->retry = p != nullptr ? std::min<uint8_t>(p->retry_count, 7) : 7;
  x->rnr_retry = p != nullptr ? std::min<uint8_t>(p->rnr_retry_count, 7) : 7;
  // The REQ's private data waits in rx (unused on an active id until the REP) until TCP connects.
  std::memset(&x->rx, 0, sizeof x->rx);
  if (p != nullptr && p->private_data_len != 0) std::memcpy(x->rx.private_data, p->private_data, p->private_data_len);
  x->rx.pd_len = p != nullptr ? p->private_data_len : 0;
  if (!start_service(s)) return fail(ENOMEM);
  // A refusal is reported as the event (as the CM reports a REJ), after the retry window.
  x->refused_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(s.connect_ms);
  tcp_connect(s, x);
  wake(s);  // the service thread completes the connection and sends the REQ
  return 0;
}

SF_EXPORT int rdma_accept(rdma_cm_id* id, rdma_conn_param* p) {
  if (id == nullptr) return fail(EINVAL);
  if (p != nullptr && p->private_data_len > kRepPrivate) return fail(EINVAL);
  if (p != nullptr && p->private_data_len != 0 && p->private_data == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x) || x->st != IdState::kReqRcvd) return fail(EINVAL);
  if (id->qp == nullptr && (p == nullptr || p->qp_num == 0)) return fail(EINVAL);
  // READ depths: the application's (librdmacm: the REQ's, bounded by the device, when it gives none).
  x->resp_res = p != nullptr ? std::min(p->responder_resources, kMaxRdAtomic)
                             : std::min(x->rem.initiator_depth, kMaxRdAtomic);
  x->init_depth = p != nullptr ? std::min(p->initiator_depth, kMaxRdAtomic)
                               : std::min(x->rem.responder_resources, kMaxRdAtomic);
  const int r = connect_qp(s, x);
  if (r != 0) {
    send_msg(x, MsgType::kRej, nullptr, 0, s, kRejConsumerDefined);
    close_fd(x);
    x->st = IdState::kRejected;
    return fail(r);
  }
  // The REP tells the active side the RNR retry count its QP is to use.
  const uint8_t own_rnr = x->rnr_retry;
  x->rnr_retry = p != nullptr ? std::min<uint8_t>(p->rnr_retry_count, 7) : 7;
  const bool ok = send_msg(x, MsgType::kRep, p != nullptr ? p->private_data : nullptr,
                           p != nullptr ? p->private_data_len : 0, s);
  x->rnr_retry = own_rnr;
  if (!ok) {
    lost(s, x, EPIPE);
    return fail(ECONNRESET);
  }
  x->st = IdState::kRepSent;
  return 0;
}

SF_EXPORT int rdma_reject(rdma_cm_id* id, const void* private_data, uint8_t private_data_len) {
  if (id == nullptr || private_data_len > kRejPrivate) return fail(EINVAL);
  if (private_data_len != 0 && private_data == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x) || x->st != IdState::kReqRcvd) return fail(EINVAL);
  send_msg(x, MsgType::kRej, private_data, private_data_len, s, kRejConsumerDefined);
  close_fd(x);
  x->st = IdState::kRejected;
  return 0;
}

SF_EXPORT int rdma_disconnect(rdma_cm_id* id) {
  if (id == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);
  switch (x->st) {
    case IdState::kConnected:
    case IdState::kRepSent:
      qp_to_err(x);  // as librdmacm: the QP stops before the DREQ goes
      if (!send_msg(x, MsgType::kDreq, nullptr, 0, s)) {
        lost(s, x, EPIPE);
        return 0;
      }
      x->st = IdState::kDisconnecting;
      return 0;
    case IdState::kDisconnected:  // the peer disconnected first: its DREP went already
    case IdState::kDisconnecting:
      qp_to_err(x);
      return 0;
    default:
      return fail(EINVAL);
  }
}

SF_EXPORT int rdma_get_cm_event(rdma_event_channel* channel, rdma_cm_event** event) {
  if (channel == nullptr || event == nullptr) return fail(EINVAL);
  State& s = S();
  Channel* c = ch_of(channel);
  for (;;) {
    {
      std::lock_guard<std::mutex> g(s.mu);
      if (!c->q.empty()) {
        Event* e = c->q.front();
        c->q.pop_front();
        if (c->q.empty() && c->signalled) {
          uint64_t v;
          (void)!read(c->ch.fd, &v, sizeof v);
          c->signalled = false;
        }
        *event = &e->ev;
        return 0;
      }
    }
    const int fl = fcntl(channel->fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK) != 0) return fail(EAGAIN);
    pollfd pf{channel->fd, POLLIN, 0};
    if (poll(&pf, 1, -1) < 0 && errno != EINTR) return -1;
  }
}

SF_EXPORT int rdma_ack_cm_event(rdma_cm_event* event) {
  if (event == nullptr) return fail(EINVAL);
  delete reinterpret_cast<Event*>(event);
  return 0;
}

SF_EXPORT const char* rdma_event_str(rdma_cm_event_type event) {
  const auto i = static_cast<size_t>(event);
  return i < sizeof kEventNames / sizeof kEventNames[0] ? kEventNames[i] : "UNKNOWN EVENT";
}

// Numeric IPv4 hosts and numeric ports only (what perftest passes); a name
// is refused with EAI_NONAME (errno EINVAL), as no resolver is consulted.
SF_EXPORT int rdma_getaddrinfo(const char* node, const char* service, const rdma_addrinfo* hints,
                               rdma_addrinfo** res) {
  if (res == nullptr) return fail(EINVAL);
  *res = nullptr;
  const bool passive = hints != nullptr && (hints->ai_flags & RAI_PASSIVE) != 0;
  if (hints != nullptr && hints->ai_family != 0 && hints->ai_family != AF_INET) {
    errno = EINVAL;
    return EAI_FAMILY;
  }
  if (hints != nullptr && hints->ai_port_space != 0 && hints->ai_port_space != RDMA_PS_TCP &&
      hints->ai_port_space != RDMA_PS_IB) {
    errno = EINVAL;
    return EAI_SOCKTYPE;
  }
  if (node == nullptr && !passive) {
    errno = EINVAL;
    return EAI_NONAME;
  }
  in_addr a{};
  a.s_addr = htonl(INADDR_ANY);
  if (node != nullptr && inet_pton(AF_INET, node, &a) != 1) {
    errno = EINVAL;
    return EAI_NONAME;
  }
  uint16_t port = 0;
  if (service != nullptr) {
    char* end = nullptr;
    const long v = strtol(service, &end, 10);
    if (*service == '\0' || *end != '\0' || v < 0 || v > 65535) {
      errno = EINVAL;
      return EAI_SERVICE;
    }
    port = static_cast<uint16_t>(v);
  }
  auto* r = static_cast<rdma_addrinfo*>(calloc(1, sizeof(rdma_addrinfo)));
  auto* sin = static_cast<sockaddr_in*>(calloc(1, sizeof(sockaddr_in)));
  if (r == nullptr || sin == nullptr) {
    free(r);
    free(sin);
    errno = ENOMEM;
    return EAI_MEMORY;
  }
  r->ai_flags = hints != nullptr ? hints->ai_flags : 0;
  r->ai_family = AF_INET;
  r->ai_qp_type = IBV_QPT_RC;
  r->ai_port_space = hints != nullptr && hints->ai_port_space != 0 ? hints->ai_port_space : RDMA_PS_TCP;
  sin->sin_family = AF_INET;
  sin->sin_addr = a;
  sin->sin_port = htons(port);
  if (passive) {
    r->ai_src_addr = reinterpret_cast<sockaddr*>(sin);
    r->ai_src_len = sizeof *sin;
  } else {
    r->ai_dst_addr = reinterpret_cast<sockaddr*>(sin);
    r->ai_dst_len = sizeof *sin;
    if (hints != nullptr && is_v4(hints->ai_src_addr)) {
      auto* src = static_cast<sockaddr_in*>(calloc(1, sizeof(sockaddr_in)));
      if (src != nullptr) {
        *src = *v4(hints->ai_src_addr);
        r->ai_src_addr = reinterpret_cast<sockaddr*>(src);
        r->ai_src_len = sizeof *src;
      }
    }
  }
  *res = r;
  return 0;
}

SF_EXPORT void rdma_freeaddrinfo(rdma_addrinfo* res) {
  while (res != nullptr) {
    rdma_addrinfo* next = res->ai_next;
    free(res->ai_src_addr);
    free(res->ai_dst_addr);
    free(res->ai_src_canonname);
    free(res->ai_dst_canonname);
    free(res->ai_route);
    free(res->ai_connect);
    free(res);
    res = next;
  }
}
