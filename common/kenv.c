/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's RT environment: parsers and words (kenv.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kenv.h"

#define KENV_BLANKS " \t"

/* The wire's numbers are these; the strings are as long. */
_Static_assert(KENV_RTG_V1 == RTPLACE_KERNEL_RTG_V1 && KENV_RTG_V2 == RTPLACE_KERNEL_RTG_V2, "wire numbers");
_Static_assert(KENV_DL_ABSENT == RTPLACE_KERNEL_DL_ABSENT && KENV_DL_UNREADABLE == RTPLACE_KERNEL_DL_UNREADABLE,
	       "wire numbers");
_Static_assert(KENV_SCX_ENABLED == RTPLACE_KERNEL_SCX_ENABLED && KENV_SCX_UNKNOWN == RTPLACE_KERNEL_SCX_UNKNOWN,
	       "wire numbers");
_Static_assert(KENV_PATH_MAX == RTPLACE_KERNEL_PATH_MAX && KENV_WHY_MAX == RTPLACE_KERNEL_WHY_MAX &&
		       KENV_NAME_MAX == RTPLACE_KERNEL_NAME_MAX,
	       "wire strings");

int kenv_parse_int(const char *text, int64_t min, int64_t max, int64_t *ret)
{
	const char *p = text + strspn(text, KENV_BLANKS);
	bool neg = *p == '-';
	uint64_t v = 0;
	const char *digits;

	p += neg;
	digits = p;
	/* Without strtoll: no locale, no "0x", no '+', no overflow. */
	while (*p >= '0' && *p <= '9' && v <= UINT64_MAX / 10 - 1)
		v = v * 10 + (uint64_t)(*p++ - '0');
	if (p == digits || (*p >= '0' && *p <= '9') || p[strspn(p, KENV_BLANKS "\n")] != '\0' ||
	    v > (uint64_t)INT64_MAX)
		return -EBADMSG;
	if ((neg ? -(int64_t)v : (int64_t)v) < min || (neg ? -(int64_t)v : (int64_t)v) > max)
		return -EBADMSG;
	*ret = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

int kenv_parse_boot_rt_group_sched(const char *cmdline)
{
	static const char key[] = "rt_group_sched=";
	const char *p = cmdline;
	int ret = -1;

	while (*p) {
		size_t n;

		p += strspn(p, " \t\n");
		n = strcspn(p, " \t\n");
		if (n == 2 && !memcmp(p, "--", 2))
			break;
		/* The kernel reads the value with kstrtoint() and keeps 0 or 1. */
		if (n == sizeof(key) && !memcmp(p, key, sizeof(key) - 1) && (p[n - 1] == '0' || p[n - 1] == '1'))
			ret = p[n - 1] - '0';
		p += n;
	}
	return ret;
}

uint32_t kenv_parse_scx_state(const char *text)
{
	static const struct {
		const char *word;
		uint32_t state;
	} words[] = {
		{ "disabled", KENV_SCX_DISABLED },   { "enabled", KENV_SCX_ENABLED },
		{ "enabling", KENV_SCX_ENABLING },   { "prepping", KENV_SCX_ENABLING },
		{ "disabling", KENV_SCX_DISABLING },
	};
	char word[32];

	kenv_parse_name(text, word, sizeof(word));
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(word, words[i].word))
			return words[i].state;
	return KENV_SCX_UNKNOWN;
}

void kenv_parse_name(const char *text, char *ret, size_t size)
{
	const char *p = text + strspn(text, KENV_BLANKS);
	size_t n = strcspn(p, "\n");

	while (n > 0 && strchr(KENV_BLANKS, p[n - 1]))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(ret, p, n);
	ret[n] = '\0';
}

void kenv_dl_summarize(const struct kenv_dl_cpu *cpus, uint32_t n, struct kenv_dlserver *ret)
{
	struct kenv_dlserver s = {
		.state = KENV_DL_READ,
		.ncpus = n,
		.runtime_min_ns = cpus[0].runtime_ns,
		.runtime_max_ns = cpus[0].runtime_ns,
		.period_min_ns = cpus[0].period_ns,
		.period_max_ns = cpus[0].period_ns,
	};

	for (uint32_t i = 0; i < n; i++) {
		const struct kenv_dl_cpu *c = &cpus[i];
		uint64_t ppm = c->period_ns > 0 ? (uint64_t)c->runtime_ns * 1000000u / (uint64_t)c->period_ns : 0;

		s.runtime_min_ns = c->runtime_ns < s.runtime_min_ns ? c->runtime_ns : s.runtime_min_ns;
		s.runtime_max_ns = c->runtime_ns > s.runtime_max_ns ? c->runtime_ns : s.runtime_max_ns;
		s.period_min_ns = c->period_ns < s.period_min_ns ? c->period_ns : s.period_min_ns;
		s.period_max_ns = c->period_ns > s.period_max_ns ? c->period_ns : s.period_max_ns;
		if (ppm > s.share_max_ppm)
			s.share_max_ppm = ppm > 1000000u ? 1000000u : (uint32_t)ppm;
		s.zero += c->runtime_ns == 0;
	}
	*ret = s;
}

