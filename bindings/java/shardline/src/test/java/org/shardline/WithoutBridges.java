package org.shardline;

import java.util.List;
import org.shardline.CoordinatorStepTest.Host;

/**
 * Run by {@code ObserveTest} in a child JVM whose class path has no SLF4J, logging backend or
 * Micrometer: says which of them it finds, then runs a coordinator and a region.
 */
final class WithoutBridges {
  public static void main(String[] args) {
    for (String c : List.of("org.slf4j.Logger", "io.micrometer.core.instrument.MeterRegistry")) {
      try {
        Class.forName(c);
        System.out.println("present " + c);
      } catch (ClassNotFoundException e) {
        System.out.println("absent " + c);
      }
    }
    try (Host h = Host.allocating()) {
      long allocations =
          h.coordinator.metrics().stream()
              .filter(m -> m.name().equals("shardline.coordinator.allocations"))
              .findFirst()
              .orElseThrow()
              .value();
      long events = h.notices.stream().filter(n -> n.type().equals(Wire.CoordinatorNotice.ALLOCATED)).count();
      System.out.println("allocations " + allocations + ", decision events " + events);
    }
  }
}
