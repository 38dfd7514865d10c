/* `numapin check PID` (numapin_check.c). */
#ifndef NUMAPIN_CHECK_H
#define NUMAPIN_CHECK_H

/* argv[0] is "check".  Returns the exit status. */
int numapin_check(int argc, char **argv);

#endif
