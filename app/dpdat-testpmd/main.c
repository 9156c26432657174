/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * dpdat-testpmd: drive one dpdat device by hand or by script.
 *
 *   dpdat-testpmd [--role server|client] [--dev ARGS] [--ip ADDR] [--mtu N]
 *                 [--cmdline-file FILE] [-i] [--auto-start]
 *
 * --role picks the side of the embedded memif pair and its address
 * (server 198.18.0.1, client 198.18.0.2). Commands come from the file
 * first, then from the terminal (-i, or when stdin is a terminal), else
 * from stdin as a script. --auto-start runs the built-in demo of the role
 * and quits. In a script the first failing command ends the run with
 * status 1.
 */

#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_rdline.h>
#include <cmdline_socket.h>
#include <rte_cycles.h>
#include <rte_errno.h>

#include <dpdat/dpdat_env.h>

#include "testpmd.h"
#include "eal_args.h"

struct tp tp;

static struct {
	const char *role, *dev, *ip, *file, *sock;
	unsigned int mtu, cpu;
	bool interactive, auto_start, mtu_set, pin;
} o = { .role = "server", .mtu = 1500 };

/* The quick start's demo: what each side types, as a script. */
static const char *const demo_server[] = {
	"# server: register 4 MiB of hugepage memory, let the client in",
	"show port", "pz create", "lmr create 0 4M huge rw",
	"listen 18515", "wait link 30", "wait request 30", "accept 0 0",
	"wait established 10",
	"# the client writes 0x5a into our LMR, then sends 64 bytes of 0xa5",
	"recv 0 64 0xa5", "wait recv 30", "check 0 0 65536 0x5a",
	"# tell the client its data arrived intact",
	"send 0 16 0x3c", "show lmr", "wait disconnected 60", "show stats",
	"quit", NULL };
static const char *const demo_client[] = {
	"# client: register memory, connect, verified WRITE and READ, stream",
	"show port", "pz create", "lmr create 0 4M huge rw",
	"wait link 30", "connect 198.18.0.1 18515 0", "wait established 30",
	"show conn", "write 0 65536 0x5a", "read 0 65536 0x5a",
	"recv 0 16 0x3c", "send 0 64 0xa5", "wait recv 10",
	"stream 0 write 64K 64 5", "show qp 0",
	"show stats", "show neigh", "disconnect 0", "wait disconnected 10",
	"quit", NULL };

static void
usage(void)
{
	printf("usage: dpdat-testpmd [EAL arguments --] [--role server|client] "
	       "[--dev ARGS] [--ip ADDR]\n"
	       "                     [--mtu N] [--cpu N] [--socket PATH] "
	       "[--cmdline-file FILE] [-i]\n"
	       "                     [--auto-start]\n"
	       "  --role          side of the memif pair (server: 198.18.0.1, "
	       "client: .2)\n"
	       "  --dev           DPDK device arguments instead of the memif "
	       "pair: net_af_xdp0,iface=eth1,\n"
	       "                  net_af_packet0,iface=eth1, a PCI address "
	       "(named with -a before --)\n"
	       "  --ip            our IPv4 (beside the kernel: the interface's "
	       "own by default)\n"
	       "  --mtu           the port's MTU (1500; beside the kernel: the "
	       "interface's)\n"
	       "  --cpu           pin dpdat's engine thread to CPU N\n"
	       "  --socket        memif socket (/tmp/dpdat-testpmd.sock)\n"
	       "  --cmdline-file  run the commands of FILE first\n"
	       "  -i              then an interactive prompt\n"
	       "  --auto-start    run the built-in demo of the role and quit\n"
	       "  --help-env      the DPDAT_* environment settings\n"
	       "Type 'help' at the prompt for the commands.\n");
}

