/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_MR_H
#define DPDAT_MR_H

/**
 * @file
 * dpdat memory registration: protection zones (PZ), local memory regions
 * (LMR) and remote memory regions (RMR, memory windows).
 *
 * Semantics follow uDAPL (dat_lmr_create, dat_rmr_bind,
 * dat_lmr_sync_rdma_write). Every LMR and bound RMR owns a 32-bit context
 * (L_Key / R_Key): a 24-bit table index in the upper bits and an 8-bit
 * generation in the lower bits. A freed or re-bound context never resolves
 * again. Lookups by context are O(1) and wait-free; creation and destruction
 * serialise on the domain.
 *
 * Creators return NULL and set rte_errno; other functions return 0 or a
 * negative errno value. The errno values used throughout are:
 *  - EINVAL   invalid parameter (range, flags, unknown context in a triplet)
 *  - EBADF    invalid handle (NULL or wrong object type)
 *  - ENOMEM   out of memory; ENOSPC: context table exhausted
 *  - EBUSY    object still referenced (PZ with LMRs, LMR with bound RMRs)
 *  - EBADFD   object in the wrong state (shared region not shared memory)
 *  - ENOTSUP  memory type not supported
 *  - EACCES   privileges violation (RMR privilege not backed by the LMR)
 *  - EPERM    protection violation (PZ mismatch)
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Memory access privileges (values of DAT_MEM_PRIV_*_FLAG). */
#define DPDAT_MEM_PRIV_NONE		0x00
#define DPDAT_MEM_PRIV_LOCAL_READ	0x01
#define DPDAT_MEM_PRIV_REMOTE_READ	0x02
#define DPDAT_MEM_PRIV_LOCAL_WRITE	0x10
#define DPDAT_MEM_PRIV_REMOTE_WRITE	0x20
#define DPDAT_MEM_PRIV_ALL		0x33
/** Remote atomics (DAT_IB_MEM_PRIV_REMOTE_ATOMIC): needs local write. */
#define DPDAT_MEM_PRIV_REMOTE_ATOMIC	0x40
#define DPDAT_MEM_PRIV_REMOTE \
	(DPDAT_MEM_PRIV_REMOTE_READ | DPDAT_MEM_PRIV_REMOTE_WRITE)

/** Length of a shared-region cookie (DAT_LMR_COOKIE), compared in full. */
#define DPDAT_LMR_COOKIE_LEN 40

/** Largest number of contexts a domain can hold (24-bit index, 0 reserved). */
#define DPDAT_MR_MAX_CONTEXTS ((1u << 24) - 1)

/** Data-path reader threads per domain: default and largest. */
#define DPDAT_MR_DEFAULT_READERS 64
#define DPDAT_MR_MAX_READERS 1024

/** Memory types accepted by dpdat_lmr_create(). */
enum dpdat_mem_type {
	DPDAT_MEM_TYPE_VIRTUAL = 0,	/**< a contiguous user virtual range */
	DPDAT_MEM_TYPE_LMR,		/**< the memory of an existing LMR */
	DPDAT_MEM_TYPE_SHARED_VIRTUAL,	/**< shared memory named by a cookie */
	DPDAT_MEM_TYPE_SO_VIRTUAL,	/**< strongly ordered virtual memory */
};

/** How the registered memory is reached by the transmit path. */
enum dpdat_mem_kind {
	/** DPDK-managed memory (hugepage heap, memzones): zero-copy, IOVA known. */
	DPDAT_MEM_KIND_DPDK = 0,
	/** Page-aligned memory registered with rte_extmem_register(). */
	DPDAT_MEM_KIND_EXTMEM,
	/** Any other memory: data is copied through mbufs. */
	DPDAT_MEM_KIND_COPY,
};

/** Description of the memory to register; which member is used depends on type. */
struct dpdat_mem_desc {
	enum dpdat_mem_type type;
	union {
		/** VIRTUAL and SO_VIRTUAL */
		struct {
			void *addr;
			size_t length;
		} virt;
		/** LMR: the new LMR covers the whole memory of this one. */
		struct dpdat_lmr *lmr;
		/** SHARED_VIRTUAL: 40 cookie bytes, compared as bytes. */
		struct {
			const uint8_t *cookie;
			void *addr;
			size_t length;
		} shared;
	};
};

/** Segment of an LMR: context, address, length (DAT_LMR_TRIPLET). */
struct dpdat_lmr_triplet {
	uint32_t lmr_context;
	uint32_t pad;
	uint64_t virtual_address;
	uint64_t segment_length;
};

struct dpdat_mr_domain;
struct dpdat_pz;
struct dpdat_lmr;
struct dpdat_rmr;

