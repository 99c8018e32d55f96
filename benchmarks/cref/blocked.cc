// A C++ reference for partitioned: the same 512-bit block layout, hash
// (seeded XXH3-64, scheme 2) and mixer, one key at a time, everything
// inlined. It measures what this machine can do for a one-key lookup
// loop, beside the Go code (docs/partitioned.md, "The keyed path"):
//
//   apt-get install -y g++ libxxhash-dev
//   g++ -O3 -march=native -o /tmp/cref benchmarks/cref/blocked.cc && /tmp/cref 10000000
//
// It is not built by go build or CI.
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <vector>
#include <sys/mman.h>

static inline uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
static inline uint64_t mulhi(uint64_t a, uint64_t b) { return (uint64_t)(((__uint128_t)a * b) >> 64); }
static inline uint64_t mix(uint64_t h) {
  __uint128_t p = (__uint128_t)h * 0x9e3779b97f4a7c15ULL;
  return ((uint64_t)(p >> 64) ^ (uint64_t)p) | 1;
}

struct Filter {
  uint64_t* w; uint64_t blocks; uint64_t seed; unsigned k;
  void add(const uint8_t* key) {
    uint64_t h = XXH3_64bits_withSeed(key, 16, seed);
    uint64_t* b = w + mulhi(h, blocks) * 8;
    uint64_t x = mix(h) >> 1;
    for (unsigned i = 0; i < k; i++) { b[(x >> 6) & 7] |= 1ULL << (x & 63); x >>= 9; }
  }
  bool early(const uint8_t* key) const {
    uint64_t h = XXH3_64bits_withSeed(key, 16, seed);
    const uint64_t* b = w + mulhi(h, blocks) * 8;
    uint64_t x = mix(h) >> 1;
    for (unsigned i = 0; i < k; i++) { if (!((b[(x >> 6) & 7] >> (x & 63)) & 1)) return false; x >>= 9; }
    return true;
  }
  bool flat(const uint8_t* key) const {
    uint64_t h = XXH3_64bits_withSeed(key, 16, seed);
    const uint64_t* b = w + mulhi(h, blocks) * 8;
    uint64_t x = mix(h) >> 1, miss = 0;
    for (unsigned i = 0; i < k; i++) { miss |= ~b[(x >> 6) & 7] >> (x & 63); x >>= 9; }
    return !(miss & 1);
  }
};

static void keyset(std::vector<uint8_t>& v, uint64_t set, uint64_t n, uint64_t stride) {
  v.resize(n * 16);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t a = splitmix(set << 56 | (i * stride)), b = splitmix(a);
    memcpy(&v[i * 16], &a, 8); memcpy(&v[i * 16 + 8], &b, 8);
  }
}

template <class F>
static double run(const std::vector<uint8_t>& keys, F f, long reps, long* found) {
  size_t nk = keys.size() / 16, off = 0; long c = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (long r = 0; r < reps; r++) {
    if (f(&keys[off * 16])) c++;
    if (++off == nk) off = 0;
  }
  auto t1 = std::chrono::steady_clock::now();
  *found = c; static volatile long vs; vs += c;
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / reps;
}

int main(int argc, char** argv) {
  uint64_t n = strtoull(argv[1], 0, 10);
  double bpk = 9.918464; // partitioned at p = 0.01
  uint64_t blocks = (uint64_t)(bpk * n) / 512 + 1;
  size_t bytes = blocks * 64;
  void* mem = aligned_alloc(2 << 20, (bytes + (2 << 20) - 1) & ~((size_t)(2 << 20) - 1));
  madvise(mem, bytes, MADV_HUGEPAGE);
  memset(mem, 0, bytes);
  Filter f{(uint64_t*)mem, blocks, 12345, 6};
  std::vector<uint8_t> all, hits, misses;
  uint64_t pool = n < (1 << 20) ? n : (1 << 20);
  for (uint64_t i = 0; i < n; i++) { uint64_t a = splitmix(1ULL << 56 | i), b = splitmix(a); uint8_t k[16]; memcpy(k, &a, 8); memcpy(k + 8, &b, 8); f.add(k); }
  keyset(hits, 1, pool, n / pool);
  keyset(misses, 2, pool, 1);
  long reps = 4000000, fd;
  for (int round = 0; round < 5; round++) {
    double he = run(hits, [&](const uint8_t* k) { return f.early(k); }, reps, &fd);
    double me = run(misses, [&](const uint8_t* k) { return f.early(k); }, reps, &fd);
    double mfound = (double)fd / reps;
    double hf = run(hits, [&](const uint8_t* k) { return f.flat(k); }, reps, &fd);
    double mf = run(misses, [&](const uint8_t* k) { return f.flat(k); }, reps, &fd);
    printf("n=%lu early hit %.1f miss %.1f (fp %.4f) | flat hit %.1f miss %.1f ns/key\n", n, he, me, mfound, hf, mf);
  }
}
