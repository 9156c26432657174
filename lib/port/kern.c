/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Ports on an interface the kernel owns (af_xdp, af_packet, a bifurcated
 * PCI NIC): the model RoCE NICs use. The kernel keeps its address, ARP and
 * every frame that is not RoCEv2 to dpdat's address; dpdat takes the
 * interface's address by default, reads peer MACs from the kernel's
 * neighbour table (rtnetlink) and asks the kernel to resolve a missing one
 * (an NTF_USE request: the kernel sends its own ARP probe). dpdat sends no
 * ARP of its own on such ports.
 *
 * af_xdp: dpdat's XDP program (xdp/dpdat_xdp.bpf.c) takes only UDP 4791 to
 * dpdat's address; this file writes that address into the program's map.
 * af_packet: the kernel sees a copy of every frame; a UDP socket bound to
 * dpdat's address and port 4791, with a filter that drops everything, keeps
 * it from answering RoCEv2 with ICMP port unreachable.
 *
 * The set-up runs in dpdat_port_create(); port_kern_resolve() on the thread
 * that owns the port, as port_resolve(). */

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <dirent.h>

#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include <dpdat/dpdat_env.h>

#include "port_priv.h"
#include "roce.h"

/* A kernel neighbour is asked for again at most this often while it is
 * being resolved, the kernel told to resolve it every KERN_USE_EVERY
 * asks, and given up after KERN_TRIES asks (about the kernel's own
 * 3 probes a second). */
#define KERN_ASK_MS	20
#define KERN_USE_EVERY	25
#define KERN_TRIES	160
/* entries whose link-layer address can be used (the kernel's NUD_VALID) */
#define KERN_NUD_VALID	(NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | \
			 NUD_PROBE | NUD_STALE | NUD_DELAY)

int
port_kern_pci_ifname(const char *pci, char *ifname)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/net", pci);
	dir = opendir(path);
	if (dir == NULL)
		return -ENOENT;
	while ((d = readdir(dir)) != NULL)
		if (d->d_name[0] != '.' && strlen(d->d_name) < IF_NAMESIZE) {
			snprintf(ifname, IF_NAMESIZE, "%s", d->d_name);
			ret = 0;
			break;
		}
	closedir(dir);
	return ret;
}

/* af_xdp and af_packet: the interface iface= names. */
static int
kern_iface_devarg(const char *device, const char *bus, char *ifname)
{
	RTE_SET_USED(bus);
	return port_devarg(device, "iface", ifname, IF_NAMESIZE) &&
	       ifname[0] != '\0' ? 0 : -EINVAL;
}

/* The IPv4 addresses of ifname: how many, the first in *first (when not
 * NULL), whether want is one of them. -errno when they cannot be read. */
static int
kern_ipv4_walk(const char *ifname, uint32_t *first, uint32_t want,
	       bool *found)
{
	struct ifaddrs *ifa, *a;
	uint32_t ip;
	int n = 0;

	if (getifaddrs(&ifa) != 0)
		return -errno;
	*found = false;
	for (a = ifa; a != NULL; a = a->ifa_next) {
		if (a->ifa_addr == NULL || a->ifa_addr->sa_family != AF_INET ||
		    strcmp(a->ifa_name, ifname) != 0)
			continue;
		ip = ((struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr;
		if (n++ == 0 && first != NULL)
			*first = ip;
		*found = *found || ip == want;
	}
	freeifaddrs(ifa);
	return n;
}

int
port_kern_ipv4(const char *ifname, uint32_t *ip)
{
	bool found;
	int n = kern_ipv4_walk(ifname, ip, 0, &found);

	if (n > 1)
		PORT_LOG(NOTICE, "%s has %d IPv4 addresses: dpdat takes the "
			 "first (ipv4= names another)", ifname, n);
	return n > 0 ? 0 : n < 0 ? n : -EADDRNOTAVAIL;
}

/* Is ip one of ifname's addresses? (true when that cannot be told) */
static bool
kern_has_ipv4(const char *ifname, uint32_t ip)
{
	bool found;

	return kern_ipv4_walk(ifname, NULL, ip, &found) < 0 || found;
}

int
port_kern_mtu(const char *ifname, uint16_t *mtu)
{
	struct ifreq ifr;
	int fd, ret = 0;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFMTU, &ifr) != 0)
		ret = -errno;
	else
		*mtu = (uint16_t)RTE_MIN(ifr.ifr_mtu, UINT16_MAX);
	close(fd);
	return ret;
}

