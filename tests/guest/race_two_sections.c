/* race_two_sections: an atomicity violation across two locked sections. Each
 * thread reads the balance under the lock, then adds to it under the lock
 * again; each section is atomic but the pair is not, so a deposit is lost
 * when the other thread runs between them. (An uncontended mutex takes no
 * system call.) FIXED: one section. */
#include "race.h"

#define N 50
static volatile long balance;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *deposit(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++) {
#ifdef FIXED
        pthread_mutex_lock(&lock);
        balance = balance + 1;
        pthread_mutex_unlock(&lock);
#else
        pthread_mutex_lock(&lock);
        long b = balance;
        pthread_mutex_unlock(&lock);
        pthread_mutex_lock(&lock);
        balance = b + 1;
        pthread_mutex_unlock(&lock);
#endif
    }
    return NULL;
}

int main(void)
{
    race_run(2, deposit);
    printf("balance %ld of %d\n", balance, 2 * N);
    return balance == 2 * N ? 0 : 1;
}
