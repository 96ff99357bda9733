/*
 * fscrypt_helper.c --- drive the kernel's fscrypt ioctls for test fixtures
 *
 * A small standalone tool used by tests/tools/mkfixture to add keys, set
 * policies and read them back on a mounted ext4 filesystem (and to make
 * a unix socket inode, which the shell cannot; and, for the kernel lab,
 * to enable and measure fs-verity).  It needs only libc and the
 * <linux/fscrypt.h> and <linux/fsverity.h> uapi headers.
 *
 * Key bytes are read from a file (never the command line, so they do not
 * show up in ps), wiped after use and never printed.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>

static const char *prog = "fscrypt_helper";

/* Newer than some uapi headers */
#ifndef FSCRYPT_MODE_SM4_XTS
#define FSCRYPT_MODE_SM4_XTS	7
#define FSCRYPT_MODE_SM4_CTS	8
#endif

static const struct {
	const char *name;
	int mode;
} modes[] = {
	{ "aes256xts", FSCRYPT_MODE_AES_256_XTS },
	{ "aes256cts", FSCRYPT_MODE_AES_256_CTS },
	{ "aes128cbc", FSCRYPT_MODE_AES_128_CBC },
	{ "aes128cts", FSCRYPT_MODE_AES_128_CTS },
	{ "sm4xts", FSCRYPT_MODE_SM4_XTS },
	{ "sm4cts", FSCRYPT_MODE_SM4_CTS },
	{ "adiantum", FSCRYPT_MODE_ADIANTUM },
	{ "aes256hctr2", FSCRYPT_MODE_AES_256_HCTR2 },
};

static int mode_number(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(name, modes[i].name))
			return modes[i].mode;
	fprintf(stderr, "%s: unknown mode %s; one of:", prog, name);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		fprintf(stderr, " %s", modes[i].name);
	fputc('\n', stderr);
	exit(1);
}

/*
 * Older uapi headers call the v2 log2_data_unit_size byte __reserved[0];
 * use our own copy of the layout so the build does not depend on that.
 */
struct helper_policy_v2 {
	__u8 version;
	__u8 contents_encryption_mode;
	__u8 filenames_encryption_mode;
	__u8 flags;
	__u8 log2_data_unit_size;
	__u8 reserved[3];
	__u8 master_key_identifier[FSCRYPT_KEY_IDENTIFIER_SIZE];
};

_Static_assert(sizeof(struct helper_policy_v2) ==
	       sizeof(struct fscrypt_policy_v2), "v2 policy layout");

struct helper_get_policy_ex {
	__u64 policy_size;
	union {
		__u8 version;
		struct fscrypt_policy_v1 v1;
		struct helper_policy_v2 v2;
	} policy;
};

static void usage(void)
{
	fprintf(stderr,
		"Usage: %s COMMAND ARGS\n"
		"  add_key MNT KEYFILE\n"
		"  add_key_v1 MNT KEYFILE DESCRIPTOR_HEX\n"
		"  set_policy DIR v1|v2 KEYID_OR_DESCRIPTOR_HEX [pad=4|8|16|32]\n"
		"             [iv_ino_lblk_64] [iv_ino_lblk_32] [direct_key]\n"
		"             [du=LOG2] [contents=MODE] [filenames=MODE]\n"
		"  get_policy PATH\n"
		"  get_nonce PATH\n"
		"  remove_key MNT KEYID_HEX\n"
		"  remove_key_v1 MNT DESCRIPTOR_HEX\n"
		"  mksock PATH\n"
		"  enable_verity FILE [BLOCKSIZE]\n"
		"  measure_verity FILE\n"
		"MODE: aes256xts aes256cts aes128cbc aes128cts sm4xts sm4cts\n"
		"      adiantum aes256hctr2\n", prog);
	exit(2);
}

static void die_errno(const char *what, const char *path)
{
	fprintf(stderr, "%s: %s %s: %s\n", prog, what, path, strerror(errno));
	exit(1);
}

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "%s: %s%s%s\n", prog, msg, arg ? ": " : "",
		arg ? arg : "");
	exit(1);
}

