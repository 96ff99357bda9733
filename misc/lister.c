/*
 * lister.c --- e2cryptbak: the one line list, list -l and list -k print
 *
 * list reads the archive as stored; list -k goes through extract and
 * knows the plaintext.  Both hand their entry to e2cb_list_line(), so
 * that an administrator, or a script, reads one format:
 *
 *	[MODE UID/GID SIZE ]PATH[ link to PATH| -> TARGET][ [NOTE]]
 *		[ [encrypted]| [encrypted: STOREDPATH]][ {POLICY}[ openers]]
 *
 * PATH is the plaintext path when known, else the path as stored.  An
 * entry whose name is encrypted ends in " [encrypted]" when PATH is the
 * stored path, or " [encrypted: STOREDPATH]" when PATH was decrypted.
 * Names hold any byte but '/' and NUL: the unprintable ones, and '\',
 * are written as \xHH.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <string.h>
#include "e2cryptbak.h"

static void mode_string(uint32_t mode, char *s)
{
	static const char types[] = "?pc?d?b?-?l?s???";
	static const char rwx[] = "rwxrwxrwx";
	int i;

	s[0] = types[(mode >> 12) & 15];
	for (i = 0; i < 9; i++)
		s[i + 1] = (mode & (0400 >> i)) ? rwx[i] : '-';
	if (mode & 04000)
		s[3] = (mode & 0100) ? 's' : 'S';
	if (mode & 02000)
		s[6] = (mode & 010) ? 's' : 'S';
	if (mode & 01000)
		s[9] = (mode & 01) ? 't' : 'T';
	s[10] = 0;
}

/* Whether the path shown is the path stored: bytes and lengths */
static int same_path(const struct e2cb_list_line *l)
{
	if (!l->stored)
		return 1;
	if (l->stored_len != l->path_len)
		return 0;
	/* the root's path is empty: memcmp must not see its NULL */
	return !l->path_len || !memcmp(l->path, l->stored, l->path_len);
}

/*
 * One entry's line on standard output.  @long_format adds the mode,
 * owner and size before, and the policy after; @m, when not NULL, who
 * can open a directory where a policy starts.
 */
void e2cb_list_line(const struct e2cb_list_line *l, int long_format,
		    const struct e2cb_fsmeta *m)
{
	char mode[11], policy[160];

	if (long_format) {
		mode_string(l->mode, mode);
		printf("%s %6u/%-6u %12llu ", mode, l->uid, l->gid,
		       (unsigned long long) l->size);
	}
	e2cb_put_path(stdout, l->path, l->path_len);
	if (l->link_to) {
		fputs(" link to ", stdout);
		e2cb_put_path(stdout, l->link_to, l->link_to_len);
	} else if (l->target) {
		fputs(" -> ", stdout);
		e2cb_put_path(stdout, l->target, l->target_len);
	}
	if (l->note)
		printf(" [%s]", l->note);
	if (l->encrypted && same_path(l)) {
		fputs(" [encrypted]", stdout);
	} else if (l->encrypted) {
		fputs(" [encrypted: ", stdout);
		e2cb_put_path(stdout, l->stored, l->stored_len);
		putchar(']');
	}
	if (long_format && l->ctx) {
		e2cb_format_policy(l->ctx, l->ctx_len, policy,
				   sizeof(policy));
		printf(" {%s}", policy);
		/* where a policy starts: its name is in the clear */
		if (LINUX_S_ISDIR(l->mode) && !l->encrypted)
			e2cb_fsmeta_print_openers(m, l->ctx, l->ctx_len);
	}
	putchar('\n');
}
