/*
 * e2cryptbak.c --- back up fscrypt-encrypted ext4 without the key
 *
 * Copyright (C) 2026 The e2cryptbak authors
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <et/com_err.h>
#include "e2cryptbak.h"
#include "source.h"
#include "fscrypt/fscrypt.h"

const char *program_name = "e2cryptbak";

/* long options without a short form */
#define OPT_OVERWRITE	256
#define OPT_STALE	257
#define OPT_PROTECTOR	258
#define OPT_PROTECTOR_KEY 259
#define OPT_FSCRYPT_DIR	260
#define OPT_NO_SAME_OWNER 261
#define OPT_NO_SAME_PERMS 262
#define OPT_NO_DEVICES	263
#define OPT_NO_SETID	264
#define OPT_UNTRUSTED	265
#define OPT_SAME_PERMS	266
#define OPT_ONLINE	267
#define OPT_FREEZE	275

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s backup [-p] [--stale] -o ARCHIVE|- [-Z gzip|zstd|xz]\n"
"                DEVICE [PATH]\n"
"       %s backup --online [-p] [--freeze] -o ARCHIVE|-\n"
"                [-Z gzip|zstd|xz] MOUNTED_DIR\n"
"       %s restore --online [-p] [POLICY] ARCHIVE|- MOUNTPOINT/PATH\n"
"       %s restore [-p] [-z UNDO_FILE] [--keep-inode-numbers] [--set-uuid]\n"
"                [--enable-encrypt] [--keep-pw-salt] [POLICY]\n"
"                ARCHIVE|- DEVICE [PATH]\n"
"       %s copy [-p] [-z UNDO_FILE] [--stale] [--keep-inode-numbers]\n"
"                [--set-uuid] [--enable-encrypt] [--keep-pw-salt]\n"
"                SRC_DEVICE [PATH] DST_DEVICE [DST_PATH]\n"
"       %s list [-l [--fscrypt-dir DIR ...]] ARCHIVE|-\n"
"       %s list -k KEYFILE [-k ...] [--passphrase-file F] [--stale]\n"
"                [--protector NAME|ID [--protector-key F]\n"
"                [--fscrypt-dir DIR ...]] ARCHIVE|-|DEVICE\n"
"       %s verify ARCHIVE|-\n"
"       %s extract -k KEYFILE [-k ...] [--passphrase-file F] [--stale]\n"
"                [--protector NAME|ID [--protector-key F]\n"
"                [--fscrypt-dir DIR ...]]\n"
"                [-C DIR [--overwrite] [--same-permissions] [POLICY] | -O]\n"
"                ARCHIVE|-|DEVICE [PATH...]\n"
"       %s -V | --help\n"
"\n"
"POLICY (what an untrusted archive may do): --no-same-owner,\n"
"         --no-same-permissions, --no-devices, --no-setid, or --untrusted\n"
"         for all four\n"
"\n"
"backup   archive an unmounted ext4 filesystem (or the subtree PATH) with\n"
"         its encrypted files as ciphertext: no key needed; --online:\n"
"         a mounted one, through the ioctls of contrib/kernel\n"
"restore  write an archive into an unmounted ext4 filesystem (at PATH);\n"
"         the owners' keys open the restored files: no key needed;\n"
"         --online: into a mounted one, through contrib/kernel's ioctls\n"
"copy     copy an unmounted ext4 filesystem (or the subtree PATH) into\n"
"         another (at DST_PATH), encrypted files as they are: no key, no\n"
"         archive\n"
"list     list an archive; encrypted names appear as base64url, and\n"
"         with keys (-k) beside their plaintext\n"
"verify   check every checksum of an archive\n"
"extract  decrypt an archive, or an unmounted ext4 device or image,\n"
"         into DIR with the owners' keys: no kernel, mount or root\n""         (-O: the data of its files to standard output)\n"
"\n"
"See e2cryptbak(8).\n", program_name, program_name, program_name,
		program_name, program_name,
		program_name,
		program_name, program_name, program_name, program_name);
}

static int usage_error(const char *msg)
{
	if (msg)
		com_err(program_name, 0, "%s", msg);
	usage(stderr);
	return E2CB_EXIT_USAGE;
}

