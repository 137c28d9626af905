/* race_double_checked: double-checked locking that publishes the object
 * before it is initialized. A second thread that checks between the two
 * stores takes an object whose value is not set yet. FIXED: initialize,
 * then publish with a release store (readers load with acquire). */
#include <string.h>

#include "race.h"

struct obj {
    volatile int value;
};
static struct obj store;
static struct obj *volatile instance;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct obj *get(void)
{
    struct obj *o = instance; /* first check, no lock */
    if (o)
        return o;
    pthread_mutex_lock(&lock);
    if (!instance) {
#ifdef FIXED
        store.value = 42;
        __atomic_store_n(&instance, &store, __ATOMIC_RELEASE);
#else
        instance = &store; /* published ... */
        store.value = 42;  /* ... then initialized */
#endif
    }
    o = instance;
    pthread_mutex_unlock(&lock);
    return o;
}

static volatile int bad;

static void *use(void *arg)
{
    (void)arg;
    if (get()->value != 42)
        bad = 1;
    return NULL;
}

int main(void)
{
    race_run(2, use);
    printf("double-checked: %s\n", bad ? "saw an uninitialized object" : "ok");
    return bad;
}
