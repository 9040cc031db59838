/*
 * lib/string.c - the string and memory helpers Linux's lib/string.c and
 * lib/string_helpers.c provide, under their names and with their documented
 * semantics (written for the sample kernel; memset, memcpy, memmove,
 * memcmp, strlen, strcmp, strncmp and strncpy are in ../lib.c). Built with
 * the function tracer's entry hook, as Linux builds lib/.
 */
#include "libk.h"

int strncasecmp(const char *s1, const char *s2, size_t len)
{
	unsigned char c1 = 0, c2 = 0;

	while (len--) {
		c1 = (unsigned char)*s1++;
		c2 = (unsigned char)*s2++;
		if (!c1 || !c2)
			break;
		if (c1 == c2)
			continue;
		c1 = (unsigned char)_tolower(c1);
		c2 = (unsigned char)_tolower(c2);
		if (c1 != c2)
			break;
	}
	return (int)c1 - (int)c2;
}

int strcasecmp(const char *s1, const char *s2)
{
	int c1, c2;

	do {
		c1 = _tolower((unsigned char)*s1++);
		c2 = _tolower((unsigned char)*s2++);
	} while (c1 == c2 && c1 != 0);
	return c1 - c2;
}

char *strcpy(char *dest, const char *src)
{
	char *d = dest;

	while ((*d++ = *src++) != '\0')
		;
	return dest;
}

size_t strlcpy(char *dest, const char *src, size_t size)
{
	size_t ret = strlen(src);

	if (size) {
		size_t len = ret >= size ? size - 1 : ret;
		memcpy(dest, src, len);
		dest[len] = '\0';
	}
	return ret;
}

ssize_t strscpy(char *dest, const char *src, size_t count)
{
	size_t i;

	if (count == 0 || count > INT_MAX)
		return -E2BIG;
	for (i = 0; i < count; i++) {
		dest[i] = src[i];
		if (!src[i])
			return (ssize_t)i;
	}
	dest[count - 1] = '\0';
	return -E2BIG;
}

ssize_t strscpy_pad(char *dest, const char *src, size_t count)
{
	ssize_t written = strscpy(dest, src, count);

	if (written < 0 || (size_t)written == count - 1)
		return written;
	memset(dest + written + 1, 0, count - (size_t)written - 1);
	return written;
}

char *stpcpy(char *dest, const char *src)
{
	while ((*dest++ = *src++) != '\0')
		;
	return --dest;
}

char *strcat(char *dest, const char *src)
{
	char *d = dest;

	while (*d)
		d++;
	while ((*d++ = *src++) != '\0')
		;
	return dest;
}

char *strncat(char *dest, const char *src, size_t count)
{
	char *d = dest;

	if (count) {
		while (*d)
			d++;
		while ((*d++ = *src++) != '\0') {
			if (--count == 0) {
				*d = '\0';
				break;
			}
		}
	}
	return dest;
}

size_t strlcat(char *dest, const char *src, size_t count)
{
	size_t dsize = strlen(dest);
	size_t len = strlen(src);
	size_t res = dsize + len;

	dest += dsize;
	count -= dsize;
	if (len >= count)
		len = count - 1;
	memcpy(dest, src, len);
	dest[len] = 0;
	return res;
}

char *strchr(const char *s, int c)
{
	for (; *s != (char)c; ++s)
		if (*s == '\0')
			return NULL;
	return (char *)s;
}

char *strchrnul(const char *s, int c)
{
	while (*s && *s != (char)c)
		s++;
	return (char *)s;
}

char *strnchrnul(const char *s, size_t count, int c)
{
	while (count-- && *s && *s != (char)c)
		s++;
	return (char *)s;
}

char *strrchr(const char *s, int c)
{
	const char *last = NULL;

	do {
		if (*s == (char)c)
			last = s;
	} while (*s++);
	return (char *)last;
}

char *strnchr(const char *s, size_t count, int c)
{
	while (count--) {
		if (*s == (char)c)
			return (char *)s;
		if (*s++ == '\0')
			break;
	}
	return NULL;
}

