package dev.warehouse.bench.load;

import java.util.SplittableRandom;

/**
 * Picks which of {@code n} keys a request reads: uniformly, or Zipf-skewed (a few hot keys, a long
 * tail), as real traffic is. Thread-safe; deterministic for a seed.
 */
public interface KeyChooser {

  /** A key index in [0, n). */
  int next();

  static KeyChooser uniform(int n, long seed) {
    SplittableRandom root = new SplittableRandom(seed);
    ThreadLocal<SplittableRandom> random = ThreadLocal.withInitial(() -> {
      synchronized (root) {
        return root.split();
      }
    });
    return () -> random.get().nextInt(n);
  }

  /**
   * Zipf with exponent {@code s} over n keys (key 0 hottest): the probability of key k is
   * proportional to 1/(k+1)^s. Sampled by binary search over the cumulative distribution.
   */
  static KeyChooser zipf(int n, double s, long seed) {
    double[] cumulative = new double[n];
    double sum = 0;
    for (int k = 0; k < n; k++) {
      sum += 1.0 / Math.pow(k + 1, s);
      cumulative[k] = sum;
    }
    for (int k = 0; k < n; k++) {
      cumulative[k] /= sum;
    }
    SplittableRandom root = new SplittableRandom(seed);
    ThreadLocal<SplittableRandom> random = ThreadLocal.withInitial(() -> {
      synchronized (root) {
        return root.split();
      }
    });
    return () -> {
      double u = random.get().nextDouble();
      int lo = 0;
      int hi = n - 1;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (cumulative[mid] < u) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    };
  }
}
