/*
 * defaults: see defaults.c. The default environment as constants, for the
 * one constant array rw_run_config_init hands out (src/run/api.c
 * invariant 3) and the table's own strings.
 */
#ifndef REWIND_INPUT_DEFAULTS_H
#define REWIND_INPUT_DEFAULTS_H

#define RUN_PATH_ENV "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define RUN_HOME_ENV "HOME=/root"

#endif
