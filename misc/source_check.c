/*
 * source_check.c --- is a source or a target in use, however it is reached?
 *
 * ext2fs_check_mount_point() knows the name it is given.  The kernel may
 * reach the same blocks through another loop device over the same image
 * file, a device-mapper or md device stacked on it, or a bind mount, and
 * a restore may be writing them.  Gather what shows these blocks -- the
 * image file, every loop device over it, every holder above those --
 * then ask of each whether it is mounted, locked by a restore or held
 * open exclusively, and say what was found.
 *
 * This file may be redistributed under the terms of the GNU General
 * Public License, version 2.
 */

#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/loop.h>
#include <et/com_err.h>
#include "e2cryptbak.h"

#define SC_MAX_OBJS	32
#define SC_LOOP_MAJOR	7

/* A block device, or the image file, that shows the source's blocks */
struct sc_obj {
	int	is_file;
	dev_t	rdev;			/* block device */
	dev_t	dev;			/* the inode that is locked */
	ino_t	ino;
	char	node[PATH_MAX];		/* /dev/loop3, or a file */
	char	how[256];		/* how the source reaches it */
};

struct sc_state {
	const char	*device;
	int		for_write;
	int		nolock;		/* the restore could not lock it */
	struct stat	st;		/* @device: a restore locks it */
	struct sc_obj	obj[SC_MAX_OBJS];
	int		nobj;
};

/* Messages cut short are better than none: snprintf without the warning */
static void say(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/* A one-line sysfs file, without its newline */
static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, size, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* The kernel's name of a block device: loop3, dm-0, sda1 */
static int kernel_name(dev_t rdev, char *name, size_t size)
{
	char path[64], link[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(rdev),
		 minor(rdev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -1;
	link[n] = 0;
	base = strrchr(link, '/');
	say(name, size, "%s", base ? base + 1 : link);
	return 0;
}

static struct sc_obj *find_obj(struct sc_state *sc, int is_file, dev_t rdev,
			       dev_t dev, ino_t ino)
{
	int i;

	for (i = 0; i < sc->nobj; i++) {
		struct sc_obj *o = &sc->obj[i];

		if (o->is_file != is_file)
			continue;
		if (is_file ? (o->dev == dev && o->ino == ino) :
		    o->rdev == rdev)
			return o;
	}
	return NULL;
}

/* Add block device @rdev, reached as @how; NULL if known or no room */
static struct sc_obj *add_blockdev(struct sc_state *sc, dev_t rdev,
				   const char *node, const char *how)
{
	struct sc_obj *o;
	struct stat st;
	char name[64];

	if (find_obj(sc, 0, rdev, 0, 0) || sc->nobj >= SC_MAX_OBJS)
		return NULL;
	o = &sc->obj[sc->nobj++];
	memset(o, 0, sizeof(*o));
	o->rdev = rdev;
	if (node)
		snprintf(o->node, sizeof(o->node), "%s", node);
	else if (!kernel_name(rdev, name, sizeof(name)))
		say(o->node, sizeof(o->node), "/dev/%s", name);
	else
		snprintf(o->node, sizeof(o->node), "block device %u:%u",
			 major(rdev), minor(rdev));
	if (!stat(o->node, &st)) {
		o->dev = st.st_dev;
		o->ino = st.st_ino;
	}
	say(o->how, sizeof(o->how), "%s", how);
	return o;
}

static void add_file(struct sc_state *sc, const struct stat *st,
		     const char *name, const char *how)
{
	struct sc_obj *o;

	if (find_obj(sc, 1, 0, st->st_dev, st->st_ino) ||
	    sc->nobj >= SC_MAX_OBJS)
		return;
	o = &sc->obj[sc->nobj++];
	memset(o, 0, sizeof(*o));
	o->is_file = 1;
	o->dev = st->st_dev;
	o->ino = st->st_ino;
	say(o->node, sizeof(o->node), "%s", name);
	say(o->how, sizeof(o->how), "%s", how);
}

static int loop_status(const char *name, struct loop_info64 *info)
{
	char node[80];
	int fd, ret;

	say(node, sizeof(node), "/dev/%s", name);
	fd = open(node, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = ioctl(fd, LOOP_GET_STATUS64, info);
	close(fd);
	return ret;
}

/* Byte ranges of the backing file; a size limit of 0 is "to the end" */
static int overlap(const struct loop_info64 *a, const struct loop_info64 *b)
{
	uint64_t a_end = a->lo_sizelimit ? a->lo_offset + a->lo_sizelimit :
		UINT64_MAX;
	uint64_t b_end = b->lo_sizelimit ? b->lo_offset + b->lo_sizelimit :
		UINT64_MAX;

	return a->lo_offset < b_end && b->lo_offset < a_end;
}

/*
 * Every bound loop device whose backing file is @src's (lo_device and
 * lo_inode, the file's st_dev and st_ino) over an overlapping range.
 */
static void add_loops_over(struct sc_state *sc,
			   const struct loop_info64 *src, const char *how)
{
	struct loop_info64 info;
	struct dirent *de;
	char path[PATH_MAX], buf[32];
	unsigned int ma, mi;
	DIR *d;

	d = opendir("/sys/block");
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "loop", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
		if (read_line(path, buf, sizeof(buf)) ||
		    sscanf(buf, "%u:%u", &ma, &mi) != 2)
			continue;
		memset(&info, 0, sizeof(info));
		if (loop_status(de->d_name, &info) ||
		    info.lo_device != src->lo_device ||
		    info.lo_inode != src->lo_inode || !overlap(&info, src))
			continue;
		say(path, sizeof(path), "%s /dev/%s", how, de->d_name);
		add_blockdev(sc, makedev(ma, mi), NULL, path);
	}
	closedir(d);
}

/* What @o holds up, as the kernel links it: dm, md, ... */
static void add_holders(struct sc_state *sc, const struct sc_obj *o)
{
	struct dirent *de;
	char path[PATH_MAX], buf[32], how[sizeof(o->how)];
	unsigned int ma, mi;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/holders",
		 major(o->rdev), minor(o->rdev));
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/block/%s/dev",
			 de->d_name);
		if (read_line(path, buf, sizeof(buf)) ||
		    sscanf(buf, "%u:%u", &ma, &mi) != 2)
			continue;
		say(how, sizeof(how), "%s%s /dev/%s", o->how,
			 o->how[0] ? ", held by" : " is held by", de->d_name);
		add_blockdev(sc, makedev(ma, mi), NULL, how);
	}
	closedir(d);
}

