/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Local reads (local-read.h). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cpupri.h"
#include "local-read.h"
#include "placement.h"
#include "protocol.h"
#include "snap.h"

/* Copies of the snapshot that may overlap a publish before the query asks
 * the socket: a publish takes microseconds, so more tries only spin. */
#define LOCAL_TRIES 64

struct local_thread {
	struct local_thread *next;
	uint64_t seq;                /* the count claimed and snap_shape were copied under; 1: none yet */
	uint64_t snap_shape;         /* the snapshot's shape under seq */
	uint64_t stamp;              /* claimed's stamp for the context: new whenever seq is */
	uint64_t shape;              /* of topo and ctx; 0 before the first build */
	struct topo *topo;
	struct placement_ctx *ctx;
	/* The thread's own: the reads of one handle share no written byte
	 * (tests/integration/test-local-noshare.c). */
	struct placement_state *st;
	uint8_t *claimed;            /* [ncpus] */
	struct placement_request req;
	struct placement_result res;
	struct rtplace_query_reply reply;
};

struct rtplace_local {
	const void *map;
	size_t map_size;
	const void *snap;
	size_t snap_size;
	uint32_t ncpus;
	struct cpupri_view view;
	pthread_key_t key;
	pthread_mutex_t lock;        /* threads; taken on a thread's first query only */
	struct local_thread *threads;
};

static void local_thread_free(struct local_thread *th)
{
	placement_state_free(th->st);
	placement_ctx_free(th->ctx);
	topo_free(th->topo);
	free(th->claimed);
	free(th);
}

int local_open(const struct rtplace_local_reply *lr, int map_fd, int snap_fd, struct rtplace_local **ret)
{
	struct rtplace_local *l = calloc(1, sizeof(*l));
	void *map = MAP_FAILED, *snap = MAP_FAILED;
	int r = l ? 0 : -ENOMEM;

	if (r == 0 && (lr->snap_layout != SNAP_LAYOUT))
		r = -EPROTONOSUPPORT;
	if (r == 0 && (lr->map_size > SIZE_MAX || lr->snap_size > SIZE_MAX))
		r = -EINVAL;
	if (r == 0) {
		map = mmap(NULL, (size_t)lr->map_size, PROT_READ, MAP_SHARED, map_fd, 0);
		snap = mmap(NULL, (size_t)lr->snap_size, PROT_READ, MAP_SHARED, snap_fd, 0);
		if (map == MAP_FAILED || snap == MAP_FAILED)
			r = -errno;
	}
	if (r == 0)
		r = snap_check(snap, (size_t)lr->snap_size);
	if (r == 0)
		r = cpupri_view_open(map, (size_t)lr->map_size, &l->view);
	if (r == 0 && l->view.geom.ncpus != ((const struct snap *)snap)->header.ncpus) {
		cpupri_view_close(&l->view);
		r = -EINVAL;
	}
	if (r == 0) {
		r = -pthread_key_create(&l->key, NULL);
		if (r < 0)
			cpupri_view_close(&l->view);
	}
	close(map_fd);
	close(snap_fd);
	if (r < 0) {
		if (map != MAP_FAILED)
			munmap(map, (size_t)lr->map_size);
		if (snap != MAP_FAILED)
			munmap(snap, (size_t)lr->snap_size);
		free(l);
		return r;
	}
	l->map = map;
	l->map_size = (size_t)lr->map_size;
	l->snap = snap;
	l->snap_size = (size_t)lr->snap_size;
	l->ncpus = ((const struct snap *)snap)->header.ncpus;
	pthread_mutex_init(&l->lock, NULL);
	*ret = l;
	return 0;
}

void local_close(struct rtplace_local *l)
{
	if (!l)
		return;
	while (l->threads) {
		struct local_thread *th = l->threads;

		l->threads = th->next;
		local_thread_free(th);
	}
	pthread_key_delete(l->key);
	pthread_mutex_destroy(&l->lock);
	cpupri_view_close(&l->view);
	munmap((void *)l->map, l->map_size);
	munmap((void *)l->snap, l->snap_size);
	free(l);
}

static struct local_thread *local_thread(struct rtplace_local *l)
{
	struct local_thread *th = pthread_getspecific(l->key);

