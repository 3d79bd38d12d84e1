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
 *
 * hwloc trusts the XML it is given: an object with a set but not its
 * complete counterpart makes hwloc_topology_load() dereference NULL
 * (hwloc 2.9). So XML text is read with libxml2 first, a file hwloc could
 * not take safely is refused naming the object and what it lacks, and
 * hwloc reads only the checked tree.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

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

/* An attribute of an hwloc object that must come with another: hwloc
 * reads the second whenever the first is there. */
struct topo_hwloc_pair {
	const char *has;
	const char *needs;
};

static const struct topo_hwloc_pair topo_hwloc_pairs[] = {
	{ "cpuset", "complete_cpuset" },
	{ "nodeset", "complete_nodeset" },
};

/*
 * Whether v is a bitmap as hwloc writes one: words of 1 to 8 hex digits,
 * each "0x"-prefixed, separated by commas, the first after an optional
 * "0xf...f," (an infinite set); a word of zeros after the first may be
 * left empty ("0xff,,0x1"). hwloc 2.9 asserts, and so aborts, on a word
 * that is neither ",x0000ffff".
 */
static bool topo_hwloc_bitmap_ok(const char *v)
{
	bool first = true;

	if (strncmp(v, "0xf...f", 7) == 0) {
		v += 7;
		if (*v == '\0')
			return true;
		if (*v++ != ',')
			return false;
	}
	for (;;) {
		size_t digits;

		if (v[0] == '0' && v[1] == 'x') {
			v += 2;
			digits = strspn(v, "0123456789abcdefABCDEF");
			if (digits < 1 || digits > 8)
				return false;
			v += digits;
		} else if (first || (*v != ',' && *v != '\0')) {
			return false;
		}
		if (*v == '\0')
			return true;
		if (*v++ != ',')
			return false;
		first = false;
	}
}

static const xmlAttr *topo_hwloc_attr(const xmlNode *node, const char *name)
{
	for (const xmlAttr *a = node->properties; a; a = a->next)
		if (strcmp((const char *)a->name, name) == 0)
			return a;
	return NULL;
}

static const char *topo_hwloc_attr_text(const xmlNode *node, const char *name)
{
	const xmlAttr *a = topo_hwloc_attr(node, name);

	if (a && a->children && a->children->type == XML_TEXT_NODE && a->children->content)
		return (const char *)a->children->content;
	return "?";
}

/* hwloc's own parser reads an element's attributes up to the first whose
 * name is not lower-case letters and underscores and takes the rest as
 * absent: such a name (or a namespace, written as one) would hide from
 * hwloc an attribute the checks below saw. hwloc never writes one. */
static bool topo_hwloc_plain_name(const xmlChar *name)
{
	size_t n = strspn((const char *)name, "abcdefghijklmnopqrstuvwxyz_");

	return n > 0 && name[n] == '\0';
}

/*
 * The elements hwloc's XML holds (its DTDs, hwloc.dtd for version 1 and
 * hwloc2.dtd): each with the children it may hold and whether it holds
 * text. hwloc fails on anything else and, for an unknown element or text
 * before a child, leaks the objects it was building (hwloc 2.9).
 */
struct topo_hwloc_element {
	const char *name;
	const char *children; /* space-separated, with a space at each end */
	bool text;
};

static const struct topo_hwloc_element topo_hwloc_elements[] = {
	{ "topology", " object distances2 distances2hetero support memattr cpukind ", false },
	{ "root", " object ", false },
	{ "object", " page_type info distances userdata object ", false },
	{ "distances", " latency ", false },
	{ "distances2", " indexes u64values ", false },
	{ "distances2hetero", " indexes u64values ", false },
	{ "memattr", " memattr_value ", false },
	{ "cpukind", " info ", false },
	{ "page_type", " ", false },
	{ "info", " ", false },
	{ "latency", " ", false },
	{ "memattr_value", " ", false },
	{ "support", " ", false },
	{ "indexes", " ", true },
	{ "u64values", " ", true },
	{ "userdata", " ", true },
};

