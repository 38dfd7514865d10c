#define _GNU_SOURCE
#include "hotspot.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

/* Where the flag table is, found once by np_hotspot_init. */
static struct {
    const char *flags;      /* JVMFlag array */
    size_t count;
    size_t size;            /* sizeof(JVMFlag) */
    uint64_t name_offset;   /* JVMFlag::_name */
    uint64_t addr_offset;   /* JVMFlag::_addr */
    int have_origin;
    uint64_t flags_offset;  /* JVMFlag::_flags: the origin in its low 4 bits */
    int have_threads;
    uint64_t osthread_offset;   /* JavaThread::_osthread, or Thread::_osthread */
    uint64_t thread_id_offset;  /* OSThread::_thread_id */
} table;

static void *sym(void *lib, const char *name)
{
    return lib != NULL ? dlsym(lib, name) : dlsym(RTLD_DEFAULT, name);
}

static uint64_t sym_u64(void *lib, const char *name, int *ok)
{
    uint64_t *p = sym(lib, name);
    if (p == NULL) {
        *ok = 0;
        return 0;
    }
    return *p;
}

int np_hotspot_init(const void *addr_in_libjvm)
{
    void *lib = NULL;
    Dl_info info;
    if (addr_in_libjvm != NULL && dladdr(addr_in_libjvm, &info) != 0 && info.dli_fname != NULL)
        lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);

    int ok = 1;
    char **structs = sym(lib, "gHotSpotVMStructs");
    char **types = sym(lib, "gHotSpotVMTypes");
    uint64_t s_type = sym_u64(lib, "gHotSpotVMStructEntryTypeNameOffset", &ok);
    uint64_t s_field = sym_u64(lib, "gHotSpotVMStructEntryFieldNameOffset", &ok);
    uint64_t s_static = sym_u64(lib, "gHotSpotVMStructEntryIsStaticOffset", &ok);
    uint64_t s_offset = sym_u64(lib, "gHotSpotVMStructEntryOffsetOffset", &ok);
    uint64_t s_addr = sym_u64(lib, "gHotSpotVMStructEntryAddressOffset", &ok);
    uint64_t s_stride = sym_u64(lib, "gHotSpotVMStructEntryArrayStride", &ok);
    uint64_t t_name = sym_u64(lib, "gHotSpotVMTypeEntryTypeNameOffset", &ok);
    uint64_t t_size = sym_u64(lib, "gHotSpotVMTypeEntrySizeOffset", &ok);
    uint64_t t_stride = sym_u64(lib, "gHotSpotVMTypeEntryArrayStride", &ok);
    if (lib != NULL)
        dlclose(lib); /* RTLD_NOLOAD took a reference; libjvm stays loaded */
    if (!ok || structs == NULL || *structs == NULL || types == NULL || *types == NULL ||
        s_stride == 0 || t_stride == 0)
        return -1;

    const char *flags_array = NULL;
    size_t count = 0;
    int have_name = 0, have_addr = 0, have_flags = 0, have_count = 0;
    int have_osthread = 0, have_thread_id = 0;
    for (const char *e = *structs;; e += s_stride) {
        const char *type = *(const char *const *)(e + s_type);
        const char *field = *(const char *const *)(e + s_field);
        if (type == NULL)
            break;
        /* _osthread is JavaThread's in older JDKs, Thread's in newer. */
        if (field != NULL && (strcmp(type, "JavaThread") == 0 || strcmp(type, "Thread") == 0) &&
            strcmp(field, "_osthread") == 0) {
            table.osthread_offset = *(const uint64_t *)(e + s_offset);
            have_osthread = 1;
        } else if (field != NULL && strcmp(type, "OSThread") == 0 &&
                   strcmp(field, "_thread_id") == 0) {
            table.thread_id_offset = *(const uint64_t *)(e + s_offset);
            have_thread_id = 1;
        }
        /* JDK 11 and later call it JVMFlag; older ones Flag. */
        if (field == NULL || (strcmp(type, "JVMFlag") != 0 && strcmp(type, "Flag") != 0))
            continue;
        int is_static = *(const int32_t *)(e + s_static);
        if (!is_static && strcmp(field, "_name") == 0) {
            table.name_offset = *(const uint64_t *)(e + s_offset);
            have_name = 1;
        } else if (!is_static && strcmp(field, "_addr") == 0) {
            table.addr_offset = *(const uint64_t *)(e + s_offset);
            have_addr = 1;
        } else if (!is_static && strcmp(field, "_flags") == 0) {
            table.flags_offset = *(const uint64_t *)(e + s_offset);
            table.have_origin = 1;
        } else if (is_static && strcmp(field, "flags") == 0) {
            flags_array = *(const char *const *)*(void *const *)(e + s_addr);
            have_flags = 1;
        } else if (is_static && strcmp(field, "numFlags") == 0) {
            count = *(const size_t *)*(void *const *)(e + s_addr);
            have_count = 1;
        }
    }
    size_t size = 0;
    for (const char *e = *types;; e += t_stride) {
        const char *type = *(const char *const *)(e + t_name);
        if (type == NULL)
            break;
        if (strcmp(type, "JVMFlag") == 0 || strcmp(type, "Flag") == 0)
            size = *(const uint64_t *)(e + t_size);
    }
    if (!have_name || !have_addr || !have_flags || !have_count || flags_array == NULL ||
        size == 0)
        return -1;
    table.have_threads = have_osthread && have_thread_id;
    table.flags = flags_array;
    table.count = count;
    table.size = size;
    return 0;
}

