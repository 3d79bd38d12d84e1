/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Valid messages of every protocol type, a few shapes each, built through
 * the public encoders. The unit test round-trips them and mutates them;
 * make-corpus writes them (and broken variants) as the fuzz seed corpus.
 */
#ifndef RTPLACE_PROTO_SAMPLES_H
#define RTPLACE_PROTO_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

/* Shape 0 of every type fits these limits; other shapes may need the
 * protocol maxima (proto_decode with NULL limits). */
#define PROTO_SAMPLE_NCPUS 16
#define PROTO_SAMPLE_NNODES 2

extern const uint16_t proto_sample_types[];
extern const size_t proto_sample_ntypes;

/*
 * Builds shape `shape` of a valid message of type into ret. Returns 0,
 * -ENOENT when type has no such shape, or the encoder's error (a bug).
 */
int proto_sample(uint16_t type, unsigned shape, struct proto_msg *ret);

#endif
