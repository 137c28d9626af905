/*
 * mhd: libmicrohttpd for `rewind serve`, loaded with dlopen when the server
 * starts instead of linked into the binary.
 *
 * Why: libmicrohttpd links GnuTLS, and with it eight more libraries (p11-kit,
 * nettle, hogweed, gmp, libtasn1, libidn2, libunistring, libffi) whose
 * relocations and GnuTLS's own initialisation every `rewind` command paid at
 * start, though only serve uses HTTP (and never TLS). bench/startup.sh
 * measures the start of a command with and without them (bench/RESULTS.md).
 *
 * Invariants:
 *  1. Only serve_mhd_load opens the library, and only a whole table leaves
 *     it: every function serve calls was found, or NULL is returned and
 *     nothing of the library is used.
 *  2. The first table loaded is the process's for good (the library is
 *     never closed); a failed load leaves no state, so it can be tried
 *     again.
 *  3. The functions' types are the header's (the table is declared from
 *     microhttpd.h), so a call through the table is checked by the compiler
 *     like a direct call.
 */
#include "mhd.h"

#include <assert.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t mhd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct serve_mhd mhd_table;
static int mhd_loaded;

/* dlsym as a function pointer (POSIX guarantees the conversion for dlsym) */
#define MHD_SYM(lib, t, field, name, missing)                                                      \
    do {                                                                                           \
        void *p_ = dlsym(lib, name);                                                               \
        if (!p_ && !*(missing))                                                                    \
            *(missing) = name;                                                                     \
        memcpy(&(t)->field, &p_, sizeof p_);                                                       \
    } while (0)

const struct serve_mhd *serve_mhd_load(const char *soname, char *err, size_t errlen)
{
    pthread_mutex_lock(&mhd_lock);
    if (mhd_loaded) { /* inv. 2 */
        pthread_mutex_unlock(&mhd_lock);
        return &mhd_table;
    }
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(err, errlen, "cannot load %s (%s); install Debian's libmicrohttpd12", soname,
                 why ? why : "no reason given");
        pthread_mutex_unlock(&mhd_lock);
        return NULL;
    }
    struct serve_mhd t;
    const char *missing = NULL;
    MHD_SYM(lib, &t, start_daemon, "MHD_start_daemon", &missing);
    MHD_SYM(lib, &t, stop_daemon, "MHD_stop_daemon", &missing);
    MHD_SYM(lib, &t, get_daemon_info, "MHD_get_daemon_info", &missing);
    MHD_SYM(lib, &t, get_connection_info, "MHD_get_connection_info", &missing);
    MHD_SYM(lib, &t, set_connection_option, "MHD_set_connection_option", &missing);
    MHD_SYM(lib, &t, lookup_connection_value, "MHD_lookup_connection_value", &missing);
    MHD_SYM(lib, &t, create_response_from_buffer, "MHD_create_response_from_buffer", &missing);
    MHD_SYM(lib, &t, add_response_header, "MHD_add_response_header", &missing);
    MHD_SYM(lib, &t, queue_response, "MHD_queue_response", &missing);
    MHD_SYM(lib, &t, destroy_response, "MHD_destroy_response", &missing);
    if (missing) { /* inv. 1 */
        snprintf(err, errlen, "%s has no %s: not the libmicrohttpd rewind was built for", soname,
                 missing);
        dlclose(lib);
        pthread_mutex_unlock(&mhd_lock);
        return NULL;
    }
    assert(t.start_daemon && t.stop_daemon && t.queue_response && t.destroy_response);
    mhd_table = t;
    mhd_loaded = 1;
    pthread_mutex_unlock(&mhd_lock);
    return &mhd_table;
}
