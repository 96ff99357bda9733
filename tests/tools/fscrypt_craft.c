/*
 * fscrypt_craft.c --- write fscrypt-encrypted files into an ext4 image
 *                     without a kernel
 *
 * Usage: fscrypt_craft IMAGE < SPEC
 *
 * Builds encrypted trees with libext2fs and libfscrypt, for what a
 * kernel cannot or will not make: names that decrypt to "..", to a name
 * with '/' or NUL, to nothing, two names that decrypt alike; invalid
 * contexts; and policies this kernel lacks (Adiantum, HCTR2, SM4,
 * ESSIV).  IMAGE is an unmounted ext4 made with "-O encrypt".  SPEC has
 * one command a line; fields are separated by blanks, and "\xHH" and
 * "\\" stand for bytes (so "\x2f" is a '/' inside a name):
 *
 *   key HEX                     the master key for what follows
 *   nonces TEXT                 nonces from SHA-256(TEXT, a counter) from
 *                               here on, not random, so that ciphertext
 *                               and hashes reproduce
 *   policy V CONT NAMES FLAGS DU  e.g. "policy 2 1 4 0x02 0"
 *   encdir NAME                 a directory in the root with that policy
 *   cfencdir NAME               the same, casefolded (v2 only): its names
 *                               carry the kernel's SipHash of the name,
 *                               which must be its own casefold (lower-
 *                               case ASCII, say); needs "-O casefold"
 *   plain NAME @FILE            an unencrypted file in the root
 *   dir PATH                    PATH: components under an encdir
 *   file PATH @FILE             contents from FILE
 *   symlink PATH TARGET
 *   fifo PATH
 *   badctx PATH @FILE           a file whose context is invalid
 *   rawctx PATH @FILE           a file with the policy's context as it
 *                               is, unchecked and FILE not encrypted:
 *                               for contexts the libraries may refuse
 *   xattr PATH NAME VALUE       a user.* attribute (NAME without "user.")
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/rand.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <et/com_err.h>
#include <ext2fs/ext2fs.h>
#include "ext2fs/ext4_crypt.h"
#include "fscrypt/fscrypt.h"

struct node {
	char *path;			/* as written in SPEC */
	ext2_ino_t ino;
	struct fscrypt_inode *names;	/* encrypted directories */
	int casefold;
	uint8_t dirhash_key[16];	/* casefolded ones */
	uint8_t ctx[40];
	size_t ctx_len;
};

static ext2_filsys fs;
static struct fscrypt_keyring *kr;
static struct node nodes[4096];
static int nnodes, lineno;
static uint8_t policy[5] = { 2, 1, 4, 0, 0 };
static uint8_t key[64];
static size_t key_len;
static char *nonce_seed;		/* NULL: random nonces */
static unsigned int nonce_count;

static void die(errcode_t err, const char *what)
{
	com_err("fscrypt_craft", err, "line %d: %s", lineno, what);
	exit(1);
}

/* Decode \xHH and \\ in place; returns the length */
static size_t unescape(char *s)
{
	char *o = s, *p = s;
	unsigned int b;

	while (*p) {
		if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &b)) {
			*o++ = b;
			p += 4;
		} else if (p[0] == '\\' && p[1] == '\\') {
			*o++ = '\\';
			p += 2;
		} else {
			*o++ = *p++;
		}
	}
	return o - s;
}

static struct node *find(const char *path, size_t len)
{
	int i;

	for (i = 0; i < nnodes; i++)
		if (strlen(nodes[i].path) == len &&
		    !memcmp(nodes[i].path, path, len))
			return &nodes[i];
	return NULL;
}

