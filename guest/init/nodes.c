/*
 * nodes: the nodes of a run (docs/faults.md, "Nodes"), started by
 * rewind-init before the job.
 *
 * Node i (1-based, in the spec's order) is a process tree of its own: its
 * leader is a child of init that entered a new network and UTS namespace,
 * calls itself NAME (uname -n), and runs `/bin/sh -c RUN` in the job's root
 * with the job's environment plus REWIND_NODE=NAME, stdin /dev/null, stdout
 * and stderr on the run's output devices (so every output record names a
 * process of the node). The job stays in init's namespaces.
 *
 * Invariants:
 *  1. The network is fixed by the spec alone: a bridge rw0 in init's
 *     namespace holds 10.77.0.254/24 (the job's address, name "job"); node i
 *     has eth0 = 10.77.0.i/24 (the peer of veth rwn<i> on rw0) and its own
 *     lo at 127.0.0.1/8. Every node name and "job" resolve through
 *     /etc/hosts. Nothing here reads time or randomness.
 *  2. A node's command starts only after its namespace is complete (eth0 and
 *     lo up, hostname set): the leader waits on a pipe for init's go, and
 *     init goes on to the next node (or the job) only after the leader said
 *     its setup is complete, so a setup failure ends the run at a point the
 *     spec alone fixes.
 *  3. Any failure to set up a node ends the run as an init failure
 *     (die()), never as a run with a node missing.
 *  4. Init emits REWIND_INIT_NODE_START ("NAME PID") for node i before node
 *     i's command can run (before the go), so every fork of the node comes
 *     after it: the host maps every process to its node through these
 *     records and the fork records. A kernel that refuses the record ends
 *     the run (invariant 3).
 *  5. Restarts (docs/faults.md, "Restarts"): a node with a restart command
 *     has its namespaces kept open by init from its start. When the kernel
 *     says the node's restart is due (REWIND_SIG_RESTART, after a kill),
 *     init forks the new leader inside those namespaces (so its eth0, lo and
 *     host name are the node's), names it with REWIND_INIT_NODE_RESTART, and
 *     only then lets it exec the restart command: every process of the
 *     restarted node comes after the record. The kernel refuses the record
 *     unless the restart is due and the node has no process left.
 *  6. Net faults: with the netem section in /job, each end of node i's link
 *     (eth0 in the node, rwn<i> on the bridge) has a root netem qdisc of
 *     handle REWIND_NETEM_HANDLE(i), made before the node's command starts;
 *     the guest kernel sets its parameters from the node's net fault.
 */
#include "nodes.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/pkt_sched.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../include/rewind_abi.h"

#define BRIDGE "rw0"

/* A request: one netlink message in an aligned buffer (the header first). */
struct nlreq {
    unsigned char buf[1024] __attribute__((aligned(8)));
    struct nlmsghdr *n;
};

static void addattr(struct nlmsghdr *n, unsigned short type, const void *data, size_t len)
{
    if (NLMSG_ALIGN(n->nlmsg_len) + RTA_SPACE(len) > sizeof(((struct nlreq *)0)->buf))
        nodes_die("nodes: a netlink request too long");
    struct rtattr *a = (struct rtattr *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));
    a->rta_type = type;
    a->rta_len = (unsigned short)RTA_LENGTH(len);
    if (len)
        memcpy(RTA_DATA(a), data, len);
    n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

static struct rtattr *nest_start(struct nlmsghdr *n, unsigned short type)
{
    struct rtattr *a = (struct rtattr *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));
    addattr(n, type, NULL, 0);
    return a;
}

static void nest_end(struct nlmsghdr *n, struct rtattr *a)
{
    a->rta_len = (unsigned short)((char *)n + n->nlmsg_len - (char *)a);
}

