/*
 * lib/list_debug.c (CONFIG_DEBUG_LIST's link checks), lib/llist.c (the
 * lock-less NULL-terminated singly linked list) and lib/plist.c (the
 * priority-sorted list: node_list holds every node in priority order,
 * prio_list one node per distinct priority).
 */
#include "libk.h"

bool __list_add_valid(struct list_head *new, struct list_head *prev, struct list_head *next)
{
	if (next->prev != prev) {
		printk("list_add corruption. next->prev should be prev (%px), but was %px. (next=%px).\n", (void *)prev,
		       (void *)next->prev, (void *)next);
		return false;
	}
	if (prev->next != next) {
		printk("list_add corruption. prev->next should be next (%px), but was %px. (prev=%px).\n", (void *)next,
		       (void *)prev->next, (void *)prev);
		return false;
	}
	if (new == prev || new == next) {
		printk("list_add double add: new=%px, prev=%px, next=%px.\n", (void *)new, (void *)prev, (void *)next);
		return false;
	}
	return true;
}

bool __list_del_entry_valid(struct list_head *entry)
{
	struct list_head *prev = entry->prev, *next = entry->next;

	if (next == LIST_POISON1 || prev == LIST_POISON2) {
		printk("list_del corruption, %px->%s is LIST_POISON (%px)\n", (void *)entry,
		       next == LIST_POISON1 ? "next" : "prev", next == LIST_POISON1 ? LIST_POISON1 : LIST_POISON2);
		return false;
	}
	if (prev->next != entry || next->prev != entry) {
		printk("list_del corruption. %px's neighbours do not point back to it\n", (void *)entry);
		return false;
	}
	return true;
}

/* add new_first..new_last in front of head->first; true when the list was empty */
bool llist_add_batch(struct llist_node *new_first, struct llist_node *new_last, struct llist_head *head)
{
	struct llist_node *first = READ_ONCE(head->first);

	do {
		new_last->next = first;
	} while (!__atomic_compare_exchange_n(&head->first, &first, new_first, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_SEQ_CST));
	return first == NULL;
}

struct llist_node *llist_del_first(struct llist_head *head)
{
	struct llist_node *entry = READ_ONCE(head->first), *next;

	do {
		if (entry == NULL)
			return NULL;
		next = READ_ONCE(entry->next);
	} while (!__atomic_compare_exchange_n(&head->first, &entry, next, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	return entry;
}

struct llist_node *llist_reverse_order(struct llist_node *head)
{
	struct llist_node *new_head = NULL;

	while (head) {
		struct llist_node *tmp = head;

		head = head->next;
		tmp->next = new_head;
		new_head = tmp;
	}
	return new_head;
}

static inline void list_add_between(struct list_head *new, struct list_head *prev, struct list_head *next)
{
	next->prev = new;
	new->next = next;
	new->prev = prev;
	prev->next = new;
}

static inline void list_del_init_entry(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	e->next = e;
	e->prev = e;
}

/* lower prio values first; among equal prios, in the order added */
void plist_add(struct plist_node *node, struct plist_head *head)
{
	struct plist_node *first, *iter, *prev = NULL;
	struct list_head *node_next = &head->node_list;

	if (head->node_list.next == &head->node_list)
		goto ins_node;
	first = iter = container_of(head->node_list.next, struct plist_node, node_list);
	do {
		if (node->prio < iter->prio) {
			node_next = &iter->node_list;
			break;
		}
		prev = iter;
		iter = container_of(iter->prio_list.next, struct plist_node, prio_list);
	} while (iter != first);
	if (!prev || prev->prio != node->prio)
		list_add_between(&node->prio_list, iter->prio_list.prev, &iter->prio_list);
ins_node:
	list_add_between(&node->node_list, node_next->prev, node_next);
}

void plist_del(struct plist_node *node, struct plist_head *head)
{
	if (node->prio_list.next != &node->prio_list) {
		if (node->node_list.next != &head->node_list) {
			struct plist_node *next = container_of(node->node_list.next, struct plist_node, node_list);

			/* the next node of the same priority takes over the prio_list place */
			if (next->prio_list.next == &next->prio_list)
				list_add_between(&next->prio_list, &node->prio_list, node->prio_list.next);
		}
		list_del_init_entry(&node->prio_list);
	}
	list_del_init_entry(&node->node_list);
}

/* move node behind every other node of its priority */
void plist_requeue(struct plist_node *node, struct plist_head *head)
{
	struct list_head *pos = node->node_list.next;

	if (pos == &head->node_list)
		return;
	if (container_of(pos, struct plist_node, node_list)->prio != node->prio)
		return;
	plist_del(node, head);
	while (pos != &head->node_list && container_of(pos, struct plist_node, node_list)->prio == node->prio)
		pos = pos->next;
	list_add_between(&node->node_list, pos->prev, pos);
}