static void
parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "role", 1, NULL, 'r' }, { "dev", 1, NULL, 'd' },
		{ "ip", 1, NULL, 'a' }, { "mtu", 1, NULL, 'm' },
		{ "socket", 1, NULL, 's' }, { "cmdline-file", 1, NULL, 'f' },
		{ "interactive", 0, NULL, 'i' }, { "auto-start", 0, NULL, 'A' },
		{ "cpu", 1, NULL, 'C' },
		{ "help", 0, NULL, 'h' }, { "help-env", 0, NULL, 'E' },
		{ NULL, 0, NULL, 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "ih", lo, NULL)) != -1) {
		switch (c) {
		case 'r': o.role = optarg; break;
		case 'd': o.dev = optarg; break;
		case 'a': o.ip = optarg; break;
		case 'm': o.mtu = (unsigned int)strtoul(optarg, NULL, 0);
			o.mtu_set = true;
			break;
		case 'C': o.cpu = app_cpu_arg("dpdat-testpmd", optarg);
			o.pin = true;
			break;
		case 's': o.sock = optarg; break;
		case 'f': o.file = optarg; break;
		case 'i': o.interactive = true; break;
		case 'A': o.auto_start = true; break;
		case 'h': usage(); exit(0);
		case 'E': dpdat_env_help(stdout); exit(0);
		default: usage(); exit(2);
		}
	}
	if (optind != argc || (strcmp(o.role, "server") != 0 &&
			       strcmp(o.role, "client") != 0) ||
	    o.mtu < 576 || o.mtu > 9000) {
		fprintf(stderr, "dpdat-testpmd: bad arguments (role server or "
			"client, MTU 576..9000)\n");
		usage();
		exit(2);
	}
}

static int
open_dev(void)
{
	struct dpdat_eal_conf ec = { .program = "dpdat-testpmd",
				     .mem_mb = 512 };
	struct dpdat_dev_conf dc = { .progress = DPDAT_PROGRESS_THREAD };
	static char devargs[256];
	bool server = strcmp(o.role, "server") == 0;
	struct dpdat_port_info pi;
	char ip[INET_ADDRSTRLEN];

	app_eal_conf(&ec);
	if (dpdat_eal_init(&ec) < 0)
		return -1;
	if (o.dev == NULL) {
		snprintf(devargs, sizeof(devargs),
			 "net_memif0,role=%s,socket=%s", o.role,
			 o.sock ? o.sock : "/tmp/dpdat-testpmd.sock");
		o.dev = devargs;
	}
	dc.port.device = o.dev;
	dc.port.ipv4 = o.ip ? o.ip : server ? "198.18.0.1" : "198.18.0.2";
	dc.port.mtu = (uint16_t)o.mtu;
	/* beside the kernel (af_xdp, af_packet, a PCI NIC): the
	 * interface's own address and MTU unless told */
	if (o.dev != devargs && (strncmp(o.dev, "net_af_", 7) == 0 ||
				 strncmp(o.dev, "net_", 4) != 0)) {
		dc.port.ipv4 = o.ip ? o.ip : "auto";
		dc.port.mtu = o.mtu_set ? (uint16_t)o.mtu : 0;
	}
	dc.pin_cpu = o.pin;
	dc.cpu = o.cpu;
	/* a client may start first: its memif waits for the server */
	dc.port.link_wait_s = server ? 0 : 20;
	tp.dev = dpdat_dev_open(&dc);
	if (tp.dev == NULL) {
		fprintf(stderr, "dpdat-testpmd: %s: %s\n", o.dev,
			rte_strerror(rte_errno));
		return -1;
	}
	tp.eq = dpdat_cm_eq_create(tp.dev, 256);
	dpdat_port_query(dpdat_dev_port(tp.dev), &pi);
	printf("dpdat-testpmd: %s on %s, IPv4 %s, MTU %u, %s memory\n", o.role,
	       o.dev, inet_ntop(AF_INET, &pi.ipv4, ip, sizeof(ip)), pi.mtu,
	       dpdat_mem_mode_str(dpdat_eal_mem_mode()));
	return tp.eq != NULL ? 0 : -1;
}

/* Run one script line, echoed after the prompt as a person would type it. */
static int
script_line(const char *text)
{
	char line[4096];

	snprintf(line, sizeof(line), "%s", text);
	line[strcspn(line, "\r\n")] = '\0';
	if (line[0] == '#') {
		printf("%s\n", line);
		return 0;
	}
	if (line[strspn(line, " \t")] == '\0')
		return 0;
	printf("dpdat> %s\n", line);
	return tp_run_line(line);
}