/* ---- rtnetlink ---------------------------------------------------------- */

static int
kern_nl_open(struct dpdat_port *p)
{
	struct timeval tv = { .tv_usec = 200 * 1000 };
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);

	if (nl == NULL)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		mnl_socket_close(nl);
		return -errno;
	}
	/* the kernel answers at once; bound anyway */
	setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv,
		   sizeof(tv));
	p->nl = nl;
	return 0;
}

struct kern_neigh_ans {
	uint32_t ip;
	int ifindex;
	uint16_t state;
	bool has_mac;
	struct rte_ether_addr mac;
};

static int
kern_neigh_attr(const struct nlattr *a, void *arg)
{
	struct kern_neigh_ans *ans = arg;

	if (mnl_attr_get_type(a) == NDA_LLADDR &&
	    mnl_attr_get_payload_len(a) == RTE_ETHER_ADDR_LEN) {
		memcpy(&ans->mac, mnl_attr_get_payload(a), RTE_ETHER_ADDR_LEN);
		ans->has_mac = true;
	} else if (mnl_attr_get_type(a) == NDA_DST &&
		   mnl_attr_get_payload_len(a) == 4) {
		memcpy(&ans->ip, mnl_attr_get_payload(a), 4);
	}
	return MNL_CB_OK;
}

static int
kern_neigh_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	struct kern_neigh_ans *ans = arg, got = { 0 };

	if (nlh->nlmsg_type != RTM_NEWNEIGH ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*nd) ||
	    nd->ndm_family != AF_INET || nd->ndm_ifindex != ans->ifindex)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*nd), kern_neigh_attr, &got);
	if (got.ip != ans->ip)
		return MNL_CB_OK;
	ans->state = nd->ndm_state;
	ans->has_mac = got.has_mac;
	ans->mac = got.mac;
	return MNL_CB_OK;
}

/* One request and its one answer (no dumps: a get answers with one
 * message, a request with NLM_F_ACK with one error message). */