static const struct topo_hwloc_element *topo_hwloc_element(const xmlNode *node)
{
	for (size_t i = 0; i < TOPO_HWLOC_NTYPES(topo_hwloc_elements); i++)
		if (strcmp((const char *)node->name, topo_hwloc_elements[i].name) == 0)
			return &topo_hwloc_elements[i];
	return NULL;
}

static bool topo_hwloc_may_hold(const struct topo_hwloc_element *e, const xmlNode *child)
{
	const char *name = (const char *)child->name;
	size_t n = strlen(name);

	/* a whole word of the list, not the start of a longer one */
	for (const char *at = strstr(e->children, name); n > 0 && at; at = strstr(at + 1, name))
		if (at[-1] == ' ' && at[n] == ' ')
			return true;
	return false;
}

/* Every child of node is one hwloc expects there (see above). */
static int topo_hwloc_check_children(const xmlNode *node, const char *what, struct rtplace_reason *reason)
{
	const struct topo_hwloc_element *e = topo_hwloc_element(node);

	/* the walk reaches an element only once its parent held it */
	if (!e) {
		reason_set(reason, "cannot load %s: line %ld: hwloc has no element %s", what, xmlGetLineNo(node),
			   (const char *)node->name);
		return -EINVAL;
	}
	for (const xmlNode *c = node->children; c; c = c->next) {
		if (c->type == XML_ELEMENT_NODE && topo_hwloc_may_hold(e, c))
			continue;
		if (c->type == XML_TEXT_NODE &&
		    (e->text || !c->content ||
		     strspn((const char *)c->content, " \t\r\n") == strlen((const char *)c->content)))
			continue;
		if (c->type == XML_ELEMENT_NODE)
			reason_set(reason, "cannot load %s: line %ld: element %s holds an element %s, which hwloc "
				   "does not read there", what, xmlGetLineNo(c), e->name, (const char *)c->name);
		else
			reason_set(reason, "cannot load %s: line %ld: element %s holds %s, which hwloc does not "
				   "read there", what, xmlGetLineNo(c), e->name,
				   c->type == XML_TEXT_NODE ? "text" : c->type == XML_COMMENT_NODE ? "a comment" :
				   c->type == XML_CDATA_SECTION_NODE ? "a CDATA section" :
				   c->type == XML_PI_NODE ? "a processing instruction" : "an entity reference");
		return -EINVAL;
	}
	return 0;
}

/* Checks one element. 0 or -EINVAL with the reason. */
static int topo_hwloc_check_element(const xmlNode *node, const char *what, struct rtplace_reason *reason)
{
	int r;

	if (node->ns || node->nsDef) {
		reason_set(reason, "cannot load %s: line %ld: element %s uses an XML namespace, which hwloc "
			   "does not read", what, xmlGetLineNo(node), (const char *)node->name);
		return -EINVAL;
	}
	for (const xmlAttr *a = node->properties; a; a = a->next) {
		if (a->ns || !topo_hwloc_plain_name(a->name)) {
			reason_set(reason, "cannot load %s: line %ld: element %s has an attribute %s%s%s that "
				   "hwloc does not read (names are lower-case letters and '_')", what,
				   xmlGetLineNo(node), (const char *)node->name,
				   a->ns && a->ns->prefix ? (const char *)a->ns->prefix : "",
				   a->ns && a->ns->prefix ? ":" : "", (const char *)a->name);
			return -EINVAL;
		}
	}
	r = topo_hwloc_check_children(node, what, reason);
	if (r < 0 || strcmp((const char *)node->name, "object") != 0)
		return r;
	/* Every set of an object (cpuset, complete_nodeset, ...) is a bitmap. */
	for (const xmlAttr *a = node->properties; a; a = a->next) {
		size_t n = strlen((const char *)a->name);
		xmlChar *v;
		bool ok;

		if (n < 3 || strcmp((const char *)a->name + n - 3, "set") != 0)
			continue;
		v = xmlNodeGetContent(a->children);
		ok = v && topo_hwloc_bitmap_ok((const char *)v);
		xmlFree(v);
		if (ok)
			continue;
		reason_set(reason, "cannot load %s: line %ld: object %s (os_index %s) has a %s that is not a bitmap "
			   "(0x-prefixed hex words separated by commas, as lstopo writes them)", what, xmlGetLineNo(node),
			   topo_hwloc_attr_text(node, "type"), topo_hwloc_attr_text(node, "os_index"), (const char *)a->name);
		return -EINVAL;
	}
	for (size_t i = 0; i < TOPO_HWLOC_NTYPES(topo_hwloc_pairs); i++) {
		const struct topo_hwloc_pair *p = &topo_hwloc_pairs[i];

		if (!topo_hwloc_attr(node, p->has) || topo_hwloc_attr(node, p->needs))
			continue;
		reason_set(reason, "cannot load %s: line %ld: object %s (os_index %s) has a %s but no %s; "
			   "hwloc needs both (export the topology again with lstopo)", what, xmlGetLineNo(node),
			   topo_hwloc_attr_text(node, "type"), topo_hwloc_attr_text(node, "os_index"),
			   p->has, p->needs);
		return -EINVAL;
	}
	return 0;
}

