/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The idmint subcommands. Each takes the arguments after its own name and
 * the flags seen before it (a leading --authority), and returns the exit
 * status: 0 success, 1 a failed operation or check, 2 bad usage.
 */
#ifndef IDMINT_CLI_CMD_H
#define IDMINT_CLI_CMD_H

#include "args.h"

int cmd_mint_run(int argc, char **argv, struct args_common *common);
int cmd_uuid7_run(int argc, char **argv, struct args_common *common);
int cmd_decode_run(int argc, char **argv, struct args_common *common);
int cmd_bounds_run(int argc, char **argv, struct args_common *common);
int cmd_ns_run(int argc, char **argv, struct args_common *common);
int cmd_workers_run(int argc, char **argv, struct args_common *common);
int cmd_verify_run(int argc, char **argv, struct args_common *common);
int cmd_bench_run(int argc, char **argv, struct args_common *common);
int cmd_authority_run(int argc, char **argv, struct args_common *common);
int cmd_trace_run(int argc, char **argv, struct args_common *common);
int cmd_region_run(int argc, char **argv, struct args_common *common);

#endif /* IDMINT_CLI_CMD_H */