static void make_nonce(uint8_t *nonce)
{
	unsigned int n = nonce_count++;
	uint8_t md[32];
	EVP_MD_CTX *c;

	if (!nonce_seed) {
		RAND_bytes(nonce, 16);
		return;
	}
	c = EVP_MD_CTX_new();
	if (!c || !EVP_DigestInit_ex(c, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(c, nonce_seed, strlen(nonce_seed)) ||
	    !EVP_DigestUpdate(c, &n, sizeof(n)) ||
	    !EVP_DigestFinal_ex(c, md, NULL))
		die(0, "SHA-256 failed");
	EVP_MD_CTX_free(c);
	memcpy(nonce, md, 16);
}

/* @bad: 0 as the policy says, 1 an invalid mode, 2 unchecked (rawctx) */
static void make_context(uint8_t *ctx, size_t *len, int bad)
{
	memset(ctx, 0, 40);
	ctx[0] = policy[0];
	ctx[1] = policy[1];
	ctx[2] = policy[2];
	ctx[3] = policy[3];
	if (policy[0] == 1) {
		fscrypt_key_descriptor(key, key_len, ctx + 4);
		make_nonce(ctx + 12);
		*len = 28;
	} else {
		ctx[4] = policy[4];
		fscrypt_key_identifier(key, key_len, ctx + 8);
		make_nonce(ctx + 24);
		*len = 40;
	}
	if (bad == 1)
		ctx[1] = 3;		/* no such contents mode */
}

static struct fscrypt_inode *open_key(ext2_ino_t ino, const uint8_t *ctx,
				      size_t len, int names)
{
	struct fscrypt_inode_params p;
	struct fscrypt_inode *fi;
	errcode_t err;

	memset(&p, 0, sizeof(p));
	p.ino = ino;
	p.block_size = fs->blocksize;
	p.names = names;
	memcpy(p.uuid, fs->super->s_uuid, 16);
	err = fscrypt_inode_open(kr, ctx, len, &p, &fi);
	if (err)
		die(err, "while setting up the key");
	return fi;
}

/* Context (and any user attribute) as the only attributes; ENCRYPT_FL */
static void set_xattrs(ext2_ino_t ino, const uint8_t *ctx, size_t ctx_len,
		       const char *xname, const void *xval, size_t xval_len)
{
	struct ext2fs_raw_xattr list[2];
	struct ext2_inode_large *inode;
	size_t isize = EXT2_INODE_SIZE(fs->super), n = 0;
	errcode_t err;

	inode = calloc(1, isize);
	err = ext2fs_read_inode_full(fs, ino, (struct ext2_inode *) inode,
				     isize);
	if (err)
		die(err, "while reading an inode");
	if (ctx) {
		inode->i_flags |= EXT4_ENCRYPT_FL;
		list[n].index = EXT4_XATTR_INDEX_ENCRYPTION;
		list[n].name = "c";
		list[n].name_len = 1;
		list[n].value = ctx;
		list[n++].value_len = ctx_len;
	}
	if (xname) {
		list[n].index = 1;
		list[n].name = xname;
		list[n].name_len = strlen(xname);
		list[n].value = xval;
		list[n++].value_len = xval_len;
	}
	err = ext2fs_xattrs_raw_replace(fs, ino, inode, list, n);
	if (err)
		die(err, "while writing attributes");
	free(inode);
}

static void set_size(ext2_ino_t ino, uint64_t size)
{
	struct ext2_inode inode;
	errcode_t err;

	err = ext2fs_read_inode(fs, ino, &inode);
	if (!err)
		err = ext2fs_inode_size_set(fs, &inode, size);
	if (!err)
		err = ext2fs_write_inode(fs, ino, &inode);
	if (err)
		die(err, "while setting the size");
}

static ext2_ino_t new_inode(ext2_ino_t parent, int mode)
{
	struct ext2_inode_large inode;
	ext2_ino_t ino;
	errcode_t err;

	err = ext2fs_new_inode(fs, parent, mode, 0, &ino);
	if (err)
		die(err, "while allocating an inode");
	ext2fs_inode_alloc_stats2(fs, ino, +1, LINUX_S_ISDIR(mode));
	memset(&inode, 0, sizeof(inode));
	inode.i_mode = mode;
	inode.i_links_count = 1;
	inode.i_atime = inode.i_ctime = inode.i_mtime = 1600000000;
	inode.i_extra_isize = sizeof(inode) - EXT2_GOOD_OLD_INODE_SIZE;
	if (LINUX_S_ISREG(mode) && ext2fs_has_feature_extents(fs->super)) {
		ext2_extent_handle_t h;

		err = ext2fs_extent_open2(fs, ino, (struct ext2_inode *) &inode,
					  &h);
		if (err)
			die(err, "while setting up extents");
		ext2fs_extent_free(h);
	}
	err = ext2fs_write_new_inode(fs, ino, (struct ext2_inode *) &inode);
	if (err)
		die(err, "while writing an inode");
	return ino;
}

/*
 * The hash a casefolded encrypted directory keeps in each entry: the
 * kernel's SipHash-2-4 of the casefolded plaintext name under the
 * directory's dirhash key, its high half the major hash (low bit clear,
 * the end-of-directory value avoided), its low half the minor one.
 */
static void cf_hash(const struct node *dir, const uint8_t *name, size_t len,
		    struct ext4_encrypted_name *n)
{
	OSSL_PARAM params[2];
	EVP_MAC *mac;
	EVP_MAC_CTX *ctx = NULL;
	unsigned int size = 8;
	uint8_t res[8];
	uint64_t h = 0;
	size_t outl = 0;
	int ok, i;

	mac = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	if (mac)
		ctx = EVP_MAC_CTX_new(mac);
	params[0] = OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_SIZE, &size);
	params[1] = OSSL_PARAM_construct_end();
	ok = ctx && EVP_MAC_CTX_set_params(ctx, params) &&
	     EVP_MAC_init(ctx, dir->dirhash_key, 16, params) &&
	     EVP_MAC_update(ctx, name, len) &&
	     EVP_MAC_final(ctx, res, &outl, sizeof(res)) && outl == 8;
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	if (!ok)
		die(0, "SipHash failed");
	for (i = 7; i >= 0; i--)
		h = h << 8 | res[i];
	n->has_hash = 1;
	n->hash = (uint32_t) (h >> 32) & ~1U;
	if (n->hash == 0xfffffffe)
		n->hash = 0xfffffffc;
	n->minor_hash = (uint32_t) h;
}