bool kenv_rtgroup_needs_budget(const struct kenv_rtgroup *g)
{
	return g->mode != KENV_RTG_NONE && g->boot != 0;
}

/* Appends to ret at *at; *at passes size once the text no longer fits. */
static void __attribute__((format(printf, 4, 5))) kenv_append(char *ret, size_t size, size_t *at,
							      const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(ret + *at, size - *at, fmt, ap);
	va_end(ap);
	*at += n < 0 ? size : (size_t)n;
}

/* What a text function returns once it appended all it had to. */
static int kenv_fitted(size_t size, size_t at)
{
	return at >= size ? -ENOBUFS : 0;
}

int kenv_rtgroup_text(const struct kenv_rtgroup *g, char *ret, size_t size)
{
	size_t at = 0;

	if (g->mode == KENV_RTG_NONE) {
		kenv_append(ret, size, &at, "%s: RT tasks need no cgroup budget",
			    g->boot == 0 ? "off (rt_group_sched=0)" : "none (no cpu.rt_runtime_us)");
		return kenv_fitted(size, at);
	}
	kenv_append(ret, size, &at, "on (cgroup %s cpu.rt_runtime_us): an RT task in a cpu cgroup other than the root "
		    "needs a budget there; root ", g->mode == KENV_RTG_V1 ? "v1" : "v2");
	if (g->root_runtime_us < 0)
		kenv_append(ret, size, &at, "unlimited");
	else
		kenv_append(ret, size, &at, "%" PRId64 " us of every %" PRId64 " us", g->root_runtime_us,
			    g->root_period_us);
	kenv_append(ret, size, &at, "; %" PRIu32 " of %" PRIu32 " folders below it without one", g->budgetless,
		    g->folders);
	if (g->first[0])
		kenv_append(ret, size, &at, " (first %s)", g->first);
	return kenv_fitted(size, at);
}

/* A READ server's values: one number where every CPU has the same, else
 * the range. */
static void kenv_dl_values(const struct kenv_dlserver *s, char *ret, size_t size, size_t *at)
{
	if (s->runtime_min_ns == s->runtime_max_ns)
		kenv_append(ret, size, at, "%" PRId64, s->runtime_min_ns);
	else
		kenv_append(ret, size, at, "%" PRId64 "-%" PRId64, s->runtime_min_ns, s->runtime_max_ns);
	if (s->period_min_ns == s->period_max_ns)
		kenv_append(ret, size, at, " ns of every %" PRId64 " ns", s->period_min_ns);
	else
		kenv_append(ret, size, at, " ns of every %" PRId64 "-%" PRId64 " ns", s->period_min_ns,
			    s->period_max_ns);
	kenv_append(ret, size, at,
		    " on %" PRIu32 " CPUs (at most %" PRIu32 ".%" PRIu32 "%% of a CPU kept from RT tasks)", s->ncpus,
		    s->share_max_ppm / 10000u, s->share_max_ppm / 1000u % 10u);
	if (s->zero)
		kenv_append(ret, size, at, ", off on %" PRIu32, s->zero);
}

int kenv_dl_text(const char *name, const struct kenv_dlserver *s, char *ret, size_t size)
{
	size_t at = 0;

	if (s->state == KENV_DL_ABSENT)
		kenv_append(ret, size, &at, "%s none in this kernel", name);
	else if (s->state != KENV_DL_READ)
		kenv_append(ret, size, &at, "%s unknown (%s)", name, s->why);
	else if (s->zero == s->ncpus)
		kenv_append(ret, size, &at, "%s off (runtime 0) on all %" PRIu32 " CPUs", name, s->ncpus);
	else {
		kenv_append(ret, size, &at, "%s ", name);
		kenv_dl_values(s, ret, size, &at);
	}
	return kenv_fitted(size, at);
}

