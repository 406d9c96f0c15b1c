/*
 * The shared library exports the public API and nothing else (issue 22): CMakeLists.txt links the
 * library's objects into a shared library with cmake/cio.map (as an install with
 * -DBUILD_SHARED_LIBS=ON does), and this lists its dynamic symbols with `nm -D`: every defined one
 * is a public cio_ name (or the one cio__ helper a public macro names), and every public cio_
 * function or object of the static library is among them.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SYMS 4096

typedef struct names {
    char *v[MAX_SYMS];
    size_t n;
} names;

/* Runs nm with `opts` on `path` and keeps the names of defined symbols (not the version node). */
static void nm_names(const char *opts, const char *path, names *out)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "nm %s '%s' 2>&1", opts, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[512];
    out->n = 0;
    while (fgets(line, sizeof line, p) != NULL) {
        char addr[64], type[8], name[400];
        if (sscanf(line, "%63s %7s %399s", addr, type, name) != 3)
            continue; /* an undefined symbol (no address) or a member header of the archive */
        if (strcmp(type, "A") == 0 || strcmp(type, "U") == 0 || strcmp(type, "w") == 0)
            continue; /* the version node CIO_0, references */
        assert_true(out->n < MAX_SYMS);
        out->v[out->n++] = strdup(name);
    }
    int st = pclose(p);
    if (st != 0)
        fail_msg("%s: exit status %d (is nm installed?)", cmd, st);
}

static void free_names(names *n)
{
    for (size_t i = 0; i < n->n; i++)
        free(n->v[i]);
}

static int is_public(const char *s)
{
    return strncmp(s, "cio_", 4) == 0 && s[4] != '_';
}

static void test_only_public_names_exported(void **state)
{
    (void)state;
    static names dyn;
    nm_names("-D --defined-only", CIO_EXPORTS_LIB, &dyn);
    assert_true(dyn.n > 100);
    size_t bad = 0;
    for (size_t i = 0; i < dyn.n; i++) {
        const char *s = dyn.v[i];
        char *at = strchr(s, '@'); /* name@@CIO_0 */
        if (at != NULL)
            *at = '\0';
        if (!is_public(s) && strcmp(s, "cio__sig_handler_ignore") != 0) {
            print_message("      exported, not public: %s\n", s);
            bad++;
        }
    }
    free_names(&dyn);
    if (bad != 0)
        fail_msg("%zu exported symbols are not public cio_ names", bad);
}

static void test_every_public_name_exported(void **state)
{
    (void)state;
    static names dyn, all;
    nm_names("-D --defined-only", CIO_EXPORTS_LIB, &dyn);
    nm_names("-g --defined-only", CIO_STATIC_LIB, &all);
    size_t missing = 0, public_n = 0;
    for (size_t i = 0; i < all.n; i++) {
        if (!is_public(all.v[i]))
            continue;
        public_n++;
        size_t len = strlen(all.v[i]);
        int found = 0;
        for (size_t j = 0; j < dyn.n && !found; j++)
            found = strncmp(dyn.v[j], all.v[i], len) == 0 && (dyn.v[j][len] == '\0' || dyn.v[j][len] == '@');
        if (!found) {
            print_message("      public but not exported: %s\n", all.v[i]);
            missing++;
        }
    }
    free_names(&dyn);
    free_names(&all);
    assert_true(public_n > 100);
    if (missing != 0)
        fail_msg("%zu public names are not exported", missing);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_public_names_exported),
        cmocka_unit_test(test_every_public_name_exported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
