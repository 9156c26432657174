/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * dpdat-perf: perftest's tests. The test is the first argument (or argv[0]
 * ending in it): write_bw, write_lat, read_bw, read_lat, send_bw, send_lat.
 * The server runs without a peer address, the client is given the server's
 * and tells the server the test. Flags follow perftest:
 *   -s size  -a (all sizes 2..2^23)  -n iterations  -D seconds (bw)
 *   -q QPs (bw)  -t tx depth  -m PMTU  -p port  -b (bw, both ways)
 *   --report_gbits  --out_json [FILE]  --out_json_file=FILE
 * plus --transport dpdat|udp|verbs|raw|bare and, for dpdat, --dev, --ip, --mtu.
 * perftest's flags that mean nothing here (-x, -F, -R, -i, -d naming an
 * RDMA device) are taken with a note on stderr, so that a perftest
 * command line runs as it is.
 * This file: flags, banner, tables, percentiles and JSON; the transports
 * are in tr_*.c.
 */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <dpdat/dpdat_env.h>
#include <dpdat/dpdat_qp.h>

#include "perf.h"
#include "eal_args.h"

#define EXIT_USAGE	2
#define EXIT_NO_VERBS	3	/* verbs not built, or no RDMA device */
#define JSON_DEFAULT	"perftest_out.json"	/* perftest's --out_json */

/* Long options without a short one (past any character). */
enum {
	OPT_DEV = 256, OPT_IP, OPT_JSON_FILE, OPT_ENGINES, OPT_CLIENTS,
	OPT_WARMUP,
	OPT_ACK_HOLD,
};

static const char *const names[N_TESTS] = {
	"write_bw", "write_lat", "read_bw", "read_lat", "send_bw", "send_lat" };
/* perftest's names of the verbs, in its banner and its JSON */
static const char *const verbs[N_TESTS] = {
	"RDMA_Write", "RDMA_Write", "RDMA_Read", "RDMA_Read", "Send", "Send" };

static const struct perf_transport *const transports[] = {
	&perf_dpdat, &perf_udp, &perf_raw, &perf_bare,
#ifdef PERF_VERBS
	&perf_verbs,
#endif
};

struct perf_opts perf_opt = { .depth = 128, .pmtu = 0, .mtu = 0,
			      .service = 18515, .qps = 1 };
static const struct perf_transport *tr = &perf_dpdat;
static FILE *json;
static unsigned int json_rows;

__attribute__((noreturn)) static void
vdie(int status, const char *fmt, va_list ap)
{
	fprintf(stderr, "dpdat-perf: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, status == EXIT_USAGE ? " (dpdat-perf --help)\n" : "\n");
	exit(status);
}

void
perf_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(1, fmt, ap);
}

__attribute__((format(printf, 1, 2), noreturn)) static void
bad_arg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(EXIT_USAGE, fmt, ap);
}