static int
kern_nl_talk(struct dpdat_port *p, struct nlmsghdr *nlh, mnl_cb_t cb,
	     void *arg)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int portid = mnl_socket_get_portid(p->nl);
	uint32_t seq = ++p->nl_seq;
	ssize_t n;

	nlh->nlmsg_seq = seq;
	if (mnl_socket_sendto(p->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {	/* an answer to an older request that timed out: skip it */
		n = mnl_socket_recvfrom(p->nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
	} while (n >= (ssize_t)sizeof(*nlh) &&
		 ((struct nlmsghdr *)buf)->nlmsg_seq != seq);
	return mnl_cb_run(buf, (size_t)n, seq, portid, cb, arg) < 0 ?
		-errno : 0;
}

/* What RTM_GETLINK tells of an interface: its lower device (IFLA_LINK,
 * and the namespace it is in when not ours), whether it is a macvlan and
 * in bridge mode. */
struct kern_link {
	bool has_link, has_nsid, macvlan, bridge_mode;
	uint32_t link;
	int32_t nsid;
};

static int
kern_macvlan_attr(const struct nlattr *a, void *arg)
{
	struct kern_link *l = arg;

	if (mnl_attr_get_type(a) == IFLA_MACVLAN_MODE &&
	    mnl_attr_get_payload_len(a) == 4)
		l->bridge_mode = mnl_attr_get_u32(a) == MACVLAN_MODE_BRIDGE;
	return MNL_CB_OK;
}

static int
kern_linkinfo_attr(const struct nlattr *a, void *arg)
{
	struct kern_link *l = arg;

	/* the kind comes before its data */
	if (mnl_attr_get_type(a) == IFLA_INFO_KIND &&
	    mnl_attr_validate(a, MNL_TYPE_STRING) == 0)
		l->macvlan = strcmp(mnl_attr_get_str(a), "macvlan") == 0;
	else if (mnl_attr_get_type(a) == IFLA_INFO_DATA && l->macvlan)
		mnl_attr_parse_nested(a, kern_macvlan_attr, l);
	return MNL_CB_OK;
}

static int
kern_link_attr(const struct nlattr *a, void *arg)
{
	struct kern_link *l = arg;

	switch (mnl_attr_get_type(a)) {
	case IFLA_LINK:
		if (mnl_attr_get_payload_len(a) == 4) {
			l->link = mnl_attr_get_u32(a);
			l->has_link = true;
		}
		break;
	case IFLA_LINK_NETNSID:
		if (mnl_attr_get_payload_len(a) == 4) {
			l->nsid = (int32_t)mnl_attr_get_u32(a);
			l->has_nsid = true;
		}
		break;
	case IFLA_LINKINFO:
		mnl_attr_parse_nested(a, kern_linkinfo_attr, l);
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

static int
kern_link_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct kern_link *l = arg;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(struct ifinfomsg))
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(struct ifinfomsg), kern_link_attr, l);
	return MNL_CB_OK;
}

static int
kern_link_get(struct dpdat_port *p, int ifindex, struct kern_link *l)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	memset(l, 0, sizeof(*l));
	return kern_nl_talk(p, nlh, kern_link_cb, l);
}

/* Are interfaces a and b macvlan shares in bridge mode of one lower
 * device? 1 or 0, or a negative errno when rtnetlink cannot tell. */
static int
kern_siblings(struct dpdat_port *p, int a, int b)
{
	struct kern_link la, lb;
	int ret;

	if (a <= 0 || b <= 0 || p->nl == NULL)
		return -ENODEV;
	ret = kern_link_get(p, a, &la);
	if (ret == 0)
		ret = kern_link_get(p, b, &lb);
	if (ret != 0)
		return ret;
	return la.macvlan && la.bridge_mode && lb.macvlan && lb.bridge_mode &&
	       la.has_link && lb.has_link && la.link == lb.link &&
	       la.has_nsid == lb.has_nsid && (!la.has_nsid || la.nsid == lb.nsid);
}

/* The MAC of another interface of this network namespace that has ip:
 * another application's share of the same NIC (doc/guides/many-apps.md).
 * The kernel resolves no neighbour for its own addresses, and a macvlan in
 * bridge mode delivers a frame for a sibling's MAC to it at once. Only a
 * sibling: the shares' parent is not reached so (macvlan sends a frame for
 * the parent's MAC out of the NIC), nor any other interface (a frame for
 * its MAC leaves by ours). 0, or -ENOENT when no sibling share that is up
 * has ip. Runs once a neighbour, not per packet. */
