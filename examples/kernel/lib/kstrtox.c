/*
 * lib/kstrtox.c and vsprintf.c's simple_strto*() - string to integer
 * conversion with Linux's rules: kstrto*() take the whole string (one
 * trailing newline allowed), a base of 0 means auto (0x/0X hex, leading 0
 * octal, else decimal), base 16 allows a 0x prefix, overflow is -ERANGE and
 * anything else -EINVAL; simple_strto*() stop at the first non-digit.
 */
#include "libk.h"

#define KSTRTOX_OVERFLOW (1U << 31)

noinline const char *_parse_integer_fixup_radix(const char *s, unsigned int *base)
{
	if (*base == 0) {
		if (s[0] == '0') {
			if (_tolower((unsigned char)s[1]) == 'x' && isxdigit(s[2]))
				*base = 16;
			else
				*base = 8;
		} else {
			*base = 10;
		}
	}
	if (*base == 16 && s[0] == '0' && _tolower((unsigned char)s[1]) == 'x')
		s += 2;
	return s;
}

/*
 * Digits of `s` (at most max_chars) in `base` into *p; the number of
 * characters taken, with KSTRTOX_OVERFLOW set when the value does not fit.
 */
noinline unsigned int _parse_integer_limit(const char *s, unsigned int base, unsigned long long *p, size_t max_chars)
{
	unsigned long long res = 0;
	unsigned int rv = 0;

	while (max_chars--) {
		unsigned int c = (unsigned char)*s;
		unsigned int lc = c | 0x20;
		unsigned int val;

		if ('0' <= c && c <= '9')
			val = c - '0';
		else if ('a' <= lc && lc <= 'f')
			val = lc - 'a' + 10;
		else
			break;
		if (val >= base)
			break;
		if (res > (~0ULL - val) / base)
			rv |= KSTRTOX_OVERFLOW;
		res = res * base + val;
		rv++;
		s++;
	}
	*p = res;
	return rv;
}

noinline unsigned int _parse_integer(const char *s, unsigned int base, unsigned long long *p)
{
	return _parse_integer_limit(s, base, p, INT_MAX);
}

static noinline int _kstrtoull(const char *s, unsigned int base, unsigned long long *res)
{
	unsigned long long v;
	unsigned int rv;

	s = _parse_integer_fixup_radix(s, &base);
	rv = _parse_integer(s, base, &v);
	if (rv & KSTRTOX_OVERFLOW)
		return -ERANGE;
	if (rv == 0)
		return -EINVAL;
	s += rv;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*res = v;
	return 0;
}

int kstrtoull(const char *s, unsigned int base, unsigned long long *res)
{
	if (s[0] == '+')
		s++;
	return _kstrtoull(s, base, res);
}

int kstrtoll(const char *s, unsigned int base, long long *res)
{
	unsigned long long tmp;
	int rv;

	if (s[0] == '-') {
		rv = _kstrtoull(s + 1, base, &tmp);
		if (rv < 0)
			return rv;
		if ((long long)-tmp > 0)
			return -ERANGE;
		*res = -(long long)tmp;
	} else {
		rv = kstrtoull(s, base, &tmp);
		if (rv < 0)
			return rv;
		if ((long long)tmp < 0)
			return -ERANGE;
		*res = (long long)tmp;
	}
	return 0;
}

int _kstrtoul(const char *s, unsigned int base, unsigned long *res)
{
	unsigned long long tmp;
	int rv = kstrtoull(s, base, &tmp);

	if (rv < 0)
		return rv;
	*res = (unsigned long)tmp;
	return 0;
}

int _kstrtol(const char *s, unsigned int base, long *res)
{
	long long tmp;
	int rv = kstrtoll(s, base, &tmp);

	if (rv < 0)
		return rv;
	*res = (long)tmp;
	return 0;
}

int kstrtouint(const char *s, unsigned int base, unsigned int *res)
{
	unsigned long long tmp;
	int rv = kstrtoull(s, base, &tmp);

	if (rv < 0)
		return rv;
	if (tmp != (unsigned int)tmp)
		return -ERANGE;
	*res = (unsigned int)tmp;
	return 0;
}

int kstrtoint(const char *s, unsigned int base, int *res)
{
	long long tmp;
	int rv = kstrtoll(s, base, &tmp);

	if (rv < 0)
		return rv;
	if (tmp != (int)tmp)
		return -ERANGE;
	*res = (int)tmp;
	return 0;
}

int kstrtou16(const char *s, unsigned int base, u16 *res)
{
	unsigned long long tmp;
	int rv = kstrtoull(s, base, &tmp);

	if (rv < 0)
		return rv;
	if (tmp != (u16)tmp)
		return -ERANGE;
	*res = (u16)tmp;
	return 0;
}

int kstrtos16(const char *s, unsigned int base, s16 *res)
{
	long long tmp;
	int rv = kstrtoll(s, base, &tmp);

	if (rv < 0)
		return rv;
	if (tmp != (s16)tmp)
		return -ERANGE;
	*res = (s16)tmp;
	return 0;
}

