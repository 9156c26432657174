/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/* Export side: segments over the caller's memory, publication with an
 * access-control list, and the service that answers importers' requests.
 *
 * The segment's memory is one LMR with local rights only; importers get the
 * rkey of an RMR bound with exactly the rights granted (read, write or
 * both), so the RC engine refuses any other access on every transfer. */

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_random.h>

#include "rsm_priv.h"

struct rsm_export *
rsm_export_find(struct rsm_ctlr *c, const void *h)
{
	struct rsm_export *e;

	if (h == NULL || !c->opened)
		return NULL;
	TAILQ_FOREACH(e, &c->exports, next)
		if ((const void *)e == h)
			return e;
	return NULL;
}

/* Look the handle up with the controller locked; NULL: err is set. */
static struct rsm_export *
export_get(rsm_memseg_export_handle_t memseg, int *err)
{
	struct rsm_export *e;

	pthread_mutex_lock(&rsm_ctlr0.lock);
	e = rsm_export_find(&rsm_ctlr0, memseg);
	if (e == NULL) {
		pthread_mutex_unlock(&rsm_ctlr0.lock);
		*err = RSMERR_BAD_SEG_HNDL;
		return NULL;
	}
	if (e->creator != getpid()) {
		pthread_mutex_unlock(&rsm_ctlr0.lock);
		*err = RSMERR_NOT_CREATOR;
		return NULL;
	}
	*err = 0;
	return e;
}

static int
errno_to_rsm(int e)
{
	switch (e) {
	case ENOMEM:
		return RSMERR_INSUFFICIENT_MEM;
	case EACCES:
	case EFAULT:
		return RSMERR_PERM_DENIED;
	case EINVAL:
		return RSMERR_BAD_ADDR;
	default:
		return RSMERR_INSUFFICIENT_RESOURCES;
	}
}

static const uint32_t need_priv[8] = {
	[2] = DPDAT_MEM_PRIV_REMOTE_WRITE,
	[4] = DPDAT_MEM_PRIV_REMOTE_READ,
	[6] = DPDAT_MEM_PRIV_REMOTE_READ | DPDAT_MEM_PRIV_REMOTE_WRITE,
};

/* Bind the three RMRs (read, write, both) over the segment's LMR. */
static int
export_bind(struct rsm_export *e)
{
	struct dpdat_lmr_info li;
	struct dpdat_lmr_triplet t;

	dpdat_lmr_query(e->lmr, &li);
	t.lmr_context = li.lmr_context;
	t.pad = 0;
	t.virtual_address = (uint64_t)(uintptr_t)e->vaddr;
	t.segment_length = e->size;
	for (int n = 2; n <= 6; n += 2) {
		int r = dpdat_rmr_bind(e->rmr[n], &t, need_priv[n],
				       &e->rkey[n]);

		if (r != 0)
			return errno_to_rsm(-r);
	}
	return 0;
}

static struct dpdat_lmr *
export_lmr(struct rsm_ctlr *c, void *vaddr, size_t size)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };

	d.virt.addr = vaddr;
	d.virt.length = size;
	return dpdat_lmr_create(c->pz, &d, DPDAT_MEM_PRIV_LOCAL_READ |
				DPDAT_MEM_PRIV_LOCAL_WRITE);
}

static void
export_free(struct rsm_export *e)
{
	for (int n = 2; n <= 6; n += 2)
		if (e->rmr[n] != NULL)
			dpdat_rmr_free(e->rmr[n]);
	if (e->lmr != NULL)
		dpdat_lmr_free(e->lmr);
	if (e->slot_lmr != NULL)
		dpdat_lmr_free(e->slot_lmr);
	if (e->cq != NULL)
		dpdat_cq_free(e->cq);
	free(e->slots);
	free(e->acl);
	free(e);
}

