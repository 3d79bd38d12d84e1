/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests for the topology snapshot: topo_load() on the shared hwloc XML
 * files (skipped when ../shared is absent), on small XML files written
 * here, on the live machine, and the pure topo_synthetic()/topo_shards().
 */
#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cpuset.h"
#include "testlib.h"
#include "topo.h"

/* What each shared XML holds, read off the files with lstopo/hwloc-calc. */
enum smt_shape {
	SMT_NONE,     /* one CPU per core */
	SMT_OFFSET,   /* siblings N and N + sibling_offset */
	SMT_ADJACENT, /* siblings 2k and 2k + 1 */
};

struct xml_expect {
	const char *name;
	uint32_t ncpus, npackages, nnodes, nllcs, ncores;
	enum smt_shape smt;
	uint32_t sibling_offset;
	const char *node_cpus[4];
	const char *llc_cpus[16];
	const char *package0_cpus;
	/* topo_synthetic() arguments that build the same machine, or
	 * npackages 0 when it cannot (adjacent siblings) */
	uint32_t synth[5];
};

static const struct xml_expect xml_expects[] = {
	{
		.name = "1s-8c-16t",
		.ncpus = 16, .npackages = 1, .nnodes = 1, .nllcs = 1, .ncores = 8,
		.smt = SMT_OFFSET, .sibling_offset = 8,
		.node_cpus = { "0-15" },
		.llc_cpus = { "0-15" },
		.package0_cpus = "0-15",
		.synth = { 1, 1, 1, 8, 2 },
	},
	{
		.name = "2s-240c-480t",
		.ncpus = 480, .npackages = 2, .nnodes = 2, .nllcs = 2, .ncores = 240,
		.smt = SMT_OFFSET, .sibling_offset = 240,
		.node_cpus = { "0-119,240-359", "120-239,360-479" },
		.llc_cpus = { "0-119,240-359", "120-239,360-479" },
		.package0_cpus = "0-119,240-359",
		.synth = { 2, 1, 1, 120, 2 },
	},
	{
		.name = "2s-snc2-192c-384t",
		.ncpus = 384, .npackages = 2, .nnodes = 4, .nllcs = 4, .ncores = 192,
		.smt = SMT_OFFSET, .sibling_offset = 192,
		.node_cpus = { "0-47,192-239", "48-95,240-287", "96-143,288-335", "144-191,336-383" },
		.llc_cpus = { "0-47,192-239", "48-95,240-287", "96-143,288-335", "144-191,336-383" },
		.package0_cpus = "0-95,192-287",
		.synth = { 2, 2, 1, 48, 2 },
	},
	{
		.name = "4n-64c-nosmt",
		.ncpus = 64, .npackages = 2, .nnodes = 4, .nllcs = 8, .ncores = 64,
		.smt = SMT_NONE,
		.node_cpus = { "0-15", "16-31", "32-47", "48-63" },
		.llc_cpus = { "0-7", "8-15", "16-23", "24-31", "32-39", "40-47", "48-55", "56-63" },
		.package0_cpus = "0-31",
		.synth = { 2, 2, 2, 8, 1 },
	},
	{
		.name = "epyc-2s-16ccx-256t",
		.ncpus = 256, .npackages = 2, .nnodes = 2, .nllcs = 16, .ncores = 128,
		.smt = SMT_ADJACENT,
		.node_cpus = { "0-127", "128-255" },
		.llc_cpus = { "0-15", "16-31", "32-47", "48-63", "64-79", "80-95", "96-111", "112-127",
			      "128-143", "144-159", "160-175", "176-191", "192-207", "208-223", "224-239",
			      "240-255" },
		.package0_cpus = "0-127",
	},
};

static char tmpdir[64];

/* A failed load must leave *ret as it was: tests preset it to this. */
static struct topo untouched;
/* What the last failed topo_load() said. */
static struct rtplace_reason why;