static void link_name(struct node *parent, const uint8_t *name, size_t len,
		      ext2_ino_t ino, int ft)
{
	struct ext4_encrypted_name n;
	size_t ct_len;
	errcode_t err;

	memset(&n, 0, sizeof(n));
	err = fscrypt_encrypt_name(parent->names, name, len, n.name, &ct_len);
	if (err)
		die(err, "while encrypting a name");
	n.name_len = ct_len;
	if (parent->casefold)
		cf_hash(parent, name, len, &n);
	err = ext2fs_link_raw(fs, parent->ino, &n, ino, ft, NULL);
	if (err)
		die(err, "while linking");
}

static uint8_t *slurp(const char *arg, size_t *len)
{
	uint8_t *buf;
	FILE *f;
	long n;

	if (arg[0] != '@' || !(f = fopen(arg + 1, "rb")))
		die(0, "contents must be @FILE, a readable file");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 65536);
	if (fread(buf, 1, n, f) != (size_t) n)
		die(0, "cannot read the contents file");
	fclose(f);
	*len = n;
	return buf;
}

/* Whole blocks of ciphertext; i_size says where the data ends */
static void write_file(struct node *parent, const uint8_t *name,
		       size_t name_len, const char *src, int bad)
{
	struct fscrypt_inode *fi;
	ext2_file_t f;
	uint8_t ctx[40], *buf;
	size_t ctx_len, len, blocks;
	unsigned int written;
	ext2_ino_t ino;
	errcode_t err;

	buf = slurp(src, &len);
	ino = new_inode(parent->ino, LINUX_S_IFREG | 0644);
	make_context(ctx, &ctx_len, bad);
	blocks = (len + fs->blocksize - 1) / fs->blocksize * fs->blocksize;
	if (!bad && len) {
		fi = open_key(ino, ctx, ctx_len, 0);
		err = fscrypt_encrypt_data(fi, 0, buf, blocks);
		fscrypt_inode_close(fi);
		if (err)
			die(err, "while encrypting");
	}
	err = ext2fs_file_open(fs, ino, EXT2_FILE_WRITE, &f);
	if (!err && blocks)
		err = ext2fs_file_write(f, buf, blocks, &written);
	if (!err)
		err = ext2fs_file_close(f);
	if (err)
		die(err, "while writing a file");
	/*
	 * Not ext2fs_file_set_size2(): it zeroes the last block past the
	 * new size, and that ciphertext is part of the last data unit.
	 */
	set_size(ino, len);
	set_xattrs(ino, ctx, ctx_len, NULL, NULL, 0);
	link_name(parent, name, name_len, ino, EXT2_FT_REG_FILE);
	free(buf);
}

