/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_MR_PRIV_H
#define DPDAT_MR_PRIV_H

/*
 * Internal view of lib/mr, shared with the other subsystems (never installed).
 *
 * The context table is a two-level array of 64-byte entries, grown one chunk
 * at a time and never shrunk while the domain lives, so readers can index it
 * without locks. An entry is published by storing its key (the full context)
 * with release order after its fields; it is retired by storing key 0 and a
 * release fence before any field changes. Readers load the key (acquire), copy
 * the fields, fence (acquire) and load the key again: if it still matches, the
 * copy belongs to that context. This makes lookups wait-free. Writers (create,
 * bind, free) serialise on the domain mutex.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_rcu_qsbr.h>

#include <dpdat/dpdat_mr.h>

extern int dpdat_mr_logtype;
#define MR_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpdat_mr_logtype, "dpdat_mr: " fmt "\n", \
		##__VA_ARGS__)

#define MR_MAGIC_DOM	0x4d52444fu	/* "ODRM" */
#define MR_MAGIC_PZ	0x4d525a50u
#define MR_MAGIC_LMR	0x4d524c4du
#define MR_MAGIC_RMR	0x4d52524du
#define MR_MAGIC_DEAD	0xdeadbeefu

#define MR_CTX_GEN_BITS	8
#define MR_CTX_GEN_MASK	((1u << MR_CTX_GEN_BITS) - 1)
#define MR_CTX_INDEX(ctx)	((ctx) >> MR_CTX_GEN_BITS)
#define MR_CTX_GEN(ctx)		((ctx) & MR_CTX_GEN_MASK)
#define MR_CTX_MAKE(idx, gen)	(((uint32_t)(idx) << MR_CTX_GEN_BITS) | (gen))

#define MR_CHUNK_SHIFT	16
#define MR_CHUNK_SIZE	(1u << MR_CHUNK_SHIFT)
#define MR_CHUNK_MASK	(MR_CHUNK_SIZE - 1)
#define MR_N_CHUNKS	((DPDAT_MR_MAX_CONTEXTS + 1) >> MR_CHUNK_SHIFT)

#define MR_BAD_IOVA	UINT64_MAX

enum mr_entry_type {
	MR_ENTRY_FREE = 0,
	MR_ENTRY_LMR,
	MR_ENTRY_RMR,
};

/* One context. Fields other than key are read racily by the data path, so
 * they are accessed with (relaxed) atomics on both sides. */
struct mr_entry {
	uint32_t key;		/* live context, 0 when free */
	uint8_t type;		/* enum mr_entry_type */
	uint8_t priv;		/* DPDAT_MEM_PRIV_* */
	uint8_t kind;		/* enum dpdat_mem_kind */
	uint8_t gen;		/* generation of the last use; 0 = never used */
	uint32_t pz_id;
	uint8_t uses;		/* generations handed out; 255: retired */
	uint32_t next_free;	/* control path only: FIFO of free indices */
	uint64_t qp_tag;	/* the one QP a remote access may come from; 0: any */
	uint64_t addr;
	uint64_t len;
	uint64_t iova;		/* IOVA of addr, MR_BAD_IOVA if unknown */
	void *obj;		/* control path only: owning LMR or RMR */
} __rte_cache_aligned;

_Static_assert(sizeof(struct mr_entry) == 64, "one cache line per context");

/* Translation of a registered range, shared by LMRs over the same memory. */
struct mr_mem {
	uint64_t addr;
	uint64_t len;
	uint64_t reg_addr;
	uint64_t reg_len;
	enum dpdat_mem_kind kind;
	uint64_t iova;
	struct mr_extmem *ext;	/* our rte_extmem registration, if any */
	uint32_t refcnt;	/* LMRs using this translation */
	bool shared;
	uint8_t cookie[DPDAT_LMR_COOKIE_LEN];
	TAILQ_ENTRY(mr_mem) next;	/* in the domain's shared list */
};

TAILQ_HEAD(mr_mem_list, mr_mem);

struct dpdat_mr_domain {
	uint32_t magic;
	pthread_mutex_t lock;
	uint32_t max_contexts;
	uint32_t n_slots;	/* indices handed out so far, readers load it */
	uint32_t live;
	uint32_t free_head;	/* oldest freed index, 0 when none */
	uint32_t free_tail;
	uint32_t next_pz_id;	/* 0 once every id was handed out */
	uint32_t n_pz;
	struct rte_rcu_qsbr *qsbr;	/* data-path readers of the table */
	uint32_t max_readers;
	uint64_t *reader_ids;	/* bitmap of registered reader ids */
	struct mr_mem_list shared;
	struct mr_entry *chunks[MR_N_CHUNKS];
	char name[32];
};

