/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "dat_main.h"
#include "unit_run.h"

static char sock_path[64];

void
dat_test_main(int argc, char **argv, const char *tag, CU_SuiteInfo *suites)
{
	const char *override = getenv("DAT_OVERRIDE");
	char params[256];
	int failed;

	if (argc < 2) {
		fprintf(stderr, "usage: %s <dat.conf>\n", argv[0]);
		exit(2);
	}
	if (override == NULL || strcmp(override, argv[1]) != 0) {
		setenv("DAT_OVERRIDE", argv[1], 1);
		execv("/proc/self/exe", argv);
		perror("execv");
		exit(2);
	}
	snprintf(sock_path, sizeof(sock_path), "/tmp/dpdat-%s-%d.sock", tag,
		 (int)getpid());
	snprintf(params, sizeof(params),
		 "device=net_memif0,role=server,socket=%s ipv4=198.18.0.1",
		 sock_path);
	setenv("DPDAT_DAT_PARAMS", params, 1);
	failed = unit_run(suites);
	unlink(sock_path);
	/* exit handlers run (LeakSanitizer's among them); the plug-in
	 * itself leaves its devices open to the end of the process */
	exit(failed != 0);
}

DAT_EVENT_NUMBER
dat_test_next_event(DAT_EVD_HANDLE e, DAT_EVENT *ev, DAT_TIMEOUT us)
{
	DAT_COUNT more;

	memset(ev, 0, sizeof(*ev));
	if (dat_evd_wait(e, us, 1, ev, &more) != DAT_SUCCESS)
		return 0;
	return ev->event_number;
}

static DAT_EVENT_NUMBER
wait_event(DAT_EVD_HANDLE e, DAT_EVENT *ev)
{
	return dat_test_next_event(e, ev, DAT_TEST_WAIT_US);
}

DAT_RETURN
dat_test_evd(DAT_IA_HANDLE ia, DAT_COUNT qlen, DAT_EVD_FLAGS flags,
	     DAT_EVD_HANDLE *e)
{
	return dat_evd_create(ia, qlen, DAT_HANDLE_NULL, flags, e);
}

int
dat_test_ia_pzs(DAT_IA_HANDLE *ia, DAT_EVD_HANDLE *async, DAT_PZ_HANDLE *pz1,
		DAT_PZ_HANDLE *pz2)
{
	if (dat_ia_open("dpdat0", 8, async, ia) != DAT_SUCCESS ||
	    dat_pz_create(*ia, pz1) != DAT_SUCCESS ||
	    dat_pz_create(*ia, pz2) != DAT_SUCCESS)
		return -1;
	return 0;
}

int
dat_test_ia_pzs_close(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz1, DAT_PZ_HANDLE pz2)
{
	DAT_RETURN r;
	int bad = 0;

	r = dat_pz_free(pz1);
	if (r != DAT_SUCCESS)
		printf("\n  dat_pz_free: %s", dat_test_ret_str(r)), bad = 1;
	r = dat_pz_free(pz2);
	if (r != DAT_SUCCESS)
		printf("\n  dat_pz_free: %s", dat_test_ret_str(r)), bad = 1;
	/* the provider closes the IA even when it answers otherwise */
	r = dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG);
	if (r != DAT_SUCCESS && DAT_GET_TYPE(r) != DAT_PROVIDER_NOT_FOUND)
		printf("\n  dat_ia_close: %s", dat_test_ret_str(r)), bad = 1;
	return bad ? -1 : 0;
}

int
dat_test_connect(DAT_EP_HANDLE cep, DAT_EP_HANDLE sep, DAT_CONN_QUAL qual,
		 DAT_EVD_HANDLE s_cr, DAT_EVD_HANDLE s_conn,
		 DAT_EVD_HANDLE c_conn)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	DAT_EVENT ev;
	int tries;

	inet_pton(AF_INET, "198.18.0.1", &sin.sin_addr);
	/* the memif link may come up after the first request */
	for (tries = 0; tries < 3; tries++) {
		EXPECT(dat_ep_connect(cep, (DAT_IA_ADDRESS_PTR)&sin, qual,
				      10 * 1000 * 1000, 0, NULL,
				      /* any class is taken (as OFA DAPL) */
				      DAT_QOS_LOW_LATENCY |
				      DAT_QOS_HIGH_THROUGHPUT,
				      DAT_CONNECT_DEFAULT_FLAG), DAT_SUCCESS);
		if (wait_event(s_cr, &ev) == DAT_CONNECTION_REQUEST_EVENT)
			break;
		wait_event(c_conn, &ev);	/* most likely unreachable */
		dat_ep_reset(cep);
	}
	if (tries == 3 ||
	    dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle,
			  sep, 0, NULL) != DAT_SUCCESS ||
	    wait_event(s_conn, &ev) != DAT_CONNECTION_EVENT_ESTABLISHED ||
	    wait_event(c_conn, &ev) != DAT_CONNECTION_EVENT_ESTABLISHED)
		return -1;
	return 0;
}

const char *
dat_test_ret_str(DAT_RETURN r)
{
	static char s[160];
	const char *major = "?", *minor = "";

	dat_strerror(r, &major, &minor);
	snprintf(s, sizeof(s), "%s %s (0x%08x)", major, minor, r);
	return s;
}

DAT_RETURN
dat_test_open_client(DAT_IA_HANDLE *ia)
{
	DAT_EVD_HANDLE async = DAT_EVD_ASYNC_EXISTS;	/* none needed */
	const char *env = getenv("DPDAT_DAT_PARAMS");
	char *server = strdup(env != NULL ? env : ""), params[256];
	DAT_RETURN r;

	if (server == NULL)
		return DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY;
	snprintf(params, sizeof(params),
		 "device=net_memif1,role=client,socket=%s ipv4=198.18.0.2",
		 sock_path);
	setenv("DPDAT_DAT_PARAMS", params, 1);
	r = dat_ia_open("dpdat1", 8, &async, ia);
	setenv("DPDAT_DAT_PARAMS", server, 1);
	free(server);
	return r;
}
