/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The picture of `rtplacectl cpus --svg`: a self-contained SVG document of
 * the machine. Packages (when known), nodes, LLCs and cores are nested
 * boxes; each CPU is a square coloured by its level (idle, normal, an RT
 * ramp from yellow at rt1 to red at rt99, dl purple, offline grey) with a
 * <title> for tooltips, outlined in its claim's level when claimed. CPUs
 * whose place is unknown (offline since the daemon started) get a box of
 * their own.
 *
 * Layout: the CPUs sorted by package, node, LLC, core and id make each
 * group a run of that order; a group's box holds its children left to
 * right, wrapping at a width that grows with the level, so 2 CPUs make a
 * small picture and 480 a wide, legible one. A group is measured (its
 * children laid out without drawing) before it is placed; its frame has no
 * fill and comes after its children, hiding none of them.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

/* Group levels, outermost first; SVG_CPU is a leaf. */
enum svg_level {
	SVG_PACKAGE,
	SVG_NODE,
	SVG_LLC,
	SVG_CORE,
	SVG_CPU,
};

#define SVG_CELL 16     /* a CPU's square and its margin */
#define SVG_LABEL 14    /* height of a box's label line */
#define SVG_MARGIN 10   /* around the picture */
#define SVG_LEGEND 40   /* height of the legend above the boxes */
#define SVG_MIN_WIDTH 760 /* the legend's width */
#define SVG_UNKNOWN_ROW 16 /* CPUs a row among those of unknown place */

struct svg {
	FILE *f;
	const struct rtplace_cpu *cpus;
	bool packages; /* the daemon named packages (one older than that does not) */
	size_t *order;
	size_t n;
};

/* Padding inside a box of a level, and the width at which it wraps its
 * children to a new row. */
static const struct {
	int pad;
	int wrap;
	bool label;
} svg_levels[] = {
	[SVG_PACKAGE] = { 8, 2100, true },
	[SVG_NODE] = { 6, 1000, true },
	[SVG_LLC] = { 4, 470, true },
	[SVG_CORE] = { 2, 1 << 20, false },
};

static int svg_key(const struct svg *s, size_t i, enum svg_level level)
{
	const struct rtplace_cpu *c = &s->cpus[i];

	switch (level) {
	case SVG_PACKAGE:
		return c->node < 0 ? -1 : s->packages ? c->package : 0;
	case SVG_NODE:
		return c->node;
	case SVG_LLC:
		return c->llc;
	case SVG_CORE:
		/* CPUs of unknown place: rows of SVG_UNKNOWN_ROW */
		return c->node < 0 ? c->cpu / SVG_UNKNOWN_ROW : c->core;
	default:
		return c->cpu;
	}
}

static const struct svg *svg_sorting;

/* Unknown places (-1) last, then the group ids outermost first. */
static int svg_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int kx = svg_sorting->cpus[x].node < 0, ky = svg_sorting->cpus[y].node < 0;

	if (kx != ky)
		return kx - ky;
	for (int l = SVG_PACKAGE; l <= SVG_CPU; l++) {
		kx = svg_key(svg_sorting, x, (enum svg_level)l);
		ky = svg_key(svg_sorting, y, (enum svg_level)l);
		if (kx != ky)
			return kx < ky ? -1 : 1;
	}
	return 0;
}

/* Fill colour of a level. */
static void svg_color(unsigned level, char *buf, size_t len)
{
	if (level == RTPLACE_LEVEL_IDLE)
		snprintf(buf, len, "#e8f5e9");
	else if (level == RTPLACE_LEVEL_NORMAL)
		snprintf(buf, len, "#64b5f6");
	else if (level >= RTPLACE_LEVEL_RT1 && level <= RTPLACE_LEVEL_RT99)
		/* hue 55 (yellow) at rt1 down to 0 (red) at rt99 */
		snprintf(buf, len, "hsl(%d,90%%,%d%%)", 55 - (int)(level - RTPLACE_LEVEL_RT1) * 55 / 98,
			 60 - (int)(level - RTPLACE_LEVEL_RT1) * 15 / 98);
	else if (level == RTPLACE_LEVEL_DL)
		snprintf(buf, len, "#8e24aa");
	else
		snprintf(buf, len, "#bdbdbd");
}

/* Text with XML's five special characters escaped. */
static void svg_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			/* control characters are not XML 1.0 text */
			fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
		}
	}
}

