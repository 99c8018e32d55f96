// A C++ reference for bloomkit build and test -absent on a key file: what
// this machine can do for the same job with everything inlined, beside the
// Go pipeline (docs/pipeline.md, "Against C++"). It reads FILE with read()
// into 256 KiB buffers (one thread) or in halves (two threads), splits the
// lines with memchr, hashes each with seeded XXH3-64 and sets or tests k = 7
// bits of one 512-bit block (the partitioned layout's shape, without its
// remixing past 7 probes), sized at 9.6 bits a key (1%). Modes:
//
//   count   read and count the lines (what wc -l does)
//   build1  one thread adds every line with plain stores
//   build2  two threads, each half of the file, atomic ORs
//   test2   two threads look every line up (after a build2)
//   build1p, build2p, test2p: the same with the lines hashed 32 at a time
//           and their blocks prefetched before they are touched
//   dedup1p one thread prints each line not seen before, in input order
//           (test and add in order, groups of 32 prefetched)
//
//   apt-get install -y g++ libxxhash-dev
//   g++ -O3 -march=native -pthread -o /tmp/linecref cmd/bloomkit/internal/lines/cref/build.cc
//   /tmp/linecref urls.txt
//
// It is not built by go build or CI.
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

static inline uint64_t mulhi(uint64_t a, uint64_t b) { return (uint64_t)(((__uint128_t)a * b) >> 64); }
static inline uint64_t mix(uint64_t h) {
  __uint128_t p = (__uint128_t)h * 0x9e3779b97f4a7c15ULL;
  return ((uint64_t)(p >> 64) ^ (uint64_t)p) | 1;
}

struct Filter {
  uint64_t* w; uint64_t blocks;
  template <bool Atomic> bool add(const char* k, size_t n) {
    uint64_t h = XXH3_64bits_withSeed(k, n, 0);
    uint64_t* b = w + mulhi(h, blocks) * 8;
    uint64_t x = mix(h) >> 1, fresh = 0;
    for (int i = 0; i < 7; i++) {
      uint64_t bit = 1ULL << (x & 63);
      uint64_t* word = &b[(x >> 6) & 7];
      if (Atomic) fresh |= ~__atomic_fetch_or(word, bit, __ATOMIC_RELAXED) & bit;
      else { fresh |= ~*word & bit; *word |= bit; }
      x >>= 9;
    }
    return fresh != 0;
  }
  // the batched forms: hashes of a group, their blocks prefetched first
  template <bool Atomic> bool addH(uint64_t h) {
    uint64_t* b = w + mulhi(h, blocks) * 8;
    uint64_t x = mix(h) >> 1, fresh = 0;
    for (int i = 0; i < 7; i++) {
      uint64_t bit = 1ULL << (x & 63);
      uint64_t* word = &b[(x >> 6) & 7];
      if (Atomic) fresh |= ~__atomic_fetch_or(word, bit, __ATOMIC_RELAXED) & bit;
      else { fresh |= ~*word & bit; *word |= bit; }
      x >>= 9;
    }
    return fresh != 0;
  }
  bool hasH(uint64_t h) const {
    const uint64_t* b = w + mulhi(h, blocks) * 8;
    uint64_t x = mix(h) >> 1, miss = 0;
    for (int i = 0; i < 7; i++) { miss |= ~b[(x >> 6) & 7] >> (x & 63); x >>= 9; }
    return !(miss & 1);
  }
  void prefetch(uint64_t h) const { __builtin_prefetch(w + mulhi(h, blocks) * 8, 1); }
  bool has(const char* k, size_t n) const {
    uint64_t h = XXH3_64bits_withSeed(k, n, 0);
    const uint64_t* b = w + mulhi(h, blocks) * 8;
    uint64_t x = mix(h) >> 1, miss = 0;
    for (int i = 0; i < 7; i++) { miss |= ~b[(x >> 6) & 7] >> (x & 63); x >>= 9; }
    return !(miss & 1);
  }
};

// each calls fn(line, len) for every line of FILE's bytes [from, to), a
// line belonging to the range its first byte is in; returns the count.
template <class F> static uint64_t each(const char* path, off_t from, off_t to, F fn) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) { perror(path); exit(1); }
  const size_t size = 256 << 10;
  std::vector<char> buf(size + 4096);
  uint64_t lines = 0; size_t have = 0; off_t pos = from;
  bool skip = from > 0;  // the line in progress at from is the range before's
  if (skip) { pos = from - 1; }
  while (pos < to || have > 0) {
    ssize_t r = pos < to ? pread(fd, buf.data() + have, size, pos) : 0;
    if (r < 0) { perror("read"); exit(1); }
    pos += r;
    size_t end = have + r, start = 0;
    for (;;) {
      char* nl = (char*)memchr(buf.data() + start, '\n', end - start);
      if (!nl) break;
      size_t n = nl - (buf.data() + start);
      if (skip) skip = false;
      else { fn(buf.data() + start, n); lines++; }
      start += n + 1;
      if (pos - (off_t)(end - start) >= to) { have = 0; goto done; }
    }
    memmove(buf.data(), buf.data() + start, end - start);
    have = end - start;
    if (r == 0) break;
  }
done:
  close(fd);
  return lines;
}

