// SPDX-License-Identifier: MIT
/*
 * The options of a tcp: URI: "HOST[:PORT][,key=val...]" after the scheme,
 * under nvme-cli's option names and with its defaults (docs/tcp.md).
 * Strict: whatever is not understood is an error naming the part.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "internal.h"
#include "tcp.h"

/* Where hostnqn and hostid live, as nvme-cli has them; NVQ_TCP_ETC
 * replaces the directory (and is then also where machine-id is read). */
#define ETC_NVME "/etc/nvme"
#define UUID_NQN_PREFIX "nqn.2014-08.org.nvmexpress:uuid:"

/* The keys, one bit each for the duplicate check. */
enum {
	K_NQN,
	K_HOSTNQN,
	K_HOSTID,
	K_HDGST,
	K_DDGST,
	K_NR_IO_QUEUES,
	K_QUEUE_SIZE,
	K_RECONNECT_DELAY,
	K_CTRL_LOSS_TMO,
	K_KATO,
	K_CONNECT_TIMEOUT,
};

static const struct {
	const char *name;
	unsigned int key;
} keys[] = {
	{ "nqn", K_NQN },
	{ "hostnqn", K_HOSTNQN },
	{ "hostid", K_HOSTID },
	{ "hdgst", K_HDGST },
	{ "ddgst", K_DDGST },
	{ "nr_io_queues", K_NR_IO_QUEUES },
	{ "queue_size", K_QUEUE_SIZE },
	{ "reconnect_delay", K_RECONNECT_DELAY },
	{ "ctrl_loss_tmo", K_CTRL_LOSS_TMO },
	{ "kato", K_KATO },
	{ "keep_alive_tmo", K_KATO }, /* nvme-cli's long name */
	{ "connect_timeout", K_CONNECT_TIMEOUT },
};

/* The numeric keys' bounds (nvme-cli's and the kernel's where they have
 * them: queue_size 16..1024, reconnect_delay > 0). */
static const struct {
	unsigned int key;
	long long min, max;
} ranges[] = {
	{ K_NR_IO_QUEUES, 0, 65535 },
	{ K_QUEUE_SIZE, 16, 1024 },
	{ K_RECONNECT_DELAY, 1, 86400 },
	{ K_CTRL_LOSS_TMO, -1, 31536000 },
	{ K_KATO, 0, 4294967 }, /* KATO is milliseconds in 32 bits */
	{ K_CONNECT_TIMEOUT, 1, 3600000 },
};

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (@n bytes) into @id. */
static bool parse_uuid(const char *s, size_t n, uint8_t id[16])
{
	size_t i, b = 0;

	if (n != 36)
		return false;
	for (i = 0; i < 36;) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i++] != '-')
				return false;
			continue;
		}
		hi = hexval((unsigned char)s[i]);
		lo = hexval((unsigned char)s[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		id[b++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	return true;
}

static void uuid_str(const uint8_t id[16], char out[37])
{
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8],
		 id[9], id[10], id[11], id[12], id[13], id[14], id[15]);
}

/* An NQN (@n bytes): "nqn." and at most NVQ_NQN_MAX printable bytes. */
static int check_nqn(const char *what, const char *s, size_t n)
{
	size_t i;

	if (n > NVQ_NQN_MAX)
		return nvq_err(-EINVAL,
			       "tcp: %s is %zu bytes long, more than an NQN's "
			       "%d",
			       what, n, NVQ_NQN_MAX);
	if (n < 5 || strncmp(s, "nqn.", 4))
		return nvq_err(-EINVAL,
			       "tcp: %s '%.*s' is not an NQN (nqn.yyyy-mm."
			       "reverse.domain:name)",
			       what, (int)n, s);
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return nvq_err(
				-EINVAL,
				"tcp: %s '%.*s' holds a space or control "
				"character",
				what, (int)n, s);
	return 0;
}

/*
 * The first line of $NVQ_TCP_ETC (or /etc/nvme) / @name, without
 * surrounding white space, into @buf. 1 when read, 0 when there is no such
 * file (or it is empty), -errno when it cannot be read.
 */