static int
export_resources(struct rsm_ctlr *c, struct rsm_export *e)
{
	struct dpdat_mem_desc d = { .type = DPDAT_MEM_TYPE_VIRTUAL };

	e->lmr = export_lmr(c, e->vaddr, e->size);
	if (e->lmr == NULL)
		return errno_to_rsm(rte_errno);
	for (int n = 2; n <= 6; n += 2) {
		e->rmr[n] = dpdat_rmr_create(c->pz);
		if (e->rmr[n] == NULL)
			return errno_to_rsm(rte_errno);
	}
	if (posix_memalign((void **)&e->slots, 4096,
			   RSM_SLOTS * RSM_SLOT_SIZE) != 0)
		return RSMERR_INSUFFICIENT_MEM;
	d.virt.addr = e->slots;
	d.virt.length = RSM_SLOTS * RSM_SLOT_SIZE;
	e->slot_lmr = dpdat_lmr_create(c->pz, &d, DPDAT_MEM_PRIV_LOCAL_READ |
				       DPDAT_MEM_PRIV_LOCAL_WRITE);
	e->cq = dpdat_cq_create(c->dev, 1024);
	if (e->slot_lmr == NULL || e->cq == NULL)
		return errno_to_rsm(rte_errno);
	return export_bind(e);
}

int
rsm_memseg_export_create(rsmapi_controller_handle_t controller,
			 rsm_memseg_export_handle_t *memseg, void *vaddr,
			 size_t size, uint_t flags)
{
	struct rsm_export *e;
	struct rsm_ctlr *c;
	mode_t um;
	int r;

	pthread_mutex_lock(&rsm_ctlr0.lock);
	c = rsm_ctlr_check(controller, &r);
	if (c == NULL)
		goto out;
	r = RSMERR_BAD_SEG_HNDL;
	if (memseg == NULL)
		goto out;
	r = RSMERR_BAD_LENGTH;
	if (size == 0 || size > c->max_seg || size % c->page != 0)
		goto out;
	r = RSMERR_BAD_ADDR;
	if (vaddr == NULL || (uintptr_t)vaddr + size < (uintptr_t)vaddr ||
	    (flags & ~(uint_t)(RSM_ALLOW_REBIND | RSM_CREATE_SEG_DONTWAIT)))
		goto out;
	r = RSMERR_BAD_MEM_ALIGNMENT;
	if ((uintptr_t)vaddr % c->page != 0)
		goto out;
	r = rsm_probe(vaddr, size);
	if (r != 0)
		goto out;
	r = RSMERR_INSUFFICIENT_MEM;
	if (c->exported + size > c->tot_export)
		goto out;
	r = RSMERR_INSUFFICIENT_RESOURCES;
	if (c->n_segs >= c->max_segs)
		goto out;
	e = calloc(1, sizeof(*e));
	r = RSMERR_INSUFFICIENT_MEM;
	if (e == NULL)
		goto out;
	e->ctlr = c;
	e->creator = getpid();
	e->flags = flags;
	e->vaddr = vaddr;
	e->size = size;
	um = umask(0);
	umask(um);
	e->cmask = 0666 & ~um;
	e->uid = geteuid();
	e->gid = getegid();
	TAILQ_INIT(&e->conns);
	TAILQ_INIT(&e->tickets);
	r = export_resources(c, e);
	if (r != 0) {
		export_free(e);
		goto out;
	}
	TAILQ_INSERT_TAIL(&c->exports, e, next);
	c->exported += size;
	c->n_segs++;
	*memseg = (rsm_memseg_export_handle_t)e;
out:
	pthread_mutex_unlock(&rsm_ctlr0.lock);
	return r;
}

/* Disconnect every importer and forget the tickets: after this no import
 * of the segment can resume. Called locked; unlocks while it waits. */
