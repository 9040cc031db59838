/* fs.c - a read-only in-memory file system with sys_open()/vfs_read(). */
#include "kernel.h"

struct inode_entry {
	const char *path;
	const char *data;
	int readable;
};

static const struct inode_entry files[] = {
	{ "/etc/hostname", "kprobe-debug\n", 1 },
	{ "/proc/version", "Linux version 2.6.99-kp (sample kernel)\n", 1 },
	{ "/etc/motd", "Probes welcome. Breakpoints too.\n", 1 },
	{ "/root/secret", "nope\n", 0 },
};

#define MAX_FILES 32
static struct file file_table[MAX_FILES];
static long open_count;
const char *last_failed_open;

static noinline const struct inode_entry *path_lookup(const char *filename)
{
	for (unsigned i = 0; i < ARRAY_SIZE(files); i++)
		if (strcmp(files[i].path, filename) == 0)
			return &files[i];
	return NULL;
}

/*
 * sys_open: the kretprobe example's function. Returns a small fd (>= 3) or
 * -ENOENT for a missing file, -EACCES for an unreadable one, -EMFILE when
 * the table is full.
 */
noinline long sys_open(const char *filename, int flags, int mode)
{
	const struct inode_entry *ino = path_lookup(filename);
	if (!ino) {
		WRITE_ONCE(last_failed_open, filename); /* #BP sys_open_fail */
		return -ENOENT;
	}
	if (!ino->readable || (flags & 3) != O_RDONLY)
		return -EACCES;
#pragma clang loop unroll(disable)
	for (int fd = 3; fd < MAX_FILES; fd++) {
		struct file *f = &file_table[fd];
		if (__atomic_exchange_n(&f->fd, fd, __ATOMIC_ACQ_REL) == 0) {
			f->name = ino->path; /* #BP sys_open_ok */
			f->data = ino->data;
			f->size = strlen(ino->data);
			f->mode = mode;
			atomic_add_return(1, &open_count);
			return fd;
		}
	}
	return -EMFILE;
}

struct file *fget(int fd)
{
	if (fd < 3 || fd >= MAX_FILES || READ_ONCE(file_table[fd].fd) != fd)
		return NULL;
	return &file_table[fd];
}

long sys_close(int fd)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	f->name = NULL;
	f->data = NULL;
	f->size = 0;
	__atomic_store_n(&f->fd, 0, __ATOMIC_RELEASE);
	return 0;
}

/* vfs_read: copy up to count bytes from *pos, advance *pos, return the count. */
noinline ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)
{
	size_t done = 0;
	if (!file || !buf || !pos)
		return -EFAULT;
	while (done < count && (size_t)*pos < file->size) {
		buf[done] = file->data[*pos]; /* #BP vfs_read_loop */
		done++;
		(*pos)++;
	}
	return (ssize_t)done;
}

/*
 * The sysfs `name` attribute of the in-memory file system. Like the many drivers that each
 * have a static name_show of their own, this file's is not the only one:
 * kallsyms lists every copy (kprobe_non_uniq_symbol.tc probes by that name).
 */
static struct kobject fs_kobj = { "samplefs" };

static noinline ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return snprintf(buf, 64, "%s\n", kobj->name);
}

struct kobj_attribute fs_name_attr = { "name", name_show };

/* the attribute's text, as a read of the sysfs file shows it */
ssize_t fs_name_read(char *buf)
{
	return fs_name_attr.show(&fs_kobj, &fs_name_attr, buf);
}

/* Exported to modules (as Linux 2.6's fs/open.c, fs/file.c and fs/read_write.c do). */
EXPORT_SYMBOL_GPL(sys_open);
EXPORT_SYMBOL(sys_close);
EXPORT_SYMBOL(fget);
EXPORT_SYMBOL(vfs_read);