static int
kern_local_mac(struct dpdat_port *p, uint32_t ip, struct rte_ether_addr *mac)
{
	const char *ifname = p->ifname;
	char owner[IF_NAMESIZE] = "";
	struct rte_ether_addr found;
	struct ifaddrs *ifa, *a;
	int ret = -ENOENT, sib;

	if (getifaddrs(&ifa) != 0)
		return -ENOENT;
	/* an interface that is up, not loopback; an address label
	 * ("mv1:0") names its interface before the colon */
	for (a = ifa; a != NULL && owner[0] == '\0'; a = a->ifa_next)
		if (a->ifa_addr != NULL && a->ifa_addr->sa_family == AF_INET &&
		    ((struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr == ip &&
		    (a->ifa_flags & IFF_UP) && !(a->ifa_flags & IFF_LOOPBACK)) {
			snprintf(owner, sizeof(owner), "%.*s",
				 (int)strcspn(a->ifa_name, ":"), a->ifa_name);
			if (strcmp(owner, ifname) == 0)
				owner[0] = '\0';
		}
	for (a = ifa; a != NULL && owner[0] != '\0'; a = a->ifa_next) {
		const struct sockaddr_ll *ll =
			(const struct sockaddr_ll *)a->ifa_addr;

		if (a->ifa_addr == NULL || a->ifa_addr->sa_family != AF_PACKET ||
		    strcmp(a->ifa_name, owner) != 0 ||
		    ll->sll_halen != RTE_ETHER_ADDR_LEN)
			continue;
		memcpy(found.addr_bytes, ll->sll_addr, RTE_ETHER_ADDR_LEN);
		ret = rte_is_valid_assigned_ether_addr(&found) ? 0 : -ENOENT;
		break;
	}
	freeifaddrs(ifa);
	if (ret != 0)
		return ret;
	sib = kern_siblings(p, p->ifindex, (int)if_nametoindex(owner));
	if (sib < 0)
		PORT_LOG(NOTICE, "%s: %s has the address asked for, but whether "
			 "it shares %s's NIC cannot be told (%s): resolved by "
			 "ARP", p->name, owner, ifname, strerror(-sib));
	else if (sib == 0)
		PORT_LOG(INFO, "%s: %s has the address asked for, but is no "
			 "macvlan share of %s's NIC: resolved by ARP", p->name,
			 owner, ifname);
	if (sib != 1)
		return -ENOENT;
	*mac = found;
	return 0;
}

/* The kernel's entry for ip on our interface: its NUD state (0 if none). */
static int
kern_neigh_get(struct dpdat_port *p, uint32_t ip, struct kern_neigh_ans *ans)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *nd;
	int ret;

	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = AF_INET;
	nd->ndm_ifindex = p->ifindex;
	mnl_attr_put(nlh, NDA_DST, 4, &ip);
	memset(ans, 0, sizeof(*ans));
	ans->ip = ip;
	ans->ifindex = p->ifindex;
	ret = kern_nl_talk(p, nlh, kern_neigh_cb, ans);
	return ret == -ENOENT ? 0 : ret;	/* no entry: state 0 */
}

/* Ask the kernel to resolve ip (it sends its own ARP request). */
static int
kern_neigh_use(struct dpdat_port *p, uint32_t ip)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *nd;

	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE |
			   NLM_F_ACK;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = AF_INET;
	nd->ndm_ifindex = p->ifindex;
	nd->ndm_state = NUD_NONE;
	nd->ndm_flags = NTF_USE;
	mnl_attr_put(nlh, NDA_DST, 4, &ip);
	return kern_nl_talk(p, nlh, NULL, NULL);
}

