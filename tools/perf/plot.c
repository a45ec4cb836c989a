/* SPDX-License-Identifier: MIT */
/* SVG latency CDF. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "plot.h"

#define W 900
#define H 560
#define ML 80 /* margins: room for tick labels and the curve labels */
#define MR 40
#define MT 50
#define MB 60
#define PW (W - ML - MR)
#define PH (H - MT - MB)

static const char *palette[] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
	"#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
};

static void put_escaped(FILE *f, const char *s)
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
			/* XML 1.0 forbids most control characters. */
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}

static const char *decade_label(int e, char *buf, size_t len)
{
	static const char *units[] = { "ns", "us", "ms", "s" };
	int u = e / 3;

	if (u > 3)
		u = 3;
	snprintf(buf, len, "%.0f%s", pow(10, e - 3 * u), units[u]);
	return buf;
}

struct axis {
	double lo, hi; /* log10 of the x range */
};

static double xpos(const struct axis *a, double ns)
{
	double l = log10(ns < 1 ? 1 : ns);

	return ML + (l - a->lo) / (a->hi - a->lo) * PW;
}

static double ypos(double frac)
{
	return MT + (1 - frac) * PH;
}

/* Where the CDF of @h first reaches @frac: bucket midpoint value. */
static double value_at(const struct perf_hist *h, double frac)
{
	uint64_t v = perf_hist_percentile(h, frac * 100);

	return (double)v;
}

static void grid(FILE *f, const struct axis *a)
{
	char buf[16];
	int e, m, p;

	fprintf(f, "<g stroke=\"#ddd\" stroke-width=\"1\">\n");
	for (e = (int)a->lo; e < (int)a->hi; e++)
		for (m = 2; m < 10; m++)
			fprintf(f,
				"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
				"y2=\"%d\"/>\n",
				xpos(a, m * pow(10, e)), MT,
				xpos(a, m * pow(10, e)), MT + PH);
	for (p = 1; p < 10; p++)
		fprintf(f,
			"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n",
			ML, ypos(p / 10.0), ML + PW, ypos(p / 10.0));
	fprintf(f, "</g>\n<g stroke=\"#999\" stroke-width=\"1\">\n");
	for (e = (int)a->lo; e <= (int)a->hi; e++)
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n",
			xpos(a, pow(10, e)), MT, xpos(a, pow(10, e)), MT + PH);
	fprintf(f, "</g>\n");
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
		"fill=\"none\" stroke=\"#333\"/>\n",
		ML, MT, PW, PH);
	fprintf(f, "<g font-family=\"sans-serif\" font-size=\"12\" "
		   "fill=\"#333\">\n");
	for (e = (int)a->lo; e <= (int)a->hi; e++)
		fprintf(f,
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">"
			"%s</text>\n",
			xpos(a, pow(10, e)), MT + PH + 18,
			decade_label(e, buf, sizeof(buf)));
	for (p = 0; p <= 10; p++)
		fprintf(f,
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">"
			"%d%%</text>\n",
			ML - 6, ypos(p / 10.0) + 4, p * 10);
	fprintf(f,
		"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
		"completion latency (clat), log scale</text>\n",
		ML + PW / 2, H - 15);
	fprintf(f,
		"<text transform=\"translate(20,%d) rotate(-90)\" "
		"text-anchor=\"middle\">I/Os completed within (CDF)</text>\n",
		MT + PH / 2);
	fprintf(f, "</g>\n");
}

static void curve(FILE *f, const struct axis *a, const struct perf_hist *h,
		  const char *color)
{
	uint64_t seen = 0, lo, hi;
	unsigned int i;
	double x, y, px = xpos(a, (double)h->min);

	fprintf(f,
		"<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
		"points=\"%.1f,%.1f",
		color, px, ypos(0));
	for (i = 0; i < PERF_HIST_BUCKETS; i++) {
		if (!h->bucket[i])
			continue;
		seen += h->bucket[i];
		perf_hist_bucket_range(i, &lo, &hi);
		if (hi > h->max)
			hi = h->max;
		if (lo < h->min)
			lo = h->min;
		x = xpos(a, (double)lo + (double)(hi - lo) / 2);
		y = ypos((double)seen / (double)h->n);
		fprintf(f, " %.1f,%.1f", x, y);
	}
	fprintf(f, "\"/>\n");
}

static void label(FILE *f, const struct axis *a, const struct perf_hist *h,
		  const char *text, const char *color, double frac)
{
	double v = value_at(h, frac), x = xpos(a, v), y = ypos(frac);
	double width = 7.0 * (double)strlen(text);
	bool left = x + 10 + width > W - 4;

	fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
		x, y, color);
	fprintf(f,
		"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" "
		"font-family=\"sans-serif\" font-size=\"13\" fill=\"%s\" "
		"stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">",
		left ? x - 8 : x + 8, y + 4, left ? "end" : "start", color);
	put_escaped(f, text);
	fprintf(f, "</text>\n");
}

int perf_plot_svg(const char *path, const struct perf_curve *curves,
		  unsigned int n, const char *title, char *err, size_t errlen)
{
	double mn = INFINITY, mx = 0;
	unsigned int i, shown = 0, k;
	struct axis a;
	FILE *f;

	for (i = 0; i < n; i++) {
		const struct perf_hist *h = curves[i].h;

		if (!h->n)
			continue;
		mn = fmin(mn, h->min < 1 ? 1 : (double)h->min);
		mx = fmax(mx, (double)h->max);
		shown++;
	}
	if (!shown) {
		mn = 1000;
		mx = 1e6;
	}
	a.lo = floor(log10(mn));
	a.hi = ceil(log10(mx < mn ? mn : mx));
	if (a.hi <= a.lo)
		a.hi = a.lo + 1;

	f = fopen(path, "w");
	if (!f) {
		int e = errno;

		snprintf(err, errlen, "--plot %s: %s", path, strerror(e));
		return -e;
	}
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
		W, H, W, H);
	fprintf(f, "<title>");
	put_escaped(f, title);
	fprintf(f, "</title>\n<rect width=\"100%%\" height=\"100%%\" "
		   "fill=\"white\"/>\n");
	fprintf(f,
		"<text x=\"%d\" y=\"28\" font-family=\"sans-serif\" "
		"font-size=\"15\" text-anchor=\"middle\" fill=\"#111\">",
		W / 2);
	put_escaped(f, title);
	fprintf(f, "</text>\n");
	grid(f, &a);
	for (i = 0, k = 0; i < n; i++) {
		const char *color =
			palette[i % (sizeof(palette) / sizeof(palette[0]))];

		if (!curves[i].h->n)
			continue;
		curve(f, &a, curves[i].h, color);
		k++;
	}
	/* Labels on top, each at its own height so they never collide. */
	for (i = 0, k = 0; i < n; i++) {
		const char *color =
			palette[i % (sizeof(palette) / sizeof(palette[0]))];

		if (!curves[i].h->n)
			continue;
		label(f, &a, curves[i].h, curves[i].label, color,
		      0.15 + 0.7 * (k + 0.5) / shown);
		k++;
	}
	if (!shown)
		fprintf(f,
			"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
			"font-family=\"sans-serif\">no I/O measured</text>\n",
			ML + PW / 2, MT + PH / 2);
	fprintf(f, "</svg>\n");
	if (fclose(f)) {
		int e = errno;

		snprintf(err, errlen, "--plot %s: %s", path, strerror(e));
		return -e;
	}
	return 0;
}
