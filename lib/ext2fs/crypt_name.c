/*
 * crypt_name.c --- raw names of entries in encrypted directories
 *
 * Ciphertext names are arbitrary bytes, '/' and NUL included: they are
 * copied by length and never handed to a string function.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#include "config.h"
#include <string.h>
#include <ext2fs/ext2fs.h>
#include "ext4_crypt.h"

static __u32 get_le32(const __u8 *p)
{
	return p[0] | (p[1] << 8) | (p[2] << 16) | ((__u32) p[3] << 24);
}

/*
 * Copy the name of @de, a live entry of directory @dir (not "." or
 * ".."), together with the {hash, minor_hash} pair that casefolded
 * encrypted directories store after the name; without the key that pair
 * cannot be recomputed, only copied.
 */
errcode_t ext2fs_dirent_encrypted_name(ext2_filsys fs,
				       const struct ext2_inode *dir,
				       const struct ext2_dir_entry *de,
				       unsigned int rec_space,
				       struct ext4_encrypted_name *out)
{
	unsigned int name_len = ext2fs_dirent_name_len(de);
	unsigned int hash_off;
	unsigned int rec_len = 0;
	const __u8 *h;
	errcode_t retval;

	memset(out, 0, sizeof(*out));
	retval = ext2fs_get_rec_len(fs, (struct ext2_dir_entry *) de,
				    &rec_len);
	if (retval)
		return retval;
	if (rec_space && rec_len > rec_space)
		return EXT2_ET_DIR_CORRUPTED;
	if (name_len == 0 || 8 + name_len > rec_len)
		return EXT2_ET_DIR_CORRUPTED;
	memcpy(out->name, de->name, name_len);
	out->name_len = name_len;
	out->file_type = ext2fs_dirent_file_type(de);
	if (!ext4_hash_in_dirent(dir))
		return 0;

	hash_off = (name_len + EXT2_DIR_ROUND) & ~EXT2_DIR_ROUND;
	if (8 + hash_off + sizeof(struct ext2_dir_entry_hash) > rec_len)
		return EXT2_ET_CRYPT_BAD_DIRENT_HASH;
	h = (const __u8 *) de->name + hash_off;
	out->has_hash = 1;
	out->hash = get_le32(h);
	out->minor_hash = get_le32(h + 4);
	return 0;
}

struct find_name {
	ext2_filsys fs;
	struct ext2_inode dir;
	ext2_ino_t ino;
	struct ext4_encrypted_name *out;
	errcode_t retval;
	int found;
};

static int find_name_proc(ext2_ino_t dir_ino EXT2FS_ATTR((unused)),
			int entry EXT2FS_ATTR((unused)),
			struct ext2_dir_entry *de,
			  int offset EXT2FS_ATTR((unused)), int blocksize,
			  char *buf EXT2FS_ATTR((unused)), void *priv_data)
{
	struct find_name *fn = priv_data;
	int len = ext2fs_dirent_name_len(de);

	if (de->inode != fn->ino)
		return 0;
	/* "." and ".." are not the name of the inode */
	if (de->name[0] == '.' && (len == 1 || (len == 2 &&
						de->name[1] == '.')))
		return 0;
	fn->retval = ext2fs_dirent_encrypted_name(fn->fs, &fn->dir, de,
						  blocksize, fn->out);
	fn->found = 1;
	return DIRENT_ABORT;
}

/*
 * The offline EXT4_IOC_GET_ENCRYPTED_FILENAME: the first name under
 * which directory @dir refers to @ino.
 */
errcode_t ext2fs_get_encrypted_filename(ext2_filsys fs, ext2_ino_t dir,
					ext2_ino_t ino,
					struct ext4_encrypted_name *out)
{
	struct find_name fn;
	errcode_t retval;

	memset(&fn, 0, sizeof(fn));
	fn.fs = fs;
	fn.ino = ino;
	fn.out = out;
	retval = ext2fs_read_inode(fs, dir, &fn.dir);
	if (retval)
		return retval;
	if (!LINUX_S_ISDIR(fn.dir.i_mode))
		return EXT2_ET_NO_DIRECTORY;
	retval = ext2fs_dir_iterate2(fs, dir, 0, NULL, find_name_proc, &fn);
	if (retval)
		return retval;
	if (fn.retval)
		return fn.retval;
	return fn.found ? 0 : EXT2_ET_CRYPT_NAME_NOT_FOUND;
}

/*
 * An encrypted symlink's target as stored (fs/crypto's struct
 * fscrypt_symlink_data): a le16 length, then that many bytes of
 * ciphertext, which fill the rest: e2fsck clears a symlink whose length
 * + 2 is not its i_size, and the kernel refuses one of length 0.
 */
errcode_t ext2fs_check_encrypted_symlink(const void *target, size_t size)
{
	const __u8 *p = target;
	size_t len;

	if (size < 2)
		return EXT2_ET_INODE_CORRUPTED;
	len = p[0] | (p[1] << 8);
	if (!len || len + 2 != size)
		return EXT2_ET_INODE_CORRUPTED;
	return 0;
}