int
port_kern_resolve(struct dpdat_port *p, uint32_t ip, struct rte_ether_addr *mac)
{
	const uint64_t now = rte_get_tsc_cycles();
	struct port_neigh *e = port_neigh_find(p, ip, true);
	struct kern_neigh_ans ans;
	char a[INET_ADDRSTRLEN];
	int ret;

	if (e->state == NEIGH_REACHABLE) {
		*mac = e->mac;
		return 0;
	}
	if (e->state == NEIGH_FAILED)
		return -EHOSTUNREACH;
	if (e->tries != 0 && now - e->tsc < p->tsc_hz * KERN_ASK_MS / 1000)
		return -EAGAIN;
	e->tsc = now;
	ret = kern_neigh_get(p, ip, &ans);
	if (ret == 0 && (ans.state & KERN_NUD_VALID) && ans.has_mac &&
	    rte_is_unicast_ether_addr(&ans.mac)) {
		e->mac = ans.mac;
		e->state = NEIGH_REACHABLE;
		e->tries = 0;
		*mac = e->mac;
		return 0;
	}
	if (e->tries == 0 && kern_local_mac(p, ip, &e->mac) == 0) {
		inet_ntop(AF_INET, &ip, a, sizeof(a));
		PORT_LOG(INFO, "%s: %s is on this host (another interface's): "
			 "its MAC, no ARP", p->name, a);
		e->state = NEIGH_REACHABLE;
		*mac = e->mac;
		return 0;
	}
	if (e->tries >= KERN_TRIES) {
		inet_ntop(AF_INET, &ip, a, sizeof(a));
		PORT_LOG(NOTICE, "%s: the kernel could not resolve %s on %s",
			 p->name, a, p->ifname);
		e->state = NEIGH_FAILED;
		e->tries = 0;
		return -EHOSTUNREACH;
	}
	if (e->tries % KERN_USE_EVERY == 0) {
		int r = kern_neigh_use(p, ip);

		if (r == 0)
			p->st.tx_arp++;	/* the kernel's request, for us */
		else if (e->tries == 0)
			PORT_LOG(WARNING, "%s: cannot ask the kernel to resolve "
				 "a neighbour (%s; CAP_NET_ADMIN needed): only "
				 "entries it already has are found", p->name,
				 strerror(-r));
	}
	e->tries++;
	return ret < 0 && ret != -EAGAIN && ret != -ETIMEDOUT ? ret : -EAGAIN;
}

/* ---- af_xdp: dpdat's XDP program -------------------------------------- */

static const char *
kern_xdp_prog(void)
{
	/* where it is installed first: an installed library run as root
	 * must not load an object from a build tree someone else may write */
	static const char *const where[] = {
#ifdef DPDAT_XDP_OBJ_INSTALL
		DPDAT_XDP_OBJ_INSTALL,
#endif
#ifdef DPDAT_XDP_OBJ_BUILD
		DPDAT_XDP_OBJ_BUILD,
#endif
	};
	const char *env = dpdat_env_str("DPDAT_XDP_PROG");

	if (env != NULL && *env != '\0')
		return access(env, R_OK) == 0 ? env : NULL;
	for (unsigned int i = 0; i < RTE_DIM(where); i++)
		if (access(where[i], R_OK) == 0)
			return where[i];
	return NULL;
}

/* The id of the XDP program on the interface and its attach mode. */
static uint32_t
kern_xdp_prog_id(int ifindex, const char **mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	*mode = "none";
	if (bpf_xdp_query(ifindex, 0, &q) != 0)
		return 0;
	switch (q.attach_mode) {
	case XDP_ATTACHED_DRV:
		*mode = "native";
		return q.drv_prog_id;
	case XDP_ATTACHED_SKB:
		*mode = "generic";
		return q.skb_prog_id;
	case XDP_ATTACHED_HW:
		*mode = "offloaded";
		return q.hw_prog_id;
	case XDP_ATTACHED_MULTI:
		*mode = "several";
		return q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
	}
	return 0;
}

/* The name of the program prog_id, and a map of it called map_name. */
static int
kern_xdp_map(uint32_t prog_id, const char *map_name, char *prog_name)
{
	struct bpf_prog_info pi;
	struct bpf_map_info mi;
	uint32_t ids[16], len;
	int pfd, mfd = -ENOENT;

	pfd = bpf_prog_get_fd_by_id(prog_id);
	if (pfd < 0)
		return -errno;
	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = RTE_DIM(ids);
	pi.map_ids = (uintptr_t)ids;
	len = sizeof(pi);
	if (bpf_obj_get_info_by_fd(pfd, &pi, &len) != 0) {
		close(pfd);
		return -errno;
	}
	close(pfd);
	snprintf(prog_name, BPF_OBJ_NAME_LEN, "%s", pi.name);
	for (uint32_t i = 0; i < RTE_MIN(pi.nr_map_ids, (uint32_t)RTE_DIM(ids));
	     i++) {
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		len = sizeof(mi);
		if (bpf_obj_get_info_by_fd(fd, &mi, &len) == 0 &&
		    strcmp(mi.name, map_name) == 0) {
			mfd = fd;
			break;
		}
		close(fd);
	}
	return mfd;
}