static void svg_cpu(const struct svg *s, size_t i, int x, int y)
{
	const struct rtplace_cpu *c = &s->cpus[i];
	bool online = c->flags & RTPLACE_CPU_F_ONLINE;
	char fill[32], stroke[32];

	svg_color(online ? c->level : RTPLACE_LEVEL_OFFLINE, fill, sizeof(fill));
	if (c->claim_id)
		svg_color(c->claim_level, stroke, sizeof(stroke));
	else
		snprintf(stroke, sizeof(stroke), "#616161");
	fprintf(s->f, "<rect class=\"cpu\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"2\" fill=\"%s\" "
		      "stroke=\"%s\" stroke-width=\"%s\"><title>CPU %d: %s",
		x + 1, y + 1, SVG_CELL - 2, SVG_CELL - 2, fill, c->claim_id ? "#000" : stroke,
		c->claim_id ? "1" : "0.5", c->cpu, online ? rtplace_level_name(c->level) : "offline");
	if (c->claim_id)
		fprintf(s->f, ", claim %llu at %s", (unsigned long long)c->claim_id, rtplace_level_name(c->claim_level));
	else
		fputs(", no claim", s->f);
	if (c->pid > 0) {
		fprintf(s->f, ", thread %d ", (int)c->pid);
		svg_text(s->f, c->comm[0] ? c->comm : "?");
	} else {
		fputs(", no thread", s->f);
	}
	if (c->flags & RTPLACE_CPU_F_HOUSEKEEPING)
		fputs(", housekeeping", s->f);
	if (c->flags & RTPLACE_CPU_F_ISOLATED)
		fputs(", isolated", s->f);
	if (c->flags & RTPLACE_CPU_F_NOHZ_FULL)
		fputs(", nohz_full", s->f);
	fputs("</title></rect>\n", s->f);
	fprintf(s->f, "<text x=\"%d\" y=\"%d\" font-size=\"6\" text-anchor=\"middle\" pointer-events=\"none\">%d</text>\n",
		x + SVG_CELL / 2, y + SVG_CELL / 2 + 2, c->cpu);
	/* the claim's level as a ring inside the square */
	if (c->claim_id)
		fprintf(s->f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"2\" fill=\"none\" stroke=\"%s\" "
			      "stroke-width=\"2\" pointer-events=\"none\"/>\n",
			x + 3, y + 3, SVG_CELL - 6, SVG_CELL - 6, stroke);
}

static void svg_label(const struct svg *s, enum svg_level level, size_t i, char *buf, size_t len)
{
	int key = svg_key(s, i, level);

	if (s->cpus[i].node < 0)
		snprintf(buf, len, "place unknown (offline since rtplaced started)");
	else if (level == SVG_PACKAGE)
		snprintf(buf, len, "package %d", key);
	else if (level == SVG_NODE)
		snprintf(buf, len, "node %d", key);
	else
		snprintf(buf, len, "LLC %d", key);
}

/*
 * Lays out the group of order[lo..hi) at level (its CPUs share the keys of
 * the levels above) with its top-left corner at x, y, drawing it when draw
 * is set; *ret_w and *ret_h get its size. Without package ids the package
 * level draws no box.
 */
static void svg_group(const struct svg *s, enum svg_level level, size_t lo, size_t hi, int x, int y, bool draw,
		      int *ret_w, int *ret_h)
{
	bool unknown = s->cpus[s->order[lo]].node < 0;
	/* CPUs of unknown place get one box (at the package level), no
	 * node, LLC or core boxes */
	bool boxed = unknown ? level == SVG_PACKAGE : level != SVG_PACKAGE || s->packages;
	int gap = svg_levels[level].pad, pad = boxed ? gap : 0;
	int top = boxed && svg_levels[level].label ? SVG_LABEL : 0;
	int cx = pad, cy = pad + top, row_h = 0, w = 0;
	char label[64] = "";

	if (top)
		svg_label(s, level, s->order[lo], label, sizeof(label));
	if (draw && boxed)
		fprintf(s->f, "<g class=\"l%d\">\n", level);
	for (size_t a = lo, b; a < hi; a = b) {
		int key = svg_key(s, s->order[a], level + 1), cw, ch;

		for (b = a + 1; b < hi && svg_key(s, s->order[b], level + 1) == key; b++)
			;
		if (level + 1 == SVG_CPU) {
			/* a core's CPUs: one square each */
			for (size_t k = a; k < b; k++, cx += SVG_CELL)
				if (draw)
					svg_cpu(s, s->order[k], x + cx, y + cy);
			row_h = SVG_CELL;
			w = cx + pad > w ? cx + pad : w;
			continue;
		}
		svg_group(s, level + 1, a, b, 0, 0, false, &cw, &ch);
		if (cx > pad && cx + cw > svg_levels[level].wrap) {
			cx = pad;
			cy += row_h + gap;
			row_h = 0;
		}
		if (draw)
			svg_group(s, level + 1, a, b, x + cx, y + cy, true, &cw, &ch);
		cx += cw + gap;
		row_h = ch > row_h ? ch : row_h;
		w = cx > w ? cx : w;
	}
	/* the last child's gap becomes the box's right padding */
	*ret_w = level + 1 == SVG_CPU ? w : w - gap + pad;
	/* wide enough for its label (10-px sans-serif: under 6 px a character) */
	if (*ret_w < (int)strlen(label) * 6 + 2 * pad)
		*ret_w = (int)strlen(label) * 6 + 2 * pad;
	*ret_h = cy + row_h + pad;
	if (!draw || !boxed)
		return;
	fprintf(s->f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" fill=\"none\" stroke=\"#9e9e9e\" "
		      "pointer-events=\"none\"/>\n",
		x, y, *ret_w, *ret_h);
	if (top)
		fprintf(s->f, "<text x=\"%d\" y=\"%d\" font-size=\"10\">%s</text>\n", x + pad, y + pad + 9, label);
	fprintf(s->f, "</g>\n");
}

