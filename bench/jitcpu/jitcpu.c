// The JIT's CPU time of a JVM run, for comparing what an agent makes the compilers do (e.g. the sampler's
// debug-non-safepoints=on): at process exit, the CPU seconds of the threads still alive whose name
// contains "CompilerThre" (C1/C2), and of the GC's threads ("GC Thread#n", "G1 ..."), from /proc/self/task/*/stat,
// printed to stderr when JITCPU is set.
// Compiler threads that ended earlier are not counted: run java with -XX:-UseDynamicNumberOfCompilerThreads.
//   gcc -O2 -shared -fPIC -o /tmp/jitcpu.so bench/jitcpu/jitcpu.c
//   JITCPU=1 LD_PRELOAD=/tmp/jitcpu.so java -XX:-UseDynamicNumberOfCompilerThreads ...
// A measuring tool, not part of the agent.
#include <dirent.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((destructor)) static void report(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    long hz = sysconf(_SC_CLK_TCK);
    double jit = 0, gc = 0, all = 0; int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[300], buf[1024];
        snprintf(p, sizeof p, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        size_t k = fread(buf, 1, sizeof buf - 1, f); fclose(f); buf[k] = 0;
        char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
        if (!lp || !rp) continue;
        unsigned long ut = 0, st = 0;
        // fields after ')': state(3) ... utime is field 14, stime 15
        sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
        double s = (double)(ut + st) / hz;
        all += s;
        if (strstr(lp, "CompilerThre")) { jit += s; n++; }
        else if (!strncmp(lp, "(GC ", 4) || !strncmp(lp, "(G1 ", 4)) gc += s;
    }
    closedir(d);
    if (getenv("JITCPU")) fprintf(stderr, "jitcpu: compiler_threads=%d jit_s=%.2f gc_s=%.2f live_threads_s=%.2f\n", n, jit, gc,
                                 all);
}
