/*
 * libk.h - the sample kernel's lib/ helpers (examples/kernel/lib/ files) with
 * the names, types and arguments of Linux's include/linux/{string,kstrtox,
 * bitmap,find,sort,list_sort,rbtree,llist,plist,gcd,lcm,math,crc*,uuid,
 * ucs2_string,seq_buf,kfifo,win_minmax}.h.
 */
#ifndef SAMPLE_LIBK_H
#define SAMPLE_LIBK_H

#include "../kernel.h"

typedef _Bool bool;
#define true 1
#define false 0
#define INT_MAX ((int)(~0U >> 1))
#define BITS_PER_LONG 64
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define BITS_TO_LONGS(nr) DIV_ROUND_UP(nr, BITS_PER_LONG)
#define BIT_WORD(nr) ((nr) / BITS_PER_LONG)
#define BIT_MASK(nr) (1UL << ((nr) % BITS_PER_LONG))
#define BITMAP_LAST_WORD_MASK(nbits) (~0UL >> (-(nbits) & (BITS_PER_LONG - 1)))
#define offsetof(t, m) __builtin_offsetof(t, m)
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
static inline unsigned long min_ul(unsigned long a, unsigned long b) { return a < b ? a : b; }

#ifndef EPERM
#define EPERM 1
#endif
#define ESRCH 3
#define EINTR 4
#define EIO 5
#define ENXIO 6
#define E2BIG 7
#define ENOEXEC 8
#define ECHILD 10
#define EAGAIN 11
#define EBUSY 16
#define EEXIST 17
#define ENODEV 19
#define ENOTDIR 20
#define EISDIR 21
#define ENOSPC 28
#define ERANGE 34
#define ENOSYS 38