static int read_etc(const char *dir, const char *name, char *buf, size_t len,
		    char *path, size_t plen)
{
	ssize_t n;
	size_t s = 0, e;
	int fd;

	snprintf(path, plen, "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	e = strcspn(buf, "\n");
	buf[e] = '\0';
	while (s < e && isspace((unsigned char)buf[s]))
		s++;
	while (e > s && isspace((unsigned char)buf[e - 1]))
		e--;
	memmove(buf, buf + s, e - s);
	buf[e - s] = '\0';
	return e > s;
}

/* 64-bit FNV-1a of @s (@n bytes) from @h, then a final mix. */
static uint64_t hash64(uint64_t h, const void *s, size_t n)
{
	const unsigned char *p = s;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/*
 * A host id from the machine id: the same on every run, and not the
 * machine id itself (which is meant to stay private). A UUID of version
 * 8 (vendor specific, RFC 9562).
 */
static bool hostid_from_machine(const char *dir, bool redirected,
				uint8_t id[16])
{
	static const char salt[] = "nvq NVMe/TCP host identifier";
	char buf[128], path[PATH_MAX];
	uint64_t a, b;
	int rc;

	if (redirected)
		rc = read_etc(dir, "machine-id", buf, sizeof(buf), path,
			      sizeof(path));
	else
		rc = read_etc("/etc", "machine-id", buf, sizeof(buf), path,
			      sizeof(path));
	if (rc <= 0 || strlen(buf) < 16)
		return false;
	a = hash64(hash64(0xcbf29ce484222325ull, salt, sizeof(salt)), buf,
		   strlen(buf));
	b = hash64(a ^ 0x9e3779b97f4a7c15ull, buf, strlen(buf));
	memcpy(id, &a, 8);
	memcpy(id + 8, &b, 8);
	id[6] = (uint8_t)((id[6] & 0x0f) | 0x80);
	id[8] = (uint8_t)((id[8] & 0x3f) | 0x80);
	return true;
}

static int default_hostid(const char *dir, bool redirected, uint8_t id[16])
{
	char buf[128], path[PATH_MAX];
	int rc;

	rc = read_etc(dir, "hostid", buf, sizeof(buf), path, sizeof(path));
	if (rc < 0)
		return nvq_err(rc, "tcp: cannot read %s: %s", path,
			       strerror(-rc));
	if (rc) {
		if (!parse_uuid(buf, strlen(buf), id))
			return nvq_err(-EINVAL,
				       "tcp: %s holds '%.40s', not a UUID "
				       "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
				       path, buf);
		return 0;
	}
	if (hostid_from_machine(dir, redirected, id))
		return 0;
	if (getrandom(id, 16, 0) != 16)
		return nvq_err(-EIO,
			       "tcp: no host id: no %s, no machine id "
			       "and no random bytes",
			       path);
	id[6] = (uint8_t)((id[6] & 0x0f) | 0x40);
	id[8] = (uint8_t)((id[8] & 0x3f) | 0x80);
	return 0;
}

static int default_hostnqn(const char *dir, struct nvq_tcp_opts *o)
{
	char buf[NVQ_NQN_FIELD_LEN + 64], path[PATH_MAX], id[37],
		what[PATH_MAX + 32];
	int rc;

	rc = read_etc(dir, "hostnqn", buf, sizeof(buf), path, sizeof(path));
	if (rc < 0)
		return nvq_err(rc, "tcp: cannot read %s: %s", path,
			       strerror(-rc));
	if (rc) {
		snprintf(what, sizeof(what), "the host NQN in %s", path);
		rc = check_nqn(what, buf, strlen(buf));
		if (rc)
			return rc;
		memcpy(o->hostnqn, buf, strlen(buf) + 1);
		return 0;
	}
	uuid_str(o->hostid, id);
	snprintf(o->hostnqn, sizeof(o->hostnqn), "%s%s", UUID_NQN_PREFIX, id);
	return 0;
}

/* A decimal number (an optional '-', digits) of @n bytes into *@v. */
static bool parse_num(const char *s, size_t n, long long *v)
{
	bool neg = false;
	long long r = 0;
	size_t i = 0;

	if (n && s[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i == n)
		return false;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (r > (LLONG_MAX - 9) / 10)
			return false;
		r = r * 10 + (s[i] - '0');
	}
	*v = neg ? -r : r;
	return true;
}

static bool parse_bool(const char *s, size_t n, bool *v)
{
	static const char *const yes[] = { "1", "on", "true" };
	static const char *const no[] = { "0", "off", "false" };
	size_t i;

	for (i = 0; i < 3; i++) {
		if (strlen(yes[i]) == n && !memcmp(s, yes[i], n)) {
			*v = true;
			return true;
		}
		if (strlen(no[i]) == n && !memcmp(s, no[i], n)) {
			*v = false;
			return true;
		}
	}
	return false;
}

/* HOST[:PORT] (@n bytes); IPv6 in brackets. */
static int parse_addr(const char *s, size_t n, struct nvq_tcp_opts *o)
{
	const char *host = s, *port = NULL, *end = s + n;
	size_t hlen, plen = 0, i;

	if (n && s[0] == '[') {
		const char *rb = memchr(s, ']', n);

		if (!rb)
			return nvq_err(-EINVAL,
				       "tcp: no ']' after the IPv6 address "
				       "'%.*s'",
				       (int)n, s);
		host = s + 1;
		hlen = (size_t)(rb - host);
		if (rb + 1 < end) {
			if (rb[1] != ':')
				return nvq_err(-EINVAL,
					       "tcp: '%.*s' after the IPv6 "
					       "address (expected :PORT)",
					       (int)(end - rb - 1), rb + 1);
			port = rb + 2;
			plen = (size_t)(end - port);
		}
		if (!hlen)
			return nvq_err(-EINVAL, "tcp: empty IPv6 address '[]'");
		for (i = 0; i < hlen && host[i] != '%'; i++)
			if (!isxdigit((unsigned char)host[i]) &&
			    host[i] != ':' && host[i] != '.')
				break;
		/* a zone after '%': an interface name or number */
		if (i < hlen && host[i] == '%' && i + 1 < hlen)
			for (i++; i < hlen; i++)
				if (!isalnum((unsigned char)host[i]) &&
				    !strchr("-_.", host[i]))
					break;
		if (i < hlen)
			return nvq_err(-EINVAL,
				       "tcp: '%.*s' is not an IPv6 address",
				       (int)hlen, host);
	} else {
		const char *colon = memchr(s, ':', n);

		hlen = colon ? (size_t)(colon - s) : n;
		if (colon) {
			port = colon + 1;
			plen = (size_t)(end - port);
			if (memchr(port, ':', plen))
				return nvq_err(-EINVAL,
					       "tcp: '%.*s': an IPv6 address "
					       "goes in brackets ([::1]:4420)",
					       (int)n, s);
		}
		if (!hlen)
			return nvq_err(-EINVAL,
				       "tcp: no host in the URI (expected "
				       "tcp:HOST[:PORT][,key=val...])");
		for (i = 0; i < hlen; i++)
			if (!isalnum((unsigned char)host[i]) &&
			    !strchr(".-_", host[i]))
				return nvq_err(-EINVAL,
					       "tcp: bad host '%.*s' (a name, "
					       "an IPv4 address or [IPv6])",
					       (int)hlen, host);
	}
	if (hlen >= sizeof(o->host))
		return nvq_err(-EINVAL, "tcp: host '%.40s...' too long", host);
	memcpy(o->host, host, hlen);
	o->host[hlen] = '\0';
	if (!port)
		return 0;
	if (!plen)
		return nvq_err(-EINVAL, "tcp: empty port after '%s:'", o->host);
	if (isdigit((unsigned char)port[0])) {
		long long v;

		if (!parse_num(port, plen, &v) || v < 1 || v > 65535)
			return nvq_err(-EINVAL,
				       "tcp: bad port '%.*s' (1..65535 or a "
				       "service name)",
				       (int)plen, port);
		snprintf(o->port, sizeof(o->port), "%lld", v);
		return 0;
	}
	for (i = 0; i < plen; i++)
		if (!isalnum((unsigned char)port[i]) && port[i] != '-')
			break;
	if (i < plen || plen >= sizeof(o->port) ||
	    !isalpha((unsigned char)port[0]))
		return nvq_err(-EINVAL,
			       "tcp: bad port '%.*s' (1..65535 or a service "
			       "name)",
			       (int)plen, port);
	memcpy(o->port, port, plen);
	o->port[plen] = '\0';
	return 0;
}

/* One key=val (@n bytes); @seen: the keys so far. */
static int parse_kv(const char *s, size_t n, unsigned int *seen,
		    struct nvq_tcp_opts *o)
{
	const char *eq = memchr(s, '=', n), *v;
	size_t klen, vlen, i;
	unsigned int key;
	long long num;
	bool b;
	int rc;

	if (!n)
		return nvq_err(-EINVAL, "tcp: empty option (',,' or a ',' at "
					"the end)");
	if (!eq)
		return nvq_err(-EINVAL,
			       "tcp: option '%.*s' has no value (key=value)",
			       (int)n, s);
	klen = (size_t)(eq - s);
	v = eq + 1;
	vlen = n - klen - 1;
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (strlen(keys[i].name) == klen &&
		    !memcmp(keys[i].name, s, klen))
			break;
	if (i == ARRAY_SIZE(keys))
		return nvq_err(-EINVAL,
			       "tcp: unknown option '%.*s' (nqn, hostnqn, "
			       "hostid, hdgst, ddgst, nr_io_queues, "
			       "queue_size, reconnect_delay, ctrl_loss_tmo, "
			       "kato, connect_timeout)",
			       (int)klen, s);
	key = keys[i].key;
	if (*seen & (1u << key))
		return nvq_err(-EINVAL, "tcp: option '%.*s' given twice",
			       (int)klen, s);
	*seen |= 1u << key;
	if (!vlen)
		return nvq_err(-EINVAL, "tcp: option '%.*s' has an empty value",
			       (int)klen, s);
	switch (key) {
	case K_NQN:
	case K_HOSTNQN:
		rc = check_nqn(key == K_NQN ? "nqn" : "hostnqn", v, vlen);
		if (rc)
			return rc;
		memcpy(key == K_NQN ? o->subnqn : o->hostnqn, v, vlen);
		(key == K_NQN ? o->subnqn : o->hostnqn)[vlen] = '\0';
		return 0;
	case K_HOSTID:
		if (!parse_uuid(v, vlen, o->hostid))
			return nvq_err(-EINVAL,
				       "tcp: hostid '%.*s' is not a UUID "
				       "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
				       (int)vlen, v);
		return 0;
	case K_HDGST:
	case K_DDGST:
		if (!parse_bool(v, vlen, &b))
			return nvq_err(-EINVAL,
				       "tcp: option '%.*s=%.*s': expected "
				       "0/1, off/on or false/true",
				       (int)klen, s, (int)vlen, v);
		if (key == K_HDGST)
			o->hdgst = b;
		else
			o->ddgst = b;
		return 0;
	}
	for (i = 0; ranges[i].key != key; i++)
		;
	if (!parse_num(v, vlen, &num) || num < ranges[i].min ||
	    num > ranges[i].max)
		return nvq_err(-EINVAL,
			       "tcp: option '%.*s=%.*s': expected a decimal "
			       "number, %lld..%lld",
			       (int)klen, s, (int)vlen, v, ranges[i].min,
			       ranges[i].max);
	switch (key) {
	case K_NR_IO_QUEUES:
		o->nr_io_queues = (uint32_t)num;
		break;
	case K_QUEUE_SIZE:
		o->queue_size = (uint32_t)num;
		break;
	case K_RECONNECT_DELAY:
		o->reconnect_delay_s = (int)num;
		break;
	case K_CTRL_LOSS_TMO:
		o->ctrl_loss_tmo_s = (int)num;
		break;
	case K_KATO:
		o->kato_s = (uint32_t)num;
		break;
	default:
		o->connect_timeout_ms = (uint32_t)num;
		break;
	}
	return 0;
}

int nvq_tcp_opts_parse(const char *params, bool discovery,
		       struct nvq_tcp_opts *o)
{
	const char *p, *comma, *dir;
	unsigned int seen = 0;
	bool redirected;
	size_t n;
	int rc;

	if (!o)
		return nvq_err(-EINVAL, "tcp: no options to fill");
	memset(o, 0, sizeof(*o));
	snprintf(o->port, sizeof(o->port), "%d",
		 discovery ? NVQ_TCP_DISC_PORT : NVQ_TCP_PORT);
	o->queue_size = 128;
	o->reconnect_delay_s = 10;
	o->ctrl_loss_tmo_s = 600;
	o->kato_s = discovery ? 0 : 5;
	o->connect_timeout_ms = 5000;
	if (!params)
		return nvq_err(-EINVAL, "tcp: no URI (expected "
					"tcp:HOST[:PORT][,key=val...])");
	n = strlen(params);
	comma = memchr(params, ',', n);
	rc = parse_addr(params, comma ? (size_t)(comma - params) : n, o);
	if (rc)
		return rc;
	for (p = comma; p; p = comma) {
		p++;
		comma = strchr(p, ',');
		rc = parse_kv(p, comma ? (size_t)(comma - p) : strlen(p), &seen,
			      o);
		if (rc)
			return rc;
	}
	if (!(seen & (1u << K_NQN))) {
		if (!discovery)
			return nvq_err(-EINVAL,
				       "tcp: no subsystem NQN: add "
				       ",nqn=NQN to the URI (nvq discover "
				       "lists them)");
		memcpy(o->subnqn, NVQ_DISC_NQN, sizeof(NVQ_DISC_NQN));
	}
	dir = secure_getenv(NVQ_TCP_ETC_ENV);
	redirected = dir && *dir;
	if (!redirected)
		dir = ETC_NVME;
	if (!(seen & (1u << K_HOSTID))) {
		rc = default_hostid(dir, redirected, o->hostid);
		if (rc)
			return rc;
	}
	if (!(seen & (1u << K_HOSTNQN)))
		return default_hostnqn(dir, o);
	return 0;
}