// Batch groups the hashes of 32 lines, prefetches their blocks, then
// calls fn on each hash.
template <class F> struct Batch {
  F fn; const Filter& f; uint64_t h[32]; int n = 0;
  void push(const char* k, size_t l) { h[n++] = XXH3_64bits_withSeed(k, l, 0); if (n == 32) drain(); }
  void drain() { for (int i = 0; i < n; i++) f.prefetch(h[i]); for (int i = 0; i < n; i++) fn(h[i]); n = 0; }
};
template <class F> static Batch<F> batch(const Filter& f, F fn) { return Batch<F>{fn, f}; }

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s FILE\n", argv[0]); return 2; }
  const char* path = argv[1];
  struct stat st; if (stat(path, &st)) { perror(path); return 1; }
  off_t sz = st.st_size;
  double t = now();
  uint64_t n = each(path, 0, sz, [](const char*, size_t) {});
  printf("count  %.3f s  %llu lines\n", now() - t, (unsigned long long)n);
  Filter f{nullptr, (uint64_t)(n * 9.6 / 512) + 1};
  f.w = (uint64_t*)aligned_alloc(64, f.blocks * 64);
  memset(f.w, 0, f.blocks * 64);
  t = now(); uint64_t fresh = 0;
  each(path, 0, sz, [&](const char* k, size_t l) { fresh += f.add<false>(k, l); });
  printf("build1 %.3f s  %llu new\n", now() - t, (unsigned long long)fresh);
  memset(f.w, 0, f.blocks * 64);
  t = now(); std::atomic<uint64_t> fresh2{0};
  {
    auto half = [&](off_t a, off_t b) { uint64_t c = 0; each(path, a, b, [&](const char* k, size_t l) { c += f.add<true>(k, l); }); fresh2 += c; };
    std::thread th(half, sz / 2, sz); half(0, sz / 2); th.join();
  }
  printf("build2 %.3f s  %llu new\n", now() - t, (unsigned long long)fresh2.load());
  t = now(); std::atomic<uint64_t> found{0};
  {
    auto half = [&](off_t a, off_t b) { uint64_t c = 0; each(path, a, b, [&](const char* k, size_t l) { c += f.has(k, l); }); found += c; };
    std::thread th(half, sz / 2, sz); half(0, sz / 2); th.join();
  }
  printf("test2  %.3f s  %llu found of %llu\n", now() - t, (unsigned long long)found.load(), (unsigned long long)n);
  memset(f.w, 0, f.blocks * 64);
  t = now(); fresh = 0;
  {
    auto b = batch(f, [&](uint64_t h) { fresh += f.addH<false>(h); });
    each(path, 0, sz, [&](const char* k, size_t l) { b.push(k, l); });
    b.drain();
  }
  printf("build1p %.3f s  %llu new (groups of 32 prefetched)\n", now() - t, (unsigned long long)fresh);
  memset(f.w, 0, f.blocks * 64);
  t = now(); fresh2 = 0;
  {
    auto half = [&](off_t a, off_t c) { uint64_t cnt = 0; auto b = batch(f, [&](uint64_t h) { cnt += f.addH<true>(h); });
      each(path, a, c, [&](const char* k, size_t l) { b.push(k, l); }); b.drain(); fresh2 += cnt; };
    std::thread th(half, sz / 2, sz); half(0, sz / 2); th.join();
  }
  printf("build2p %.3f s  %llu new (groups of 32 prefetched)\n", now() - t, (unsigned long long)fresh2.load());
  t = now(); found = 0;
  {
    auto half = [&](off_t a, off_t c) { uint64_t cnt = 0; auto b = batch(f, [&](uint64_t h) { cnt += f.hasH(h); });
      each(path, a, c, [&](const char* k, size_t l) { b.push(k, l); }); b.drain(); found += cnt; };
    std::thread th(half, sz / 2, sz); half(0, sz / 2); th.join();
  }
  printf("test2p %.3f s  %llu found (groups of 32 prefetched)\n", now() - t, (unsigned long long)found.load());
  memset(f.w, 0, f.blocks * 64);
  t = now(); fresh = 0;
  {
    // dedup: each new line printed (to /dev/null) in input order; lines
    // hashed 32 at a time, blocks prefetched, then tested and added in
    // order. The group keeps its lines' places in the buffer.
    FILE* out = fopen("/dev/null", "w");
    static char obuf[1 << 16];
    setvbuf(out, obuf, _IOFBF, sizeof obuf);
    const char* ks[32]; size_t ls[32]; uint64_t hs[32]; int g = 0;
    auto drain = [&]() {
      for (int i = 0; i < g; i++) f.prefetch(hs[i]);
      for (int i = 0; i < g; i++) if (f.addH<false>(hs[i])) { fwrite(ks[i], 1, ls[i] + 1, out); fresh++; }
      g = 0;
    };
    // The buffer of each() is reused after a read: drain before it is.
    int fd = open(path, O_RDONLY);
    std::vector<char> buf((256 << 10) + 4096);
    size_t have = 0;
    for (;;) {
      ssize_t r = read(fd, buf.data() + have, 256 << 10);
      if (r <= 0) break;
      size_t end = have + r, start = 0;
      for (;;) {
        char* nl = (char*)memchr(buf.data() + start, '\n', end - start);
        if (!nl) break;
        size_t l = nl - (buf.data() + start);
        ks[g] = buf.data() + start; ls[g] = l; hs[g] = XXH3_64bits_withSeed(ks[g], l, 0);
        if (++g == 32) drain();
        start += l + 1;
      }
      drain();
      memmove(buf.data(), buf.data() + start, end - start);
      have = end - start;
    }
    close(fd); fclose(out);
  }
  printf("dedup1p %.3f s  %llu printed (one thread, groups of 32 prefetched)\n", now() - t, (unsigned long long)fresh);
  return found.load() == n ? 0 : 1;  // no false negative
}
