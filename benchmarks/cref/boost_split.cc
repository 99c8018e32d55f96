// A C++ reference with Boost.Bloom for partitioned.WithSplitBlock (issue
// 35): boost::bloom::filter<std::string_view, 1, fast_multiblock32<8>>,
// sized by Boost for n keys at p, hashed with seeded XXH3-64 marked
// avalanching (so Boost does not remix: the same hash work per key as
// ours), over the keys of benchmarks/keys.go (16-byte keys: set 1 added,
// set 2 never added; the pools of NewPools), measured as BenchmarkDuel
// measures: turns of 4096 lookups cycling through a pool (the turn sums
// may_contain, no branch), turns of 4096 adds of new keys to a filter for n
// keys (a fresh one, built and zeroed before the clock, when it holds n),
// 300 turns, the median time per key over the turns.
//
// Boost.Bloom is not in Debian's Boost (1.74), and its code is not kept in
// this repository. Point BOOST_BLOOM_INC at a directory holding the include/
// trees of boostorg/bloom and the newer boostorg/core, config,
// container_hash, mp11 and describe it needs (copy each repository's
// include/boost into one dir/boost); Debian's libboost-dev gives the rest:
//
//   apt-get install -y g++ libxxhash-dev libboost-dev
//   g++ -O3 -march=native -std=c++17 -I"$BOOST_BLOOM_INC" \
//       -o /tmp/cref-boost benchmarks/cref/boost_split.cc
//   /tmp/cref-boost 1000000 0.01        # n, p; prints hit, miss, insert ns/key
//
// benchmarks/simd_table.sh builds it (with BOOST_BLOOM_INC set) and runs it
// in turns with BenchmarkDuel. It is not built by go build or CI.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <boost/bloom.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

static uint64_t splitmix(uint64_t x) {  // keys.go's splitMix
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// key writes keys.go's Key(Key16, set, i) at dst: 16 bytes, little-endian.
static void key(uint8_t* dst, uint64_t set, uint64_t i) {
  uint64_t v = splitmix(set << 56 | i);
  uint64_t a = splitmix(v ^ 0x6a09e667f3bcc909ULL);
  memcpy(dst, &a, 8);  // x86: little-endian
  memcpy(dst + 8, &v, 8);
}

struct xxh3_hash {
  using is_avalanching = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return XXH3_64bits_withSeed(s.data(), s.size(), 0x5eed);
  }
};

using filter = boost::bloom::filter<std::string_view, 1, boost::bloom::fast_multiblock32<8>, 0, xxh3_hash>;

static const int kTurn = 4096, kTurns = 300;
static const uint64_t kPoolMax = 1 << 20;  // measure.go's PoolMax

static double now_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static volatile uint64_t sink;

// lookups returns the median ns/key of turns of kTurn lookups cycling
// through pool (size keys of 16 bytes).
static double lookups(const filter& f, const std::vector<uint8_t>& pool, uint64_t size) {
  std::vector<double> t;
  uint64_t off = 0;
  for (int r = 0; r < kTurns; r++) {
    double start = now_ns();
    uint64_t s = 0;
    for (int i = 0; i < kTurn; i++) {
      s += f.may_contain(std::string_view((const char*)&pool[off * 16], 16));
      if (++off == size) off = 0;
    }
    t.push_back((now_ns() - start) / kTurn);
    sink += s;
  }
  return median(t);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s n p\n", argv[0]);
    return 2;
  }
  uint64_t n = strtoull(argv[1], 0, 10);
  double p = strtod(argv[2], 0);
  uint64_t size = std::min(n, kPoolMax);
  std::vector<uint8_t> hits(size * 16), misses(size * 16), k(16);
  for (uint64_t j = 0; j < size; j++) {
    key(&hits[j * 16], 1, j * n / size);  // NewPools' hits
    key(&misses[j * 16], 2, j);
  }
  filter f(n, p);
  for (uint64_t i = 0; i < n; i++) {
    key(k.data(), 1, i);
    f.insert(std::string_view((const char*)k.data(), 16));
  }
  uint64_t fp = 0;
  for (uint64_t j = 0; j < size; j++) {
    if (!f.may_contain(std::string_view((const char*)&hits[j * 16], 16))) {
      fprintf(stderr, "false negative\n");
      return 1;
    }
    fp += f.may_contain(std::string_view((const char*)&misses[j * 16], 16));
  }
  double hit = lookups(f, hits, size), miss = lookups(f, misses, size);

  // Adds: turns of kTurn new keys (made before the clock) to a filter for
  // n keys, a fresh one when it holds n.
  std::vector<double> t;
  std::vector<uint8_t> turn(kTurn * 16);
  filter* g = new filter(n, p);
  uint64_t next = 0;
  for (int r = 0; r < kTurns; r++) {
    if (next + kTurn > n) {
      delete g;
      g = new filter(n, p);
      next = 0;
    }
    for (int i = 0; i < kTurn; i++) key(&turn[i * 16], 1, next + i);
    next += kTurn;
    double start = now_ns();
    for (int i = 0; i < kTurn; i++) g->insert(std::string_view((const char*)&turn[i * 16], 16));
    t.push_back((now_ns() - start) / kTurn);
  }
  delete g;
  printf("boost fast_multiblock32<8> n=%lu p=%g bits/key=%.2f fpr=%.4f hit %.2f miss %.2f insert %.2f ns/key\n", n, p,
         (double)f.capacity() / n, (double)fp / size, hit, miss, median(t));
  return 0;
}
