/*
 * report.c --- how e2cryptbak tells the user what went wrong
 *
 * One way: com_err(program_name, ...), as e2fsprogs reports.  Most
 * messages call it directly.  A message about one entry names the
 * entry's path first, escaped as every command shows paths (the path
 * is the archive's or the filesystem's, not ours); it is put together
 * here and handed to com_err whole.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <errno.h>
#include <et/com_err.h>
#include "e2cryptbak.h"
#include "support/e2cb_support.h"

/*
 * "PATH: message[: error]" for the entry at @path (@len bytes).  errno
 * is kept: a caller may still look at it after saying what failed.
 */
void e2cb_vreport_path(const void *path, size_t len, errcode_t code,
		       const char *fmt, va_list ap)
{
	int saved_errno = errno;
	char *msg = NULL;
	size_t size;
	va_list aq;
	FILE *f;

	va_copy(aq, ap);
	f = open_memstream(&msg, &size);
	if (!f)
		goto errout;
	e2cb_put_path(f, path, len);
	fputs(": ", f);
	vfprintf(f, fmt, aq);
	if (code)
		fprintf(f, ": %s", error_message(code));
	if (fclose(f))
		goto errout;
	com_err(program_name, 0, "%s", msg);
	free(msg);
	va_end(aq);
	errno = saved_errno;
	return;
errout:
	/* no memory for the path: the message still goes out */
	free(msg);
	va_end(aq);
	com_err_va(program_name, code, fmt, ap);
	errno = saved_errno;
}

void e2cb_report_path(const void *path, size_t len, errcode_t code,
		      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	e2cb_vreport_path(path, len, code, fmt, ap);
	va_end(ap);
}