char *skip_spaces(const char *str)
{
	while (isspace(*str))
		++str;
	return (char *)str;
}

char *strim(char *s)
{
	size_t size = strlen(s);
	char *end;

	if (!size)
		return s;
	end = s + size - 1;
	while (end >= s && isspace(*end))
		end--;
	*(end + 1) = '\0';
	return skip_spaces(s);
}

size_t strnlen(const char *s, size_t count)
{
	const char *sc;

	for (sc = s; count-- && *sc != '\0'; ++sc)
		;
	return (size_t)(sc - s);
}

size_t strspn(const char *s, const char *accept)
{
	const char *p;

	for (p = s; *p != '\0'; ++p) {
		if (!strchr(accept, *p))
			break;
	}
	return (size_t)(p - s);
}

size_t strcspn(const char *s, const char *reject)
{
	const char *p;

	for (p = s; *p != '\0'; ++p) {
		if (strchr(reject, *p))
			break;
	}
	return (size_t)(p - s);
}

char *strpbrk(const char *cs, const char *ct)
{
	for (; *cs != '\0'; ++cs) {
		if (strchr(ct, *cs))
			return (char *)cs;
	}
	return NULL;
}

char *strsep(char **s, const char *ct)
{
	char *sbegin = *s;
	char *end;

	if (sbegin == NULL)
		return NULL;
	end = strpbrk(sbegin, ct);
	if (end)
		*end++ = '\0';
	*s = end;
	return sbegin;
}

bool sysfs_streq(const char *s1, const char *s2)
{
	while (*s1 && *s1 == *s2) {
		s1++;
		s2++;
	}
	if (*s1 == *s2)
		return true;
	if (!*s1 && *s2 == '\n' && !s2[1])
		return true;
	if (*s1 == '\n' && !s1[1] && !*s2)
		return true;
	return false;
}

int match_string(const char *const *array, size_t n, const char *string)
{
	size_t index;

	for (index = 0; index < n; index++) {
		if (!array[index])
			break;
		if (!strcmp(array[index], string))
			return (int)index;
	}
	return -EINVAL;
}

int __sysfs_match_string(const char *const *array, size_t n, const char *str)
{
	size_t index;

	for (index = 0; index < n; index++) {
		if (!array[index])
			continue;
		if (sysfs_streq(array[index], str))
			return (int)index;
	}
	return -EINVAL;
}

void *memset16(u16 *s, u16 v, size_t count)
{
	u16 *xs = s;

	while (count--)
		*xs++ = v;
	return s;
}

void *memset32(u32 *s, u32 v, size_t count)
{
	u32 *xs = s;

	while (count--)
		*xs++ = v;
	return s;
}

void *memset64(u64 *s, u64 v, size_t count)
{
	u64 *xs = s;

	while (count--)
		*xs++ = v;
	return s;
}

int bcmp(const void *a, const void *b, size_t len)
{
	return memcmp(a, b, len);
}

void *memscan(void *addr, int c, size_t size)
{
	unsigned char *p = addr;

	while (size) {
		if (*p == (unsigned char)c)
			return p;
		p++;
		size--;
	}
	return p;
}

char *strstr(const char *s1, const char *s2)
{
	size_t l1, l2;

	l2 = strlen(s2);
	if (!l2)
		return (char *)s1;
	l1 = strlen(s1);
	while (l1 >= l2) {
		l1--;
		if (!memcmp(s1, s2, l2))
			return (char *)s1;
		s1++;
	}
	return NULL;
}

char *strnstr(const char *s1, const char *s2, size_t len)
{
	size_t l2 = strlen(s2);

	if (!l2)
		return (char *)s1;
	while (len >= l2) {
		len--;
		if (!memcmp(s1, s2, l2))
			return (char *)s1;
		s1++;
	}
	return NULL;
}

void *memchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;

	while (n-- != 0) {
		if ((unsigned char)c == *p++)
			return (void *)(p - 1);
	}
	return NULL;
}

void *memchr_inv(const void *start, int c, size_t bytes)
{
	const u8 *p = start;
	u8 value = (u8)c;

	while (bytes--) {
		if (*p != value)
			return (void *)p;
		p++;
	}
	return NULL;
}

