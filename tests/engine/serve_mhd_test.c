/*
 * serve_mhd_test: serve's libmicrohttpd is loaded when serve starts
 * (src/serve/mhd.c), so build/rewind does not link it, nor GnuTLS: a
 * library that is not there, or is not libmicrohttpd, is one clear line
 * and no table (inv. 1); the real one gives a whole table, the same for
 * every later call (inv. 2).
 */
#include <stdio.h>
#include <string.h>

#include "serve/mhd.c"
#include "unit.h"

static void test_missing_library(void)
{
    char err[512] = "";
    const struct serve_mhd *t = serve_mhd_load("libmicrohttpd-not-here.so.99", err, sizeof err);
    CHECK(t == NULL, "a missing library gives no table");
    CHECK(strstr(err, "cannot load libmicrohttpd-not-here.so.99") != NULL, err);
    CHECK(strstr(err, "libmicrohttpd12") != NULL, "the error names the package");
    CHECK(strchr(err, '\n') == NULL, "one line");
}

static void test_not_libmicrohttpd(void)
{
    char err[512] = "";
    const struct serve_mhd *t = serve_mhd_load("libz.so.1", err, sizeof err);
    CHECK(t == NULL, "a library without MHD_start_daemon gives no table");
    CHECK(strstr(err, "libz.so.1 has no MHD_start_daemon") != NULL, err);
}

static void test_real_library(void)
{
    char err[512] = "";
    const struct serve_mhd *t = serve_mhd_load(SERVE_MHD_SONAME, err, sizeof err);
    CHECK(t != NULL, err);
    if (!t)
        return;
    CHECK(t->start_daemon && t->stop_daemon && t->get_daemon_info && t->get_connection_info &&
              t->set_connection_option && t->lookup_connection_value &&
              t->create_response_from_buffer && t->add_response_header && t->queue_response &&
              t->destroy_response,
          "every function found");
    /* a real call through the table: a response made and destroyed */
    struct MHD_Response *r =
        t->create_response_from_buffer(2, (void *)"ok", MHD_RESPMEM_PERSISTENT);
    CHECK(r != NULL, "a response through the table");
    if (r) {
        CHECK(t->add_response_header(r, "X-Test", "1") == MHD_YES, "a header through the table");
        t->destroy_response(r);
    }
    CHECK(serve_mhd_load(SERVE_MHD_SONAME, err, sizeof err) == t, "the same table again");
    CHECK(serve_mhd_load("libmicrohttpd-not-here.so.99", err, sizeof err) == t,
          "the first table loaded is the process's (inv. 2)");
}

/* build/rewind names neither libmicrohttpd nor GnuTLS among its NEEDED
 * libraries (its dynamic section, as readelf prints it). */
static void test_binary_does_not_link_them(void)
{
    FILE *p = popen("readelf -d build/rewind 2>&1", "r");
    CHECK(p != NULL, "readelf runs");
    if (!p)
        return;
    char line[512];
    int needed = 0, bad = 0;
    while (fgets(line, sizeof line, p)) {
        if (!strstr(line, "(NEEDED)"))
            continue;
        needed++;
        if (strstr(line, "libmicrohttpd") || strstr(line, "libgnutls")) {
            bad++;
            fprintf(stderr, "linked: %s", line);
        }
    }
    int rc = pclose(p);
    CHECK(rc == 0, "readelf -d build/rewind exits 0 (make builds build/rewind first)");
    CHECK(needed > 0, "build/rewind has NEEDED libraries");
    CHECK(bad == 0, "build/rewind does not link libmicrohttpd or GnuTLS");
}

int main(void)
{
    test_missing_library();
    test_not_libmicrohttpd();
    test_real_library();
    test_binary_does_not_link_them();
    return unit_done();
}
