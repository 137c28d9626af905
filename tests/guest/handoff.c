/* handoff: 4 threads pass a token around on a mutex and a condition
 * variable and print each handoff; the interleaving must be the same on
 * every run of the same spec. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS 25

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn, count;

static void *worker(void *arg)
{
    int me = (int)(long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&mu);
        while (turn != me)
            pthread_cond_wait(&cv, &mu);
        printf("handoff %d: thread %d -> %d\n", count++, me, (me + 1) % THREADS);
        turn = (me + 1) % THREADS;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    setvbuf(stdout, NULL, _IONBF, 0);
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("done %d\n", count);
    return 0;
}
