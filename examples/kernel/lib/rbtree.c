/*
 * lib/rbtree.c - red-black trees as Linux's include/linux/rbtree.h lays
 * them out (the parent pointer and the colour share __rb_parent_color, bit
 * 0 set for black; the caller links a new node with rb_link_node and then
 * calls rb_insert_color), with the rebalancing written here from the
 * red-black tree rules: the root is black, a red node has black children,
 * every path from a node down has the same number of black nodes.
 */
#include "libk.h"

#define RB_RED 0
#define RB_BLACK 1

static inline struct rb_node *rb_parent(const struct rb_node *n)
{
	return (struct rb_node *)(n->__rb_parent_color & ~3UL);
}

static inline int rb_color(const struct rb_node *n)
{
	return (int)(n->__rb_parent_color & 1);
}

static inline bool rb_is_red(const struct rb_node *n)
{
	return n && rb_color(n) == RB_RED;
}

static inline bool rb_is_black(const struct rb_node *n)
{
	return !n || rb_color(n) == RB_BLACK;
}

static inline void rb_set_parent(struct rb_node *n, struct rb_node *p)
{
	n->__rb_parent_color = (n->__rb_parent_color & 3UL) | (unsigned long)p;
}

static inline void rb_set_color(struct rb_node *n, int color)
{
	n->__rb_parent_color = (n->__rb_parent_color & ~1UL) | (unsigned long)color;
}

/* make `new` take `old`'s place under old's parent (or as the root) */
static inline void change_child(struct rb_node *old, struct rb_node *new, struct rb_node *parent, struct rb_root *root)
{
	if (parent) {
		if (parent->rb_left == old)
			parent->rb_left = new;
		else
			parent->rb_right = new;
	} else {
		root->rb_node = new;
	}
}

static noinline void rotate_left(struct rb_node *x, struct rb_root *root)
{
	struct rb_node *y = x->rb_right, *p = rb_parent(x);

	x->rb_right = y->rb_left;
	if (y->rb_left)
		rb_set_parent(y->rb_left, x);
	y->rb_left = x;
	rb_set_parent(y, p);
	change_child(x, y, p, root);
	rb_set_parent(x, y);
}

static noinline void rotate_right(struct rb_node *x, struct rb_root *root)
{
	struct rb_node *y = x->rb_left, *p = rb_parent(x);

	x->rb_left = y->rb_right;
	if (y->rb_right)
		rb_set_parent(y->rb_right, x);
	y->rb_right = x;
	rb_set_parent(y, p);
	change_child(x, y, p, root);
	rb_set_parent(x, y);
}

void rb_insert_color(struct rb_node *node, struct rb_root *root)
{
	struct rb_node *parent, *gparent, *uncle;

	while ((parent = rb_parent(node)) && rb_is_red(parent)) {
		gparent = rb_parent(parent);
		if (parent == gparent->rb_left) {
			uncle = gparent->rb_right;
			if (rb_is_red(uncle)) {
				rb_set_color(uncle, RB_BLACK);
				rb_set_color(parent, RB_BLACK);
				rb_set_color(gparent, RB_RED);
				node = gparent;
				continue;
			}
			if (node == parent->rb_right) {
				rotate_left(parent, root);
				node = parent;
				parent = rb_parent(node);
			}
			rb_set_color(parent, RB_BLACK);
			rb_set_color(gparent, RB_RED);
			rotate_right(gparent, root);
		} else {
			uncle = gparent->rb_left;
			if (rb_is_red(uncle)) {
				rb_set_color(uncle, RB_BLACK);
				rb_set_color(parent, RB_BLACK);
				rb_set_color(gparent, RB_RED);
				node = gparent;
				continue;
			}
			if (node == parent->rb_left) {
				rotate_right(parent, root);
				node = parent;
				parent = rb_parent(node);
			}
			rb_set_color(parent, RB_BLACK);
			rb_set_color(gparent, RB_RED);
			rotate_left(gparent, root);
		}
	}
	rb_set_color(root->rb_node, RB_BLACK);
}