static int
kern_xdp_lock(const char *ifname)
{
	char path[128];
	struct stat ns;
	int fd;

	/* one lock an interface of a network namespace (ifindexes repeat
	 * across namespaces), held for the port's life */
	if (stat("/proc/self/ns/net", &ns) != 0)
		ns.st_ino = 0;
	snprintf(path, sizeof(path), "/tmp/dpdat-xdp-%lu-%u.lock",
		 (unsigned long)ns.st_ino, if_nametoindex(ifname));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		PORT_LOG(ERR, "%s: another dpdat process has an af_xdp port "
			 "on it", ifname);
		return -EBUSY;
	}
	return fd;
}

static void
kern_xdp_stale(const char *ifname)
{
	char name[BPF_OBJ_NAME_LEN] = "";
	int ifindex = (int)if_nametoindex(ifname);
	const char *mode;
	uint32_t id;
	int fd;

	if (ifindex == 0 || (id = kern_xdp_prog_id(ifindex, &mode)) == 0)
		return;
	fd = kern_xdp_map(id, "dpdat_addr", name);
	if (fd >= 0)
		close(fd);
	if (strcmp(name, "dpdat_xdp") != 0)
		return;	/* somebody else's: the PMD will say it is busy */
	/* we hold the interface's lock (kern_xdp_lock), so the dpdat
	 * process that put it there is gone: the PMD refuses to attach over
	 * it */
	if (bpf_xdp_detach(ifindex, 0, NULL) == 0)
		PORT_LOG(NOTICE, "%s: removed the XDP program a dpdat process "
			 "left on it", ifname);
}

/* Tell dpdat's XDP program our address; say how it runs. */
static int
kern_xdp_config(struct dpdat_port *p)
{
	char name[BPF_OBJ_NAME_LEN] = "";
	uint32_t key = 0, id;
	const char *mode;
	int fd, ret;

	id = kern_xdp_prog_id(p->ifindex, &mode);
	if (id == 0) {
		PORT_LOG(ERR, "%s: no XDP program on %s", p->name, p->ifname);
		return -ENOENT;
	}
	fd = kern_xdp_map(id, "dpdat_addr", name);
	if (fd < 0) {
		/* the user's own program (xdp_prog=): it decides */
		PORT_LOG(NOTICE, "%s: XDP program '%s' on %s (%s mode) is not "
			 "dpdat's: it decides what reaches dpdat", p->name,
			 name, p->ifname, mode);
		return 0;
	}
	ret = bpf_map_update_elem(fd, &key, &p->ip, BPF_ANY) ? -errno : 0;
	close(fd);
	if (ret < 0) {
		PORT_LOG(ERR, "%s: cannot configure the XDP program: %s",
			 p->name, strerror(-ret));
		return ret;
	}
	PORT_LOG(NOTICE, "%s: XDP program on %s in %s mode: UDP 4791 to our "
		 "address comes to dpdat, the kernel keeps the rest", p->name,
		 p->ifname, mode);
	return 0;
}

/* ---- af_packet: the PMD's fanout group -------------------------------- */

