/*
 * ext4_crypt.h --- keyless access to fscrypt-encrypted ext4 inodes
 *
 * These declarations extend libext2fs with what the 2015 ext4 backup
 * ioctls (EXT4_IOC_GET/SET_ENCRYPTION_METADATA,
 * EXT4_IOC_GET_ENCRYPTED_FILENAME) would have returned, computed offline
 * from an unmounted filesystem.  Only public libext2fs interfaces are
 * used, so the sources can move into lib/ext2fs unchanged.
 *
 * This file may be redistributed under the terms of the GNU Library
 * General Public License, version 2.
 */

#ifndef EXT4_CRYPT_H
#define EXT4_CRYPT_H

#include <ext2fs/ext2fs.h>
#include <ext2fs/crypt_err.h>

/* xattr name index and name under which ext4 keeps the context */
#define EXT4_XATTR_INDEX_ENCRYPTION	9
#define EXT4_XATTR_NAME_ENCRYPTION_CONTEXT "c"

#define FSCRYPT_CONTEXT_V1		1
#define FSCRYPT_CONTEXT_V2		2
#define FSCRYPT_CONTEXT_V1_SIZE		28
#define FSCRYPT_CONTEXT_V2_SIZE		40
#define FSCRYPT_FILE_NONCE_SIZE		16
#define FSCRYPT_KEY_DESCRIPTOR_SIZE	8
#define FSCRYPT_KEY_IDENTIFIER_SIZE	16

/* contents and filenames modes (uapi linux/fscrypt.h) */
#define FSCRYPT_MODE_AES_256_XTS	1
#define FSCRYPT_MODE_AES_256_CTS	4
#define FSCRYPT_MODE_AES_128_CBC	5
#define FSCRYPT_MODE_AES_128_CTS	6
#define FSCRYPT_MODE_SM4_XTS		7
#define FSCRYPT_MODE_SM4_CTS		8
#define FSCRYPT_MODE_ADIANTUM		9
#define FSCRYPT_MODE_AES_256_HCTR2	10

/* policy flags */
#define FSCRYPT_POLICY_FLAGS_PAD_MASK	0x03
#define FSCRYPT_POLICY_FLAG_DIRECT_KEY	0x04
#define FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 0x08
#define FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32 0x10
#define FSCRYPT_POLICY_FLAGS_VALID	0x1f
/* either of the two that put inode and block numbers in the IVs */
#define FSCRYPT_POLICY_FLAGS_IV_INO_LBLK \
	(FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 | \
	 FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32)

/*
 * The context as the kernel stores it (fs/crypto/fscrypt_private.h).
 * Multi-byte fields are byte arrays: the layout is endian-free.
 */
struct fscrypt_context_v1 {
	__u8 version;			/* FSCRYPT_CONTEXT_V1 */
	__u8 contents_encryption_mode;
	__u8 filenames_encryption_mode;
	__u8 flags;
	__u8 master_key_descriptor[FSCRYPT_KEY_DESCRIPTOR_SIZE];
	__u8 nonce[FSCRYPT_FILE_NONCE_SIZE];
};

struct fscrypt_context_v2 {
	__u8 version;			/* FSCRYPT_CONTEXT_V2 */
	__u8 contents_encryption_mode;
	__u8 filenames_encryption_mode;
	__u8 flags;
	__u8 log2_data_unit_size;	/* 0: the filesystem block size */
	__u8 __reserved[3];
	__u8 master_key_identifier[FSCRYPT_KEY_IDENTIFIER_SIZE];
	__u8 nonce[FSCRYPT_FILE_NONCE_SIZE];
};

/*
 * What the 2015 proposal's EXT4_IOC_GET_ENCRYPTION_METADATA filled in
 * (v3 of the series): the length and the bytes.  288 bytes hold any
 * context or self-describing blob defined below.
 */
#define EXT4_ENCRYPTED_METADATA_MAX	288
struct ext4_encrypted_metadata {
	__u32 len;
	char metadata[EXT4_ENCRYPTED_METADATA_MAX];
};

/*
 * Self-describing blobs of the last version of that series; each
 * carries a crc16 over the whole blob computed with the crc field zero.
 *   metadata: 'e' '5' | le16 crc | le32 i_size lo | le32 i_size hi | ctx
 *   filename: 'e' 'f'|'d' | le16 crc | ['d': le32 mode | le16 ctx len |
 *             ctx] | raw name
 */
