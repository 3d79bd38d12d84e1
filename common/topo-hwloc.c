/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The topology loader: the only file that talks to hwloc. It reads the live
 * machine or an hwloc XML file (possibly captured on another machine) and
 * copies what placement needs into the plain struct topo snapshot, so no
 * other file depends on hwloc's object model.
 *
 * Every per-CPU attribute is taken from the first object, in a list of
 * object types tried in order, that covers the CPU; ids are handed out
 * densely in that order (hwloc logical order within a type), counting only
 * objects that hold at least one online CPU. Later types in a list are
 * fallbacks for topologies that lack the earlier ones.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "file.h"
#include "topo.h"

/* The largest XML file read: the synthetic 8,192-CPU machine of the test
 * topologies takes 5.2 MiB; a machine within RTPLACE_MAX_CPUS much less. */
#define TOPO_HWLOC_FILE_MAX (64u << 20)
_Static_assert(TOPO_HWLOC_FILE_MAX < INT_MAX, "hwloc takes the size as an int");

/* A NUMA node may share its CPUs with others (e.g. a high-bandwidth memory
 * node beside the DRAM one): the first in logical order wins. */
static const hwloc_obj_type_t topo_hwloc_node_types[] = { HWLOC_OBJ_NUMANODE, HWLOC_OBJ_MACHINE };
static const hwloc_obj_type_t topo_hwloc_package_types[] = { HWLOC_OBJ_PACKAGE, HWLOC_OBJ_MACHINE };
/* The last-level cache is the highest-level data or unified cache above the
 * CPU (instruction caches are other types); without caches the package is
 * the closest thing to a shared cache domain. */
static const hwloc_obj_type_t topo_hwloc_llc_types[] = {
	HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
	HWLOC_OBJ_L1CACHE, HWLOC_OBJ_PACKAGE, HWLOC_OBJ_MACHINE,
};
/* Without core objects every CPU is a core of its own: no SMT siblings. */
static const hwloc_obj_type_t topo_hwloc_core_types[] = { HWLOC_OBJ_CORE, HWLOC_OBJ_PU };

#define TOPO_HWLOC_NTYPES(a) (sizeof(a) / sizeof((a)[0]))

static int32_t *topo_hwloc_field(struct topo_cpu *c, size_t field)
{
	return (int32_t *)((char *)c + field);
}

/* Gives the field of every online CPU the dense id of the first object
 * covering it among those of types, tried in order. */
static void topo_hwloc_number(hwloc_topology_t ht, struct topo *t, size_t field,
			      const hwloc_obj_type_t *types, size_t ntypes)
{
	int32_t next = 0;

	for (size_t i = 0; i < ntypes; i++) {
		/* -1 (several depths) only happens for Group, not listed here */
		int nobjs = hwloc_get_nbobjs_by_type(ht, types[i]);

		for (int o = 0; o < nobjs; o++) {
			hwloc_obj_t obj = hwloc_get_obj_by_type(ht, types[i], (unsigned)o);
			bool used = false;

			if (!obj || !obj->cpuset)
				continue;
			for (int cpu = hwloc_bitmap_first(obj->cpuset); cpu >= 0 && (uint32_t)cpu < t->ncpus;
			     cpu = hwloc_bitmap_next(obj->cpuset, cpu)) {
				int32_t *id = topo_hwloc_field(&t->cpus[cpu], field);

				if (t->cpus[cpu].online && *id < 0) {
					*id = next;
					used = true;
				}
			}
			if (used)
				next++;
		}
	}
}

/*
 * hwloc ranks cpu kinds from least to most performant (its "efficiency"
 * grows with performance); rtplace numbers them the other way so that kind
 * 0 is the most performant. When hwloc could not rank the kinds (efficiency
 * -1) or there is one kind only, every CPU stays kind 0.
 */
static int topo_hwloc_kinds(hwloc_topology_t ht, struct topo *t)
{
	int nkinds = hwloc_cpukinds_get_nr(ht, 0);
	hwloc_bitmap_t set = NULL;
	int *eff = NULL;
	int r = 0;

	if (nkinds <= 1)
		return 0;
	set = hwloc_bitmap_alloc();
	eff = calloc((size_t)nkinds, sizeof(*eff));
	if (!set || !eff) {
		r = -ENOMEM;
		goto out;
	}
	for (int k = 0; k < nkinds; k++) {
		if (hwloc_cpukinds_get_info(ht, (unsigned)k, NULL, &eff[k], NULL, NULL, 0) < 0) {
			r = -errno;
			goto out;
		}
		if (eff[k] < 0)
			goto out;
	}
	for (int k = 0; k < nkinds; k++) {
		int32_t rank = 0;

		/* rank = number of distinct efficiencies above this one, so
		 * kinds stay dense even if hwloc reports ties */
		for (int j = 0; j < nkinds; j++) {
			bool seen = false;

			for (int i = 0; i < j; i++)
				seen = seen || eff[i] == eff[j];
			if (eff[j] > eff[k] && !seen)
				rank++;
		}
		if (hwloc_cpukinds_get_info(ht, (unsigned)k, set, NULL, NULL, NULL, 0) < 0) {
			r = -errno;
			goto out;
		}
		for (int cpu = hwloc_bitmap_first(set); cpu >= 0 && (uint32_t)cpu < t->ncpus;
		     cpu = hwloc_bitmap_next(set, cpu))
			t->cpus[cpu].kind = rank;
	}
out:
	free(eff);
	hwloc_bitmap_free(set);
	return r;
}