/* The backing file of loop device @name, as sysfs (or the ioctl) names it */
static void backing_name(const char *name, const struct loop_info64 *info,
			 char *buf, size_t size)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", name);
	if (read_line(path, buf, size))
		snprintf(buf, size, "%.64s", (const char *) info->lo_file_name);
}

/* Block device @st, the source; for a loop device, its backing file */
static int gather_blockdev(struct sc_state *sc, const struct stat *st,
			   struct loop_info64 *info, char *how, size_t size)
{
	char name[64], node[80], file[PATH_MAX];
	struct sc_obj *o;
	struct stat fst;
	size_t len;

	how[0] = 0;
	if (kernel_name(st->st_rdev, name, sizeof(name))) {
		add_blockdev(sc, st->st_rdev, sc->device, how);
		return 0;
	}
	say(node, sizeof(node), "/dev/%s", name);
	if (strcmp(sc->device, node))
		say(how, size, " is %s", node);
	o = add_blockdev(sc, st->st_rdev, node, how);
	/* a node of our own (mknod): a restore through it locks it */
	if (o && (o->dev != st->st_dev || o->ino != st->st_ino))
		add_file(sc, st, sc->device, "");
	if (major(st->st_rdev) != SC_LOOP_MAJOR || loop_status(name, info))
		return 0;
	backing_name(name, info, file, sizeof(file));
	len = strlen(how);
	say(how + len, size - len, "%s a loop device over %s",
		 len ? "," : " is", file);
	/* where a restore through another loop device takes its lock */
	memset(&fst, 0, sizeof(fst));
	fst.st_dev = info->lo_device;
	fst.st_ino = info->lo_inode;
	add_file(sc, &fst, file, how);
	len = strlen(how);
	snprintf(how + len, size - len, ", the backing file of");
	return 1;
}

