/* The smx program: the command line lives in smx_cli_main (smx.c), which
 * the CLI fuzz target calls in-process. */
#include "cli.h"

int main(int argc, char **argv) { return smx_cli_main(argc, argv); }