/* -errno for a failed hwloc call; one that fails without setting errno
 * was given input it could not use. */
static int topo_hwloc_errno(void)
{
	return errno > 0 ? -errno : -EINVAL;
}

int topo_load(const char *xml_path, struct rtplace_reason *reason, struct topo **ret)
{
	char *xml = NULL;
	size_t xml_size = 0;
	int r = 0;

	/* hwloc would open the file itself, and block on a FIFO or read a
	 * device for ever: read it here, as every input is read. */
	if (xml_path)
		r = file_read_regular(xml_path, TOPO_HWLOC_FILE_MAX, reason, &xml, &xml_size);
	if (r == 0)
		r = topo_load_xml(xml, xml_size, xml_path, reason, ret);
	free(xml);
	return r;
}

int topo_load_xml(const char *xml, size_t xml_size, const char *what, struct rtplace_reason *reason,
		  struct topo **ret)
{
	hwloc_topology_t ht = NULL;
	hwloc_const_cpuset_t online;
	struct topo *t = NULL;
	int last, r;

	if (!xml)
		what = "the machine's topology";
	if (xml && xml_size > TOPO_HWLOC_FILE_MAX) {
		r = -EFBIG;
		reason_set(reason, "cannot load %s: larger than %u bytes", what, TOPO_HWLOC_FILE_MAX);
		goto out;
	}
	if (hwloc_topology_init(&ht) < 0) {
		ht = NULL;
		r = -ENOMEM;
		reason_set(reason, "cannot load %s: %s", what, strerror(ENOMEM));
		goto out;
	}
	/*
	 * The daemon tracks and places threads of other processes, so it must
	 * see every online CPU even when its own cgroup confines it to a few:
	 * include what is disallowed to us. IS_THISSYSTEM is not set: the
	 * live load is this system by default, and an XML file (maybe from
	 * another machine) must not be checked against, or bound on, this one.
	 */
	errno = 0;
	r = hwloc_topology_set_flags(ht, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
	/* set_xmlbuffer parses the text at once; on failure hwloc would
	 * silently fall back to the live machine, so stop here. The size
	 * counts the NUL, as hwloc's own exported buffers do. */
	if (r == 0 && xml)
		r = hwloc_topology_set_xmlbuffer(ht, xml, (int)xml_size + 1);
	if (r == 0)
		r = hwloc_topology_load(ht);
	if (r < 0) {
		r = topo_hwloc_errno();
		reason_set(reason, "cannot load %s: %s", what,
			   xml && r == -EINVAL ? "not an hwloc XML topology" : strerror(-r));
		goto out;
	}

	/* CPU ids span the complete set (offline CPUs included); the online
	 * ones are those with a PU object. */
	last = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(ht));
	if (last < 0) {
		r = -EINVAL;
		reason_set(reason, "cannot load %s: it has no CPU", what);
		goto out;
	}
	if (last >= RTPLACE_MAX_CPUS) {
		r = -E2BIG;
		reason_set(reason, "%s has CPU ids up to %d (%d CPUs); rtplace is built for at most %d "
			   "(RTPLACE_MAX_CPUS)", xml ? what : "this machine", last, last + 1,
			   RTPLACE_MAX_CPUS);
		goto out;
	}
	r = topo_new((uint32_t)last + 1, &t);
	if (r < 0) {
		reason_set(reason, "cannot load %s: %s", what, strerror(-r));
		goto out;
	}
	online = hwloc_topology_get_topology_cpuset(ht);
	for (int cpu = hwloc_bitmap_first(online); cpu >= 0 && (uint32_t)cpu < t->ncpus;
	     cpu = hwloc_bitmap_next(online, cpu))
		t->cpus[cpu].online = true;

	topo_hwloc_number(ht, t, offsetof(struct topo_cpu, node), topo_hwloc_node_types,
			  TOPO_HWLOC_NTYPES(topo_hwloc_node_types));
	topo_hwloc_number(ht, t, offsetof(struct topo_cpu, package), topo_hwloc_package_types,
			  TOPO_HWLOC_NTYPES(topo_hwloc_package_types));
	topo_hwloc_number(ht, t, offsetof(struct topo_cpu, llc), topo_hwloc_llc_types,
			  TOPO_HWLOC_NTYPES(topo_hwloc_llc_types));
	topo_hwloc_number(ht, t, offsetof(struct topo_cpu, core), topo_hwloc_core_types,
			  TOPO_HWLOC_NTYPES(topo_hwloc_core_types));
	r = topo_hwloc_kinds(ht, t);
	if (r == 0)
		r = topo_finish(t);
	if (r < 0) {
		reason_set(reason, "cannot load %s: %s", what, strerror(-r));
		goto out;
	}
	*ret = t;
	t = NULL;
out:
	topo_free(t);
	if (ht)
		hwloc_topology_destroy(ht);
	return r;
}