static void
export_disconnect_all(struct rsm_export *e)
{
	struct rsm_ctlr *c = e->ctlr;
	struct rsm_ticket *t;
	struct rsm_econn *ec;
	struct rsm_rep bye = { .magic = RSM_WIRE_MAGIC,
			       .status = RSMERR_CONN_ABORTED };

	while ((t = TAILQ_FIRST(&e->tickets)) != NULL) {
		TAILQ_REMOVE(&e->tickets, t, next);
		free(t);
	}
	TAILQ_FOREACH(ec, &e->conns, next)
		dpdat_cm_disconnect(ec->cm, &bye, sizeof(bye));
	/* the service frees each connection on its DISCONNECTED event */
	for (int i = 0; i < 300 && !TAILQ_EMPTY(&e->conns); i++) {
		pthread_mutex_unlock(&c->lock);
		usleep(10000);
		pthread_mutex_lock(&c->lock);
	}
}

static int
acl_check(struct rsm_ctlr *c, const rsmapi_access_entry_t *acl, uint_t n)
{
	if (n > RSM_MAX_NODES || (n > 0 && acl == NULL))
		return RSMERR_BAD_ACL;
	for (uint_t i = 0; i < n; i++) {
		rsm_permission_t p = acl[i].ae_permission;

		/* three octal digits, each 0, 2, 4 or 6 */
		if ((p & ~0777u) != 0 || (p & 0111u) != 0 ||
		    acl[i].ae_node == 0 || rsm_node_ip(c, acl[i].ae_node) == 0)
			return RSMERR_BAD_ACL;
		for (uint_t j = 0; j < i; j++)
			if (acl[j].ae_node == acl[i].ae_node)
				return RSMERR_BAD_ACL;
	}
	return 0;
}

static int
acl_set(struct rsm_export *e, const rsmapi_access_entry_t *acl, uint_t n)
{
	rsmapi_access_entry_t *copy = NULL;

	if (acl != NULL && n > 0) {
		copy = malloc(n * sizeof(*copy));
		if (copy == NULL)
			return RSMERR_INSUFFICIENT_MEM;
		memcpy(copy, acl, n * sizeof(*copy));
	}
	free(e->acl);
	e->acl = copy;
	e->nacl = copy != NULL ? n : 0;
	return 0;
}

static int
segid_in_use(struct rsm_ctlr *c, rsm_memseg_id_t id)
{
	struct rsm_export *e;

	TAILQ_FOREACH(e, &c->exports, next)
		if (e->published && e->id == id)
			return 1;
	return 0;
}

/* The ranges the segment id file reserves, as publish sees them. */
struct segid_res {
	struct { uint64_t base, end; } *r;
	unsigned int n, cap;
};

static int
segid_res_add(const char *appid, uint64_t base, uint64_t end, void *arg)
{
	struct segid_res *s = arg;

	RTE_SET_USED(appid);
	if (s->n == s->cap) {
		unsigned int cap = s->cap != 0 ? 2 * s->cap : 16;
		void *r = realloc(s->r, cap * sizeof(*s->r));

		if (r == NULL)
			return RSMERR_INSUFFICIENT_MEM;
		s->r = r;
		s->cap = cap;
	}
	s->r[s->n].base = base;
	s->r[s->n].end = end;
	s->n++;
	return 0;
}

/* The file is read on every publish that may need it (id 0 or an id of
 * the user-application range) rather than cached: publish is control path,
 * and an edited file counts from the next publish. It is read before the
 * controller lock is taken, so that a slow file system does not hold up
 * the service thread. No file, or a malformed one (logged by the walk),
 * reserves nothing: generation runs over the whole range and no explicit
 * user-application id is authorized. */
static int
segid_res_load(struct segid_res *s)
{
	int r = rsm_segid_walk(segid_res_add, s);

	if (r == -ENOENT || r == RSMERR_BAD_CONF) {
		s->n = 0;
		r = 0;
	}
	return r;
}

/* The index of the range holding id, or -1. */
static int
segid_res_find(const struct segid_res *s, uint64_t id)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (s->r[i].base <= id && id <= s->r[i].end)
			return (int)i;
	return -1;
}