/* Send one request, read its acknowledgement: 0 or -errno. */
static int nl_talk(struct nlmsghdr *n)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return -errno;
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    n->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
    n->nlmsg_seq = 1;
    int r = 0;
    if (sendto(fd, n, n->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        r = -errno;
    } else {
        char ack[1024];
        ssize_t got = recv(fd, ack, sizeof(ack), 0);
        struct nlmsghdr *h = (struct nlmsghdr *)ack;
        if (got < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)) || h->nlmsg_type != NLMSG_ERROR)
            r = -EPROTO;
        else
            r = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
    }
    close(fd);
    return r;
}

static void nl_new(struct nlreq *q)
{
    memset(q->buf, 0, sizeof(q->buf));
    q->n = (struct nlmsghdr *)q->buf;
    q->n->nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
    q->n->nlmsg_type = RTM_NEWLINK;
    q->n->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
    ((struct ifinfomsg *)NLMSG_DATA(q->n))->ifi_family = AF_UNSPEC;
}

/* A root netem qdisc, every parameter 0, of handle REWIND_NETEM_HANDLE(node)
 * on ifname (invariant 6). */
static void add_netem(const char *ifname, int node)
{
    struct nlreq q;
    memset(q.buf, 0, sizeof(q.buf));
    q.n = (struct nlmsghdr *)q.buf;
    q.n->nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg));
    q.n->nlmsg_type = RTM_NEWQDISC;
    q.n->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
    struct tcmsg *tc = NLMSG_DATA(q.n);
    tc->tcm_family = AF_UNSPEC;
    tc->tcm_ifindex = (int)if_nametoindex(ifname);
    tc->tcm_handle = REWIND_NETEM_HANDLE((unsigned)node);
    tc->tcm_parent = TC_H_ROOT;
    if (!tc->tcm_ifindex)
        nodes_die("nodes: no interface %s for its netem qdisc", ifname);
    addattr(q.n, TCA_KIND, "netem", sizeof("netem"));
    /* room for what a 128 ms delay holds back at any rate the guest sends */
    struct tc_netem_qopt opt = {.limit = 10000};
    addattr(q.n, TCA_OPTIONS, &opt, sizeof(opt));
    int r = nl_talk(q.n);
    if (r < 0)
        nodes_die("nodes: cannot make the netem qdisc of %s: %s", ifname, strerror(-r));
}

static void if_ioctl(int fd, unsigned long req, struct ifreq *ifr, const char *what)
{
    if (ioctl(fd, req, ifr) < 0)
        nodes_die("nodes: %s %s: %s", what, ifr->ifr_name, strerror(errno));
}

/* Give IFNAME the IPv4 address ADDR/MASK and bring it up. */
static void if_up(const char *ifname, const char *addr, const char *mask)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        nodes_die("nodes: no IPv4 socket: %s", strerror(errno));
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    struct sockaddr_in sin = {.sin_family = AF_INET};
    if (addr) {
        inet_pton(AF_INET, addr, &sin.sin_addr);
        memcpy(&ifr.ifr_addr, &sin, sizeof(sin));
        if_ioctl(fd, SIOCSIFADDR, &ifr, "set the address of");
        inet_pton(AF_INET, mask, &sin.sin_addr);
        memcpy(&ifr.ifr_netmask, &sin, sizeof(sin));
        if_ioctl(fd, SIOCSIFNETMASK, &ifr, "set the netmask of");
    }
    if_ioctl(fd, SIOCGIFFLAGS, &ifr, "read the flags of");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if_ioctl(fd, SIOCSIFFLAGS, &ifr, "bring up");
    close(fd);
}

static int if_index(const char *ifname)
{
    unsigned idx = if_nametoindex(ifname);
    if (!idx)
        nodes_die("nodes: no interface %s: %s", ifname, strerror(errno));
    return (int)idx;
}

static void make_bridge(void)
{
    struct nlreq q;
    nl_new(&q);
    addattr(q.n, IFLA_IFNAME, BRIDGE, sizeof(BRIDGE));
    struct rtattr *li = nest_start(q.n, IFLA_LINKINFO);
    addattr(q.n, IFLA_INFO_KIND, "bridge", sizeof("bridge"));
    nest_end(q.n, li);
    int r = nl_talk(q.n);
    if (r < 0)
        nodes_die("nodes: cannot create the bridge %s: %s", BRIDGE, strerror(-r));
    if_up(BRIDGE, "10.77.0.254", "255.255.255.0");
}