#define EXT4_BLOB_MAGIC			'e'
#define EXT4_BLOB_METADATA		'5'
#define EXT4_BLOB_FILENAME		'f'
#define EXT4_BLOB_DIRNAME		'd'
#define EXT4_METADATA_BLOB_HDR		12
#define EXT4_FILENAME_BLOB_HDR		4
#define EXT4_DIRNAME_BLOB_HDR		10
/*
 * An 'ed' blob of a v2 directory with a 255-byte name is 305 bytes: more
 * than the v3 struct's 288, which is why the last version of the series
 * passed a pointer and a length.  Blobs are built in buffers this big.
 */
#define EXT4_CRYPT_BLOB_MAX		512

/* A raw on-disk directory entry name, never NUL terminated. */
struct ext4_encrypted_name {
	__u8	name[EXT2_NAME_LEN];
	__u8	name_len;
	__u8	has_hash;		/* casefolded encrypted directory */
	__u8	file_type;
	__u32	hash;
	__u32	minor_hash;
};

/* One run of initialized logical blocks mapped to contiguous physical ones */
typedef int (*ext2fs_stored_run_func)(ext2_filsys fs, blk64_t lblk,
				      blk64_t pblk, blk64_t count,
				      void *priv_data);

/* Called for each stored xattr; returns XATTR_ABORT to stop */
typedef int (*ext2fs_xattr_raw_func)(int index, const char *name,
				     size_t name_len, const void *value,
				     size_t value_len, void *priv_data);

/* An extended attribute as stored: name index, bare name, value */
struct ext2fs_raw_xattr {
	int index;
	const char *name;		/* not NUL terminated */
	size_t name_len;
	const void *value;
	size_t value_len;
};

/* acl_disk.c: a POSIX ACL of the VFS (getxattr) as ext4 stores it */
extern errcode_t ext2fs_acl_to_vfs(const void *value, size_t len,
				   void **out, size_t *out_len);
extern errcode_t ext2fs_acl_from_vfs(const void *value, size_t len,
				     void *out, size_t *out_len);

/* xattr_raw.c */
extern errcode_t ext2fs_xattrs_raw_iterate(ext2_filsys fs, ext2_ino_t ino,
					const struct ext2_inode_large *inode,
					ext2fs_xattr_raw_func func,
					void *priv_data);
extern errcode_t ext2fs_ea_block_put(ext2_filsys fs, ext2_ino_t ino,
				     blk64_t blk);
extern errcode_t ext2fs_raw_xattr_copy_add(struct ext2fs_raw_xattr **list,
					   size_t *count, int index,
					   const char *name, size_t name_len,
					   const void *value,
					   size_t value_len);
extern void ext2fs_raw_xattrs_free(struct ext2fs_raw_xattr *list,
				   size_t first, size_t count);
extern size_t ext2fs_xattrs_raw_room(ext2_filsys fs,
				     unsigned int extra_isize);
extern errcode_t ext2fs_xattrs_raw_fit(ext2_filsys fs, size_t room,
				       const struct ext2fs_raw_xattr *list,
				       size_t count, size_t *n_in,
				       size_t *in_inode, size_t *in_block);
extern errcode_t ext2fs_xattrs_raw_write(ext2_filsys fs, ext2_ino_t ino,
					 struct ext2_inode_large *inode,
					 const struct ext2fs_raw_xattr *list,
					 size_t count);
struct ext2fs_ea_share;
extern errcode_t ext2fs_ea_share_new(struct ext2fs_ea_share **ret);
extern void ext2fs_ea_share_free(struct ext2fs_ea_share *share);
extern errcode_t ext2fs_xattrs_raw_write_shared(ext2_filsys fs,
					ext2_ino_t ino,
					struct ext2_inode_large *inode,
					const struct ext2fs_raw_xattr *list,
					size_t count,
					struct ext2fs_ea_share *share);
extern size_t ext2fs_inline_data_raw_max(ext2_filsys fs,
					struct ext2_inode_large *inode,
					const struct ext2fs_raw_xattr *list,
					size_t count);
extern errcode_t ext2fs_xattrs_raw_release(ext2_filsys fs, ext2_ino_t ino,
					   struct ext2_inode_large *inode);
extern errcode_t ext2fs_inline_data_raw_write(ext2_filsys fs,
					ext2_ino_t ino,
					struct ext2_inode_large *inode,
					const struct ext2fs_raw_xattr *list,
					size_t count, const void *data,
					size_t size,
					struct ext2fs_ea_share *share);