static int group_setup(void **state)
{
	strcpy(tmpdir, "/tmp/test-topology.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

/* The folder holds only the plain files write_temp() made. */
static int group_teardown(void **state)
{
	DIR *d = opendir(tmpdir);
	struct dirent *de;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	return rmdir(tmpdir);
}

/* Writes text to a file in the test's temporary folder; its path in buf. */
static const char *write_temp(const char *name, const char *text, char *buf, size_t len)
{
	FILE *f;

	snprintf(buf, len, "%s/%s", tmpdir, name);
	f = fopen(buf, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static struct topo *load_shared(const char *name)
{
	char path[4096];
	struct topo *t = NULL;

	if (!test_topology_path(name, path, sizeof(path)))
		return NULL;
	assert_int_equal(topo_load(path, &why, &t), 0);
	assert_non_null(t);
	return t;
}

static void assert_set_is(const struct rtplace_cpumask *set, const char *list)
{
	struct rtplace_cpumask want;
	char got[CPUSET_LIST_MAX];

	assert_int_equal(cpuset_parse(list, &want), 0);
	if (!cpuset_equal(set, &want)) {
		assert_int_equal(cpuset_format(set, got, sizeof(got)), 0);
		assert_string_equal(got, list);
	}
}

static void assert_same_topo(const struct topo *a, const struct topo *b)
{
	assert_int_equal(a->ncpus, b->ncpus);
	assert_int_equal(a->nnodes, b->nnodes);
	assert_int_equal(a->npackages, b->npackages);
	assert_int_equal(a->nllcs, b->nllcs);
	assert_int_equal(a->ncores, b->ncores);
	assert_int_equal(a->nkinds, b->nkinds);
	for (uint32_t c = 0; c < a->ncpus; c++) {
		assert_int_equal(a->cpus[c].node, b->cpus[c].node);
		assert_int_equal(a->cpus[c].package, b->cpus[c].package);
		assert_int_equal(a->cpus[c].llc, b->cpus[c].llc);
		assert_int_equal(a->cpus[c].core, b->cpus[c].core);
		assert_int_equal(a->cpus[c].kind, b->cpus[c].kind);
		assert_int_equal(a->cpus[c].online, b->cpus[c].online);
	}
}

static void test_shared_xml(void **state)
{
	const struct xml_expect *e = *state;
	struct rtplace_cpumask pkg0, sib, want;
	struct topo *t = load_shared(e->name);

	if (!t) {
		skip();
		return;
	}
	assert_int_equal(t->ncpus, e->ncpus);
	assert_int_equal(cpuset_count(&t->online), e->ncpus);
	assert_int_equal(t->npackages, e->npackages);
	assert_int_equal(t->nnodes, e->nnodes);
	assert_int_equal(t->nllcs, e->nllcs);
	assert_int_equal(t->ncores, e->ncores);
	assert_int_equal(t->nkinds, 1);
	for (uint32_t n = 0; n < t->nnodes; n++)
		assert_set_is(&t->node_cpus[n], e->node_cpus[n]);
	for (uint32_t l = 0; l < t->nllcs; l++)
		assert_set_is(&t->llc_cpus[l], e->llc_cpus[l]);

	cpuset_zero(&pkg0);
	for (uint32_t c = 0; c < t->ncpus; c++) {
		const struct topo_cpu *cpu = &t->cpus[c];

		assert_true(cpu->online);
		assert_int_equal(cpu->kind, 0);
		if (cpu->package == 0)
			cpuset_set(&pkg0, c);
		/* a cache domain never spans packages */
		assert_int_equal(t->cpus[cpuset_next(&t->llc_cpus[cpu->llc], 0)].package, cpu->package);

		cpuset_zero(&want);
		cpuset_set(&want, c);
		if (e->smt == SMT_OFFSET)
			cpuset_set(&want, c < e->sibling_offset ? c + e->sibling_offset : c - e->sibling_offset);
		else if (e->smt == SMT_ADJACENT)
			cpuset_set(&want, c ^ 1);
		topo_siblings(t, c, &sib);
		assert_true(cpuset_equal(&sib, &want));
	}
	assert_set_is(&pkg0, e->package0_cpus);

	if (e->synth[0]) {
		struct topo *s;

		assert_int_equal(topo_synthetic(e->synth[0], e->synth[1], e->synth[2], e->synth[3],
						e->synth[4], &s), 0);
		assert_same_topo(t, s);
		topo_free(s);
	}
	topo_free(t);
}

/* Shard ids are the node ids or the LLC ids, as asked. */
static void test_shards_xml(void **state)
{
	struct topo *t = load_shared("epyc-2s-16ccx-256t");
	uint16_t shard[RTPLACE_MAX_CPUS];
	uint32_t n;

	if (!t) {
		skip();
		return;
	}
	topo_shards(t, TOPO_SHARD_NODE, shard, &n);
	assert_int_equal(n, 2);
	for (uint32_t c = 0; c < t->ncpus; c++)
		assert_int_equal(shard[c], c / 128);
	topo_shards(t, TOPO_SHARD_LLC, shard, &n);
	assert_int_equal(n, 16);
	for (uint32_t c = 0; c < t->ncpus; c++)
		assert_int_equal(shard[c], c / 16);
	topo_free(t);
}

/* HWLOC_XMLFILE is honoured by a live load (hwloc reads it itself). */
static void test_hwloc_xmlfile(void **state)
{
	char path[4096];
	struct topo *t = NULL;

	if (!test_topology_path("1s-8c-16t", path, sizeof(path))) {
		skip();
		return;
	}
	assert_int_equal(setenv("HWLOC_XMLFILE", path, 1), 0);
	assert_int_equal(topo_load(NULL, &why, &t), 0);
	assert_int_equal(unsetenv("HWLOC_XMLFILE"), 0);
	assert_int_equal(t->ncpus, 16);
	assert_int_equal(t->ncores, 8);
	topo_free(t);
}

/* Reads a kernel CPU list file; -errno when it cannot. */
static int read_cpulist(const char *path, struct rtplace_cpumask *ret)
{
	char buf[CPUSET_LIST_MAX];
	FILE *f = fopen(path, "r");
	int r = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		r = -EIO;
	fclose(f);
	if (r == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		r = cpuset_parse(buf, ret);
	}
	return r;
}

static void test_live(void **state)
{
	struct topo *t = NULL;
	long onln = sysconf(_SC_NPROCESSORS_ONLN);

	assert_int_equal(unsetenv("HWLOC_XMLFILE"), 0);
	assert_int_equal(topo_load(NULL, &why, &t), 0);
	assert_true(t->ncpus >= 1);
	assert_true(onln >= 1);
	assert_int_equal(cpuset_count(&t->online), (unsigned)onln);
	assert_true(t->nnodes >= 1 && t->npackages >= 1 && t->nllcs >= 1 && t->ncores >= 1);
	assert_true(t->nkinds >= 1);

	/* Where the kernel says who shares a core and a node, agree with it. */
	CPUSET_FOREACH(c, &t->online) {
		char path[128];
		struct rtplace_cpumask sib, kernel;

		topo_siblings(t, (uint32_t)c, &sib);
		assert_true(cpuset_test(&sib, (unsigned)c));
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
		if (read_cpulist(path, &kernel) == 0)
			assert_true(cpuset_equal(&sib, &kernel));
	}
	for (int node = 0; node < RTPLACE_MAX_CPUS; node++) {
		char path[128];
		struct rtplace_cpumask kernel;
		int first;

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
		if (read_cpulist(path, &kernel) < 0 || cpuset_empty(&kernel))
			continue;
		first = cpuset_next(&kernel, 0);
		assert_true(cpuset_equal(&t->node_cpus[t->cpus[first].node], &kernel));
	}
	topo_free(t);
}

static void test_missing(void **state)
{
	struct topo *t = &untouched;

	assert_int_equal(topo_load("/nonexistent/rtplace/none.xml", &why, &t), -ENOENT);
	assert_string_equal(why.text, "/nonexistent/rtplace/none.xml: No such file or directory");
	assert_ptr_equal(t, &untouched);
}

/* Files that are no XML file are refused before hwloc sees them, and
 * without blocking: a FIFO without a writer, a device that never ends
 * (read until killed before). The alarm fails the test on a hang. */
static void test_not_regular(void **state)
{
	struct topo *t = &untouched;
	char path[256], want[300];

	alarm(10);
	assert_int_equal(topo_load("/dev/zero", &why, &t), -EBADFD);
	assert_string_equal(why.text, "/dev/zero is not a regular file (a character device)");
	snprintf(path, sizeof(path), "%s/fifo.xml", tmpdir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(topo_load(path, &why, &t), -EBADFD);
	snprintf(want, sizeof(want), "%s is not a regular file (a FIFO)", path);
	assert_string_equal(why.text, want);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(topo_load(tmpdir, &why, &t), -EBADFD);
	snprintf(want, sizeof(want), "%s is not a regular file (a directory)", tmpdir);
	assert_string_equal(why.text, want);
	alarm(0);
	assert_ptr_equal(t, &untouched);
}

static void test_malformed(void **state)
{
	static const char *const bad[] = {
		"garbage\n",
		"",
		"\x01\x02\xff\xfe binary",
		"<?xml version=\"1.0\"?>\n<topology version=\"2.0\"><object type=\"Machine\"",
		"<?xml version=\"1.0\"?>\n<topology version=\"2.0\"></topology>\n",
		"<?xml version=\"1.0\"?>\n<notatopology/>\n",
	};
	char path[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct topo *t = &untouched;
		char name[32];

		snprintf(name, sizeof(name), "bad%zu.xml", i);
		write_temp(name, bad[i], path, sizeof(path));
		assert_int_equal(topo_load(path, &why, &t), -EINVAL);
		assert_ptr_equal(t, &untouched);
	}
}

/* One PU with id RTPLACE_MAX_CPUS, just above the CPUs rtplace names. */
static void test_too_many_cpus(void **state)
{
	/* hwloc's sets: 32-bit words, the most significant first */
	static char set[16 + 4 * (RTPLACE_MAX_CPUS / 32)], xml[6 * sizeof(set) + 1024];
	char path[256], want[400];
	struct topo *t = &untouched;
	size_t len;

	len = (size_t)snprintf(set, sizeof(set), "0x1");
	for (int w = 0; w < RTPLACE_MAX_CPUS / 32; w++)
		len += (size_t)snprintf(set + len, sizeof(set) - len, ",0x0");
	assert_true(len < sizeof(set));
	len = (size_t)snprintf(xml, sizeof(xml),
		 "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
		 "<object type=\"Machine\" os_index=\"0\" cpuset=\"%1$s\" complete_cpuset=\"%1$s\" nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
		 "<object type=\"NUMANode\" os_index=\"0\" cpuset=\"%1$s\" complete_cpuset=\"%1$s\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n"
		 "<object type=\"PU\" os_index=\"%2$d\" cpuset=\"%1$s\" complete_cpuset=\"%1$s\"/>\n"
		 "</object>\n</topology>\n",
		 set, RTPLACE_MAX_CPUS);
	assert_true(len < sizeof(xml));
	write_temp("big.xml", xml, path, sizeof(path));
	assert_int_equal(topo_load(path, &why, &t), -E2BIG);
	snprintf(want, sizeof(want), "%s has CPU ids up to %d (%d CPUs); rtplace is built for at most %d "
		 "(RTPLACE_MAX_CPUS)", path, RTPLACE_MAX_CPUS, RTPLACE_MAX_CPUS + 1, RTPLACE_MAX_CPUS);
	assert_string_equal(why.text, want);
	assert_ptr_equal(t, &untouched);
}

#define OBJ(type, attrs, set, complete) \
	"<object type=\"" type "\" " attrs " cpuset=\"" set "\" complete_cpuset=\"" complete \
	"\" nodeset=\"0x1\" complete_nodeset=\"0x1\""
#define CACHE(level, size) " cache_size=\"" size "\" depth=\"" level "\" cache_linesize=\"64\" cache_associativity=\"0\" cache_type=\"0\""

/*
 * A hybrid package: P-cores 0-1 and 2-3 (SMT) under the L3, E-cores 4 and 5
 * sharing an L2 under the same L3, CPUs 6-7 offline, CPU 5 online but
 * outside the allowed set of the process that saved the file (still online
 * for rtplace, which manages every thread's CPU, not its own). hwloc ranks
 * the E-cores' kind first (lower efficiency); rtplace must number it 1.
 */
static const char hybrid_xml[] =
	"<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
	OBJ("Machine", "os_index=\"0\"", "0x3f", "0xff") " allowed_cpuset=\"0x1f\" allowed_nodeset=\"0x1\">\n"
	OBJ("Package", "os_index=\"0\"", "0x3f", "0xff") ">\n"
	OBJ("NUMANode", "os_index=\"0\"", "0x3f", "0xff") " local_memory=\"1073741824\"/>\n"
	OBJ("L3Cache", "", "0x3f", "0xff") CACHE("3", "16777216") ">\n"
	OBJ("Core", "os_index=\"0\"", "0x3", "0x3") ">\n"
	OBJ("PU", "os_index=\"0\"", "0x1", "0x1") "/>\n"
	OBJ("PU", "os_index=\"1\"", "0x2", "0x2") "/>\n"
	"</object>\n"
	OBJ("Core", "os_index=\"1\"", "0xc", "0xc") ">\n"
	OBJ("PU", "os_index=\"2\"", "0x4", "0x4") "/>\n"
	OBJ("PU", "os_index=\"3\"", "0x8", "0x8") "/>\n"
	"</object>\n"
	OBJ("L2Cache", "", "0x30", "0xf0") CACHE("2", "2097152") ">\n"
	OBJ("Core", "os_index=\"2\"", "0x10", "0x10") ">\n"
	OBJ("PU", "os_index=\"4\"", "0x10", "0x10") "/>\n"
	"</object>\n"
	OBJ("Core", "os_index=\"3\"", "0x20", "0x20") ">\n"
	OBJ("PU", "os_index=\"5\"", "0x20", "0x20") "/>\n"
	"</object>\n"
	"</object>\n</object>\n</object>\n</object>\n"
	"<cpukind cpuset=\"0x30\" forced_efficiency=\"0\"><info name=\"CoreType\" value=\"IntelAtom\"/></cpukind>\n"
	"<cpukind cpuset=\"0x0f\" forced_efficiency=\"1\"><info name=\"CoreType\" value=\"IntelCore\"/></cpukind>\n"
	"</topology>\n";

static void test_hybrid_offline(void **state)
{
	char path[256];
	struct topo *t = NULL;
	struct rtplace_cpumask sib;

	assert_int_equal(topo_load(write_temp("hybrid.xml", hybrid_xml, path, sizeof(path)), &why, &t), 0);
	assert_int_equal(t->ncpus, 8);
	assert_set_is(&t->online, "0-5");
	assert_false(t->cpus[6].online);
	assert_false(t->cpus[7].online);
	assert_int_equal(t->npackages, 1);
	assert_int_equal(t->nnodes, 1);
	assert_int_equal(t->nllcs, 1); /* the L2 of the E-cores is not the last level */
	assert_set_is(&t->llc_cpus[0], "0-5");
	assert_int_equal(t->ncores, 4);
	assert_int_equal(t->nkinds, 2);
	for (uint32_t c = 0; c < 6; c++)
		assert_int_equal(t->cpus[c].kind, c < 4 ? 0 : 1);
	topo_siblings(t, 1, &sib);
	assert_set_is(&sib, "0-1");
	topo_siblings(t, 5, &sib);
	assert_set_is(&sib, "5");
	topo_siblings(t, 6, &sib);
	assert_true(cpuset_empty(&sib));
	topo_free(t);
}

/* No package, no cache, no core objects: the machine is the package and the
 * LLC, every CPU is its own core. */
static void test_bare_pus(void **state)
{
	static const char xml[] =
		"<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
		OBJ("Machine", "os_index=\"0\"", "0xf", "0xf") ">\n"
		OBJ("NUMANode", "os_index=\"0\"", "0xf", "0xf") "/>\n"
		OBJ("PU", "os_index=\"0\"", "0x1", "0x1") "/>\n"
		OBJ("PU", "os_index=\"1\"", "0x2", "0x2") "/>\n"
		OBJ("PU", "os_index=\"2\"", "0x4", "0x4") "/>\n"
		OBJ("PU", "os_index=\"3\"", "0x8", "0x8") "/>\n"
		"</object>\n</topology>\n";
	char path[256];
	struct topo *t = NULL;
	struct rtplace_cpumask sib;

	assert_int_equal(topo_load(write_temp("bare.xml", xml, path, sizeof(path)), &why, &t), 0);
	assert_int_equal(t->ncpus, 4);
	assert_int_equal(t->npackages, 1);
	assert_int_equal(t->nnodes, 1);
	assert_int_equal(t->nllcs, 1);
	assert_int_equal(t->ncores, 4);
	assert_int_equal(t->nkinds, 1);
	for (uint32_t c = 0; c < 4; c++) {
		assert_int_equal(t->cpus[c].core, c);
		topo_siblings(t, c, &sib);
		assert_int_equal(cpuset_count(&sib), 1);
	}
	topo_free(t);
}

static void test_synthetic(void **state)
{
	uint16_t shard[RTPLACE_MAX_CPUS];
	struct topo *t = NULL;
	struct rtplace_cpumask sib;
	uint32_t n;

	/* 2 packages x 2 nodes x 2 LLCs x 4 cores x 2 threads */
	assert_int_equal(topo_synthetic(2, 2, 2, 4, 2, &t), 0);
	assert_int_equal(t->ncpus, 64);
	assert_int_equal(cpuset_count(&t->online), 64);
	assert_int_equal(t->npackages, 2);
	assert_int_equal(t->nnodes, 4);
	assert_int_equal(t->nllcs, 8);
	assert_int_equal(t->ncores, 32);
	assert_int_equal(t->nkinds, 1);
	assert_set_is(&t->node_cpus[1], "8-15,40-47");
	assert_set_is(&t->llc_cpus[3], "12-15,44-47");
	topo_siblings(t, 33, &sib);
	assert_set_is(&sib, "1,33");
	topo_siblings(t, 64, &sib);
	assert_true(cpuset_empty(&sib));

	topo_shards(t, TOPO_SHARD_NODE, shard, &n);
	assert_int_equal(n, 4);
	for (uint32_t c = 0; c < t->ncpus; c++)
		assert_int_equal(shard[c], (c % 32) / 8);
	topo_shards(t, TOPO_SHARD_LLC, shard, &n);
	assert_int_equal(n, 8);
	for (uint32_t c = 0; c < t->ncpus; c++)
		assert_int_equal(shard[c], (c % 32) / 4);
	topo_free(t);

	/* offline CPUs fall in shard 0 */
	assert_int_equal(topo_synthetic(1, 2, 1, 2, 1, &t), 0);
	t->cpus[3].online = false;
	assert_int_equal(topo_finish(t), 0);
	topo_shards(t, TOPO_SHARD_NODE, shard, &n);
	assert_int_equal(n, 2);
	assert_int_equal(shard[2], 1);
	assert_int_equal(shard[3], 0);
	topo_free(t);

	assert_int_equal(topo_synthetic(2, 1, 1, RTPLACE_MAX_CPUS / 2 + 1, 1, &t), -E2BIG);
	assert_int_equal(topo_synthetic(0, 1, 1, 1, 1, &t), -E2BIG);
}

#define XML_TEST(i, name_) \
	{ .name = "xml " name_, .test_func = test_shared_xml, .initial_state = (void *)&xml_expects[i] }

int main(void)
{
	static const struct CMUnitTest tests[] = {
		XML_TEST(0, "1s-8c-16t"),
		XML_TEST(1, "2s-240c-480t"),
		XML_TEST(2, "2s-snc2-192c-384t"),
		XML_TEST(3, "4n-64c-nosmt"),
		XML_TEST(4, "epyc-2s-16ccx-256t"),
		cmocka_unit_test(test_shards_xml),
		cmocka_unit_test(test_hwloc_xmlfile),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_too_many_cpus),
		cmocka_unit_test(test_hybrid_offline),
		cmocka_unit_test(test_bare_pus),
		cmocka_unit_test(test_synthetic),
	};

	_Static_assert(sizeof(xml_expects) / sizeof(xml_expects[0]) == 5, "one XML_TEST per shared topology");
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
