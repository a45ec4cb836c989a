/* SPDX-License-Identifier: MIT */
/*
 * A small streaming JSON writer for the nvq tools.
 *
 * Values are written as they are added, so memory use does not grow with
 * the document. The writer tracks nesting and commas itself; a misuse (a
 * key inside an array, a value without a key inside an object, unbalanced
 * ends, nesting deeper than JSON_MAX_DEPTH) is recorded in the writer and
 * reported by json_finish(), and the offending call writes nothing, so the
 * output stays well-formed as far as it goes.
 *
 * Wherever a function takes @key: pass the member name inside an object
 * and NULL inside an array or for the top-level value.
 */
#ifndef NVQ_TOOLS_JSON_H
#define NVQ_TOOLS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json_writer {
	FILE *out;
	bool pretty;
	bool done; /* a complete top-level value was written */
	int depth;
	int err; /* first misuse or write error, negative errno */
	/* per open container: is it an array, has it got a member yet */
	bool is_array[JSON_MAX_DEPTH];
	bool has_items[JSON_MAX_DEPTH];
};

/*
 * Start a document on @out. @pretty selects two-space indentation with one
 * member per line (as `python3 -m json.tool` prints); otherwise compact.
 */
void json_init(struct json_writer *w, FILE *out, bool pretty);

/* Open an object or an array; close it with the matching end call. */
void json_begin_object(struct json_writer *w, const char *key);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w, const char *key);
void json_end_array(struct json_writer *w);

/* Numbers. Non-finite doubles become null (JSON has no NaN or Inf). */
void json_uint(struct json_writer *w, const char *key, uint64_t v);
void json_int(struct json_writer *w, const char *key, int64_t v);
/* Shortest "%g" form that reads back as the same double. */
void json_double(struct json_writer *w, const char *key, double v);
/* @v printed with printf's "%.*f" and @decimals digits, e.g. 2 -> 1.50 */
void json_fixed(struct json_writer *w, const char *key, double v, int decimals);

/*
 * A NUL-terminated string, escaped as JSON requires. Bytes >= 0x80 are
 * copied unchanged, so the caller must pass UTF-8 (or ASCII).
 */
void json_string(struct json_writer *w, const char *key, const char *s);
/* The first @len bytes of @s (may contain NUL, which is escaped). */
void json_string_len(struct json_writer *w, const char *key, const char *s,
		     size_t len);
void json_bool(struct json_writer *w, const char *key, bool v);
void json_null(struct json_writer *w, const char *key);

/*
 * Write @text verbatim as the value: for numbers the caller formatted
 * itself (e.g. a 128-bit counter in decimal). @text must be valid JSON.
 */
void json_raw(struct json_writer *w, const char *key, const char *text);

/*
 * End the document: checks that every container was closed and that one
 * value was written, writes the final newline and flushes. Returns 0, or
 * the first error: -EINVAL for misuse, -E2BIG for too deep nesting, or
 * the negative errno of a failed write.
 */
int json_finish(struct json_writer *w);

#endif /* NVQ_TOOLS_JSON_H */
