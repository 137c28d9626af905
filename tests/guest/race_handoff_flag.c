/* race_handoff_flag: a one-slot mailbox handed over by spinning on a flag.
 * The producer waits for the slot to be empty, writes the item, raises
 * `full`; the consumer waits for `full` and takes the item. The bug: the
 * consumer lowers `full` before it reads the item, so the producer can
 * overwrite the item first and an item is lost. FIXED: read, then lower. */
#include "race.h"

#define ITEMS 20
static volatile int full;
static volatile int item;
static volatile long sum;

static void *producer(void *arg)
{
    (void)arg;
    for (int i = 1; i <= ITEMS; i++) {
        while (full)
            ;
        item = i;
        full = 1;
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (int i = 1; i <= ITEMS; i++) {
        while (!full)
            ;
#ifdef FIXED
        sum += item;
        full = 0;
#else
        full = 0;    /* lowered ... */
        sum += item; /* ... before the item is read */
#endif
    }
    return NULL;
}

static void *both(void *arg)
{
    return (long)arg == 0 ? consumer(arg) : producer(arg);
}

int main(void)
{
    race_run(2, both);
    printf("sum %ld of %d\n", sum, ITEMS * (ITEMS + 1) / 2);
    return sum == ITEMS * (ITEMS + 1) / 2 ? 0 : 1;
}
