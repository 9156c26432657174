/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#ifndef DPDAT_RSMAPI_H
#define DPDAT_RSMAPI_H

/**
 * @file
 * The Remote Shared Memory API (RSMAPI) of Solaris over dpdat: the names,
 * types, flags, constants and RSMERR_* codes of the Solaris interface, so
 * RSMAPI sources compile unchanged. A controller is one dpdat device; node
 * ids map to IPv4 addresses through DPDAT_RSM_NODES (doc/guides/rsm.md).
 * Segments are imported over RDMA READ and WRITE: rsm_memseg_import_map()
 * returns RSMERR_UNSUPPORTED_OPERATION.
 */

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RSM_VERSION	5

/* Solaris base types the interface uses (glibc has caddr_t). */
#ifndef DPDAT_RSM_NO_SOLARIS_TYPES
typedef unsigned int uint_t;
typedef unsigned long ulong_t;
typedef unsigned char uchar_t;
#endif
typedef long long offset_t;

/* Return values */
#define RSM_SUCCESS				0
#define RSMERR_BAD_LIBRARY_VERSION		1
#define RSMERR_BAD_TOPOLOGY_PTR			2
#define RSMERR_BAD_CTLR_HNDL			3
#define RSMERR_CTLR_NOT_PRESENT			4
#define RSMERR_BAD_SEG_HNDL			5
#define RSMERR_SEG_ALREADY_PUBLISHED		6
#define RSMERR_SEG_NOT_PUBLISHED		7
#define RSMERR_SEG_NOT_PUBLISHED_TO_NODE	8
#define RSMERR_SEG_ALREADY_MAPPED		9
#define RSMERR_SEG_STILL_MAPPED			10
#define RSMERR_SEG_NOT_MAPPED			11
#define RSMERR_NOT_CREATOR			12
#define RSMERR_BAD_BARRIER_PTR			13
#define RSMERR_BAD_SGIO				14
#define RSMERR_BAD_LOCALMEM_HNDL		15
#define RSMERR_BAD_ADDR				16
#define RSMERR_BAD_MEM_ALIGNMENT		17
#define RSMERR_BAD_OFFSET			18
#define RSMERR_MISALIGNED_OFFSET		19
#define RSMERR_BAD_LENGTH			20
#define RSMERR_BAD_ACL				21
#define RSMERR_BAD_SEGID			22
#define RSMERR_RESERVED_SEGID			23
#define RSMERR_SEGID_IN_USE			24
#define RSMERR_BAD_MODE				25
#define RSMERR_BAD_PERMS			26
#define RSMERR_PERM_DENIED			27
#define RSMERR_LOCKS_NOT_SUPPORTED		28
#define RSMERR_LOCKS_NOT_ENABLED		29
#define RSMERR_REBIND_NOT_ALLOWED		30
#define RSMERR_INSUFFICIENT_RESOURCES		31
#define RSMERR_INSUFFICIENT_MEM			32
#define RSMERR_MAP_FAILED			33
#define RSMERR_POLLFD_IN_USE			34
#define RSMERR_BARRIER_UNINITIALIZED		35
#define RSMERR_BARRIER_OPEN_FAILED		36
#define RSMERR_BARRIER_NOT_OPENED		37
#define RSMERR_BARRIER_FAILURE			38
#define RSMERR_REMOTE_NODE_UNREACHABLE		39
#define RSMERR_CONN_ABORTED			40
#define RSMERR_INTERRUPTED			41
#define RSMERR_TIMEOUT				42
#define RSMERR_BAD_APPID			43
#define RSMERR_BAD_CONF				44
#define RSMERR_SEG_NOT_CONNECTED		45
#define RSMERR_INTERNAL_ERROR			100
#define RSMERR_UNSUPPORTED_OPERATION		127

/*
 * Segment id ranges. Ids up to RSM_OPS_ID_END belong to system components
 * and are refused (RSMERR_RESERVED_SEGID). The user-application range is
 * given out by publish when the id asked for is 0, never from a range the
 * segment id file reserves (rsm_get_segmentid_range()); asked for
 * explicitly, an id of it is accepted only inside such a range. It ends
 * at 0xFFFFFFFF (the seed's 0xFFFFFFF would lie below its own base).
 */
