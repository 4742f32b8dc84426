#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <time.h>
// sf MODE SIZE N : MODE = ext4:PATH (any file system) | chunkK:PATH (written K KiB at a time, the file growing) | memfd | memfdhuge | write (write(2) from a heap buffer)
int main(int argc, char **argv) {
  char *mode = argv[1]; size_t size = atol(argv[2]); int n = atoi(argv[3]);
  int fd;
  char *buf = malloc(size); for (size_t i = 0; i < size; i++) buf[i] = rand();
  if (strncmp(mode, "chunk", 5) == 0) { // chunkK:PATH: written K KiB at a time, no size first
    size_t ck = atol(mode + 5) * 1024; char *path = strchr(mode, ':') + 1;
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    for (size_t o = 0; o < size; o += ck) pwrite(fd, buf + o, (size - o < ck ? size - o : ck), o);
  } else if (strncmp(mode, "ext4:", 5) == 0) {
    fd = open(mode + 5, O_RDWR | O_CREAT | O_TRUNC, 0644); write(fd, buf, size); fsync(fd);
  } else {
    fd = memfd_create("x", 0);
    if (strcmp(mode, "memfdhuge") == 0) {
      ftruncate(fd, 2<<20);
      char *p = mmap(0, 2<<20, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0);
      // align: mmap may not be 2MiB aligned; remap aligned
      char *q = mmap(0, 4<<20, PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
      char *a = (char*)(((unsigned long)q + (2<<20) - 1) & ~((2UL<<20)-1));
      munmap(p, 2<<20);
      p = mmap(a, 2<<20, PROT_READ|PROT_WRITE, MAP_SHARED|MAP_FIXED, fd, 0);
      memcpy(p, buf, size);
      int r = madvise(p, 2<<20, 25 /*MADV_COLLAPSE*/);
      fprintf(stderr, "collapse %d\n", r); if (r) perror("madvise");
    } else { write(fd, buf, size); }
  }
  int sv[2]; int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(19999)}; inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  int one = 1; setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, 4);
  bind(ls, (void*)&sa, sizeof sa); listen(ls, 1);
  pid_t c = fork();
  if (c == 0) { int s = socket(AF_INET, SOCK_STREAM, 0); connect(s, (void*)&sa, sizeof sa); char *b = malloc(1<<20); long t = 0; for (;;) { ssize_t k = read(s, b, 1<<20); if (k <= 0) break; t += k; } _exit(0); }
  int s = accept(ls, 0, 0); setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, 4);
  struct rusage r0, r1; getrusage(RUSAGE_SELF, &r0);
  struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
  int wr = strcmp(mode,"write")==0; for (int i = 0; i < n; i++) { if (wr) { size_t o=0; while (o<size) { ssize_t k = write(s, buf+o, size-o); if (k<0) return 1; o+=k; } continue; } off_t off = 0; size_t left = size; while (left) { ssize_t k = sendfile(s, fd, &off, left); if (k < 0) { perror("sendfile"); return 1; } left -= k; } }
  clock_gettime(CLOCK_MONOTONIC, &t1); getrusage(RUSAGE_SELF, &r1);
  close(s); waitpid(c, 0, 0);
  double sys = (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e6 + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
  double usr = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * 1e6 + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec);
  double wall = (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3;
  printf("%s size=%zu sys_us/send=%.1f usr=%.1f wall_us/send=%.1f\n", mode, size, sys / n, usr / n, wall / n);
}
