/*
 * test_lib.c - the boot-time check of the lib/ helpers, in the spirit of
 * Linux's lib/test_string.c, test_kstrtox.c, test_bitmap.c, test_sort.c,
 * rbtree_test.c: each helper is called on values whose results Linux's
 * kernel-doc (or the algorithm's definition) fixes, and each mismatch is
 * printed with its line. Built without the function tracer's hook: it is
 * the caller, not a traced helper.
 */
#include "libk.h"

static int checks, failed;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		checks++;                                                                  \
		if (!(cond)) {                                                             \
			failed++;                                                          \
			printk("lib_selftest: check at test_lib.c:%d failed: %s\n", __LINE__, #cond); \
		}                                                                          \
	} while (0)

static noinline void test_string(void)
{
	char buf[32], *p, *s;
	static const char *const modes[] = {"off", "on", "auto", NULL};
	u16 w[4];
	u8 bin[4];

	CHECK(strncasecmp("Hello", "hELLO world", 5) == 0);
	CHECK(strcasecmp("abc", "ABD") < 0);
	CHECK(strcmp(strcpy(buf, "kprobe"), "kprobe") == 0);
	CHECK(strlcpy(buf, "function", 5) == 8 && strcmp(buf, "func") == 0);
	CHECK(strscpy(buf, "tracer", 4) == -E2BIG && strcmp(buf, "tra") == 0);
	CHECK(strscpy(buf, "ok", sizeof(buf)) == 2);
	memset(buf, 'x', sizeof(buf));
	CHECK(strscpy_pad(buf, "ab", 6) == 2 && buf[3] == 0 && buf[5] == 0 && buf[6] == 'x');
	CHECK(stpcpy(buf, "abc") == buf + 3);
	CHECK(strcmp(strcat(buf, "de"), "abcde") == 0);
	CHECK(strcmp(strncat(buf, "fghij", 2), "abcdefg") == 0);
	CHECK(strlcat(buf, "0123456789", 10) == 17 && strcmp(buf, "abcdefg01") == 0);
	s = "a/b/c";
	CHECK(strchr(s, '/') == s + 1 && strrchr(s, '/') == s + 3 && strchr(s, 'z') == NULL);
	CHECK(strchr(s, '\0') == s + 5 && strchrnul(s, 'z') == s + 5 && strnchrnul(s, 2, 'c') == s + 2);
	CHECK(strnchr(s, 3, 'b') == s + 2 && strnchr(s, 2, 'b') == NULL);
	CHECK(strcmp(skip_spaces("  \t x"), "x") == 0);
	strcpy(buf, "  padded \n");
	CHECK(strcmp(strim(buf), "padded") == 0);
	CHECK(strnlen("abcdef", 3) == 3 && strnlen("ab", 9) == 2);
	CHECK(strspn("aabxc", "ab") == 3 && strcspn("aabxc", "xc") == 3);
	s = "p:kprobes/ev";
	CHECK(strpbrk(s, "/:") == s + 1 && strpbrk(s, "#") == NULL);
	strcpy(buf, "p:grp/ev sym");
	p = buf;
	CHECK(strcmp(strsep(&p, ": "), "p") == 0 && strcmp(strsep(&p, ": "), "grp/ev") == 0 &&
	      strcmp(p, "sym") == 0);
	CHECK(sysfs_streq("on", "on\n") && sysfs_streq("on\n", "on") && !sysfs_streq("on", "onx"));
	CHECK(match_string(modes, 3, "auto") == 2 && match_string(modes, 3, "no") == -EINVAL);
	CHECK(__sysfs_match_string(modes, 3, "on\n") == 1);
	memset16(w, 0xbeef, 3);
	w[3] = 0;
	CHECK(w[0] == 0xbeef && w[2] == 0xbeef && w[3] == 0);
	CHECK(bcmp("abc", "abd", 3) != 0 && bcmp("abc", "abc", 3) == 0);
	CHECK((char *)memscan(buf, 'Q', 4) == buf + 4);
	CHECK(strcmp(strstr("kprobe_events", "events"), "events") == 0 && strstr("abc", "x") == NULL);
	CHECK(strnstr("kprobe_events", "events", 8) == NULL && strnstr("kprobe", "", 0) != NULL);
	CHECK(memchr("abc", 'c', 3) != NULL && memchr("abc", 'c', 2) == NULL);
	memset(buf, 0, 8);
	buf[5] = 1;
	CHECK(memchr_inv(buf, 0, 8) == buf + 5 && memchr_inv(buf, 0, 5) == NULL);
	strcpy(buf, "a.b.c");
	strreplace(buf, '.', '_');
	CHECK(strcmp(buf, "a_b_c") == 0);
	memcpy_and_pad(buf, 6, "xy", 2, '-');
	CHECK(memcmp(buf, "xy----", 6) == 0);
	CHECK(memweight("\x0f\xff", 2) == 12);
	CHECK(hex_to_bin('a') == 10 && hex_to_bin('F') == 15 && hex_to_bin('g') == -1);
	CHECK(hex2bin(bin, "deadBEEF", 4) == 0 && bin[0] == 0xde && bin[3] == 0xef && hex2bin(bin, "zz", 1) == -EINVAL);
	*bin2hex(buf, bin, 2) = 0;
	CHECK(strcmp(buf, "dead") == 0);
	CHECK(glob_match("do_sys_*", "do_sys_open") && glob_match("k?probe", "kxprobe") && !glob_match("*_read", "vfs_write"));
	CHECK(glob_match("[a-c]x", "bx") && !glob_match("[!a-c]x", "bx") && glob_match("a\\*", "a*"));
	CHECK(strcmp(errname(-ENOENT), "-ENOENT") == 0 && strcmp(errname(EINVAL), "EINVAL") == 0 && errname(-4000) == NULL);
}

