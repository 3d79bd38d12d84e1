/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reason.h"

void reason_set(struct rtplace_reason *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
}

void reason_append(struct rtplace_reason *r, const char *fmt, ...)
{
	size_t n = strnlen(r->text, sizeof(r->text) - 1);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->text + n, sizeof(r->text) - n, fmt, ap);
	va_end(ap);
}