static int cmd_backup(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "stale", no_argument, NULL, OPT_STALE },
		{ "online", no_argument, NULL, OPT_ONLINE },
		{ "freeze", no_argument, NULL, OPT_FREEZE },
		{ NULL, 0, NULL, 0 }
	};
	struct e2cb_backup_opts opts;
	int c;

	memset(&opts, 0, sizeof(opts));
	opts.path = "/";
	while ((c = getopt_long(argc, argv, "po:Z:", longopts, NULL)) != EOF) {
		switch (c) {
		case OPT_STALE:
			opts.stale = 1;
			break;
		case OPT_ONLINE:
			opts.online = 1;
			break;
		case OPT_FREEZE:
			opts.freeze = 1;
			break;
		case 'p':
			opts.progress = 1;
			break;
		case 'o':
			opts.output = optarg;
			break;
		case 'Z':
			if (strcmp(optarg, "gzip") && strcmp(optarg, "zstd") &&
			    strcmp(optarg, "xz"))
				return usage_error("-Z takes gzip, zstd "
						   "or xz");
			opts.compress = optarg;
			break;
		default:
			return usage_error(NULL);
		}
	}
	if (optind >= argc || argc - optind > 2)
		return usage_error("backup needs a DEVICE and at most a "
				   "PATH");
	if (!opts.output)
		return usage_error("backup needs -o ARCHIVE (or -o - for "
				   "standard output)");
	opts.device = argv[optind];
	if (optind + 1 < argc)
		opts.path = argv[optind + 1];
	if (opts.online && (optind + 1 < argc || opts.stale))
		return usage_error("backup --online takes one MOUNTED_DIR, "
				   "without --stale");
	if (opts.freeze && !opts.online)
		return usage_error("--freeze goes with --online: an "
				   "unmounted filesystem needs no freeze");
	return e2cb_backup(&opts);
}

/* What an untrusted archive may do: restore and extract */
#define POLICY_OPTIONS \
	{ "no-same-owner", no_argument, NULL, OPT_NO_SAME_OWNER }, \
	{ "no-same-permissions", no_argument, NULL, OPT_NO_SAME_PERMS }, \
	{ "no-devices", no_argument, NULL, OPT_NO_DEVICES }, \
	{ "no-setid", no_argument, NULL, OPT_NO_SETID }, \
	{ "untrusted", no_argument, NULL, OPT_UNTRUSTED }

static int policy_option(unsigned int *policy, int c)
{
	switch (c) {
	case OPT_NO_SAME_OWNER:
		*policy |= E2CB_NO_SAME_OWNER;
		return 1;
	case OPT_NO_SAME_PERMS:
		*policy |= E2CB_NO_SAME_PERMS;
		return 1;
	case OPT_NO_DEVICES:
		*policy |= E2CB_NO_DEVICES;
		return 1;
	case OPT_NO_SETID:
		*policy |= E2CB_NO_SETID;
		return 1;
	case OPT_UNTRUSTED:
		*policy |= E2CB_UNTRUSTED;
		return 1;
	}
	return 0;
}

static int cmd_restore(int argc, char **argv)
{
	static const struct option longopts[] = {
		POLICY_OPTIONS,
		{ "keep-inode-numbers", no_argument, NULL, 'K' },
		{ "set-uuid", no_argument, NULL, 'U' },
		{ "enable-encrypt", no_argument, NULL, 'E' },
		{ "keep-pw-salt", no_argument, NULL, 'S' },
		{ "online", no_argument, NULL, OPT_ONLINE },
		{ NULL, 0, NULL, 0 }
	};
	struct e2cb_restore_opts opts;
	int c, online = 0;

	memset(&opts, 0, sizeof(opts));
	opts.path = "/";
	while ((c = getopt_long(argc, argv, "pz:", longopts, NULL)) != EOF) {
		switch (c) {
		case 'p':
			opts.progress = 1;
			break;
		case 'z':
			opts.undo_file = optarg;
			break;
		case 'K':
			opts.keep_ino = 1;
			break;
		case 'U':
			opts.set_uuid = 1;
			break;
		case 'E':
			opts.add_encrypt = 1;
			break;
		case 'S':
			opts.keep_pw_salt = 1;
			break;
		case OPT_ONLINE:
			online = 1;
			break;
		default:
			if (!policy_option(&opts.policy, c))
				return usage_error(NULL);
		}
	}
	if (online && (argc - optind != 2 || opts.undo_file ||
		       opts.keep_ino || opts.set_uuid || opts.add_encrypt ||
		       opts.keep_pw_salt))
		return usage_error("restore --online takes an ARCHIVE and a "
				   "MOUNTPOINT/PATH, and of the options only "
				   "-p and the POLICY ones");
	if (online) {
		opts.archive = argv[optind];
		opts.device = argv[optind + 1];
		return e2cb_restore_online(&opts);
	}
	if (argc - optind < 2 || argc - optind > 3)
		return usage_error("restore needs an ARCHIVE, a DEVICE and at "
				   "most a PATH");
	opts.archive = argv[optind];
	opts.device = argv[optind + 1];
	if (optind + 2 < argc)
		opts.path = argv[optind + 2];
	return e2cb_restore(&opts);
}