	if (th)
		return th;
	th = calloc(1, sizeof(*th));
	if (!th)
		return NULL;
	th->seq = 1; /* odd: never a published count */
	th->claimed = calloc(l->ncpus, 1);
	if (!th->claimed || pthread_setspecific(l->key, th) != 0) {
		free(th->claimed);
		free(th);
		return NULL;
	}
	pthread_mutex_lock(&l->lock);
	th->next = l->threads;
	l->threads = th;
	pthread_mutex_unlock(&l->lock);
	return th;
}

/* The topology, context and state of the snapshot's current shape. */
static int local_rebuild(struct rtplace_local *l, struct local_thread *th)
{
	struct placement_config cfg;
	struct placement_ctx *ctx = NULL;
	struct placement_state *st = NULL;
	struct snap_config c;
	struct topo *t = NULL;
	int r = snap_read_shape(l->snap, LOCAL_TRIES, &c, &t);

	if (r == 0) {
		snap_placement_config(&c, &cfg);
		r = placement_ctx_new(&cfg, t, &l->view, &ctx);
	}
	if (r == 0)
		r = placement_state_new(ctx, &st);
	if (r < 0) {
		placement_ctx_free(ctx);
		topo_free(t);
		return r;
	}
	placement_state_free(th->st);
	placement_ctx_free(th->ctx);
	topo_free(th->topo);
	th->st = st;
	th->ctx = ctx;
	th->topo = t;
	th->shape = c.shape;
	return 0;
}

/* th->req's answer. */
static int local_answer(struct rtplace_local *l, struct local_thread *th, const struct rtplace_query_reply **ret)
{
	struct placement_claims claims;
	struct rtplace_reason why;
	const char *text;
	uint32_t rotor = 0;
	int r = 0;

	/* A new shape is read again after the rebuild: its claims belong to it. */
	for (int i = 0; r == 0 && i < 2; i++) {
		uint64_t seq = th->seq;

		r = snap_read(l->snap, LOCAL_TRIES, th->claimed, &rotor, &th->snap_shape, &th->seq);
		if (r == 0 && th->seq != seq)
			th->stamp++;
		if (r < 0 || th->snap_shape == th->shape)
			break;
		r = local_rebuild(l, th) < 0 ? -EAGAIN : 0;
		th->seq = 1;
	}
	if (r == 0 && th->snap_shape != th->shape)
		r = -EAGAIN;
	if (r < 0)
		return -EAGAIN;
	/* The thread's own stamps, new with every count it copies under:
	 * equal stamps are one copy, and the state is the thread's alone. */
	claims = (struct placement_claims){ .level = th->claimed, .stamp = th->stamp };
	r = placement_ctx_choose_stamped(th->ctx, th->st, &claims, &rotor, &th->req, &why, &th->res);
	if (r == -EINVAL || r == -ENOMEM)
		return -EINVAL;
	memset(&th->reply, 0, offsetof(struct rtplace_query_reply, reason));
	for (uint32_t i = 0; i < th->res.n; i++)
		proto_query_reply_add(&th->reply, th->res.cpus[i], th->res.levels[i]);
	/* The field is written, zero after its NUL as a decoded reply's is,
	 * only when the reason changes: clearing all of it per answer cost
	 * more than the decision. */
	text = placement_reason_text(&why);
	if (strcmp(th->reply.reason, text))
		proto_set_string(th->reply.reason, sizeof(th->reply.reason), text);
	*ret = &th->reply;
	return 0;
}

static void local_request_head(struct local_thread *th, int prio, unsigned count, unsigned flags, int node,
			       int near_cpu)
{
	th->req.prio = prio;
	th->req.count = count;
	th->req.node = node;
	th->req.near_cpu = near_cpu;
	th->req.normal = flags & RTPLACE_QUERY_F_NORMAL;
}

int local_query(struct rtplace_local *l, const struct rtplace_query *q, const struct rtplace_query_reply **ret)
{
	struct local_thread *th = local_thread(l);

	if (!th)
		return -EAGAIN;
	local_request_head(th, q->prio, q->count, q->flags, q->node, q->near_cpu);
	th->req.allowed = q->allowed;
	return local_answer(l, th, ret);
}

int local_query_any(struct rtplace_local *l, int prio, unsigned count, unsigned flags, int node, int near_cpu,
		    const struct rtplace_query_reply **ret)
{
	struct local_thread *th = local_thread(l);

	if (!th)
		return -EAGAIN;
	local_request_head(th, prio, count, flags, node, near_cpu);
	/* Placement reads no word of the set past the topology's CPUs. */
	memset(th->req.allowed.bits, 0, (l->ncpus + 63) / 64 * sizeof(uint64_t));
	return local_answer(l, th, ret);
}