static noinline void test_kstrtox(void)
{
	unsigned long long ull;
	long long ll;
	unsigned long ul;
	long l;
	unsigned int u;
	int i, ints[8];
	u16 u16v;
	s16 s16v;
	u8 u8v;
	s8 s8v;
	bool b;
	char *end;

	CHECK(kstrtoull("0x1f", 0, &ull) == 0 && ull == 31);
	CHECK(kstrtoull("017", 0, &ull) == 0 && ull == 15);
	CHECK(kstrtoull("+42\n", 10, &ull) == 0 && ull == 42);
	CHECK(kstrtoull("18446744073709551616", 10, &ull) == -ERANGE);
	CHECK(kstrtoull("12x", 10, &ull) == -EINVAL && kstrtoull("", 10, &ull) == -EINVAL);
	CHECK(kstrtoull("ff", 16, &ull) == 0 && ull == 255 && kstrtoull("0xff", 16, &ull) == 0);
	CHECK(kstrtoll("-9223372036854775808", 10, &ll) == 0 && ll == (long long)(1ULL << 63));
	CHECK(kstrtoll("9223372036854775808", 10, &ll) == -ERANGE);
	CHECK(_kstrtoul("4096", 0, &ul) == 0 && ul == 4096 && _kstrtol("-1", 0, &l) == 0 && l == -1);
	CHECK(kstrtouint("4294967296", 10, &u) == -ERANGE && kstrtouint("4294967295", 10, &u) == 0);
	CHECK(kstrtoint("-2147483648", 10, &i) == 0 && i == (int)0x80000000 && kstrtoint("2147483648", 10, &i) == -ERANGE);
	CHECK(kstrtou16("65535", 10, &u16v) == 0 && kstrtou16("65536", 10, &u16v) == -ERANGE);
	CHECK(kstrtos16("-32768", 10, &s16v) == 0 && s16v == -32768 && kstrtos16("32768", 10, &s16v) == -ERANGE);
	CHECK(kstrtou8("255", 10, &u8v) == 0 && kstrtou8("256", 10, &u8v) == -ERANGE);
	CHECK(kstrtos8("-128", 10, &s8v) == 0 && kstrtos8("-129", 10, &s8v) == -ERANGE);
	CHECK(kstrtobool("on", &b) == 0 && b && kstrtobool("N", &b) == 0 && !b && kstrtobool("x", &b) == -EINVAL);
	CHECK(simple_strtoull("0x10zz", &end, 0) == 16 && *end == 'z');
	CHECK(simple_strtoul("777", NULL, 8) == 511 && simple_strtol("-12", NULL, 10) == -12);
	CHECK(simple_strtoll("-0x10", NULL, 0) == -16);
	end = "5,-3";
	CHECK(get_option(&end, &i) == 2 && i == 5 && get_option(&end, &i) == 1 && i == -3);
	CHECK(*get_options("1,3-5,9", 8, ints) == '\0' && ints[0] == 5 && ints[2] == 3 && ints[4] == 5 && ints[5] == 9);
	CHECK(memparse("64K", &end) == 65536 && *end == '\0' && memparse("2G", NULL) == 2ULL << 30);
	CHECK(parse_option_str("quiet,nosmp,debug", "nosmp") && !parse_option_str("quiet,nosmpx", "nosmp"));
}