/* Id 0: the next id of the user-application range from c->next_id up, up
 * to and including RSM_USER_APP_ID_END (0xFFFFFFFF) and then around to the
 * base, that is neither in use nor in a reserved range (jumped over whole).
 * RSMERR_INSUFFICIENT_RESOURCES when every id is one or the other. */
static int
segid_generate(struct rsm_ctlr *c, const struct segid_res *res,
	       rsm_memseg_id_t *out)
{
	const uint64_t span = (uint64_t)RSM_USER_APP_ID_END -
			      RSM_USER_APP_ID_BASE + 1;
	uint64_t id = c->next_id, passed = 0;
	int i;

	if (id < RSM_USER_APP_ID_BASE)
		id = RSM_USER_APP_ID_BASE;
	/* passed counts the ids stepped over: all of them once it is span */
	while (passed < span) {
		i = segid_res_find(res, id);
		if (i >= 0) {
			passed += res->r[i].end - id + 1;
			id = res->r[i].end + 1;
		} else if (segid_in_use(c, (rsm_memseg_id_t)id)) {
			passed++;
			id++;
		} else {
			*out = (rsm_memseg_id_t)id;
			c->next_id = id == RSM_USER_APP_ID_END ?
				     RSM_USER_APP_ID_BASE : (uint32_t)id + 1;
			return 0;
		}
		if (id > RSM_USER_APP_ID_END)
			id = RSM_USER_APP_ID_BASE;
	}
	return RSMERR_INSUFFICIENT_RESOURCES;
}

int
rsm_memseg_export_publish(rsm_memseg_export_handle_t memseg,
			  rsm_memseg_id_t *segment_id,
			  rsmapi_access_entry_t access_list[],
			  uint_t access_list_length)
{
	struct segid_res res = { NULL, 0, 0 };
	struct rsm_export *e;
	struct rsm_ctlr *c;
	rsm_memseg_id_t id;
	int r, res_r = 0;

	if (segment_id != NULL && (*segment_id == 0 ||
				   *segment_id >= RSM_USER_APP_ID_BASE))
		res_r = segid_res_load(&res);
	e = export_get(memseg, &r);
	if (e == NULL)
		goto out_free;
	c = e->ctlr;
	r = RSMERR_SEG_ALREADY_PUBLISHED;
	if (e->published)
		goto out;
	r = RSMERR_BAD_ADDR;
	if (segment_id == NULL)
		goto out;
	r = acl_check(c, access_list, access_list_length);
	if (r != 0)
		goto out;
	r = res_r;
	if (r != 0)
		goto out;
	id = *segment_id;
	if (id == 0) {
		r = segid_generate(c, &res, &id);
		if (r != 0)
			goto out;
	} else {
		r = RSMERR_RESERVED_SEGID;
		if (id <= RSM_DLPI_ID_END ||
		    (id >= RSM_OPS_ID_BASE && id <= RSM_OPS_ID_END))
			goto out;
		/* the user-application range is the framework's to give,
		 * but for the ranges the file reserves for applications */
		r = RSMERR_BAD_SEGID;
		if (id >= RSM_USER_APP_ID_BASE && segid_res_find(&res, id) < 0)
			goto out;
	}
	r = RSMERR_SEGID_IN_USE;
	if (segid_in_use(c, id))
		goto out;
	r = acl_set(e, access_list, access_list_length);
	if (r != 0)
		goto out;
	e->id = id;
	e->published = 1;
	*segment_id = id;
out:
	pthread_mutex_unlock(&c->lock);
out_free:
	free(res.r);
	return r;
}

int
rsm_memseg_export_republish(rsm_memseg_export_handle_t memseg,
			    rsmapi_access_entry_t access_list[],
			    uint_t access_list_length)
{
	struct rsm_export *e;
	int r;

	e = export_get(memseg, &r);
	if (e == NULL)
		return r;
	r = RSMERR_SEG_NOT_PUBLISHED;
	if (e->published) {
		r = acl_check(e->ctlr, access_list, access_list_length);
		if (r == 0)	/* existing imports keep their tickets */
			r = acl_set(e, access_list, access_list_length);
	}
	pthread_mutex_unlock(&e->ctlr->lock);
	return r;
}