/* The image file or the block device @st, its loop siblings, holders */
static void gather(struct sc_state *sc, const struct stat *st)
{
	struct loop_info64 info;
	char how[256];
	int i, loops = 0;

	memset(&info, 0, sizeof(info));
	if (S_ISREG(st->st_mode)) {
		add_file(sc, st, sc->device, "");
		info.lo_device = st->st_dev;
		info.lo_inode = st->st_ino;
		snprintf(how, sizeof(how), " is the backing file of");
		loops = 1;
	} else if (S_ISBLK(st->st_mode)) {
		loops = gather_blockdev(sc, st, &info, how, sizeof(how));
	}
	if (loops)
		add_loops_over(sc, &info, how);
	/* grows as holders are found: a breadth-first walk up the stack */
	for (i = 0; i < sc->nobj; i++)
		if (!sc->obj[i].is_file)
			add_holders(sc, &sc->obj[i]);
}

/* Octal escapes of mountinfo (\040 for a space), decoded in place */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (s[1] - '0') << 6 | (s[2] - '0') << 3 |
				(s[3] - '0');
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = 0;
}

/*
 * Is @rdev mounted in this mount namespace?  Bind mounts show the same
 * major:minor; the superblock's options (after " - ") say whether the
 * filesystem can change, whatever a read-only bind mount says.  @mtpt
 * gets a mount point, one mounted read-write if there is one.
 */
static int find_mount(dev_t rdev, char *mtpt, size_t size, int *rw)
{
	char *line = NULL, *f[6], *sep, *save, *sb_opts;
	unsigned int ma, mi;
	int found = 0, i;
	size_t n = 0;
	FILE *fp;

	*rw = 0;
	fp = fopen("/proc/self/mountinfo", "re");
	if (!fp)
		return 0;
	while (getline(&line, &n, fp) > 0) {
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = 0;
		for (i = 0; i < 6; i++)
			if (!(f[i] = strtok_r(i ? NULL : line, " ", &save)))
				break;
		if (i < 6 || sscanf(f[2], "%u:%u", &ma, &mi) != 2 ||
		    makedev(ma, mi) != rdev)
			continue;
		/* fstype, source, then the superblock's options */
		strtok_r(sep + 3, " ", &save);
		strtok_r(NULL, " ", &save);
		sb_opts = strtok_r(NULL, " \n", &save);
		if (sb_opts && !strncmp(sb_opts, "rw", 2) &&
		    (sb_opts[2] == ',' || !sb_opts[2]))
			*rw = 1;
		if (!found || !strncmp(f[5], "rw", 2)) {
			unescape(f[4]);
			say(mtpt, size, "%s", f[4]);
		}
		found = 1;
	}
	free(line);
	fclose(fp);
	return found;
}

/*
 * A restore holds flock(LOCK_EX) on its target for its whole run;
 * /proc/locks names the inode and the pid without taking the lock.
 * Our own locks (a restore checking its target) do not count.
 */
static int find_lock(dev_t dev, ino_t ino, int *pid)
{
	char line[256], kind[16], mode[16];
	unsigned int ma, mi;
	unsigned long i_no;
	int found = 0, p;
	FILE *fp;

	fp = fopen("/proc/locks", "re");
	if (!fp)
		return 0;
	while (!found && fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%*d: %15s %*s %15s %d %x:%x:%lu", kind,
			   mode, &p, &ma, &mi, &i_no) != 6)
			continue;
		if (strcmp(kind, "FLOCK") || strcmp(mode, "WRITE") ||
		    makedev(ma, mi) != dev || i_no != ino || p == getpid())
			continue;
		*pid = p;
		found = 1;
	}
	fclose(fp);
	return found;
}

/*
 * Is @pid an e2cryptbak restore?  Its arguments say, even under a
 * wrapper such as valgrind: a program named e2cryptbak, then "restore".
 */
static int is_restore(int pid)
{
	char path[64], buf[4096], *p, *end, *base;
	int seen = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pid <= 0 || fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	for (p = buf, end = buf + n; p < end; p += strlen(p) + 1) {
		if (seen && !strcmp(p, "restore"))
			return 1;
		base = strrchr(p, '/');
		seen = !strcmp(base ? base + 1 : p, "e2cryptbak");
	}
	return 0;
}