static uint64_t
clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The clock of the measurements: the TSC where there is one (as
 * perftest's get_cycles), scaled by a calibration against the monotonic
 * clock at start. clock_gettime() took 14 % of an 8-byte write_bw client
 * here (a VM's vDSO), and a latency sample pays for one read. */
#if defined(__x86_64__)
static struct {
	uint64_t tsc0, ns0;
	double ns_per_tick;
} clk;

static void
clock_init(void)
{
	const struct timespec nap = { 0, 20000000 };
	uint64_t t1, n1;

	clk.ns0 = clock_ns();
	clk.tsc0 = __rdtsc();
	nanosleep(&nap, NULL);
	n1 = clock_ns();
	t1 = __rdtsc();
	clk.ns_per_tick = t1 > clk.tsc0 ? (double)(n1 - clk.ns0) /
					  (double)(t1 - clk.tsc0) : 0;
}

uint64_t
perf_now_ns(void)
{
	if (clk.ns_per_tick == 0)
		return clock_ns();
	return clk.ns0 + (uint64_t)((double)(__rdtsc() - clk.tsc0) *
				    clk.ns_per_tick);
}
#else
static void
clock_init(void)
{
}

uint64_t
perf_now_ns(void)
{
	return clock_ns();
}
#endif

void
perf_meter_start(struct perf_meter *m)
{
	*m = (struct perf_meter){ .t0 = perf_now_ns() };
	m->now = m->tl = m->t0;
}

void
perf_meter_tick(struct perf_meter *m, uint64_t done, uint32_t size)
{
	m->now = perf_now_ns();
	if (m->now - m->tl > 100000000ull && done > m->last) {
		double bw = (double)(done - m->last) * size /
			    ((double)(m->now - m->tl) / 1e9);

		m->peak = bw > m->peak ? bw : m->peak;
		m->tl = m->now;
		m->last = done;
	}
}

void
perf_meter_end(struct perf_meter *m, uint64_t done, uint32_t size,
	       struct perf_bw *res)
{
	res->iters = done;
	res->secs = (double)(perf_now_ns() - m->t0) / 1e9;
	res->peak = m->peak;
	if (res->peak < done * (double)size / res->secs)
		res->peak = done * (double)size / res->secs;
}

int
perf_params_check(const struct perf_params *pr)
{
	return pr->test >= N_TESTS || pr->size == 0 ||
	       pr->size > PERF_MAX_SIZE || pr->iters == 0 ||
	       pr->depth == 0 || pr->depth > PERF_MAX_DEPTH ||
	       pr->qps == 0 || pr->qps > PERF_MAX_QPS || pr->bidir > 1 ||
	       pr->warmup > PERF_MAX_WARMUP ||
	       (pr->bidir && perf_is_lat(pr->test)) ? -EINVAL : 0;
}

static void
usage(void)
{
	printf("usage: dpdat-perf [EAL arguments --] <test> [options] "
	       "[server address]\n"
	       "tests: write_bw write_lat read_bw read_lat send_bw send_lat\n"
	       "  -s, --size B          message size (bw 65536, lat 2)\n"
	       "  -a, --all             sizes 2 .. 2^23\n"
	       "  -n, --iters N         iterations (bw 5000, lat 1000)\n"
	       "      --warmup N        lat: N round trips before each size's\n"
	       "                        timed ones, not timed; above 4 KiB as\n"
	       "                        many as carry N x 4 KiB (%u; 0: none)\n"
	       "  -D, --duration S      bw: run S seconds instead\n"
	       "  -q, --qp N            bw: QPs, 1..1024 (verbs: 16) (1)\n"
	       "  -b, --bidirectional   bw: both sides stream at once, the\n"
	       "                        client reports the sum (dpdat, verbs)\n"
	       "  -t, --tx-depth N      work requests in flight a QP (128)\n"
	       "  -m, --mtu P           PMTU 256..4096 (the port's: 4096 over\n"
	       "                        memif, from the MTU beside the kernel)\n"
	       "  -l, --post_list N     bw: post N WRs a call (1)\n"
	       "  -Q, --cq-mod N        bw: signal one WR in N (as perftest: 100,\n"
	       "                        1 above 8 KiB, -l N with -l)\n"
	       "  -p, --port N          service (conn_qual) or UDP port (18515)\n"
	       "      --report_gbits    bandwidth in Gb/s\n"
	       "      --out_json [FILE] results as JSON, into FILE (a name\n"
	       "                        with a '/' or ending in .json), else\n"
	       "                        --out_json_file's or perftest_out.json\n"
	       "      --out_json_file=F the JSON's file (perftest's spelling;\n"
	       "                        implies --out_json)\n"
	       "      --transport T     dpdat (default), udp (kernel sockets),\n"
	       "                        verbs (kernel RDMA device), raw (the\n"
	       "                        frames of a WRITE, bare, over dpdat's\n"
	       "                        port: the link's baseline), bare\n"
	       "                        (write_lat: the same ping-pong on the\n"
	       "                        DPDK device's own bursts, no dpdat\n"
	       "                        port layer: the link's floor)\n"
	       "      --dev ARGS        dpdat: DPDK device (memif pair by default;\n"
	       "                        net_af_xdp0,iface=eth1; a PCI address)\n"
	       "      --ip ADDR         our IPv4 (dpdat: the interface's own on\n"
	       "                        af_xdp, af_packet and PCI NICs; memif:\n"
	       "                        198.18.0.1 server, .2 client)\n"
	       "      --port_mtu N      dpdat: the port's MTU (from the PMTU;\n"
	       "                        beside the kernel: the interface's)\n"
	       "      --cpu N           dpdat: run on CPU N (the engine polls\n"
	       "                        in this thread)\n"
	       "      --go-back-n       dpdat: never selective repeat (recover\n"
	       "                        loss as a peer that is not dpdat)\n"
	       "      --ack-hold NS     dpdat: an ACK waits up to NS ns for a\n"
	       "                        request to ride on, while the consumer\n"
	       "                        answers in time; 0: never (latency\n"
	       "                        tests 2000, bandwidth tests none)\n"
	       "      --engines N       dpdat, memif: N engines, one port queue\n"
	       "                        each, QP i on engine i mod N; give\n"
	       "                        both sides the same N (1)\n"
	       "      --clients N       dpdat server of write_bw or read_bw:\n"
	       "                        serve N clients at once (each its own\n"
	       "                        -q QPs and address); prints each\n"
	       "                        one's goodput and Jain's fairness\n"
	       "                        index (1)\n"
	       "      --help-env        the DPDAT_* environment settings\n"
	       "perftest's flags, taken so that its command lines run:\n"
	       "  -d, --ib-dev NAME     a DPDK device (net_..., a PCI address):\n"
	       "                        as --dev; an RDMA device name: ignored\n"
	       "  -x, --gid-index N     ignored: the GID is the port's IPv4\n"
	       "  -i, --ib-port N       ignored: a dpdat device has one port\n"
	       "  -F, --CPU-freq        ignored: no CPU frequency check to skip\n"
	       "  -R, --rdma_cm         ignored: dpdat connects with its own\n"
	       "                        in-band IB CM\n"
	       "  each says so on stderr (dpdat-perf: -x: ignored, ...)\n"
	       "EAL arguments (before --) go to DPDK: -l, -a, --file-prefix...\n",
	       PERF_WARMUP);
}

static uint32_t
number(const char *arg, const char *what, uint32_t min, uint32_t max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 0);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' ||
	    v < min || v > max)
		bad_arg("%s: '%s' is not a number in %u..%u", what, arg, min,
			max);
	return (uint32_t)v;
}