/* include/linux/ctype.h's answers, for ASCII */
static inline int isdigit(int c) { return c >= '0' && c <= '9'; }
static inline int isxdigit(int c) { return isdigit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }
static inline int isspace(int c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static inline int _tolower(int c) { return (c >= 'A' && c <= 'Z') ? c | 0x20 : c; }
unsigned int __sw_hweight8(unsigned int w);
#define hweight8(w) __sw_hweight8(w)

/* string.c */
int strncasecmp(const char *s1, const char *s2, size_t len);
int strcasecmp(const char *s1, const char *s2);
char *strcpy(char *dest, const char *src);
size_t strlcpy(char *dest, const char *src, size_t size);
ssize_t strscpy(char *dest, const char *src, size_t count);
ssize_t strscpy_pad(char *dest, const char *src, size_t count);
char *stpcpy(char *dest, const char *src);
char *strcat(char *dest, const char *src);
char *strncat(char *dest, const char *src, size_t count);
size_t strlcat(char *dest, const char *src, size_t count);
char *strchr(const char *s, int c);
char *strchrnul(const char *s, int c);
char *strnchrnul(const char *s, size_t count, int c);
char *strrchr(const char *s, int c);
char *strnchr(const char *s, size_t count, int c);
char *skip_spaces(const char *str);
char *strim(char *s);
size_t strnlen(const char *s, size_t count);
size_t strspn(const char *s, const char *accept);
size_t strcspn(const char *s, const char *reject);
char *strpbrk(const char *cs, const char *ct);
char *strsep(char **s, const char *ct);
bool sysfs_streq(const char *s1, const char *s2);
int match_string(const char *const *array, size_t n, const char *string);
int __sysfs_match_string(const char *const *array, size_t n, const char *str);
void *memset16(u16 *s, u16 v, size_t count);
void *memset32(u32 *s, u32 v, size_t count);
void *memset64(u64 *s, u64 v, size_t count);
int bcmp(const void *a, const void *b, size_t len);
void *memscan(void *addr, int c, size_t size);
char *strstr(const char *s1, const char *s2);
char *strnstr(const char *s1, const char *s2, size_t len);
void *memchr(const void *s, int c, size_t n);
void *memchr_inv(const void *start, int c, size_t bytes);
char *strreplace(char *s, char old, char new);
void memcpy_and_pad(void *dest, size_t dest_len, const void *src, size_t count, int pad);
size_t memweight(const void *ptr, size_t bytes);
int hex_to_bin(unsigned char ch);
int hex2bin(u8 *dst, const char *src, size_t count);
char *bin2hex(char *dst, const void *src, size_t count);
bool glob_match(const char *pat, const char *str);
const char *errname(int err);

/* kstrtox.c */
const char *_parse_integer_fixup_radix(const char *s, unsigned int *base);
unsigned int _parse_integer_limit(const char *s, unsigned int base, unsigned long long *p, size_t max_chars);
unsigned int _parse_integer(const char *s, unsigned int base, unsigned long long *p);
int kstrtoull(const char *s, unsigned int base, unsigned long long *res);
int kstrtoll(const char *s, unsigned int base, long long *res);
int _kstrtoul(const char *s, unsigned int base, unsigned long *res);
int _kstrtol(const char *s, unsigned int base, long *res);
int kstrtouint(const char *s, unsigned int base, unsigned int *res);
int kstrtoint(const char *s, unsigned int base, int *res);
int kstrtou16(const char *s, unsigned int base, u16 *res);
int kstrtos16(const char *s, unsigned int base, s16 *res);
int kstrtou8(const char *s, unsigned int base, u8 *res);
int kstrtos8(const char *s, unsigned int base, s8 *res);
int kstrtobool(const char *s, bool *res);
unsigned long long simple_strtoull(const char *cp, char **endp, unsigned int base);
unsigned long simple_strtoul(const char *cp, char **endp, unsigned int base);
long simple_strtol(const char *cp, char **endp, unsigned int base);
long long simple_strtoll(const char *cp, char **endp, unsigned int base);
int get_option(char **str, int *pint);
char *get_options(const char *str, int nints, int *ints);
unsigned long long memparse(const char *ptr, char **retptr);
bool parse_option_str(const char *str, const char *option);

/* bitmap.c */
unsigned int __sw_hweight16(unsigned int w);
unsigned int __sw_hweight32(unsigned int w);
unsigned long __sw_hweight64(u64 w);
bool __bitmap_equal(const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits);
bool __bitmap_or_equal(const unsigned long *bitmap1, const unsigned long *bitmap2, const unsigned long *bitmap3,
		       unsigned int bits);
void __bitmap_complement(unsigned long *dst, const unsigned long *src, unsigned int bits);
void __bitmap_shift_right(unsigned long *dst, const unsigned long *src, unsigned shift, unsigned nbits);
void __bitmap_shift_left(unsigned long *dst, const unsigned long *src, unsigned int shift, unsigned int nbits);
bool __bitmap_and(unsigned long *dst, const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits);
void __bitmap_or(unsigned long *dst, const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits);
void __bitmap_xor(unsigned long *dst, const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits);
bool __bitmap_andnot(unsigned long *dst, const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits);
void __bitmap_replace(unsigned long *dst, const unsigned long *old, const unsigned long *new, const unsigned long *mask,
		      unsigned int nbits);
bool __bitmap_intersects(const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits);
bool __bitmap_subset(const unsigned long *bitmap1, const unsigned long *bitmap2, unsigned int bits);
unsigned int __bitmap_weight(const unsigned long *bitmap, unsigned int bits);
void __bitmap_set(unsigned long *map, unsigned int start, int len);
void __bitmap_clear(unsigned long *map, unsigned int start, int len);
unsigned long bitmap_find_next_zero_area_off(unsigned long *map, unsigned long size, unsigned long start,
					     unsigned int nr, unsigned long align_mask, unsigned long align_offset);
unsigned int bitmap_ord_to_pos(const unsigned long *map, unsigned int ord, unsigned int nbits);
int bitmap_bitremap(int oldbit, const unsigned long *old, const unsigned long *new, int bits);
void bitmap_from_arr32(unsigned long *bitmap, const u32 *buf, unsigned int nbits);
void bitmap_to_arr32(u32 *buf, const unsigned long *bitmap, unsigned int nbits);
int bitmap_allocate_region(unsigned long *bitmap, unsigned int pos, int order);
void bitmap_release_region(unsigned long *bitmap, unsigned int pos, int order);
int bitmap_find_free_region(unsigned long *bitmap, unsigned int bits, int order);
unsigned long _find_first_bit(const unsigned long *addr, unsigned long size);
unsigned long _find_first_and_bit(const unsigned long *addr1, const unsigned long *addr2, unsigned long size);
unsigned long _find_first_zero_bit(const unsigned long *addr, unsigned long size);
unsigned long _find_next_bit(const unsigned long *addr, unsigned long size, unsigned long offset);
unsigned long _find_next_and_bit(const unsigned long *addr1, const unsigned long *addr2, unsigned long size,
				 unsigned long offset);
unsigned long _find_next_andnot_bit(const unsigned long *addr1, const unsigned long *addr2, unsigned long size,
				    unsigned long offset);
unsigned long _find_next_zero_bit(const unsigned long *addr, unsigned long size, unsigned long offset);
unsigned long _find_last_bit(const unsigned long *addr, unsigned long size);
unsigned long __find_nth_bit(const unsigned long *addr, unsigned long size, unsigned long n);
unsigned long find_next_clump8(unsigned long *clump, const unsigned long *addr, unsigned long size,
			       unsigned long offset);

/* sort.c */
struct list_head {
	struct list_head *next, *prev;
};
#define LIST_POISON1 ((struct list_head *)0x100)
#define LIST_POISON2 ((struct list_head *)0x122)
typedef int (*cmp_func_t)(const void *a, const void *b);
typedef int (*cmp_r_func_t)(const void *a, const void *b, const void *priv);
typedef void (*swap_func_t)(void *a, void *b, int size);
typedef void (*swap_r_func_t)(void *a, void *b, int size, const void *priv);
typedef int (*list_cmp_func_t)(void *priv, const struct list_head *a, const struct list_head *b);
void sort_r(void *base, size_t num, size_t size, cmp_r_func_t cmp_func, swap_r_func_t swap_func, const void *priv);
void sort(void *base, size_t num, size_t size, cmp_func_t cmp_func, swap_func_t swap_func);
void list_sort(void *priv, struct list_head *head, list_cmp_func_t cmp);
void *bsearch(const void *key, const void *base, size_t num, size_t size, cmp_func_t cmp);

/* rbtree.c */
struct rb_node {
	unsigned long __rb_parent_color;
	struct rb_node *rb_right;
	struct rb_node *rb_left;
} __attribute__((aligned(sizeof(long))));
struct rb_root {
	struct rb_node *rb_node;
};
static inline void rb_link_node(struct rb_node *node, struct rb_node *parent, struct rb_node **rb_link)
{
	node->__rb_parent_color = (unsigned long)parent;
	node->rb_left = node->rb_right = NULL;
	*rb_link = node;
}
void rb_insert_color(struct rb_node *node, struct rb_root *root);
void rb_erase(struct rb_node *node, struct rb_root *root);
struct rb_node *rb_first(const struct rb_root *root);
struct rb_node *rb_last(const struct rb_root *root);
struct rb_node *rb_next(const struct rb_node *node);
struct rb_node *rb_prev(const struct rb_node *node);
void rb_replace_node(struct rb_node *victim, struct rb_node *new, struct rb_root *root);
struct rb_node *rb_next_postorder(const struct rb_node *node);
struct rb_node *rb_first_postorder(const struct rb_root *root);

/* math.c */
struct reciprocal_value {
	u32 m;
	u8 sh1, sh2;
};
struct minmax_sample {
	u32 t, v;
};
struct minmax {
	struct minmax_sample s[3];
};
unsigned long gcd(unsigned long a, unsigned long b);
unsigned long lcm(unsigned long a, unsigned long b);
unsigned long lcm_not_zero(unsigned long a, unsigned long b);
u64 int_pow(u64 base, unsigned int exp);
unsigned long int_sqrt(unsigned long x);
u32 int_sqrt64(u64 x);
struct reciprocal_value reciprocal_value(u32 d);
u32 reciprocal_divide(u32 a, struct reciprocal_value R);
u64 div64_u64_rem(u64 dividend, u64 divisor, u64 *remainder);
u64 div64_u64(u64 dividend, u64 divisor);
s64 div64_s64(s64 dividend, s64 divisor);
u64 mul_u64_u64_div_u64(u64 a, u64 b, u64 c);
u32 iter_div_u64_rem(u64 dividend, u32 divisor, u64 *remainder);
void rational_best_approximation(unsigned long given_numerator, unsigned long given_denominator,
				 unsigned long max_numerator, unsigned long max_denominator,
				 unsigned long *best_numerator, unsigned long *best_denominator);
unsigned _bcd2bin(unsigned char val);
unsigned char _bin2bcd(unsigned val);
unsigned int intlog2(u32 value);
unsigned int intlog10(u32 value);
u32 minmax_running_max(struct minmax *m, u32 win, u32 t, u32 meas);
u32 minmax_running_min(struct minmax *m, u32 win, u32 t, u32 meas);

/* crc.c */
#define CRC8_TABLE_SIZE 256
u32 crc32_le(u32 crc, const unsigned char *p, size_t len);
u32 __crc32c_le(u32 crc, const unsigned char *p, size_t len);
u32 crc32_be(u32 crc, const unsigned char *p, size_t len);
u16 crc16(u16 crc, const u8 *buffer, size_t len);
u16 crc_ccitt(u16 crc, const u8 *buffer, size_t len);
u16 crc_itu_t(u16 crc, const u8 *buffer, size_t len);
void crc8_populate_msb(u8 table[CRC8_TABLE_SIZE], u8 polynomial);
void crc8_populate_lsb(u8 table[CRC8_TABLE_SIZE], u8 polynomial);
u8 crc8(const u8 table[CRC8_TABLE_SIZE], const u8 *pdata, size_t nbytes, u8 crc);
u8 crc7_be(u8 crc, const u8 *buffer, size_t len);
u8 crc4(u8 c, u64 x, int bits);
u16 ip_compute_csum(const void *buff, int len);
u32 csum_partial(const void *buff, int len, u32 wsum);
u16 csum_fold(u32 csum);

/* list.c */
struct llist_node {
	struct llist_node *next;
};
struct llist_head {
	struct llist_node *first;
};
struct plist_head {
	struct list_head node_list;
};
struct plist_node {
	int prio;
	struct list_head prio_list;
	struct list_head node_list;
};
bool __list_add_valid(struct list_head *new, struct list_head *prev, struct list_head *next);
bool __list_del_entry_valid(struct list_head *entry);
bool llist_add_batch(struct llist_node *new_first, struct llist_node *new_last, struct llist_head *head);
struct llist_node *llist_del_first(struct llist_head *head);
struct llist_node *llist_reverse_order(struct llist_node *head);
void plist_add(struct plist_node *node, struct plist_head *head);
void plist_del(struct plist_node *node, struct plist_head *head);
void plist_requeue(struct plist_node *node, struct plist_head *head);

/* buf.c */
#define UUID_STRING_LEN 36
typedef struct { u8 b[16]; } guid_t;
typedef struct { u8 b[16]; } uuid_t;
typedef u16 ucs2_char_t;
struct seq_buf {
	char *buffer;
	size_t size;
	size_t len;
};
struct __kfifo {
	unsigned int in, out, mask, esize;
	void *data;
};
bool uuid_is_valid(const char *uuid);
int guid_parse(const char *uuid, guid_t *u);
int uuid_parse(const char *uuid, uuid_t *u);
unsigned long ucs2_strnlen(const ucs2_char_t *s, size_t maxlength);
unsigned long ucs2_strlen(const ucs2_char_t *s);
unsigned long ucs2_strsize(const ucs2_char_t *data, unsigned long maxlength);
int ucs2_strncmp(const ucs2_char_t *a, const ucs2_char_t *b, size_t len);
unsigned long ucs2_utf8size(const ucs2_char_t *src);
unsigned long ucs2_as_utf8(u8 *dest, const ucs2_char_t *src, unsigned long maxlength);
bool seq_buf_has_overflowed(struct seq_buf *s);
int seq_buf_putc(struct seq_buf *s, unsigned char c);
int seq_buf_puts(struct seq_buf *s, const char *str);
int seq_buf_putmem(struct seq_buf *s, const void *mem, unsigned int len);
int seq_buf_vprintf(struct seq_buf *s, const char *fmt, va_list args);
int seq_buf_printf(struct seq_buf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int __kfifo_init(struct __kfifo *fifo, void *buffer, unsigned int size, size_t esize);
unsigned int __kfifo_in(struct __kfifo *fifo, const void *buf, unsigned int len);
unsigned int __kfifo_out_peek(struct __kfifo *fifo, void *buf, unsigned int len);
unsigned int __kfifo_out(struct __kfifo *fifo, void *buf, unsigned int len);

/* crc.c (continued) */
u32 crc32_le_shift(u32 crc, size_t len);
u32 __crc32c_le_shift(u32 crc, size_t len);
u16 crc_t10dif_generic(u16 crc, const unsigned char *buffer, size_t len);
u64 crc64_be(u64 crc, const void *p, size_t len);

/* hash.c */
typedef struct { u64 key[2]; } siphash_key_t;
typedef struct { unsigned long key[2]; } hsiphash_key_t;
u64 __siphash_aligned(const void *data, size_t len, const siphash_key_t *key);
u64 siphash_1u64(u64 first, const siphash_key_t *key);
u64 siphash_2u64(u64 first, u64 second, const siphash_key_t *key);
u64 siphash_3u64(u64 first, u64 second, u64 third, const siphash_key_t *key);
u64 siphash_4u64(u64 first, u64 second, u64 third, u64 forth, const siphash_key_t *key);
u64 siphash_1u32(u32 first, const siphash_key_t *key);
u64 siphash_3u32(u32 first, u32 second, u32 third, const siphash_key_t *key);
u32 __hsiphash_aligned(const void *data, size_t len, const hsiphash_key_t *key);
u32 hsiphash_1u32(u32 first, const hsiphash_key_t *key);
u32 hsiphash_2u32(u32 first, u32 second, const hsiphash_key_t *key);
u32 hsiphash_3u32(u32 first, u32 second, u32 third, const hsiphash_key_t *key);
u32 hsiphash_4u32(u32 first, u32 second, u32 third, u32 forth, const hsiphash_key_t *key);
u32 xxh32(const void *input, size_t len, u32 seed);
u64 xxh64(const void *input, size_t len, u64 seed);

/* parser.c */
#define MAX_OPT_ARGS 3
typedef struct {
	char *from;
	char *to;
} substring_t;
struct match_token {
	int token;
	const char *pattern;
};
enum string_size_units { STRING_UNITS_10, STRING_UNITS_2 };
#define UNESCAPE_SPACE 0x01
#define UNESCAPE_OCTAL 0x02
#define UNESCAPE_HEX 0x04
#define UNESCAPE_SPECIAL 0x08
#define UNESCAPE_ANY (UNESCAPE_SPACE | UNESCAPE_OCTAL | UNESCAPE_HEX | UNESCAPE_SPECIAL)
int match_token(char *s, const struct match_token *table, substring_t args[]);
int match_int(substring_t *s, int *result);
int match_uint(substring_t *s, unsigned int *result);
int match_u64(substring_t *s, u64 *result);
int match_octal(substring_t *s, int *result);
int match_hex(substring_t *s, int *result);
bool match_wildcard(const char *pattern, const char *str);
size_t match_strlcpy(char *dest, const substring_t *src, size_t size);
void string_get_size(u64 size, u64 blk_size, enum string_size_units units, char *buf, int len);
int string_unescape(char *src, char *dst, size_t size, unsigned int flags);
char *next_arg(char *args, char **param, char **val);
int num_to_str(char *buf, int size, unsigned long long num, unsigned int width);
int vscnprintf(char *buf, size_t size, const char *fmt, va_list args);
int scnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool mac_pton(const char *s, u8 *mac);
int hex_dump_to_buffer(const void *buf, size_t len, int rowsize, int groupsize, char *linebuf, size_t linebuflen,
		       bool ascii);

/* extable.c */
struct exception_table_entry {
	int insn, fixup, data;
};
struct timerqueue_node {
	struct rb_node node;
	s64 expires;
};
struct timerqueue_head {
	struct rb_root rb_root;
	struct timerqueue_node *next;
};
void sort_extable(struct exception_table_entry *start, struct exception_table_entry *finish);
const struct exception_table_entry *search_extable(const struct exception_table_entry *base, const size_t num,
						   unsigned long value);
bool timerqueue_add(struct timerqueue_head *head, struct timerqueue_node *node);
bool timerqueue_del(struct timerqueue_head *head, struct timerqueue_node *node);
struct timerqueue_node *timerqueue_iterate_next(struct timerqueue_node *node);
int __ctzsi2(int val);
int __clzsi2(int val);
int __clzdi2(long val);
int __ctzdi2(long val);

/* the boot-time check of the helpers above (test_lib.c): the number of failed checks */
int lib_selftest(void);

#endif
