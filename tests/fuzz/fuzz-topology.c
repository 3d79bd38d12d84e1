/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness for the topology loader (common/topo.h): any bytes, as
 * the hwloc XML that `rtplaced --topology` reads. libxml2, the checks
 * made before hwloc reads the text, and hwloc's own parser are fuzzed with
 * it, since that is what outside input reaches.
 * Beyond "no crash, no leak" (the sanitizers' job) it checks the loader's
 * contract: a failure is -EINVAL, -E2BIG or -ENOMEM with a reason naming
 * the input; a success is a snapshot inside RTPLACE_MAX_CPUS whose online
 * CPUs all have a place.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

#define FUZZ_TOPOLOGY_NAME "fuzz.xml"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reason names the input, as the daemon logs it. */
static bool fuzz_topology_named(const struct rtplace_reason *reason)
{
	return strncmp(reason->text, "cannot load " FUZZ_TOPOLOGY_NAME ": ", 12 + strlen(FUZZ_TOPOLOGY_NAME) + 2) == 0 ||
	       strncmp(reason->text, FUZZ_TOPOLOGY_NAME " has CPU ids up to ", strlen(FUZZ_TOPOLOGY_NAME) + 19) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rtplace_reason reason = { "" };
	struct topo *t = NULL;
	char *xml = malloc(size + 1);
	int r;

	if (!xml)
		abort();
	/* hwloc's warnings about bad input would flood the fuzzer's output. */
	setenv("HWLOC_HIDE_ERRORS", "2", 1);
	memcpy(xml, data, size);
	xml[size] = '\0';
	r = topo_load_xml(xml, size, FUZZ_TOPOLOGY_NAME, &reason, &t);
	if (r < 0 && ((r != -EINVAL && r != -E2BIG && r != -ENOMEM) || t || !fuzz_topology_named(&reason)))
		abort();
	if (r == 0) {
		if (!t || t->ncpus == 0 || t->ncpus > RTPLACE_MAX_CPUS || cpuset_empty(&t->online))
			abort();
		CPUSET_FOREACH(cpu, &t->online)
			if ((uint32_t)cpu >= t->ncpus || !t->cpus[cpu].online || t->cpus[cpu].node < 0 ||
			    t->cpus[cpu].core < 0 || t->cpus[cpu].llc < 0)
				abort();
	}
	topo_free(t);
	free(xml);
	return 0;
}
