/*
 * imageapi: rw_image, a root made ready ahead of a run (`rewind image`).
 *
 * Invariants:
 *  1. The home lock is held (shared) while the image is made and kept, as
 *     run_prepare holds it: gc never removes an image being kept.
 *  2. The image id is the one `rewind run --root` would put in its spec:
 *     the same image_prepare, the same keeping (run_keep_image).
 */
#include <stdio.h>
#include <string.h>

#include "util/apierr.h"
#include "home/homelock.h"
#include "util/homepath.h"
#include "image/image.h"
#include "rewind.h"
#include "run/ctx.h"
#include "util/check.h"

int rw_image(rw_home *h, const char *root, const struct rw_observer *obs, struct rw_image_info *out,
             struct rw_error *err)
{
    if (!h || !root || !*root || !out)
        return apierr_set(err, RW_EUSAGE, "rw_image: a home, a root and out are required");
    memset(out, 0, sizeof(*out));
    const char *home = rw_home_path(h);
    char msg[1024];
    int lock = homelock_take(home, 0, 1, msg, sizeof(msg));
    if (lock < 0)
        return apierr_set(err, RW_EINTERNAL, "%s", msg);
    struct image img;
    struct image_progress ip;
    int rc =
        image_prepare_progress(root, home, run_image_progress(obs, &ip), &img, msg, sizeof(msg));
    if (rc < 0) {
        homelock_release(lock);
        return apierr_set(err, RW_EROOT, "%s", msg);
    }
    rc = run_keep_image(home, &img, msg, sizeof(msg));
    homelock_release(lock);
    if (rc < 0)
        return apierr_set(err, RW_EINTERNAL, "%s", msg);
    RW_ASSERT(strlen(img.hex) == 64); /* invariant 2: a content hash */
    memcpy(out->id, img.hex, sizeof(out->id));
    if (home_path(out->path, sizeof(out->path), home, HOME_IMAGES, img.hex, NULL) < 0)
        return apierr_set(err, RW_EINTERNAL, "the home's path is too long");
    out->size = img.size;
    out->built = img.built;
    return 0;
}