static void make_symlink(struct node *parent, const uint8_t *name,
			 size_t name_len, const uint8_t *target,
			 size_t target_len)
{
	struct ext2_inode inode;
	struct fscrypt_inode *fi;
	uint8_t ctx[40], disk[64];
	size_t ctx_len, disk_len;
	ext2_ino_t ino;
	errcode_t err;

	ino = new_inode(parent->ino, LINUX_S_IFLNK | 0777);
	make_context(ctx, &ctx_len, 0);
	fi = open_key(ino, ctx, ctx_len, 1);
	err = fscrypt_encrypt_symlink(fi, target, target_len, disk,
				      sizeof(disk), &disk_len);
	fscrypt_inode_close(fi);
	if (err || disk_len >= sizeof(inode.i_block))
		die(err, "symlink target too long for a fast symlink");
	ext2fs_read_inode(fs, ino, &inode);
	memcpy(inode.i_block, disk, disk_len);
	inode.i_size = disk_len;
	ext2fs_write_inode(fs, ino, &inode);
	set_xattrs(ino, ctx, ctx_len, NULL, NULL, 0);
	link_name(parent, name, name_len, ino, EXT2_FT_SYMLINK);
}

static void make_dir(struct node *parent, const uint8_t *name,
		     size_t name_len, struct node *n)
{
	ext2_ino_t ino;
	errcode_t err;

	/* ext2fs_mkdir() writes the inode and counts it */
	err = ext2fs_new_inode(fs, parent->ino, LINUX_S_IFDIR | 0755, 0, &ino);
	if (!err)
		err = ext2fs_mkdir(fs, parent->ino, ino, NULL);
	if (err)
		die(err, "while making a directory");
	make_context(n->ctx, &n->ctx_len, 0);
	set_xattrs(ino, n->ctx, n->ctx_len, NULL, NULL, 0);
	link_name(parent, name, name_len, ino, EXT2_FT_DIR);
	n->ino = ino;
	n->names = open_key(ino, n->ctx, n->ctx_len, 1);
}

/* The parent of PATH (an escaped a/b/c), and the last name unescaped */
static struct node *split(char *path, uint8_t *name, size_t *name_len)
{
	char *slash = strrchr(path, '/');
	struct node *parent;

	if (!slash)
		die(0, "PATH must be under an encdir");
	parent = find(path, slash - path);
	if (!parent || !parent->names)
		die(0, "no such encrypted directory");
	strcpy((char *) name, slash + 1);
	*name_len = unescape((char *) name);
	return parent;
}