/* Checks every element from root down, depth first without recursion (a
 * hostile file may nest deeply). 0 or -EINVAL with the reason. */
static int topo_hwloc_check_tree(const xmlNode *root, const char *what, struct rtplace_reason *reason)
{
	const xmlNode *node = root;
	int r = 0;

	while (node && r == 0) {
		if (node->type == XML_ELEMENT_NODE)
			r = topo_hwloc_check_element(node, what, reason);
		if (node->children && node->type == XML_ELEMENT_NODE) {
			node = node->children;
			continue;
		}
		while (node && node != root && !node->next)
			node = node->parent;
		node = node && node != root ? node->next : NULL;
	}
	return r;
}

/*
 * hwloc trusts the XML it is given (see the file's header), so it never
 * sees the caller's text: libxml2 reads it (no network, no entities
 * substituted, no DTD loaded), the tree is checked, and what hwloc reads
 * is that tree written out again by libxml2, in the one form hwloc's own
 * parser reads as libxml2 does (double quotes, single spaces, no
 * character references but for newline, return and tab). So hwloc sees
 * exactly the elements and attributes that were checked. A file libxml2
 * cannot read is refused: hwloc writes well-formed XML. On success
 * *ret_xml (free with xmlFree) holds *ret_size bytes and a NUL.
 */
