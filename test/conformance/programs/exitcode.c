/* exitcode.c - exits with a nonzero status from a nested call, output flushed first. */
#include "rt.h"

static NOINLINE void finish(int code)
{
	printf("leaving with status %d\n", code);
	rt_exit(code);
}

static NOINLINE int check(int v)
{
	if (v > 40)
		finish(v + 1);
	return v * 2;
}

int main(void)
{
	int v = 3;
	for (int i = 0; i < 10; i++) {
		printf("step %d: %d\n", i, v);
		v = check(OPAQUE(v)) - 1;
	}
	printf("not reached\n");
	return 0;
}
