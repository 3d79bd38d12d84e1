/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz harness for the wire decoder. Every input is decoded as the daemon
 * (requests, against a small and the largest topology) and as a client
 * (replies and events) would. The harness aborts when:
 *   - a refusal has no reason or an errno outside the documented set;
 *   - a refusal of garbage is misclassified (the header is intact but the
 *     decoder says -EPROTO for a reason other than the lengths);
 *   - an accepted message does not re-encode (in its version) to the very
 *     same bytes, or is refused by proto_validate(): decode and encode
 *     disagree.
 * Build with libFuzzer: `make fuzz-protocol`; `make check` replays the
 * committed corpus in tests/fuzz/corpus/protocol through replay.c.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct proto_limits fuzz_limits[] = {
	{ .ncpus = 16, .nnodes = 2, .accept = PROTO_ACCEPT_REQUESTS },
	{ .ncpus = RTPLACE_MAX_CPUS, .nnodes = 64, .accept = PROTO_ACCEPT_REQUESTS },
	{ .ncpus = RTPLACE_MAX_CPUS, .nnodes = RTPLACE_MAX_CPUS, .accept = PROTO_ACCEPT_REPLIES },
};

static void fuzz_check_refusal(int r, const struct proto_error *err, const uint8_t *data, size_t size)
{
	struct rtplace_msg_hdr h;
	bool intact;

	if (!err->reason.text[0] || !memchr(err->reason.text, '\0', sizeof(err->reason.text)))
		abort();
	if (r != -EPROTO && r != -EPROTONOSUPPORT && r != -EOPNOTSUPP && r != -EINVAL && r != -ERANGE)
		abort();
	if (size < sizeof(h)) {
		if (r != -EPROTO || err->request_id || err->type)
			abort();
		return;
	}
	memcpy(&h, data, sizeof(h));
	if (h.magic != RTPLACE_PROTO_MAGIC) {
		if (r != -EPROTO || err->request_id || err->type)
			abort();
		return;
	}
	/* a readable header is reported, so the ERROR reply can carry its id */
	if (err->request_id != h.request_id || err->type != h.type)
		abort();
	intact = h.version >= RTPLACE_PROTO_VERSION_MIN && h.version <= RTPLACE_PROTO_VERSION && h.length == size &&
		 proto_wire_length(data, size) == size;
	if (intact && r == -EPROTO)
		abort();
}

/* An accepted message must be its own canonical encoding. */
static void fuzz_check_roundtrip(const struct proto_msg *m, const uint8_t *data, size_t size,
				 const struct proto_limits *lim)
{
	static struct proto_msg again;
	struct proto_error err;

	if (m->hdr.length != size || proto_msg_length_for(m) != size || !proto_type_name(m->hdr.type))
		abort();
	if (proto_validate(m, lim, &err) != 0)
		abort();
	if (proto_encode(&again, m->hdr.type, m->hdr.request_id, m->hdr.status, proto_msg_body(m), &err) != 0)
		abort();
	if (proto_msg_finish(&again, m->hdr.version) != 0 || memcmp(&again, data, size) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* static: a 7 KiB message per call would be a large stack frame for the fuzzer */
	static struct proto_msg m;

	for (size_t i = 0; i < sizeof(fuzz_limits) / sizeof(fuzz_limits[0]); i++) {
		struct proto_error err = { 0 };
		int r = proto_decode(data, size, &fuzz_limits[i], &m, &err);

		if (r == 0)
			fuzz_check_roundtrip(&m, data, size, &fuzz_limits[i]);
		else
			fuzz_check_refusal(r, &err, data, size);
	}
	return 0;
}
