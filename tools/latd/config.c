// SPDX-License-Identifier: MIT
/*
 * nvq-latd's config file: INI sections per disk spec plus [defaults], keys
 * cpu_lat_limit_us, cpu_lat_timeout_ms, activity and hysteresis. Strict: a sysadmin
 * who mistypes a key or a value hears about it with the line number,
 * rather than running with a setting they did not mean.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nvq/qos.h>

#include "config.h"
#include "latd.h"

/* More than any sane config; stops a wrong path (a disk image) early. */
#define CONFIG_MAX_BYTES (1 << 20)
#define LINE_MAX_CHARS 4096
/* cpu_lat_limit_us, cpu_lat_timeout_ms, activity, hysteresis */
#define NR_KEYS 4

void latd_settings_init(struct latd_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->limit_us = NVQ_QOS_OFF;
	s->timeout_ms = NVQ_QOS_TIMEOUT_MS_DEFAULT;
	s->activity = LATD_ACT_AUTO;
	s->hysteresis = true;
}

void latd_settings_merge(struct latd_settings *dst,
			 const struct latd_settings *src)
{
	if (src->set & LATD_SET_LIMIT)
		dst->limit_us = src->limit_us;
	if (src->set & LATD_SET_TIMEOUT)
		dst->timeout_ms = src->timeout_ms;
	if (src->set & LATD_SET_ACTIVITY)
		dst->activity = src->activity;
	if (src->set & LATD_SET_HYSTERESIS)
		dst->hysteresis = src->hysteresis;
	dst->set |= src->set;
}

int latd_parse_limit(const char *s, int *limit_us, char *err, size_t len)
{
	/* The library's parser: the same words as nvq and nvq-perf take. */
	if (nvq_qos_parse_limit(s, limit_us)) {
		latd_set_err(
			err, len,
			"bad cpu_lat_limit_us \"%.40s\": use -1 (off), auto, "
			"0 (no idle at all) or 1..%d us",
			s, NVQ_QOS_LIMIT_MAX);
		return -EINVAL;
	}
	return 0;
}

int latd_parse_timeout(const char *s, unsigned int *ms, char *err, size_t len)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s < '0' || *s > '9' || errno || *end || v < 1 ||
	    v > NVQ_QOS_TIMEOUT_MS_MAX) {
		latd_set_err(err, len,
			     "bad cpu_lat_timeout_ms \"%.40s\": use 1..%d ms",
			     s, NVQ_QOS_TIMEOUT_MS_MAX);
		return -EINVAL;
	}
	*ms = (unsigned int)v;
	return 0;
}

static const char *const act_names[] = {
	[LATD_ACT_AUTO] = "auto",
	[LATD_ACT_BPF] = "bpf",
	[LATD_ACT_POLL] = "poll",
};

const char *latd_activity_name(enum latd_activity a)
{
	if ((unsigned int)a >= sizeof(act_names) / sizeof(act_names[0]))
		return "?";
	return act_names[a];
}

int latd_parse_activity(const char *s, enum latd_activity *a, char *err,
			size_t len)
{
	unsigned int i;

	for (i = 0; i < sizeof(act_names) / sizeof(act_names[0]); i++) {
		if (!strcmp(s, act_names[i])) {
			*a = (enum latd_activity)i;
			return 0;
		}
	}
	latd_set_err(err, len, "bad activity \"%.40s\": use bpf, poll or auto",
		     s);
	return -EINVAL;
}

int latd_parse_hysteresis(const char *s, bool *on, char *err, size_t len)
{
	if (!strcmp(s, "on") || !strcmp(s, "1")) {
		*on = true;
		return 0;
	}
	if (!strcmp(s, "off") || !strcmp(s, "0")) {
		*on = false;
		return 0;
	}
	latd_set_err(err, len, "bad hysteresis \"%.40s\": use on or off", s);
	return -EINVAL;
}

