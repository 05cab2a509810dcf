/* nounwind_fp.S - for tests/prog/nounwind_bad.c: two functions without CFI (no
 * FDE covers them) that set rbp to what the caller says, as code without
 * frame pointers may hold anything there, then call malloc or raise. */
	.text
	.globl nu_call
	.type nu_call, @function
/* void *nu_call(size_t n, void *rbp): malloc(n) with rbp = the second argument */
nu_call:
	push %rbp
	mov %rsi, %rbp
	call malloc@PLT
	pop %rbp
	ret
	.size nu_call, .-nu_call

	.globl nu_raise
	.type nu_raise, @function
/* void nu_raise(void *rbp): raise(SIGUSR1) with rbp = the argument */
nu_raise:
	push %rbp
	mov %rdi, %rbp
	mov $10, %edi
	call raise@PLT
	pop %rbp
	ret
	.size nu_raise, .-nu_raise
	.section .note.GNU-stack,"",@progbits