#define RSM_DRIVER_PRIVATE_ID_BASE	0
#define RSM_DRIVER_PRIVATE_ID_END	0x0FFFFF
#define RSM_CLUSTER_TRANSPORT_ID_BASE	0x100000
#define RSM_CLUSTER_TRANSPORT_ID_END	0x1FFFFF
#define RSM_RSMLIB_ID_BASE		0x200000
#define RSM_RSMLIB_ID_END		0x2FFFFF
#define RSM_DLPI_ID_BASE		0x300000
#define RSM_DLPI_ID_END			0x3FFFFF
#define RSM_HPC_ID_BASE			0x400000
#define RSM_HPC_ID_END			0x4FFFFF
#define RSM_OPS_ID_BASE			0x500000
#define RSM_OPS_ID_END			0x5FFFFF
#define RSM_USER_APP_ID_BASE		0x80000000u
#define RSM_USER_APP_ID_END		0xFFFFFFFFu

/* Permissions, as the owner digit of a file mode. */
#define RSM_PERM_NONE		0
#define RSM_PERM_READ		0400
#define RSM_PERM_WRITE		0200
#define RSM_PERM_RDWR		(RSM_PERM_READ | RSM_PERM_WRITE)

#define RSM_MAX_SGIOREQS	16

typedef enum {
	RSM_DAS8 = 1,
	RSM_DAS16 = 2,
	RSM_DAS32 = 4,
	RSM_DAS64 = 8
} rsm_access_size_t;

typedef uint64_t rsm_addr_t;
typedef uint32_t rsm_node_id_t;
typedef uint32_t rsm_memseg_id_t;
typedef uint32_t rsm_permission_t;

struct __rsm_memseg_import_handle;
typedef struct __rsm_memseg_import_handle *rsm_memseg_import_handle_t;
struct __rsm_memseg_export_handle;
typedef struct __rsm_memseg_export_handle *rsm_memseg_export_handle_t;
struct __rsm_localmemory_handle;
typedef struct __rsm_localmemory_handle *rsm_localmemory_handle_t;
struct __rsmapi_controller_handle;
typedef struct __rsmapi_controller_handle *rsmapi_controller_handle_t;

typedef enum {
	RSM_BARRIER_SEGMENT = 0x01,
	RSM_BARRIER_NODE = 0x02,
	RSM_BARRIER_SEGMENT_THREAD = 0x11,
	RSM_BARRIER_NODE_THREAD = 0x12
} rsm_barrier_type_t;

typedef enum {
	RSM_BARRIER_MODE_EXPLICIT,
	RSM_BARRIER_MODE_IMPLICIT
} rsm_barrier_mode_t;

typedef enum {
	RSM_MAP_NONE = 0x0,
	RSM_MAP_FIXED = 0x1,
	RSM_MAP_RESERVED = 0x2
} rsm_attribute_t;

typedef struct {
	uint_t attr_direct_access_sizes;
	uint_t attr_atomic_sizes;
	size_t attr_page_size;
	size_t attr_max_export_segment_size;
	size_t attr_tot_export_segment_size;
	ulong_t attr_max_export_segments;
	size_t attr_max_import_map_size;
	size_t attr_tot_import_map_size;
	ulong_t attr_max_import_segments;
} rsmapi_controller_attr_t;

typedef struct {
	rsm_node_id_t ae_node;		/**< node allowed to import */
	rsm_permission_t ae_permission;	/**< octal owner/group/other: 2, 4, 6 */
} rsmapi_access_entry_t;

typedef struct {
	void *seg;
	uint16_t gnum;
	void *privdata;
} rsmapi_barrier_t;

typedef struct {
	int io_type;			/**< RSM_HANDLE_TYPE or RSM_VA_TYPE */
	union {
		rsm_localmemory_handle_t handle;
		caddr_t vaddr;
	} local;
	size_t local_offset;
	size_t remote_offset;
	size_t transfer_length;
} rsm_iovec_t;