static void
pick_transport(const char *name)
{
	for (size_t k = 0; k < sizeof(transports) / sizeof(transports[0]); k++)
		if (strcmp(name, transports[k]->name) == 0) {
			tr = transports[k];
			return;
		}
	if (strcmp(name, "verbs") == 0) {
		fprintf(stderr, "dpdat-perf: --transport=verbs: not built: "
			"libibverbs-dev/librdmacm-dev missing\n");
		exit(EXIT_NO_VERBS);
	}
	bad_arg("--transport: '%s' is not dpdat, udp, raw, bare or verbs",
		name);
}

/* The test: argv[0] ending in its name (ib_write_bw style), or argv[1]. */
static int
pick_test(int argc, char **argv)
{
	const char *t = strrchr(argv[0], '/');
	int k;

	t = t ? t + 1 : argv[0];
	for (k = 0; k < N_TESTS; k++)
		if (strstr(t, names[k]) != NULL) {
			perf_opt.test = (enum perf_test)k;
			return 1;
		}
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage();
		exit(0);
	}
	if (argc > 1 && !strcmp(argv[1], "--help-env")) {
		dpdat_env_help(stdout);
		exit(0);
	}
	for (k = 0; argc > 1 && k < N_TESTS; k++)
		if (strcmp(argv[1], names[k]) == 0) {
			perf_opt.test = (enum perf_test)k;
			return 2;
		}
	bad_arg("%s: not a test (write_bw write_lat read_bw read_lat send_bw "
		"send_lat)", argc > 1 ? argv[1] : "no test");
}

/* A perftest flag that means nothing here: taken, and said so. */
static void
note(const char *flag, const char *why)
{
	fprintf(stderr, "dpdat-perf: %s: ignored, %s\n", flag, why);
}

/* perftest's -d names an RDMA device (mlx5_0), dpdat's --dev a DPDK one:
 * a vdev (net_...), devargs (a comma) or a PCI address. */
static int
dpdk_dev_name(const char *s)
{
	unsigned int a, b, c, d;
	char end;

	return strncmp(s, "net_", 4) == 0 || strchr(s, ',') != NULL ||
	       sscanf(s, "%x:%x:%x.%x%c", &a, &b, &c, &d, &end) == 4 ||
	       sscanf(s, "%x:%x.%x%c", &a, &b, &c, &end) == 3;
}

/* --out_json's optional value given apart (--out_json FILE, as dpdat-perf
 * always took it): a name no server address looks like. */
