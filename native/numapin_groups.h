/* `numapin groups`: the launcher of N JVM groups (numapin_groups.c). */
#ifndef NUMAPIN_GROUPS_H
#define NUMAPIN_GROUPS_H

/* argv[0] is "groups".  Returns the exit status. */
int numapin_groups(int argc, char **argv);

#endif