char *strreplace(char *s, char old, char new)
{
	for (; *s; ++s)
		if (*s == old)
			*s = new;
	return s;
}

void memcpy_and_pad(void *dest, size_t dest_len, const void *src, size_t count, int pad)
{
	if (dest_len > count) {
		memcpy(dest, src, count);
		memset((char *)dest + count, pad, dest_len - count);
	} else {
		memcpy(dest, src, dest_len);
	}
}

size_t memweight(const void *ptr, size_t bytes)
{
	const unsigned char *p = ptr;
	size_t ret = 0;

	while (bytes--)
		ret += (size_t)hweight8(*p++);
	return ret;
}

int hex_to_bin(unsigned char ch)
{
	unsigned char cu = ch & 0xdf;

	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (cu >= 'A' && cu <= 'F')
		return cu - 'A' + 10;
	return -1;
}

int hex2bin(u8 *dst, const char *src, size_t count)
{
	while (count--) {
		int hi = hex_to_bin((unsigned char)*src++);
		int lo;

		if (hi < 0)
			return -EINVAL;
		lo = hex_to_bin((unsigned char)*src++);
		if (lo < 0)
			return -EINVAL;
		*dst++ = (u8)((hi << 4) | lo);
	}
	return 0;
}

char *bin2hex(char *dst, const void *src, size_t count)
{
	static const char hex_asc[] = "0123456789abcdef";
	const unsigned char *s = src;

	while (count--) {
		*dst++ = hex_asc[*s >> 4];
		*dst++ = hex_asc[*s & 0x0f];
		s++;
	}
	return dst;
}

static int glob_match_class(const char **patp, unsigned char c)
{
	const char *pat = *patp;
	bool match = false, inverted = (*pat == '!');
	const char *class = pat + inverted;
	unsigned char a = (unsigned char)*class++;

	do {
		unsigned char b = a;

		if (a == '\0')
			return -1; /* malformed: treat '[' as a literal */
		if (class[0] == '-' && class[1] != ']') {
			b = (unsigned char)class[1];
			if (b == '\0')
				return -1;
			class += 2;
		}
		match |= (a <= c && c <= b);
	} while ((a = (unsigned char)*class++) != ']');
	*patp = class;
	return match != inverted;
}

bool glob_match(const char *pat, const char *str)
{
	const char *back_pat = NULL, *back_str = NULL;

	for (;;) {
		unsigned char c = (unsigned char)*str++;
		unsigned char d = (unsigned char)*pat++;

		switch (d) {
		case '?':
			if (c == '\0')
				return false;
			break;
		case '*':
			if (*pat == '\0')
				return true;
			back_pat = pat;
			back_str = --str;
			break;
		case '[': {
			int m;

			if (c == '\0')
				return false;
			m = glob_match_class(&pat, c);
			if (m < 0)
				goto literal;
			if (m)
				break;
			goto backtrack;
		}
		case '\\':
			d = (unsigned char)*pat++;
			/* fallthrough */
		default:
literal:
			if (c == d) {
				if (d == '\0')
					return true;
				break;
			}
backtrack:
			if (c == '\0' || !back_pat)
				return false;
			pat = back_pat;
			str = ++back_str;
			break;
		}
	}
}

#define E(x) [x] = "-" #x
static const char *const errnames[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG), E(ENOEXEC), E(EBADF),
	E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES), E(EFAULT), E(EBUSY), E(EEXIST), E(ENODEV),
	E(ENOTDIR), E(EISDIR), E(EINVAL), E(EMFILE), E(ENOSPC), E(ERANGE), E(ENAMETOOLONG), E(ENOSYS),
};
#undef E

/* "-ENOENT" for -ENOENT, "ENOENT" for ENOENT; NULL for a code it does not know */
const char *errname(int err)
{
	int e = err < 0 ? -err : err;

	if (e <= 0 || (size_t)e >= ARRAY_SIZE(errnames) || !errnames[e])
		return NULL;
	return err < 0 ? errnames[e] : errnames[e] + 1;
}
