/*
 * Kernel-style C for the module relocation tests: calls between functions
 * in different sections and to external functions, global and static data
 * in .data / .rodata / .bss (one array large enough for big offsets),
 * external data, function pointers and data pointers in data, a switch
 * table, and a cold path (gcc moves it to .text.unlikely, reached by a
 * conditional branch across sections). No string or floating-point
 * literals: mergeable constant sections would let the reference linker
 * reorder them.
 */
extern int ext_data;
extern int ext_array[];
extern long ext_func(long);
extern void ext_cold(long) __attribute__((cold));

typedef long (*fn_t)(long);

int counter;                                   /* .bss */
static int big[0x40000];                       /* 1 MiB of .bss */
long table[4] = { 1, 2, 3, 4 };                /* .data */
static long stat_data = 5;                     /* .data */
static const int lut[8] = { 3, 1, 4, 1, 5, 9, 2, 6 };   /* .rodata */

__attribute__((noinline, section(".text.other"))) long other_fn(long v)
{
	return v * 3 + stat_data;
}

__attribute__((noinline, section(".init.text"))) long init_fn(long v)
{
	return other_fn(v) + ext_func(v) + counter;
}

__attribute__((noinline)) static long helper_a(long v)
{
	return v + lut[v & 7];
}

__attribute__((noinline)) long helper_b(long v)
{
	return ext_func(v) ^ table[v & 3];
}

fn_t ops_rw[] = { helper_a, helper_b, ext_func, other_fn };
fn_t const ops_ro[] = { ext_func, helper_b, init_fn };
long *ptrs[] = { &table[2], &stat_data, (long *)&ext_data, (long *)&ext_array[5], (long *)&big[0x30000] };
int *const ptrs_ro[] = { &counter, &big[1], &ext_array[-2] };

long dispatch(int k, long v)
{
	switch (k) {
	case 0: return helper_a(v);
	case 1: return helper_b(v) + 7;
	case 2: return other_fn(v) - 1;
	case 3: return ext_func(v) * 5;
	case 4: return table[1] + v;
	case 5: return big[0x3ffff] + v;
	case 6: return ext_array[3] - v;
	case 7: return ops_rw[v & 3](v);
	case 8: return ops_ro[v % 3](v + 1);
	default: return -1;
	}
}

long access_big(int i)
{
	big[i] = i;
	big[0x20000 + i] += counter;
	return big[0x3fff0] + big[i + 0x1000] + ext_data + ext_array[i];
}

long checked(long v)
{
	if (__builtin_expect(v < 0, 0)) {
		ext_cold(v);
		counter++;
		return ext_func(-v) + *ptrs[v & 3];
	}
	return v + 1 + ptrs_ro[0][0];
}

long tail_call(long v)
{
	return ext_func(v + table[0]);
}