int
rsm_memseg_export_unpublish(rsm_memseg_export_handle_t memseg)
{
	struct rsm_export *e;
	int r;

	e = export_get(memseg, &r);
	if (e == NULL)
		return r;
	r = RSMERR_SEG_NOT_PUBLISHED;
	if (e->published) {
		e->published = 0;
		export_disconnect_all(e);
		r = 0;
	}
	pthread_mutex_unlock(&e->ctlr->lock);
	return r;
}

int
rsm_memseg_export_destroy(rsm_memseg_export_handle_t memseg)
{
	struct rsm_export *e;
	struct rsm_ctlr *c;
	int r;

	e = export_get(memseg, &r);
	if (e == NULL)
		return r == RSMERR_NOT_CREATOR ? RSMERR_BAD_SEG_HNDL : r;
	c = e->ctlr;
	if (e->pollfd_in_use) {
		pthread_mutex_unlock(&c->lock);
		return RSMERR_POLLFD_IN_USE;
	}
	e->published = 0;
	export_disconnect_all(e);
	TAILQ_REMOVE(&c->exports, e, next);
	c->exported -= e->size;
	c->n_segs--;
	if (!TAILQ_EMPTY(&e->conns)) {
		/* importers that never answered: their QPs still use the CQ,
		 * so it (and the segment's memory) is leaked, not freed */
		RSM_LOG(WARNING, "segment %#x: importers did not disconnect",
			e->id);
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	pthread_mutex_unlock(&c->lock);
	export_free(e);
	return 0;
}

int
rsm_memseg_export_rebind(rsm_memseg_export_handle_t memseg, void *vaddr,
			 offset_t off, size_t size)
{
	struct dpdat_lmr *old;
	struct rsm_export *e;
	void *old_va;
	int r;

	e = export_get(memseg, &r);
	if (e == NULL)
		return r;
	r = RSMERR_REBIND_NOT_ALLOWED;
	if (!(e->flags & RSM_ALLOW_REBIND))
		goto out;
	/* the whole segment moves: one rkey cannot span two registrations */
	r = RSMERR_BAD_LENGTH;
	if (size != e->size)
		goto out;
	r = RSMERR_BAD_ADDR;
	if (off != 0 || vaddr == NULL ||
	    (uintptr_t)vaddr % e->ctlr->page != 0)
		goto out;
	r = rsm_probe(vaddr, size);
	if (r != 0)
		goto out;
	old = e->lmr;
	old_va = e->vaddr;
	e->lmr = export_lmr(e->ctlr, vaddr, size);
	if (e->lmr == NULL) {
		r = errno_to_rsm(rte_errno);
		e->lmr = old;
		goto out;
	}
	e->vaddr = vaddr;
	/* fresh rkeys: the old ones die, importers using them fail with a
	 * remote access error and resume with the new ones (import.c) */
	r = export_bind(e);
	if (r != 0) {
		dpdat_lmr_free(e->lmr);
		e->lmr = old;
		e->vaddr = old_va;
		export_bind(e);
		goto out;
	}
	e->gen++;
	dpdat_lmr_free(old);
out:
	pthread_mutex_unlock(&e->ctlr->lock);
	return r;
}

/* ---- the service (called by the controller's thread) ---- */

/*
 * The rights an import may have, as Solaris's rsm driver decides them: the
 * importer's node must be in the ACL (any node when there is none); the
 * ACL entry's permission, or without an ACL the owner's 0666 & ~umask,
 * gives three digits of which exactly one applies, as for a file: owner
 * when the importer's effective uid is the owner's, else group when the
 * owner's group is the importer's effective or a supplementary group, else
 * other. The digit alone decides (an owner digit of 0 is not made up for
 * by the group or other digit). need: 4 read, 2 write, 6 both.
 * A host that is not a configured node (node 0) is refused even without an
 * ACL ("any node" is any node of DPDAT_RSM_NODES). An importer in more
 * supplementary groups than a REQ lists (who->ngroups above
 * RSM_REQ_GROUPS) whose listed groups do not include the owner's may still
 * be in it: it gets what both the group and the other digit allow, never
 * more than the file rule would give.
 * Returns 0, RSMERR_SEG_NOT_PUBLISHED_TO_NODE or RSMERR_PERM_DENIED.
 */
int
rsm_perm_check(const rsmapi_access_entry_t *acl, uint_t nacl, mode_t cmask,
	       uid_t owner, gid_t group, rsm_node_id_t node,
	       const struct rsm_cred *who, uint32_t need)
{
	rsm_permission_t p = cmask;
	unsigned int shift = 0;
	uint_t i;

	if (node == 0)
		return RSMERR_SEG_NOT_PUBLISHED_TO_NODE;
	if (acl != NULL && nacl > 0) {
		for (i = 0; i < nacl; i++)
			if (acl[i].ae_node == node)
				break;
		if (i == nacl)
			return RSMERR_SEG_NOT_PUBLISHED_TO_NODE;
		p = acl[i].ae_permission;
	}
	if (who->uid != (uint32_t)owner) {
		int member = who->gid == (uint32_t)group;

		for (i = 0; !member && i < who->ngroups &&
			    i < RSM_REQ_GROUPS; i++)
			member = who->groups[i] == (uint32_t)group;
		if (!member && who->ngroups > RSM_REQ_GROUPS)
			/* perhaps in the group through an unlisted one */
			p &= (p >> 3) | 0770;	/* other &= group */
		shift = member ? 3 : 6;
	}
	p = (p >> (6 - shift)) & 6;	/* the digit that applies */
	if (need == 0 || (need & ~6u) != 0 || (need & ~p) != 0)
		return RSMERR_PERM_DENIED;
	return 0;
}

/* A random ticket, not 0 and not one of the segment's. */
static uint64_t
ticket_new(const struct rsm_export *e)
{
	uint64_t id;

	do
		id = rte_rand();
	while (id == 0 || rsm_ticket_find(e, id, 0, true) != NULL);
	return id;
}

struct rsm_ticket *
rsm_ticket_find(const struct rsm_export *e, uint64_t id, uint32_t ip,
		bool any_ip)
{
	struct rsm_ticket *t;

	TAILQ_FOREACH(t, &e->tickets, next)
		if (t->id == id && (any_ip || t->ip == ip))
			return t;
	return NULL;
}

struct rsm_ticket *
rsm_ticket_add(struct rsm_export *e, uint32_t ip, uint32_t need)
{
	struct rsm_ticket *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->id = ticket_new(e);
	t->ip = ip;
	t->need = need;
	TAILQ_INSERT_TAIL(&e->tickets, t, next);
	return t;
}

static int
export_grant(struct rsm_ctlr *c, struct rsm_export *e,
	     const struct rsm_req *q, uint32_t peer_ip, uint32_t *need,
	     uint64_t *ticket)
{
	rsm_node_id_t node = rsm_ip_node(c, peer_ip);
	struct rsm_cred who;
	struct rsm_ticket *t;
	int r;

	*need = (q->perm >> 6) & 6;
	if (q->op == RSM_OP_RESUME) {
		/* a ticket is unguessable and good from its importer's host
		 * only: nobody else takes over an import's rights */
		t = rsm_ticket_find(e, q->ticket, peer_ip, false);
		if (t == NULL)
			return RSMERR_SEG_NOT_PUBLISHED;
		*need = t->need;
		*ticket = t->id;
		return 0;
	}
	who.uid = q->uid;
	who.gid = q->gid;
	who.ngroups = q->ngroups;	/* all; the first RSM_REQ_GROUPS listed */
	memcpy(who.groups, (const uint8_t *)q + offsetof(struct rsm_req,
							 groups),
	       sizeof(who.groups));
	r = rsm_perm_check(e->acl, e->nacl, e->cmask, e->uid, e->gid, node,
			   &who, *need);
	if (r != 0)
		return r;
	t = rsm_ticket_add(e, peer_ip, *need);
	if (t == NULL)
		return RSMERR_INSUFFICIENT_MEM;
	*ticket = t->id;
	return 0;
}

static void
econn_release(struct rsm_export *e, struct rsm_econn *ec)
{
	for (int i = 0; i < RSM_SLOTS; i++)
		if (e->slot_owner[i] == ec)
			e->slot_owner[i] = NULL;
}

static int
slot_post(struct rsm_export *e, struct rsm_econn *ec, int i)
{
	struct dpdat_lmr_info li;
	struct dpdat_sge sge;
	struct dpdat_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge,
				    .num_sge = 1 };

	dpdat_lmr_query(e->slot_lmr, &li);
	sge.addr = (uint64_t)(uintptr_t)(e->slots + i * RSM_SLOT_SIZE);
	sge.length = RSM_SLOT_SIZE;
	sge.lkey = li.lmr_context;
	e->slot_owner[i] = ec;
	return dpdat_post_recv(ec->qp, &wr);
}

