/*
 * source_online.h --- backup --online: what source_online.c (the walk,
 * the entries) and source_online_fs.c (the data, the mount, the
 * command) share; the uapi of contrib/kernel, repeated here as no
 * released kernel has it
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_SOURCE_ONLINE_H
#define E2CB_SOURCE_ONLINE_H

#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/types.h>
#include "e2cryptbak.h"
#include "source.h"

#ifndef FS_IOC_READ_RAW_DIR
/* the uapi of contrib/kernel (patches 0001 and 0003) */
struct fscrypt_entry_name {
	__u64 pos;
	__u32 name_len;
	__u32 __reserved;
	__u8 name[256];
};

struct fscrypt_raw_dirent {
	__u64 ino;
	__u64 pos;
	__u16 rec_len;
	__u8 name_len;
	__u8 file_type;
#define FSCRYPT_RAW_DIRENT_HASH		0x00000001
	__u32 flags;
	__u32 hash;
	__u32 minor_hash;
	__u8 name[];
};

struct fscrypt_read_raw_dir_arg {
	__u64 pos;
	__u64 buf;
	__u32 buf_size;
	__u32 filled;
#define FSCRYPT_READ_RAW_DIR_EOF	0x00000001
	__u32 flags;
	__u32 __reserved[7];
};

#define FSCRYPT_RAW_METADATA_MAX_SIZE	64
struct fscrypt_get_raw_entry_arg {
	struct fscrypt_entry_name entry;
	__u64 ino;
	__u32 mode;
	__u32 metadata_size;
	__u8 metadata[FSCRYPT_RAW_METADATA_MAX_SIZE];
	__u64 target;
	__u32 target_size;
	__u32 __reserved[5];
};

struct fscrypt_read_raw_data_arg {
	struct fscrypt_entry_name entry;
	__u64 lblk;
	__u64 buf;
	__u32 buf_size;
	__u32 nr_blocks;
#define FSCRYPT_READ_RAW_DATA_HOLE	0x00000001
	__u32 flags;
	__u32 block_size;
	__u64 i_size;
	__u64 ino;
	__u32 __reserved[4];
};

#define FS_IOC_READ_RAW_DIR	_IOWR('f', 28, struct fscrypt_read_raw_dir_arg)
#define FS_IOC_GET_RAW_ENTRY	_IOWR('f', 29, struct fscrypt_get_raw_entry_arg)
#define FS_IOC_READ_RAW_DATA	_IOWR('f', 30, struct fscrypt_read_raw_data_arg)
#endif

#define RAW_DIR_BUF	65536
#define MAX_DEPTH	4096
#define TARGET_MAX	4096
/* what was read is not what is there now */
#define E2CB_CHANGED	ESTALE

/* A directory entry: the name as stored, and a name to open it by */
struct online_child {
	uint64_t ino, pos;
	struct ext4_encrypted_name name;
	char shown[256];		/* readdir's: a no-key name, maybe */
	int found;
};

struct online {
	struct e2cb_writer *w;
	struct e2cb_path_buf path;
	struct e2cb_ino_map links;
	dev_t dev;
	uint64_t mnt_id;
	uint32_t root_ino;
	unsigned int bs;
	uint64_t entries, inodes, encrypted, data_bytes, skipped;
	uint8_t *buf;			/* E2CB_WRITER_BUF: a read */
	uint8_t *keep;			/* E2CB_WRITER_BUF: the data kept */
	char why[80];			/* what was being done, for skip() */
	struct e2cb_stretch *st;
	size_t count, size;
};

/* What one entry holds, read before its header goes out */
struct online_entry {
	struct statx stx;
	int fd;				/* O_PATH */
	int enc;
	uint8_t meta[FSCRYPT_RAW_METADATA_MAX_SIZE];
	uint32_t meta_len;
	uint64_t i_size;
	const uint8_t *ctx;
	size_t ctx_len;
	uint8_t target[TARGET_MAX + 1];
	size_t target_len;
	int have_target;
};

/* One piece of a file's data: @len bytes at @off, or a hole */
struct piece {
	uint64_t off, len;
	int hole;
	const uint8_t *data;
};

struct data_reader {
	int fd;				/* the file, or its directory */
	int enc;
	const struct online_child *c;
	uint64_t i_size;
	uint64_t pos;			/* next byte */
	struct fscrypt_read_raw_data_arg da;
};

/* source_online.c */
extern int e2cb_online_reopen(int fd, int flags);
extern void e2cb_online_entry_name(struct fscrypt_entry_name *en,
				   const struct online_child *c);
extern errcode_t e2cb_online_one(struct online *o, int dfd, int parent_enc,
				 const struct online_child *c,
				 struct online_entry *oe, int depth);

/* source_online_fs.c */
extern errcode_t e2cb_online_read_data(struct online *o,
				       struct data_reader *dr, char *keep,
				       int again);
extern errcode_t e2cb_online_prepare_data(struct online *o,
					  struct online_entry *oe, int dfd,
					  const struct online_child *c,
					  struct data_reader *dr,
					  int *at_hand);

#endif /* E2CB_SOURCE_ONLINE_H */
