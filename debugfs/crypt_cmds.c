/*
 * crypt_cmds.c --- debugfs commands for fscrypt-encrypted inodes
 *
 * Offline counterparts of the 2015 ext4 backup ioctls that were never
 * merged (EXT4_IOC_GET/SET_ENCRYPTION_METADATA and
 * EXT4_IOC_GET_ENCRYPTED_FILENAME), plus dump_ciphertext, which copies
 * an encrypted file's stored blocks whole.  None of them needs a key.
 *
 * Ciphertext names are arbitrary bytes, '/' and NUL included: they are
 * handled by length only and printed in hex or base64url.
 *
 * Copyright (C) 2026 The e2cryptbak authors
 *
 * This file may be redistributed under the terms of the GNU Public
 * License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <utime.h>
#include <sys/types.h>
#include <sys/stat.h>
#ifdef HAVE_GETOPT_H
#include <getopt.h>
#else
extern int optind;
extern char *optarg;
#endif

#include "debugfs.h"
#include "ext2fs/ext4_crypt.h"
#include "support/e2cb_support.h"

#ifndef O_LARGEFILE
#define O_LARGEFILE 0
#endif

/* longest hex argument accepted: an 'e5' blob of a v2 context is 52 bytes */
#define HEX_ARG_MAX		256
/* blocks read at a time by dump_ciphertext */
#define DUMP_CHUNK_BLOCKS	64

static void print_hex(const void *buf, size_t len)
{
	const __u8 *p = buf;

	while (len--)
		printf("%02x", *p++);
}