/* Whether @name is what a filesystem can be in: a file or a device */
static int is_device_arg(const char *name)
{
	struct stat st;

	return !stat(name, &st) && (S_ISREG(st.st_mode) ||
				    S_ISBLK(st.st_mode));
}

/*
 * SRC_DEVICE [PATH] DST_DEVICE [DST_PATH]: with three arguments the
 * middle one is DST_DEVICE if it is a file or device and the last one
 * is not, PATH the other way round.
 */
static int copy_args(struct e2cb_copy_opts *o, int argc, char **argv)
{
	int mid_dev, last_dev;

	if (argc < 2 || argc > 4)
		return usage_error("copy needs a SRC_DEVICE, a DST_DEVICE and "
				   "at most a PATH in each");
	o->source = argv[0];
	if (argc == 2 || argc == 4) {
		if (argc == 4)
			o->source_path = argv[1];
		o->restore.device = argv[argc / 2];
		if (argc == 4)
			o->restore.path = argv[3];
		return 0;
	}
	mid_dev = is_device_arg(argv[1]);
	last_dev = is_device_arg(argv[2]);
	if (mid_dev == last_dev)
		return usage_error("copy: which of the last two arguments is "
				   "DST_DEVICE?  Give all four: SRC_DEVICE "
				   "PATH DST_DEVICE DST_PATH");
	if (mid_dev) {
		o->restore.device = argv[1];
		o->restore.path = argv[2];
	} else {
		o->source_path = argv[1];
		o->restore.device = argv[2];
	}
	return 0;
}

static int cmd_copy(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "stale", no_argument, NULL, OPT_STALE },
		{ "keep-inode-numbers", no_argument, NULL, 'K' },
		{ "set-uuid", no_argument, NULL, 'U' },
		{ "enable-encrypt", no_argument, NULL, 'E' },
		{ "keep-pw-salt", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 }
	};
	struct e2cb_copy_opts opts;
	struct e2cb_restore_opts *r = &opts.restore;
	int c, ret;

	memset(&opts, 0, sizeof(opts));
	opts.source_path = "/";
	r->path = "/";
	while ((c = getopt_long(argc, argv, "pz:", longopts, NULL)) != EOF) {
		switch (c) {
		case OPT_STALE:
			opts.stale = 1;
			break;
		case 'p':
			r->progress = 1;
			break;
		case 'z':
			r->undo_file = optarg;
			break;
		case 'K':
			r->keep_ino = 1;
			break;
		case 'U':
			r->set_uuid = 1;
			break;
		case 'E':
			r->add_encrypt = 1;
			break;
		case 'S':
			r->keep_pw_salt = 1;
			break;
		default:
			return usage_error(NULL);
		}
	}
	ret = copy_args(&opts, argc - optind, argv + optind);
	if (ret)
		return ret;
	r->archive = opts.source;
	return e2cb_copy(&opts);
}

/*
 * -k, --key-hex and --passphrase-file, and google/fscrypt's protectors,
 * shared by list and extract
 */

#define KEY_OPTIONS \
	{ "key", required_argument, NULL, 'k' }, \
	{ "key-hex", required_argument, NULL, 'H' }, \
	{ "passphrase-file", required_argument, NULL, 'P' }, \
	{ "protector", required_argument, NULL, OPT_PROTECTOR }, \
	{ "protector-key", required_argument, NULL, OPT_PROTECTOR_KEY }, \
	{ "fscrypt-dir", required_argument, NULL, OPT_FSCRYPT_DIR }, \
	{ "stale", no_argument, NULL, OPT_STALE }

