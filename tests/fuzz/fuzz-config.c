/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness for the config parser: any bytes, as a file's text.
 * Beyond "no crash, no leak" (the sanitizers' job) it checks the parser's
 * contract and aborts when it breaks: an error is reported iff the result
 * is -EINVAL, every message is "fuzz.conf:N: ..." with N a line of the
 * input, ret is untouched on failure, and a success holds only values
 * inside every key's documented range.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_config_state {
	unsigned nerrors;
	unsigned long max_line;
};

static void fuzz_config_error_cb(void *userdata, const char *message)
{
	struct fuzz_config_state *st = userdata;
	const char *prefix = "fuzz.conf:";
	char *end;
	unsigned long line;

	if (strncmp(message, prefix, strlen(prefix)) != 0)
		abort();
	line = strtoul(message + strlen(prefix), &end, 10);
	if (line < 1 || line > st->max_line || strncmp(end, ": ", 2) != 0 || !end[2])
		abort();
	st->nerrors++;
}

static void fuzz_config_check(const struct config *c)
{
	const struct config_daemon *d = &c->daemon;

	if (d->socket[0] != '/' || !memchr(d->socket, '\0', sizeof(d->socket)) ||
	    !memchr(d->socket_group, '\0', sizeof(d->socket_group)) ||
	    !memchr(c->topology.file, '\0', sizeof(c->topology.file)))
		abort();
	if (d->socket_mode > 0777 || d->log_level < LOG_ERR || d->log_level > LOG_DEBUG)
		abort();
	if (c->topology.shard != TOPO_SHARD_NODE && c->topology.shard != TOPO_SHARD_LLC)
		abort();
	if (c->placement.avoid_smt_siblings > CONFIG_SMT_ALWAYS || c->placement.claim_timeout_ms > 86400000)
		abort();
	if (c->moves.allow > CONFIG_MOVES_ROOT || c->moves.n_rt_groups > CONFIG_RT_GROUPS_MAX ||
	    c->moves.max_prio < 1 || c->moves.max_prio > 99 || c->moves.rebalance_interval_ms < 10 ||
	    c->moves.rebalance_interval_ms > 60000)
		abort();
	for (uint32_t i = 0; i < c->moves.n_rt_groups; i++)
		if (!c->moves.rt_groups[i][0] || !memchr(c->moves.rt_groups[i], '\0', CONFIG_GROUP_MAX))
			abort();
	if (c->notify.ring_records < 64 || c->notify.ring_records > 65536 ||
	    (c->notify.ring_records & (c->notify.ring_records - 1)))
		abort();
	if (c->limits.max_clients < 1 || c->limits.max_clients > 65536 || c->limits.max_claims_per_client < 1 ||
	    c->limits.max_claims_per_client > RTPLACE_MAX_CPUS || c->limits.max_claims_per_user < 1 ||
	    c->limits.max_claims_per_user > 65536 || c->limits.max_lease_ms < 1 || c->limits.max_lease_ms > 86400000)
		abort();
	if (c->containers.max_prio < 1 || c->containers.max_prio > 99 || c->containers.max_cpus < 1 ||
	    c->containers.max_cpus > CONFIG_CONTAINER_CPUS_MAX)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_config_state st = { 0, 1 };
	struct config *c, *sentinel;
	int r;

	for (size_t i = 0; i < size; i++)
		st.max_line += data[i] == '\n';
	c = malloc(sizeof(*c));
	sentinel = malloc(sizeof(*sentinel));
	if (!c || !sentinel)
		abort();
	memset(c, 0xa5, sizeof(*c));
	memcpy(sentinel, c, sizeof(*c));

	r = config_load_buffer("fuzz.conf", data, size, c, fuzz_config_error_cb, &st);
	if (r == 0) {
		if (st.nerrors)
			abort();
		fuzz_config_check(c);
	} else if (r == -EINVAL) {
		if (!st.nerrors || memcmp(c, sentinel, sizeof(*c)) != 0)
			abort();
	} else if (r != -ENOMEM) {
		abort();
	}
	free(c);
	free(sentinel);
	return 0;
}