/** Configuration of a registration domain (one per device / IA). */
struct dpdat_mr_domain_conf {
	/** Number of table slots (largest context index); 0 means
	 *  DPDAT_MR_MAX_CONTEXTS. A slot retires after 255 generations, so a
	 *  domain issues at most 255 x max_contexts contexts in its life. */
	uint32_t max_contexts;
	/** Name used in logs; may be NULL. */
	const char *name;
	/** Largest number of registered data-path readers (see
	 *  dpdat_mr_reader_register()); 0 means DPDAT_MR_DEFAULT_READERS. */
	uint32_t max_readers;
};

/** Result of dpdat_pz_query(). */
struct dpdat_pz_info {
	struct dpdat_mr_domain *domain;
	uint32_t id;		/**< unique in the domain, never 0 */
	uint32_t ref_count;	/**< LMRs, RMRs and later QPs using the PZ */
};

/** Result of dpdat_lmr_query(). */
struct dpdat_lmr_info {
	enum dpdat_mem_type type;
	enum dpdat_mem_kind kind;
	struct dpdat_pz *pz;
	uint32_t privileges;
	uint32_t lmr_context;
	uint32_t rmr_context;		/**< 0 unless a remote privilege was asked */
	uint64_t address;		/**< start of the accessible range */
	uint64_t length;		/**< length of the accessible range */
	uint64_t registered_address;	/**< page-rounded start */
	uint64_t registered_size;	/**< page-rounded length */
	uint64_t iova;			/**< IOVA of address if contiguous, else UINT64_MAX */
	uint32_t rmr_count;		/**< RMRs bound to this LMR */
	uint32_t share_count;		/**< LMRs sharing the same translation */
};

/** Result of dpdat_rmr_query(). */
struct dpdat_rmr_info {
	struct dpdat_pz *pz;
	struct dpdat_lmr *lmr;		/**< bound LMR, NULL when unbound */
	uint32_t privileges;
	uint32_t rmr_context;		/**< 0 when unbound */
	uint64_t address;
	uint64_t length;
};

/** Reasons why dpdat_mr_access_check() refuses an access. */
enum dpdat_mr_check {
	DPDAT_MR_CHECK_OK = 0,
	DPDAT_MR_CHECK_UNKNOWN_KEY,	/**< index never allocated or out of range */
	DPDAT_MR_CHECK_STALE_KEY,	/**< freed, re-bound or wrong generation */
	DPDAT_MR_CHECK_BOUNDS,		/**< outside the region, or address wraps */
	DPDAT_MR_CHECK_PRIVILEGE,	/**< access not granted to the key */
	DPDAT_MR_CHECK_PZ,		/**< key belongs to another protection zone */
	DPDAT_MR_CHECK_SCOPE,		/**< RMR bound for another QP
					 *   (dpdat_rmr_bind_qp()) */
};

/** Translation returned by a successful access check. */
struct dpdat_mr_xlat {
	void *addr;			/**< host address of the first byte */
	/** IOVA of the first byte when the region is IOVA-contiguous; UINT64_MAX
	 *  when it is not (translate page by page) or unknown (copy path). */
	uint64_t iova;
	enum dpdat_mem_kind kind;
};

/**
 * Create a registration domain: the context table that LMRs and RMRs live in.
 * Requires an initialised EAL (dpdat_eal_init(), or the application's own).
 *
 * @param conf
 *   Configuration, or NULL for defaults.
 * @return
 *   The domain, or NULL with rte_errno set: EINVAL (max_contexts or
 *   max_readers too large), ENOMEM, ENODEV (EAL not initialised).
 */
struct dpdat_mr_domain *
dpdat_mr_domain_create(const struct dpdat_mr_domain_conf *conf);

/**
 * Free a domain with no protection zones left.
 *
 * @return 0, -EBADF (not a domain), -EBUSY (protection zones or registered
 *   readers remain).
 */
int
dpdat_mr_domain_free(struct dpdat_mr_domain *dom);

/** Number of live contexts (LMRs and bound RMRs) in the domain; 0 for an
 *  invalid handle. */
uint32_t
dpdat_mr_domain_count(const struct dpdat_mr_domain *dom);

/**
 * Create a protection zone.
 *
 * @return The PZ, or NULL with rte_errno: EBADF, ENOMEM, ENOSPC (2^32 - 1
 *   protection zones were created in this domain: ids are never reused).
 */
struct dpdat_pz *
dpdat_pz_create(struct dpdat_mr_domain *dom);

/**
 * Query a protection zone.
 *
 * @return 0, -EBADF (not a PZ), -EINVAL (info is NULL).
 */
int
dpdat_pz_query(const struct dpdat_pz *pz, struct dpdat_pz_info *info);

/**
 * Free a protection zone.
 *
 * @return 0, -EBADF (not a PZ), -EBUSY (LMRs, RMRs or QPs still use it).
 */