/* veth rwn<i> on the bridge, its peer eth0 in the namespace of pid. */
static void make_link(int i, pid_t pid)
{
    char host[IFNAMSIZ];
    snprintf(host, sizeof(host), "rwn%d", i);
    struct nlreq q;
    nl_new(&q);
    addattr(q.n, IFLA_IFNAME, host, strlen(host) + 1);
    int master = if_index(BRIDGE);
    addattr(q.n, IFLA_MASTER, &master, sizeof(master));
    struct rtattr *li = nest_start(q.n, IFLA_LINKINFO);
    addattr(q.n, IFLA_INFO_KIND, "veth", sizeof("veth"));
    struct rtattr *data = nest_start(q.n, IFLA_INFO_DATA);
    struct rtattr *peer = nest_start(q.n, VETH_INFO_PEER);
    /* the peer's ifinfomsg (all zero but the family: memset by nl_new) */
    q.n->nlmsg_len += NLMSG_ALIGN(sizeof(struct ifinfomsg));
    ((struct ifinfomsg *)RTA_DATA(peer))->ifi_family = AF_UNSPEC;
    addattr(q.n, IFLA_IFNAME, "eth0", sizeof("eth0"));
    uint32_t ns = (uint32_t)pid;
    addattr(q.n, IFLA_NET_NS_PID, &ns, sizeof(ns));
    nest_end(q.n, peer);
    nest_end(q.n, data);
    nest_end(q.n, li);
    int r = nl_talk(q.n);
    if (r < 0)
        nodes_die("nodes: cannot create the link of node %d: %s", i, strerror(-r));
    if_up(host, NULL, NULL);
}

/* A failure in a node's new leader: a first start ends the run (invariant
 * 3); a restart's leader says why and exits, and the run goes on. */
#define LEADER_FAIL(restart, ...)                                                                  \
    do {                                                                                           \
        if (!(restart))                                                                            \
            nodes_die(__VA_ARGS__);                                                                \
        dprintf(2, "rewind-init: " __VA_ARGS__);                                                   \
        dprintf(2, "\n");                                                                          \
        _exit(125);                                                                                \
    } while (0)

/* In a node's new leader, its namespaces ready: the outputs, the root, the
 * environment, then exec `/bin/sh -c cmd`; ready (-1: a restart, none)
 * gets 'k' just before. Never returns. */
static void __attribute__((noreturn))
node_exec(const struct node *nd, const char *cmd, int ready, char **envp)
{
    int restart = ready < 0;
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = open("/dev/rewind-stdout", O_WRONLY | O_CLOEXEC);
    int er = open("/dev/rewind-stderr", O_WRONLY | O_CLOEXEC);
    if (in < 0 || out < 0 || er < 0)
        LEADER_FAIL(restart, "nodes: %s: cannot open its output: %s", nd->name, strerror(errno));
    if (chroot("/newroot") < 0 || chdir("/") < 0)
        LEADER_FAIL(restart, "nodes: %s: cannot enter the root: %s", nd->name, strerror(errno));
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(er, 2) < 0)
        LEADER_FAIL(restart, "nodes: %s: dup2: %s", nd->name, strerror(errno));
    size_t n = 0, k = 0;
    while (envp[n])
        n++;
    char **env = calloc(n + 2, sizeof(*env));
    char self[80];
    snprintf(self, sizeof(self), "REWIND_NODE=%s", nd->name);
    if (!env)
        LEADER_FAIL(restart, "nodes: %s: out of memory", nd->name);
    for (size_t i = 0; i < n; i++) /* the job's own REWIND_NODE would shadow it */
        if (strncmp(envp[i], "REWIND_NODE=", 12))
            env[k++] = envp[i];
    env[k] = self;
    char c = 'k'; /* invariant 2: set up */
    if (ready >= 0 && write(ready, &c, 1) != 1)
        _exit(125);
    if (ready >= 0)
        close(ready);
    char *argv[] = {"sh", "-c", (char *)cmd, NULL};
    execve("/bin/sh", argv, env);
    /* the run goes on: the node's absence shows in its output */
    dprintf(2, "rewind-init: node %s: cannot run /bin/sh: %s\n", nd->name, strerror(errno));
    _exit(127);
}

