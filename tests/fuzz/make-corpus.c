/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The protocol fuzz corpus: every sample message (proto-samples.c) and a
 * set of broken ones, one file each.
 *
 *   make-corpus --write DIR   writes the corpus into DIR
 *   make-corpus [DIR]         checks that DIR (default: the committed
 *                             corpus under $top_srcdir) holds every file
 *                             byte for byte
 *
 * The check runs under `make check`: the committed files are versions 1
 * (valid-*, and the broken ones), 2 (v2-*) and 3 (v3-*) of the wire
 * format (a sample that names a CPU past 1023 in version 3 only), so a
 * change to a struct, a type number or a length rule that would break
 * deployed clients fails here first. Other files in DIR (inputs found by
 * fuzzing) are left alone.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto-samples.h"
#include "testlib.h"

#define CORPUS_DIR "tests/fuzz/corpus/protocol"
#define CORPUS_MAX_FILE (sizeof(struct proto_msg) + 1)

struct corpus {
	const char *dir;
	bool write;
	unsigned files;
	unsigned failures;
};

/* 0 when path holds exactly data, 1 when it differs, -errno if unreadable. */
static int corpus_compare(const char *path, const void *data, size_t len)
{
	static unsigned char buf[CORPUS_MAX_FILE + 1];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -errno;
	return (size_t)n == len && memcmp(buf, data, len) == 0 ? 0 : 1;
}

static void corpus_file(struct corpus *c, const char *name, const void *data, size_t len)
{
	char path[4096];
	int r;

	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	r = c->write ? test_write_bytes(path, data, len) : corpus_compare(path, data, len);
	c->files++;
	if (r == 0)
		return;
	c->failures++;
	if (r > 0)
		fprintf(stderr, "make-corpus: %s differs from what this codec encodes\n", path);
	else
		fprintf(stderr, "make-corpus: %s: %s\n", path, strerror(-r));
}

static void corpus_msg(struct corpus *c, const char *name, const struct proto_msg *m)
{
	corpus_file(c, name, m, m->hdr.length);
}

/* The sample in version (packed: its wire bytes), or NULL when it names
 * a CPU that version cannot carry. */
static const struct proto_msg *corpus_sample_or_null(uint16_t type, unsigned shape, uint16_t version)
{
	static struct proto_msg m;
	int r = proto_sample(type, shape, &m);

	if (r == 0)
		r = proto_msg_finish(&m, version);
	if (r == -ERANGE && version < 3)
		return NULL;
	if (r < 0) {
		fprintf(stderr, "make-corpus: cannot build %s shape %u\n", proto_type_name(type), shape);
		exit(EXIT_FAILURE);
	}
	return &m;
}

static const struct proto_msg *corpus_sample_in(uint16_t type, unsigned shape, uint16_t version)
{
	const struct proto_msg *m = corpus_sample_or_null(type, shape, version);

	if (!m) {
		fprintf(stderr, "make-corpus: %s shape %u is for version 3 only\n", proto_type_name(type), shape);
		exit(EXIT_FAILURE);
	}
	return m;
}

/* The broken files were written in version 1, and stay so. */
static const struct proto_msg *corpus_sample(uint16_t type, unsigned shape)
{
	return corpus_sample_in(type, shape, 1);
}

static void corpus_valid(struct corpus *c)
{
	struct proto_msg m;
	char name[64];

	for (size_t i = 0; i < proto_sample_ntypes; i++) {
		uint16_t type = proto_sample_types[i];

		for (unsigned shape = 0; proto_sample(type, shape, &m) == 0; shape++) {
			static const char *const prefix[] = { "", "v2-", "v3-" };

			for (uint16_t v = 1; v <= 3; v++) {
				const struct proto_msg *s = corpus_sample_or_null(type, shape, v);

				snprintf(name, sizeof(name), "%svalid-%s-%u", prefix[v - 1], proto_type_name(type), shape);
				if (s)
					corpus_msg(c, name, s);
			}
		}
	}
}

