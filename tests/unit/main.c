/* Runs every numapin unit-test suite; exits non-zero when any check fails.
 * Check's default fork mode gives each test its own process, which the
 * agent and log tests rely on (environment variables, global log state). */
#include <stdlib.h>

#include "tests.h"

int main(void)
{
    SRunner *sr = srunner_create(options_suite());
    srunner_add_suite(sr, topo_suite());
    srunner_add_suite(sr, plan_suite());
    srunner_add_suite(sr, property_suite());
    srunner_add_suite(sr, record_suite());
    srunner_add_suite(sr, log_suite());
    srunner_add_suite(sr, agent_suite());
    srunner_add_suite(sr, cli_suite());
    srunner_add_suite(sr, expected_suite());
    srunner_add_suite(sr, advise_suite());
    srunner_add_suite(sr, bind_suite());
    srunner_add_suite(sr, inspect_suite());
    srunner_add_suite(sr, attach_suite());
    srunner_add_suite(sr, claim_suite());
    srunner_add_suite(sr, draw_suite());
    srunner_add_suite(sr, report_suite());
    srunner_add_suite(sr, watch_suite());
    srunner_add_suite(sr, groups_suite());
    srunner_add_suite(sr, cpulist_suite());
    srunner_add_suite(sr, glob_suite());
    srunner_add_suite(sr, modes_suite());
    srunner_add_suite(sr, domains_suite());
    srunner_add_suite(sr, describe_suite());
    srunner_add_suite(sr, hotspot_suite());
    srunner_add_suite(sr, file_suite());
    srunner_add_suite(sr, marker_suite());
    srunner_add_suite(sr, memory_suite());
    srunner_add_suite(sr, hugepages_suite());
    srunner_add_suite(sr, access_suite());
    srunner_add_suite(sr, text_suite());
    srunner_add_suite(sr, json_suite());
    srunner_add_suite(sr, topocache_suite());
    srunner_add_suite(sr, cpuset_suite());
    srunner_add_suite(sr, thread_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