static int
export_accept(struct rsm_ctlr *c, struct rsm_export *e,
	      struct dpdat_cm_event *ev, uint32_t need, uint64_t ticket)
{
	struct dpdat_qp_conf qc = { .pz = c->pz, .send_cq = e->cq,
				    .recv_cq = e->cq, .max_send_wr = 16,
				    .max_recv_wr = RSM_SLOTS_PER_CONN };
	struct rsm_rep rep = { .magic = RSM_WIRE_MAGIC };
	struct rsm_econn *ec;
	int posted = 0;

	ec = calloc(1, sizeof(*ec));
	if (ec == NULL)
		return RSMERR_INSUFFICIENT_MEM;
	ec->qp = dpdat_qp_create(c->dev, &qc);
	if (ec->qp == NULL) {
		free(ec);
		return RSMERR_INSUFFICIENT_RESOURCES;
	}
	ec->cm = ev->conn;
	ec->ticket = ticket;
	for (int i = 0; i < RSM_SLOTS && posted < RSM_SLOTS_PER_CONN; i++)
		if (e->slot_owner[i] == NULL && slot_post(e, ec, i) == 0)
			posted++;
	rep.addr = (uint64_t)(uintptr_t)e->vaddr;
	rep.len = e->size;
	rep.rkey = e->rkey[need];
	rep.gen = e->gen;
	rep.ticket = ticket;
	if (dpdat_cm_accept(ev->conn, ec->qp, &rep, sizeof(rep), c->eq) != 0) {
		econn_release(e, ec);
		dpdat_qp_free(ec->qp);
		free(ec);
		return RSMERR_INSUFFICIENT_RESOURCES;
	}
	/* a resumed import's old connection, when its importer could not
	 * end it (its QP broke first), goes now */
	{
		struct rsm_econn *o;

		TAILQ_FOREACH(o, &e->conns, next)
			if (o->ticket == ticket)
				dpdat_cm_disconnect(o->cm, NULL, 0);
	}
	TAILQ_INSERT_TAIL(&e->conns, ec, next);
	return 0;
}

