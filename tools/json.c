// SPDX-License-Identifier: MIT
/* Streaming JSON writer for the nvq tools; see json.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static void set_err(struct json_writer *w, int err)
{
	if (!w->err)
		w->err = err;
}

static void indent(struct json_writer *w, int level)
{
	fputc('\n', w->out);
	for (int i = 0; i < level; i++)
		fputs("  ", w->out);
}

static void put_escaped(struct json_writer *w, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	fputc('"', w->out);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"':
			fputs("\\\"", w->out);
			break;
		case '\\':
			fputs("\\\\", w->out);
			break;
		case '\n':
			fputs("\\n", w->out);
			break;
		case '\r':
			fputs("\\r", w->out);
			break;
		case '\t':
			fputs("\\t", w->out);
			break;
		case '\b':
			fputs("\\b", w->out);
			break;
		case '\f':
			fputs("\\f", w->out);
			break;
		default:
			/* DEL is legal JSON but invisible in a terminal. */
			if (c < 0x20 || c == 0x7f) {
				fputs("\\u00", w->out);
				fputc(hex[c >> 4], w->out);
				fputc(hex[c & 0xf], w->out);
			} else {
				fputc(c, w->out);
			}
		}
	}
	fputc('"', w->out);
}

/*
 * Everything a value needs before its own text: validity checks, the
 * comma, the line break and the key. Returns false (and writes nothing)
 * when the call is a misuse.
 */
static bool begin_value(struct json_writer *w, const char *key)
{
	if (w->err)
		return false;
	if (w->depth == 0) {
		if (w->done || key) {
			set_err(w, -EINVAL);
			return false;
		}
		return true;
	}
	if (w->is_array[w->depth - 1] != !key) {
		set_err(w, -EINVAL);
		return false;
	}
	if (w->has_items[w->depth - 1])
		fputc(',', w->out);
	w->has_items[w->depth - 1] = true;
	if (w->pretty)
		indent(w, w->depth);
	if (key) {
		put_escaped(w, key, strlen(key));
		fputs(w->pretty ? ": " : ":", w->out);
	}
	return true;
}

static void end_value(struct json_writer *w)
{
	if (w->depth == 0)
		w->done = true;
}

void json_init(struct json_writer *w, FILE *out, bool pretty)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->pretty = pretty;
}

static void begin_container(struct json_writer *w, const char *key, bool array)
{
	if (w->depth == JSON_MAX_DEPTH) {
		set_err(w, -E2BIG);
		return;
	}
	if (!begin_value(w, key))
		return;
	fputc(array ? '[' : '{', w->out);
	w->is_array[w->depth] = array;
	w->has_items[w->depth] = false;
	w->depth++;
}

static void end_container(struct json_writer *w, bool array)
{
	if (w->err)
		return;
	if (w->depth == 0 || w->is_array[w->depth - 1] != array) {
		set_err(w, -EINVAL);
		return;
	}
	w->depth--;
	if (w->pretty && w->has_items[w->depth])
		indent(w, w->depth);
	fputc(array ? ']' : '}', w->out);
	end_value(w);
}

void json_begin_object(struct json_writer *w, const char *key)
{
	begin_container(w, key, false);
}

void json_end_object(struct json_writer *w)
{
	end_container(w, false);
}

void json_begin_array(struct json_writer *w, const char *key)
{
	begin_container(w, key, true);
}

void json_end_array(struct json_writer *w)
{
	end_container(w, true);
}

void json_raw(struct json_writer *w, const char *key, const char *text)
{
	if (!begin_value(w, key))
		return;
	fputs(text, w->out);
	end_value(w);
}

void json_uint(struct json_writer *w, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	json_raw(w, key, buf);
}

void json_int(struct json_writer *w, const char *key, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	json_raw(w, key, buf);
}

void json_double(struct json_writer *w, const char *key, double v)
{
	char buf[32];

	if (!isfinite(v)) {
		json_null(w, key);
		return;
	}
	/* 15 digits print most values short; 17 always read back exactly. */
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	json_raw(w, key, buf);
}

void json_fixed(struct json_writer *w, const char *key, double v, int decimals)
{
	char buf[352]; /* DBL_MAX has 309 integer digits */

	if (!isfinite(v)) {
		json_null(w, key);
		return;
	}
	if (decimals < 0)
		decimals = 0;
	if (decimals > 20)
		decimals = 20;
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	json_raw(w, key, buf);
}

void json_string_len(struct json_writer *w, const char *key, const char *s,
		     size_t len)
{
	if (!begin_value(w, key))
		return;
	put_escaped(w, s, len);
	end_value(w);
}

void json_string(struct json_writer *w, const char *key, const char *s)
{
	json_string_len(w, key, s, strlen(s));
}

void json_bool(struct json_writer *w, const char *key, bool v)
{
	json_raw(w, key, v ? "true" : "false");
}

void json_null(struct json_writer *w, const char *key)
{
	json_raw(w, key, "null");
}

int json_finish(struct json_writer *w)
{
	if (!w->err && (w->depth || !w->done))
		set_err(w, -EINVAL);
	if (w->done)
		fputc('\n', w->out);
	errno = 0;
	if (fflush(w->out) || ferror(w->out))
		set_err(w, errno ? -errno : -EIO);
	return w->err;
}