static int key_option(struct e2cb_extract_opts *opts, int c)
{
	switch (c) {
	case 'k':
		opts->key_files[opts->nkey_files++] = optarg;
		return 1;
	case 'H':
		opts->key_hex[opts->nkey_hex++] = optarg;
		return 1;
	case 'P':
		if (opts->passphrase_file)
			return 0;
		opts->passphrase_file = optarg;
		return 1;
	case OPT_PROTECTOR:
		opts->protectors[opts->nprotectors++] = optarg;
		return 1;
	case OPT_PROTECTOR_KEY:
		if (opts->protector_key)
			return 0;
		opts->protector_key = optarg;
		return 1;
	case OPT_FSCRYPT_DIR:
		opts->fscrypt_dirs[opts->nfscrypt_dirs++] = optarg;
		return 1;
	case OPT_STALE:
		opts->stale = 1;
		return 1;
	}
	return 0;
}

static int alloc_key_options(struct e2cb_extract_opts *opts, int argc)
{
	memset(opts, 0, sizeof(*opts));
	opts->key_files = calloc(argc, sizeof(char *));
	opts->key_hex = calloc(argc, sizeof(char *));
	opts->fscrypt_dirs = calloc(argc, sizeof(char *));
	opts->protectors = calloc(argc, sizeof(char *));
	return opts->key_files && opts->key_hex && opts->fscrypt_dirs &&
	       opts->protectors;
}

static int has_keys(const struct e2cb_extract_opts *opts)
{
	return opts->nkey_files || opts->nkey_hex || opts->passphrase_file ||
	       opts->nprotectors;
}

static void free_key_options(struct e2cb_extract_opts *opts)
{
	free(opts->key_files);
	free(opts->key_hex);
	free(opts->fscrypt_dirs);
	free(opts->protectors);
}

/* The protector options go with --protector */
static const char *check_protector_options(struct e2cb_extract_opts *opts)
{
	if (!opts->nprotectors && (opts->protector_key || opts->nfscrypt_dirs))
		return "--protector-key and --fscrypt-dir go with --protector";
	return NULL;
}

static int run_extract(struct e2cb_extract_opts *opts)
{
	add_error_table(&et_fscr_error_table);
	return e2cb_extract(opts);
}

static int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		KEY_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	struct e2cb_extract_opts opts;
	int c, ret, long_format = 0;

	if (!alloc_key_options(&opts, argc)) {
		free_key_options(&opts);
		return E2CB_EXIT_ERROR;
	}
	while ((c = getopt_long(argc, argv, "lk:", longopts, NULL)) != EOF) {
		if (c == 'l')
			long_format = 1;
		else if (!key_option(&opts, c)) {
			ret = usage_error(NULL);
			goto out;
		}
	}
	if (argc - optind != 1) {
		ret = usage_error("list needs one ARCHIVE");
	} else if (!has_keys(&opts) && long_format && !opts.protector_key) {
		/* --fscrypt-dir: whose records list -l shows too */
		add_error_table(&et_fscr_error_table);
		ret = e2cb_list(argv[optind], long_format, opts.fscrypt_dirs,
				opts.nfscrypt_dirs);
	} else if (check_protector_options(&opts)) {
		ret = usage_error(check_protector_options(&opts));
	} else if (!has_keys(&opts)) {
		ret = e2cb_list(argv[optind], long_format, NULL, 0);
	} else {
		opts.source = argv[optind];
		opts.list_only = 1;
		opts.long_format = long_format;
		ret = run_extract(&opts);
	}
out:
	free_key_options(&opts);
	return ret;
}

