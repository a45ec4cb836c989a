// SPDX-License-Identifier: MIT
/* The tools' JSON writer: exact output, escaping, numbers, misuse. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json.h"

/* A writer into memory, so the output can be compared. */
struct sink {
	struct json_writer w;
	FILE *f;
	char *buf;
	size_t len;
};

static void sink_open(struct sink *s, bool pretty)
{
	s->buf = NULL;
	s->len = 0;
	s->f = open_memstream(&s->buf, &s->len);
	if (!s->f) {
		perror("open_memstream");
		exit(1);
	}
	json_init(&s->w, s->f, pretty);
}

/* Finish the document; returns json_finish()'s result. */
static int sink_close(struct sink *s)
{
	int ret = json_finish(&s->w);

	fclose(s->f);
	return ret;
}

static void test_compact(void)
{
	struct sink s;

	sink_open(&s, false);
	json_begin_object(&s.w, NULL);
	json_string(&s.w, "mn", "nvq");
	json_uint(&s.w, "nn", 1);
	json_begin_array(&s.w, "lbafs");
	json_begin_object(&s.w, NULL);
	json_uint(&s.w, "ds", 12);
	json_end_object(&s.w);
	json_uint(&s.w, NULL, 7);
	json_end_array(&s.w);
	json_begin_object(&s.w, "empty");
	json_end_object(&s.w);
	json_bool(&s.w, "t", true);
	json_bool(&s.w, "f", false);
	json_null(&s.w, "n");
	json_end_object(&s.w);
	CHECK_EQ(sink_close(&s), 0);
	CHECK_STREQ(s.buf, "{\"mn\":\"nvq\",\"nn\":1,\"lbafs\":[{\"ds\":12},7],"
			   "\"empty\":{},\"t\":true,\"f\":false,\"n\":null}\n");
	free(s.buf);
}

static void test_pretty(void)
{
	struct sink s;

	sink_open(&s, true);
	json_begin_object(&s.w, NULL);
	json_uint(&s.w, "a", 1);
	json_begin_array(&s.w, "b");
	json_int(&s.w, NULL, -2);
	json_begin_array(&s.w, NULL);
	json_end_array(&s.w);
	json_end_array(&s.w);
	json_begin_object(&s.w, "c");
	json_string(&s.w, "d", "e");
	json_end_object(&s.w);
	json_end_object(&s.w);
	CHECK_EQ(sink_close(&s), 0);
	/* the layout `python3 -m json.tool` prints */
	CHECK_STREQ(s.buf, "{\n"
			   "  \"a\": 1,\n"
			   "  \"b\": [\n"
			   "    -2,\n"
			   "    []\n"
			   "  ],\n"
			   "  \"c\": {\n"
			   "    \"d\": \"e\"\n"
			   "  }\n"
			   "}\n");
	free(s.buf);
}

static void test_escapes(void)
{
	static const char nul[] = { 'a', '\0', 'b' };
	struct sink s;

	sink_open(&s, false);
	json_begin_array(&s.w, NULL);
	json_string(&s.w, NULL, "q\"b\\s/");
	json_string(&s.w, NULL, "\n\r\t\b\f");
	json_string(&s.w, NULL, "\x01\x1f\x7f");
	json_string(&s.w, NULL, "gr\xc3\xbc\xc3\x9f"); /* UTF-8 unchanged */
	json_string_len(&s.w, NULL, nul, sizeof(nul));
	json_string(&s.w, NULL, "");
	json_end_array(&s.w);
	json_begin_object(&s.w, NULL); /* a second document: refused */
	CHECK_EQ(sink_close(&s), -EINVAL);
	CHECK_STREQ(s.buf, "[\"q\\\"b\\\\s/\",\"\\n\\r\\t\\b\\f\","
			   "\"\\u0001\\u001f\\u007f\",\"gr\xc3\xbc\xc3\x9f\","
			   "\"a\\u0000b\",\"\"]\n");
	free(s.buf);

	/* keys are escaped too */
	sink_open(&s, false);
	json_begin_object(&s.w, NULL);
	json_uint(&s.w, "k\"\n", 0);
	json_end_object(&s.w);
	CHECK_EQ(sink_close(&s), 0);
	CHECK_STREQ(s.buf, "{\"k\\\"\\n\":0}\n");
	free(s.buf);
}

