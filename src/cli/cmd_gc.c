/*
 * cmd_gc: `rewind gc [--dry-run] [--json] [--no-wait]`: free the pages and
 * root images no run needs (docs/formats.md, "The home", says what is live). Waits for running
 * rewind processes unless --no-wait; a dry run does not wait and changes
 * nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_read.h"
#include "rewind.h"

static void print_json(const struct rw_gc_stats *s, int dry)
{
    printf("{\"dry_run\":%s,\"runs\":%" PRIu64 ",\"killed_runs\":%" PRIu64
           ",\"live_pages\":%" PRIu64 ",\"removed_pages\":%" PRIu64 ",\"corrupt_pages\":%" PRIu64
           ",\"pack_bytes_before\":%" PRIu64 ",\"pack_bytes_after\":%" PRIu64
           ",\"live_images\":%" PRIu64 ",\"removed_images\":%" PRIu64
           ",\"removed_image_bytes\":%" PRIu64 ",\"images_kept_unreadable_run\":",
           dry ? "true" : "false", s->runs, s->killed_runs, s->live_pages, s->dead_pages,
           s->corrupt_pages, s->bytes_before, s->bytes_after, s->live_images, s->dead_images,
           s->dead_image_bytes);
    if (s->images_kept)
        printf("\"%s\"", s->unreadable_run);
    else
        fputs("null", stdout);
    printf(",\"removed_temp_files\":%" PRIu64 ",\"removed_temp_bytes\":%" PRIu64
           ",\"removed_imports\":%" PRIu64 ",\"image_names\":[",
           s->temp_files, s->temp_bytes, s->imports);
    for (uint64_t i = 0; i < s->dead_images && i < RW_GC_MAX_NAMES; i++)
        printf("%s\"%s\"", i ? "," : "", s->dead_image_names[i]);
    puts("]}");
}

static void print_words(const struct rw_gc_stats *s, int dry)
{
    const char *verb = dry ? "would remove" : "removed";
    char a[32], b[32];
    printf("%" PRIu64 " runs (%" PRIu64 " of them killed mid-way) keep %" PRIu64
           " pages and %" PRIu64 " images\n",
           s->runs, s->killed_runs, s->live_pages, s->live_images);
    if (s->no_store)
        puts("pages: no page store yet, nothing to collect");
    else
        printf("pages: %s %" PRIu64 "; packs %s -> %s%s\n", verb, s->dead_pages,
               cli_bytes_text(s->bytes_before, a, sizeof(a)),
               cli_bytes_text(s->bytes_after, b, sizeof(b)), dry ? " (estimated)" : "");
    printf("images: %s %" PRIu64 " (%s)", verb, s->dead_images,
           cli_bytes_text(s->dead_image_bytes, a, sizeof(a)));
    for (uint64_t i = 0; i < s->dead_images && i < RW_GC_MAX_NAMES; i++)
        printf("%s%.16s", i ? ", " : ": ", s->dead_image_names[i]);
    if (s->dead_images > RW_GC_MAX_NAMES)
        fputs(", ...", stdout);
    putchar('\n');
    if (s->temp_files || s->imports)
        printf("leftovers: %s %" PRIu64 " temp files (%s), %" PRIu64 " abandoned imports\n", verb,
               s->temp_files, cli_bytes_text(s->temp_bytes, a, sizeof(a)), s->imports);
    if (s->images_kept)
        fprintf(stderr,
                "rewind: warning: run %s has an unreadable manifest or spec; every "
                "image was kept\n",
                s->unreadable_run);
    if (s->corrupt_pages)
        fprintf(stderr,
                "rewind: warning: %" PRIu64 " pages some run needs were corrupt in the "
                "store and are lost\n",
                s->corrupt_pages);
}

int cmd_gc(int argc, char **argv)
{
    int dry = 0, json = 0, wait = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dry-run") || !strcmp(argv[i], "-n"))
            dry = 1;
        else if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--no-wait"))
            wait = 0;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            puts("usage: rewind gc [--dry-run] [--json] [--no-wait]\n\n"
                 "Free what no run needs: pages no run's keyframes name (runs killed\n"
                 "mid-way count as runs), root images no run's spec names, and stray\n"
                 "temporary files. gc waits until running rewind processes (runs,\n"
                 "imports, exports) end, and they wait for it; --no-wait fails instead.\n\n"
                 "  --dry-run  say what would be removed; change nothing (does not wait)\n"
                 "  --json     print the result as one JSON object\n"
                 "  --no-wait  fail at once if rewind processes are running");
            return 0;
        } else
            return cli_error(2, "unknown argument '%s' (see rewind gc --help)", argv[i]);
    }
    rw_home *h = cli_read_home();
    if (!h)
        return 1;
    struct rw_gc_stats s;
    struct rw_error err;
    if (rw_gc(h, dry, wait, &s, &err) < 0)
        return cli_read_fail(1, &err);
    if (json)
        print_json(&s, dry);
    else
        print_words(&s, dry);
    return 0;
}