static int cmd_extract(int argc, char **argv)
{
	static const struct option longopts[] = {
		KEY_OPTIONS,
		POLICY_OPTIONS,
		{ "same-permissions", no_argument, NULL, OPT_SAME_PERMS },
		{ "directory", required_argument, NULL, 'C' },
		{ "overwrite", no_argument, NULL, OPT_OVERWRITE },
		{ "to-stdout", no_argument, NULL, 'O' },
		{ NULL, 0, NULL, 0 }
	};
	struct e2cb_extract_opts opts;
	int c, ret;

	if (!alloc_key_options(&opts, argc)) {
		free_key_options(&opts);
		return E2CB_EXIT_ERROR;
	}
	while ((c = getopt_long(argc, argv, "k:C:O", longopts, NULL)) != EOF) {
		if (c == 'C')
			opts.dir = optarg;
		else if (c == OPT_OVERWRITE)
			opts.overwrite = 1;
		else if (c == 'O')
			opts.to_stdout = 1;
		else if (c == OPT_SAME_PERMS)
			opts.policy |= E2CB_SAME_PERMS;
		else if (!key_option(&opts, c) &&
			 !policy_option(&opts.policy, c)) {
			ret = usage_error(NULL);
			goto out;
		}
	}
	if (optind >= argc) {
		ret = usage_error("extract needs an ARCHIVE or a DEVICE");
	} else if (!has_keys(&opts)) {
		ret = usage_error("extract needs a key: -k KEYFILE, "
				  "--key-hex HEX, --passphrase-file F or "
				  "--protector NAME|ID");
	} else if (check_protector_options(&opts)) {
		ret = usage_error(check_protector_options(&opts));
	} else if (opts.to_stdout && (opts.dir || opts.overwrite)) {
		ret = usage_error("-O writes no files: -C and --overwrite "
				  "do not go with it");
	} else if ((opts.policy & E2CB_SAME_PERMS) &&
		   (opts.policy & E2CB_NO_SAME_PERMS)) {
		ret = usage_error("--same-permissions and "
				  "--no-same-permissions (or --untrusted) "
				  "contradict each other");
	} else {
		opts.source = argv[optind];
		opts.paths = argv + optind + 1;
		opts.npaths = argc - optind - 1;
		ret = run_extract(&opts);
	}
out:
	free_key_options(&opts);
	return ret;
}

static int cmd_verify(int argc, char **argv)
{
	if (getopt(argc, argv, "") != EOF)
		return usage_error(NULL);
	if (argc - optind != 1)
		return usage_error("verify needs one ARCHIVE");
	return e2cb_verify(argv[optind]);
}

/*
 * What was printed must have reached standard output: a full disk or
 * a pipe whose reader is gone (with SIGPIPE ignored) shows only when
 * the buffer is flushed and the stream closed.
 */
static int close_stdout(int ret)
{
	int err = 0;

	errno = 0;
	if (fflush(stdout) != 0)
		err = errno ? errno : EIO;
	else if (ferror(stdout))	/* an earlier flush failed */
		err = e2cb_stdout_errno ? e2cb_stdout_errno : -1;
	if (fclose(stdout) != 0 && !err)
		err = errno ? errno : EIO;
	if (!err)
		return ret;
	if (err > 0)
		com_err(program_name, err, "while writing to standard "
			"output");
	else
		com_err(program_name, 0, "write error on standard output");
	return ret < E2CB_EXIT_ERROR ? E2CB_EXIT_ERROR : ret;
}

/*
 * A descriptor 0, 1 or 2 closed by the caller would be handed to the
 * first file we open, and messages would land in it: /dev/null, read
 * only, takes the place, so that writes to it fail and are reported.
 */
static void guard_std_fds(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (open("/dev/null", O_RDONLY) != fd)
			exit(E2CB_EXIT_ERROR);
	}
}

static int run_command(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "backup", cmd_backup },
		{ "restore", cmd_restore },
		{ "copy", cmd_copy },
		{ "list", cmd_list },
		{ "verify", cmd_verify },
		{ "extract", cmd_extract },
	};
	size_t i;

	if (argc < 2)
		return usage_error("no command given");
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("e2cryptbak %s (%s)\n", E2CRYPTBAK_VERSION,
		       E2CRYPTBAK_DATE);
		return E2CB_EXIT_OK;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return E2CB_EXIT_OK;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	com_err(program_name, 0, "unknown command '%s'", argv[1]);
	return usage_error(NULL);
}

int main(int argc, char **argv)
{
	guard_std_fds();
	add_error_table(&et_ext2_error_table);
	add_error_table(&et_e4cr_error_table);
	return close_stdout(run_command(argc, argv));
}