static int
json_name(const char *s)
{
	size_t n = strlen(s);

	return s[0] != '-' && (strchr(s, '/') != NULL ||
			       (n > 5 && strcmp(s + n - 5, ".json") == 0));
}

static void
option(int c, const char *arg)
{
	struct perf_opts *o = &perf_opt;

	switch (c) {
	case 's': o->size = number(arg, "-s", 1, PERF_MAX_SIZE); break;
	case 'a': o->all = 1; break;
	case 'n': o->iters = number(arg, "-n", 1, 100000000); break;
	case 'D': o->secs = number(arg, "-D", 1, 86400); break;
	case 'q': o->qps = number(arg, "-q", 1, PERF_MAX_QPS); break;
	case 'b': o->bidir = 1; break;
	case 't': o->depth = number(arg, "-t", 1, PERF_MAX_DEPTH); break;
	case 'm': o->pmtu = (uint16_t)number(arg, "-m", 256, 4096);
		if (o->pmtu & (o->pmtu - 1))
			bad_arg("-m: PMTU %s is not 256, 512, 1024, 2048 or "
				"4096", arg);
		break;
	case 'p': o->service = (uint16_t)number(arg, "-p", 1, 65535); break;
	case 'g': o->gbits = 1; break;
	case 'j': o->json = arg ? arg : o->json ? o->json : JSON_DEFAULT;
		break;
	case OPT_JSON_FILE: o->json = arg; break;
	case 'T': pick_transport(arg); break;
	case OPT_DEV: o->dev = arg; break;
	case OPT_IP: o->ip = arg; break;
	case OPT_ENGINES: o->engines = number(arg, "--engines", 1, 16); break;
	case OPT_CLIENTS: o->clients = number(arg, "--clients", 1,
					      PERF_MAX_CLIENTS);
		break;
	case OPT_ACK_HOLD: o->ack_hold_ns = number(arg, "--ack-hold", 0,
						   1000000);
		if (o->ack_hold_ns == 0)
			o->ack_hold_ns = DPDAT_ACK_HOLD_OFF;
		break;
	case OPT_WARMUP: o->warmup = number(arg, "--warmup", 0,
					    PERF_MAX_WARMUP);
		o->warmup_set = 1;
		break;
	case 'd': o->ibdev = arg; break;
	case 'x': note("-x", "dpdat's GID is the port's IPv4 (--ip)"); break;
	case 'i': note("-i", "a dpdat device has one port"); break;
	case 'F': note("-F", "dpdat-perf has no CPU frequency check to skip");
		break;
	case 'R': note("-R", "dpdat always connects with its own in-band IB "
		       "CM (no rdma_cm)");
		break;
	case 'M': o->mtu = (uint16_t)number(arg, "--port_mtu", 576, 9600);
		o->mtu_set = 1;
		break;
	case 'C': o->cpu = app_cpu_arg("dpdat-perf", arg); o->pin = 1; break;
	case 'G': o->gbn = 1; break;
	case 'l': o->post_list = number(arg, "-l", 1, PERF_MAX_DEPTH); break;
	case 'Q': o->cq_mod = number(arg, "--cq-mod", 1, 1024);
		o->cq_mod_set = 1;
		break;
	case 'h': usage(); exit(0);
	case 'E': dpdat_env_help(stdout); exit(0);
	}
}

/* -d and -b, once the transport is known. */
static void
after_perftest_flags(int lat)
{
	struct perf_opts *o = &perf_opt;
	int own_port = tr == &perf_dpdat || tr == &perf_raw ||
		       tr == &perf_bare;

	if (o->ibdev != NULL && own_port && dpdk_dev_name(o->ibdev) &&
	    o->dev == NULL)
		o->dev = o->ibdev;
	else if (o->ibdev != NULL)
		fprintf(stderr, "dpdat-perf: -d %s: ignored, %s\n", o->ibdev,
			!own_port ? "this transport picks its device by --ip" :
			o->dev != NULL ? "--dev names the device" :
			"not a DPDK device (net_..., a PCI address): dpdat "
			"runs on --dev, a memif pair by default");
	if (o->bidir && lat)
		bad_arg("-b: bidirectional is for the bandwidth tests, as "
			"perftest");
	if (o->bidir && (tr == &perf_udp || tr == &perf_raw ||
			 tr == &perf_bare)) {
		fprintf(stderr, "dpdat-perf: -b: ignored, --transport=%s runs "
			"one way\n", tr->name);
		o->bidir = 0;
	}
}