static int
kern_packet_fanout(const char *ifname)
{
	struct sockaddr_ll sa = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = (int)if_nametoindex(ifname),
	};
	/* DPDK 22.11's af_packet PMD puts its sockets in fanout group
	 * (pid ^ ifindex) & 0xffff, with these flags. A group is one
	 * interface's, and group ids are shared by the network namespace:
	 * another process's af_packet port on another interface whose pid
	 * and ifindex give the same id makes the PMD's probe fail (EINVAL).
	 * Joining the group ourselves first tells which it is: when that
	 * fails but another id works, ours is taken (a socket that can join
	 * no group, on an interface that is down, is the PMD's to report). */
	const uint32_t flags = (uint32_t)(PACKET_FANOUT_HASH |
		PACKET_FANOUT_FLAG_DEFRAG | PACKET_FANOUT_FLAG_ROLLOVER) << 16;
	uint32_t arg = ((uint32_t)(getpid() ^ sa.sll_ifindex) & 0xffff) | flags;
	uint32_t other = ((arg ^ 0x5a5a) & 0xffff) | flags;
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	int ret = 0;

	if (fd < 0 || sa.sll_ifindex == 0)
		goto out;	/* the PMD will say what is wrong */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)) != 0 &&
	    errno == EINVAL &&
	    setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &other,
		       sizeof(other)) == 0) {
		PORT_LOG(ERR, "%s: another process's af_packet port in this "
			 "network namespace has the fanout group id that "
			 "DPDK's af_packet driver gives this process "
			 "(0x%04x: process id ^ interface index); start "
			 "this program again (another process id), give the "
			 "interfaces indexes 4096 apart, or use af_xdp",
			 ifname, (unsigned int)(arg & 0xffff));
		ret = -EADDRINUSE;
	}
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

/* ---- af_packet: no ICMP port unreachable ------------------------------- */

static int
kern_udp_guard(struct dpdat_port *p)
{
	struct sock_filter drop = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog prog = { .len = 1, .filter = &drop };
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(ROCE_UDP_PORT),
		.sin_addr.s_addr = p->ip,
	};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
		       sizeof(prog)) != 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int err = errno;

		close(fd);
		PORT_LOG(WARNING, "%s: cannot hold UDP 4791 on %s (%s): the "
			 "kernel may answer RoCEv2 with ICMP port unreachable",
			 p->name, p->ifname, strerror(err));
		return -err;
	}
	p->guard_fd = fd;
	PORT_LOG(INFO, "%s: UDP 4791 held by a socket that drops all: the "
		 "kernel's copies of RoCEv2 frames end there", p->name);
	return 0;
}

/* ---- set-up and teardown ------------------------------------------------ */

int
port_kern_start(struct dpdat_port *p)
{
	int ret = kern_nl_open(p);

	if (ret < 0) {
		PORT_LOG(ERR, "%s: rtnetlink: %s", p->name, strerror(-ret));
		return ret;
	}
	if (!kern_has_ipv4(p->ifname, p->ip))
		PORT_LOG(WARNING, "%s: our address is not one of %s's: the "
			 "kernel will not answer ARP for it, so peers cannot "
			 "reach us (ip addr add it, or use ipv4=auto)",
			 p->name, p->ifname);
	return p->drv->kern_start != NULL ? p->drv->kern_start(p) : 0;
}

void
port_kern_stop(struct dpdat_port *p)
{
	if (p->nl != NULL)
		mnl_socket_close(p->nl);
	p->nl = NULL;
	if (p->guard_fd >= 0)
		close(p->guard_fd);
	p->guard_fd = -1;
}

/* ---- the two kernel socket drivers' entries (drv.c) -------------------- */

/* Whether the interface iface= names is in this network namespace (0), or
 * the error said. 1: no iface= (the driver refuses the arguments). */
static int
kern_iface_check(const char *device, char *iface)
{
	if (port_devarg(device, "iface", iface, IF_NAMESIZE) == NULL)
		return 1;
	if (if_nametoindex(iface) != 0)
		return 0;
	PORT_LOG(ERR, "%.*s: no interface %s in this network namespace (ip "
		 "link shows them)", (int)strcspn(device, ","), device, iface);
	return -ENODEV;
}