static void print_hex(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%02x", p[i]);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse exactly n bytes of hex; anything else is an error. */
static void parse_hex(const char *s, unsigned char *out, size_t n,
		      const char *what)
{
	size_t i;
	int hi, lo;

	if (strlen(s) != 2 * n) {
		fprintf(stderr, "%s: %s must be %zu hex digits: %s\n",
			prog, what, 2 * n, s);
		exit(1);
	}
	for (i = 0; i < n; i++) {
		hi = hexval((unsigned char) s[2 * i]);
		lo = hexval((unsigned char) s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			die("bad hex digit in", s);
		out[i] = (unsigned char) (hi << 4 | lo);
	}
}

static int open_path(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		die_errno("cannot open", path);
	return fd;
}

/*
 * Read a raw key of 16..64 bytes into buf; returns its length.  One byte
 * more than the maximum is requested so an oversized file is caught.
 */
static size_t read_key(const char *file, unsigned char *buf)
{
	unsigned char tmp[FSCRYPT_MAX_KEY_SIZE + 1];
	size_t len = 0;
	ssize_t r;
	int fd;

	fd = open_path(file, O_RDONLY);
	while (len < sizeof(tmp)) {
		r = read(fd, tmp + len, sizeof(tmp) - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			explicit_bzero(tmp, sizeof(tmp));
			die_errno("cannot read", file);
		}
		if (r == 0)
			break;
		len += r;
	}
	close(fd);
	if (len < 16 || len > FSCRYPT_MAX_KEY_SIZE) {
		explicit_bzero(tmp, sizeof(tmp));
		fprintf(stderr, "%s: key file %s: need 16..%d bytes\n",
			prog, file, FSCRYPT_MAX_KEY_SIZE);
		exit(1);
	}
	memcpy(buf, tmp, len);
	explicit_bzero(tmp, sizeof(tmp));
	return len;
}

static int do_add_key(const char *mnt, const char *keyfile,
		      const char *desc_hex)
{
	struct fscrypt_add_key_arg *arg;
	size_t argsize = sizeof(*arg) + FSCRYPT_MAX_KEY_SIZE;
	int fd, ret, saved;

	arg = calloc(1, argsize);
	if (!arg)
		die("out of memory", NULL);
	arg->raw_size = read_key(keyfile, arg->raw);
	if (desc_hex) {
		arg->key_spec.type = FSCRYPT_KEY_SPEC_TYPE_DESCRIPTOR;
		parse_hex(desc_hex, arg->key_spec.u.descriptor,
			  FSCRYPT_KEY_DESCRIPTOR_SIZE, "descriptor");
	} else {
		arg->key_spec.type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER;
	}

	fd = open_path(mnt, O_RDONLY | O_DIRECTORY);
	ret = ioctl(fd, FS_IOC_ADD_ENCRYPTION_KEY, arg);
	saved = errno;
	close(fd);
	/* The key must not outlive the ioctl in our memory. */
	explicit_bzero(arg->raw, FSCRYPT_MAX_KEY_SIZE);
	if (ret) {
		errno = saved;
		die_errno("FS_IOC_ADD_ENCRYPTION_KEY on", mnt);
	}
	if (desc_hex)
		print_hex(arg->key_spec.u.descriptor,
			  FSCRYPT_KEY_DESCRIPTOR_SIZE);
	else
		print_hex(arg->key_spec.u.identifier,
			  FSCRYPT_KEY_IDENTIFIER_SIZE);
	putchar('\n');
	free(arg);
	return 0;
}

static int do_remove_key(const char *mnt, const char *hex, int v1)
{
	struct fscrypt_remove_key_arg arg;
	int fd;

	memset(&arg, 0, sizeof(arg));
	if (v1) {
		arg.key_spec.type = FSCRYPT_KEY_SPEC_TYPE_DESCRIPTOR;
		parse_hex(hex, arg.key_spec.u.descriptor,
			  FSCRYPT_KEY_DESCRIPTOR_SIZE, "descriptor");
	} else {
		arg.key_spec.type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER;
		parse_hex(hex, arg.key_spec.u.identifier,
			  FSCRYPT_KEY_IDENTIFIER_SIZE, "key identifier");
	}
	fd = open_path(mnt, O_RDONLY | O_DIRECTORY);
	if (ioctl(fd, FS_IOC_REMOVE_ENCRYPTION_KEY, &arg))
		die_errno("FS_IOC_REMOVE_ENCRYPTION_KEY on", mnt);
	close(fd);
	/* Busy files keep the key partly alive; callers want to know. */
	if (arg.removal_status_flags & FSCRYPT_KEY_REMOVAL_STATUS_FLAG_FILES_BUSY)
		printf("files_busy\n");
	if (arg.removal_status_flags & FSCRYPT_KEY_REMOVAL_STATUS_FLAG_OTHER_USERS)
		printf("other_users\n");
	return 0;
}

static int pad_flag(const char *s)
{
	if (!strcmp(s, "4"))
		return FSCRYPT_POLICY_FLAGS_PAD_4;
	if (!strcmp(s, "8"))
		return FSCRYPT_POLICY_FLAGS_PAD_8;
	if (!strcmp(s, "16"))
		return FSCRYPT_POLICY_FLAGS_PAD_16;
	if (!strcmp(s, "32"))
		return FSCRYPT_POLICY_FLAGS_PAD_32;
	die("padding must be 4, 8, 16 or 32", s);
	return 0;
}

static int do_set_policy(const char *dir, const char *ver, const char *hex,
			 int argc, char **argv)
{
	struct fscrypt_policy_v1 p1;
	struct helper_policy_v2 p2;
	int flags = FSCRYPT_POLICY_FLAGS_PAD_32, du = 0, v2, fd, i;
	int contents = FSCRYPT_MODE_AES_256_XTS;
	int filenames = FSCRYPT_MODE_AES_256_CTS;
	char *end;
	void *p;

	if (!strcmp(ver, "v1"))
		v2 = 0;
	else if (!strcmp(ver, "v2"))
		v2 = 1;
	else
		die("policy version must be v1 or v2", ver);

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "pad=", 4)) {
			flags = (flags & ~FSCRYPT_POLICY_FLAGS_PAD_MASK) |
				pad_flag(argv[i] + 4);
		} else if (!strcmp(argv[i], "iv_ino_lblk_64")) {
			flags |= FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64;
		} else if (!strcmp(argv[i], "iv_ino_lblk_32")) {
			flags |= FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32;
		} else if (!strcmp(argv[i], "direct_key")) {
			flags |= FSCRYPT_POLICY_FLAG_DIRECT_KEY;
		} else if (!strncmp(argv[i], "contents=", 9)) {
			contents = mode_number(argv[i] + 9);
		} else if (!strncmp(argv[i], "filenames=", 10)) {
			filenames = mode_number(argv[i] + 10);
		} else if (!strncmp(argv[i], "du=", 3)) {
			errno = 0;
			du = strtol(argv[i] + 3, &end, 10);
			if (errno || *end || argv[i][3] == '\0' ||
			    du < 9 || du > 16)
				die("du= wants log2 of the data unit size",
				    argv[i]);
		} else {
			die("unknown policy option", argv[i]);
		}
	}
	/* v1 knows DIRECT_KEY too; the kernel judges the combinations. */
	if (!v2 && (du || (flags & ~(FSCRYPT_POLICY_FLAGS_PAD_MASK |
				     FSCRYPT_POLICY_FLAG_DIRECT_KEY))))
		die("du= and iv_ino_lblk_* need a v2 policy", NULL);

	if (v2) {
		memset(&p2, 0, sizeof(p2));
		p2.version = FSCRYPT_POLICY_V2;
		p2.contents_encryption_mode = contents;
		p2.filenames_encryption_mode = filenames;
		p2.flags = flags;
		p2.log2_data_unit_size = du;
		parse_hex(hex, p2.master_key_identifier,
			  FSCRYPT_KEY_IDENTIFIER_SIZE, "key identifier");
		p = &p2;
	} else {
		memset(&p1, 0, sizeof(p1));
		p1.version = FSCRYPT_POLICY_V1;
		p1.contents_encryption_mode = contents;
		p1.filenames_encryption_mode = filenames;
		p1.flags = flags;
		parse_hex(hex, p1.master_key_descriptor,
			  FSCRYPT_KEY_DESCRIPTOR_SIZE, "descriptor");
		p = &p1;
	}

	fd = open_path(dir, O_RDONLY | O_DIRECTORY);
	/* The ioctl tells v1 from v2 by the version byte, not by size. */
	if (ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, p))
		die_errno("FS_IOC_SET_ENCRYPTION_POLICY on", dir);
	close(fd);
	return 0;
}

