/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness for the claims state file's parser: any bytes, as a
 * journal's text. Beyond "no crash, no leak" (the sanitizers' job) it
 * checks the parser's contract and aborts when it breaks: a failure says
 * "line N: ...", a success holds only claims that the table takes back
 * under their ids, and those, written out again, read back the same.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "claims-state.h"

/* The journal's CPU lists name CPUs below this (the table keeps fewer). */
#define FUZZ_NCPUS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Restores v into a fresh table, formats it and parses that again: the
 * same claims must come back. */
static void fuzz_claims_state_round_trip(const struct claim *v, size_t n, uint32_t next_id)
{
	struct claim *again = calloc(n ? n : 1, sizeof(*again));
	struct rtplace_reason reason;
	struct claims *c;
	size_t len = 4096, m;
	uint32_t next;
	char *buf = NULL;
	int r;

	if (!again || claims_new(FUZZ_NCPUS, &c) < 0)
		abort();
	for (size_t i = 0; i < n; i++)
		if (claims_restore(c, &v[i], next_id) < 0)
			abort();
	do {
		free(buf);
		len *= 2;
		buf = malloc(len);
		if (!buf)
			abort();
	} while ((r = claims_state_format(c, claims_next_id(c), 0, buf, len)) == -ENOSPC);
	if (r < 0 || claims_state_parse(buf, (size_t)r, again, n ? n : 1, &m, &next, &reason) < 0 || m != n ||
	    next != claims_next_id(c))
		abort();
	for (size_t i = 0; i < m; i++) {
		const struct claim *o = claims_find(c, again[i].id);

		if (!o || o->pid != again[i].pid || o->pid_start != again[i].pid_start || o->uid != again[i].uid ||
		    o->level != again[i].level || o->expires_ms != again[i].expires_ms ||
		    !cpuset_equal(&o->cpus, &again[i].cpus))
			abort();
	}
	claims_free(c);
	free(again);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct rtplace_reason reason;
	struct claim *v;
	size_t max = 1, n;
	uint32_t next_id;
	int r;

	for (size_t i = 0; i < size; i++)
		max += data[i] == '\n';
	v = calloc(max, sizeof(*v));
	if (!v)
		abort();
	r = claims_state_parse(text, size, v, max, &n, &next_id, &reason);
	if (r < 0 && (r != -EBADMSG || strncmp(reason.text, "line ", 5) != 0))
		abort();
	if (r == 0) {
		bool fits = true;

		if (n > max)
			abort();
		for (size_t i = 0; i < n; i++) {
			if (!v[i].id || v[i].pid <= 0 || cpuset_empty(&v[i].cpus))
				abort();
			fits = fits && cpuset_next(&v[i].cpus, FUZZ_NCPUS) < 0;
		}
		/* The table takes CPUs it knows; a claim on others is one a
		 * smaller machine reads back but counts nowhere. */
		if (fits)
			fuzz_claims_state_round_trip(v, n, next_id);
	}
	(void)claims_state_salvage_next_id(text, size);
	free(v);
	return 0;
}