/* -l and --cq-mod settled as perftest does: signal one WR in 100, but
 * every one above 8 KiB (one -s; -a keeps 100), and one a list with -l;
 * never more than -t; a list a multiple of the moderation. */
static void
signalling(struct perf_opts *o, int lat)
{
	if (o->post_list == 0)
		o->post_list = 1;
	if (lat) {
		if (o->post_list > 1)
			bad_arg("-l: post lists are for bandwidth tests, as "
				"perftest");
		return;
	}
	if (o->post_list > o->depth)
		bad_arg("-l %u: more than -t %u", o->post_list, o->depth);
	if (!o->cq_mod_set)
		o->cq_mod = o->post_list > 1 ? o->post_list :
			    o->size > 8192 && !o->all ? 1 : 100;
	o->cq_mod = perf_min(o->cq_mod, o->depth);
	if (o->post_list > 1 && o->post_list % o->cq_mod != 0)
		bad_arg("-l %u: not a multiple of --cq-mod %u", o->post_list,
			o->cq_mod);
	if (!o->server && !o->secs && o->iters % o->post_list != 0)
		bad_arg("-n %u: not a multiple of -l %u", o->iters,
			o->post_list);
	if ((tr == &perf_udp || tr == &perf_raw || tr == &perf_bare) &&
	    (o->post_list > 1 || o->cq_mod_set))
		fprintf(stderr, "dpdat-perf: --transport=%s has no work "
			"requests: -l and --cq-mod do nothing\n", tr->name);
}

static void
parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "size", 1, NULL, 's' }, { "all", 0, NULL, 'a' },
		{ "iters", 1, NULL, 'n' }, { "duration", 1, NULL, 'D' },
		{ "qp", 1, NULL, 'q' }, { "tx-depth", 1, NULL, 't' },
		{ "mtu", 1, NULL, 'm' }, { "port", 1, NULL, 'p' },
		{ "report_gbits", 0, NULL, 'g' }, { "out_json", 2, NULL, 'j' },
		{ "transport", 1, NULL, 'T' }, { "dev", 1, NULL, OPT_DEV },
		{ "ip", 1, NULL, OPT_IP }, { "port_mtu", 1, NULL, 'M' },
		{ "cpu", 1, NULL, 'C' }, { "go-back-n", 0, NULL, 'G' },
		{ "engines", 1, NULL, OPT_ENGINES },
		{ "clients", 1, NULL, OPT_CLIENTS },
		{ "warmup", 1, NULL, OPT_WARMUP },
		{ "ack-hold", 1, NULL, OPT_ACK_HOLD },
		{ "help", 0, NULL, 'h' }, { "help-env", 0, NULL, 'E' },
		/* perftest's, for its command lines */
		{ "bidirectional", 0, NULL, 'b' },
		{ "out_json_file", 1, NULL, OPT_JSON_FILE },
		{ "ib-dev", 1, NULL, 'd' }, { "gid-index", 1, NULL, 'x' },
		{ "ib-port", 1, NULL, 'i' }, { "CPU-freq", 0, NULL, 'F' },
		{ "rdma_cm", 0, NULL, 'R' },
		{ "post_list", 1, NULL, 'l' }, { "cq-mod", 1, NULL, 'Q' },
		{ NULL, 0, NULL, 0 } };
	struct perf_opts *o = &perf_opt;
	int c, lat;

	optind = pick_test(argc, argv);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "s:an:D:q:t:m:p:hbd:x:i:FRl:Q:",
				lo, NULL)) != -1) {
		if (c == '?')
			bad_arg("%s: unknown option or missing value",
				argv[optind - 1]);
		if (c == 'j' && optarg == NULL && optind < argc &&
		    json_name(argv[optind]))
			optarg = argv[optind++];
		option(c, optarg);
	}
	if (optind + 1 < argc)
		bad_arg("one server address at most ('%s' too)", argv[optind + 1]);
	o->peer = optind < argc ? argv[optind] : NULL;
	o->server = o->peer == NULL;
	lat = perf_is_lat(o->test);
	if (o->clients > 1 && (!o->server || tr != &perf_dpdat || o->bidir ||
			       (o->test != W_BW && o->test != R_BW)))
		bad_arg("--clients: for a dpdat server of write_bw or read_bw, "
			"one way");
	if (lat && o->qps > 1)
		bad_arg("-q %u: latency tests run on one QP, as perftest", o->qps);
	if (lat && o->secs)
		bad_arg("-D: latency tests count iterations (-n)");
	if (!lat && o->warmup_set)
		bad_arg("--warmup: for the latency tests (bandwidth tests "
			"measure a steady stream)");
	if (lat && !o->warmup_set)
		o->warmup = PERF_WARMUP;
	after_perftest_flags(lat);
	if (tr == &perf_raw && o->test != W_BW && o->test != W_LAT)
		bad_arg("--transport=raw: write_bw and write_lat only (the "
			"frames of a WRITE)");
	if (tr == &perf_bare && o->test != W_LAT)
		bad_arg("--transport=bare: write_lat only (the bandwidth "
			"baseline is --transport=raw)");
	if ((tr == &perf_bare || tr == &perf_raw) && o->engines > 1)
		bad_arg("--engines: --transport=%s runs on queue 0 alone",
			tr->name);
	if (o->qps > tr->max_qps)
		bad_arg("-q %u: --transport=%s has %u QP%s at most", o->qps,
			tr->name, tr->max_qps, tr->max_qps > 1 ? "s" : "");
	if (o->size == 0)
		o->size = lat ? 2 : 65536;
	if (o->iters == 0)
		o->iters = lat ? 1000 : 5000;
	signalling(o, lat);
	/* -m P alone: a port MTU that carries P (0: the port's own) */
	if (o->pmtu != 0 && o->mtu < o->pmtu + 64)
		o->mtu = (uint16_t)(o->pmtu + 64 > 1500 ? o->pmtu + 104 : 1500);
}