int kstrtou8(const char *s, unsigned int base, u8 *res)
{
	unsigned long long tmp;
	int rv = kstrtoull(s, base, &tmp);

	if (rv < 0)
		return rv;
	if (tmp != (u8)tmp)
		return -ERANGE;
	*res = (u8)tmp;
	return 0;
}

int kstrtos8(const char *s, unsigned int base, s8 *res)
{
	long long tmp;
	int rv = kstrtoll(s, base, &tmp);

	if (rv < 0)
		return rv;
	if (tmp != (s8)tmp)
		return -ERANGE;
	*res = (s8)tmp;
	return 0;
}

/* y/Y/1/on → true, n/N/0/off → false (only the first two characters count) */
int kstrtobool(const char *s, bool *res)
{
	if (!s)
		return -EINVAL;
	switch (s[0]) {
	case 'y': case 'Y': case 't': case 'T': case '1':
		*res = true;
		return 0;
	case 'n': case 'N': case 'f': case 'F': case '0':
		*res = false;
		return 0;
	case 'o': case 'O':
		switch (s[1]) {
		case 'n': case 'N':
			*res = true;
			return 0;
		case 'f': case 'F':
			*res = false;
			return 0;
		default:
			break;
		}
		break;
	default:
		break;
	}
	return -EINVAL;
}

unsigned long long simple_strtoull(const char *cp, char **endp, unsigned int base)
{
	unsigned long long result;
	unsigned int rv;

	cp = _parse_integer_fixup_radix(cp, &base);
	rv = _parse_integer_limit(cp, base, &result, INT_MAX);
	cp += (rv & ~KSTRTOX_OVERFLOW);
	if (endp)
		*endp = (char *)cp;
	return result;
}

unsigned long simple_strtoul(const char *cp, char **endp, unsigned int base)
{
	return (unsigned long)simple_strtoull(cp, endp, base);
}

long simple_strtol(const char *cp, char **endp, unsigned int base)
{
	if (*cp == '-')
		return -(long)simple_strtoul(cp + 1, endp, base);
	return (long)simple_strtoul(cp, endp, base);
}

long long simple_strtoll(const char *cp, char **endp, unsigned int base)
{
	if (*cp == '-')
		return -(long long)simple_strtoull(cp + 1, endp, base);
	return (long long)simple_strtoull(cp, endp, base);
}

/*
 * lib/cmdline.c: get_option() takes an int (and a following comma or
 * dash) from *str: 0 none, 1 an int, 2 an int and a comma, 3 an int and a
 * range dash.
 */
int get_option(char **str, int *pint)
{
	char *cur = *str;
	int value;

	if (!cur || !(*cur))
		return 0;
	if (*cur == '-')
		value = -(int)simple_strtoull(++cur, str, 0);
	else
		value = (int)simple_strtoull(cur, str, 0);
	if (pint)
		*pint = value;
	if (cur == *str)
		return 0;
	if (**str == ',') {
		(*str)++;
		return 2;
	}
	if (**str == '-')
		return 3;
	return 1;
}

/* "1,3-5,9" into ints[1..]: ints[0] is the count; a range is expanded; nints bounds the array */
char *get_options(const char *str, int nints, int *ints)
{
	bool validate = (nints == 0);
	int res, i = 1;

	while (i < nints || validate) {
		int *pint = validate ? ints : ints + i;

		res = get_option((char **)&str, pint);
		if (res == 0)
			break;
		if (res == 3) {
			int n = validate ? 0 : nints - i;
			int a = *pint, b, r2, k;
			char *p = (char *)str + 1;

			r2 = get_option(&p, &b);
			if (r2 == 0 || b < a)
				break;
			str = p;
			for (k = 0; k <= b - a && k < n; k++)
				ints[i + k] = a + k;
			i += validate ? b - a + 1 : k;
			if (r2 == 2)
				continue;
			break;
		}
		i++;
		if (res == 1)
			break;
	}
	ints[0] = i - 1;
	return (char *)str;
}

/* "64K", "2M", "1G"...: the number times its suffix's power of 1024 */
unsigned long long memparse(const char *ptr, char **retptr)
{
	char *endptr;
	unsigned long long ret = simple_strtoull(ptr, &endptr, 0);

	switch (*endptr) {
	case 'E': case 'e':
		ret <<= 10;
		/* fallthrough */
	case 'P': case 'p':
		ret <<= 10;
		/* fallthrough */
	case 'T': case 't':
		ret <<= 10;
		/* fallthrough */
	case 'G': case 'g':
		ret <<= 10;
		/* fallthrough */
	case 'M': case 'm':
		ret <<= 10;
		/* fallthrough */
	case 'K': case 'k':
		ret <<= 10;
		endptr++;
		/* fallthrough */
	default:
		break;
	}
	if (retptr)
		*retptr = endptr;
	return ret;
}

/* is `option` one of the comma-separated words of `str`? */
bool parse_option_str(const char *str, const char *option)
{
	while (*str) {
		size_t len = strlen(option);

		if (!strncmp(str, option, len)) {
			str += len;
			if (!*str || *str == ',')
				return true;
		}
		while (*str && *str++ != ',')
			;
	}
	return false;
}