extern errcode_t ext2fs_xattrs_raw_replace(ext2_filsys fs, ext2_ino_t ino,
					struct ext2_inode_large *inode,
					const struct ext2fs_raw_xattr *list,
					size_t count);

/* inline_dir.c */
extern errcode_t ext2fs_dir_make_inline(ext2_filsys fs, ext2_ino_t ino,
					struct ext2fs_ea_share *share);

/* crypt_context.c */
extern const char *ext2fs_encryption_mode_name(int mode);
extern int ext2fs_encryption_modes_supported(int version, int contents,
					     int names, int flags);
extern errcode_t ext2fs_validate_encryption_context(const void *ctx,
						     size_t len);
extern errcode_t ext2fs_get_encryption_context(ext2_filsys fs,
					       ext2_ino_t ino,
					       struct ext2_inode_large *inode,
					       void *buf, size_t bufsize,
					       size_t *ctx_len);
extern errcode_t ext2fs_get_encryption_metadata(ext2_filsys fs,
					ext2_ino_t ino,
					struct ext4_encrypted_metadata *md);
extern errcode_t ext2fs_set_encryption_context(ext2_filsys fs,
					       ext2_ino_t ino,
					       const void *ctx, size_t len);

/* crypt_blob.c */
extern __u16 ext2fs_crypt_crc16(__u16 crc, const void *buf, size_t len);
extern errcode_t ext2fs_encode_metadata_blob(__u64 i_size, const void *ctx,
					     size_t ctx_len, void *buf,
					     size_t bufsize, size_t *len);
extern errcode_t ext2fs_decode_metadata_blob(const void *blob, size_t len,
					     __u64 *i_size,
					     const __u8 **ctx,
					     size_t *ctx_len);
extern errcode_t ext2fs_encode_filename_blob(const struct ext4_encrypted_name *n,
					     int is_dir, __u32 mode,
					     const void *dir_ctx,
					     size_t dir_ctx_len, void *buf,
					     size_t bufsize, size_t *len);
extern errcode_t ext2fs_decode_filename_blob(const void *blob, size_t len,
					     struct ext4_encrypted_name *n,
					     int *is_dir, __u32 *mode,
					     const __u8 **dir_ctx,
					     size_t *dir_ctx_len);

/* crypt_name.c */
extern errcode_t ext2fs_dirent_encrypted_name(ext2_filsys fs,
					      const struct ext2_inode *dir,
					      const struct ext2_dir_entry *de,
					      unsigned int rec_space,
					      struct ext4_encrypted_name *out);
extern errcode_t ext2fs_get_encrypted_filename(ext2_filsys fs,
					       ext2_ino_t dir, ext2_ino_t ino,
					       struct ext4_encrypted_name *out);
extern errcode_t ext2fs_check_encrypted_symlink(const void *target,
						size_t size);

/* dir_index.c */
extern errcode_t ext2fs_dx_index_dir(ext2_filsys fs, ext2_ino_t ino);
extern errcode_t ext2fs_dx_find_leaf(ext2_filsys fs, ext2_ino_t dir,
				     const struct ext4_encrypted_name *n,
				     blk64_t *leaf, __u32 *hash);
extern errcode_t ext2fs_dx_split_leaf(ext2_filsys fs, ext2_ino_t dir,
				      __u32 hash);
extern errcode_t ext2fs_dx_lookup(ext2_filsys fs, ext2_ino_t dir,
				  const struct ext4_encrypted_name *n,
				  ext2_ino_t *ino);

/* crypt_link.c */
/* The directory entry's file type of an inode of mode @mode */
extern int ext2fs_mode_to_file_type(unsigned int mode);
extern void ext2fs_fill_raw_dirent(ext2_filsys fs, struct ext2_dir_entry *de,
				   const struct ext4_encrypted_name *n,
				   ext2_ino_t ino, int file_type);
extern errcode_t ext2fs_dir_add_block(ext2_filsys fs, ext2_ino_t dir,
				      char *buf, blk64_t *lblk_ret);
extern errcode_t ext2fs_link_raw(ext2_filsys fs, ext2_ino_t dir,
				 const struct ext4_encrypted_name *n,
				 ext2_ino_t ino, int file_type, blk64_t *hint);
extern errcode_t ext2fs_unlink_raw(ext2_filsys fs, ext2_ino_t dir,
				   const struct ext4_encrypted_name *n,
				   ext2_ino_t ino);