/* Broken messages, each next to the rule it breaks. */
static void corpus_broken(struct corpus *c)
{
	static const unsigned char zero_pad[1];
	static unsigned char buf[CORPUS_MAX_FILE];
	struct proto_msg m;

	corpus_file(c, "empty", zero_pad, 0);
	m = *corpus_sample(RTPLACE_MSG_QUERY, 0);
	corpus_file(c, "short-header", &m, sizeof(m.hdr) - 1);
	corpus_file(c, "header-only-query", &m, sizeof(m.hdr));

	m.hdr.magic = ~RTPLACE_PROTO_MAGIC;
	corpus_msg(c, "bad-magic", &m);
	m = *corpus_sample(RTPLACE_MSG_QUERY, 0);
	m.hdr.version = RTPLACE_PROTO_VERSION + 1;
	corpus_msg(c, "bad-version", &m);
	m = *corpus_sample(RTPLACE_MSG_QUERY, 0);
	m.hdr.length++;
	corpus_file(c, "length-field-too-long", &m, m.hdr.length - 1);
	m.hdr.length -= 2;
	corpus_msg(c, "query-truncated", &m);
	m = *corpus_sample(RTPLACE_MSG_QUERY, 0);
	memcpy(buf, &m, m.hdr.length);
	buf[m.hdr.length] = 0;
	m.hdr.length++;
	memcpy(buf, &m.hdr, sizeof(m.hdr));
	corpus_file(c, "query-extended", buf, m.hdr.length);
	m = *corpus_sample(RTPLACE_MSG_STATUS, 0);
	m.hdr.type = 0x010a; /* the next request type: 0x0109 became HOST */
	corpus_msg(c, "unknown-type", &m);
	m = *corpus_sample(RTPLACE_MSG_STATUS, 0);
	m.hdr.reserved = 1;
	corpus_msg(c, "header-reserved-set", &m);
	m = *corpus_sample(RTPLACE_MSG_STATUS, 0);
	m.hdr.request_id = 0;
	corpus_msg(c, "request-id-zero", &m);

	m = *corpus_sample(RTPLACE_MSG_QUERY, 0);
	m.query.prio = 0;
	corpus_msg(c, "query-prio-0", &m);
	m.query.prio = 100;
	corpus_msg(c, "query-prio-100", &m);
	m = *corpus_sample(RTPLACE_MSG_QUERY, 0);
	m.query.count = 0;
	corpus_msg(c, "query-count-0", &m);
	m.query.count = RTPLACE_QUERY_MAX_COUNT + 1;
	corpus_msg(c, "query-count-257", &m);
	m = *corpus_sample(RTPLACE_MSG_QUERY, 0);
	m.query.policy = 3;
	corpus_msg(c, "query-bad-policy", &m);
	m = *corpus_sample(RTPLACE_MSG_QUERY, 0);
	m.query.flags = 1u << 31;
	corpus_msg(c, "query-unknown-flag", &m);
	m = *corpus_sample(RTPLACE_MSG_QUERY, 0);
	m.query.flags = RTPLACE_QUERY_F_CLAIM | RTPLACE_QUERY_F_ISOLATE;
	corpus_msg(c, "query-isolate-without-exclusive", &m);
	m = *corpus_sample(RTPLACE_MSG_QUERY, 0);
	rtplace_cpumask_set(&m.query.allowed, PROTO_SAMPLE_NCPUS);
	corpus_msg(c, "query-cpu-beyond-topology", &m);
	m = *corpus_sample(RTPLACE_MSG_QUERY, 0);
	m.query.lease_ms = 10;
	corpus_msg(c, "query-lease-without-claim", &m);

	m = *corpus_sample(RTPLACE_MSG_MOVE, 0);
	m.move.flags = 0;
	corpus_msg(c, "move-changes-nothing", &m);
	m = *corpus_sample(RTPLACE_MSG_ERROR, 0);
	m.hdr.status = 0;
	corpus_msg(c, "error-status-0", &m);
	{
		/* on the wire of version 1, the list follows the reason's field and the mask */
		struct rtplace_cpu_choice list[2];
		size_t at = sizeof(m.hdr) + offsetof(struct rtplace_query_reply, reason) + RTPLACE_REASON_V2_MAX +
			    RTPLACE_CPUMASK_V2_CPUS / 8;

		m = *corpus_sample(RTPLACE_MSG_QUERY_REPLY, 0);
		memcpy(list, (char *)&m + at, sizeof(list));
		list[1].cpu = list[0].cpu;
		memcpy((char *)&m + at, list, sizeof(list));
		corpus_msg(c, "query-reply-cpu-twice", &m);
	}
	m = *corpus_sample(RTPLACE_MSG_CPUS_REPLY, 0);
	m.cpus_reply.cpus[1].cpu = 7;
	corpus_msg(c, "cpus-reply-out-of-order", &m);
	m = *corpus_sample(RTPLACE_MSG_STATUS_REPLY, 0);
	memset(m.status_reply.version, 'x', sizeof(m.status_reply.version));
	corpus_msg(c, "status-reply-unterminated", &m);

	/* version 2's lengths: a list reply at its version-1 length, a count
	 * its length does not match, and a count beyond the list */
	m = *corpus_sample(RTPLACE_MSG_QUERY_REPLY, 0);
	m.hdr.version = 2;
	corpus_msg(c, "v2-query-reply-full-length", &m);
	m = *corpus_sample_in(RTPLACE_MSG_CPUS_REPLY, 0, 2);
	m.cpus_reply.count--;
	corpus_msg(c, "v2-cpus-reply-count-not-length", &m);
	m = *corpus_sample_in(RTPLACE_MSG_QUERY_REPLY, 0, 2);
	m.query_reply.count = RTPLACE_QUERY_MAX_COUNT + 1;
	corpus_msg(c, "v2-query-reply-count-257", &m);

	/* version 3's sets: a zero last word, a part of a word, a CPU past
	 * 1023 under version 2's length, two sets of a move reply cut apart */
	m = *corpus_sample_in(RTPLACE_MSG_QUERY, 1, 3);
	memset((char *)&m + m.hdr.length, 0, 8);
	m.hdr.length += 8;
	corpus_msg(c, "v3-query-set-past-last-cpu", &m);
	m = *corpus_sample_in(RTPLACE_MSG_QUERY, 1, 3);
	m.hdr.length -= 4;
	corpus_msg(c, "v3-query-part-word", &m);
	m = *corpus_sample_in(RTPLACE_MSG_QUERY, 3, 3);
	m.hdr.version = 2;
	corpus_msg(c, "v2-query-v3-length", &m);
	m = *corpus_sample_in(RTPLACE_MSG_MOVE_REPLY, 0, 3);
	m.hdr.length -= 8;
	corpus_msg(c, "v3-move-reply-half-set", &m);
}

int main(int argc, char **argv)
{
	struct corpus c = { 0 };
	char dir[4096];
	int i = 1;

	if (i < argc && strcmp(argv[i], "--write") == 0) {
		c.write = true;
		i++;
	}
	if (i < argc) {
		c.dir = argv[i];
	} else if (c.write) {
		fprintf(stderr, "usage: make-corpus [--write] [DIR]\n");
		return EXIT_FAILURE;
	} else {
		const char *top = getenv("top_srcdir");

		snprintf(dir, sizeof(dir), "%s/%s", top ? top : ".", CORPUS_DIR);
		c.dir = dir;
	}
	corpus_valid(&c);
	corpus_broken(&c);
	if (c.failures) {
		fprintf(stderr, "make-corpus: %u of %u files %s; if the change is meant, the protocol "
			"version must change too\n", c.failures, c.files, c.write ? "not written" : "wrong");
		return EXIT_FAILURE;
	}
	printf("make-corpus: %u files %s %s\n", c.files, c.write ? "written to" : "match", c.dir);
	return EXIT_SUCCESS;
}