/*
 * A reader going online without the store-load fence of
 * rte_rcu_qsbr_thread_online(): for a caller whose very next step is a full
 * barrier of its own before it reads the table (lib/dev's engine lock, a
 * locked exchange), so that the fence is paid once. The same token copy
 * as DPDK's; the reader must be the calling thread's alone (a shared one
 * could be set online by a thread that then loses the lock).
 */
static inline void
mr_reader_online_unfenced(struct dpdat_mr_domain *dom, unsigned int reader_id)
{
	uint64_t t = __atomic_load_n(&dom->qsbr->token, __ATOMIC_RELAXED);

	__atomic_store_n(&dom->qsbr->qsbr_cnt[reader_id].cnt, t,
			 __ATOMIC_RELAXED);
}

struct dpdat_pz {
	uint32_t magic;
	uint32_t id;
	struct dpdat_mr_domain *dom;
	uint32_t refs;		/* under dom->lock */
};

struct dpdat_lmr {
	uint32_t magic;
	enum dpdat_mem_type type;
	struct dpdat_pz *pz;
	struct mr_mem *mem;
	uint32_t priv;
	uint32_t ctx;
	uint32_t rmr_count;	/* under dom->lock */
};

struct dpdat_rmr {
	uint32_t magic;
	struct dpdat_pz *pz;
	struct dpdat_lmr *lmr;	/* bound LMR or NULL */
	uint32_t priv;
	uint32_t ctx;		/* 0 when unbound */
	uint64_t addr;
	uint64_t len;
	uint64_t qp_tag;	/* scope of the binding: 0 = the PZ, else one QP */
};

/* table.c: context allocation (caller holds dom->lock) */
int mr_table_alloc(struct dpdat_mr_domain *dom, uint32_t *ctx);
void mr_table_publish(struct dpdat_mr_domain *dom, uint32_t ctx,
		      enum mr_entry_type type, void *obj, uint32_t priv,
		      uint32_t pz_id, uint64_t qp_tag, uint64_t addr,
		      uint64_t len, const struct mr_mem *mem);
void mr_table_release(struct dpdat_mr_domain *dom, uint32_t ctx);
void mr_table_destroy(struct dpdat_mr_domain *dom);
/* Wait until every registered reader passed a quiescent state, so that no
 * access checked before a context died is still in progress. Call without
 * dom->lock. */
void mr_domain_sync(struct dpdat_mr_domain *dom);
struct mr_entry *mr_table_entry(const struct dpdat_mr_domain *dom,
				uint32_t index);
/* dpdat_mr_access_check() for an access that arrives on a QP: a context
 * bound with a QP tag (an RMR of QP scope) resolves only for that QP's tag
 * (DPDAT_MR_CHECK_SCOPE otherwise); tag 0 is no QP. */
enum dpdat_mr_check mr_access_check(const struct dpdat_mr_domain *dom,
				    uint32_t ctx, uint64_t addr, uint64_t len,
				    uint32_t access, uint32_t pz_id,
				    uint64_t qp_tag, struct dpdat_mr_xlat *xlat);
/* rmr.c: dpdat_rmr_bind() with a scope: qp_tag 0 binds for the whole PZ,
 * any other value for the QP that carries that tag (lib/rc) alone. */
int mr_rmr_bind(struct dpdat_rmr *rmr, const struct dpdat_lmr_triplet *seg,
		uint32_t privileges, uint64_t qp_tag, uint32_t *rmr_context);
/* Live LMR owning ctx, or NULL (caller holds dom->lock). */
struct dpdat_lmr *mr_table_lmr(struct dpdat_mr_domain *dom, uint32_t ctx);

/* pz.c: objects of other subsystems (QPs) that live in a PZ hold it */
int mr_pz_hold(struct dpdat_pz *pz, int delta);

/* mem.c: translations */
#define MR_MAP_READ	0x1
#define MR_MAP_WRITE	0x2
#define MR_MAP_SHARED	0x4
int mr_mem_classify(struct mr_mem *mem, unsigned int need);
void mr_mem_unclassify(struct mr_mem *mem);
int mr_maps_check(uint64_t addr, uint64_t len, unsigned int need);
/* Check (and fault in) the pages of a translation for the access in need. */
int mr_mem_probe(const struct mr_mem *mem, unsigned int need);
uint64_t mr_page_size(void);

static inline bool
mr_range_ok(uint64_t base, uint64_t blen, uint64_t addr, uint64_t len)
{
	/* no addition that can wrap: addr - base is in [0, blen] */
	return addr >= base && addr - base <= blen && len <= blen - (addr - base);
}

#endif /* DPDAT_MR_PRIV_H */
