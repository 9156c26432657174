/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * Handles: allocation, validation and retirement. Retired objects keep
 * their provider word and a dead magic and wait on a free list of their
 * type for the next object of the same type, so that a stale handle is
 * always readable memory that says "invalid". And two helpers every
 * object module shares: the IA handle the consumer holds for ours, which
 * queries report, and a DAT iov as a native scatter list.
 */

#include <stdlib.h>
#include <string.h>

#include "dd.h"

RTE_LOG_REGISTER(dd_logtype, dpdat.dat, NOTICE);

struct retired {
	struct dd_obj_list list;
	size_t size;
};

static struct retired retired[DD_TYPE_COUNT];
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t
live_magic(enum dd_type type)
{
	return DD_MAGIC_LIVE ^ (uint32_t)type;
}

void *
dd_obj_new(struct dd_ia *ia, enum dd_type type, size_t size)
{
	struct dd_obj *o = NULL;
	struct retired *r = &retired[type];

	pthread_mutex_lock(&retired_lock);
	if (r->size == 0) {
		TAILQ_INIT(&r->list);
		r->size = size;
	}
	if (!TAILQ_EMPTY(&r->list) && r->size == size) {
		o = TAILQ_FIRST(&r->list);
		TAILQ_REMOVE(&r->list, o, next);
	}
	pthread_mutex_unlock(&retired_lock);
	if (o == NULL)
		o = malloc(size);
	if (o == NULL)
		return NULL;
	memset(o, 0, size);
	o->type = type;
	o->ia = ia;
	if (ia != NULL) {
		o->provider = ia->h.provider;
		pthread_mutex_lock(&ia->lock);
		TAILQ_INSERT_TAIL(&ia->objs, o, next);
		pthread_mutex_unlock(&ia->lock);
	}
	__atomic_store_n(&o->magic, live_magic(type), __ATOMIC_RELEASE);
	return o;
}

void
dd_obj_free(void *obj)
{
	struct dd_obj *o = obj;
	struct retired *r = &retired[o->type];

	if (o->ia != NULL && o->type != DD_IA) {
		pthread_mutex_lock(&o->ia->lock);
		TAILQ_REMOVE(&o->ia->objs, o, next);
		pthread_mutex_unlock(&o->ia->lock);
	}
	__atomic_store_n(&o->magic, DD_MAGIC_DEAD, __ATOMIC_RELEASE);
	pthread_mutex_lock(&retired_lock);
	TAILQ_INSERT_TAIL(&r->list, o, next);
	pthread_mutex_unlock(&retired_lock);
}

void *
dd_obj_get(DAT_HANDLE h, enum dd_type type)
{
	struct dd_obj *o = h;

	/* NULL, DAT_EVD_ASYNC_EXISTS and other small values are no handles */
	if ((uintptr_t)o < 4096 ||
	    __atomic_load_n(&o->magic, __ATOMIC_ACQUIRE) != live_magic(type))
		return NULL;
	return o;
}

struct dd_obj *
dd_obj_any(DAT_HANDLE h)
{
	struct dd_obj *o = h;
	uint32_t m;

	if ((uintptr_t)o < 4096)
		return NULL;
	m = __atomic_load_n(&o->magic, __ATOMIC_ACQUIRE);
	if ((m ^ DD_MAGIC_LIVE) == 0 || (m ^ DD_MAGIC_LIVE) >= DD_TYPE_COUNT)
		return NULL;
	return o;
}

/* libdat2 exports it undeclared. Given a provider's IA handle it answers
 * the registry's handle for it (the small integer the consumer holds),
 * after a search of its table. */
extern DAT_RETURN dats_get_ia_handle(DAT_IA_HANDLE, DAT_IA_HANDLE *);

/* Queries answer the handle the consumer holds, which the registry
 * accepts back: ours would crash the registry's dat_ia_query(). The
 * provider's own while the registry has not seen the IA (ia_open). */
DAT_IA_HANDLE
dd_consumer_ia(struct dd_ia *ia)
{
	DAT_IA_HANDLE h;

	if (dats_get_ia_handle((DAT_IA_HANDLE)ia, &h) != DAT_SUCCESS)
		return (DAT_IA_HANDLE)ia;
	return h;
}

/* ---- a DAT iov as a native scatter list (ep.c, srq.c) ---- */

DAT_RETURN
dd_to_sges(DAT_COUNT n, const DAT_LMR_TRIPLET *iov, DAT_COUNT max,
	   struct dpdat_sge *sge, DAT_SEG_LENGTH *total)
{
	uint64_t sum = 0;

	if (n < 0 || n > max || (n > 0 && iov == NULL))
		return DD_BAD_PARAM(DAT_INVALID_ARG2);
	for (DAT_COUNT i = 0; i < n; i++) {
		sge[i].addr = iov[i].virtual_address;
		sge[i].length = iov[i].segment_length;
		sge[i].lkey = iov[i].lmr_context;
		sum += iov[i].segment_length;
	}
	if (sum > DD_MAX_RDMA_SIZE)
		return DAT_LENGTH_ERROR;
	*total = (DAT_SEG_LENGTH)sum;
	return DAT_SUCCESS;
}