typedef struct {
	rsm_node_id_t local_nodeid;
	ulong_t io_request_count;	/**< 1..RSM_MAX_SGIOREQS */
	ulong_t io_residual_count;	/**< out: requests not done */
	uint_t flags;			/**< RSM_IMPLICIT_SIGPOST */
	rsm_memseg_import_handle_t remote_handle;
	rsm_iovec_t *iovec;
} rsm_scat_gath_t;

#define RSM_HANDLE_TYPE			0x01
#define RSM_VA_TYPE			0x02

/** rsm_memseg_export_create(): the segment may be rebound. */
#define RSM_ALLOW_REBIND		0x01
/** rsm_memseg_export_create(): do not wait for resources. */
#define RSM_CREATE_SEG_DONTWAIT		0x02

#define RSM_IMPLICIT_SIGPOST		0x01
#define RSM_SIGPOST_NO_ACCUMULATE	0x02

/* Topology: this node, its controller, and the nodes of DPDAT_RSM_NODES
 * (hardware address: the IPv4 address, network order). */
#ifndef MAXNAMELEN
#define MAXNAMELEN	256
#endif
#define RSM_CONNECTION_ACTIVE	3

typedef struct rsm_topology_hdr {
	rsm_node_id_t local_nodeid;
	uint_t local_cntlr_count;
} rsm_topology_hdr_t;

typedef struct rsm_connections_hdr {
	char cntlr_name[MAXNAMELEN];	/* <cntlr_type><unit> */
	rsm_addr_t local_hwaddr;
	int remote_cntlr_count;
} rsm_connections_hdr_t;

typedef struct rsm_remote_cntlr {
	rsm_node_id_t remote_nodeid;
	char remote_cntlrname[MAXNAMELEN];
	rsm_addr_t remote_hwaddr;
	uint_t connection_state;
} rsm_remote_cntlr_t;

typedef struct rsm_connection {
	rsm_connections_hdr_t hdr;
	rsm_remote_cntlr_t remote_cntlr[1];	/* remote_cntlr_count of them */
} rsm_connections_t;

typedef struct rsm_topology {
	rsm_topology_hdr_t topology_hdr;
	rsm_connections_t *connections[1];	/* local_cntlr_count of them */
} rsm_topology_t;

int rsm_get_interconnect_topology(rsm_topology_t **topology_data);
void rsm_free_interconnect_topology(rsm_topology_t *topology_data);

/**
 * The range of segment ids reserved for an application in the file
 * rsm.segmentid: DPDAT_RSM_SEGMENTID_FILE, else /etc/rsm/rsm.segmentid.
 * Each line is "appid baseid length" (numbers in C notation), '#' starts
 * a comment; every range lies in RSM_USER_APP_ID_BASE..RSM_USER_APP_ID_END.
 *
 * @param appid   the application id, compared exactly
 * @param baseid  out: the first id of the range
 * @param length  out: the number of ids
 * @return 0; RSMERR_BAD_ADDR when a pointer is NULL; RSMERR_BAD_CONF when
 *   the file cannot be read or a line of it is wrong (field count, numbers,
 *   a range that is empty, leaves the user-application range or overlaps
 *   another, an appid repeated); RSMERR_BAD_APPID when no line names
 *   appid; RSMERR_INSUFFICIENT_MEM.
 */
int rsm_get_segmentid_range(const char *appid, rsm_memseg_id_t *baseid,
			    uint32_t *length);

/* Controllers */
int rsm_get_controller(char *name, rsmapi_controller_handle_t *controller);
int rsm_get_controller_attr(rsmapi_controller_handle_t chdl,
			    rsmapi_controller_attr_t *attr);
int rsm_release_controller(rsmapi_controller_handle_t controller);

/* Export side */
int rsm_memseg_export_create(rsmapi_controller_handle_t controller,
			     rsm_memseg_export_handle_t *memseg,
			     void *vaddr, size_t size, uint_t flags);
int rsm_memseg_export_destroy(rsm_memseg_export_handle_t memseg);
int rsm_memseg_export_rebind(rsm_memseg_export_handle_t memseg,
			     void *vaddr, offset_t off, size_t size);