static void test_numbers(void)
{
	struct sink s;

	sink_open(&s, false);
	json_begin_array(&s.w, NULL);
	json_uint(&s.w, NULL, UINT64_MAX);
	json_int(&s.w, NULL, INT64_MIN);
	json_double(&s.w, NULL, 0.1);
	json_double(&s.w, NULL, 1.0 / 3.0);
	json_double(&s.w, NULL, 1e300);
	json_double(&s.w, NULL, 2.5);
	json_double(&s.w, NULL, NAN);
	json_double(&s.w, NULL, -INFINITY);
	json_fixed(&s.w, NULL, 1.5, 2);
	json_fixed(&s.w, NULL, 99.0, 6);
	json_fixed(&s.w, NULL, INFINITY, 1);
	json_raw(&s.w, NULL, "340282366920938463463374607431768211455");
	json_end_array(&s.w);
	CHECK_EQ(sink_close(&s), 0);
	CHECK_STREQ(s.buf, "[18446744073709551615,-9223372036854775808,0.1,"
			   "0.33333333333333331,1e+300,2.5,null,null,1.50,"
			   "99.000000,null,"
			   "340282366920938463463374607431768211455]\n");
	free(s.buf);
}

static void test_misuse(void)
{
	struct sink s;

	/* a key inside an array: refused, nothing written for it */
	sink_open(&s, false);
	json_begin_array(&s.w, NULL);
	json_uint(&s.w, "k", 1);
	json_end_array(&s.w);
	CHECK_EQ(sink_close(&s), -EINVAL);
	CHECK_STREQ(s.buf, "[");
	free(s.buf);

	/* a value without a key inside an object */
	sink_open(&s, false);
	json_begin_object(&s.w, NULL);
	json_uint(&s.w, NULL, 1);
	CHECK_EQ(sink_close(&s), -EINVAL);
	free(s.buf);

	/* a key at the top level */
	sink_open(&s, false);
	json_uint(&s.w, "k", 1);
	CHECK_EQ(sink_close(&s), -EINVAL);
	CHECK_STREQ(s.buf, "");
	free(s.buf);

	/* unbalanced: an object left open */
	sink_open(&s, false);
	json_begin_object(&s.w, NULL);
	CHECK_EQ(sink_close(&s), -EINVAL);
	free(s.buf);

	/* mismatched end */
	sink_open(&s, false);
	json_begin_object(&s.w, NULL);
	json_end_array(&s.w);
	CHECK_EQ(sink_close(&s), -EINVAL);
	free(s.buf);

	/* end without begin */
	sink_open(&s, false);
	json_end_object(&s.w);
	CHECK_EQ(sink_close(&s), -EINVAL);
	free(s.buf);

	/* nothing written at all */
	sink_open(&s, false);
	CHECK_EQ(sink_close(&s), -EINVAL);
	free(s.buf);

	/* too deep */
	sink_open(&s, false);
	for (int i = 0; i < JSON_MAX_DEPTH + 1; i++)
		json_begin_array(&s.w, NULL);
	CHECK_EQ(sink_close(&s), -E2BIG);
	free(s.buf);

	/* exactly JSON_MAX_DEPTH is fine */
	sink_open(&s, false);
	for (int i = 0; i < JSON_MAX_DEPTH; i++)
		json_begin_array(&s.w, NULL);
	for (int i = 0; i < JSON_MAX_DEPTH; i++)
		json_end_array(&s.w);
	CHECK_EQ(sink_close(&s), 0);
	CHECK_EQ((long long)strlen(s.buf), 2 * JSON_MAX_DEPTH + 1);
	free(s.buf);

	/* a bare scalar is a complete document */
	sink_open(&s, false);
	json_uint(&s.w, NULL, 42);
	CHECK_EQ(sink_close(&s), 0);
	CHECK_STREQ(s.buf, "42\n");
	free(s.buf);
}

static void test_write_error(void)
{
	struct json_writer w;
	FILE *f = fopen("/dev/full", "w");

	if (!f) {
		fprintf(stderr, "note: no /dev/full, write error not tested\n");
		return;
	}
	json_init(&w, f, false);
	json_begin_array(&w, NULL);
	for (int i = 0; i < 10000; i++)
		json_string(&w, NULL, "some text to fill the stdio buffer");
	json_end_array(&w);
	CHECK_EQ(json_finish(&w), -ENOSPC);
	fclose(f);
}

int main(void)
{
	test_compact();
	test_pretty();
	test_escapes();
	test_numbers();
	test_misuse();
	test_write_error();
	return T_EXIT_PASS;
}
