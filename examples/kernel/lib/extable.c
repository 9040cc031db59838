/*
 * lib/extable.c (sorting and searching exception tables whose entries hold
 * their addresses relative to themselves, as x86, arm64 and riscv do),
 * lib/timerqueue.c (timers ordered by expiry in an rbtree, the earliest
 * kept at hand) and lib/clz_ctz.c (the compiler's count-leading/trailing-
 * zeros helpers; 32 / 64 for a zero argument here, undefined in Linux).
 */
#include "libk.h"

static inline unsigned long ex_to_insn(const struct exception_table_entry *x)
{
	return (unsigned long)&x->insn + (unsigned long)(long)x->insn;
}

static noinline int cmp_ex_sort(const void *a, const void *b)
{
	const struct exception_table_entry *x = a, *y = b;

	if (ex_to_insn(x) > ex_to_insn(y))
		return 1;
	if (ex_to_insn(x) < ex_to_insn(y))
		return -1;
	return 0;
}

/* moving a relative entry changes its offsets by the distance moved */
static noinline void swap_ex(void *a, void *b, int size)
{
	struct exception_table_entry *x = a, *y = b, tmp;
	int delta = (int)((char *)b - (char *)a);

	(void)size;
	tmp = *x;
	x->insn = y->insn + delta;
	y->insn = tmp.insn - delta;
	x->fixup = y->fixup + delta;
	y->fixup = tmp.fixup - delta;
	x->data = y->data;
	y->data = tmp.data;
}

void sort_extable(struct exception_table_entry *start, struct exception_table_entry *finish)
{
	sort(start, (size_t)(finish - start), sizeof(struct exception_table_entry), cmp_ex_sort, swap_ex);
}

static noinline int cmp_ex_search(const void *key, const void *elt)
{
	const struct exception_table_entry *e = elt;
	unsigned long k = *(const unsigned long *)key;

	if (k > ex_to_insn(e))
		return 1;
	if (k < ex_to_insn(e))
		return -1;
	return 0;
}

/* the entry for instruction address value in a sorted table, or NULL */
const struct exception_table_entry *search_extable(const struct exception_table_entry *base, const size_t num,
						   unsigned long value)
{
	return bsearch(&value, base, num, sizeof(struct exception_table_entry), cmp_ex_search);
}

/* add node (its expires set); true when it is the new earliest */
bool timerqueue_add(struct timerqueue_head *head, struct timerqueue_node *node)
{
	struct rb_node **p = &head->rb_root.rb_node, *parent = NULL;
	bool leftmost = true;

	while (*p) {
		parent = *p;
		if (node->expires < container_of(parent, struct timerqueue_node, node)->expires) {
			p = &parent->rb_left;
		} else {
			p = &parent->rb_right;
			leftmost = false;
		}
	}
	rb_link_node(&node->node, parent, p);
	rb_insert_color(&node->node, &head->rb_root);
	if (leftmost)
		head->next = node;
	return leftmost;
}

/* remove node; true when the queue still holds timers */
bool timerqueue_del(struct timerqueue_head *head, struct timerqueue_node *node)
{
	if (head->next == node) {
		struct rb_node *rbn = rb_next(&node->node);

		head->next = rbn ? container_of(rbn, struct timerqueue_node, node) : NULL;
	}
	rb_erase(&node->node, &head->rb_root);
	node->node.__rb_parent_color = (unsigned long)&node->node;
	return head->next != NULL;
}

struct timerqueue_node *timerqueue_iterate_next(struct timerqueue_node *node)
{
	struct rb_node *next;

	if (!node)
		return NULL;
	next = rb_next(&node->node);
	return next ? container_of(next, struct timerqueue_node, node) : NULL;
}

/* written without __builtin_ctz/clz: a compiler may lower those to calls of these very helpers */
int __ctzsi2(int val)
{
	unsigned int v = (unsigned int)val;
	int n = 0;

	while (n < 32 && !(v & 1)) {
		v >>= 1;
		n++;
	}
	return n;
}

int __clzsi2(int val)
{
	unsigned int v = (unsigned int)val;
	int n = 0;

	while (n < 32 && !(v & 0x80000000U)) {
		v <<= 1;
		n++;
	}
	return n;
}

int __clzdi2(long val)
{
	unsigned long v = (unsigned long)val;
	int n = 0;

	while (n < 64 && !(v & (1UL << 63))) {
		v <<= 1;
		n++;
	}
	return n;
}

int __ctzdi2(long val)
{
	unsigned long v = (unsigned long)val;
	int n = 0;

	while (n < 64 && !(v & 1)) {
		v >>= 1;
		n++;
	}
	return n;
}