/* A raw name (at most EXT2_NAME_LEN bytes) as e2cryptbak names entries */
static void print_base64url(const struct ext4_encrypted_name *n)
{
	char out[E2CB_B64_LEN(EXT2_NAME_LEN)];

	printf("%.*s", (int) e2cb_b64url_encode(n->name, n->name_len, out),
	       out);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decode the hex digits of argv[0..argc-1], which the command parser
 * may have split at spaces, into @buf.  Each may start with "0x".
 */
static int parse_hex_args(const char *cmd, int argc, char **argv, __u8 *buf,
			  size_t bufsize, size_t *len)
{
	const char *p;
	int i, hi = -1, d;

	*len = 0;
	for (i = 0; i < argc; i++) {
		p = argv[i];
		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
			p += 2;
		for (; *p; p++) {
			d = hex_digit(*p);
			if (d < 0) {
				com_err(cmd, 0, "invalid hex string '%s'",
					argv[i]);
				return 1;
			}
			if (hi < 0) {
				hi = d;
				continue;
			}
			if (*len == bufsize) {
				com_err(cmd, 0, "hex string is longer than "
					"%zu bytes", bufsize);
				return 1;
			}
			buf[(*len)++] = (hi << 4) | d;
			hi = -1;
		}
	}
	if (hi >= 0) {
		com_err(cmd, 0, "hex string has an odd number of digits");
		return 1;
	}
	if (!*len) {
		com_err(cmd, 0, "empty hex string");
		return 1;
	}
	return 0;
}

static int read_large_inode(const char *cmd, ext2_ino_t ino,
			    struct ext2_inode_large **ret)
{
	int isize = EXT2_INODE_SIZE(current_fs->super);
	errcode_t retval;

	retval = ext2fs_get_memzero(isize, ret);
	if (retval) {
		com_err(cmd, retval, "while allocating inode buffer");
		return 1;
	}
	if (debugfs_read_inode2(ino, (struct ext2_inode *) *ret, cmd, isize,
				0)) {
		ext2fs_free_mem(ret);
		return 1;
	}
	return 0;
}

struct raw_ctx {
	__u8 buf[EXT4_ENCRYPTED_METADATA_MAX];
	size_t len;
	int found, truncated;
};

static int raw_ctx_proc(int index, const char *name, size_t name_len,
			const void *value, size_t value_len, void *priv)
{
	struct raw_ctx *rc = priv;

	if (index != EXT4_XATTR_INDEX_ENCRYPTION || name_len != 1 ||
	    name[0] != EXT4_XATTR_NAME_ENCRYPTION_CONTEXT[0])
		return 0;
	rc->found = 1;
	rc->len = value_len;
	if (value_len > sizeof(rc->buf)) {
		rc->truncated = 1;
		value_len = sizeof(rc->buf);
	}
	memcpy(rc->buf, value, value_len);
	return XATTR_ABORT;
}

/*
 * Fetch the context bytes as stored, valid or not: a debugger must be
 * able to show a context that the kernel would reject.  Returns 0 with
 * rc filled, or prints why not and returns 1.
 */
static int get_raw_context(const char *cmd, const char *spec, ext2_ino_t ino,
			   struct ext2_inode_large *inode, struct raw_ctx *rc)
{
	errcode_t retval;

	memset(rc, 0, sizeof(*rc));
	if (!(inode->i_flags & EXT4_ENCRYPT_FL)) {
		com_err(cmd, 0, "%s is not encrypted (no encryption flag)",
			spec);
		return 1;
	}
	retval = ext2fs_xattrs_raw_iterate(current_fs, ino, inode,
					   raw_ctx_proc, rc);
	if (retval) {
		com_err(cmd, retval, "while reading the attributes of %s",
			spec);
		return 1;
	}
	if (!rc->found) {
		com_err(cmd, EXT2_ET_CRYPT_NO_CONTEXT, "while reading the "
			"encryption context of %s", spec);
		return 1;
	}
	return 0;
}

static void print_context(const __u8 *c, size_t len)
{
	unsigned int flags = c[3];
	unsigned int du;

	printf("Encryption context: v%u, %zu bytes\n", c[0], len);
	printf("Contents mode: %u (%s)   Filenames mode: %u (%s)\n",
	       c[1], ext2fs_encryption_mode_name(c[1]),
	       c[2], ext2fs_encryption_mode_name(c[2]));
	printf("Flags: 0x%02x (padding %u%s%s%s)\n", flags,
	       4U << (flags & FSCRYPT_POLICY_FLAGS_PAD_MASK),
	       (flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY) ? ", direct_key" : "",
	       (flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64) ?
	       ", iv_ino_lblk_64" : "",
	       (flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32) ?
	       ", iv_ino_lblk_32" : "");
	if (c[0] == FSCRYPT_CONTEXT_V2 && c[4]) {
		du = 1U << c[4];
		printf("Data unit size: %u\n", du);
	} else {
		printf("Data unit size: %u (the block size)\n",
		       current_fs->blocksize);
	}
	if (c[0] == FSCRYPT_CONTEXT_V1) {
		const struct fscrypt_context_v1 *v1 = (const void *) c;

		printf("Master key descriptor: ");
		print_hex(v1->master_key_descriptor,
			  FSCRYPT_KEY_DESCRIPTOR_SIZE);
		printf("\nNonce: ");
		print_hex(v1->nonce, FSCRYPT_FILE_NONCE_SIZE);
	} else {
		const struct fscrypt_context_v2 *v2 = (const void *) c;

		printf("Master key identifier: ");
		print_hex(v2->master_key_identifier,
			  FSCRYPT_KEY_IDENTIFIER_SIZE);
		printf("\nNonce: ");
		print_hex(v2->nonce, FSCRYPT_FILE_NONCE_SIZE);
	}
	printf("\n");
}

void do_get_encryption_metadata(int argc, char **argv,
				int sci_idx EXT2FS_ATTR((unused)),
				void *infop EXT2FS_ATTR((unused)))
{
	struct ext2_inode_large *inode = NULL;
	__u8 blob[EXT4_CRYPT_BLOB_MAX];
	struct raw_ctx rc;
	ext2_ino_t ino;
	size_t blob_len;
	errcode_t retval;

	if (common_inode_args_process(argc, argv, &ino, 0))
		return;
	if (read_large_inode(argv[0], ino, &inode))
		return;
	if (get_raw_context(argv[0], argv[1], ino, inode, &rc))
		goto errout;

	retval = ext2fs_validate_encryption_context(rc.buf, rc.len);
	if (!retval)
		print_context(rc.buf, rc.len);
	printf("Raw context: ");
	print_hex(rc.buf, rc.len);
	printf("%s\n", rc.truncated ? "..." : "");
	if (retval) {
		com_err(argv[0], retval, "while checking the encryption "
			"context of %s", argv[1]);
		goto errout;
	}
	/* what EXT4_IOC_GET_ENCRYPTION_METADATA returned: i_size + context */
	retval = ext2fs_encode_metadata_blob(EXT2_I_SIZE(inode), rc.buf,
					     rc.len, blob, sizeof(blob),
					     &blob_len);
	if (retval) {
		com_err(argv[0], retval, "while encoding the metadata of %s",
			argv[1]);
		goto errout;
	}
	printf("Metadata blob (i_size %llu): ",
	       (unsigned long long) EXT2_I_SIZE(inode));
	print_hex(blob, blob_len);
	printf("\n");
errout:
	ext2fs_free_mem(&inode);
}

void do_set_encryption_metadata(int argc, char **argv,
				int sci_idx EXT2FS_ATTR((unused)),
				void *infop EXT2FS_ATTR((unused)))
{
	struct ext2_inode_large *inode = NULL;
	__u8 buf[HEX_ARG_MAX];
	const __u8 *ctx = buf;
	size_t len, ctx_len;
	__u64 i_size = 0;
	int has_size = 0;
	ext2_ino_t ino;
	errcode_t retval;

	if (common_args_process(argc, argv, 3, argc > 3 ? argc : 3, argv[0],
				"<file> <hex context or metadata blob>",
				CHECK_FS_RW))
		return;
	if (parse_hex_args(argv[0], argc - 2, argv + 2, buf, sizeof(buf),
			   &len))
		return;
	ino = string_to_inode(argv[1]);
	if (!ino)
		return;

	/* a context starts with its version; a 2015 metadata blob with 'e5' */
	ctx_len = len;
	if (len >= 2 && buf[0] == EXT4_BLOB_MAGIC &&
	    buf[1] == EXT4_BLOB_METADATA) {
		retval = ext2fs_decode_metadata_blob(buf, len, &i_size, &ctx,
						     &ctx_len);
		if (retval) {
			com_err(argv[0], retval, "while checking the metadata blob");
			return;
		}
		has_size = 1;
	} else {
		retval = ext2fs_validate_encryption_context(buf, len);
		if (retval) {
			com_err(argv[0], retval, "while checking the context");
			return;
		}
	}

	if (!ext2fs_has_feature_encrypt(current_fs->super)) {
		com_err(argv[0], 0, "the filesystem lacks the encrypt "
			"feature (set it with \"feature encrypt\")");
		return;
	}
	if (read_large_inode(argv[0], ino, &inode))
		return;
	if (!LINUX_S_ISREG(inode->i_mode) && !LINUX_S_ISDIR(inode->i_mode) &&
	    !LINUX_S_ISLNK(inode->i_mode)) {
		com_err(argv[0], 0, "%s is not a regular file, directory or "
			"symlink: only those are encrypted", argv[1]);
		goto errout;
	}
	if (inode->i_flags & EXT4_INLINE_DATA_FL) {
		com_err(argv[0], 0, "%s has inline data, which is never "
			"encrypted", argv[1]);
		goto errout;
	}

	retval = ext2fs_set_encryption_context(current_fs, ino, ctx, ctx_len);
	if (retval) {
		com_err(argv[0], retval, "while setting the encryption "
			"context of %s", argv[1]);
		goto errout;
	}
	if (!has_size)
		goto errout;
	/* the context was written with the inode: read it back first */
	ext2fs_free_mem(&inode);
	if (read_large_inode(argv[0], ino, &inode))
		return;
	retval = ext2fs_inode_size_set(current_fs, (struct ext2_inode *) inode,
				       i_size);
	if (retval) {
		com_err(argv[0], retval, "while setting the size of %s",
			argv[1]);
		goto errout;
	}
	debugfs_write_inode2(ino, (struct ext2_inode *) inode, argv[0],
			     EXT2_INODE_SIZE(current_fs->super), 0);
errout:
	ext2fs_free_mem(&inode);
}

struct name_search {
	const char *cmd;
	const char *spec;
	ext2_ino_t ino;			/* whose names we want */
	ext2_ino_t dir;			/* directory being searched */
	struct ext2_inode dir_inode;
	struct ext2_inode_large *inode;	/* of ino */
	int found;
};

static void print_name(struct name_search *ns,
		       const struct ext4_encrypted_name *n)
{
	__u8 blob[EXT4_CRYPT_BLOB_MAX];
	struct raw_ctx rc;
	size_t blob_len;
	int is_dir = LINUX_S_ISDIR(ns->inode->i_mode);
	errcode_t retval;

	printf("Directory: %u   Name length: %u\n", ns->dir, n->name_len);
	printf("Raw name: ");
	print_hex(n->name, n->name_len);
	printf("\nBase64url: ");
	print_base64url(n);
	printf("\n");
	if (n->has_hash)
		printf("Casefold hash: 0x%08x   Minor hash: 0x%08x\n",
		       n->hash, n->minor_hash);

	/* the record of EXT4_IOC_GET_ENCRYPTED_FILENAME: 'ef' or 'ed' */
	memset(&rc, 0, sizeof(rc));
	if (is_dir) {
		if (get_raw_context(ns->cmd, ns->spec, ns->ino, ns->inode,
				    &rc))
			return;
	}
	retval = ext2fs_encode_filename_blob(n, is_dir, ns->inode->i_mode,
					     rc.buf, rc.len, blob,
					     sizeof(blob), &blob_len);
	if (retval) {
		com_err(ns->cmd, retval, "while encoding the filename blob "
			"of %s", ns->spec);
		return;
	}
	printf("Filename blob: ");
	print_hex(blob, blob_len);
	printf("\n");
}

static int name_proc(ext2_ino_t dir EXT2FS_ATTR((unused)),
		     int entry, struct ext2_dir_entry *de,
		     int offset EXT2FS_ATTR((unused)), int blocksize,
		     char *buf EXT2FS_ATTR((unused)), void *priv)
{
	struct name_search *ns = priv;
	struct ext4_encrypted_name n;
	errcode_t retval;

	if (de->inode != ns->ino || entry == DIRENT_DOT_FILE ||
	    entry == DIRENT_DOT_DOT_FILE)
		return 0;
	ns->found++;
	if (!(ns->dir_inode.i_flags & EXT4_ENCRYPT_FL)) {
		com_err(ns->cmd, 0, "%s is named in directory %u, which is "
			"not encrypted: that name is plaintext", ns->spec,
			ns->dir);
		return 0;
	}
	retval = ext2fs_dirent_encrypted_name(current_fs, &ns->dir_inode, de,
					      blocksize, &n);
	if (retval) {
		com_err(ns->cmd, retval, "while reading a name in directory "
			"%u", ns->dir);
		return 0;
	}
	if (ns->found > 1)
		printf("\n");
	print_name(ns, &n);
	return 0;
}

static errcode_t search_dir(struct name_search *ns, ext2_ino_t dir)
{
	errcode_t retval;

	ns->dir = dir;
	retval = ext2fs_read_inode(current_fs, dir, &ns->dir_inode);
	if (retval)
		return retval;
	if (!LINUX_S_ISDIR(ns->dir_inode.i_mode))
		return EXT2_ET_NO_DIRECTORY;
	return ext2fs_dir_iterate2(current_fs, dir, 0, NULL, name_proc, ns);
}

/* Every directory may hold a name of a hard-linked inode: scan them all. */
static errcode_t search_all_dirs(struct name_search *ns)
{
	ext2_inode_scan scan;
	struct ext2_inode inode;
	ext2_ino_t ino;
	errcode_t retval;

	retval = ext2fs_open_inode_scan(current_fs, 0, &scan);
	if (retval)
		return retval;
	while (1) {
		do {
			retval = ext2fs_get_next_inode(scan, &ino, &inode);
		} while (retval == EXT2_ET_BAD_BLOCK_IN_INODE_TABLE);
		if (retval || !ino)
			break;
		if (!inode.i_links_count || inode.i_dtime ||
		    !LINUX_S_ISDIR(inode.i_mode))
			continue;
		retval = search_dir(ns, ino);
		if (retval) {
			com_err(ns->cmd, retval, "while searching directory "
				"%u", ino);
			retval = 0;
		}
	}
	ext2fs_close_inode_scan(scan);
	return retval;
}

void do_get_encrypted_filename(int argc, char **argv,
			       int sci_idx EXT2FS_ATTR((unused)),
			       void *infop EXT2FS_ATTR((unused)))
{
	struct name_search ns;
	ext2_ino_t dir = 0;
	errcode_t retval;
	int c;

	reset_getopt();
	while ((c = getopt(argc, argv, "d:")) != EOF) {
		switch (c) {
		case 'd':
			if (check_fs_open(argv[0]))
				return;
			dir = string_to_inode(optarg);
			if (!dir)
				return;
			break;
		default:
			goto print_usage;
		}
	}
	if (optind != argc - 1) {
	print_usage:
		com_err(argv[0], 0, "Usage: get_encrypted_filename "
			"[-d dir] <file>");
		return;
	}
	if (check_fs_open(argv[0]))
		return;

	memset(&ns, 0, sizeof(ns));
	ns.cmd = argv[0];
	ns.spec = argv[optind];
	ns.ino = string_to_inode(argv[optind]);
	if (!ns.ino)
		return;
	if (read_large_inode(argv[0], ns.ino, &ns.inode))
		return;
	/* a directory's one name is in its parent, which ".." names */
	retval = 0;
	if (!dir && LINUX_S_ISDIR(ns.inode->i_mode))
		retval = ext2fs_lookup(current_fs, ns.ino, "..", 2, NULL,
				       &dir);
	if (!retval)
		retval = dir ? search_dir(&ns, dir) : search_all_dirs(&ns);
	if (retval)
		com_err(argv[0], retval, "while looking for the names of %s",
			ns.spec);
	else if (!ns.found)
		com_err(argv[0], EXT2_ET_CRYPT_NAME_NOT_FOUND,
			"while looking for the names of %s", ns.spec);
	ext2fs_free_mem(&ns.inode);
}

struct dump_state {
	const char *cmd;
	int fd;
	int seekable;
	__u64 pos;			/* sequential output: bytes so far */
	__u64 end;			/* end of the last stored block */
	blk64_t blocks;
	char *buf;
	errcode_t retval;		/* reading the filesystem */
	int write_errno;		/* writing the output */
};

/*
 * Put @len bytes at @off.  Holes stay holes in a regular file; a pipe
 * gets them as zeros, since it cannot seek.
 */
static int put_data(struct dump_state *ds, const char *buf, size_t len,
		    __u64 off)
{
	static const char zero[4096];
	errcode_t err;
	size_t n;

	if (!ds->seekable) {
		while (ds->pos < off) {
			n = off - ds->pos < sizeof(zero) ?
				off - ds->pos : sizeof(zero);
			err = e2cb_write_all(ds->fd, zero, n, -1);
			if (err)
				goto fail;
			ds->pos += n;
		}
	}
	err = e2cb_write_all(ds->fd, buf, len,
			     ds->seekable ? (int64_t) off : -1);
	if (err)
		goto fail;
	ds->pos = off + len;
	return 0;
fail:
	/* a write that wrote nothing has no errno of its own */
	ds->write_errno = err == EXT2_ET_SHORT_WRITE ? EIO : err;
	return -1;
}

static int dump_run_proc(ext2_filsys fs, blk64_t lblk, blk64_t pblk,
			 blk64_t count, void *priv)
{
	struct dump_state *ds = priv;
	blk64_t n;

	while (count) {
		n = count < DUMP_CHUNK_BLOCKS ? count : DUMP_CHUNK_BLOCKS;
		ds->retval = io_channel_read_blk64(fs->io, pblk, n, ds->buf);
		if (ds->retval ||
		    put_data(ds, ds->buf, n * fs->blocksize,
			     lblk * fs->blocksize))
			return BLOCK_ABORT;
		ds->blocks += n;
		lblk += n;
		pblk += n;
		count -= n;
	}
	ds->end = lblk * fs->blocksize;
	return 0;
}

static void fix_perms(const char *cmd, const struct ext2_inode *inode,
		      int fd, const char *name)
{
	struct utimbuf ut;

	if (fchmod(fd, inode->i_mode & 07777) < 0)
		com_err(cmd, errno, "while setting permissions of %s", name);
	if (fchown(fd, inode_uid(*inode), inode_gid(*inode)) < 0)
		com_err(cmd, errno, "while changing ownership of %s", name);
	ut.actime = inode->i_atime;
	ut.modtime = inode->i_mtime;
	if (utime(name, &ut) < 0)
		com_err(cmd, errno, "while setting times of %s", name);
}

void do_dump_ciphertext(int argc, char **argv,
			int sci_idx EXT2FS_ATTR((unused)),
			void *infop EXT2FS_ATTR((unused)))
{
	struct ext2_inode_large *inode = NULL;
	struct dump_state ds;
	struct stat st;
	__u64 i_size, size;
	ext2_ino_t ino;
	int c, preserve = 0;
	errcode_t retval;

	reset_getopt();
	while ((c = getopt(argc, argv, "p")) != EOF) {
		switch (c) {
		case 'p':
			preserve = 1;
			break;
		default:
			goto print_usage;
		}
	}
	if (optind != argc - 2) {
	print_usage:
		com_err(argv[0], 0, "Usage: dump_ciphertext [-p] "
			"<file> <output_file>");
		return;
	}
	if (check_fs_open(argv[0]))
		return;
	ino = string_to_inode(argv[optind]);
	if (!ino)
		return;
	if (read_large_inode(argv[0], ino, &inode))
		return;
	if (!(inode->i_flags & EXT4_ENCRYPT_FL)) {
		com_err(argv[0], 0, "%s is not encrypted; use dump",
			argv[optind]);
		goto errout;
	}
	if (!LINUX_S_ISREG(inode->i_mode) && !LINUX_S_ISLNK(inode->i_mode)) {
		com_err(argv[0], 0, "%s is not a regular file or symlink",
			argv[optind]);
		goto errout;
	}

	memset(&ds, 0, sizeof(ds));
	ds.cmd = argv[0];
	ds.fd = open(argv[optind + 1], O_CREAT | O_WRONLY | O_TRUNC |
		     O_LARGEFILE, 0666);
	if (ds.fd < 0) {
		com_err(argv[0], errno, "while opening %s for dump_ciphertext",
			argv[optind + 1]);
		goto errout;
	}
	ds.seekable = !fstat(ds.fd, &st) && S_ISREG(st.st_mode);
	i_size = EXT2_I_SIZE(inode);

	/* a fast symlink's ciphertext record lives in i_block */
	if (LINUX_S_ISLNK(inode->i_mode) &&
	    ext2fs_is_fast_symlink((struct ext2_inode *) inode)) {
		size = i_size < sizeof(inode->i_block) ? i_size :
			sizeof(inode->i_block);
		if (put_data(&ds, (char *) inode->i_block, size, 0))
			goto write_error;
		printf("i_size: %llu   Fast symlink: %llu bytes from i_block\n",
		       (unsigned long long) i_size, (unsigned long long) size);
		goto close_out;
	}

	retval = ext2fs_get_array(DUMP_CHUNK_BLOCKS, current_fs->blocksize,
				  &ds.buf);
	if (retval) {
		com_err(argv[0], retval, "while allocating memory");
		goto close_out;
	}
	retval = ext2fs_stored_runs_iterate(current_fs, ino,
					    (struct ext2_inode *) inode,
					    dump_run_proc, &ds);
	ext2fs_free_mem(&ds.buf);
	if (ds.write_errno)
		goto write_error;
	if (!retval)
		retval = ds.retval;
	if (retval) {
		com_err(argv[0], retval, "while reading the blocks of %s",
			argv[optind]);
		goto close_out;
	}

	/* the last data unit is stored whole: never cut at i_size */
	size = (i_size + current_fs->blocksize - 1) /
		current_fs->blocksize * current_fs->blocksize;
	if (size < ds.end)
		size = ds.end;
	if (ds.seekable) {
		if (ftruncate(ds.fd, size) < 0) {
			ds.write_errno = errno;
			goto write_error;
		}
	} else if (ds.pos < size && put_data(&ds, "", 0, size)) {
		goto write_error;
	}
	printf("i_size: %llu   Stored blocks: %llu   Output size: %llu\n",
	       (unsigned long long) i_size, (unsigned long long) ds.blocks,
	       (unsigned long long) size);
	goto close_out;

write_error:
	com_err(argv[0], ds.write_errno, "while writing %s", argv[optind + 1]);
close_out:
	if (preserve)
		fix_perms(argv[0], (struct ext2_inode *) inode, ds.fd,
			  argv[optind + 1]);
	if (close(ds.fd) < 0)
		com_err(argv[0], errno, "while closing %s", argv[optind + 1]);
errout:
	ext2fs_free_mem(&inode);
}