static int
run_stream(FILE *f, const char *name)
{
	char line[4096];
	unsigned int n = 0;

	while (!tp.quit && fgets(line, sizeof(line), f) != NULL) {
		n++;
		if (script_line(line) != 0) {
			printf("dpdat-testpmd: %s line %u failed\n", name, n);
			return -1;
		}
	}
	return 0;
}

/* The prompt: keystrokes and events interleaved, events printed above. */
static void
interact(void)
{
	struct cmdline *cl = cmdline_stdin_new(
		(cmdline_parse_ctx_t *)tp_cmdline_ctx, "dpdat> ");

	if (cl == NULL) {
		fprintf(stderr, "dpdat-testpmd: no terminal\n");
		return;
	}
	while (!tp.quit && cmdline_poll(cl) != RDLINE_EXITED) {
		tp_events_poll();
		rte_delay_us_sleep(2000);
	}
	cmdline_stdin_exit(cl);
}

/* Orderly: connections first (the peer hears a DREQ), then memory. */
static void
shutdown_all(void)
{
	int i, open = 0;

	for (i = 0; i < TP_MAX_CONN; i++)
		if (tp.conn[i].state == TP_CONN_ESTABLISHED &&
		    dpdat_cm_disconnect(tp.conn[i].cm, NULL, 0) == 0) {
			tp.conn[i].state = TP_CONN_CLOSING;
			open++;
		}
	/* A peer that is gone never answers the DREQ: the CM gives up after
	 * about 6 s of retries and reports the disconnection then. */
	while (open > 0 && tp_events_wait_quiet(TP_EV_DISCONNECTED, 2) == 0)
		open--;
	if (open > 0)
		printf("quit: %d connection(s) not closed after 2 s (is the peer "
		       "gone?): waiting up to 7 s for the CM to give up\n",
		       open);
	while (open > 0 && tp_events_wait_quiet(TP_EV_DISCONNECTED, 7) == 0)
		open--;
	if (open > 0)
		printf("quit: %d connection(s) still open: closing anyway\n",
		       open);
	for (i = 0; i < TP_MAX_CONN; i++) {
		if (tp.conn[i].state != TP_CONN_FREE)
			tp_conn_release(&tp.conn[i]);
		if (tp.listener[i] != NULL)
			dpdat_cm_listen_free(tp.listener[i]);
	}
	for (i = 0; i < TP_MAX_RMR; i++)
		if (tp.rmr[i] != NULL)
			dpdat_rmr_free(tp.rmr[i]);
	for (i = 0; i < TP_MAX_LMR; i++)
		if (tp.lmr[i].lmr != NULL) {
			dpdat_lmr_free(tp.lmr[i].lmr);
			tp_lmr_mem_free(&tp.lmr[i]);
		}
	for (i = 0; i < TP_MAX_PZ; i++)
		if (tp.pz[i] != NULL)
			dpdat_pz_free(tp.pz[i]);
	/* the last CM answers leave before the link goes */
	rte_delay_us_sleep(300000);
	dpdat_cm_eq_free(tp.eq);
	dpdat_dev_close(tp.dev);
}

int
main(int argc, char **argv)
{
	int status = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	app_eal_split(&argc, &argv);
	parse(argc, argv);
	if (tp_cmdline_ctx_init() != 0 || open_dev() != 0)
		return 1;
	if (o.auto_start) {
		const char *const *s = strcmp(o.role, "server") == 0 ?
				       demo_server : demo_client;

		for (; *s != NULL && !tp.quit && status == 0; s++)
			status = script_line(*s);
	} else if (o.file != NULL) {
		FILE *f = fopen(o.file, "r");

		if (f == NULL) {
			perror(o.file);
			status = -1;
		} else {
			status = run_stream(f, o.file);
			fclose(f);
		}
	}
	if (status == 0 && !tp.quit && !o.auto_start) {
		if (o.interactive || (o.file == NULL && isatty(0)))
			interact();
		else if (o.file == NULL)
			status = run_stream(stdin, "stdin");
	}
	if (status != 0)
		printf("dpdat-testpmd: stopped at the first failure\n");
	shutdown_all();
	printf("dpdat-testpmd: bye\n");
	return status != 0;
}