/*
 * Is @o under a restore's flock?  Asked of the lock itself (/proc/locks
 * leaves out the locks of processes in other PID namespaces, and reading
 * it waits for an RCU grace period); /proc/locks only names the holder.
 * A restore's own target is under its own lock, which keeps every other
 * one off; when it could not take it, the holder is named.
 */
static int locked(const struct sc_state *sc, const struct sc_obj *o,
		  int *pid)
{
	struct stat st;
	int fd, busy;

	*pid = 0;
	if (sc->for_write && o->dev == sc->st.st_dev &&
	    o->ino == sc->st.st_ino)
		return sc->nolock && find_lock(o->dev, o->ino, pid);
	fd = open(o->node, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return find_lock(o->dev, o->ino, pid);
	if (fstat(fd, &st) || st.st_dev != o->dev || st.st_ino != o->ino) {
		close(fd);
		return find_lock(o->dev, o->ino, pid);
	}
	/* closing it lets go of our shared lock at once */
	busy = flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	if (busy)
		find_lock(o->dev, o->ino, pid);
	return busy;
}

/*
 * Held open with O_EXCL: mounted in another mount namespace, say.  An
 * unmount can let go of the device a moment after umount(8) returns
 * (the last reference may be dropped by a kernel worker), so a holder
 * must still be there after a second.
 */
static int held_exclusive(const char *node)
{
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	int fd, tries;

	for (tries = 0; tries < 11; tries++) {
		if (tries)
			nanosleep(&pause, NULL);
		fd = open(node, O_RDONLY | O_EXCL | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (errno != EBUSY)
			return 0;
	}
	return 1;
}

static int has_holders(dev_t rdev)
{
	char path[64];
	struct dirent *de;
	int found = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/holders",
		 major(rdev), minor(rdev));
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (de = readdir(d)) != NULL)
		found = de->d_name[0] != '.';
	closedir(d);
	return found;
}

/* Say what holds @o and return nonzero, or return 0 */
static int report_obj(const struct sc_state *sc, const struct sc_obj *o)
{
	const char *which = o->how[0] ? ", which" : "";
	char mtpt[PATH_MAX];
	int rw, pid = 0;

	if (!o->is_file && find_mount(o->rdev, mtpt, sizeof(mtpt), &rw) &&
	    (rw || sc->for_write)) {
		com_err(program_name, 0, "%s%s%s is mounted %s on %s; %s",
			sc->device, o->how, which,
			rw ? "read-write" : "read-only", mtpt,
			sc->for_write ?
			"unmount it before writing to it" :
			"unmount it (or remount it read-only) first");
		return 1;
	}
	if (o->ino && locked(sc, o, &pid)) {
		if (is_restore(pid))
			com_err(program_name, 0, "%s%s%s is being written by "
				"%s e2cryptbak restore (pid %d); wait until it "
				"is done", sc->device, o->how, which,
				sc->for_write ? "another" : "an", pid);
		else if (pid > 0)
			com_err(program_name, 0, "%s%s%s is locked for writing "
				"by pid %d", sc->device, o->how, which, pid);
		else
			com_err(program_name, 0, "%s%s%s is locked for writing "
				"by a process out of sight (another PID "
				"namespace)", sc->device, o->how, which);
		return 1;
	}
	return 0;
}

/* Not mounted here, not locked, yet opened exclusively by someone */
static int report_exclusive(const struct sc_state *sc, const struct sc_obj *o)
{
	char mtpt[PATH_MAX];
	int rw;

	if (sc->for_write || o->is_file || has_holders(o->rdev) ||
	    find_mount(o->rdev, mtpt, sizeof(mtpt), &rw) ||
	    !held_exclusive(o->node))
		return 0;
	com_err(program_name, 0, "%s%s%s is held open exclusively by another "
		"program (mounted in another mount namespace, or being "
		"written); stop it first", sc->device, o->how,
		o->how[0] ? ", which" : "");
	return 1;
}

/*
 * With the mmp feature, a node that mounts the filesystem stamps its
 * MMP block every few seconds.  A block that is neither "clean" nor
 * "e2fsck" is in use, or was when the node crashed (or the image was
 * copied): as the kernel does before a mount, read it again after
 * twice the update interval, and refuse if it moved.
 */
