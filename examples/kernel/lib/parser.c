/*
 * lib/parser.c (mount-option tables: "%d", "%u", "%o", "%x", "%s" in a
 * pattern capture substrings into substring_t), lib/string_helpers.c
 * (string_get_size, string_unescape), lib/cmdline.c's next_arg,
 * lib/vsprintf.c's num_to_str / scnprintf, lib/net_utils.c's mac_pton and
 * lib/hexdump.c's hex_dump_to_buffer.
 */
#include "libk.h"

/* does str match pattern p? Captures go to args[] (at most MAX_OPT_ARGS) */
static noinline bool match_one(const char *s, const char *p, substring_t args[])
{
	const char *meta;
	int argc = 0;

	if (!p)
		return true;
	for (;;) {
		int len = -1;

		meta = strchr(p, '%');
		if (!meta)
			return strcmp(p, s) == 0;
		if (strncmp(p, s, (size_t)(meta - p)))
			return false;
		s += meta - p;
		p = meta + 1;
		if (isdigit(*p))
			len = (int)simple_strtoul(p, (char **)&p, 10);
		else if (*p == '%') {
			if (*s++ != '%')
				return false;
			p++;
			continue;
		}
		if (argc >= MAX_OPT_ARGS)
			return false;
		args[argc].from = (char *)s;
		switch (*p++) {
		case 's': {
			size_t str_len = strlen(s);

			if (str_len == 0)
				return false;
			if (len == -1 || (size_t)len > str_len)
				len = (int)str_len;
			args[argc].to = (char *)s + len;
			break;
		}
		case 'd':
			simple_strtol(s, &args[argc].to, 0);
			goto num;
		case 'u':
			simple_strtoul(s, &args[argc].to, 0);
			goto num;
		case 'o':
			simple_strtoul(s, &args[argc].to, 8);
			goto num;
		case 'x':
			simple_strtoul(s, &args[argc].to, 16);
num:
			if (args[argc].to == args[argc].from)
				return false;
			break;
		default:
			return false;
		}
		s = args[argc].to;
		argc++;
	}
}

/* the token of the first pattern in table that s matches (the table ends with a NULL pattern) */
int match_token(char *s, const struct match_token *table, substring_t args[])
{
	const struct match_token *p;

	for (p = table; !match_one(s, p->pattern, args); p++)
		;
	return p->token;
}

/* the substring as a number in base, into *result: 0, -EINVAL, or -ERANGE */
static noinline int match_number(substring_t *s, int *result, int base)
{
	char buf[24];
	long long val;
	size_t len = (size_t)(s->to - s->from);
	int ret;

	if (len >= sizeof(buf))
		return -ERANGE;
	memcpy(buf, s->from, len);
	buf[len] = '\0';
	ret = kstrtoll(buf, (unsigned int)base, &val);
	if (ret)
		return ret;
	if (val < -2147483647LL - 1 || val > 2147483647LL)
		return -ERANGE;
	*result = (int)val;
	return 0;
}

int match_int(substring_t *s, int *result)
{
	return match_number(s, result, 0);
}

int match_uint(substring_t *s, unsigned int *result)
{
	char buf[24];
	size_t len = (size_t)(s->to - s->from);

	if (len >= sizeof(buf))
		return -ERANGE;
	memcpy(buf, s->from, len);
	buf[len] = '\0';
	return kstrtouint(buf, 10, result);
}

int match_u64(substring_t *s, u64 *result)
{
	char buf[24];
	size_t len = (size_t)(s->to - s->from);
	unsigned long long v;
	int ret;

	if (len >= sizeof(buf))
		return -ERANGE;
	memcpy(buf, s->from, len);
	buf[len] = '\0';
	ret = kstrtoull(buf, 0, &v);
	if (!ret)
		*result = v;
	return ret;
}

int match_octal(substring_t *s, int *result)
{
	return match_number(s, result, 8);
}

int match_hex(substring_t *s, int *result)
{
	return match_number(s, result, 16);
}

/* '*' any run, '?' one character; the whole string must match */
bool match_wildcard(const char *pattern, const char *str)
{
	const char *s = str, *p = pattern;
	bool star = false;

	while (*s) {
		switch (*p) {
		case '?':
			s++;
			p++;
			break;
		case '*':
			star = true;
			str = s;
			if (!*++p)
				return true;
			pattern = p;
			break;
		default:
			if (*s == *p) {
				s++;
				p++;
			} else {
				if (!star)
					return false;
				str++;
				s = str;
				p = pattern;
			}
			break;
		}
	}
	if (*p == '*')
		++p;
	return !*p;
}