int
dpdat_pz_free(struct dpdat_pz *pz);

/**
 * Register memory as an LMR.
 *
 * VIRTUAL and SO_VIRTUAL register any range; the registration is rounded to
 * pages (registered_address/size) while accesses stay limited to the exact
 * range asked for. LMR creates a second LMR over an existing LMR's memory,
 * sharing its translation. SHARED_VIRTUAL requires the range to be shared
 * memory (MAP_SHARED) and shares the translation between every LMR created
 * with the same 40-byte cookie.
 *
 * @param pz
 *   Protection zone of the new LMR.
 * @param desc
 *   The memory to register.
 * @param privileges
 *   DPDAT_MEM_PRIV_* flags. A remote context is created only when a remote
 *   privilege is asked for. Remote write and remote atomics need local
 *   write.
 * @return
 *   The LMR, or NULL with rte_errno: EBADF (pz, or desc->lmr, not a handle),
 *   EINVAL (NULL desc, zero length, wrapping range, unknown privilege bits,
 *   cookie mismatch), EBADFD (SHARED_VIRTUAL over memory that is not shared),
 *   ENOTSUP (unknown memory type), ENOMEM, ENOSPC (no free context).
 */
struct dpdat_lmr *
dpdat_lmr_create(struct dpdat_pz *pz, const struct dpdat_mem_desc *desc,
		 uint32_t privileges);

/**
 * Query an LMR.
 *
 * @return 0, -EBADF (not an LMR), -EINVAL (info is NULL).
 */
int
dpdat_lmr_query(const struct dpdat_lmr *lmr, struct dpdat_lmr_info *info);

/**
 * Free an LMR. Its context stops resolving at once, and the call returns only
 * after every registered reader passed a quiescent state, so no access checked
 * through the context is still touching the memory (see
 * dpdat_mr_reader_register()). The calling thread must not be an online
 * reader of the domain.
 *
 * @return 0, -EBADF (not an LMR), -EBUSY (RMRs are bound to it).
 */
int
dpdat_lmr_free(struct dpdat_lmr *lmr);

/**
 * Make incoming RDMA reads see local writes to the given segments
 * (dat_lmr_sync_rdma_read). On coherent memory this is a release barrier.
 *
 * @return 0, -EBADF (dom), -EINVAL (NULL segments with n > 0, a context that
 *   is not a live LMR of the domain, or a segment outside its LMR).
 */
int
dpdat_lmr_sync_rdma_read(struct dpdat_mr_domain *dom,
			 const struct dpdat_lmr_triplet *segs, size_t n);

/**
 * Make data placed by incoming RDMA writes visible to the consumer
 * (dat_lmr_sync_rdma_write). On coherent memory this is an acquire barrier.
 *
 * @return as dpdat_lmr_sync_rdma_read().
 */
int
dpdat_lmr_sync_rdma_write(struct dpdat_mr_domain *dom,
			  const struct dpdat_lmr_triplet *segs, size_t n);

/**
 * Create an unbound RMR (memory window) in a protection zone.
 *
 * @return The RMR, or NULL with rte_errno: EBADF, ENOMEM.
 */
struct dpdat_rmr *
dpdat_rmr_create(struct dpdat_pz *pz);

/**
 * Bind an RMR to a range of an LMR, at table level. Every successful bind of
 * a non-empty range returns a fresh context and kills the previous one;
 * segment_length 0 unbinds (the context out is then 0). When a previous
 * binding dies, the call waits for the registered readers as dpdat_lmr_free()
 * does.
 *
 * @param rmr
 *   The RMR.
 * @param seg
 *   lmr_context of the LMR, start address and length of the range.
 * @param privileges
 *   DPDAT_MEM_PRIV_REMOTE_READ, DPDAT_MEM_PRIV_REMOTE_WRITE and/or
 *   DPDAT_MEM_PRIV_REMOTE_ATOMIC.
 * @param[out] rmr_context
 *   The new context; may be NULL.
 * @return
 *   0, -EBADF (not an RMR), -EINVAL (NULL seg, lmr_context not a live LMR,
 *   range outside the LMR or wrapping, non-remote privilege bits), -EPERM (LMR
 *   in another protection zone), -EACCES (remote read without the LMR's local
 *   read, or remote write or atomics without its local write), -ENOSPC (no
 *   free context).
 */
int
dpdat_rmr_bind(struct dpdat_rmr *rmr, const struct dpdat_lmr_triplet *seg,
	       uint32_t privileges, uint32_t *rmr_context);

/**
 * Query an RMR.
 *
 * @return 0, -EBADF (not an RMR), -EINVAL (info is NULL).
 */
int
dpdat_rmr_query(const struct dpdat_rmr *rmr, struct dpdat_rmr_info *info);

