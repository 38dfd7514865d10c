/* sanlog_preload: makes every sanitizer report of a preloaded-ASan JVM land
 * in one directory, so `make test-asan` can check that it stays empty.
 *
 *   LD_PRELOAD="$(gcc -print-file-name=libasan.so) build/asan/sanlog_preload.so"
 *   NUMAPIN_SANITIZER_LOGS=/abs/dir
 *
 * Why: gcc builds UBSan as a runtime of its own (libubsan.so) beside ASan's
 * (libasan.so), each with its own copy of sanitizer_common.  When the
 * agent's libubsan initialises, its call to __sanitizer_set_report_path
 * binds to libasan's exported copy (the preloaded one comes first), so
 * UBSAN_OPTIONS=log_path moves ASan's reports and leaves UBSan's own on
 * stderr, where a passing child JVM's output is thrown away.  This
 * library loads libubsan.so first and gives each runtime its own path
 * through its own __sanitizer_set_report_path.  Reports are then
 * DIR/asan.PID and DIR/ubsan.PID.  Not part of numapin. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*set_path_fn)(const char *);

__attribute__((constructor)) static void sanlog_init(void)
{
    const char *dir = getenv("NUMAPIN_SANITIZER_LOGS");
    if (dir == NULL || dir[0] != '/')
        return;
    char path[4096];
    /* libubsan's constructor runs here (standalone init), and points the
     * report path it can reach, libasan's, at UBSAN_OPTIONS' log_path. */
    void *ubsan = dlopen("libubsan.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (ubsan != NULL) {
        set_path_fn set = (set_path_fn)dlsym(ubsan, "__sanitizer_set_report_path");
        snprintf(path, sizeof path, "%s/ubsan", dir);
        if (set != NULL)
            set(path);
    }
    /* libasan's: the first definition in the global scope. */
    set_path_fn asan = (set_path_fn)dlsym(RTLD_DEFAULT, "__sanitizer_set_report_path");
    snprintf(path, sizeof path, "%s/asan", dir);
    if (asan != NULL)
        asan(path);
}
