/*
 * online_uapi.h --- the uapi of the keyless backup and restore ioctls
 * of contrib/kernel (patches 0001, 0003, 0006 and 0008), for backup
 * --online and the tests' online_ioctl, until a released kernel's
 * <linux/fscrypt.h> has it
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#ifndef E2CB_ONLINE_UAPI_H
#define E2CB_ONLINE_UAPI_H

#include <sys/ioctl.h>
#include <linux/types.h>

#ifndef FS_IOC_READ_RAW_DIR
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
#define FSCRYPT_RAW_DIRENT_MAX_SIZE	288

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
	__u64 end_lblk;		/* i_size's blocks, or verity metadata's */
	__u32 __reserved[2];
};

#define FS_IOC_READ_RAW_DIR	_IOWR('f', 28, struct fscrypt_read_raw_dir_arg)
#define FS_IOC_GET_RAW_ENTRY	_IOWR('f', 29, struct fscrypt_get_raw_entry_arg)
#define FS_IOC_READ_RAW_DATA	_IOWR('f', 30, struct fscrypt_read_raw_data_arg)
#endif

/* The write side, contrib/kernel patches 0006 and 0008 */
#ifndef FS_IOC_CREATE_RAW
struct fscrypt_create_raw_arg {
	struct fscrypt_entry_name entry;
	__u32 mode;
#define FSCRYPT_CREATE_RAW_HASH		0x00000001
#define FSCRYPT_CREATE_RAW_LINK		0x00000002
#define FSCRYPT_CREATE_RAW_CASEFOLD	0x00000004
	__u32 flags;
	__u32 uid;
	__u32 gid;
	__u32 rdev_major;
	__u32 rdev_minor;
	__u32 hash;
	__u32 minor_hash;
	__u32 metadata_size;
	__u32 __pad;
	__u8 metadata[FSCRYPT_RAW_METADATA_MAX_SIZE];
	__u64 target;
	__u32 target_size;
	__s32 link_dirfd;
	struct fscrypt_entry_name link;
	__u64 ino;
	__u32 __reserved[8];
};

struct fscrypt_write_raw_data_arg {
	struct fscrypt_entry_name entry;
	__u64 lblk;
	__u64 buf;
	__u32 nr_blocks;
	__u32 block_size;
	__u64 ino;
	__u32 __reserved[8];
};

#define FS_IOC_CREATE_RAW	_IOWR('f', 31, struct fscrypt_create_raw_arg)
#define FS_IOC_WRITE_RAW_DATA	_IOWR('f', 32, struct fscrypt_write_raw_data_arg)
#endif

#endif /* E2CB_ONLINE_UAPI_H */
