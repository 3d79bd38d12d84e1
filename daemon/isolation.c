/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "claims-state.h"
#include "decimal.h"
#include "irqbalance.h"
#include "isolation.h"
#include "isoplan.h"
#include "procfs.h"
#include "record.h"

#define ISOLATION_MAGIC "rtplace-isolation 1"
/* The workqueue mask's slot among the values: no interrupt has it. */
#define ISOLATION_WQ UINT_MAX
/* A value as the kernel prints it: a CPU list or a hexadecimal mask. */
#define ISOLATION_VALUE_MAX (CPUSET_LIST_MAX > ISOPLAN_HEX_MAX ? CPUSET_LIST_MAX : ISOPLAN_HEX_MAX)
#define ISOLATION_LINE_MAX (ISOLATION_VALUE_MAX + PATH_MAX + 64)
/* Compacted once it holds this many lines more than values held. */
#define ISOLATION_COMPACT_SLACK 256
/* A journal this large is not one this file wrote. */
#define ISOLATION_FILE_MAX (64u << 20)
/* Rounds of moving a partition's processes out before removing it: a
 * process may fork while the previous round moved its parent. */
#define ISOLATION_EMPTY_ROUNDS 4
/* Under systemd: the slice that holds every claim's scope. */
#define ISOLATION_SLICE "rtplace.slice"
#define ISOLATION_SLICE_FILES 2

/* rtplace.slice's files rtplaced may change, in the order they are put
 * back: a partition root ends before its CPUs go. */
static const char *const isolation_slice_file[ISOLATION_SLICE_FILES] = {
	"cpuset.cpus.partition",
	"cpuset.cpus",
};

/* An interrupt's affinity or the workqueue mask, seen or changed. */
struct isolation_value {
	unsigned irq;     /* ISOLATION_WQ: the workqueue mask */
	char *original;   /* as read, without its newline */
	struct isoplan_mask m;
};

struct isolation_claim {
	uint32_t id;
	struct rtplace_cpumask cpus; /* empty for a partition a killed daemon left */
	bool partition;              /* rtplace-claim-ID is made (or journaled as made) */
	bool scope;                  /* it is systemd's scope rtplace.slice/rtplace-claim-ID.scope */
	char *from;                  /* the cgroup its process came from */
};

struct isolation {
	char proc_root[PATH_MAX];
	char sys_root[PATH_MAX];
	char cgroup_root[PATH_MAX];
	char journal[PATH_MAX];
	char tmp[PATH_MAX];
	uid_t owner;
	bool partition, irqs, workqueues;
	struct rtplace_cpumask *nodes;
	size_t n_nodes;
	struct rtplace_cpumask other;

	struct isolation_value *values; /* interrupts, then the workqueue mask, as met */
	size_t n_values, cap_values;
	struct isolation_claim *claims;
	size_t n_claims, cap_claims;
	bool cpuset_control; /* rtplace enabled cpuset in the root's subtree */
	const struct isolation_scopes *scopes; /* NULL: cgroupfs directly */
	char *slice_orig[ISOLATION_SLICE_FILES]; /* rtplace.slice's files as read; NULL while unchanged */
	bool slice_unit;                         /* rtplaced started rtplace.slice */

	/* A running irqbalance told to ban the CPUs held (ib_changed): which
	 * one, and what it banned before (ib_auto: its own choice, given back
	 * as "NULL"). Kept once given back: read again, its setup reply could
	 * still show the ban until its next rescan. */
	char irqbalance_dir[PATH_MAX];
	bool ib_changed, ib_auto;
	pid_t ib_pid; /* whose ib_original this is; 0: none known */
	struct rtplace_cpumask ib_original;

	int fd;       /* the journal, O_APPEND; -1 when absent or after a failed write */
	size_t lines; /* in the journal */
};

/* --- files ---------------------------------------------------------------- */

/* The file at path into buf (NUL-terminated, its trailing newline cut).
 * 0, -EFBIG when it does not fit, or -errno. */
static int isolation_read(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (n < 0)
		return -errno;
	if (len == size - 1)
		return -EFBIG;
	if (len && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	return 0;
}

/* text and a newline to the kernel file at path, in one write(2), as
 * echo(1) would. 0 or -errno (a short write is -EIO). */
static int isolation_write(const char *path, const char *text)
{
	size_t len = strlen(text);
	char *line = malloc(len + 2);
	ssize_t n;
	int fd, r = 0;

	if (!line)
		return -ENOMEM;
	memcpy(line, text, len);
	memcpy(line + len, "\n", 2);
	/* O_TRUNC: the kernel's files ignore it, a fixture's regular file
	 * then holds what the kernel's would. */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
	} else {
		n = write(fd, line, len + 1);
		if (n < 0)
			r = -errno;
		else if ((size_t)n != len + 1)
			r = -EIO;
		if (close(fd) < 0 && r == 0)
			r = -errno;
	}
	free(line);
	return r;
}

