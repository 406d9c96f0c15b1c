/*
 * The setjmp/longjmp runtime that LLVM's Wasm SjLj lowering (-mllvm -wasm-enable-sjlj, LLVM 14) calls,
 * for wasm32-wasi test programs (Emscripten ships the same in its compiler-rt; Debian's wasi-libc does
 * not). Compiled WITHOUT the lowering: these functions are what it calls.
 *
 * Invariants:
 * - saveSetjmp gives every setjmp call a fresh nonzero id, stores it in the jmp_buf, and records
 *   (id, label) in the calling function's table (growing it with realloc; the caller passes the
 *   table back and reads the new size through getTempRet0). The table ends at an entry with id 0.
 * - testSetjmp maps the id a longjmp carried to the label of the setjmp in this function, or 0 when
 *   the setjmp belongs to another function (the exception is then rethrown to it).
 * - Single-threaded (wasm32-wasi has no threads): plain globals.
 */
#include <stdint.h>
#include <stdlib.h>

typedef struct cio__sjlj_entry {
    uintptr_t id;
    uint32_t label;
} cio__sjlj_entry;

uint32_t getTempRet0(void);
void setTempRet0(uint32_t value);
cio__sjlj_entry *saveSetjmp(uintptr_t *env, uint32_t label, cio__sjlj_entry *table, uint32_t size);
uint32_t testSetjmp(uintptr_t id, cio__sjlj_entry *table, uint32_t size);

static uint32_t temp_ret0;
static uintptr_t last_id;

uint32_t getTempRet0(void)
{
    return temp_ret0;
}

void setTempRet0(uint32_t value)
{
    temp_ret0 = value;
}

cio__sjlj_entry *saveSetjmp(uintptr_t *env, uint32_t label, cio__sjlj_entry *table, uint32_t size)
{
    *env = ++last_id;
    for (;;) {
        for (uint32_t i = 0; i < size; i++) {
            if (table[i].id == 0) {
                table[i].id = last_id;
                table[i].label = label;
                table[i + 1].id = 0; /* the table has size + 1 entries */
                setTempRet0(size);
                return table;
            }
        }
        size *= 2;
        table = (cio__sjlj_entry *)realloc(table, sizeof(cio__sjlj_entry) * (size + 1));
        if (table == NULL)
            abort();
    }
}

uint32_t testSetjmp(uintptr_t id, cio__sjlj_entry *table, uint32_t size)
{
    for (uint32_t i = 0; i < size && table[i].id != 0; i++)
        if (table[i].id == id)
            return table[i].label;
    return 0;
}