static const char *
line(void)
{
	return "---------------------------------------------------------------"
	       "------------------------";
}

/* perftest's title: "RDMA_Write Bidirectional BW Test"; sep "_" for JSON */
static const char *
title(const struct perf_params *pr, char sep)
{
	static char t[64];

	snprintf(t, sizeof(t), "%s %s%s Test", verbs[pr->test],
		 pr->bidir ? "Bidirectional " : "",
		 perf_is_lat(pr->test) ? "Latency" : "BW");
	for (char *c = t; *c != '\0'; c++)
		*c = *c == ' ' ? sep : *c;
	return t;
}

/* One "local address" line a QP; with many QPs the first and the last. */
static void
local_lines(const struct perf_info *in)
{
	int n = in->nlocal, q;

	for (q = 0; q < n; q++) {
		if (n > PERF_BANNER_QPS && q == PERF_BANNER_QPS / 2) {
			printf(" local address: ... %d QPs more, as these ...\n",
			       n - PERF_BANNER_QPS);
			q = n - PERF_BANNER_QPS / 2;
		}
		printf(" local address: %s\n", in->local[q]);
	}
}

static void
banner(const struct perf_params *pr, const struct perf_info *in)
{
	printf("%s\n%*s%s\n", line(), 20, "", title(pr, ' '));
	printf(" Dual-port       : OFF\t\tDevice         : %s\n", in->dev);
	printf(" Number of qps   : %u\t\tTransport type : %s\n", pr->qps,
	       in->type);
	printf(" Connection type : %s\t\tUsing SRQ      : OFF\n",
	       strcmp(tr->name, "udp") ? "RC" : "UDP");
	printf(" TX depth        : %u\n", perf_is_lat(pr->test) ? 1 : pr->depth);
	if (perf_is_lat(pr->test))
		printf(" Warm-up         : %u round trips a size, not timed "
		       "(fewer above 4 KiB)\n", pr->warmup);
	if (perf_opt.post_list > 1)
		printf(" Post List       : %u\n", perf_opt.post_list);
	if (!perf_is_lat(pr->test) && !perf_opt.server)
		printf(" CQ Moderation   : %u\n", perf_opt.cq_mod);
	printf(" Mtu             : %u[B]\n", in->mtu);
	printf(" Link type       : Ethernet\n");
	printf(" Max inline data : 0[B]\n");
	printf(" rdma_cm QPs\t : %s\n", in->cm);
	printf(" Data ex. method : %s\n%s\n", in->exchange, line());
	local_lines(in);
	printf("%s\n", line());
}

