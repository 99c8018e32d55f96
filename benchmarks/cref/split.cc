// A C++ reference for partitioned.WithSplitBlock: the same split-block
// layout (256-bit blocks of eight 32-bit lanes, one bit per lane from the
// lane key x = high 32 bits of the mixed hash, lane i's bit (x * salt[i]) >> 27,
// block = high 64 bits of h * blocks), the same hash (seeded XXH3-64 of a
// 16-byte key, scheme 2) and mixer, one key at a time, everything inlined:
// a scalar lookup (what the Go code does) and an AVX2 one (eight lanes in
// one vector multiply, one vptest), beside the 512-bit block of
// blocked.cc. Numbers in docs/partitioned.md ("Split-block layout"):
//
//   apt-get install -y g++ libxxhash-dev
//   g++ -O3 -march=native -o /tmp/cref-split benchmarks/cref/split.cc && /tmp/cref-split 10000000
//
// It is not built by go build or CI. It checks that every added key is
// found by both lookups and that they agree on every never-added key.
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <immintrin.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

static const uint32_t kSalt[8] = {0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d,
                                  0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31};

struct Split {
  uint32_t* w;  // blocks * 8 lanes; lane i of block b is w[8b + i]
  uint64_t blocks, seed;

  // lanes of key: its block and lane key.
  inline const uint32_t* locate(const uint8_t* key, uint32_t* x) const {
    uint64_t h = XXH3_64bits_withSeed(key, 16, seed);
    *x = (uint32_t)(mix(h) >> 32);
    return w + mulhi(h, blocks) * 8;
  }
  bool add(const uint8_t* key) {
    uint32_t x;
    uint32_t* b = (uint32_t*)locate(key, &x);
    uint32_t fresh = 0;
    for (int i = 0; i < 8; i++) {
      uint32_t m = 1u << ((x * kSalt[i]) >> 27);
      fresh |= m & ~b[i];
      b[i] |= m;
    }
    return fresh != 0;
  }
  bool scalar(const uint8_t* key) const {
    uint32_t x;
    const uint32_t* b = locate(key, &x);
    uint32_t miss = 0;
    for (int i = 0; i < 8; i++) miss |= (1u << ((x * kSalt[i]) >> 27)) & ~b[i];
    return miss == 0;
  }
  bool avx2(const uint8_t* key) const {
    uint32_t x;
    const uint32_t* b = locate(key, &x);
    const __m256i salt = _mm256_loadu_si256((const __m256i*)kSalt);
    __m256i idx = _mm256_srli_epi32(_mm256_mullo_epi32(_mm256_set1_epi32((int)x), salt), 27);
    __m256i mask = _mm256_sllv_epi32(_mm256_set1_epi32(1), idx);
    return _mm256_testc_si256(_mm256_load_si256((const __m256i*)b), mask);
  }
};

static void keyset(std::vector<uint8_t>& v, uint64_t set, uint64_t n, uint64_t stride) {
  v.resize(n * 16);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t a = splitmix(set << 56 | (i * stride)), b = splitmix(a);
    memcpy(&v[i * 16], &a, 8);
    memcpy(&v[i * 16 + 8], &b, 8);
  }
}

template <class F>
static double run(const std::vector<uint8_t>& keys, F f, long reps, long* found) {
  size_t nk = keys.size() / 16, off = 0;
  long c = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (long r = 0; r < reps; r++) {
    if (f(&keys[off * 16])) c++;
    if (++off == nk) off = 0;
  }
  auto t1 = std::chrono::steady_clock::now();
  *found = c;
  static volatile long vs;
  vs += c;
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / reps;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s n\n", argv[0]);
    return 2;
  }
  uint64_t n = strtoull(argv[1], 0, 10);
  double bpk = 10.53;  // partitioned.SplitParams at p = 0.01
  uint64_t blocks = (uint64_t)(bpk * n) / 256 + 1;
  size_t bytes = blocks * 32, huge = 2 << 20;
  void* mem = aligned_alloc(huge, (bytes + huge - 1) & ~(huge - 1));
  madvise(mem, bytes, MADV_HUGEPAGE);
  memset(mem, 0, bytes);
  Split f{(uint32_t*)mem, blocks, 12345};
  uint64_t pool = n < (1 << 20) ? n : (1 << 20);
  std::vector<uint8_t> all, hits, misses;
  keyset(all, 1, n, 1);
  auto a0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; i++) f.add(&all[i * 16]);
  double addns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - a0).count() / n;
  keyset(hits, 1, pool, n / pool);
  keyset(misses, 2, pool, 1);
  for (uint64_t i = 0; i < pool; i++) {
    if (!f.scalar(&hits[i * 16]) || !f.avx2(&hits[i * 16])) { fprintf(stderr, "false negative\n"); return 1; }
    if (f.scalar(&misses[i * 16]) != f.avx2(&misses[i * 16])) { fprintf(stderr, "lookups disagree\n"); return 1; }
  }
  long reps = 4000000, fd;
  printf("n=%lu add %.1f ns/key\n", n, addns);
  for (int round = 0; round < 5; round++) {
    double hs = run(hits, [&](const uint8_t* k) { return f.scalar(k); }, reps, &fd);
    double ms = run(misses, [&](const uint8_t* k) { return f.scalar(k); }, reps, &fd);
    double fp = (double)fd / reps;
    double hv = run(hits, [&](const uint8_t* k) { return f.avx2(k); }, reps, &fd);
    double mv = run(misses, [&](const uint8_t* k) { return f.avx2(k); }, reps, &fd);
    printf("n=%lu scalar hit %.1f miss %.1f (fp %.4f) | avx2 hit %.1f miss %.1f ns/key\n", n, hs, ms, fp, hv, mv);
  }
}