/**
 * Free an RMR, unbinding it first (waiting for readers as dpdat_lmr_free()).
 *
 * @return 0, -EBADF (not an RMR).
 */
int
dpdat_rmr_free(struct dpdat_rmr *rmr);

/**
 * The access check of the data path: may @p len bytes at @p addr be accessed
 * with @p access through context @p ctx by a queue pair of protection zone
 * @p pz? Wait-free; safe against concurrent creation and destruction. The
 * translation stays usable until the calling thread's next quiescent state
 * when the thread is a registered, online reader (dpdat_mr_reader_register());
 * an unregistered caller has no such guarantee against a concurrent free.
 *
 * @param dom
 *   The domain.
 * @param ctx
 *   L_Key or R_Key taken from a work request or a received packet.
 * @param addr
 *   First byte of the access.
 * @param len
 *   Length in bytes; a zero-length access must still name a valid key and
 *   an address in [start, start + length] of its region.
 * @param access
 *   DPDAT_MEM_PRIV_* bits that must all be granted.
 * @param pz_id
 *   Protection zone id of the requester (dpdat_pz_info.id).
 * @param[out] xlat
 *   Translation of addr on success; may be NULL.
 * @return
 *   DPDAT_MR_CHECK_OK or the precise reason for refusal.
 */
enum dpdat_mr_check
dpdat_mr_access_check(const struct dpdat_mr_domain *dom, uint32_t ctx,
		      uint64_t addr, uint64_t len, uint32_t access,
		      uint32_t pz_id, struct dpdat_mr_xlat *xlat);

/**
 * Register the calling thread as a data-path reader of the domain: a thread
 * that runs dpdat_mr_access_check() and then touches the memory. Frees and
 * re-binds wait until every online reader has reported a quiescent state, so
 * memory is never released under an access in progress. A reader starts
 * offline; it goes online before its first check and reports quiescence
 * between bursts (DPDK's QSBR RCU underneath).
 *
 * @param[out] reader_id
 *   The id to pass to the other reader calls.
 * @return 0, -EBADF, -EINVAL (reader_id NULL), -ENOSPC (max_readers reached).
 */
int
dpdat_mr_reader_register(struct dpdat_mr_domain *dom, unsigned int *reader_id);

/**
 * Unregister a reader (it goes offline first).
 *
 * @return 0, -EBADF, -EINVAL (not a registered id).
 */
int
dpdat_mr_reader_unregister(struct dpdat_mr_domain *dom,
			   unsigned int reader_id);

/** The reader starts checking contexts and touching memory. */
void
dpdat_mr_reader_online(struct dpdat_mr_domain *dom, unsigned int reader_id);

/** The reader holds no translation any more and will not until online. */
void
dpdat_mr_reader_offline(struct dpdat_mr_domain *dom, unsigned int reader_id);

/** The reader holds no translation obtained before this call (cheap: one
 *  store; call once per burst on the data path). */
void
dpdat_mr_reader_quiescent(struct dpdat_mr_domain *dom,
			  unsigned int reader_id);

/** Printable name of an access-check result. */
const char *
dpdat_mr_check_str(enum dpdat_mr_check r);

/** Printable name of a memory kind. */
const char *
dpdat_mem_kind_str(enum dpdat_mem_kind kind);

/**
 * Allocate registrable DPDK memory (hugepages when the EAL has them): LMRs
 * over it are zero-copy and register in constant time.
 *
 * @param size
 *   Bytes, > 0.
 * @param align
 *   Alignment, a power of two, or 0 for the cache line.
 * @param socket
 *   NUMA socket or -1 (SOCKET_ID_ANY).
 * @return
 *   Zeroed memory, or NULL with rte_errno: EINVAL, ENOMEM.
 */
void *
dpdat_mem_alloc(size_t size, size_t align, int socket);

/** Free memory from dpdat_mem_alloc(); NULL is ignored. */
void
dpdat_mem_free(void *ptr);

/**
 * Walk the live LMRs and bound RMRs of a domain in context order (for tools).
 * The domain lock is held during the walk: the callback may query objects but
 * must not create, bind or free anything in the same domain.
 *
 * @param cb
 *   Called with each context and either its LMR or its RMR (the other NULL);
 *   a non-zero return stops the walk and is returned.
 * @return 0, -EBADF, -EINVAL (cb is NULL), or the callback's value.
 */
int
dpdat_mr_domain_walk(struct dpdat_mr_domain *dom,
		     int (*cb)(uint32_t ctx, struct dpdat_lmr *lmr,
			       struct dpdat_rmr *rmr, void *arg),
		     void *arg);

#ifdef __cplusplus
}
#endif

#endif /* DPDAT_MR_H */