int rsm_memseg_export_publish(rsm_memseg_export_handle_t memseg,
			      rsm_memseg_id_t *segment_id,
			      rsmapi_access_entry_t access_list[],
			      uint_t access_list_length);
int rsm_memseg_export_unpublish(rsm_memseg_export_handle_t memseg);
int rsm_memseg_export_republish(rsm_memseg_export_handle_t memseg,
				rsmapi_access_entry_t access_list[],
				uint_t access_list_length);

/* Import side */
int rsm_memseg_import_connect(rsmapi_controller_handle_t controller,
			      rsm_node_id_t node_id,
			      rsm_memseg_id_t segment_id,
			      rsm_permission_t perm,
			      rsm_memseg_import_handle_t *im_memseg);
int rsm_memseg_import_disconnect(rsm_memseg_import_handle_t im_memseg);

int rsm_memseg_import_get8(rsm_memseg_import_handle_t im_memseg, off_t offset,
			   uint8_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_get16(rsm_memseg_import_handle_t im_memseg, off_t offset,
			    uint16_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_get32(rsm_memseg_import_handle_t im_memseg, off_t offset,
			    uint32_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_get64(rsm_memseg_import_handle_t im_memseg, off_t offset,
			    uint64_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_get(rsm_memseg_import_handle_t im_memseg, off_t offset,
			  void *dst_addr, size_t length);
int rsm_memseg_import_getv(rsm_scat_gath_t *sg_io);

int rsm_memseg_import_put8(rsm_memseg_import_handle_t im_memseg, off_t offset,
			   uint8_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_put16(rsm_memseg_import_handle_t im_memseg, off_t offset,
			    uint16_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_put32(rsm_memseg_import_handle_t im_memseg, off_t offset,
			    uint32_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_put64(rsm_memseg_import_handle_t im_memseg, off_t offset,
			    uint64_t *datap, ulong_t rep_cnt);
int rsm_memseg_import_put(rsm_memseg_import_handle_t im_memseg, off_t offset,
			  void *src_addr, size_t length);
int rsm_memseg_import_putv(rsm_scat_gath_t *sg_io);

/** Not possible without an interconnect: RSMERR_UNSUPPORTED_OPERATION. */
int rsm_memseg_import_map(rsm_memseg_import_handle_t im_memseg,
			  void **address, rsm_attribute_t attr,
			  rsm_permission_t perm, off_t offset, size_t length);
int rsm_memseg_import_unmap(rsm_memseg_import_handle_t im_memseg);

/* Barriers */
int rsm_memseg_import_init_barrier(rsm_memseg_import_handle_t im_memseg,
				   rsm_barrier_type_t type,
				   rsmapi_barrier_t *barrier);
int rsm_memseg_import_open_barrier(rsmapi_barrier_t *barrier);
int rsm_memseg_import_close_barrier(rsmapi_barrier_t *barrier);
int rsm_memseg_import_order_barrier(rsmapi_barrier_t *barrier);
int rsm_memseg_import_destroy_barrier(rsmapi_barrier_t *barrier);
int rsm_memseg_import_get_mode(rsm_memseg_import_handle_t im_memseg,
			       rsm_barrier_mode_t *mode);
int rsm_memseg_import_set_mode(rsm_memseg_import_handle_t im_memseg,
			       rsm_barrier_mode_t mode);

/* Signals */
int rsm_intr_signal_post(void *im_memseg, uint_t flags);
int rsm_intr_signal_wait(void *memseg, int timeout);
int rsm_memseg_get_pollfd(void *memseg, struct pollfd *fd);
int rsm_memseg_release_pollfd(void *memseg);

/* Local memory handles for rsm_memseg_import_getv/putv */
int rsm_create_localmemory_handle(rsmapi_controller_handle_t controller,
				  rsm_localmemory_handle_t *handle,
				  caddr_t vaddr, size_t length);
int rsm_free_localmemory_handle(rsmapi_controller_handle_t controller,
				rsm_localmemory_handle_t handle);

#ifdef __cplusplus
}
#endif

#endif /* DPDAT_RSMAPI_H */
