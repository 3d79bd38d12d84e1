/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The claims state file (DESIGN §6, §14): owner-bound claims, and the ids
 * handed out, outlive a crash of the daemon. A claim is written before it
 * is acknowledged, so the file is a journal, one line per change, appended
 * with one write(2) each:
 *
 *   rtplace-claims 4
 *   next-id N                                    ids below N may be in use
 *   claim ID PID START UID LEVEL EXPIRES CPUS    an owner-bound claim began
 *   claim ... CPUS manage ALLOWED                a MANAGE claim began: its
 *                                                threads may be pushed to
 *                                                ALLOWED, after a restart too
 *   claim ... isolated                           its CPUs are isolated
 *                                                ([isolation]), after a
 *                                                restart too
 *   end ID                                       it ended
 *
 * Versions 1 and 2 (no manage part) and 3 (no isolated mark) are read as
 * well.
 *
 * What must be survived is the daemon's death, not the machine's: the file
 * lives in the runtime directory (tmpfs), where a write(2) that returned
 * is in the page cache that outlives the process, so nothing is fsync'ed.
 * Ids are reserved in blocks (a next-id line now and then), so a claim
 * that ends with its connection costs no write at all. When the journal
 * holds CLAIMS_STATE_COMPACT_FACTOR times more lines than live claims, it
 * is compacted: the live set written to a fresh file renamed over it.
 * Measured in bench/claims-journal (bench/README.md).
 *
 * The file decides which CPUs are held exclusively, so it is read only
 * when it belongs to the daemon's user, its folder to that user or root,
 * and no one else may write either.
 *
 * The parser and the formatter are pure (text in, text out); the rest is
 * the file's I/O.
 */
#ifndef RTPLACE_CLAIMS_STATE_H
#define RTPLACE_CLAIMS_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "claims.h"
#include "reason.h"

/* How far an untrusted file's ids are skipped at most: half the ids, so
 * a forged file leaves more than two billion before they wrap. */
#define CLAIMS_STATE_UNTRUSTED_IDS (UINT32_MAX / 2)
/* Ids reserved by one next-id line. */
#define CLAIMS_STATE_ID_BLOCK 1024
/* Compaction once the journal has this many lines per live claim... */
#define CLAIMS_STATE_COMPACT_FACTOR 4
/* ...and at least this many. */
#define CLAIMS_STATE_COMPACT_MIN 4096

/*
 * Replays a journal of len bytes (NUL bytes are refused, a final NUL is not
 * needed): the claims alive at its end into ret (at most max; ret_n of
 * them) and the next id. A last line without its newline is a write the
 * daemon died in, before any reply depended on it: it is left out. Any
 * other fault refuses the whole file with -EBADMSG and the line and what
 * was wrong in reason.
 */
int claims_state_parse(const char *text, size_t len, struct claim *ret, size_t max, size_t *ret_n,
		       uint32_t *ret_next_id, struct rtplace_reason *reason);

/* The highest id any readable line of text names, plus one (0 for none):
 * ids a corrupt file can still tell were handed out. */
uint32_t claims_state_salvage_next_id(const char *text, size_t len);

/*
 * The compacted journal of c with next-id next_id, leaving out claim
 * except_id (0 for none: the claim whose end is being recorded is still in
 * the table). Returns the length written, or -ENOSPC with the length needed.
 */
int claims_state_format(const struct claims *c, uint32_t next_id, uint32_t except_id, char *buf, size_t len);

/* Whether a state file (or, with dir, its folder) of status st is one to
 * trust: owned by owner (a folder may be root's) and writable by no one
 * else. 0, or -EPERM with why. */
int claims_state_trusted(const struct stat *st, uid_t owner, bool dir, struct rtplace_reason *reason);

/*
 * Loads the state file at path: restores each claim whose owner is still
 * the same process (pid and start time under proc_root) and drops the
 * rest. Returns how many were restored; -ENOENT when there is no file;
 * -EPERM when it or its folder is not owner's alone, -EBADMSG for a
 * corrupt file, with reason saying why (nothing is restored; the ids a
 * corrupt file names are still skipped, and so are an untrusted file's,
 * up to CLAIMS_STATE_UNTRUSTED_IDS); another -errno when it cannot be read.
 */
int claims_state_load(struct claims *c, const char *path, uid_t owner, const char *proc_root,
		      struct rtplace_reason *reason);

struct claims_state;

/* A journal at path, written first by claims_state_compact(). 0, -ENAMETOOLONG or -ENOMEM. */
int claims_state_new(const char *path, struct claims_state **ret);
void claims_state_free(struct claims_state *st);

/* Writes c's live owner-bound claims to a fresh file renamed over the
 * journal, which is appended to from then on. 0 or -errno. */
int claims_state_compact(struct claims_state *st, const struct claims *c);

/*
 * Records cl, just added to c, before it is acknowledged: its line when
 * owner-bound, a new block of ids when its id used up the last. A journal
 * that failed before is compacted instead. 0 or -errno: the claim is then
 * not durable and is to be refused.
 */
int claims_state_added(struct claims_state *st, const struct claims *c, const struct claim *cl);

/* Records the end of owner-bound cl, compacting when due; cl may still be
 * in c (claims_ended_fn is called before the claim goes). 0 or -errno. */
int claims_state_ended(struct claims_state *st, const struct claims *c, const struct claim *cl);

#endif
