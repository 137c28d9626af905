/* race_aba_stack: a lock-free stack (Treiber) whose pop reads head and
 * head->next, then swings head with a compare-and-swap. Between the read and
 * the swap another thread pops A and B and pushes A back: the swap succeeds
 * (head is A again) and installs B, which is in use: ABA. The stack then
 * holds a node twice or loses one. FIXED: the same stack under a lock. */
#include "race.h"

struct node {
    struct node *volatile next;
    int id;
};

#ifdef FIXED
/* The fixed twin keeps the same pop but under a lock, so no thread can run
 * between its read of head and its swap. */
static pthread_mutex_t stack_lock = PTHREAD_MUTEX_INITIALIZER;
static struct node *head_ptr;
static void push(struct node *n)
{
    pthread_mutex_lock(&stack_lock);
    n->next = head_ptr;
    head_ptr = n;
    pthread_mutex_unlock(&stack_lock);
}
static struct node *pop(void)
{
    pthread_mutex_lock(&stack_lock);
    struct node *old = head_ptr;
    if (old)
        head_ptr = old->next;
    pthread_mutex_unlock(&stack_lock);
    return old;
}
#else
static struct node *volatile head_ptr;
static void push(struct node *n)
{
    struct node *old;
    do {
        old = head_ptr;
        n->next = old;
    } while (!__atomic_compare_exchange_n(&head_ptr, &old, n, 0, __ATOMIC_SEQ_CST,
                                          __ATOMIC_SEQ_CST));
}
static struct node *pop(void)
{
    struct node *old, *next;
    do {
        old = head_ptr; /* read head ... */
        if (!old)
            return NULL;
        next = old->next; /* ... and its next: stale if old is popped and pushed back */
    } while (!__atomic_compare_exchange_n(&head_ptr, &old, next, 0, __ATOMIC_SEQ_CST,
                                          __ATOMIC_SEQ_CST));
    return old;
}
#endif

#define NODES 6
#define ROUNDS 20
static struct node nodes[NODES];

/* Each thread pops two nodes and pushes them back, the first one first,
 * ROUNDS times: between its push of A and its push of B the stack has A on
 * top of what was under B, which is the ABA of the comment above for a pop
 * that read A and B before (pushing B first would put back the very stack
 * it read, and no single preemption would corrupt it). */
static void *churn(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        struct node *a = pop(), *b = pop();
        if (a)
            push(a);
        if (b)
            push(b);
    }
    return NULL;
}

int main(void)
{
    for (int i = NODES - 1; i >= 0; i--) {
        nodes[i].id = i;
        push(&nodes[i]);
    }
    race_run(2, churn);
    int seen[NODES] = {0}, count = 0;
    struct node *n;
    while ((n = pop()) && count <= NODES) {
        seen[n->id]++;
        count++;
    }
    int ok = count == NODES;
    for (int i = 0; i < NODES; i++)
        ok = ok && seen[i] == 1;
    printf("stack: %d nodes at the end, %s\n", count, ok ? "each once" : "corrupted (ABA)");
    return ok ? 0 : 1;
}