static noinline void test_bitmap(void)
{
	unsigned long a[2] = {0}, b[2] = {0}, d[2];
	unsigned long clump;
	u32 arr[4];

	CHECK(__sw_hweight8(0xff) == 8 && __sw_hweight16(0x8001) == 2 && __sw_hweight32(0xf0f0f0f0) == 16);
	CHECK(__sw_hweight64(~0UL) == 64);
	__bitmap_set(a, 3, 70);
	CHECK(a[0] == ~7UL && a[1] == 0x1ff && __bitmap_weight(a, 128) == 70 && __bitmap_weight(a, 66) == 63);
	__bitmap_clear(a, 60, 8);
	CHECK(_find_next_zero_bit(a, 128, 3) == 60 && _find_next_bit(a, 128, 60) == 68);
	CHECK(_find_first_bit(a, 128) == 3 && _find_first_zero_bit(a, 128) == 0 && _find_last_bit(a, 128) == 72);
	CHECK(_find_next_bit(a, 70, 69) == 69 && _find_next_bit(b, 100, 0) == 100 && _find_last_bit(b, 100) == 100);
	b[0] = 0x30;
	b[1] = 0x100;
	CHECK(_find_first_and_bit(a, b, 128) == 4 && _find_next_and_bit(a, b, 128, 6) == 72);
	CHECK(_find_next_andnot_bit(a, b, 128, 4) == 6);
	CHECK(__find_nth_bit(b, 128, 2) == 72 && __find_nth_bit(b, 128, 3) == 128);
	CHECK(__bitmap_and(d, a, b, 128) && d[0] == 0x30 && !__bitmap_andnot(d, b, a, 128));
	__bitmap_or(d, a, b, 128);
	CHECK(__bitmap_equal(d, a, 128) && __bitmap_subset(b, a, 128) && __bitmap_intersects(a, b, 65));
	CHECK(__bitmap_or_equal(a, b, d, 128));
	__bitmap_xor(d, a, a, 128);
	CHECK(d[0] == 0 && d[1] == 0);
	__bitmap_complement(d, d, 128);
	CHECK(d[0] == ~0UL && d[1] == ~0UL);
	__bitmap_shift_left(d, b, 4, 128);
	CHECK(d[0] == 0x300 && d[1] == 0x1000);
	__bitmap_shift_right(d, b, 68, 128);
	CHECK(d[0] == 0x10 && d[1] == 0);
	__bitmap_replace(d, a, b, b, 128);
	CHECK(__bitmap_equal(d, a, 128));
	d[0] = 0x0f;
	d[1] = 0;
	CHECK(bitmap_find_next_zero_area_off(d, 128, 0, 3, 3, 0) == 4 && bitmap_find_next_zero_area_off(d, 128, 0, 3, 7, 0) == 8);
	CHECK(bitmap_ord_to_pos(b, 1, 128) == 5 && bitmap_bitremap(5, b, a, 128) == 4);
	CHECK(bitmap_find_free_region(d, 128, 2) == 4 && d[0] == 0xff && bitmap_allocate_region(d, 4, 2) == -EBUSY);
	bitmap_release_region(d, 4, 2);
	CHECK(d[0] == 0x0f);
	arr[0] = 0x11111111;
	arr[1] = 0x22222222;
	arr[2] = 0x33333333;
	bitmap_from_arr32(d, arr, 80);
	CHECK(d[0] == 0x2222222211111111UL && d[1] == 0x3333);
	bitmap_to_arr32(arr, d, 72);
	CHECK(arr[0] == 0x11111111 && arr[2] == 0x33);
	d[0] = 0x00ab000000cd0000UL;
	CHECK(find_next_clump8(&clump, d, 64, 0) == 16 && clump == 0xcd && find_next_clump8(&clump, d, 64, 24) == 48 && clump == 0xab);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

struct item {
	struct list_head list;
	int key, seq;
	struct rb_node rb;
	struct plist_node pl;
};

static int cmp_item(void *priv, const struct list_head *a, const struct list_head *b)
{
	return container_of(a, struct item, list)->key - container_of(b, struct item, list)->key;
}

static struct item items[16];

static noinline void test_sort(void)
{
	int v[9] = {5, -2, 9, 0, 5, 7, 1, 3, -8}, key = 7, ok = 1, i;
	struct list_head head = {&head, &head}, spare, *pos;

	sort(v, 9, sizeof(int), cmp_int, NULL);
	for (i = 1; i < 9; i++)
		ok &= v[i - 1] <= v[i];
	CHECK(ok && v[0] == -8 && v[8] == 9);
	CHECK(bsearch(&key, v, 9, sizeof(int), cmp_int) == &v[7]);
	key = 4;
	CHECK(bsearch(&key, v, 9, sizeof(int), cmp_int) == NULL);
	for (i = 0; i < 16; i++) {
		items[i].key = (i * 7) % 5;
		items[i].seq = i;
		items[i].list.next = &head;
		items[i].list.prev = head.prev;
		head.prev->next = &items[i].list;
		head.prev = &items[i].list;
	}
	CHECK(__list_add_valid(&spare, head.prev, &head));
	list_sort(NULL, &head, cmp_item);
	ok = 1;
	i = -1;
	for (pos = head.next; pos != &head; pos = pos->next) {
		struct item *it = container_of(pos, struct item, list);
		struct item *pv = pos->prev == &head ? NULL : container_of(pos->prev, struct item, list);

		ok &= pos->next->prev == pos;
		if (pv) /* stable: equal keys keep their order */
			ok &= pv->key < it->key || (pv->key == it->key && pv->seq < it->seq);
		i++;
	}
	CHECK(ok && i == 15 && __list_del_entry_valid(head.next));
}

static noinline void test_rbtree(void)
{
	struct rb_root root = {NULL};
	struct rb_node *n;
	int i, prev = -1, count = 0, ok = 1;

	for (i = 0; i < 16; i++) {
		struct rb_node **link = &root.rb_node, *parent = NULL;

		items[i].key = (i * 11) % 16;
		while (*link) {
			parent = *link;
			link = items[i].key < container_of(parent, struct item, rb)->key ? &parent->rb_left : &parent->rb_right;
		}
		rb_link_node(&items[i].rb, parent, link);
		rb_insert_color(&items[i].rb, &root);
	}
	for (n = rb_first(&root); n; n = rb_next(n), count++) {
		ok &= container_of(n, struct item, rb)->key > prev;
		prev = container_of(n, struct item, rb)->key;
	}
	CHECK(ok && count == 16 && container_of(rb_last(&root), struct item, rb)->key == 15);
	CHECK((root.rb_node->__rb_parent_color & 1) == 1);
	for (i = 0; i < 16; i += 3)
		rb_erase(&items[i].rb, &root);
	count = 0;
	prev = 99;
	ok = 1;
	for (n = rb_last(&root); n; n = rb_prev(n), count++) {
		ok &= container_of(n, struct item, rb)->key < prev;
		prev = container_of(n, struct item, rb)->key;
	}
	CHECK(ok && count == 10);
	rb_replace_node(&items[1].rb, &items[0].rb, &root);
	items[0].key = items[1].key;
	count = 0;
	for (n = rb_first_postorder(&root); n; n = rb_next_postorder(n))
		count++;
	CHECK(count == 10 && rb_next(&items[0].rb) != &items[1].rb);
}

static noinline void test_math(void)
{
	struct reciprocal_value r = reciprocal_value(7);
	unsigned long num, den;
	u64 rem;
	struct minmax mm = {{{0, 0}, {0, 0}, {0, 0}}};

	CHECK(gcd(84, 36) == 12 && lcm(4, 6) == 12 && lcm(0, 6) == 0 && lcm_not_zero(0, 6) == 6);
	CHECK(int_pow(3, 5) == 243 && int_sqrt(99) == 9 && int_sqrt(100) == 10 && int_sqrt64(1ULL << 40) == 1U << 20);
	CHECK(reciprocal_divide(100, r) == 14 && reciprocal_divide(0xffffffff, r) == 0xffffffffU / 7);
	CHECK(div64_u64_rem(100, 7, &rem) == 14 && rem == 2 && div64_u64(1ULL << 40, 3) == (1ULL << 40) / 3);
	CHECK(div64_s64(-100, 7) == -14 && iter_div_u64_rem(1000000007, 1000000000, &rem) == 1 && rem == 7);
	CHECK(mul_u64_u64_div_u64(1ULL << 40, 1ULL << 40, 1ULL << 30) == 1ULL << 50);
	rational_best_approximation(31415, 10000, 100, 100, &num, &den);
	CHECK(num == 22 && den == 7);
	CHECK(_bcd2bin(0x59) == 59 && _bin2bcd(42) == 0x42);
	CHECK(intlog2(8) == 3U << 24 && intlog2(1) == 0 && intlog10(2000) >> 24 == 3);
	CHECK(minmax_running_max(&mm, 10, 1, 5) == 5 && minmax_running_max(&mm, 10, 2, 3) == 5 &&
	      minmax_running_max(&mm, 10, 30, 2) == 2);
	CHECK(minmax_running_min(&mm, 10, 31, 1) == 1);
}

static noinline void test_crc(void)
{
	static const u8 check[] = "123456789";
	static u8 table[CRC8_TABLE_SIZE];
	u8 hdr[4] = {0x45, 0x00, 0x00, 0x1c};

	/* the catalogue "check" values of each CRC over "123456789" */
	CHECK((crc32_le(~0U, check, 9) ^ ~0U) == 0xcbf43926);
	CHECK((__crc32c_le(~0U, check, 9) ^ ~0U) == 0xe3069283);
	CHECK((crc32_be(~0U, check, 9) ^ ~0U) == 0xfc891918);
	CHECK(crc16(0, check, 9) == 0xbb3d && crc_itu_t(0, check, 9) == 0x31c3);
	CHECK((u16)(crc_ccitt(0xffff, check, 9) ^ 0xffff) == 0x906e);
	crc8_populate_msb(table, 0x07);
	CHECK(crc8(table, check, 9, 0) == 0xf4);
	crc8_populate_lsb(table, 0x8c);
	CHECK(crc8(table, check, 9, 0) == 0xa1);
	CHECK((crc7_be(0, check, 9) >> 1) == 0x75);
	CHECK(crc4(0, 0x12345678ULL, 32) == crc4(crc4(0, 0x1234, 16), 0x5678, 16));
	CHECK(ip_compute_csum(hdr, 4) == (u16)~0x451c && csum_fold(csum_partial(hdr, 4, 0)) == (u16)~0x451c);
}

static noinline void test_lists(void)
{
	struct llist_head lh = {NULL};
	struct llist_node n[3];
	struct plist_head ph = {{&ph.node_list, &ph.node_list}};
	static const int prios[6] = {5, 1, 5, 3, 1, 9};
	struct list_head *pos;
	int i, order[6], k = 0;

	CHECK(llist_add_batch(&n[0], &n[0], &lh) && !llist_add_batch(&n[1], &n[1], &lh));
	llist_add_batch(&n[2], &n[2], &lh);
	CHECK(llist_del_first(&lh) == &n[2] && llist_reverse_order(lh.first) == &n[0] && n[0].next == &n[1]);
	for (i = 0; i < 6; i++) {
		struct plist_node *p = &items[i].pl;

		p->prio = prios[i];
		p->prio_list.next = p->prio_list.prev = &p->prio_list;
		p->node_list.next = p->node_list.prev = &p->node_list;
		plist_add(p, &ph);
	}
	for (pos = ph.node_list.next; pos != &ph.node_list; pos = pos->next)
		order[k++] = (int)(container_of(pos, struct item, pl.node_list) - items);
	CHECK(k == 6 && order[0] == 1 && order[1] == 4 && order[2] == 3 && order[3] == 0 && order[4] == 2 && order[5] == 5);
	plist_requeue(&items[0].pl, &ph);
	CHECK(ph.node_list.next->next->next->next == &items[2].pl.node_list);
	plist_del(&items[2].pl, &ph);
	plist_del(&items[1].pl, &ph);
	CHECK(ph.node_list.next == &items[4].pl.node_list && ph.node_list.prev == &items[5].pl.node_list);
}

static noinline void test_buf(void)
{
	guid_t g;
	uuid_t u;
	static const ucs2_char_t name[] = {'B', 'o', 'o', 't', 0xe9, 0x20ac, 0};
	u8 utf8[16];
	char text[16];
	struct seq_buf s = {text, 8, 0};
	struct __kfifo f;
	u8 ring[8], out[8];

	CHECK(uuid_is_valid("c12a7328-f81f-11d2-ba4b-00a0c93ec93b") && !uuid_is_valid("c12a7328f81f-11d2-ba4b-00a0c93ec93b"));
	CHECK(guid_parse("c12a7328-f81f-11d2-ba4b-00a0c93ec93b", &g) == 0 && g.b[0] == 0x28 && g.b[3] == 0xc1 && g.b[15] == 0x3b);
	CHECK(uuid_parse("c12a7328-f81f-11d2-ba4b-00a0c93ec93b", &u) == 0 && u.b[0] == 0xc1 && uuid_parse("x", &u) == -EINVAL);
	CHECK(ucs2_strlen(name) == 6 && ucs2_strnlen(name, 3) == 3 && ucs2_strsize(name, 100) == 12);
	CHECK(ucs2_strncmp(name, name, 6) == 0 && ucs2_strncmp(name, name + 1, 1) < 0);
	CHECK(ucs2_utf8size(name) == 9 && ucs2_as_utf8(utf8, name, 16) == 9 && utf8[4] == 0xc3 && utf8[9] == 0);
	CHECK(seq_buf_puts(&s, "abc") == 0 && seq_buf_putc(&s, 'd') == 0 && seq_buf_printf(&s, "%d", 12) == 0);
	CHECK(s.len == 6 && memcmp(text, "abcd12", 6) == 0 && !seq_buf_has_overflowed(&s));
	CHECK(seq_buf_putmem(&s, "xyz", 3) == -1 && seq_buf_has_overflowed(&s));
	CHECK(__kfifo_init(&f, ring, 8, 1) == 0 && __kfifo_in(&f, "0123456789", 10) == 8);
	CHECK(__kfifo_out(&f, out, 5) == 5 && memcmp(out, "01234", 5) == 0 && __kfifo_in(&f, "ab", 2) == 2);
	CHECK(__kfifo_out_peek(&f, out, 8) == 5 && memcmp(out, "567ab", 5) == 0 && __kfifo_out(&f, out, 8) == 5);
}

static noinline void test_hash(void)
{
	static const siphash_key_t key = {{0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL}};
	static const hsiphash_key_t hkey = {{0x0706050403020100UL, 0x0f0e0d0c0b0a0908UL}};
	u8 msg[16];
	int i;

	for (i = 0; i < 16; i++)
		msg[i] = (u8)i;
	/* SipHash-2-4's reference vectors (key 00..0f, message 00..len-1) */
	CHECK(__siphash_aligned(msg, 0, &key) == 0x726fdb47dd0e0e31ULL);
	CHECK(__siphash_aligned(msg, 8, &key) == 0x93f5f5799a932462ULL && siphash_1u64(0x0706050403020100ULL, &key) == 0x93f5f5799a932462ULL);
	CHECK(__siphash_aligned(msg, 15, &key) == 0xa129ca6149be45e5ULL);
	CHECK(siphash_2u64(0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL, &key) == __siphash_aligned(msg, 16, &key));
	CHECK(siphash_1u32(0x03020100, &key) == __siphash_aligned(msg, 4, &key));
	CHECK(siphash_3u32(0x03020100, 0x07060504, 0x0b0a0908, &key) == __siphash_aligned(msg, 12, &key));
	CHECK(siphash_3u64(1, 2, 3, &key) != siphash_4u64(1, 2, 3, 0, &key));
	CHECK(hsiphash_2u32(0x03020100, 0x07060504, &hkey) == __hsiphash_aligned(msg, 8, &hkey));
	CHECK(hsiphash_1u32(1, &hkey) != hsiphash_1u32(2, &hkey) && hsiphash_3u32(1, 2, 3, &hkey) != hsiphash_4u32(1, 2, 3, 0, &hkey));
	/* xxHash's published values for the empty string and "abc", seed 0 */
	CHECK(xxh32("", 0, 0) == 0x02cc5d05 && xxh32("abc", 3, 0) == 0x32d153ff);
	CHECK(xxh64("", 0, 0) == 0xef46db3751d8e999ULL && xxh64("abc", 3, 0) == 0x44bc2cf5ad770999ULL);
	CHECK(xxh32("0123456789abcdefXYZ", 19, 1) != xxh32("0123456789abcdefXYZ", 19, 2));
	CHECK(xxh64("0123456789abcdef0123456789abcdefXYZ", 35, 0) != xxh64("0123456789abcdef0123456789abcdefXYz", 35, 0));
}

static noinline void test_parser(void)
{
	enum { OPT_UID, OPT_MODE, OPT_NAME, OPT_ERR };
	static const struct match_token tokens[] = {
		{OPT_UID, "uid=%u"}, {OPT_MODE, "mode=%o"}, {OPT_NAME, "name=%s"}, {OPT_ERR, NULL},
	};
	substring_t args[MAX_OPT_ARGS];
	char opt[16], out[32], cmd[48], *param, *val, *rest;
	unsigned int u;
	int v;
	u64 big;
	u8 mac[6];

	strcpy(opt, "mode=0755");
	CHECK(match_token(opt, tokens, args) == OPT_MODE && match_octal(&args[0], &v) == 0 && v == 0755);
	strcpy(opt, "uid=1000");
	CHECK(match_token(opt, tokens, args) == OPT_UID && match_uint(&args[0], &u) == 0 && u == 1000);
	CHECK(match_int(&args[0], &v) == 0 && v == 1000 && match_hex(&args[0], &v) == 0 && v == 0x1000);
	CHECK(match_u64(&args[0], &big) == 0 && big == 1000);
	strcpy(opt, "name=sda1");
	CHECK(match_token(opt, tokens, args) == OPT_NAME && match_strlcpy(out, &args[0], 3) == 4 && strcmp(out, "sd") == 0);
	strcpy(opt, "bogus");
	CHECK(match_token(opt, tokens, args) == OPT_ERR);
	CHECK(match_wildcard("k*_e?ents", "kprobe_events") && !match_wildcard("k*_e?ents", "kprobe_event"));
	string_get_size(8192, 512, STRING_UNITS_2, out, sizeof(out));
	CHECK(strcmp(out, "4.00 MiB") == 0);
	string_get_size(1000, 1, STRING_UNITS_10, out, sizeof(out));
	CHECK(strcmp(out, "1.00 kB") == 0);
	strcpy(cmd, "a\\tb\\x41\\101\\n");
	CHECK(string_unescape(cmd, out, sizeof(out), 0) == 6 && memcmp(out, "a\tbAA\n", 6) == 0);
	strcpy(cmd, "root=/dev/sda1 quiet init=\"/bin/sh\"");
	rest = next_arg(cmd, &param, &val);
	CHECK(strcmp(param, "root") == 0 && strcmp(val, "/dev/sda1") == 0 && strcmp(rest, "quiet init=\"/bin/sh\"") == 0);
	rest = next_arg(rest, &param, &val);
	CHECK(strcmp(param, "quiet") == 0 && val == NULL);
	rest = next_arg(rest, &param, &val);
	CHECK(strcmp(param, "init") == 0 && strcmp(val, "/bin/sh") == 0 && *rest == '\0');
	CHECK(num_to_str(out, 8, 1234, 6) == 6 && memcmp(out, "  1234", 6) == 0 && num_to_str(out, 3, 1234, 0) == 0);
	CHECK(snprintf(out, 4, "%s", "abcdef") == 6 && scnprintf(out, 4, "%s", "abcdef") == 3);
	CHECK(mac_pton("00:1a:2B:3c:4d:5e", mac) && mac[1] == 0x1a && mac[5] == 0x5e && !mac_pton("00:1a:2B", mac));
	CHECK(hex_dump_to_buffer("AB\x01", 3, 16, 1, out, sizeof(out), false) == 8 && strcmp(out, "41 42 01") == 0);
}

static noinline void test_extable(void)
{
	static struct exception_table_entry ex[4];
	static const unsigned long at[4] = {0x40, 0x10, 0x30, 0x20};
	static struct timerqueue_node tn[5];
	static const s64 expires[5] = {50, 10, 40, 10, 30};
	struct timerqueue_head tq = {{NULL}, NULL};
	unsigned long base = (unsigned long)&ex[0];
	int i, n = 0;

	for (i = 0; i < 4; i++) {
		ex[i].insn = (int)((long)(base + at[i]) - (long)&ex[i].insn);
		ex[i].fixup = (int)((long)(base + at[i] + 1) - (long)&ex[i].fixup);
		ex[i].data = i;
	}
	sort_extable(ex, ex + 4);
	CHECK(ex[0].data == 1 && ex[3].data == 0 && (unsigned long)&ex[2].insn + (unsigned long)(long)ex[2].insn == base + 0x30);
	CHECK(search_extable(ex, 4, base + 0x20) == &ex[1] && search_extable(ex, 4, base + 0x21) == NULL);
	for (i = 0; i < 5; i++) {
		tn[i].expires = expires[i];
		n += timerqueue_add(&tq, &tn[i]);
	}
	CHECK(n == 2 && tq.next == &tn[1]);
	CHECK(timerqueue_iterate_next(tq.next) == &tn[3] && timerqueue_iterate_next(&tn[0]) == NULL);
	CHECK(timerqueue_del(&tq, &tn[1]) && tq.next == &tn[3]);
	CHECK(__ctzsi2(0x80) == 7 && __clzsi2(1) == 31 && __clzdi2(1) == 63 && __ctzdi2(1L << 40) == 40);
	CHECK(crc32_le_shift(0x12345678, 5) == crc32_le(0x12345678, (const u8 *)"\0\0\0\0\0", 5));
	CHECK(__crc32c_le_shift(0x1234, 70) != 0x1234 && crc_t10dif_generic(0, (const u8 *)"123456789", 9) == 0xd0db);
	CHECK(crc64_be(0, "123456789", 9) == 0x6c40df5f0b497347ULL);
}

int lib_selftest(void)
{
	checks = failed = 0;
	test_string();
	test_kstrtox();
	test_bitmap();
	test_sort();
	test_rbtree();
	test_math();
	test_crc();
	test_lists();
	test_buf();
	test_hash();
	test_parser();
	test_extable();
	printk("lib_selftest: %d checks, %d failed\n", checks, failed);
	return failed;
}
