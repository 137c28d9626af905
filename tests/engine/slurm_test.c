/* slurm_test: what the Slurm engine makes of squeue's lines
 * (src/explore/slurm.c invariant 2): every job state squeue(1) lists is
 * classed as waiting, ended or held; a pending task held by a failed launch
 * ("launch failed requeued held"), a user or an admin counts as held (the
 * engine retries it, never waits on it); a line that is not an array
 * task's, or is damaged, is refused. No Slurm, no VM. */
#include <stdio.h>
#include <string.h>

#include "explore/slurm.h"
#include "unit.h"

int main(void)
{
    /* every state of squeue(1)'s JOB STATE CODES, long and short forms */
    static const char *const waiting[] = {"PENDING PD",    "RUNNING R",      "CONFIGURING CF",
                                          "COMPLETING CG", "SUSPENDED S",    "STOPPED ST",
                                          "REQUEUED RQ",   "REQUEUE_FED RF", "RESIZING RS",
                                          "SIGNALING SI",  "STAGE_OUT SO"};
    static const char *const ended[] = {
        "BOOT_FAIL BF", "CANCELLED CA",      "COMPLETED CD", "DEADLINE DL", "FAILED F",
        "NODE_FAIL NF", "OUT_OF_MEMORY OOM", "PREEMPTED PR", "TIMEOUT TO",  "REVOKED RV"};
    static const char *const held[] = {"REQUEUE_HOLD RH", "SPECIAL_EXIT SE", "RESV_DEL_HOLD RD"};
    const struct {
        const char *const *names;
        size_t n;
        enum slurm_tstate cls;
    } classes[] = {{waiting, sizeof(waiting) / sizeof(*waiting), SLURM_T_ACTIVE},
                   {ended, sizeof(ended) / sizeof(*ended), SLURM_T_ENDED},
                   {held, sizeof(held) / sizeof(*held), SLURM_T_HELD}};
    for (size_t c = 0; c < 3; c++)
        for (size_t i = 0; i < classes[c].n; i++) {
            char name[32], code[8], msg[96];
            CHECK(sscanf(classes[c].names[i], "%31s %7s", name, code) == 2, "the list");
            snprintf(msg, sizeof(msg), "state %s", name);
            CHECK(slurm_state_class(name, "None") == classes[c].cls, msg);
            snprintf(msg, sizeof(msg), "state %s as %s", name, code);
            CHECK(slurm_state_class(code, NULL) == classes[c].cls, msg);
        }
    CHECK(slurm_state_class("CANCELLED by 0", NULL) == SLURM_T_ENDED, "sacct's CANCELLED by UID");
    CHECK(slurm_state_class("RUNNINGX", NULL) == SLURM_T_UNKNOWN &&
              slurm_state_class("", NULL) == SLURM_T_UNKNOWN &&
              slurm_state_class("pending", NULL) == SLURM_T_UNKNOWN,
          "a state not in the list is unknown, not guessed");

    /* pending, but held: it would wait for `scontrol release` forever */
    CHECK(slurm_state_class("PENDING", "launch failed requeued held") == SLURM_T_HELD,
          "a failed launch's hold");
    CHECK(slurm_state_class("PENDING", "JobHeldUser") == SLURM_T_HELD &&
              slurm_state_class("PENDING", "JobHeldAdmin") == SLURM_T_HELD &&
              slurm_state_class("PD", "job requeued in held state") == SLURM_T_HELD,
          "a user's, an admin's and a requeue's hold");
    CHECK(slurm_state_class("PENDING", "DependencyNeverSatisfied") == SLURM_T_HELD,
          "a dependency that can never be met");
    CHECK(slurm_state_class("PENDING", "Resources") == SLURM_T_ACTIVE &&
              slurm_state_class("PENDING", "Priority") == SLURM_T_ACTIVE &&
              slurm_state_class("PENDING", "BeginTime") == SLURM_T_ACTIVE &&
              slurm_state_class("PENDING", "None") == SLURM_T_ACTIVE,
          "a task waiting for resources is waited on");
    CHECK(slurm_state_class("RUNNING", "held") == SLURM_T_ACTIVE,
          "a running task is running, whatever its reason");

    /* squeue -h -r -o '%A|%i|%T|%N|%r' */
    struct slurm_line l;
    CHECK(slurm_parse_line("41|40_1|PENDING||launch failed requeued held", &l) == 0 &&
              l.array_job == 40 && l.index == 1 && !strcmp(l.state, "PENDING") && !l.node[0] &&
              !strcmp(l.reason, "launch failed requeued held") &&
              slurm_state_class(l.state, l.reason) == SLURM_T_HELD,
          "a held task's line");
    CHECK(slurm_parse_line("52|50_2|RUNNING|node2|None\n", &l) == 0 && l.array_job == 50 &&
              l.index == 2 && !strcmp(l.node, "node2") && !strcmp(l.reason, "None") &&
              slurm_state_class(l.state, l.reason) == SLURM_T_ACTIVE,
          "a running task's line");
    CHECK(slurm_parse_line("60|60_0|CANCELLED|(null)|a|b", &l) == 0 && !l.node[0] &&
              !strcmp(l.reason, "a|b"),
          "no node is \"\"; the reason is the rest of the line");
    CHECK(slurm_parse_line("70|70|RUNNING|node1|None", &l) < 0, "not an array task");
    CHECK(slurm_parse_line("70|70_|RUNNING|node1|None", &l) < 0 &&
              slurm_parse_line("70|_3|RUNNING|node1|None", &l) < 0 &&
              slurm_parse_line("70|x_3|RUNNING|node1|None", &l) < 0 &&
              slurm_parse_line("70|7_-3|RUNNING|node1|None", &l) < 0 &&
              slurm_parse_line("70|7_99999999|RUNNING|node1|None", &l) < 0,
          "a damaged task id");
    CHECK(slurm_parse_line("70|70_1|RUNNING", &l) < 0 && slurm_parse_line("", &l) < 0 &&
              slurm_parse_line("70|70_1||node1|None", &l) < 0,
          "a short line or no state");
    return unit_done();
}