/*
 * Open a file or directory for a read-only ioctl.  O_NONBLOCK keeps fifos
 * from blocking; symlinks cannot be opened at all (and an O_PATH fd takes
 * no ioctls), so say so instead of following them.
 */
static int open_any(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ELOOP)
		die("symlinks take no fscrypt ioctls", path);
	if (fd < 0)
		die_errno("cannot open", path);
	return fd;
}

static int do_get_policy(const char *path)
{
	struct helper_get_policy_ex arg;
	int fd;

	memset(&arg, 0, sizeof(arg));
	arg.policy_size = sizeof(arg.policy);
	fd = open_any(path);
	if (ioctl(fd, FS_IOC_GET_ENCRYPTION_POLICY_EX, &arg)) {
		if (errno == ENODATA)
			die("not encrypted", path);
		die_errno("FS_IOC_GET_ENCRYPTION_POLICY_EX on", path);
	}
	close(fd);

	switch (arg.policy.version) {
	case FSCRYPT_POLICY_V1:
		printf("v1 contents=%u filenames=%u flags=0x%02x pad=%d "
		       "descriptor=",
		       arg.policy.v1.contents_encryption_mode,
		       arg.policy.v1.filenames_encryption_mode,
		       arg.policy.v1.flags,
		       4 << (arg.policy.v1.flags & FSCRYPT_POLICY_FLAGS_PAD_MASK));
		print_hex(arg.policy.v1.master_key_descriptor,
			  FSCRYPT_KEY_DESCRIPTOR_SIZE);
		break;
	case FSCRYPT_POLICY_V2:
		printf("v2 contents=%u filenames=%u flags=0x%02x pad=%d "
		       "du=%u identifier=",
		       arg.policy.v2.contents_encryption_mode,
		       arg.policy.v2.filenames_encryption_mode,
		       arg.policy.v2.flags,
		       4 << (arg.policy.v2.flags & FSCRYPT_POLICY_FLAGS_PAD_MASK),
		       arg.policy.v2.log2_data_unit_size);
		print_hex(arg.policy.v2.master_key_identifier,
			  FSCRYPT_KEY_IDENTIFIER_SIZE);
		break;
	default:
		fprintf(stderr, "%s: %s: unknown policy version %u\n",
			prog, path, arg.policy.version);
		return 1;
	}
	putchar('\n');
	return 0;
}

