/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Local reads write nothing that threads share (DESIGN §19): once each
 * thread has made its first local query, rtplace_query() answers from the
 * map and the snapshot writing only the calling thread's own memory, so
 * that threads querying at once scale with the CPUs. Here that is made a
 * fault: on a simulated daemon (no root), after the handle is opened and
 * every worker has warmed up, every writable private mapping the process
 * had before the workers started (the heap with the handle, its local
 * state and the map view's tables, librtplace's and libc's data, the
 * allocator's arenas, the test's own data) is made read-only, the workers
 * query locally (every managed CPU, an allowed set, one and four CPUs),
 * and a write to any of it stops the test with the address, its mapping
 * and the writer's stack. What the workers made themselves (their stacks,
 * the arenas their first query allocated from) stays writable: that is
 * each thread's own state.
 *
 * Two writers that are not the query path's doing are turned off: lazy
 * binding, which writes a GOT entry at a function's first call, and the
 * kernel's restartable-sequences updates of the main thread's rseq area
 * (in its TLS, which predates the workers): the test runs itself again
 * with LD_BIND_NOW=1 and glibc's rseq registration off. Under
 * AddressSanitizer, whose shadow and allocator are written on every call
 * and shared by the threads' own allocations, nothing is made read-only:
 * the threads then only query at once, which the sanitizers check.
 */
#include "config.h"

#include <errno.h>
#include <execinfo.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "rtplace.h"

#define NOSHARE_WORKERS 4
#define NOSHARE_QUERIES 20000
#define NOSHARE_MAX_REGIONS 512

#ifdef __SANITIZE_ADDRESS__
#define NOSHARE_ASAN 1
#else
#define NOSHARE_ASAN 0
#endif

struct noshare_region {
	uintptr_t lo, hi;
	bool is_protected;
	char name[96];
};

/*
 * Everything the workers, the main thread and the fault handler share
 * while the rest is read-only: its own mapping, made before the snapshot
 * of the mappings and left out of it.
 */
struct noshare_ctl {
	atomic_uint ready, done;
	atomic_bool go, end;
	pid_t daemon_pid;           /* stopped by the fault handler too */
	unsigned nregions;
	struct noshare_region regions[NOSHARE_MAX_REGIONS];
	struct {
		unsigned long ok, failed;
	} worker[NOSHARE_WORKERS];
};

static struct noshare_ctl *ctl;
static struct rtplace *rp;

static void noshare_say(const char *s)
{
	ssize_t r = write(STDERR_FILENO, s, strlen(s));

	(void)r;
}

static void noshare_unprotect(void)
{
	for (unsigned i = 0; i < ctl->nregions; i++)
		if (ctl->regions[i].is_protected)
			mprotect((void *)ctl->regions[i].lo, ctl->regions[i].hi - ctl->regions[i].lo,
				 PROT_READ | PROT_WRITE);
}

/* A write to the protected memory: say where and who, then fail. */
static void noshare_fault(int sig, siginfo_t *si, void *uctx)
{
	const uintptr_t a = (uintptr_t)si->si_addr;
	char line[256];
	void *frames[32];
	int n;

	(void)sig;
	(void)uctx;
	noshare_unprotect();
	snprintf(line, sizeof(line), "FAIL: the local query path wrote %#" PRIxPTR ", memory threads share", a);
	noshare_say(line);
	for (unsigned i = 0; i < ctl->nregions; i++)
		if (a >= ctl->regions[i].lo && a < ctl->regions[i].hi) {
			snprintf(line, sizeof(line), " (mapping %#" PRIxPTR "-%#" PRIxPTR " %s)", ctl->regions[i].lo,
				 ctl->regions[i].hi, ctl->regions[i].name);
			noshare_say(line);
		}
	noshare_say("; the writer:\n");
	n = backtrace(frames, 32);
	backtrace_symbols_fd(frames, n, STDERR_FILENO);
	kill(ctl->daemon_pid, SIGTERM);
	_exit(1);
}

/* The writable private mappings now, but for the main stack and ctl's own. */
static int noshare_snapshot(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	if (!f)
		return -errno;
	ctl->nregions = 0;
	while (fgets(line, sizeof(line), f)) {
		struct noshare_region *r = &ctl->regions[ctl->nregions];
		unsigned long lo, hi;
		char perms[5], name[256] = "";

		if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %255[^\n]", &lo, &hi, perms, name) < 3)
			continue;
		if (perms[1] != 'w' || perms[3] != 'p' || strstr(name, "[stack]") ||
		    (lo <= (uintptr_t)ctl && (uintptr_t)ctl < hi))
			continue;
		if (ctl->nregions == NOSHARE_MAX_REGIONS) {
			fclose(f);
			return -E2BIG;
		}
		*r = (struct noshare_region){ .lo = lo, .hi = hi };
		snprintf(r->name, sizeof(r->name), "%s", name[0] ? name + strspn(name, " ") : "[anon]");
		ctl->nregions++;
	}
	fclose(f);
	return 0;
}

static bool noshare_query(const struct rtplace_request *req, struct rtplace_answer *ans)
{
	return rtplace_query(rp, req, ans) == 0 && ans->count >= 1;
}

