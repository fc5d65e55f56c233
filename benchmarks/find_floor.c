/* The least CPU a process can spend getting files out of the page cache and past a search on
 * this machine: each file named on standard input (one path a line) is mapped, or read into one
 * reused buffer, and one byte value counted with memchr (a search as cheap as any). Reported:
 * CPU seconds (user + system) and user seconds of the loop, from getrusage.
 * docs/benchmarks.md ("Exact search", 2026-12-02) compares it with `seqsift find` and `rg -j1`
 * on the large files of bench_find.py's tree of binaries.
 *
 *     cc -O2 -o /tmp/find_floor benchmarks/find_floor.c
 *     find bench-data/binaries -type f -size +1M | /tmp/find_floor map
 *     find bench-data/binaries -type f -size +1M | /tmp/find_floor read 262144
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static double seconds(int user_only) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    double user = r.ru_utime.tv_sec + r.ru_utime.tv_usec * 1e-6;
    return user_only ? user : user + r.ru_stime.tv_sec + r.ru_stime.tv_usec * 1e-6;
}

static long count_byte(const unsigned char *p, size_t n) {
    long c = 0;
    const unsigned char *q = p, *end = p + n;
    while ((q = memchr(q, 0x9b, (size_t)(end - q))) != NULL) {
        c++;
        q++;
    }
    return c;
}

int main(int argc, char **argv) {
    if (argc < 2 || (strcmp(argv[1], "map") && strcmp(argv[1], "read"))) {
        fprintf(stderr, "usage: find_floor map|read [BUFFER_BYTES] < list of paths\n");
        return 2;
    }
    int map = strcmp(argv[1], "map") == 0;
    size_t size = argc > 2 ? (size_t)atol(argv[2]) : 262144;
    unsigned char *buffer = map ? NULL : malloc(size);
    char line[4096];
    long found = 0, files = 0;
    double cpu0 = seconds(0), user0 = seconds(1);
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        int fd = open(line, O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            perror(line);
            return 2;
        }
        if (map && st.st_size > 0) {
            unsigned char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
            if (m == MAP_FAILED) {
                perror(line);
                return 2;
            }
            found += count_byte(m, (size_t)st.st_size);
            munmap(m, (size_t)st.st_size);
        } else if (!map) {
            ssize_t got;
            while ((got = read(fd, buffer, size)) > 0)
                found += count_byte(buffer, (size_t)got);
        }
        close(fd);
        files++;
    }
    printf("%s %zu: %ld files, CPU %.3f s (user %.3f s), %ld bytes 0x9b\n", argv[1], map ? 0 : size, files,
           seconds(0) - cpu0, seconds(1) - user0, found);
    return 0;
}
