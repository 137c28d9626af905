/* race_lock_order: a deadlock from lock order. One thread takes A then B,
 * the other B then A; when each holds its first lock, both wait forever (the
 * run stalls: nothing is runnable and no timer is armed). FIXED: both take A
 * first. */
#include "race.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static volatile long work;

static void *take(void *arg)
{
    int first_b = (int)(long)arg == 1;
#ifdef FIXED
    first_b = 0;
#endif
    pthread_mutex_t *x = first_b ? &b : &a, *y = first_b ? &a : &b;
    for (int i = 0; i < 20; i++) {
        pthread_mutex_lock(x);
        work++;
        pthread_mutex_lock(y);
        work++;
        pthread_mutex_unlock(y);
        pthread_mutex_unlock(x);
    }
    return NULL;
}

int main(void)
{
    race_run(2, take);
    printf("work %ld, no deadlock\n", work);
    return 0;
}