/* after removing a black node: `node` (maybe NULL) under `parent` is one black short */
static noinline void __rb_erase_color(struct rb_node *node, struct rb_node *parent, struct rb_root *root)
{
	struct rb_node *other;

	while (rb_is_black(node) && node != root->rb_node) {
		if (parent->rb_left == node) {
			other = parent->rb_right;
			if (rb_is_red(other)) {
				rb_set_color(other, RB_BLACK);
				rb_set_color(parent, RB_RED);
				rotate_left(parent, root);
				other = parent->rb_right;
			}
			if (rb_is_black(other->rb_left) && rb_is_black(other->rb_right)) {
				rb_set_color(other, RB_RED);
				node = parent;
				parent = rb_parent(node);
			} else {
				if (rb_is_black(other->rb_right)) {
					rb_set_color(other->rb_left, RB_BLACK);
					rb_set_color(other, RB_RED);
					rotate_right(other, root);
					other = parent->rb_right;
				}
				rb_set_color(other, rb_color(parent));
				rb_set_color(parent, RB_BLACK);
				rb_set_color(other->rb_right, RB_BLACK);
				rotate_left(parent, root);
				node = root->rb_node;
				break;
			}
		} else {
			other = parent->rb_left;
			if (rb_is_red(other)) {
				rb_set_color(other, RB_BLACK);
				rb_set_color(parent, RB_RED);
				rotate_right(parent, root);
				other = parent->rb_left;
			}
			if (rb_is_black(other->rb_left) && rb_is_black(other->rb_right)) {
				rb_set_color(other, RB_RED);
				node = parent;
				parent = rb_parent(node);
			} else {
				if (rb_is_black(other->rb_left)) {
					rb_set_color(other->rb_right, RB_BLACK);
					rb_set_color(other, RB_RED);
					rotate_left(other, root);
					other = parent->rb_left;
				}
				rb_set_color(other, rb_color(parent));
				rb_set_color(parent, RB_BLACK);
				rb_set_color(other->rb_left, RB_BLACK);
				rotate_right(parent, root);
				node = root->rb_node;
				break;
			}
		}
	}
	if (node)
		rb_set_color(node, RB_BLACK);
}

void rb_erase(struct rb_node *node, struct rb_root *root)
{
	struct rb_node *child, *parent;
	int color;

	if (!node->rb_left) {
		child = node->rb_right;
	} else if (!node->rb_right) {
		child = node->rb_left;
	} else {
		struct rb_node *old = node, *left;

		node = node->rb_right;
		while ((left = node->rb_left) != NULL)
			node = left;
		change_child(old, node, rb_parent(old), root);
		child = node->rb_right;
		parent = rb_parent(node);
		color = rb_color(node);
		if (parent == old) {
			parent = node;
		} else {
			if (child)
				rb_set_parent(child, parent);
			parent->rb_left = child;
			node->rb_right = old->rb_right;
			rb_set_parent(old->rb_right, node);
		}
		node->__rb_parent_color = old->__rb_parent_color;
		node->rb_left = old->rb_left;
		rb_set_parent(old->rb_left, node);
		goto color;
	}
	parent = rb_parent(node);
	color = rb_color(node);
	if (child)
		rb_set_parent(child, parent);
	change_child(node, child, parent, root);
color:
	if (color == RB_BLACK)
		__rb_erase_color(child, parent, root);
}

struct rb_node *rb_first(const struct rb_root *root)
{
	struct rb_node *n = root->rb_node;

	if (!n)
		return NULL;
	while (n->rb_left)
		n = n->rb_left;
	return n;
}

struct rb_node *rb_last(const struct rb_root *root)
{
	struct rb_node *n = root->rb_node;

	if (!n)
		return NULL;
	while (n->rb_right)
		n = n->rb_right;
	return n;
}

struct rb_node *rb_next(const struct rb_node *node)
{
	struct rb_node *parent;

	if (node->rb_right) {
		node = node->rb_right;
		while (node->rb_left)
			node = node->rb_left;
		return (struct rb_node *)node;
	}
	while ((parent = rb_parent(node)) && node == parent->rb_right)
		node = parent;
	return parent;
}

struct rb_node *rb_prev(const struct rb_node *node)
{
	struct rb_node *parent;

	if (node->rb_left) {
		node = node->rb_left;
		while (node->rb_right)
			node = node->rb_right;
		return (struct rb_node *)node;
	}
	while ((parent = rb_parent(node)) && node == parent->rb_left)
		node = parent;
	return parent;
}

/* `new` takes `victim`'s place, colour and children (no rebalancing: the caller keeps the order) */
void rb_replace_node(struct rb_node *victim, struct rb_node *new, struct rb_root *root)
{
	struct rb_node *parent = rb_parent(victim);

	*new = *victim;
	if (victim->rb_left)
		rb_set_parent(victim->rb_left, new);
	if (victim->rb_right)
		rb_set_parent(victim->rb_right, new);
	change_child(victim, new, parent, root);
}

static struct rb_node *rb_left_deepest_node(const struct rb_node *node)
{
	for (;;) {
		if (node->rb_left)
			node = node->rb_left;
		else if (node->rb_right)
			node = node->rb_right;
		else
			return (struct rb_node *)node;
	}
}

struct rb_node *rb_next_postorder(const struct rb_node *node)
{
	const struct rb_node *parent;

	if (!node)
		return NULL;
	parent = rb_parent(node);
	if (parent && node == parent->rb_left && parent->rb_right)
		return rb_left_deepest_node(parent->rb_right);
	return (struct rb_node *)parent;
}

struct rb_node *rb_first_postorder(const struct rb_root *root)
{
	if (!root->rb_node)
		return NULL;
	return rb_left_deepest_node(root->rb_node);
}