static void
table_header(const struct perf_params *pr)
{
	const char *u = perf_opt.gbits ? "Gb/sec" : "MiB/sec";

	if (!perf_is_lat(pr->test))
		printf(" #bytes     #iterations    BW peak[%s]    "
		       "BW average[%s]   MsgRate[Mpps]\n", u, u);
	else
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  "
		       "t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
		       "99%% percentile[usec]   99.9%% percentile[usec]\n");
}

/* The inside of a JSON string: s, with what JSON escapes escaped. */
static void
json_str_body(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s == '"' || *s == '\\')
			fprintf(json, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(json, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, json);
}

/* "key": "s", */
static void
json_str(const char *key, const char *s)
{
	fprintf(json, "\"%s\": \"", key);
	json_str_body(s);
	fprintf(json, "\", ");
}

/* perftest's "test_info", as its --out_json writes it. */
static void
json_test_info(const struct perf_params *pr, const struct perf_info *in)
{
	fprintf(json, "\"test_info\": {");
	json_str("test", title(pr, '_'));
	json_str("Dual_port", "OFF");
	json_str("Device", in->dev);
	fprintf(json, "\"Number_of_qps\": %u, ", pr->qps);
	json_str("Transport_type", in->type);
	json_str("Connection_type", strcmp(tr->name, "udp") ? "RC" : "UDP");
	json_str("Using_SRQ", "OFF");
	fprintf(json, "\"TX_depth\": %u, \"Mtu\": %u, ",
		perf_is_lat(pr->test) ? 1 : pr->depth, in->mtu);
	json_str("Link_type", "Ethernet");
	fprintf(json, "\"Max_inline_data\": 0, ");
	json_str("rdma_cm_QPs", in->cm);
	fprintf(json, "\"Data_ex_method\": \"");
	json_str_body(in->exchange);
	fprintf(json, "\"}, ");
}

/* dpdat's keys first (bench.sh and the tests read them), then perftest's
 * test_info; each row has both dpdat's figures and perftest's. */
static void
json_open(const struct perf_params *pr, const struct perf_info *in)
{
	if (perf_opt.json == NULL)
		return;
	json = fopen(perf_opt.json, "w");
	if (json == NULL)
		perf_die("cannot write %s: %s", perf_opt.json, strerror(errno));
	fprintf(json, "{\"test\": \"%s\", \"transport\": \"%s\", \"qps\": %u, "
		"\"bidirectional\": %s, ", names[pr->test], tr->name, pr->qps,
		pr->bidir ? "true" : "false");
	json_test_info(pr, in);
	if (!perf_is_lat(pr->test))
		fprintf(json, "\"post_list\": %u, \"cq_mod\": %u, ",
			perf_opt.post_list, perf_opt.cq_mod);
	else
		fprintf(json, "\"warmup\": %u, ", pr->warmup);
	fprintf(json, "\"results\": [");
}

static void
json_close(void)
{
	if (json == NULL)
		return;
	fprintf(json, "]}\n");
	if (fclose(json) != 0)
		perf_die("cannot write %s", perf_opt.json);
}

/* perftest's bandwidth row; with -b the two streams' sum, as perftest
 * (its #iterations: this side's). */