/* at most size - 1 bytes of the substring, always terminated; the substring's length */
size_t match_strlcpy(char *dest, const substring_t *src, size_t size)
{
	size_t ret = (size_t)(src->to - src->from);

	if (size) {
		size_t len = ret >= size ? size - 1 : ret;

		memcpy(dest, src->from, len);
		dest[len] = '\0';
	}
	return ret;
}

/* "1.00 KiB"-style text for size * blk_size bytes, units of 1000 (STRING_UNITS_10) or 1024 (STRING_UNITS_2) */
void string_get_size(u64 size, u64 blk_size, enum string_size_units units, char *buf, int len)
{
	static const char *const units_10[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
	static const char *const units_2[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
	static const unsigned int divisor[] = {[STRING_UNITS_10] = 1000, [STRING_UNITS_2] = 1024};
	static const unsigned int rounding[] = {500, 50, 5};
	int i = 0, j;
	u32 remainder = 0, sf_cap;
	char tmp[8];
	const char *unit;

	tmp[0] = '\0';
	if (blk_size == 0)
		size = 0;
	if (size == 0)
		goto out;
	while (blk_size >> 32) {
		remainder = (u32)(blk_size % divisor[units]);
		blk_size /= divisor[units];
		i++;
	}
	while (size >> 32) {
		remainder = (u32)(size % divisor[units]);
		size /= divisor[units];
		i++;
	}
	size *= blk_size;
	while (size >= divisor[units]) {
		remainder = (u32)(size % divisor[units]);
		size /= divisor[units];
		i++;
	}
	sf_cap = (u32)size;
	for (j = 0; sf_cap * 10 < 1000; j++)
		sf_cap *= 10;
	if (units == STRING_UNITS_2) {
		remainder *= 1000;
		remainder >>= 10;
	}
	remainder += rounding[j];
	if (remainder >= 1000) {
		remainder -= 1000;
		size += 1;
	}
	if (j) {
		snprintf(tmp, sizeof(tmp), ".%03u", remainder);
		tmp[j + 1] = '\0';
	}
out:
	if ((size_t)i >= ARRAY_SIZE(units_2))
		unit = "UNK";
	else
		unit = units == STRING_UNITS_2 ? units_2[i] : units_10[i];
	snprintf(buf, (size_t)len, "%u%s %s", (u32)size, tmp, unit);
}

static noinline bool unescape_octal(char **src, char **dst)
{
	char *p = *dst, *q = *src;
	u8 num;

	if (*q < '0' || *q > '7')
		return false;
	num = (u8)(*q++ & 7);
	while (num < 32 && q - *src < 3 && *q >= '0' && *q <= '7')
		num = (u8)((num << 3) + (*q++ & 7));
	*p = (char)num;
	*dst += 1;
	*src = q;
	return true;
}

static noinline bool unescape_hex(char **src, char **dst)
{
	char *p = *dst, *q = *src;
	int digit;
	u8 num;

	if (*q++ != 'x')
		return false;
	num = (u8)(digit = hex_to_bin((unsigned char)*q++));
	if (digit < 0)
		return false;
	digit = hex_to_bin((unsigned char)*q);
	if (digit >= 0) {
		q++;
		num = (u8)((num << 4) | digit);
	}
	*p = (char)num;
	*dst += 1;
	*src = q;
	return true;
}

static noinline bool unescape_space(char **src, char **dst)
{
	static const char from[] = "nrtvf", to[] = "\n\r\t\v\f";
	const char *m = strchr(from, **src);

	if (!m || !**src)
		return false;
	**dst = to[m - from];
	*dst += 1;
	*src += 1;
	return true;
}

static noinline bool unescape_special(char **src, char **dst)
{
	char *q = *src;

	switch (*q) {
	case '\"': **dst = '\"'; break;
	case '\\': **dst = '\\'; break;
	case 'a': **dst = '\a'; break;
	case 'e': **dst = '\e'; break;
	default:
		return false;
	}
	*dst += 1;
	*src += 1;
	return true;
}

/* C escapes of src (the classes in flags: UNESCAPE_SPACE, _OCTAL, _HEX, _SPECIAL; 0 = all) into dst; the bytes written */
int string_unescape(char *src, char *dst, size_t size, unsigned int flags)
{
	char *out = dst;

	if (!flags)
		flags = UNESCAPE_ANY;
	while (*src && --size) {
		if (src[0] == '\\' && src[1] != '\0' && size > 1) {
			src++;
			size--;
			if ((flags & UNESCAPE_SPACE) && unescape_space(&src, &out))
				continue;
			if ((flags & UNESCAPE_OCTAL) && unescape_octal(&src, &out))
				continue;
			if ((flags & UNESCAPE_HEX) && unescape_hex(&src, &out))
				continue;
			if ((flags & UNESCAPE_SPECIAL) && unescape_special(&src, &out))
				continue;
			*out++ = '\\';
		}
		*out++ = *src++;
	}
	*out = '\0';
	return (int)(out - dst);
}

/* the next "param=value" (value may be "quoted") of a command line: param, *val (NULL without =); the rest */
char *next_arg(char *args, char **param, char **val)
{
	unsigned int i, equals = 0;
	int in_quote = 0, quoted = 0;

	if (*args == '"') {
		args++;
		in_quote = 1;
		quoted = 1;
	}
	for (i = 0; args[i]; i++) {
		if (isspace(args[i]) && !in_quote)
			break;
		if (equals == 0 && args[i] == '=')
			equals = i;
		if (args[i] == '"')
			in_quote = !in_quote;
	}
	*param = args;
	if (!equals) {
		*val = NULL;
	} else {
		args[equals] = '\0';
		*val = args + equals + 1;
		if (**val == '"') {
			(*val)++;
			if (args[i - 1] == '"')
				args[i - 1] = '\0';
		}
	}
	if (quoted && i > 0 && args[i - 1] == '"')
		args[i - 1] = '\0';
	if (args[i]) {
		args[i] = '\0';
		args += i + 1;
	} else {
		args += i;
	}
	return skip_spaces(args);
}

/* num in decimal into buf (size bytes, no terminator), right-aligned to width; the length, 0 when it does not fit */
int num_to_str(char *buf, int size, unsigned long long num, unsigned int width)
{
	char tmp[sizeof(num) * 3];
	int idx, len = 0;

	do {
		tmp[len++] = (char)('0' + num % 10);
		num /= 10;
	} while (num);
	idx = (int)width > len ? (int)width - len : 0;
	if (len + idx > size)
		return 0;
	memset(buf, ' ', (size_t)idx);
	for (int i = 0; i < len; i++)
		buf[idx + i] = tmp[len - 1 - i];
	return len + idx;
}

/* vsnprintf, but the characters written into buf (not the would-be length) */
int vscnprintf(char *buf, size_t size, const char *fmt, va_list args)
{
	int i;

	if (size == 0)
		return 0;
	i = vsnprintf(buf, size, fmt, args);
	if ((size_t)i < size)
		return i;
	return (int)size - 1;
}

int scnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list args;
	int i;

	va_start(args, fmt);
	i = vscnprintf(buf, size, fmt, args);
	va_end(args);
	return i;
}

/* "aa:bb:cc:dd:ee:ff" (or '-' separators) into 6 bytes */
bool mac_pton(const char *s, u8 *mac)
{
	int i;

	if (strnlen(s, 17) < 17)
		return false;
	for (i = 0; i < 6; i++) {
		if (!isxdigit(s[i * 3]) || !isxdigit(s[i * 3 + 1]))
			return false;
		if (i != 5 && s[i * 3 + 2] != ':' && s[i * 3 + 2] != '-')
			return false;
	}
	for (i = 0; i < 6; i++)
		mac[i] = (u8)((hex_to_bin((unsigned char)s[i * 3]) << 4) | hex_to_bin((unsigned char)s[i * 3 + 1]));
	return true;
}

/* one line of a hex dump of up to rowsize (16 or 32) bytes in groups of groupsize (1: bytes only here), with ASCII */
int hex_dump_to_buffer(const void *buf, size_t len, int rowsize, int groupsize, char *linebuf, size_t linebuflen,
		       bool ascii)
{
	static const char hex_asc[] = "0123456789abcdef";
	const u8 *ptr = buf;
	size_t i, lx = 0;
	int ascii_column;

	if (rowsize != 16 && rowsize != 32)
		rowsize = 16;
	if (len > (size_t)rowsize)
		len = (size_t)rowsize;
	(void)groupsize;
	if (!len || !linebuflen)
		goto nil;
	for (i = 0; i < len; i++) {
		if (lx + 3 >= linebuflen)
			goto overflow;
		linebuf[lx++] = hex_asc[ptr[i] >> 4];
		linebuf[lx++] = hex_asc[ptr[i] & 0xf];
		linebuf[lx++] = ' ';
	}
	if (lx)
		lx--;
	if (!ascii)
		goto nil;
	ascii_column = rowsize * 3 + 2;
	while (lx < linebuflen - 1 && lx < (size_t)ascii_column)
		linebuf[lx++] = ' ';
	for (i = 0; i < len; i++) {
		u8 ch = ptr[i];

		if (lx + 2 > linebuflen)
			goto overflow;
		linebuf[lx++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '.';
	}
nil:
	if (linebuflen)
		linebuf[lx] = '\0';
	return (int)lx;
overflow:
	linebuf[lx] = '\0';
	return ascii ? rowsize * 3 + 2 + (int)len : (int)len * 3 - 1;
}
