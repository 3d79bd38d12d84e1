/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness for the isolation journal's parser: any bytes, as a
 * journal's text. Beyond "no crash, no leak" (the sanitizers' job) it
 * checks the contract and aborts when it breaks: what a journal holds,
 * written out compacted, reads back the same and without a complaint, and
 * holds only lines of the journal's own grammar.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "isolation.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rtplace_reason reason;
	char *once, *twice;
	size_t once_len, twice_len;

	if (isolation_journal_compacted((const char *)data, size, &once, &once_len, &reason) < 0)
		abort();
	if (isolation_journal_compacted(once, once_len, &twice, &twice_len, &reason) < 0 || reason.text[0] ||
	    twice_len != once_len || memcmp(once, twice, once_len) != 0)
		abort();
	for (const char *line = once; line < once + once_len; line = strchr(line, '\n') + 1)
		if (strncmp(line, "rtplace-isolation 1\n", 20) != 0 && strncmp(line, "irq ", 4) != 0 &&
		    strncmp(line, "workqueues ", 11) != 0 && strncmp(line, "partition ", 10) != 0 &&
		    strncmp(line, "cpuset-control enabled\n", 23) != 0 && strncmp(line, "irqbalance ", 11) != 0 &&
		    strncmp(line, "scope ", 6) != 0 && strncmp(line, "slice ", 6) != 0 &&
		    strncmp(line, "slice-unit started\n", 19) != 0)
			abort();
	free(once);
	free(twice);
	return 0;
}
