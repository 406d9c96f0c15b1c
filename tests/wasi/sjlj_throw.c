/*
 * longjmp for wasm32-wasi test programs: throws the C longjmp exception (tag __c_longjmp) that the
 * code LLVM's Wasm SjLj lowering generated around each setjmp catches (see setjmp.h, sjlj_rt.c).
 * Compiled WITH `-mllvm -wasm-enable-sjlj -mexception-handling`.
 *
 * Invariants:
 * - The exception's payload is a pointer to {env, val}; the catching function compares the id in env
 *   with its own setjmps (testSetjmp) and rethrows when it is not the target.
 * - LLVM 14 only defines the __c_longjmp tag (weakly) in objects that contain a lowered setjmp, and an
 *   object that throws it without defining it fails to compile; cio__sjlj_anchor is that setjmp.
 *   It is never called.
 */
#include <setjmp.h>

struct cio__wasm_longjmp_args {
    void *env;
    int val;
};

static struct cio__wasm_longjmp_args longjmp_args;

void __wasm_longjmp(void *env, int val);
int cio__sjlj_anchor(void (*fn)(void));

void __wasm_longjmp(void *env, int val)
{
    longjmp_args.env = env;
    longjmp_args.val = val;
    __builtin_wasm_throw(1, &longjmp_args); /* 1: the C longjmp tag */
}

int cio__sjlj_anchor(void (*fn)(void))
{
    static jmp_buf env;
    if (setjmp(env) != 0)
        return 1;
    fn();
    return 0;
}