/* The leader of node i (in the child): wait for the go, finish the
 * namespace, exec the node's command. Never returns. */
static void __attribute__((noreturn))
leader(const struct nodes *ns, int i, int go, int ready, char **envp)
{
    const struct node *nd = &ns->node[i];
    setsid();
    if (unshare(CLONE_NEWNET | CLONE_NEWUTS) < 0)
        nodes_die("nodes: %s: cannot enter new namespaces: %s", nd->name, strerror(errno));
    char c = 'u';
    if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
        _exit(125); /* init died or failed: it reports */
    close(go);
    if (sethostname(nd->name, strlen(nd->name)) < 0)
        nodes_die("nodes: %s: sethostname: %s", nd->name, strerror(errno));
    char addr[32];
    snprintf(addr, sizeof(addr), "10.77.0.%d", i + 1);
    if_up("lo", "127.0.0.1", "255.0.0.0");
    if_up("eth0", addr, "255.255.255.0");
    if (ns->netem) /* invariant 6 */
        add_netem("eth0", i + 1);
    node_exec(nd, nd->run, ready, envp);
}

#define HOSTS_MAX (1 << 16)

static void add_hosts(const struct nodes *ns)
{
    /* /newroot/etc/hosts: the root's own lines (a regular file: a symlink
     * would be resolved in init's root, not the job's), then the nodes'. */
    struct stat st;
    if (lstat("/newroot/etc", &st) == 0 && !S_ISDIR(st.st_mode))
        nodes_die("nodes: the root's /etc is not a directory: the nodes' names cannot be written");
    char *old = NULL;
    size_t len = 0;
    int fd = open("/newroot/etc/hosts", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        if (st.st_size >= HOSTS_MAX)
            nodes_die("nodes: the root's /etc/hosts is over %d bytes", HOSTS_MAX - 1);
        old = malloc(HOSTS_MAX);
        ssize_t got = old ? read(fd, old, HOSTS_MAX - 1) : -1;
        len = got > 0 ? (size_t)got : 0;
    }
    if (fd >= 0)
        close(fd);
    mkdir("/newroot/etc", 0755);
    unlink("/newroot/etc/hosts"); /* in the overlay: the root keeps its file */
    FILE *f = fopen("/newroot/etc/hosts", "wxe");
    if (!f)
        nodes_die("nodes: cannot write /etc/hosts: %s", strerror(errno));
    if (len) {
        fwrite(old, 1, len, f);
        if (old[len - 1] != '\n')
            fputc('\n', f);
    } else {
        fputs("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n", f);
    }
    fputs("# the run's nodes (rewind-init, docs/faults.md)\n10.77.0.254\tjob\n", f);
    for (int i = 0; i < ns->count; i++)
        fprintf(f, "10.77.0.%d\t%s\n", i + 1, ns->node[i].name);
    if (fclose(f) != 0)
        nodes_die("nodes: cannot write /etc/hosts: %s", strerror(errno));
    free(old);
}