/* The flag's JVMFlag entry, or NULL. */
static const char *flag_entry(const char *name)
{
    for (size_t i = 0; table.flags != NULL && i < table.count; i++) {
        const char *f = table.flags + i * table.size;
        const char *n = *(const char *const *)(f + table.name_offset);
        if (n != NULL && strcmp(n, name) == 0)
            return f;
    }
    return NULL;
}

static const void *flag_addr(const char *name)
{
    const char *f = flag_entry(name);
    return f != NULL ? *(const void *const *)(f + table.addr_offset) : NULL;
}

int np_hotspot_origin(const char *name, int *out)
{
    const char *f = table.have_origin ? flag_entry(name) : NULL;
    if (f == NULL)
        return -1;
    *out = *(const int32_t *)(f + table.flags_offset) & 0xf;
    return 0;
}

int np_hotspot_set_bool(const char *name, bool value)
{
    bool *p = (bool *)flag_addr(name);
    if (p == NULL)
        return -1;
    *p = value;
    return 0;
}

int np_hotspot_bool(const char *name, bool *out)
{
    const bool *p = flag_addr(name);
    if (p == NULL)
        return -1;
    *out = *p;
    return 0;
}

int np_hotspot_uint(const char *name, uint32_t *out)
{
    const uint32_t *p = flag_addr(name);
    if (p == NULL)
        return -1;
    *out = *p;
    return 0;
}

int np_hotspot_int(const char *name, int32_t *out)
{
    const int32_t *p = flag_addr(name);
    if (p == NULL)
        return -1;
    *out = *p;
    return 0;
}

int np_hotspot_intx(const char *name, int64_t *out)
{
    const int64_t *p = flag_addr(name);
    if (p == NULL)
        return -1;
    *out = *p;
    return 0;
}

int np_hotspot_ccstr(const char *name, const char **out)
{
    const char *const *p = flag_addr(name);
    if (p == NULL)
        return -1;
    *out = *p;
    return 0;
}

pid_t np_hotspot_os_tid(uintptr_t java_thread)
{
    if (!table.have_threads || java_thread == 0)
        return -1;
    const char *osthread = *(const char *const *)(java_thread + table.osthread_offset);
    if (osthread == NULL)
        return -1;
    pid_t tid = *(const pid_t *)(osthread + table.thread_id_offset);
    return tid > 0 ? tid : -1;
}