static void
bw_row(const struct perf_params *pr, uint32_t size, const struct perf_bw *r)
{
	double scale = perf_opt.gbits ? 8 / 1e9 : 1.0 / (1 << 20);
	double own = (double)r->iters * size / r->secs;
	double avg = own + r->peer_avg, peak = r->peak + r->peer_peak;
	double rate = ((double)r->iters / r->secs + r->peer_rate) / 1e6;

	printf(" %-10u %-14lu %-19.2f %-21.2f %.6f\n", size,
	       (unsigned long)r->iters, peak * scale, avg * scale, rate);
	if (json == NULL)
		return;
	fprintf(json, "%s{\"bytes\": %u, \"iterations\": %lu, "
		"\"bw_peak_mib\": %.3f, \"bw_avg_mib\": %.3f, "
		"\"msg_rate_mpps\": %.6f", json_rows++ ? ", " : "", size,
		(unsigned long)r->iters, peak / (1 << 20), avg / (1 << 20),
		rate);
	if (pr->bidir)
		fprintf(json, ", \"bw_avg_mib_client\": %.3f, "
			"\"bw_avg_mib_server\": %.3f", own / (1 << 20),
			r->peer_avg / (1 << 20));
	if (tr == &perf_udp)
		fprintf(json, ", \"lost_datagrams\": %lu",
			(unsigned long)r->lost);
	fprintf(json, ", \"MsgSize\": %u, \"n_iterations\": %lu, "
		"\"BW_peak\": %.2f, \"BW_average\": %.2f, \"MsgRate\": %.6f}",
		size, (unsigned long)r->iters, peak * scale, avg * scale, rate);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* perftest's latency row: ping-pongs report half the round trip. */
static void
lat_row(const struct perf_params *pr, uint32_t size, double *rtt)
{
	uint32_t n = pr->iters;
	double sum = 0, sq = 0, avg, sd;

	for (uint32_t i = 0; i < n; i++) {
		if (pr->test != R_LAT)
			rtt[i] /= 2;
		sum += rtt[i];
		sq += rtt[i] * rtt[i];
	}
	qsort(rtt, n, sizeof(double), cmp_double);
	avg = sum / n;
	sd = sqrt(fmax(sq / n - avg * avg, 0.0));
	double p99 = rtt[(size_t)(n * 0.99)], p999 = rtt[(size_t)(n * 0.999)];

	printf(" %-7u %-10u %-13.2f %-13.2f %-15.2f %-13.2f %-15.2f %-22.2f "
	       "%.2f\n", size, n, rtt[0], rtt[n - 1], rtt[n / 2], avg, sd, p99,
	       p999);
	if (json == NULL)
		return;
	fprintf(json, "%s{\"bytes\": %u, \"iterations\": %u, "
		"\"t_min_us\": %.3f, \"t_max_us\": %.3f, "
		"\"t_typical_us\": %.3f, \"t_avg_us\": %.3f, "
		"\"t_stdev_us\": %.3f, \"p99_us\": %.3f, "
		"\"p999_us\": %.3f", json_rows++ ? ", " : "", size, n,
		rtt[0], rtt[n - 1], rtt[n / 2], avg, sd, p99, p999);
	fprintf(json, ", \"MsgSize\": %u, \"n_iterations\": %u, "
		"\"t_min\": %.2f, \"t_max\": %.2f, \"t_typical\": %.2f, "
		"\"t_avg\": %.2f, \"t_stdev\": %.2f, \"percentile_99\": %.2f, "
		"\"percentile_99.9\": %.2f}", size, n, rtt[0], rtt[n - 1],
		rtt[n / 2], avg, sd, p99, p999);
}

static void
run_client(const struct perf_params *pr)
{
	double *rtt = NULL;
	struct perf_bw r = { .iters = 0 };	/* peer_*: 0 but with -b */

	table_header(pr);
	if (perf_is_lat(pr->test)) {
		rtt = calloc(pr->iters, sizeof(double));
		if (rtt == NULL)
			perf_die("no memory for %u samples", pr->iters);
	}
	for (uint32_t size = perf_first_size(pr); size != 0;
	     size = perf_next_size(pr, size)) {
		if (rtt == NULL) {
			tr->bw(pr, size, &r);
			bw_row(pr, size, &r);
		} else {
			tr->lat(pr, size, rtt);
			lat_row(pr, size, rtt);
		}
	}
	free(rtt);
}

int
main(int argc, char **argv)
{
	static struct perf_info info;	/* a line a QP: up to 96 KiB */
	struct perf_opts *o = &perf_opt;
	struct perf_params pr;

	setvbuf(stdout, NULL, _IOLBF, 0);
	app_eal_split(&argc, &argv);
	parse(argc, argv);
	clock_init();
	tr->setup();
	pr = (struct perf_params){ .test = o->test, .size = o->size,
		.iters = o->iters, .depth = o->depth, .all = (uint32_t)o->all,
		.secs = o->secs, .qps = o->qps, .bidir = (uint32_t)o->bidir,
		.warmup = o->warmup };
	if (o->server)
		printf("\n************************************\n"
		       "* Waiting for client to connect... *\n"
		       "************************************\n");
	tr->connect(&pr, &info);
	banner(&pr, &info);
	if (o->server) {
		tr->serve(&pr);
	} else {
		json_open(&pr, &info);
		run_client(&pr);
	}
	printf("%s\n", line());
	json_close();
	tr->finish();
	return 0;
}