void nodes_start(struct nodes *ns, char **envp)
{
    if (ns->count == 0)
        return;
    make_bridge();
    add_hosts(ns);
    for (int i = 0; i < ns->count; i++) {
        int go[2], ready[2];
        if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0)
            nodes_die("nodes: pipe: %s", strerror(errno));
        pid_t pid = fork();
        if (pid < 0)
            nodes_die("nodes: fork: %s", strerror(errno));
        if (pid == 0) {
            close(go[1]);
            close(ready[0]);
            leader(ns, i, go[0], ready[1], envp);
        }
        close(go[0]);
        close(ready[1]);
        char c;
        if (read(ready[0], &c, 1) != 1)
            nodes_die("nodes: %s did not enter its namespaces", ns->node[i].name);
        make_link(i + 1, pid);
        if (ns->netem) { /* invariant 6 */
            char host[IFNAMSIZ];
            snprintf(host, sizeof(host), "rwn%d", i + 1);
            add_netem(host, i + 1);
        }
        ns->node[i].pid = pid;
        ns->node[i].netfd = ns->node[i].utsfd = -1;
        if (ns->node[i].restart) { /* invariant 5: the namespaces outlive the node */
            char path[64];
            snprintf(path, sizeof(path), "/newroot/proc/%d/ns/net", (int)pid);
            ns->node[i].netfd = open(path, O_RDONLY | O_CLOEXEC);
            snprintf(path, sizeof(path), "/newroot/proc/%d/ns/uts", (int)pid);
            ns->node[i].utsfd = open(path, O_RDONLY | O_CLOEXEC);
            if (ns->node[i].netfd < 0 || ns->node[i].utsfd < 0)
                nodes_die("nodes: %s: cannot keep its namespaces: %s", ns->node[i].name,
                          strerror(errno));
        }
        char msg[NODE_NAME_MAX + 24];
        snprintf(msg, sizeof(msg), "%s %d", ns->node[i].name, (int)pid);
        if (nodes_emit(REWIND_INIT_NODE_START, msg) < 0) /* invariant 4, before the go */
            nodes_die("nodes: the kernel refused %s's node-start record (a kernel without "
                      "guest/linux/patches/80-nodes.patch?)",
                      ns->node[i].name);
        if (write(go[1], "g", 1) != 1)
            nodes_die("nodes: %s: cannot start it: %s", ns->node[i].name, strerror(errno));
        close(go[1]);
        if (read(ready[0], &c, 1) != 1 || c != 'k') /* invariant 2 */
            nodes_die("nodes: %s could not set itself up", ns->node[i].name);
        close(ready[0]);
    }
}

int nodes_restart(struct nodes *ns, int i, char **envp)
{
    struct node *nd = &ns->node[i];
    if (!nd->restart || nd->netfd < 0)
        return -1;
    static int selfnet = -1, selfuts = -1;
    if (selfnet < 0) {
        selfnet = open("/newroot/proc/1/ns/net", O_RDONLY | O_CLOEXEC);
        selfuts = open("/newroot/proc/1/ns/uts", O_RDONLY | O_CLOEXEC);
        if (selfnet < 0 || selfuts < 0)
            nodes_die("nodes: cannot keep init's own namespaces: %s", strerror(errno));
    }
    int go[2];
    if (pipe2(go, O_CLOEXEC) < 0)
        nodes_die("nodes: pipe: %s", strerror(errno));
    /* init enters the node's namespaces for the fork only: the child is
     * born in them and never waits on init to get there (invariant 5) */
    if (setns(nd->netfd, CLONE_NEWNET) < 0 || setns(nd->utsfd, CLONE_NEWUTS) < 0)
        nodes_die("nodes: %s: cannot enter its namespaces: %s", nd->name, strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        close(go[1]);
        setsid();
        char c = 0;
        if (read(go[0], &c, 1) != 1 || c != 'g')
            _exit(125); /* refused: the run goes on without it */
        close(go[0]);
        node_exec(nd, nd->restart, -1, envp);
    }
    if (setns(selfnet, CLONE_NEWNET) < 0 || setns(selfuts, CLONE_NEWUTS) < 0)
        nodes_die("nodes: cannot return to init's namespaces: %s", strerror(errno));
    if (pid < 0)
        nodes_die("nodes: fork: %s", strerror(errno));
    close(go[0]);
    char msg[NODE_NAME_MAX + 24];
    snprintf(msg, sizeof(msg), "%s %d", nd->name, (int)pid);
    int ok = nodes_emit(REWIND_INIT_NODE_RESTART, msg) == 0;
    if (ok)
        nd->pid = pid;
    char c = ok ? 'g' : 'n';
    if (write(go[1], &c, 1) != 1)
        ok = 0;
    close(go[1]);
    return ok ? 0 : -1;
}