static void svg_legend(FILE *f, int x, int y)
{
	static const struct {
		unsigned level;
		const char *name;
	} items[] = {
		{ RTPLACE_LEVEL_IDLE, "idle" },
		{ RTPLACE_LEVEL_NORMAL, "normal" },
		{ RTPLACE_LEVEL_RT1, "rt1" },
		{ RTPLACE_LEVEL_RT1 + 49, "rt50" },
		{ RTPLACE_LEVEL_RT99, "rt99" },
		{ RTPLACE_LEVEL_DL, "dl" },
		{ RTPLACE_LEVEL_OFFLINE, "offline" },
	};
	char fill[32];

	fprintf(f, "<g class=\"legend\" font-size=\"11\">\n");
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++, x += 70) {
		svg_color(items[i].level, fill, sizeof(fill));
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" rx=\"2\" fill=\"%s\" stroke=\"#616161\" "
			   "stroke-width=\"0.5\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
			x, y, fill, x + 16, y + 10, items[i].name);
	}
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" rx=\"2\" fill=\"#e8f5e9\" stroke=\"#000\"/>"
		   "<rect x=\"%d\" y=\"%d\" width=\"8\" height=\"8\" rx=\"2\" fill=\"none\" stroke=\"hsl(28,90%%,53%%)\" "
		   "stroke-width=\"2\"/><text x=\"%d\" y=\"%d\">claimed (ring: the claim's level)</text>\n",
		x, y, x + 2, y + 2, x + 16, y + 10);
	fprintf(f, "</g>\n");
}

int ctl_svg_write(FILE *f, const struct rtplace_cpu *cpus, size_t n)
{
	struct svg s = { .f = f, .cpus = cpus, .n = n };
	int w = 0, h = 0, row_h = 0, x = 0, y = 0;

	for (size_t i = 0; i < n; i++)
		s.packages |= cpus[i].node >= 0 && cpus[i].package >= 0;

	s.order = malloc((n ? n : 1) * sizeof(*s.order));
	if (!s.order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		s.order[i] = i;
	svg_sorting = &s;
	qsort(s.order, n, sizeof(*s.order), svg_cmp);
	svg_sorting = NULL;

	/* Measure: packages (or the unknown-place group) left to right. */
	for (int pass = 0; pass < 2; pass++) {
		x = SVG_MARGIN;
		y = SVG_MARGIN + SVG_LEGEND;
		row_h = 0;
		for (size_t a = 0, b; a < n; a = b) {
			int key = svg_key(&s, s.order[a], SVG_PACKAGE), cw, ch;
			bool unknown = cpus[s.order[a]].node < 0;

			for (b = a + 1; b < n && svg_key(&s, s.order[b], SVG_PACKAGE) == key &&
					(cpus[s.order[b]].node < 0) == unknown;
			     b++)
				;
			svg_group(&s, SVG_PACKAGE, a, b, 0, 0, false, &cw, &ch);
			if (x > SVG_MARGIN && x + cw > svg_levels[SVG_PACKAGE].wrap) {
				x = SVG_MARGIN;
				y += row_h + SVG_MARGIN;
				row_h = 0;
			}
			if (pass)
				svg_group(&s, SVG_PACKAGE, a, b, x, y, true, &cw, &ch);
			x += cw + SVG_MARGIN;
			row_h = ch > row_h ? ch : row_h;
			w = x > w ? x : w;
		}
		h = y + row_h + SVG_MARGIN;
		if (pass == 0) {
			w = w < SVG_MIN_WIDTH ? SVG_MIN_WIDTH : w;
			fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
				   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
				   "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
				   "<title>rtplace: %zu CPUs by level</title>\n"
				   "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
				w, h, w, h, n);
			svg_legend(f, SVG_MARGIN, SVG_MARGIN);
		}
	}
	fprintf(f, "</svg>\n");
	free(s.order);
	return ferror(f) ? -EIO : 0;
}
