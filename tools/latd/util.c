// SPDX-License-Identifier: MIT
/* Small helpers nvq-latd's parts share. */
#include <stdarg.h>
#include <stdio.h>

#include <nvq/qos.h>

#include "latd.h"

void latd_set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

void latd_limit_text(int us, char *buf, size_t len)
{
	if (us == NVQ_QOS_OFF)
		snprintf(buf, len, "off");
	else if (us == NVQ_QOS_AUTO)
		snprintf(buf, len, "auto");
	else if (us == 0)
		snprintf(buf, len, "0 us (no idle)");
	else
		snprintf(buf, len, "%d us", us);
}
