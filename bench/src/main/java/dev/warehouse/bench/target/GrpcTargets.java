package dev.warehouse.bench.target;

import java.util.LinkedHashMap;
import java.util.Map;

/** The gRPC targets of a side-by-side schedule, by layer, in the order added; closing closes each. */
public final class GrpcTargets implements AutoCloseable {

  private final Map<String, Target> byLayer = new LinkedHashMap<>();
  private final Map<String, GrpcTarget> opened = new LinkedHashMap<>();

  public GrpcTargets add(GrpcTarget target) {
    byLayer.put(target.name(), target);
    opened.put(target.name(), target);
    return this;
  }

  /** The targets by layer, as the side-by-side schedule takes them. */
  public Map<String, Target> byLayer() {
    return byLayer;
  }

  @Override
  public void close() throws InterruptedException {
    for (GrpcTarget target : opened.values()) {
      target.close();
    }
  }
}
