/*
 * The Evented backend's memory-map slots (cio/mmap.h): mmap (which reads the pages in with
 * MAP_POPULATE) and msync wait for the disk, so create, read and write run the OS room's function
 * on the helper pool (helper.c), never on a loop thread; the wait for the helper is the
 * cancellation point. munmap and mremap only change the address space: destroy and set_length run
 * on the calling fiber (slots.h).
 * Invariants: as fs_links.c's helper slots; a caller that is not one of this instance's fibers runs
 * the OS function on its own thread (cio__e_helper).
 */
#include <stdbool.h>
#include <stddef.h>

#include "cio/mmap.h"
#include "evented.h"
#include "internal.h"
#include "os.h"
#include "slots.h"

struct a_map_create {
    cio_file file;
    const cio_memory_map_options *options;
    cio_memory_map *out;
};
static cio_err h_map_create(void *p)
{
    struct a_map_create *a = (struct a_map_create *)p;
    return cio__os_file_memory_map_create(NULL, a->file, a->options, a->out);
}
cio_err cio__e_file_memory_map_create(void *ud, cio_file file, const cio_memory_map_options *options,
                                      cio_memory_map *out)
{
    struct a_map_create a = {file, options, out};
    return cio__e_helper((struct cio_evented *)ud, h_map_create, &a, true);
}

static cio_err h_map_read(void *p)
{
    return cio__os_file_memory_map_read(NULL, (cio_memory_map *)p);
}
cio_err cio__e_file_memory_map_read(void *ud, cio_memory_map *mm)
{
    return cio__e_helper((struct cio_evented *)ud, h_map_read, mm, true);
}

static cio_err h_map_write(void *p)
{
    return cio__os_file_memory_map_write(NULL, (cio_memory_map *)p);
}
cio_err cio__e_file_memory_map_write(void *ud, cio_memory_map *mm)
{
    return cio__e_helper((struct cio_evented *)ud, h_map_write, mm, true);
}
