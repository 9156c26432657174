/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dpdat authors
 */

/*
 * libFuzzer harness for the parsers of user-supplied text, which come from
 * files and environments that any user may write:
 *   0  DPDAT_FAULT specs (dpdat_fault_parse)
 *   1  DAT ia_params (dat.conf lines, DPDAT_DAT_PARAMS)
 *   2  device arguments: dpdat's rewriting for the probe (port_devargs)
 *      and the lookup of key=value (port_devarg)
 *   3  DPDAT_* settings through their typed getters (lib/conf)
 * Input: one byte picks the parser (and, for 2 and 3, a key or a setting),
 * then the text (NUL-terminated here; at most 1500 bytes). Each parser's
 * output is checked for what it promises: a result that fits its buffer,
 * rates within 0..1, a value within the asked bounds.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dpdat/dpdat_env.h>
#include <dpdat/dpdat_port.h>

#include "dd_params.h"
#include "port_priv.h"

static void
check(int ok)
{
	if (!ok)
		abort();
}

static void
fault(const char *s)
{
	struct dpdat_fault_conf fc;

	if (dpdat_fault_parse(s, &fc) != 0)
		return;
	check(fc.rx.drop >= 0 && fc.rx.drop <= 1 && fc.tx.drop >= 0 &&
	      fc.tx.drop <= 1 && fc.rx.dup >= 0 && fc.rx.dup <= 1 &&
	      fc.rx.reorder >= 0 && fc.rx.reorder <= 1 &&
	      fc.rx.corrupt >= 0 && fc.rx.corrupt <= 1 &&
	      fc.tx.dup >= 0 && fc.tx.dup <= 1 && fc.tx.reorder >= 0 &&
	      fc.tx.reorder <= 1 && fc.tx.corrupt >= 0 &&
	      fc.tx.corrupt <= 1);
}

static void
ia_params(const char *s)
{
	struct dd_ia_conf c;

	if (dd_ia_params_parse(s, &c) != 0)
		return;
	check(c.device[0] != '\0' && strlen(c.device) < sizeof(c.device) &&
	      strlen(c.ipv4) < sizeof(c.ipv4) && strlen(c.eal) < sizeof(c.eal) &&
	      c.mtu <= 9600 && c.cpu >= -1);
}

static void
devargs(const char *s, uint8_t sel)
{
	static const char *const keys[] = { "role", "socket", "iface",
		"bsize", "socket-abstract", "xdp_prog", "", "=" };
	char out[512], exp[512], v[64];
	const char *r;

	/* the rewritten arguments keep the name part of the given ones,
	 * once "%l" and "%%" are expanded */
	if (port_devargs(s, (uint16_t)(576 + sel * 33), out, sizeof(out)) == 0)
		check(strlen(out) < sizeof(out) &&
		      port_devargs_expand(s, exp, sizeof(exp)) == 0 &&
		      strncmp(out, exp, strcspn(exp, ",")) == 0);
	if (port_devargs_expand(s, exp, sizeof(exp)) == 0)
		check(strlen(exp) <= strlen(s) + 5 * (strlen(s) / 2 + 1));
	r = port_devarg(s, keys[sel & 7], v, sizeof(v));
	check(r == NULL || (r == v && strlen(v) < sizeof(v)));
	r = port_devarg(s, keys[sel & 7], v, 1);
	check(r == NULL || v[0] == '\0');
}

static void
setting(const char *s, uint8_t sel)
{
	const struct dpdat_env_info *in;
	unsigned int n = 0;
	uint64_t u;
	bool b;

	while (dpdat_env_info(n) != NULL)
		n++;
	if (n == 0)
		return;
	in = dpdat_env_info(sel % n);
	if (setenv(in->name, s, 1) != 0)
		return;
	switch (in->type) {
	case DPDAT_ENV_UINT:
		if (dpdat_env_uint(in->name, 3, 1000, &u) == 0)
			check(u >= 3 && u <= 1000);
		break;
	case DPDAT_ENV_BOOL:
		dpdat_env_bool(in->name, &b);
		break;
	default: {
		/* the value, or when it is empty the default */
		const char *v = dpdat_env_str(in->name);

		check(s[0] != '\0' ? v != NULL && strcmp(v, s) == 0 :
		      v == in->def);
		break;
	}
	}
	unsetenv(in->name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[1501];
	uint8_t sel;

	if (size < 1 || size > sizeof(s))
		return 0;
	sel = data[0];
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (sel & 3) {
	case 0:
		fault(s);
		break;
	case 1:
		ia_params(s);
		break;
	case 2:
		devargs(s, sel >> 2);
		break;
	default:
		setting(s, sel >> 2);
		break;
	}
	return 0;
}