const char *kenv_scx_state_name(uint32_t state)
{
	static const char *const names[] = {
		[KENV_SCX_ABSENT] = "absent",       [KENV_SCX_DISABLED] = "disabled",
		[KENV_SCX_ENABLING] = "enabling",   [KENV_SCX_ENABLED] = "enabled",
		[KENV_SCX_DISABLING] = "disabling", [KENV_SCX_UNKNOWN] = "unknown",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "unknown";
}

int kenv_scx_text(const struct kenv_scx *x, char *ret, size_t size)
{
	size_t at = 0;

	if (x->state == KENV_SCX_ABSENT) {
		kenv_append(ret, size, &at, "not in this kernel");
		return kenv_fitted(size, at);
	}
	if (x->state == KENV_SCX_DISABLED)
		kenv_append(ret, size, &at, "no scheduler loaded");
	else
		kenv_append(ret, size, &at, "scheduler %s %s", x->ops[0] ? x->ops : "(unnamed)",
			    kenv_scx_state_name(x->state));
	if (x->state == KENV_SCX_ENABLED && x->switch_all >= 0)
		kenv_append(ret, size, &at, x->switch_all ? ", every normal task on it" : ", SCHED_EXT tasks only on it");
	if (x->enable_seq >= 0)
		kenv_append(ret, size, &at, " (%" PRId64 " loaded since boot)", x->enable_seq);
	return kenv_fitted(size, at);
}

/* A string into a zeroed field of the wire, cut to leave its NUL. */
static void kenv_copy(char *ret, size_t size, const char *s)
{
	memcpy(ret, s, strnlen(s, size - 1));
}

static void kenv_dl_to_wire(const struct kenv_dlserver *s, struct rtplace_kernel_dlserver *ret)
{
	*ret = (struct rtplace_kernel_dlserver){ .state = s->state };
	if (s->state == KENV_DL_READ) {
		ret->runtime_min_ns = s->runtime_min_ns;
		ret->runtime_max_ns = s->runtime_max_ns;
		ret->period_min_ns = s->period_min_ns;
		ret->period_max_ns = s->period_max_ns;
		ret->ncpus = s->ncpus;
		ret->zero = s->zero;
		ret->share_max_ppm = s->share_max_ppm;
	} else if (s->state == KENV_DL_UNREADABLE) {
		kenv_copy(ret->why, sizeof(ret->why), s->why[0] ? s->why : "unreadable");
	}
}

void kenv_to_wire(const struct kenv *k, struct rtplace_kernel_reply *ret)
{
	*ret = (struct rtplace_kernel_reply){
		.rt_group = k->rtg.mode,
		.rt_group_boot = k->rtg.boot,
		.scx_enable_seq = k->scx.enable_seq,
		.scx_state = k->scx.state,
		.scx_switch_all = k->scx.switch_all,
	};
	if (k->rtg.mode != KENV_RTG_NONE) {
		ret->rt_root_runtime_us = k->rtg.root_runtime_us;
		ret->rt_root_period_us = k->rtg.root_period_us;
		ret->rt_folders = k->rtg.folders;
		ret->rt_budgetless = k->rtg.budgetless;
		kenv_copy(ret->rt_first, sizeof(ret->rt_first), k->rtg.first);
	}
	kenv_dl_to_wire(&k->fair, &ret->fair);
	kenv_dl_to_wire(&k->ext, &ret->ext);
	if (k->scx.state != KENV_SCX_ABSENT && k->scx.state != KENV_SCX_DISABLED)
		kenv_copy(ret->scx_ops, sizeof(ret->scx_ops), k->scx.ops);
}

static void kenv_dl_from_wire(const struct rtplace_kernel_dlserver *w, struct kenv_dlserver *ret)
{
	*ret = (struct kenv_dlserver){
		.state = w->state,
		.ncpus = w->ncpus,
		.runtime_min_ns = w->runtime_min_ns,
		.runtime_max_ns = w->runtime_max_ns,
		.period_min_ns = w->period_min_ns,
		.period_max_ns = w->period_max_ns,
		.share_max_ppm = w->share_max_ppm,
		.zero = w->zero,
	};
	memcpy(ret->why, w->why, sizeof(ret->why));
}

void kenv_from_wire(const struct rtplace_kernel_reply *w, struct kenv *ret)
{
	*ret = (struct kenv){
		.rtg = {
			.mode = w->rt_group,
			.boot = w->rt_group_boot,
			.root_runtime_us = w->rt_root_runtime_us,
			.root_period_us = w->rt_root_period_us,
			.folders = w->rt_folders,
			.budgetless = w->rt_budgetless,
		},
		.scx = {
			.state = w->scx_state,
			.switch_all = w->scx_switch_all,
			.enable_seq = w->scx_enable_seq,
		},
	};
	memcpy(ret->rtg.first, w->rt_first, sizeof(ret->rtg.first));
	memcpy(ret->scx.ops, w->scx_ops, sizeof(ret->scx.ops));
	kenv_dl_from_wire(&w->fair, &ret->fair);
	kenv_dl_from_wire(&w->ext, &ret->ext);
}