static errcode_t check_mmp(const struct sc_state *sc)
{
	struct mmp_struct *mmp;
	unsigned int interval;
	ext2_filsys fs = NULL;
	errcode_t retval;
	__u32 seq;

	if (ext2fs_open2(sc->device, NULL, EXT2_FLAG_SUPER_ONLY |
			 EXT2_FLAG_SKIP_MMP | EXT2_FLAG_64BITS, 0, 0,
			 unix_io_manager, &fs))
		return 0;		/* opening it for real says why */
	retval = 0;
	if (!ext2fs_has_feature_mmp(fs->super))
		goto out;
	retval = ext2fs_mmp_read(fs, fs->super->s_mmp_block, NULL);
	if (retval) {
		com_err(program_name, retval, "while reading the MMP block "
			"of %s", sc->device);
		goto out;
	}
	mmp = fs->mmp_cmp;
	seq = mmp->mmp_seq;
	if (seq == EXT4_MMP_SEQ_CLEAN)
		goto out;
	if (seq != EXT4_MMP_SEQ_FSCK) {
		interval = fs->super->s_mmp_update_interval;
		if (interval < EXT4_MMP_MIN_CHECK_INTERVAL)
			interval = EXT4_MMP_MIN_CHECK_INTERVAL;
		if (mmp->mmp_check_interval > interval)
			interval = mmp->mmp_check_interval;
		/* the kernel's cap: a forged interval must not hang us */
		if (interval > EXT4_MMP_MAX_UPDATE_INTERVAL)
			interval = EXT4_MMP_MAX_UPDATE_INTERVAL;
		/* as ext2fs_mmp_start() waits */
		interval = interval < 59 ? interval * 2 + 1 : interval + 60;
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
		interval = 0;		/* a fuzzer cannot wait */
#endif
		com_err(program_name, 0, "%s: its MMP block says node %.64s "
			"uses it; checking again in %u seconds", sc->device,
			(char *) mmp->mmp_nodename, interval);
		sleep(interval);
		retval = ext2fs_mmp_read(fs, fs->super->s_mmp_block, NULL);
		if (retval) {
			com_err(program_name, retval, "while reading the MMP "
				"block of %s", sc->device);
			goto out;
		}
		mmp = fs->mmp_cmp;
		if (mmp->mmp_seq == seq) {
			com_err(program_name, 0, "%s: its MMP block did not "
				"change: a copy, or a node that stopped; going "
				"on", sc->device);
			goto out;
		}
	}
	com_err(program_name, 0, "%s is in use on node %.64s (%s on its device "
		"%.32s, says its MMP block); stop it there first", sc->device,
		(char *) mmp->mmp_nodename,
		mmp->mmp_seq == EXT4_MMP_SEQ_FSCK ? "e2fsck runs" : "mounted",
		(char *) mmp->mmp_bdevname);
	retval = EXT2_ET_SOURCE_BUSY;
out:
	ext2fs_mmp_stop(fs);	/* read-only: just closes its descriptor */
	ext2fs_free(fs);
	return retval;
}

/*
 * Refuse a source (or, @for_write, a restore target) that the kernel
 * or a restore may change under us, saying what holds it.  Reading is
 * fine where every mount is read-only; writing needs no mount at all.
 */
errcode_t e2cb_check_source(const char *device, int flags)
{
	struct sc_state *sc;
	struct stat st;
	errcode_t retval = 0;
	int i;

	if (stat(device, &st))
		return 0;		/* opening it says why */
	sc = calloc(1, sizeof(*sc));
	if (!sc) {
		com_err(program_name, ENOMEM, "while checking %s", device);
		return ENOMEM;
	}
	sc->device = device;
	sc->for_write = !!(flags & E2CB_CHECK_WRITE);
	sc->nolock = !!(flags & E2CB_CHECK_NOLOCK);
	sc->st = st;
	gather(sc, &st);
	for (i = 0; i < sc->nobj && !retval; i++)
		if (report_obj(sc, &sc->obj[i]))
			retval = EXT2_ET_SOURCE_BUSY;
	/* MMP names the node; an exclusive opener could be anything */
	if (!retval && !sc->for_write)
		retval = check_mmp(sc);
	for (i = 0; i < sc->nobj && !retval; i++)
		if (report_exclusive(sc, &sc->obj[i]))
			retval = EXT2_ET_SOURCE_BUSY;
	free(sc);
	return retval;
}