static int do_get_nonce(const char *path)
{
	unsigned char nonce[16];
	int fd;

	fd = open_any(path);
	if (ioctl(fd, FS_IOC_GET_ENCRYPTION_NONCE, nonce))
		die_errno("FS_IOC_GET_ENCRYPTION_NONCE on", path);
	close(fd);
	print_hex(nonce, sizeof(nonce));
	putchar('\n');
	return 0;
}

/*
 * Leave a unix socket inode behind: fixtures want one, and the shell has
 * no portable way to make it.
 */
static int do_mksock(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		die("socket path too long", path);
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die_errno("cannot create socket for", path);
	if (bind(fd, (struct sockaddr *) &sun, sizeof(sun)))
		die_errno("cannot bind", path);
	close(fd);
	return 0;
}

/* fs-verity with SHA-256, no salt: what fsverity-utils does by default */
static int do_enable_verity(const char *path, const char *bs)
{
	struct fsverity_enable_arg arg;
	char *end;
	int fd;

	memset(&arg, 0, sizeof(arg));
	arg.version = 1;
	arg.hash_algorithm = FS_VERITY_HASH_ALG_SHA256;
	arg.block_size = 4096;
	if (bs) {
		errno = 0;
		arg.block_size = strtoul(bs, &end, 10);
		if (errno || *end || !*bs)
			die("bad block size", bs);
	}
	/* the kernel refuses a file open for writing */
	fd = open_path(path, O_RDONLY);
	if (ioctl(fd, FS_IOC_ENABLE_VERITY, &arg))
		die_errno("FS_IOC_ENABLE_VERITY on", path);
	close(fd);
	return 0;
}

static int do_measure_verity(const char *path)
{
	struct {
		struct fsverity_digest d;
		__u8 buf[64];
	} arg;
	int fd;

	memset(&arg, 0, sizeof(arg));
	arg.d.digest_size = sizeof(arg.buf);
	fd = open_path(path, O_RDONLY);
	if (ioctl(fd, FS_IOC_MEASURE_VERITY, &arg))
		die_errno("FS_IOC_MEASURE_VERITY on", path);
	close(fd);
	printf("alg=%u ", arg.d.digest_algorithm);
	print_hex(arg.d.digest, arg.d.digest_size);
	putchar('\n');
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2)
		usage();
	cmd = argv[1];

	if (!strcmp(cmd, "add_key") && argc == 4)
		return do_add_key(argv[2], argv[3], NULL);
	if (!strcmp(cmd, "add_key_v1") && argc == 5)
		return do_add_key(argv[2], argv[3], argv[4]);
	if (!strcmp(cmd, "set_policy") && argc >= 5)
		return do_set_policy(argv[2], argv[3], argv[4],
				     argc - 5, argv + 5);
	if (!strcmp(cmd, "get_policy") && argc == 3)
		return do_get_policy(argv[2]);
	if (!strcmp(cmd, "get_nonce") && argc == 3)
		return do_get_nonce(argv[2]);
	if (!strcmp(cmd, "remove_key") && argc == 4)
		return do_remove_key(argv[2], argv[3], 0);
	if (!strcmp(cmd, "remove_key_v1") && argc == 4)
		return do_remove_key(argv[2], argv[3], 1);
	if (!strcmp(cmd, "mksock") && argc == 3)
		return do_mksock(argv[2]);
	if (!strcmp(cmd, "enable_verity") && (argc == 3 || argc == 4))
		return do_enable_verity(argv[2], argc == 4 ? argv[3] : NULL);
	if (!strcmp(cmd, "measure_verity") && argc == 3)
		return do_measure_verity(argv[2]);
	usage();
	return 2;
}
