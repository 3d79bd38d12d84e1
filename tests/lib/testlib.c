#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

const char *const test_topology_names[] = {
	"1s-8c-16t", "2s-240c-480t", "2s-snc2-192c-384t", "4n-64c-nosmt", "epyc-2s-16ccx-256t", NULL,
};

void test_skip(const char *reason)
{
	const char *req = getenv("RTPLACE_REQUIRE_ROOT_TESTS");

	if (req && strcmp(req, "1") == 0) {
		fprintf(stderr, "FATAL: required test cannot run: %s\n", reason);
		exit(TEST_EXIT_HARD_ERROR);
	}
	fprintf(stderr, "SKIP: %s\n", reason);
	exit(TEST_EXIT_SKIP);
}

void test_require_root(void)
{
	if (geteuid() != 0)
		test_skip("needs root (BPF, RT scheduling)");
}

const char *test_topology_path(const char *name, char *buf, size_t len)
{
	const char *top = getenv("top_srcdir");

	snprintf(buf, len, "%s/../shared/topologies/%s.xml", top ? top : ".", name);
	return access(buf, R_OK) == 0 ? buf : NULL;
}
