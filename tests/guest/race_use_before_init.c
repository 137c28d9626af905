/* race_use_before_init: an order violation. main starts a worker and then
 * sets up the configuration the worker reads; the worker reads it at once.
 * When the worker runs before main's store, it finds no configuration.
 * FIXED: main sets the configuration up before it starts the worker. */
#include "race.h"

struct config {
    int value;
};
static struct config cfg = {42};
static struct config *volatile current_cfg;

static void *worker(void *arg)
{
    (void)arg;
    struct config *c = current_cfg;
    if (!c) {
        printf("worker: no configuration yet\n");
        exit(1);
    }
    printf("worker: value %d\n", c->value);
    return NULL;
}

int main(void)
{
    pthread_t t;
#ifdef FIXED
    current_cfg = &cfg;
#endif
    if (pthread_create(&t, NULL, worker, NULL))
        return 3;
    volatile long work = 0;
    for (int i = 0; i < 50; i++)
        work += i;
    current_cfg = &cfg; /* too late when the worker already ran */
    pthread_join(t, NULL);
    return 0;
}
