/* mhd.h: libmicrohttpd, loaded when `rewind serve` starts (mhd.c). */
#ifndef REWIND_SERVE_MHD_H
#define REWIND_SERVE_MHD_H

#include <stddef.h>
#include <microhttpd.h>

/* The functions of libmicrohttpd that serve calls, by pointer. */
struct serve_mhd {
    __typeof__(&MHD_start_daemon) start_daemon;
    __typeof__(&MHD_stop_daemon) stop_daemon;
    __typeof__(&MHD_get_daemon_info) get_daemon_info;
    __typeof__(&MHD_get_connection_info) get_connection_info;
    __typeof__(&MHD_set_connection_option) set_connection_option;
    __typeof__(&MHD_lookup_connection_value) lookup_connection_value;
    __typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
    __typeof__(&MHD_add_response_header) add_response_header;
    __typeof__(&MHD_queue_response) queue_response;
    __typeof__(&MHD_destroy_response) destroy_response;
};

/* The library every build of rewind loads (Debian's package libmicrohttpd12). */
#define SERVE_MHD_SONAME "libmicrohttpd.so.12"

/* Load the library named soname (SERVE_MHD_SONAME but in tests) once per
 * process and return its functions, or NULL with one line in err (what
 * failed and the package to install). Thread-safe; the library stays
 * loaded. */
const struct serve_mhd *serve_mhd_load(const char *soname, char *err, size_t errlen);

#endif
