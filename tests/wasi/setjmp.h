/*
 * <setjmp.h> for wasm32-wasi, which Debian's wasi-libc (2022) does not ship. cmocka needs it: a failed
 * assertion or skip() longjmps out of the test back into cmocka's runner.
 *
 * The jumps are real: code that calls setjmp/longjmp is compiled with
 * `-mllvm -wasm-enable-sjlj -mexception-handling` (cmocka's build for this target; see build.py), so
 * LLVM lowers them onto WebAssembly exception handling, which Node runs natively. The runtime that
 * lowering calls (saveSetjmp, testSetjmp, getTempRet0, __wasm_longjmp) is tests/wasi/sjlj_rt.c and
 * tests/wasi/sjlj_throw.c, linked into every test program. Compiled without those flags, setjmp and
 * longjmp are unresolved symbols: a link error, never a silent misbehaviour.
 *
 * A jmp_buf only holds the id saveSetjmp assigns (the lowering keeps the rest in a per-function
 * table); it is sized generously.
 */
#ifndef CIO_WASI_SETJMP_H
#define CIO_WASI_SETJMP_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cio__wasi_jmp_buf_tag {
    unsigned long id;
    unsigned long spare[7];
} jmp_buf[1];

int setjmp(jmp_buf env) __attribute__((returns_twice));
_Noreturn void longjmp(jmp_buf env, int val);

#ifdef __cplusplus
}
#endif

#endif /* CIO_WASI_SETJMP_H */