void
rsm_export_request(struct rsm_ctlr *c, struct dpdat_cm_event *ev)
{
	struct rsm_rep rej = { .magic = RSM_WIRE_MAGIC };
	struct rsm_req q;
	struct rsm_export *e, *found = NULL;
	uint64_t ticket = 0;
	uint32_t need = 0;
	int r = RSMERR_SEG_NOT_PUBLISHED;

	memset(&q, 0, sizeof(q));
	memcpy(&q, ev->private_data, RTE_MIN(sizeof(q),
		(size_t)ev->private_data_len));
	pthread_mutex_lock(&c->lock);
	if (q.magic != RSM_WIRE_MAGIC) {
		r = RSMERR_BAD_CONF;
		goto reject;
	}
	TAILQ_FOREACH(e, &c->exports, next)
		if (e->published && e->id == q.segid)
			found = e;
	if (found == NULL)
		goto reject;
	r = export_grant(c, found, &q, ev->peer_ipv4, &need, &ticket);
	if (r == 0)
		r = export_accept(c, found, ev, need, ticket);
	if (r == 0) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
reject:
	pthread_mutex_unlock(&c->lock);
	rej.status = (uint32_t)r;
	dpdat_cm_reject(ev->conn, &rej, sizeof(rej));
	dpdat_cm_conn_free(ev->conn);
}