/* dpdat's XDP program unless the user names one (the PMD's default
 * program takes every frame of the queue, ARP included, from the kernel);
 * no preferred busy polling: the PMD then makes a recvfrom() of every
 * empty receive burst, a system call each turn of a spinning engine
 * (measured in doc/guides/performance.md). */
static int
xdp_devargs(const char *device, uint16_t mtu, char *out, size_t len)
{
	const char *prog = NULL;

	RTE_SET_USED(mtu);
	if (strstr(device, "xdp_prog=") == NULL) {
		prog = kern_xdp_prog();
		if (prog == NULL) {
			PORT_LOG(ERR, "%s: dpdat's XDP program (dpdat_xdp.o) "
				 "not found: build dpdat, set DPDAT_XDP_PROG, or "
				 "name one with xdp_prog=", device);
			return -ENOENT;
		}
	}
	return snprintf(out, len, "%s%s%s%s", device,
			prog ? ",xdp_prog=" : "", prog ? prog : "",
			strstr(device, "busy_budget=") ? "" : ",busy_budget=0");
}

/* One dpdat port an interface (its lock), and no program a dead one left. */
static int
xdp_pre_probe(struct dpdat_port *p, const char *device)
{
	char iface[IF_NAMESIZE];
	int ret = kern_iface_check(device, iface);

	if (ret != 0)
		return ret < 0 ? ret : 0;
	p->xdp_lock = kern_xdp_lock(iface);
	if (p->xdp_lock < 0)
		return p->xdp_lock == -EBUSY ? -EBUSY : -ENODEV;
	kern_xdp_stale(iface);
	return 0;
}

static int
packet_pre_probe(struct dpdat_port *p, const char *device)
{
	char iface[IF_NAMESIZE];
	int ret = kern_iface_check(device, iface);

	RTE_SET_USED(p);
	if (ret != 0)
		return ret < 0 ? ret : 0;
	return kern_packet_fanout(iface);
}

/* A port that took the fanout id between the look and the probe. */
static int
packet_probe_failed(const char *device, int ret)
{
	char iface[IF_NAMESIZE];

	RTE_SET_USED(ret);
	if (port_devarg(device, "iface", iface, sizeof(iface)) != NULL &&
	    kern_packet_fanout(iface) == -EADDRINUSE)
		return -EADDRINUSE;
	return 0;
}

static int
packet_kern_start(struct dpdat_port *p)
{
	kern_udp_guard(p);	/* a warning at worst */
	return 0;
}

/* af_xdp's umem is the pool itself: one object a 4 KiB page. The mempool
 * header, the mbuf and this data room make 4032 bytes, 63 cache lines (the
 * mempool pads an even count); frames land after the kernel's
 * XDP_PACKET_HEADROOM (256). */
#define XDP_DATA_ROOM	3840
#define XDP_HEADROOM	256

const struct port_drv port_drv_af_xdp = {
	.name = "net_af_xdp",
	.data_room = XDP_DATA_ROOM,
	.frame_max = XDP_DATA_ROOM - RTE_PKTMBUF_HEADROOM - XDP_HEADROOM,
	/* DPDK 22.11 takes transmit completions back only once half of its
	 * 2048-entry completion ring has filled (af_xdp_tx_zc) */
	.tx_held = 1024,
	.devargs = xdp_devargs,
	.pre_probe = xdp_pre_probe,
	.ifname = kern_iface_devarg,
	.kern_start = kern_xdp_config,
	.fail_hint = "af_xdp needs root (or CAP_NET_ADMIN and CAP_BPF), and "
		     "an MTU XDP accepts (veth: 3506 at most)",
};

const struct port_drv port_drv_af_packet = {
	.name = "net_af_packet",
	.pre_probe = packet_pre_probe,
	.probe_failed = packet_probe_failed,
	.ifname = kern_iface_devarg,
	.kern_start = packet_kern_start,
};