static void *noshare_worker(void *arg)
{
	const unsigned id = (unsigned)(uintptr_t)arg;
	static const unsigned counts[] = { 1, 4 };
	struct rtplace_request any = RTPLACE_REQUEST_INIT, some = RTPLACE_REQUEST_INIT;
	struct rtplace_answer ans;
	cpu_set_t allowed;
	unsigned long ok = 0, failed = 0;

	CPU_ZERO(&allowed);
	for (int c = 0; c < 480; c += 3)
		CPU_SET(c, &allowed);
	some.allowed = &allowed;
	some.allowed_size = sizeof(allowed);
	any.prio = some.prio = 50;
	/* The first queries build this thread's state: its own to write. */
	for (unsigned k = 0; k < 2; k++) {
		any.count = some.count = counts[k];
		noshare_query(&any, &ans);
		noshare_query(&some, &ans);
	}
	atomic_fetch_add(&ctl->ready, 1);
	while (!atomic_load(&ctl->go))
		sched_yield();
	for (unsigned q = 0; q < NOSHARE_QUERIES; q++) {
		struct rtplace_request *req = q % 2 ? &some : &any;

		req->count = counts[q / 2 % 2];
		req->prio = 1 + (int)(q % 99);
		if (noshare_query(req, &ans))
			ok++;
		else
			failed++;
	}
	ctl->worker[id].ok = ok;
	ctl->worker[id].failed = failed;
	atomic_fetch_add(&ctl->done, 1);
	/* A thread's exit writes the allocator's shared state: not before
	 * the memory is writable again. */
	while (!atomic_load(&ctl->end))
		sched_yield();
	return NULL;
}

/* Waits for n workers at counter without a call that writes this thread's
 * own descriptor (a cancellation point would): a raw sleep. */
static void noshare_wait(atomic_uint *counter, unsigned n)
{
	const struct timespec ms = { .tv_nsec = 1000000 };

	while (atomic_load(counter) < n)
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ms, NULL);
}

int main(int argc, char **argv)
{
	struct harness_daemon d;
	struct sigaction sa = { .sa_sigaction = noshare_fault, .sa_flags = SA_SIGINFO };
	pthread_t workers[NOSHARE_WORKERS];
	void *frames[4];
	unsigned long ok = 0, failed = 0;
	unsigned nprot = 0;
	const char *why = NULL;
	int r;

	(void)argc;
	if (!getenv("LD_BIND_NOW")) {
		setenv("LD_BIND_NOW", "1", 1);
		setenv("GLIBC_TUNABLES", "glibc.pthread.rseq=0", 1);
		execv("/proc/self/exe", argv);
		perror("test-local-noshare: exec /proc/self/exe");
		return 1;
	}
	r = harness_start_sim(&d, "2s-240c-480t");
	if (r < 0) {
		fprintf(stderr, "test-local-noshare: cannot start the simulated daemon: %s\n", strerror(-r));
		return r == -ENOENT ? 77 : 1;
	}
	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ctl == MAP_FAILED) {
		ctl = NULL;
		why = "mmap of the shared control page failed";
		goto stop;
	}
	ctl->daemon_pid = d.pid;
	if (rtplace_connect(d.socket, &rp) < 0 || rtplace_local_open(rp) < 0) {
		why = "no local reads from the simulated daemon";
		goto stop;
	}
	/* The unwinder loads at its first use: not inside the handler. */
	backtrace(frames, 4);
	if (noshare_snapshot() < 0) {
		why = "cannot read /proc/self/maps (or too many mappings)";
		goto stop;
	}
	for (unsigned i = 0; i < NOSHARE_WORKERS; i++)
		if (pthread_create(&workers[i], NULL, noshare_worker, (void *)(uintptr_t)i) != 0) {
			why = "cannot start a worker thread";
			goto stop;
		}
	noshare_wait(&ctl->ready, NOSHARE_WORKERS);
	if (sigaction(SIGSEGV, &sa, NULL) < 0) {
		why = "cannot catch SIGSEGV";
		goto stop;
	}
	for (unsigned i = 0; i < ctl->nregions && !NOSHARE_ASAN; i++) {
		struct noshare_region *reg = &ctl->regions[i];

		reg->is_protected = mprotect((void *)reg->lo, reg->hi - reg->lo, PROT_READ) == 0;
		nprot += reg->is_protected;
	}
	atomic_store(&ctl->go, true);
	noshare_wait(&ctl->done, NOSHARE_WORKERS);
	noshare_unprotect();
	signal(SIGSEGV, SIG_DFL);
	atomic_store(&ctl->end, true);
	for (unsigned i = 0; i < NOSHARE_WORKERS; i++) {
		pthread_join(workers[i], NULL);
		ok += ctl->worker[i].ok;
		failed += ctl->worker[i].failed;
	}
	printf("%u of %u writable mappings read-only while %d threads made %lu local queries (%lu without an "
	       "answer)\n",
	       nprot, ctl->nregions, NOSHARE_WORKERS, ok + failed, failed);
	if (failed || ok != (unsigned long)NOSHARE_WORKERS * NOSHARE_QUERIES)
		why = "some local queries gave no answer";
	else if (nprot == 0 && !NOSHARE_ASAN)
		why = "no mapping could be made read-only";
	rtplace_close(rp);
stop:
	r = harness_stop(&d);
	if (!why && r != 0)
		why = "the simulated daemon did not stop cleanly";
	if (why) {
		fprintf(stderr, "FAIL: %s\n", why);
		return 1;
	}
	return 0;
}