void
rsm_export_conn_gone(struct rsm_ctlr *c, struct dpdat_cm_event *ev)
{
	struct rsm_export *e;
	struct rsm_econn *ec;
	struct rsm_req q;

	memset(&q, 0, sizeof(q));
	memcpy(&q, ev->private_data, RTE_MIN(sizeof(q),
		(size_t)ev->private_data_len));
	pthread_mutex_lock(&c->lock);
	TAILQ_FOREACH(e, &c->exports, next) {
		TAILQ_FOREACH(ec, &e->conns, next)
			if (ec->cm == ev->conn)
				break;
		if (ec == NULL)
			continue;
		TAILQ_REMOVE(&e->conns, ec, next);
		econn_release(e, ec);
		/* an importer's last goodbye ends its ticket: the one of
		 * this connection, whatever the goodbye names */
		if (q.magic == RSM_WIRE_MAGIC && q.op == RSM_OP_BYE &&
		    q.ticket == ec->ticket) {
			struct rsm_ticket *t;

			TAILQ_FOREACH(t, &e->tickets, next)
				if (t->id == ec->ticket) {
					TAILQ_REMOVE(&e->tickets, t, next);
					free(t);
					break;
				}
		}
		/* the QP goes only with its connection: the CM's timers
		 * look at it while the connection lives */
		if (dpdat_cm_conn_free(ec->cm) == 0)
			dpdat_qp_free(ec->qp);
		free(ec);
		break;
	}
	pthread_mutex_unlock(&c->lock);
}

/* ---- signals ---- */

int
rsm_export_signal_wait(struct rsm_export *e, int timeout)
{
	struct rsm_ctlr *c = e->ctlr;
	struct dpdat_wc wc;
	int waited = 0;

	for (;;) {
		int n = dpdat_cq_poll(e->cq, &wc, 1);

		if (n == 1) {
			if (wc.status != DPDAT_WC_SUCCESS ||
			    (wc.opcode != DPDAT_WR_RECV &&
			     wc.opcode != DPDAT_WR_RECV_RDMA_IMM))
				continue;	/* flushed by a disconnect */
			pthread_mutex_lock(&c->lock);
			if (wc.wr_id < RSM_SLOTS &&
			    e->slot_owner[wc.wr_id] != NULL)
				slot_post(e, e->slot_owner[wc.wr_id],
					  (int)wc.wr_id);
			pthread_mutex_unlock(&c->lock);
			return 0;
		}
		if (timeout >= 0 && waited >= timeout)
			return RSMERR_TIMEOUT;
		/* short waits: a destroy may need the lock meanwhile */
		dpdat_cq_wait(e->cq, 10);
		waited += 10;
	}
}

int
rsm_export_pollfd(struct rsm_export *e, struct pollfd *fd, int get)
{
	if (get) {
		fd->fd = dpdat_cq_fd(e->cq);
		fd->events = POLLRDNORM;
		fd->revents = 0;
		e->pollfd_in_use++;
	} else if (e->pollfd_in_use > 0) {
		e->pollfd_in_use--;
	}
	return 0;
}
