/*
 * cio_net_write_file on the OSes where the Threaded backend has no zero-copy path to a socket yet
 * (the BSDs other than FreeBSD, whose sendfile differs per OS; Windows has TransmitFile:
 * net_sendfile_windows.c): the slot
 * says Unimplemented with nothing sent, and the library copies with positional reads and stream
 * writes (src/core/net_pair.c), on every backend.
 */
#include <stdint.h>

#include "cio/net.h"
#include "os.h"

cio_err cio__os_net_write_file(void *ud, cio_handle stream, cio_file file, uint64_t offset, uint64_t len,
                               uint64_t *nwritten)
{
    (void)ud, (void)stream, (void)file, (void)offset, (void)len;
    return cio__os_write_file_unimplemented(nwritten);
}