static int isolation_path(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int isolation_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* --- the journal ------------------------------------------------------------ */

static struct isolation_value *isolation_value_find(struct isolation *iso, unsigned irq)
{
	for (size_t i = 0; i < iso->n_values; i++)
		if (iso->values[i].irq == irq)
			return &iso->values[i];
	return NULL;
}

static struct isolation_value *isolation_value_add(struct isolation *iso, unsigned irq)
{
	struct isolation_value *v;

	if (iso->n_values == iso->cap_values) {
		size_t cap = iso->cap_values ? 2 * iso->cap_values : 64;
		void *p = realloc(iso->values, cap * sizeof(*iso->values));

		if (!p)
			return NULL;
		iso->values = p;
		iso->cap_values = cap;
	}
	v = &iso->values[iso->n_values++];
	*v = (struct isolation_value){ .irq = irq };
	return v;
}

static struct isolation_claim *isolation_claim_find(struct isolation *iso, uint32_t id)
{
	for (size_t i = 0; i < iso->n_claims; i++)
		if (iso->claims[i].id == id)
			return &iso->claims[i];
	return NULL;
}

static struct isolation_claim *isolation_claim_add(struct isolation *iso, uint32_t id)
{
	struct isolation_claim *c;

	if (iso->n_claims == iso->cap_claims) {
		size_t cap = iso->cap_claims ? 2 * iso->cap_claims : 16;
		void *p = realloc(iso->claims, cap * sizeof(*iso->claims));

		if (!p)
			return NULL;
		iso->claims = p;
		iso->cap_claims = cap;
	}
	c = &iso->claims[iso->n_claims++];
	*c = (struct isolation_claim){ .id = id };
	return c;
}

static void isolation_claim_remove(struct isolation *iso, struct isolation_claim *c)
{
	free(c->from);
	*c = iso->claims[--iso->n_claims];
}

/* Lines that describe what is held now: the journal once compacted. */
static size_t isolation_held_lines(const struct isolation *iso)
{
	size_t n = iso->cpuset_control + iso->ib_changed + iso->slice_unit;

	for (size_t i = 0; i < ISOLATION_SLICE_FILES; i++)
		n += iso->slice_orig[i] != NULL;
	for (size_t i = 0; i < iso->n_values; i++)
		n += iso->values[i].m.changed;
	for (size_t i = 0; i < iso->n_claims; i++)
		n += iso->claims[i].partition;
	return n;
}

static int isolation_write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* What is held, as a compacted journal's text in a malloc()ed buffer
 * (pure). 0 or -ENOMEM. */
static int isolation_format_held(const struct isolation *iso, char **ret, size_t *ret_len)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool ok;

	if (!f)
		return -ENOMEM;
	ok = fputs(ISOLATION_MAGIC "\n", f) >= 0;
	if (iso->cpuset_control)
		ok = ok && fputs("cpuset-control enabled\n", f) >= 0;
	if (iso->ib_changed) {
		char list[CPUSET_LIST_MAX];

		cpuset_format(&iso->ib_original, list, sizeof(list));
		ok = ok && fprintf(f, "irqbalance %d %s\n", (int)iso->ib_pid, iso->ib_auto ? "NULL" : list) >= 0;
	}
	if (iso->slice_unit)
		ok = ok && fputs("slice-unit started\n", f) >= 0;
	for (size_t i = 0; i < ISOLATION_SLICE_FILES; i++)
		if (iso->slice_orig[i])
			ok = ok && fprintf(f, "slice %s =%s\n", isolation_slice_file[i], iso->slice_orig[i]) >= 0;
	for (size_t i = 0; i < iso->n_values; i++) {
		const struct isolation_value *v = &iso->values[i];

		if (!v->m.changed)
			continue;
		if (v->irq == ISOLATION_WQ)
			ok = ok && fprintf(f, "workqueues %s\n", v->original) >= 0;
		else
			ok = ok && fprintf(f, "irq %u %s\n", v->irq, v->original) >= 0;
	}
	/* The claimant's pid matters only until the partition is made. */
	for (size_t i = 0; i < iso->n_claims; i++)
		if (iso->claims[i].partition)
			ok = ok && fprintf(f, "%s %" PRIu32 " 0 %s\n", iso->claims[i].scope ? "scope" : "partition",
					   iso->claims[i].id, iso->claims[i].from) >= 0;
	if (fclose(f) != 0 || !ok) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* Writes what is held to a fresh file renamed over the journal, or
 * removes the journal when nothing is. 0 or -errno. */
static int isolation_compact(struct isolation *iso)
{
	size_t held = isolation_held_lines(iso), len;
	char *text;
	int fd, r;

	if (iso->fd >= 0)
		close(iso->fd);
	iso->fd = -1;
	iso->lines = 0;
	if (!held)
		return unlink(iso->journal) < 0 && errno != ENOENT ? -errno : 0;
	r = isolation_format_held(iso, &text, &len);
	if (r < 0)
		return r;
	fd = open(iso->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		r = -errno;
	if (r == 0)
		r = isolation_write_all(fd, text, len);
	if (r == 0 && rename(iso->tmp, iso->journal) < 0)
		r = -errno;
	free(text);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		unlink(iso->tmp);
		return r;
	}
	iso->fd = fd;
	iso->lines = held + 1;
	return 0;
}

/*
 * Journals one line (with its newline), which iso's state already
 * reflects: appended, or the journal compacted from that state when it
 * has no file yet, a write failed before (it may have left part of a
 * line, which nothing may follow) or it grew long. 0 or -errno: the
 * change it announces is then not to be made.
 */
static int isolation_journal(struct isolation *iso, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int isolation_journal(struct isolation *iso, const char *fmt, ...)
{
	char line[ISOLATION_LINE_MAX];
	va_list ap;
	int n, r;

	if (iso->fd < 0 || iso->lines > isolation_held_lines(iso) + ISOLATION_COMPACT_SLACK)
		return isolation_compact(iso);
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -ENAMETOOLONG;
	r = isolation_write_all(iso->fd, line, (size_t)n);
	if (r < 0) {
		close(iso->fd);
		iso->fd = -1;
		return r;
	}
	iso->lines++;
	return 0;
}

/* The line that says irq's value (ISOLATION_WQ: the workqueue mask) is
 * its original again. */
static int isolation_journal_put_back(struct isolation *iso, unsigned irq)
{
	if (irq == ISOLATION_WQ)
		return isolation_journal(iso, "workqueues\n");
	return isolation_journal(iso, "irq %u\n", irq);
}

/* Whether text names a cgroup v2 path a line may carry: absolute, no
 * control characters, no "." or ".." component. */
static bool isolation_cgroup_ok(const char *text)
{
	if (text[0] != '/')
		return false;
	for (const char *c = text; *c; c += strcspn(c, "/")) {
		size_t len;

		c += *c == '/';
		len = strcspn(c, "/");
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	for (const unsigned char *s = (const unsigned char *)text; *s; s++)
		if (*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* An "irqbalance" line's rest p into iso's state: " PID ORIGINAL" (a CPU
 * list, or NULL for its own choice), or nothing when it was put back.
 * 0 or -EBADMSG. */
static int isolation_replay_irqbalance(struct isolation *iso, const char *p)
{
	uint64_t pid;

	if (!*p) {
		if (!iso->ib_changed)
			return -EBADMSG;
		iso->ib_changed = false;
		return 0;
	}
	if (iso->ib_changed || *p++ != ' ' || !decimal_parse(&p, INT32_MAX, &pid) || !pid || *p++ != ' ')
		return -EBADMSG;
	iso->ib_auto = strcmp(p, "NULL") == 0;
	cpuset_zero(&iso->ib_original);
	if (!iso->ib_auto && cpuset_parse(p, &iso->ib_original) < 0)
		return -EBADMSG;
	iso->ib_pid = (pid_t)pid;
	iso->ib_changed = true;
	return 0;
}

/* A "slice FILE =ORIGINAL" or "slice FILE" line's words after "slice ".
 * 0, -EBADMSG or -ENOMEM. */
static int isolation_replay_slice(struct isolation *iso, const char *p)
{
	for (size_t i = 0; i < ISOLATION_SLICE_FILES; i++) {
		size_t len = strlen(isolation_slice_file[i]);

		if (strncmp(p, isolation_slice_file[i], len) != 0 || (p[len] && p[len] != ' '))
			continue;
		p += len;
		if (!*p) {
			if (!iso->slice_orig[i])
				return -EBADMSG;
			free(iso->slice_orig[i]);
			iso->slice_orig[i] = NULL;
			return 0;
		}
		if (iso->slice_orig[i] || p[1] != '=')
			return -EBADMSG;
		for (const unsigned char *c = (const unsigned char *)p + 2; *c; c++)
			if (*c < 0x20 || *c == 0x7f)
				return -EBADMSG;
		iso->slice_orig[i] = strdup(p + 2);
		return iso->slice_orig[i] ? 0 : -ENOMEM;
	}
	return -EBADMSG;
}

/* A "partition ID PID CGROUP" or "scope ID PID CGROUP" line (the claim's
 * partition made, its process from CGROUP), or one with ID alone (undone);
 * p is the line past the word. 0, -EBADMSG or -ENOMEM. */
static int isolation_replay_claim(struct isolation *iso, const char *p, bool scope)
{
	struct isolation_claim *c;
	uint64_t id, pid;

	if (!decimal_parse(&p, UINT32_MAX, &id) || !id)
		return -EBADMSG;
	c = isolation_claim_find(iso, (uint32_t)id);
	if (!*p) {
		if (!c || c->scope != scope)
			return -EBADMSG;
		isolation_claim_remove(iso, c);
		return 0;
	}
	if (c || *p++ != ' ' || !decimal_parse(&p, INT32_MAX, &pid) || *p++ != ' ' || !isolation_cgroup_ok(p))
		return -EBADMSG;
	c = isolation_claim_add(iso, (uint32_t)id);
	if (!c)
		return -ENOMEM;
	c->partition = true;
	c->scope = scope;
	c->from = strdup(p);
	if (!c->from) {
		isolation_claim_remove(iso, c);
		return -ENOMEM;
	}
	return 0;
}

/* Value irq (an IRQ, or ISOLATION_WQ) changed from orig, whose mask is
 * mask, or put back (orig NULL). 0, -EBADMSG or -ENOMEM. */
static int isolation_replay_value(struct isolation *iso, unsigned irq, const char *orig,
				  const struct rtplace_cpumask *mask)
{
	struct isolation_value *v = isolation_value_find(iso, irq);

	if (!orig) {
		if (!v || !v->m.changed)
			return -EBADMSG;
		free(v->original);
		v->original = NULL;
		v->m.changed = false;
		return 0;
	}
	if (v && v->m.changed)
		return -EBADMSG;
	if (!v && !(v = isolation_value_add(iso, irq)))
		return -ENOMEM;
	v->original = strdup(orig);
	if (!v->original)
		return -ENOMEM;
	/* What it is now is unknown: whatever it is, restoring writes the original. */
	v->m = (struct isoplan_mask){ .original = *mask, .current = *mask, .changed = true };
	cpuset_zero(&v->m.current);
	return 0;
}

/* One journal line into iso's state. 0, -EBADMSG or -ENOMEM. */
static int isolation_replay_line(struct isolation *iso, const char *line)
{
	struct rtplace_cpumask mask;
	const char *p;
	uint64_t n;
	unsigned irq;

	if (strcmp(line, "cpuset-control enabled") == 0 || strcmp(line, "cpuset-control") == 0) {
		iso->cpuset_control = line[strlen("cpuset-control")] != '\0';
		return 0;
	}
	if (strncmp(line, "irqbalance", strlen("irqbalance")) == 0)
		return isolation_replay_irqbalance(iso, line + strlen("irqbalance"));
	if (strcmp(line, "slice-unit started") == 0 || strcmp(line, "slice-unit") == 0) {
		iso->slice_unit = line[strlen("slice-unit")] != '\0';
		return 0;
	}
	if (strncmp(line, "slice ", strlen("slice ")) == 0)
		return isolation_replay_slice(iso, line + strlen("slice "));
	if (strncmp(line, "partition ", strlen("partition ")) == 0)
		return isolation_replay_claim(iso, line + strlen("partition "), false);
	if (strncmp(line, "scope ", strlen("scope ")) == 0)
		return isolation_replay_claim(iso, line + strlen("scope "), true);
	if (strncmp(line, "irq ", strlen("irq ")) == 0) {
		p = line + strlen("irq ");
		if (!decimal_parse(&p, UINT_MAX - 1, &n))
			return -EBADMSG;
		irq = (unsigned)n;
		if (*p && (*p++ != ' ' || cpuset_parse(p, &mask) < 0 || cpuset_empty(&mask)))
			return -EBADMSG;
	} else if (strcmp(line, "workqueues") == 0 || strncmp(line, "workqueues ", strlen("workqueues ")) == 0) {
		p = line + strlen("workqueues");
		irq = ISOLATION_WQ;
		if (*p && (*p++ != ' ' || isoplan_hex_parse(p, &mask) < 0 || cpuset_empty(&mask)))
			return -EBADMSG;
	} else {
		return -EBADMSG;
	}
	return isolation_replay_value(iso, irq, *p ? p : NULL, &mask);
}

/* Takes over the journal's text: what it holds is iso's to undo. A last
 * line without its newline is a write the daemon died in, before the
 * change it announced. Lines it cannot read are named in reason. */
static int isolation_replay(struct isolation *iso, char *text, size_t len, struct rtplace_reason *reason)
{
	char *p = text, *end = text + len;
	unsigned line = 0, bad = 0;

	while (p < end) {
		char *eol = memchr(p, '\n', (size_t)(end - p));
		int r;

		if (!eol)
			break;
		*eol = '\0';
		line++;
		/* Longer than any line this file writes: a value read from the
		 * kernel fits ISOLATION_VALUE_MAX, a cgroup path PATH_MAX. */
		if ((size_t)(eol - p) >= ISOLATION_LINE_MAX || memchr(p, '\0', (size_t)(eol - p)))
			r = -EBADMSG;
		else if (line == 1)
			r = strcmp(p, ISOLATION_MAGIC) == 0 ? 0 : -EBADMSG;
		else
			r = isolation_replay_line(iso, p);
		if (r == -ENOMEM)
			return r;
		if (r < 0 && line == 1) {
			reason_set(reason, "%s: not an isolation journal (line 1): nothing in it is undone", iso->journal);
			return 0;
		}
		if (r < 0 && bad++)
			reason_append(reason, ", %u", line);
		else if (r < 0)
			reason_set(reason, "%s: unreadable line %u", iso->journal, line);
		iso->lines++;
		p = eol + 1;
	}
	if (bad)
		reason_append(reason, " left alone");
	return 0;
}

static int isolation_load(struct isolation *iso, struct rtplace_reason *reason)
{
	char dir[PATH_MAX], *slash, *text;
	struct stat st;
	ssize_t n;
	size_t len = 0;
	int fd, r;

	snprintf(dir, sizeof(dir), "%s", iso->journal);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	fd = open(iso->journal, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	r = claims_state_trusted(&st, iso->owner, false, reason);
	if (r == 0 && !S_ISREG(st.st_mode)) {
		reason_set(reason, "the file is not a regular file");
		r = -EPERM;
	}
	if (r == 0 && (size_t)st.st_size > ISOLATION_FILE_MAX)
		r = -EFBIG;
	if (r == 0) {
		struct stat dst;

		if (stat(dir, &dst) < 0)
			r = -errno;
		else
			r = claims_state_trusted(&dst, iso->owner, true, reason);
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	while (len < (size_t)st.st_size && (n = read(fd, text + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)n;
	close(fd);
	reason->text[0] = '\0';
	r = isolation_replay(iso, text, len, reason);
	free(text);
	return r;
}

int isolation_journal_compacted(const char *text, size_t len, char **ret, size_t *ret_len,
				struct rtplace_reason *reason)
{
	struct isolation *iso = calloc(1, sizeof(*iso));
	char *copy = malloc(len + 1);
	int r = -ENOMEM;

	reason->text[0] = '\0';
	if (iso && copy) {
		iso->fd = -1;
		memcpy(copy, text, len);
		r = isolation_replay(iso, copy, len, reason);
	}
	if (r == 0)
		r = isolation_format_held(iso, ret, ret_len);
	free(copy);
	isolation_free(iso);
	return r;
}

/* --- set up ----------------------------------------------------------------- */

int isolation_set_host(struct isolation *iso, const struct rtplace_cpumask *nodes, size_t n_nodes,
		       const struct rtplace_cpumask *other)
{
	struct rtplace_cpumask *copy = calloc(n_nodes ? n_nodes : 1, sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	if (n_nodes)
		memcpy(copy, nodes, n_nodes * sizeof(*copy));
	free(iso->nodes);
	iso->nodes = copy;
	iso->n_nodes = n_nodes;
	iso->other = *other;
	return 0;
}

int isolation_new(const struct isolation_opts *opts, const struct config *cfg, struct isolation **ret,
		  struct rtplace_reason *reason)
{
	struct isolation *iso = calloc(1, sizeof(*iso));
	const char *cg = opts->cgroup_root ? opts->cgroup_root : cfg->isolation.cgroup_root;
	int r;

	reason->text[0] = '\0';
	if (!iso)
		return -ENOMEM;
	iso->fd = -1;
	if (isolation_path(iso->proc_root, sizeof(iso->proc_root), "%s", opts->proc_root) < 0 ||
	    isolation_path(iso->sys_root, sizeof(iso->sys_root), "%s", opts->sys_root) < 0 ||
	    isolation_path(iso->cgroup_root, sizeof(iso->cgroup_root), "%s", cg) < 0 ||
	    isolation_path(iso->journal, sizeof(iso->journal), "%s", opts->journal) < 0 ||
	    isolation_path(iso->tmp, sizeof(iso->tmp), "%s.tmp", opts->journal) < 0 ||
	    isolation_path(iso->irqbalance_dir, sizeof(iso->irqbalance_dir), "%s",
			   opts->irqbalance_dir ? opts->irqbalance_dir : IRQBALANCE_RUN_DIR) < 0) {
		free(iso);
		return -ENAMETOOLONG;
	}
	iso->owner = opts->owner;
	iso->scopes = opts->scopes;
	iso->partition = cfg->isolation.partition;
	iso->irqs = cfg->isolation.irqs;
	iso->workqueues = cfg->isolation.workqueues;
	r = isolation_set_host(iso, opts->nodes, opts->n_nodes, &opts->other);
	if (r == 0)
		r = isolation_load(iso, reason);
	if (r < 0) {
		isolation_free(iso);
		return r;
	}
	*ret = iso;
	return 0;
}

void isolation_free(struct isolation *iso)
{
	if (!iso)
		return;
	if (iso->fd >= 0)
		close(iso->fd);
	for (size_t i = 0; i < iso->n_values; i++)
		free(iso->values[i].original);
	for (size_t i = 0; i < iso->n_claims; i++)
		free(iso->claims[i].from);
	for (size_t i = 0; i < ISOLATION_SLICE_FILES; i++)
		free(iso->slice_orig[i]);
	free(iso->values);
	free(iso->claims);
	free(iso->nodes);
	free(iso);
}

void isolation_cpus(const struct isolation *iso, struct rtplace_cpumask *ret)
{
	cpuset_zero(ret);
	for (size_t i = 0; i < iso->n_claims; i++)
		cpuset_or(ret, ret, &iso->claims[i].cpus);
}

/* --- interrupts and unbound work ---------------------------------------------- */

static int isolation_value_path(const struct isolation *iso, unsigned irq, char *buf, size_t size)
{
	if (irq == ISOLATION_WQ)
		return isolation_path(buf, size, "%s/devices/virtual/workqueue/cpumask", iso->sys_root);
	return isolation_path(buf, size, "%s/irq/%u/smp_affinity_list", iso->proc_root, irq);
}

static int isolation_value_parse(unsigned irq, const char *text, struct rtplace_cpumask *ret)
{
	return irq == ISOLATION_WQ ? isoplan_hex_parse(text, ret) : cpuset_parse(text, ret);
}

static int isolation_value_format(unsigned irq, const struct rtplace_cpumask *s, char *buf, size_t size)
{
	return irq == ISOLATION_WQ ? isoplan_hex_format(s, buf, size) : cpuset_format(s, buf, size);
}

static const char *isolation_value_name(unsigned irq, char *buf, size_t size)
{
	if (irq == ISOLATION_WQ)
		snprintf(buf, size, "the workqueue mask");
	else
		snprintf(buf, size, "IRQ %u", irq);
	return buf;
}

/* Appends "NAME what (error)" to reason, after a "; " when it has text. */
static void isolation_value_fail(unsigned irq, const char *what, int r, struct rtplace_reason *reason)
{
	char name[32];

	reason_append(reason, "%s%s %s (%s)", reason->text[0] ? "; " : "", isolation_value_name(irq, name, sizeof(name)),
		      what, strerror(-r));
}

/*
 * The entry of irq's value, its original and current mask read from path
 * unless it is changed (someone else may have changed an unchanged one
 * since), the text read in text (ISOLATION_VALUE_MAX bytes). 0 with *ret;
 * -ENOENT for an interrupt freed since it was listed; another -errno.
 */
static int isolation_value_seen(struct isolation *iso, unsigned irq, const char *path, char *text,
				struct isolation_value **ret, struct rtplace_reason *reason)
{
	struct isolation_value *v = isolation_value_find(iso, irq);
	struct rtplace_cpumask mask;
	int r;

	if (v && v->m.changed) {
		*ret = v;
		return 0;
	}
	r = isolation_read(path, text, ISOLATION_VALUE_MAX);
	if (r == 0 && isolation_value_parse(irq, text, &mask) < 0)
		r = -EBADMSG;
	if (r == -ENOENT)
		return r;
	if (r < 0) {
		isolation_value_fail(irq, "unreadable", r, reason);
		return r;
	}
	if (!v && !(v = isolation_value_add(iso, irq)))
		return -ENOMEM;
	v->m.original = mask;
	v->m.current = mask;
	*ret = v;
	return 0;
}

/* Forgets v's original: it is what the file holds (or the file is gone). */
static void isolation_value_forget(struct isolation_value *v)
{
	free(v->original);
	v->original = NULL;
	v->m.changed = false;
}

/* Writes v's original back to path, journaled after: a death before the
 * line restores it once more. 1, or -errno (a failed write in reason). */
static int isolation_value_restore(struct isolation *iso, struct isolation_value *v, const char *path,
				   struct rtplace_reason *reason)
{
	int r = isolation_write(path, v->original);

	/* Gone with its device: nothing is left to restore. */
	if (r < 0 && r != -ENOENT) {
		isolation_value_fail(v->irq, "not written", r, reason);
		return r;
	}
	isolation_value_forget(v);
	r = isolation_journal_put_back(iso, v->irq);
	return r < 0 ? r : 1;
}

/* Journals the original text of v, about to change for the first time.
 * 0, -ENOMEM, or the journal's -errno (in reason). */
static int isolation_value_journal(struct isolation *iso, struct isolation_value *v, const char *text,
				   struct rtplace_reason *reason)
{
	int r;

	v->original = strdup(text);
	if (!v->original)
		return -ENOMEM;
	v->m.changed = true;
	if (v->irq == ISOLATION_WQ)
		r = isolation_journal(iso, "workqueues %s\n", v->original);
	else
		r = isolation_journal(iso, "irq %u %s\n", v->irq, v->original);
	if (r < 0) {
		isolation_value_forget(v);
		isolation_value_fail(v->irq, "not written", r, reason);
	}
	return r;
}

/*
 * Writes mask to v's file at path, its original (text) journaled first
 * when it was unchanged. 1 when written; 0 for a managed interrupt, noted
 * in managed (the kernel keeps its affinity: EIO, or EPERM since Linux
 * 6.x); -errno otherwise (a failed write or journal in reason). A failed
 * first change is journaled undone.
 */
static int isolation_value_set(struct isolation *iso, struct isolation_value *v, const char *path, char *text,
			       const struct rtplace_cpumask *mask, struct rtplace_cpumask *managed,
			       struct rtplace_reason *reason)
{
	bool journaled = !v->m.changed, managed_irq;
	int r = journaled ? isolation_value_journal(iso, v, text, reason) : 0;

	if (r < 0)
		return r;
	if (isolation_value_format(v->irq, mask, text, ISOLATION_VALUE_MAX) < 0)
		return -ENOSPC;
	r = isolation_write(path, text);
	if (r == 0) {
		v->m.current = *mask;
		return 1;
	}
	managed_irq = v->irq != ISOLATION_WQ && (r == -EIO || r == -EPERM);
	if (managed_irq) {
		v->m.managed = true;
		cpuset_set(managed, v->irq);
	}
	if (journaled) {
		isolation_value_forget(v);
		isolation_journal_put_back(iso, v->irq);
	}
	if (managed_irq)
		return 0;
	isolation_value_fail(v->irq, "not written", r, reason);
	return r;
}

/*
 * Brings the value of irq (ISOLATION_WQ: the workqueue mask) to what the
 * CPUs held now ask (isoplan_mask()): kept, set (the original journaled
 * first) or restored. Returns 1 when something was written, 0 when
 * nothing was to be, -errno when a write failed; a managed interrupt is
 * noted in managed, anything else that failed in reason.
 */
static int isolation_sync_value(struct isolation *iso, unsigned irq, struct rtplace_cpumask *managed,
				struct rtplace_reason *reason)
{
	struct isoplan_host h = { .nodes = iso->nodes, .n_nodes = iso->n_nodes, .other = iso->other };
	char path[PATH_MAX], text[ISOLATION_VALUE_MAX];
	struct isolation_value *v;
	struct rtplace_cpumask mask;
	int r;

	if (isolation_value_path(iso, irq, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	isolation_cpus(iso, &h.held);
	r = isolation_value_seen(iso, irq, path, text, &v, reason);
	/* An interrupt freed since it was listed: nothing to do. */
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	switch (isoplan_mask(&h, &v->m, &mask)) {
	case ISOPLAN_MANAGED:
		cpuset_set(managed, irq);
		return 0;
	case ISOPLAN_RESTORE:
		return isolation_value_restore(iso, v, path, reason);
	case ISOPLAN_SET:
		return isolation_value_set(iso, v, path, text, &mask, managed, reason);
	case ISOPLAN_KEEP:
		break;
	}
	return 0;
}

/* What irqbalance pid is told to ban for the CPUs held. */
static int isolation_irqbalance_tell(struct isolation *iso, pid_t pid, const struct rtplace_cpumask *held)
{
	struct rtplace_cpumask ban;

	if (cpuset_empty(held))
		return irqbalance_ban(iso->irqbalance_dir, pid, iso->ib_auto ? NULL : &iso->ib_original);
	cpuset_or(&ban, &iso->ib_original, held);
	return irqbalance_ban(iso->irqbalance_dir, pid, &ban);
}

/*
 * A running irqbalance bans the CPUs held, or what it banned before once
 * none is (journaled first, as the values). One that runs where its
 * socket cannot be reached is not fought: reason says so (the interrupts
 * are moved all the same; it may move them back). 0 or -errno.
 */
static int isolation_sync_irqbalance(struct isolation *iso, struct isolation_report *rep,
				     struct rtplace_reason *reason)
{
	struct rtplace_cpumask held, banned;
	char list[CPUSET_LIST_MAX];
	pid_t pid = 0;
	int r;

	isolation_cpus(iso, &held);
	if (!iso->ib_changed && (!iso->irqs || cpuset_empty(&held)))
		return 0;
	r = irqbalance_find(iso->proc_root, &pid);
	/* Gone, or another one since: what it was told went with it. */
	if (iso->ib_changed && (r < 0 || pid != iso->ib_pid)) {
		iso->ib_changed = false;
		iso->ib_pid = 0;
		return isolation_journal(iso, "irqbalance\n");
	}
	if (r == -ESRCH)
		return 0;
	if (r < 0)
		return r;
	if (iso->ib_changed && (cpuset_empty(&held) || !iso->irqs)) {
		cpuset_zero(&held);
		r = isolation_irqbalance_tell(iso, pid, &held);
		if (r < 0)
			goto unreached;
		iso->ib_changed = false;
		return isolation_journal(iso, "irqbalance\n");
	}
	if (!iso->ib_changed && iso->ib_pid != pid) {
		r = irqbalance_banned(iso->irqbalance_dir, pid, &banned);
		if (r < 0)
			goto unreached;
		/* Its own choice: the CPUs the host isolates (irqbalance 1.9). */
		iso->ib_auto = cpuset_equal(&banned, &iso->other);
		iso->ib_original = banned;
		iso->ib_pid = pid;
	}
	if (!iso->ib_changed) {
		iso->ib_changed = true;
		snprintf(list, sizeof(list), "NULL");
		if (!iso->ib_auto)
			cpuset_format(&iso->ib_original, list, sizeof(list));
		r = isolation_journal(iso, "irqbalance %d %s\n", (int)pid, list);
		if (r < 0) {
			iso->ib_changed = false;
			return r;
		}
	}
	r = isolation_irqbalance_tell(iso, pid, &held);
	if (r == 0) {
		rep->done |= RTPLACE_ISOLATED_IRQBALANCE;
		return 0;
	}
unreached:
	rep->done |= RTPLACE_ISOLATED_IRQBALANCE_UNREACHED;
	cpuset_format(&held, list, sizeof(list));
	reason_append(reason,
		      "%sirqbalance (pid %d) runs and its socket %s/irqbalance%d.sock does not answer (%s): not "
		      "fought, it may move interrupts back onto CPUs %s (ban them in its IRQBALANCE_BANNED_CPULIST, or "
		      "start it where %s exists)",
		      reason->text[0] ? "; " : "", (int)pid, iso->irqbalance_dir, (int)pid, strerror(-r),
		      list[0] ? list : "-", iso->irqbalance_dir);
	return r;
}

/* Every interrupt, then the workqueue mask, as [isolation] turns them on,
 * and every value journaled whatever it says (one turned off since a
 * killed daemon changed it, an interrupt no longer listed). Returns how
 * many values were written, or the first -errno (reason says which);
 * *rep says what was done and what could not be. */
static int isolation_sync(struct isolation *iso, struct isolation_report *rep, struct rtplace_reason *reason)
{
	struct rtplace_cpumask managed;
	char path[PATH_MAX];
	int written = 0, first = 0;
	DIR *d;

	*rep = (struct isolation_report){ 0 };
	cpuset_zero(&managed);
	if (iso->irqs) {
		if (isolation_path(path, sizeof(path), "%s/irq", iso->proc_root) < 0)
			return -ENAMETOOLONG;
		d = opendir(path);
		if (!d) {
			reason_append(reason, "%s%s unreadable (%s)", reason->text[0] ? "; " : "", path, strerror(errno));
			first = -errno;
		}
		for (struct dirent *de; d && (de = readdir(d));) {
			const char *p = de->d_name;
			uint64_t irq;
			int r;

			if (!decimal_parse(&p, UINT_MAX - 1, &irq) || *p)
				continue;
			r = isolation_sync_value(iso, (unsigned)irq, &managed, reason);
			if (r == -ENOMEM) {
				closedir(d);
				return r;
			}
			if (r < 0 && !first)
				first = r;
			rep->not_written += r < 0;
			written += r > 0;
		}
		if (d) {
			closedir(d);
			rep->done |= RTPLACE_ISOLATED_IRQS;
		}
	}
	for (size_t i = 0; i < iso->n_values; i++) {
		int r;

		if (!iso->values[i].m.changed || (iso->values[i].irq == ISOLATION_WQ && iso->workqueues))
			continue;
		r = isolation_sync_value(iso, iso->values[i].irq, &managed, reason);
		if (r < 0 && !first)
			first = r;
		rep->not_written += r < 0;
		written += r > 0;
	}
	if (iso->workqueues) {
		int r = isolation_sync_value(iso, ISOLATION_WQ, &managed, reason);

		if (r < 0 && !first)
			first = r;
		rep->not_written += r < 0;
		rep->done |= r >= 0 ? RTPLACE_ISOLATED_WORKQUEUES : 0;
		written += r > 0;
	}
	if (isolation_sync_irqbalance(iso, rep, reason) == -ENOMEM)
		return -ENOMEM;
	if (rep->not_written)
		rep->done |= RTPLACE_ISOLATED_NOT_WRITTEN;
	if (!cpuset_empty(&managed)) {
		char list[CPUSET_LIST_MAX];

		rep->managed = cpuset_count(&managed);
		rep->done |= RTPLACE_ISOLATED_MANAGED_KEPT;
		cpuset_format(&managed, list, sizeof(list));
		reason_append(reason, "%smanaged IRQ %s kept by the kernel", reason->text[0] ? "; " : "", list);
	}
	return first < 0 ? first : written;
}

/* --- the partition -------------------------------------------------------------- */

/* The folder of claim c's partition, or its file. */
static int isolation_partition_path(const struct isolation *iso, const struct isolation_claim *c, const char *file,
				    char *buf, size_t size)
{
	return isolation_path(buf, size, "%s/%srtplace-claim-%" PRIu32 "%s%s%s", iso->cgroup_root,
			      c->scope ? ISOLATION_SLICE "/" : "", c->id, c->scope ? ".scope" : "", file ? "/" : "",
			      file ? file : "");
}

/* Whether the word is in the blank-separated list. */
static bool isolation_has_word(const char *list, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += len)
		if ((p == list || isspace((unsigned char)p[-1])) && (!p[len] || isspace((unsigned char)p[len])))
			return true;
	return false;
}

/* Whether the cgroup root can hold a partition; -EOPNOTSUPP naming what
 * is missing. */
static int isolation_partition_check(struct isolation *iso, struct rtplace_reason *reason)
{
	char path[PATH_MAX], text[512];
	int r;

	if (isolation_path(path, sizeof(path), "%s/cgroup.controllers", iso->cgroup_root) < 0)
		return -ENAMETOOLONG;
	r = isolation_read(path, text, sizeof(text));
	if (r == -ENOENT) {
		reason_set(reason,
			   "%s is no cgroup v2 hierarchy (it has no cgroup.controllers: cgroup v1, or a hybrid "
			   "mount): an isolated partition needs cgroup v2 with the cpuset controller",
			   iso->cgroup_root);
		return -EOPNOTSUPP;
	}
	if (r < 0) {
		reason_set(reason, "cannot read %s: %s", path, strerror(-r));
		return r;
	}
	if (!isolation_has_word(text, "cpuset")) {
		reason_set(reason,
			   "the cgroup v2 hierarchy at %s has no cpuset controller (cgroup.controllers: \"%s\"): it "
			   "is bound to a cgroup v1 hierarchy or not in the kernel",
			   iso->cgroup_root, text);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Enables cpuset for the root's children, journaled first, unless it is. */
static int isolation_cpuset_control(struct isolation *iso, struct rtplace_reason *reason)
{
	char path[PATH_MAX], text[512];
	int r;

	if (isolation_path(path, sizeof(path), "%s/cgroup.subtree_control", iso->cgroup_root) < 0)
		return -ENAMETOOLONG;
	r = isolation_read(path, text, sizeof(text));
	if (r == 0 && isolation_has_word(text, "cpuset"))
		return 0;
	if (r == 0 && !iso->cpuset_control) {
		iso->cpuset_control = true;
		r = isolation_journal(iso, "cpuset-control enabled\n");
		if (r < 0)
			iso->cpuset_control = false;
	}
	if (r == 0)
		r = isolation_write(path, "+cpuset");
	if (r < 0)
		reason_set(reason, "cannot enable the cpuset controller in %s: %s", path, strerror(-r));
	return r;
}

/* The cgroup v2 path of process pid, from <proc>/PID/cgroup. */
static int isolation_cgroup_of(struct isolation *iso, pid_t pid, char *buf, size_t size,
			       struct rtplace_reason *reason)
{
	char text[4096];
	const char *line;
	size_t len;
	ssize_t n = procfs_read(iso->proc_root, pid, "cgroup", text, sizeof(text));

	if (n < 0) {
		reason_set(reason, "cannot read the cgroup of process %d: %s", (int)pid, strerror((int)-n));
		return (int)n;
	}
	for (line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (strncmp(line, "0::", 3) == 0)
			break;
	if (!line) {
		reason_set(reason, "process %d is in no cgroup v2 group", (int)pid);
		return -EOPNOTSUPP;
	}
	line += 3;
	len = strcspn(line, "\n");
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (!isolation_cgroup_ok(buf)) {
		reason_set(reason, "process %d is in a cgroup whose path cannot be journaled", (int)pid);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Moves every process listed in procs into the cgroup.procs at dest (the
 * root's when that is gone), through systemd first for a scope c: how
 * many were, or -errno with reason. */
static int isolation_move_out(struct isolation *iso, const struct isolation_claim *c, const char *procs,
			      const char *dest, struct rtplace_reason *reason)
{
	char text[65536];
	int r = isolation_read(procs, text, sizeof(text)), moved = 0;

	if (r == -ENOENT)
		return 0;
	for (char *pid = text; r == 0 && *pid; pid += strcspn(pid, "\n"), pid += *pid == '\n') {
		struct rtplace_reason why = { "" };
		char one[16];
		size_t len = strcspn(pid, "\n");

		if (!len || len >= sizeof(one))
			continue;
		memcpy(one, pid, len);
		one[len] = '\0';
		/* systemd may write where rtplaced may not (a user's own
		 * cgroup files), and learns where the process went. */
		r = c->scope && iso->scopes ? iso->scopes->attach(iso->scopes->ctx, c->from, atoi(one), &why)
						 : -EOPNOTSUPP;
		if (r < 0)
			r = isolation_write(dest, one);
		if (r == -ENOENT) {
			char root[PATH_MAX];

			if (isolation_path(root, sizeof(root), "%s/cgroup.procs", iso->cgroup_root) == 0)
				r = isolation_write(root, one);
		}
		moved += r == 0;
		/* It exited meanwhile. */
		if (r == -ESRCH)
			r = 0;
		if (r < 0)
			reason_append(reason, "%scannot move process %s to %s: %s%s%s", reason->text[0] ? "; " : "", one,
				      dest, strerror(-r), why.text[0] ? "; " : "", why.text);
	}
	return r < 0 ? r : moved;
}

static int isolation_slice_files_sync(struct isolation *iso, bool *ret_empty, struct rtplace_reason *reason);

/* Empties the partition of c and removes it: on cgroupfs, each round
 * moves its processes out, ends the partition and tries rmdir(2); a
 * scope is dissolved first, emptied, then stopped (systemd removes it;
 * rmdir(2) when systemd is gone since). 0 or -errno. */
static int isolation_partition_remove(struct isolation *iso, struct isolation_claim *c, const char *dest,
				      struct rtplace_reason *reason)
{
	char path[PATH_MAX], procs[PATH_MAX], file[PATH_MAX], unit[64];
	int r = 0;

	if (isolation_partition_path(iso, c, NULL, path, sizeof(path)) < 0 ||
	    isolation_partition_path(iso, c, "cgroup.procs", procs, sizeof(procs)) < 0 ||
	    isolation_partition_path(iso, c, "cpuset.cpus.partition", file, sizeof(file)) < 0)
		return -ENAMETOOLONG;
	/* Back to a member, so the CPUs return to the hierarchy at once. */
	if (c->scope)
		isolation_write(file, "member");
	for (int round = 0; round < ISOLATION_EMPTY_ROUNDS; round++) {
		r = isolation_move_out(iso, c, procs, dest, reason);
		if (r < 0 || (c->scope && r == 0))
			break;
		if (c->scope)
			continue;
		isolation_write(file, "member");
		r = rmdir(path) < 0 ? -errno : 0;
		if (r != -EBUSY)
			break;
	}
	if (r > 0)
		r = -EBUSY;
	/* The slice's partition ends before systemd stops the scope: stopping
	 * it, systemd writes the slice's cpuset.cpus (empty: it sets no
	 * AllowedCPUs= there), and a partition root whose CPUs are emptied
	 * and then ended keeps them from its parent on Linux 6.1 (the root
	 * then lacked the CPU for good: the system tier's bookworm guest). */
	if (r == 0 && c->scope) {
		bool empty;

		r = isolation_slice_files_sync(iso, &empty, reason);
	}
	if (r == 0 && c->scope) {
		snprintf(unit, sizeof(unit), "rtplace-claim-%" PRIu32 ".scope", c->id);
		if (iso->scopes) {
			struct rtplace_reason why = { "" };

			r = iso->scopes->stop(iso->scopes->ctx, unit, &why);
			if (r < 0)
				reason_append(reason, "%s%s", reason->text[0] ? "; " : "", why.text);
			return r;
		}
		r = rmdir(path) < 0 ? -errno : 0;
	}
	if (r < 0 && r != -ENOENT)
		reason_append(reason, "%scannot remove %s: %s", reason->text[0] ? "; " : "", path, strerror(-r));
	return r == -ENOENT ? 0 : r;
}

/* Moves every process of the partition of c back where it came from (the
 * root when that is gone), ends the partition and removes it. 0, or -errno
 * with reason. */
static int isolation_partition_undo(struct isolation *iso, struct isolation_claim *c,
				    struct rtplace_reason *reason)
{
	char dest[PATH_MAX];
	int r;

	if (isolation_path(dest, sizeof(dest), "%s%s/cgroup.procs", iso->cgroup_root,
			   strcmp(c->from, "/") == 0 ? "" : c->from) < 0)
		return -ENAMETOOLONG;
	r = isolation_partition_remove(iso, c, dest, reason);
	if (r < 0)
		return r;
	c->partition = false;
	return isolation_journal(iso, "%s %" PRIu32 "\n", c->scope ? "scope" : "partition", c->id);
}

/*
 * Makes claim c's cgroup, there already, an isolated partition of its CPUs
 * (list): its cpuset.cpus, its cpuset.cpus.exclusive where the kernel has
 * one (Linux 6.7 and later: the CPUs are the partition's alone), then the
 * partition, read back because the kernel takes an invalid partition and
 * says so only when read. unit names a systemd scope in a refusal ("":
 * none). 0 or -errno with reason.
 */
static int isolation_partition_isolate(struct isolation *iso, const struct isolation_claim *c, const char *list,
				       const char *unit, struct rtplace_reason *reason)
{
	char path[PATH_MAX], text[256];
	int r;

	isolation_partition_path(iso, c, "cpuset.cpus", path, sizeof(path));
	r = isolation_write(path, list);
	if (r == 0) {
		isolation_partition_path(iso, c, "cpuset.cpus.exclusive", path, sizeof(path));
		if (access(path, F_OK) == 0)
			r = isolation_write(path, list);
	}
	if (r == 0) {
		isolation_partition_path(iso, c, "cpuset.cpus.partition", path, sizeof(path));
		r = isolation_write(path, "isolated");
	}
	if (r < 0) {
		reason_set(reason, "cannot write %s: %s", path, strerror(-r));
		return r;
	}
	r = isolation_read(path, text, sizeof(text));
	if (r == 0 && strcmp(text, "isolated") != 0) {
		reason_set(reason, "the kernel refused the partition of CPUs %s%s%s: %s", list, unit[0] ? " in " : "",
			   unit, text);
		r = -EOPNOTSUPP;
	}
	return r;
}

/* Makes claim c's partition of its CPUs and moves pid into it. */
static int isolation_partition_make(struct isolation *iso, struct isolation_claim *c, pid_t pid,
				    struct rtplace_reason *reason)
{
	char from[PATH_MAX], path[PATH_MAX], list[CPUSET_LIST_MAX], one[16];
	int r;

	r = isolation_partition_check(iso, reason);
	if (r == 0)
		r = isolation_cgroup_of(iso, pid, from, sizeof(from), reason);
	if (r == 0)
		r = isolation_cpuset_control(iso, reason);
	if (r < 0)
		return r;
	c->from = strdup(from);
	if (!c->from)
		return -ENOMEM;
	c->partition = true;
	r = isolation_journal(iso, "partition %" PRIu32 " %d %s\n", c->id, (int)pid, from);
	if (r < 0) {
		c->partition = false;
		reason_set(reason, "cannot journal the partition in %s: %s", iso->journal, strerror(-r));
		return r;
	}
	if (isolation_partition_path(iso, c, NULL, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	if (mkdir(path, 0755) < 0) {
		r = -errno;
		reason_set(reason, "cannot make %s: %s", path, strerror(-r));
		/* One there already is named for this claim: removed with it. */
		if (r != -EEXIST) {
			c->partition = false;
			isolation_journal(iso, "partition %" PRIu32 "\n", c->id);
		}
		return r;
	}
	cpuset_format(&c->cpus, list, sizeof(list));
	isolation_partition_path(iso, c, "cpuset.cpus.partition", path, sizeof(path));
	if (access(path, F_OK) < 0) {
		reason_set(reason, "the kernel makes no cpuset partitions (%s is missing; Linux 5.15 and later)", path);
		return -EOPNOTSUPP;
	}
	r = isolation_partition_isolate(iso, c, list, "", reason);
	if (r < 0)
		return r;
	snprintf(one, sizeof(one), "%d", (int)pid);
	isolation_partition_path(iso, c, "cgroup.procs", path, sizeof(path));
	if (r == 0)
		r = isolation_write(path, one);
	if (r < 0)
		reason_set(reason, "cannot move process %d into %s: %s", (int)pid, path, strerror(-r));
	return r;
}

/* Brings rtplace.slice's file i to want (NULL: its original bytes),
 * journaling its original before the first change. 0 or -errno. */
static int isolation_slice_file_set(struct isolation *iso, size_t i, const char *want, struct rtplace_reason *reason)
{
	char path[PATH_MAX], text[ISOLATION_VALUE_MAX];
	int r;

	if (!want && !iso->slice_orig[i])
		return 0;
	if (isolation_path(path, sizeof(path), "%s/" ISOLATION_SLICE "/%s", iso->cgroup_root, isolation_slice_file[i]) < 0)
		return -ENAMETOOLONG;
	if (!want) {
		r = isolation_write(path, iso->slice_orig[i]);
		/* Gone with the slice: nothing is left to restore. */
		if (r < 0 && r != -ENOENT) {
			reason_append(reason, "%scannot write %s back: %s", reason->text[0] ? "; " : "", path, strerror(-r));
			return r;
		}
		free(iso->slice_orig[i]);
		iso->slice_orig[i] = NULL;
		return isolation_journal(iso, "slice %s\n", isolation_slice_file[i]);
	}
	if (!iso->slice_orig[i]) {
		r = isolation_read(path, text, sizeof(text));
		if (r == 0 && !(iso->slice_orig[i] = strdup(text)))
			r = -ENOMEM;
		if (r == 0)
			r = isolation_journal(iso, "slice %s =%s\n", isolation_slice_file[i], text);
		if (r < 0) {
			free(iso->slice_orig[i]);
			iso->slice_orig[i] = NULL;
			reason_append(reason, "%scannot keep %s: %s", reason->text[0] ? "; " : "", path, strerror(-r));
			return r;
		}
	}
	r = isolation_write(path, want);
	if (r < 0)
		reason_append(reason, "%scannot write \"%s\" to %s: %s", reason->text[0] ? "; " : "", want, path,
			      strerror(-r));
	return r;
}

/* Brings rtplace.slice's files to what the scopes' claims need: a
 * partition root of their CPUs, or their original bytes when none is
 * left, the partition ended before its CPUs go. *ret_empty: no scope's
 * claim holds a CPU. 0 or -errno with reason. */
static int isolation_slice_files_sync(struct isolation *iso, bool *ret_empty, struct rtplace_reason *reason)
{
	struct rtplace_cpumask all;
	const char *want[ISOLATION_SLICE_FILES] = { NULL };
	char list[CPUSET_LIST_MAX];
	bool any = false;
	int r = 0;

	cpuset_zero(&all);
	for (size_t i = 0; i < iso->n_claims; i++)
		if (iso->claims[i].scope)
			cpuset_or(&all, &all, &iso->claims[i].cpus);
	for (size_t i = 0; i < ISOLATION_SLICE_FILES; i++)
		any = any || iso->slice_orig[i];
	*ret_empty = cpuset_empty(&all);
	if (*ret_empty && !any)
		return 0;
	cpuset_format(&all, list, sizeof(list));
	if (!*ret_empty) {
		want[0] = "root";
		want[1] = list;
	}
	for (size_t k = 0; k < ISOLATION_SLICE_FILES && r == 0; k++) {
		size_t i = *ret_empty ? k : ISOLATION_SLICE_FILES - 1 - k;

		r = isolation_slice_file_set(iso, i, want[i], reason);
	}
	return r;
}

/*
 * Brings rtplace.slice to what the scopes in it need: the kernel makes
 * their partitions only below a partition root, so the slice becomes one
 * of their CPUs. (A remote partition, Linux 6.7 and later, would need
 * only the slice's cpuset.cpus.exclusive, but the kernel lets only
 * CAP_SYS_ADMIN make one, which the unit does not keep.) CPUs are given
 * before the slice becomes a root, and taken after it is one no more.
 * With no scope left, every file gets its original bytes back and a
 * slice rtplaced started is stopped. 0 or the first -errno, with reason.
 */
static int isolation_slice_sync(struct isolation *iso, struct rtplace_reason *reason)
{
	bool empty;
	int r = isolation_slice_files_sync(iso, &empty, reason);

	if (r < 0 || !empty || !iso->slice_unit)
		return r;
	if (iso->scopes) {
		struct rtplace_reason why = { "" };

		r = iso->scopes->stop(iso->scopes->ctx, ISOLATION_SLICE, &why);
		if (r < 0) {
			reason_append(reason, "%s%s", reason->text[0] ? "; " : "", why.text);
			return r;
		}
	}
	iso->slice_unit = false;
	return isolation_journal(iso, "slice-unit\n");
}

/* Makes claim c's partition a scope systemd starts with process pid in
 * it, in rtplace.slice, and isolates it. 0 or -errno with reason. */
static int isolation_scope_make(struct isolation *iso, struct isolation_claim *c, pid_t pid,
				struct rtplace_reason *reason)
{
	char from[PATH_MAX], now[PATH_MAX], path[PATH_MAX], unit[64], list[CPUSET_LIST_MAX];
	int r;

	r = isolation_partition_check(iso, reason);
	if (r == 0)
		r = isolation_cgroup_of(iso, pid, from, sizeof(from), reason);
	if (r < 0)
		return r;
	c->from = strdup(from);
	if (!c->from)
		return -ENOMEM;
	/* A slice that is not there yet is started with the scope. */
	if (isolation_path(path, sizeof(path), "%s/" ISOLATION_SLICE, iso->cgroup_root) < 0)
		return -ENAMETOOLONG;
	if (!iso->slice_unit && access(path, F_OK) < 0) {
		iso->slice_unit = true;
		r = isolation_journal(iso, "slice-unit started\n");
	}
	c->partition = c->scope = r == 0;
	if (r == 0)
		r = isolation_journal(iso, "scope %" PRIu32 " %d %s\n", c->id, (int)pid, from);
	if (r < 0) {
		c->partition = false;
		reason_set(reason, "cannot journal the partition in %s: %s", iso->journal, strerror(-r));
		return r;
	}
	snprintf(unit, sizeof(unit), "rtplace-claim-%" PRIu32 ".scope", c->id);
	r = iso->scopes->start(iso->scopes->ctx, unit, ISOLATION_SLICE, pid, &c->cpus, reason);
	if (r == 0)
		r = isolation_cgroup_of(iso, pid, now, sizeof(now), reason);
	if (r < 0)
		return r;
	if (strncmp(now, "/" ISOLATION_SLICE "/", sizeof("/" ISOLATION_SLICE "/") - 1) != 0 ||
	    strcmp(now + sizeof("/" ISOLATION_SLICE "/") - 1, unit) != 0) {
		reason_set(reason, "systemd put process %d in %s, not in /" ISOLATION_SLICE "/%s: is systemd's cgroup "
			   "root not %s?", (int)pid, now, unit, iso->cgroup_root);
		return -EIO;
	}
	cpuset_format(&c->cpus, list, sizeof(list));
	isolation_partition_path(iso, c, "cpuset.cpus.partition", path, sizeof(path));
	if (access(path, F_OK) < 0) {
		reason_set(reason, "the kernel makes no cpuset partitions (%s is missing; Linux 5.15 and later)", path);
		return -EOPNOTSUPP;
	}
	r = isolation_slice_sync(iso, reason);
	if (r < 0)
		return r;
	/* systemd wrote AllowedCPUs= there: written again, so that nothing
	 * depends on when. */
	return isolation_partition_isolate(iso, c, list, unit, reason);
}

/* Disables cpuset for the root's children again when rtplace enabled it
 * and its last partition is gone. 1 when it did, 0, or -errno. */
static int isolation_cpuset_release(struct isolation *iso, struct rtplace_reason *reason)
{
	char path[PATH_MAX];
	int r;

	for (size_t i = 0; i < iso->n_claims; i++)
		if (iso->claims[i].partition)
			return 0;
	if (!iso->cpuset_control)
		return 0;
	r = isolation_path(path, sizeof(path), "%s/cgroup.subtree_control", iso->cgroup_root);
	if (r == 0)
		r = isolation_write(path, "-cpuset");
	if (r < 0 && r != -ENOENT) {
		reason_append(reason, "%scannot disable the cpuset controller rtplace enabled in %s: %s",
			      reason->text[0] ? "; " : "", path, strerror(-r));
		return r;
	}
	iso->cpuset_control = false;
	r = isolation_journal(iso, "cpuset-control\n");
	return r < 0 ? r : 1;
}

/* --- claims ----------------------------------------------------------------------- */

int isolation_claim(struct isolation *iso, uint32_t claim_id, pid_t owner_pid, const struct rtplace_cpumask *cpus,
		    struct rtplace_reason *reason, struct isolation_report *ret_report)
{
	struct isoplan_host h = { .nodes = iso->nodes, .n_nodes = iso->n_nodes, .other = iso->other };
	struct isolation_report rep;
	struct isolation_claim *c;
	int r;

	reason->text[0] = '\0';
	if (!iso->partition && !iso->irqs && !iso->workqueues) {
		reason_set(reason, "isolation is off ([isolation] in rtplaced.conf turns on partition, irqs or workqueues)");
		return -EOPNOTSUPP;
	}
	if (isolation_claim_find(iso, claim_id)) {
		reason_set(reason, "claim %" PRIu32 " is isolated already", claim_id);
		return -EEXIST;
	}
	isolation_cpus(iso, &h.held);
	r = isoplan_admit(&h, cpus, reason);
	if (r < 0)
		return r;
	c = isolation_claim_add(iso, claim_id);
	if (!c)
		return -ENOMEM;
	c->cpus = *cpus;
	if (iso->partition) {
		r = iso->scopes ? isolation_scope_make(iso, c, owner_pid, reason)
				: isolation_partition_make(iso, c, owner_pid, reason);
		if (r < 0) {
			struct rtplace_reason ignored = { "" };

			cpuset_zero(&c->cpus);
			if (c->partition)
				isolation_partition_undo(iso, c, &ignored);
			/* A partition that cannot be removed stays journaled. */
			if (!c->partition)
				isolation_claim_remove(iso, c);
			isolation_cpuset_release(iso, &ignored);
			isolation_slice_sync(iso, &ignored);
			return r;
		}
	}
	r = isolation_sync(iso, &rep, reason);
	if (r == -ENOMEM)
		return r;
	rep.done |= iso->partition ? RTPLACE_ISOLATED_PARTITION : 0;
	if (ret_report)
		*ret_report = rep;
	return 0;
}

int isolation_release(struct isolation *iso, uint32_t claim_id, struct rtplace_reason *reason)
{
	struct isolation_claim *c = isolation_claim_find(iso, claim_id);
	struct isolation_report rep;
	int r = 0, s;

	reason->text[0] = '\0';
	if (!c || cpuset_empty(&c->cpus)) {
		reason_set(reason, "claim %" PRIu32 " is not isolated", claim_id);
		return -ENOENT;
	}
	cpuset_zero(&c->cpus);
	if (c->partition)
		r = isolation_partition_undo(iso, c, reason);
	if (!c->partition)
		isolation_claim_remove(iso, c);
	s = isolation_sync(iso, &rep, reason);
	if (r == 0 && s < 0)
		r = s;
	s = isolation_cpuset_release(iso, reason);
	if (r == 0 && s < 0)
		r = s;
	s = isolation_slice_sync(iso, reason);
	if (r == 0 && s < 0)
		r = s;
	if (r == 0 && isolation_held_lines(iso) == 0)
		r = isolation_compact(iso);
	return r;
}

int isolation_restore(struct isolation *iso, struct rtplace_reason *reason)
{
	struct isolation_report rep;
	int done = 0, first = 0, r;

	reason->text[0] = '\0';
	for (size_t i = 0; i < iso->n_claims;) {
		struct isolation_claim *c = &iso->claims[i];

		cpuset_zero(&c->cpus);
		r = c->partition ? isolation_partition_undo(iso, c, reason) : 0;
		if (r < 0 && !first)
			first = r;
		if (c->partition) {
			i++;
			continue;
		}
		done += r == 0 && c->from;
		isolation_claim_remove(iso, c);
	}
	r = isolation_sync(iso, &rep, reason);
	if (r < 0 && !first)
		first = r;
	done += r > 0 ? r : 0;
	r = isolation_cpuset_release(iso, reason);
	if (r < 0 && !first)
		first = r;
	done += r > 0;
	r = isolation_slice_sync(iso, reason);
	if (r < 0 && !first)
		first = r;
	r = isolation_compact(iso);
	if (r < 0 && !first)
		first = r;
	return first < 0 ? first : done;
}
