/* bench_sites' target: functions whose first instruction is each kind of uprobe site, called in a
 * loop. Usage: sites N KIND (push, r15, call, jmp, nop1, nop5, mov); prints ns per call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

long site_push(long x);
long site_r15(long x);
long site_call(long x);
long site_jmp(long x);
long site_nop1(long x);
long site_nop5(long x);
long site_mov(long *p, long x);

/* Written in assembly so that the first instruction is exactly the kind named. */
__asm__(".text\n"
	".globl site_push\n.type site_push,@function\nsite_push:\n push %rbp\n mov %rdi,%rax\n pop %rbp\n ret\n"
	".globl site_r15\n.type site_r15,@function\nsite_r15:\n push %r15\n mov %rdi,%rax\n pop %r15\n ret\n"
	".globl site_leaf\n.type site_leaf,@function\nsite_leaf:\n mov %rdi,%rax\n ret\n"
	".globl site_call\n.type site_call,@function\nsite_call:\n call site_leaf\n ret\n"
	".globl site_jmp\n.type site_jmp,@function\nsite_jmp:\n jmp 1f\n1: mov %rdi,%rax\n ret\n"
	".globl site_nop1\n.type site_nop1,@function\nsite_nop1:\n nop\n mov %rdi,%rax\n ret\n"
	/* nopl 8(%rax,%rax,1): what clang's -fpatchable-function-entry=5 emits */
	".globl site_nop5\n.type site_nop5,@function\nsite_nop5:\n .byte 0x0f,0x1f,0x44,0x00,0x08\n mov %rdi,%rax\n ret\n"
	".globl site_mov\n.type site_mov,@function\nsite_mov:\n mov %rsi,(%rdi)\n mov %rsi,%rax\n ret\n");

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[1]) : 0, s = 0, v = 0;
	const char *k = argc > 2 ? argv[2] : "";
	double t0 = now_s();

	if (n <= 0) {
		fprintf(stderr, "usage: sites N push|r15|call|jmp|nop1|nop5|mov\n");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		if (!strcmp(k, "push"))
			s += site_push(i);
		else if (!strcmp(k, "r15"))
			s += site_r15(i);
		else if (!strcmp(k, "call"))
			s += site_call(i);
		else if (!strcmp(k, "jmp"))
			s += site_jmp(i);
		else if (!strcmp(k, "nop1"))
			s += site_nop1(i);
		else if (!strcmp(k, "nop5"))
			s += site_nop5(i);
		else
			s += site_mov(&v, i);
	}
	printf("%.1f %ld\n", (now_s() - t0) / (double)n * 1e9, s);
	return 0;
}