static int topo_hwloc_rewrite_xml(const char *xml, size_t size, const char *what, struct rtplace_reason *reason,
				  xmlChar **ret_xml, int *ret_size)
{
	xmlDoc *doc = NULL;
	xmlNode *root;
	xmlChar *out = NULL;
	int out_size = 0, r = 0;

	doc = xmlReadMemory(xml, (int)size, NULL, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc) {
		xmlErrorPtr e = xmlGetLastError();

		/* libxml2's messages end in a newline */
		if (e && e->message && e->line > 0)
			reason_set(reason, "cannot load %s: not an hwloc XML topology (line %d: %.*s)", what,
				   e->line, (int)strcspn(e->message, "\n"), e->message);
		else
			reason_set(reason, "cannot load %s: not an hwloc XML topology (no XML element in it)", what);
		r = -EINVAL;
		goto out;
	}
	if (doc->intSubset && doc->intSubset->children) {
		reason_set(reason, "cannot load %s: not an hwloc XML topology (it declares a DTD of its own)", what);
		r = -EINVAL;
		goto out;
	}
	root = xmlDocGetRootElement(doc);
	if (!root || (strcmp((const char *)root->name, "topology") != 0 &&
		      strcmp((const char *)root->name, "root") != 0)) {
		reason_set(reason, "cannot load %s: not an hwloc XML topology (its first element is %s, not "
			   "topology)", what, root ? (const char *)root->name : "missing");
		r = -EINVAL;
		goto out;
	}
	r = topo_hwloc_check_tree(root, what, reason);
	if (r < 0)
		goto out;
	xmlDocDumpMemoryEnc(doc, &out, &out_size, "UTF-8");
	if (!out) {
		r = -ENOMEM;
		reason_set(reason, "cannot load %s: %s", what, strerror(ENOMEM));
		goto out;
	}
	*ret_xml = out;
	*ret_size = out_size;
out:
	xmlFreeDoc(doc);
	xmlResetLastError();
	return r;
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

/*
 * hwloc's topology of the live machine (xml NULL) or of the checked XML
 * text checked (checked_size bytes), in *ret. 0, or -errno with reason.
 */
static int topo_hwloc_open(const xmlChar *checked, int checked_size, const char *what,
			   struct rtplace_reason *reason, hwloc_topology_t *ret)
{
	hwloc_topology_t ht;
	int r;

	if (hwloc_topology_init(&ht) < 0) {
		reason_set(reason, "cannot load %s: %s", what, strerror(ENOMEM));
		return -ENOMEM;
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
	if (r == 0 && checked)
		r = hwloc_topology_set_xmlbuffer(ht, (const char *)checked, checked_size + 1);
	if (r == 0)
		r = hwloc_topology_load(ht);
	if (r < 0) {
		r = topo_hwloc_errno();
		reason_set(reason, "cannot load %s: %s", what,
			   checked && r == -EINVAL ? "not an hwloc XML topology" : strerror(-r));
		hwloc_topology_destroy(ht);
		return r;
	}
	*ret = ht;
	return 0;
}

/* The snapshot of hwloc's topology ht (of the XML what when from_xml). 0,
 * or -errno with reason. */
static int topo_hwloc_snapshot(hwloc_topology_t ht, const char *what, bool from_xml, struct rtplace_reason *reason,
			       struct topo **ret)
{
	/* CPU ids span the complete set (offline CPUs included); the online
	 * ones are those with a PU object. */
	int last = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(ht));
	hwloc_const_cpuset_t online = hwloc_topology_get_topology_cpuset(ht);
	struct topo *t;
	int r;

	if (last < 0) {
		reason_set(reason, "cannot load %s: it has no CPU", what);
		return -EINVAL;
	}
	if (last >= RTPLACE_MAX_CPUS) {
		reason_set(reason, "%s has CPU ids up to %d (%d CPUs); rtplace is built for at most %d "
			   "(RTPLACE_MAX_CPUS)", from_xml ? what : "this machine", last, last + 1,
			   RTPLACE_MAX_CPUS);
		return -E2BIG;
	}
	r = topo_new((uint32_t)last + 1, &t);
	if (r < 0) {
		reason_set(reason, "cannot load %s: %s", what, strerror(-r));
		return r;
	}
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
		topo_free(t);
		return r;
	}
	*ret = t;
	return 0;
}

int topo_load_xml(const char *xml, size_t xml_size, const char *what, struct rtplace_reason *reason,
		  struct topo **ret)
{
	hwloc_topology_t ht = NULL;
	xmlChar *checked = NULL;
	int checked_size = 0, r = 0;

	if (!xml)
		what = "the machine's topology";
	if (xml && xml_size > TOPO_HWLOC_FILE_MAX) {
		r = -EFBIG;
		reason_set(reason, "cannot load %s: larger than %u bytes", what, TOPO_HWLOC_FILE_MAX);
	}
	if (r == 0 && xml)
		r = topo_hwloc_rewrite_xml(xml, xml_size, what, reason, &checked, &checked_size);
	if (r == 0)
		r = topo_hwloc_open(checked, checked_size, what, reason, &ht);
	if (r == 0) {
		r = topo_hwloc_snapshot(ht, what, xml != NULL, reason, ret);
		hwloc_topology_destroy(ht);
	}
	xmlFree(checked);
	return r;
}