void latd_config_free(struct latd_config *c)
{
	free(c->sections);
	memset(c, 0, sizeof(*c));
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Trim @s in place: leading and trailing blanks. */
static char *trim(char *s)
{
	char *end;

	while (is_space(*s))
		s++;
	end = s + strlen(s);
	while (end > s && is_space(end[-1]))
		*--end = '\0';
	return s;
}

/* Cut a comment that follows a value: '#' or ';' after a blank. */
static void cut_comment(char *s)
{
	char *p;

	for (p = s; *p; p++) {
		if ((*p == '#' || *p == ';') && p > s && is_space(p[-1])) {
			*p = '\0';
			return;
		}
	}
}

struct parser {
	const char *name;
	struct latd_config *c;
	struct latd_settings *cur; /* NULL before the first section */
	const char *cur_spec;
	int cur_line;
	int key_line[NR_KEYS]; /* where each key was set in the current section */
	char *err;
	size_t len;
};

static int section(struct parser *p, char *s, int line)
{
	struct latd_section *ns;
	char *spec;
	size_t n;
	int i;

	/* The last ']' closes it: globs may hold brackets ([nvme[01]n1]). */
	cut_comment(s);
	s = trim(s);
	n = strlen(s);
	if (n >= 2 && s[n - 1] != ']' && strchr(s, ']')) {
		latd_set_err(p->err, p->len,
			     "%s:%d: text after the section header: \"%.40s\"",
			     p->name, line, strrchr(s, ']') + 1);
		return -EINVAL;
	}
	if (n < 2 || s[n - 1] != ']') {
		latd_set_err(p->err, p->len,
			     "%s:%d: section header without a closing ']'",
			     p->name, line);
		return -EINVAL;
	}
	s[n - 1] = '\0';
	spec = trim(s + 1);
	if (!*spec) {
		latd_set_err(p->err, p->len,
			     "%s:%d: empty section name: use [defaults] or a "
			     "disk ([nvme0n1], [/dev/disk/by-id/...], [nvme*])",
			     p->name, line);
		return -EINVAL;
	}
	if (strlen(spec) >= LATD_SPEC_MAX) {
		latd_set_err(p->err, p->len,
			     "%s:%d: section name longer than %d", p->name,
			     line, LATD_SPEC_MAX - 1);
		return -EINVAL;
	}
	memset(p->key_line, 0, sizeof(p->key_line));
	p->cur_line = line;
	if (!strcmp(spec, "defaults")) {
		if (p->c->defaults.set & 0x80000000u) {
			latd_set_err(p->err, p->len,
				     "%s:%d: a second [defaults] section",
				     p->name, line);
			return -EINVAL;
		}
		/* Marked seen; the flag is cleared at the end. */
		p->c->defaults.set |= 0x80000000u;
		p->cur = &p->c->defaults;
		p->cur_spec = "defaults";
		return 0;
	}
	for (i = 0; i < p->c->nr_sections; i++) {
		if (!strcmp(p->c->sections[i].spec, spec)) {
			latd_set_err(
				p->err, p->len,
				"%s:%d: section [%s] again (first at line %d)",
				p->name, line, spec, p->c->sections[i].line);
			return -EINVAL;
		}
	}
	ns = realloc(p->c->sections,
		     (size_t)(p->c->nr_sections + 1) * sizeof(*ns));
	if (!ns) {
		latd_set_err(p->err, p->len, "%s: out of memory", p->name);
		return -ENOMEM;
	}
	p->c->sections = ns;
	ns = &ns[p->c->nr_sections++];
	memset(ns, 0, sizeof(*ns));
	snprintf(ns->spec, sizeof(ns->spec), "%s", spec);
	ns->line = line;
	p->cur = &ns->s;
	p->cur_spec = ns->spec;
	return 0;
}

static const char *const keys[NR_KEYS] = {
	"cpu_lat_limit_us",
	"cpu_lat_timeout_ms",
	"activity",
	"hysteresis",
};

static int assignment(struct parser *p, char *s, int line)
{
	char *eq = strchr(s, '='), *key, *val, why[160];
	int k, err;

	if (!eq) {
		latd_set_err(
			p->err, p->len,
			"%s:%d: expected \"key = value\" or \"[section]\", "
			"not \"%.40s\"",
			p->name, line, s);
		return -EINVAL;
	}
	*eq = '\0';
	key = trim(s);
	val = eq + 1;
	cut_comment(val);
	val = trim(val);
	for (k = 0; k < NR_KEYS; k++)
		if (!strcmp(key, keys[k]))
			break;
	if (k == NR_KEYS) {
		latd_set_err(p->err, p->len,
			     "%s:%d: unknown key \"%.40s\" (known: "
			     "cpu_lat_limit_us, cpu_lat_timeout_ms, activity, "
			     "hysteresis)",
			     p->name, line, key);
		return -EINVAL;
	}
	if (!p->cur) {
		latd_set_err(p->err, p->len,
			     "%s:%d: %s outside a section: put it under "
			     "[defaults] or a disk's [section]",
			     p->name, line, key);
		return -EINVAL;
	}
	if (p->key_line[k]) {
		latd_set_err(p->err, p->len,
			     "%s:%d: %s set twice in [%s] (first at line %d)",
			     p->name, line, key, p->cur_spec, p->key_line[k]);
		return -EINVAL;
	}
	if (!*val) {
		latd_set_err(p->err, p->len, "%s:%d: %s without a value",
			     p->name, line, key);
		return -EINVAL;
	}
	switch (k) {
	case 0:
		err = latd_parse_limit(val, &p->cur->limit_us, why,
				       sizeof(why));
		p->cur->set |= LATD_SET_LIMIT;
		break;
	case 1:
		err = latd_parse_timeout(val, &p->cur->timeout_ms, why,
					 sizeof(why));
		p->cur->set |= LATD_SET_TIMEOUT;
		break;
	case 2:
		err = latd_parse_activity(val, &p->cur->activity, why,
					  sizeof(why));
		p->cur->set |= LATD_SET_ACTIVITY;
		break;
	default:
		err = latd_parse_hysteresis(val, &p->cur->hysteresis, why,
					    sizeof(why));
		p->cur->set |= LATD_SET_HYSTERESIS;
		break;
	}
	if (err) {
		latd_set_err(p->err, p->len, "%s:%d: %s", p->name, line, why);
		return err;
	}
	p->key_line[k] = line;
	return 0;
}

int latd_config_parse(const char *text, const char *name, struct latd_config *c,
		      char *err, size_t len)
{
	struct parser p = { .name = name, .c = c, .err = err, .len = len };
	char buf[LINE_MAX_CHARS + 2], *s;
	const char *line = text, *eol;
	size_t n;
	int ln, ret = 0;

	memset(c, 0, sizeof(*c));
	for (ln = 1; *line; ln++, line = *eol ? eol + 1 : eol) {
		eol = strchr(line, '\n');
		if (!eol)
			eol = line + strlen(line);
		n = (size_t)(eol - line);
		if (n > LINE_MAX_CHARS) {
			latd_set_err(err, len, "%s:%d: line longer than %d",
				     name, ln, LINE_MAX_CHARS);
			ret = -EINVAL;
			break;
		}
		memcpy(buf, line, n);
		buf[n] = '\0';
		s = trim(buf);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[')
			ret = section(&p, s, ln);
		else
			ret = assignment(&p, s, ln);
		if (ret)
			break;
	}
	c->defaults.set &= ~0x80000000u;
	if (ret)
		latd_config_free(c);
	return ret;
}

int latd_config_load(const char *path, struct latd_config *c, char *err,
		     size_t len)
{
	struct stat st;
	char *text;
	ssize_t n = 0;
	size_t got = 0;
	int fd, ret;

	memset(c, 0, sizeof(*c));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		latd_set_err(err, len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		latd_set_err(err, len, "%s: not a regular file", path);
		return -EINVAL;
	}
	if (st.st_size > CONFIG_MAX_BYTES) {
		close(fd);
		latd_set_err(err, len, "%s: larger than %d bytes: not a config",
			     path, CONFIG_MAX_BYTES);
		return -EFBIG;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		latd_set_err(err, len, "%s: out of memory", path);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, text + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (ret) {
		free(text);
		latd_set_err(err, len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	text[got] = '\0';
	if (strlen(text) != got) {
		free(text);
		latd_set_err(err, len,
			     "%s: contains a NUL byte: not a text file", path);
		return -EINVAL;
	}
	ret = latd_config_parse(text, path, c, err, len);
	free(text);
	return ret;
}