int main(int argc, char **argv)
{
	char line[8192], *cmd, *a1, *a2, *a3;
	uint8_t name[8192];
	size_t name_len, len;
	struct node *parent, *n;
	unsigned int v[5];
	errcode_t err;
	int i;

	if (argc != 2) {
		fprintf(stderr, "Usage: %s IMAGE < SPEC\n", argv[0]);
		return 2;
	}
	add_error_table(&et_ext2_error_table);
	add_error_table(&et_e4cr_error_table);
	add_error_table(&et_fscr_error_table);
	err = ext2fs_open(argv[1], EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0,
			  unix_io_manager, &fs);
	if (err)
		die(err, "while opening the image");
	ext2fs_read_bitmaps(fs);
	fscrypt_keyring_new(&kr);
	while (fgets(line, sizeof(line), stdin)) {
		lineno++;
		cmd = strtok(line, " \t\n");
		if (!cmd || cmd[0] == '#')
			continue;
		a1 = strtok(NULL, " \t\n");
		a2 = strtok(NULL, " \t\n");
		a3 = strtok(NULL, " \t\n");
		if (!strcmp(cmd, "key") && a1) {
			key_len = 0;
			for (; a1[0] && a1[1] && key_len < 64; a1 += 2)
				sscanf(a1, "%2hhx", &key[key_len++]);
			fscrypt_keyring_add_raw(kr, key, key_len);
		} else if (!strcmp(cmd, "nonces") && a1) {
			free(nonce_seed);
			nonce_seed = strdup(a1);
			nonce_count = 0;
		} else if (!strcmp(cmd, "policy") && a3) {
			if (sscanf(a1, "%u", &v[0]) != 1 ||
			    sscanf(a2, "%u", &v[1]) != 1 ||
			    sscanf(a3, "%u", &v[2]) != 1 ||
			    sscanf(strtok(NULL, " \t\n"), "%i", &v[3]) != 1 ||
			    sscanf(strtok(NULL, " \t\n"), "%u", &v[4]) != 1)
				die(0, "policy V CONT NAMES FLAGS LOG2DU");
			for (i = 0; i < 5; i++)
				policy[i] = v[i];
		} else if ((!strcmp(cmd, "encdir") ||
			    !strcmp(cmd, "cfencdir")) && a1) {
			struct ext2_inode di;

			n = &nodes[nnodes++];
			n->path = strdup(a1);
			err = ext2fs_mkdir(fs, EXT2_ROOT_INO, 0, a1);
			if (!err)
				err = ext2fs_lookup(fs, EXT2_ROOT_INO, a1,
						    strlen(a1), 0, &n->ino);
			if (err)
				die(err, "while making the encdir");
			n->casefold = !strcmp(cmd, "cfencdir");
			if (n->casefold) {
				err = ext2fs_read_inode(fs, n->ino, &di);
				di.i_flags |= EXT4_CASEFOLD_FL;
				if (!err)
					err = ext2fs_write_inode(fs, n->ino,
								 &di);
				if (err)
					die(err, "while casefolding");
			}
			make_context(n->ctx, &n->ctx_len, 0);
			set_xattrs(n->ino, n->ctx, n->ctx_len, NULL, NULL, 0);
			n->names = open_key(n->ino, n->ctx, n->ctx_len, 1);
			if (n->casefold) {
				err = fscrypt_inode_dirhash_key(n->names,
							n->dirhash_key);
				if (err)
					die(err, "while deriving the "
						 "dirhash key");
			}
		} else if (!strcmp(cmd, "plain") && a2) {
			ext2_file_t f;
			ext2_ino_t ino = new_inode(EXT2_ROOT_INO,
						   LINUX_S_IFREG | 0644);
			uint8_t *buf = slurp(a2, &len);
			unsigned int w;

			err = ext2fs_file_open(fs, ino, EXT2_FILE_WRITE, &f);
			if (!err)
				err = ext2fs_file_write(f, buf, len, &w);
			if (!err)
				err = ext2fs_file_close(f);
			if (!err)
				err = ext2fs_link(fs, EXT2_ROOT_INO, a1, ino,
						  EXT2_FT_REG_FILE);
			if (err)
				die(err, "while writing a plain file");
			free(buf);
		} else if (!strcmp(cmd, "dir") && a1) {
			n = &nodes[nnodes++];
			n->path = strdup(a1);
			parent = split(a1, name, &name_len);
			make_dir(parent, name, name_len, n);
		} else if ((!strcmp(cmd, "file") || !strcmp(cmd, "badctx") ||
			    !strcmp(cmd, "rawctx")) && a2) {
			parent = split(a1, name, &name_len);
			write_file(parent, name, name_len, a2,
				   !strcmp(cmd, "badctx") ? 1 :
				   !strcmp(cmd, "rawctx") ? 2 : 0);
		} else if (!strcmp(cmd, "symlink") && a2) {
			parent = split(a1, name, &name_len);
			len = unescape(a2);
			make_symlink(parent, name, name_len, (uint8_t *) a2,
				     len);
		} else if (!strcmp(cmd, "fifo") && a1) {
			ext2_ino_t ino;

			parent = split(a1, name, &name_len);
			ino = new_inode(parent->ino, LINUX_S_IFIFO | 0644);
			link_name(parent, name, name_len, ino, EXT2_FT_FIFO);
		} else if (!strcmp(cmd, "xattr") && a3) {
			n = find(a1, strlen(a1));
			if (!n)
				die(0, "xattr works on directories made here");
			len = unescape(a3);
			set_xattrs(n->ino, n->ctx, n->ctx_len, a2, a3, len);
		} else {
			die(0, "unknown or incomplete command");
		}
	}
	for (i = 0; i < nnodes; i++)
		fscrypt_inode_close(nodes[i].names);
	fscrypt_keyring_free(kr);
	err = ext2fs_close_free(&fs);
	if (err)
		die(err, "while closing the image");
	return 0;
}