/* dir_append.c: a directory filled a block at a time */
struct ext2fs_dir_append {
	ext2_filsys fs;
	ext2_ino_t dir;
	int state;
	int has_hash;		/* casefolded encrypted: hashes kept */
	unsigned int csum_size;
	char *buf;		/* the block being filled */
	blk64_t lblk;		/* which it is; ~0: new, not allocated */
	int dirty;		/* not written as it is */
	unsigned int last;	/* offset of its last entry, ~0U: none */
	unsigned int tail;	/* where its free room starts */
	unsigned int undo_last, undo_tail;	/* before the last name */
	int undo_ok;
	blk64_t hint;		/* an indexed directory's, for link_raw */
};

extern void ext2fs_dir_append_init(struct ext2fs_dir_append *a,
				   ext2_filsys fs, ext2_ino_t dir);
extern errcode_t ext2fs_dir_append(struct ext2fs_dir_append *a,
				   const struct ext4_encrypted_name *n,
				   ext2_ino_t ino, int file_type);
extern errcode_t ext2fs_dir_append_undo(struct ext2fs_dir_append *a,
					const struct ext4_encrypted_name *n,
					ext2_ino_t ino);
extern errcode_t ext2fs_dir_append_flush(struct ext2fs_dir_append *a);
extern void ext2fs_dir_append_free(struct ext2fs_dir_append *a);

/* stored_data.c */
extern errcode_t ext2fs_stored_runs_iterate(ext2_filsys fs, ext2_ino_t ino,
					    struct ext2_inode *inode,
					    ext2fs_stored_run_func func,
					    void *priv_data);

/* dir_walk.c: what a damaged directory lost, as ext2fs_dir_walk says */
#define EXT2FS_DIR_LOST_NOTHING		0	/* kept, but unverified */
#define EXT2FS_DIR_LOST_ENTRY		1	/* one entry */
#define EXT2FS_DIR_LOST_REST_OF_BLOCK	2	/* from @offset on */
#define EXT2FS_DIR_LOST_BLOCK		3	/* the whole block */
#define EXT2FS_DIR_LOST_REST		4	/* from block @lblk on */

struct ext2fs_dir_damage {
	blk64_t lblk;			/* block of the directory */
	blk64_t pblk;			/* where it is; 0 if not known */
	unsigned int offset;		/* of the bad entry in the block */
	ext2_ino_t ino;			/* the bad entry's inode field, or 0 */
	errcode_t err;			/* what is wrong */
	int lost;			/* EXT2FS_DIR_LOST_* */
};

typedef int (*ext2fs_dir_walk_func)(ext2_filsys fs,
				    struct ext2_dir_entry *de,
				    unsigned int rec_space, void *priv_data);
typedef void (*ext2fs_dir_damage_func)(ext2_filsys fs,
				       const struct ext2fs_dir_damage *d,
				       void *priv_data);

extern errcode_t ext2fs_dir_walk(ext2_filsys fs, ext2_ino_t dir,
				 struct ext2_inode *inode,
				 ext2fs_dir_walk_func func,
				 ext2fs_dir_damage_func damage,
				 void *priv_data);
extern const char *ext2fs_dir_lost_string(int lost);

/* inode_check.c */
extern errcode_t ext2fs_check_linked_inode(ext2_filsys fs, ext2_ino_t ino,
					   const struct ext2_inode *inode);

/* fill_extents.c: a new file's data, staged into fresh extents */
struct ext2fs_extent_fill;
/* Told of each range of blocks the filler allocates for data */
typedef void (*ext2fs_fill_alloc_func)(ext2_filsys fs, blk64_t blk,
				       blk64_t len, void *priv_data);
extern errcode_t ext2fs_extent_fill_new(ext2_filsys fs, size_t stage_size,
					struct ext2fs_extent_fill **ret);
extern void ext2fs_extent_fill_free(struct ext2fs_extent_fill *f);
extern void ext2fs_extent_fill_set_alloc_func(struct ext2fs_extent_fill *f,
					      ext2fs_fill_alloc_func func,
					      void *priv_data);
extern errcode_t ext2fs_extent_fill_start(struct ext2fs_extent_fill *f,
					  ext2_ino_t ino,
					  struct ext2_inode *inode);
extern errcode_t ext2fs_extent_fill_write(struct ext2fs_extent_fill *f,
					  __u64 off, const void *data,
					  size_t len);
extern void ext2fs_extent_fill_drop(struct ext2fs_extent_fill *f);
extern errcode_t ext2fs_extent_fill_finish(struct ext2fs_extent_fill *f);

#endif /* EXT4_CRYPT_H */
