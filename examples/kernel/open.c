/*
 * open.c - the kernel's side of open(2) and symlink(2) for user processes
 * (Linux's fs/open.c, fs/namei.c, kernel/kthread.c). The user thread
 * (usersvc.c) runs these with the calling process's address space in use
 * (kthread_use_mm), so filename pointers are the process's own: getname
 * copies them with strncpy_from_user, which faults for a bad pointer as
 * Linux's does. The process's descriptors and files live in the emulator
 * (emulator/kernel/fs/vfs.ts): the last step, making the file or the link,
 * is asked of it with the kernel's copy of the names.
 */
#include "kernel.h"

#define PATH_MAX 4096
#define AT_FDCWD -100
#define O_CREAT_FLAG 0100
#define S_IALLUGO 07777

static inline long user_call(long form, long a, long b, long c)
{
	return kp_hypercall4(KP_HC_USER_INIT, form, a, b, c);
}

/* kthread_use_mm: this kernel thread's user accesses now reach mm's memory */
noinline void kthread_use_mm(struct mm_struct *mm)
{
	user_call(KP_USER_USE_MM, (long)mm, 0, 0);
}

noinline void kthread_unuse_mm(struct mm_struct *mm)
{
	user_call(KP_USER_UNUSE_MM, (long)mm, 0, 0);
}

/*
 * strncpy_from_user: copy a NUL-terminated string from user memory; its
 * length, count when no NUL came within count bytes, -EFAULT for memory
 * the process cannot read.
 */
noinline long strncpy_from_user(char *dst, const char __user *src, long count)
{
	return user_call(KP_USER_STRNCPY, (long)dst, (long)src, count);
}

/* include/linux/fs.h's struct filename: the kernel's copy of a user path */
struct filename {
	const char *name;
	const char __user *uptr;
	int refcnt;
	char iname[PATH_MAX];
};

/*
 * names_cache: each CPU's kusersvc thread serves one call at a time, and a
 * call holds two names at most (8 CPUs at most: usersvc.c)
 */
static struct filename names_cache[2 * 8];

noinline struct filename *getname(const char __user *filename)
{
	struct filename *result = NULL;
	long len;

	/*
	 * Claim an entry before copying into it (as __getname's allocation does):
	 * the other CPUs' threads look for a free one at the same time.
	 */
	for (unsigned i = 0; i < ARRAY_SIZE(names_cache); i++) {
		int free = 0;

		if (__atomic_compare_exchange_n(&names_cache[i].refcnt, &free, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			result = &names_cache[i];
			break;
		}
	}
	if (!result)
		return ERR_PTR(-ENOMEM);
	len = strncpy_from_user(result->iname, filename, PATH_MAX);
	if (len <= 0 || len == PATH_MAX) {
		__atomic_store_n(&result->refcnt, 0, __ATOMIC_RELEASE);
		return ERR_PTR(len < 0 ? len : len == 0 ? -ENOENT : -ENAMETOOLONG);
	}
	result->name = result->iname;
	result->uptr = filename;
	return result;
}

noinline void putname(struct filename *name)
{
	if (IS_ERR(name))
		return;
	__atomic_sub_fetch(&name->refcnt, 1, __ATOMIC_RELEASE);
}

/*
 * Where a file is opened: Linux's struct path is the looked-up mount and
 * dentry; here the lookup is the emulator's, so the path is what it is
 * asked with (the directory descriptor, the kernel's copy of the name and
 * the open_how).
 */
struct path {
	int dfd;
	const char *name;
	const struct open_how *how;
};

/* vfs_open: open the file at path; file records the name and the new descriptor */
noinline int vfs_open(const struct path *path, struct file *file)
{
	long fd = user_call(KP_USER_OPEN, path->dfd, (long)path->name, (long)path->how);

	if (fd < 0)
		return (int)fd;
	file->name = path->name;
	file->fd = (int)fd;
	file->mode = (int)path->how->mode;
	return 0;
}

/* do_filp_open + fd_install: the file opened for the process, its new descriptor */
static noinline long do_filp_open(int dfd, struct filename *pathname, const struct open_how *how)
{
	struct path path = { .dfd = dfd, .name = pathname->name, .how = how };
	struct file file = { 0 };
	int err = vfs_open(&path, &file);

	return err < 0 ? err : file.fd;
}

noinline long do_sys_openat2(int dfd, const char __user *filename, struct open_how *how)
{
	struct filename *tmp = getname(filename);
	long fd;

	if (IS_ERR(tmp))
		return PTR_ERR(tmp);
	fd = do_filp_open(dfd, tmp, how);
	putname(tmp);
	return fd;
}

noinline long do_sys_open(int dfd, const char __user *filename, int flags, unsigned short mode)
{
	struct open_how how = {
		.flags = (u64)(unsigned int)flags,
		/* build_open_how: a mode only for a file that may be created */
		.mode = (flags & O_CREAT_FLAG) ? (mode & S_IALLUGO) : 0,
	};
	return do_sys_openat2(dfd, filename, &how);
}

/* the namespace and directory a new name is made in (one of each here) */
struct user_namespace {
	int level;
};
struct inode {
	unsigned long i_ino;
};
struct user_namespace init_user_ns;
static struct inode dir_inode = { 1 };
static struct dentry new_dentry;

/* filename_create: the new name's dentry (the emulator's file system resolves its place) */
static noinline struct dentry *filename_create(int dfd, struct filename *name)
{
	if (IS_ERR(name))
		return (struct dentry *)name;
	new_dentry.d_parent = NULL;
	new_dentry.d_name.name = name->name;
	new_dentry.d_name.len = strlen(name->name);
	new_dentry.d_dfd = dfd;
	return &new_dentry;
}

noinline int vfs_symlink(struct user_namespace *mnt_userns, struct inode *dir, struct dentry *dentry, const char *oldname)
{
	if (!dir)
		return -EINVAL;
	return user_call(KP_USER_SYMLINK, dentry->d_dfd, (long)dentry->d_name.name, (long)oldname);
}

noinline int do_symlinkat(struct filename *from, int newdfd, struct filename *to)
{
	struct dentry *dentry;
	int error;

	if (IS_ERR(from)) {
		error = PTR_ERR(from);
		goto out_putnames;
	}
	dentry = filename_create(newdfd, to);
	error = PTR_ERR(dentry);
	if (IS_ERR(dentry))
		goto out_putnames;
	error = vfs_symlink(&init_user_ns, &dir_inode, dentry, from->name);
	new_dentry.d_name.name = NULL;
out_putnames:
	putname(to);
	putname(from);
	return error;
}

/* SYSCALL_DEFINE3(symlinkat, ...) */
noinline long ksys_symlinkat(const char __user *oldname, int newdfd, const char __user *newname)
{
	return do_symlinkat(getname(oldname), newdfd, getname(newname));
}
